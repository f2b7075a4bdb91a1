-- StoreLedger schema, version 9: the ledger's signing identity, a test identity like the
-- certificate Xcode's StoreKit testing signs with. One row: the leaf's P-256 private key (its
-- 32-byte raw form) and the DER certificates of the chain a server trusts (leaf, intermediate,
-- root). The migration that creates the table also makes the identity, in the same
-- transaction (Ledger.migrator): a ledger at this version always has one, and keeps it.
CREATE TABLE signing_identity (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    private_key BLOB NOT NULL CHECK (length(private_key) = 32),
    leaf_certificate BLOB NOT NULL,
    intermediate_certificate BLOB NOT NULL,
    root_certificate BLOB NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE TRIGGER signing_identity_is_kept BEFORE UPDATE ON signing_identity
BEGIN
    SELECT RAISE(ABORT, 'the signing identity is never changed');
END;
CREATE TRIGGER signing_identity_is_never_deleted BEFORE DELETE ON signing_identity
BEGIN
    SELECT RAISE(ABORT, 'the signing identity is never deleted');
END;
