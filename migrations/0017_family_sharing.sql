-- StoreLedger schema, version 17: Family Sharing.
-- Shipped migrations are never edited: a change to the schema is a new file.
--
-- A family member bought a family-shareable product and shares it with the customer
-- (`StoreTestSession.shareFamilyPurchase`, `ledger family share`): the customer's transaction
-- of it is owned FAMILY_SHARED, and so are its renewals and restored copies (they keep its
-- original transaction id). The sharing ends (`ledger family revoke`: the family member stops
-- sharing or leaves the family; or a refund) by revoking those transactions: REVOKE is
-- notified, not REFUND.
CREATE TABLE family_shares (
    original_transaction_id INTEGER PRIMARY KEY NOT NULL,
    -- The store's time of the share and of its end, in milliseconds.
    shared_at               INTEGER NOT NULL,
    revoked_at              INTEGER,
    CHECK (revoked_at IS NULL OR revoked_at >= shared_at)
);
