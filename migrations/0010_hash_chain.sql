-- StoreLedger schema, version 10: the history becomes a hash chain (docs/HASH-CHAIN.md).
--
-- Every event row carries `row_digest`, the SHA-256 of its transaction's row as the event's
-- commit left it (32 zero bytes for a `deleted` event: there is no row any more), and `hash`,
-- the SHA-256 of the previous event's hash and of this event's own canonical encoding (the
-- first event follows a genesis value bound to the ledger's root certificate). `chain_head`
-- keeps the last event the ledger signed with its signing identity's key.
--
-- History is never deleted any more: deleting a transaction (the store's "clear" and "delete"
-- controls) appends a `deleted` event and keeps the history, so the chain has no holes. The
-- events table therefore loses its foreign key to `transactions`, and `transaction_deletions`
-- (the permission list for deleting history) goes.
--
-- The history written before this migration is hashed as it is by `HashChain.adopt`, in the
-- same SQLite transaction, right after this file: the old table is renamed, the new one made
-- here, and `adopt` copies every event into it in order (keeping its number), computing the
-- hashes, then drops the old table and signs the head. The chain proves nothing about edits
-- made before it existed.
DROP TRIGGER transaction_events_append_only;
DROP TRIGGER transaction_events_delete_only_with_transaction;
DROP TRIGGER transaction_events_legal_row;
DROP INDEX transaction_events_by_transaction;
DROP TABLE transaction_deletions;
ALTER TABLE transaction_events RENAME TO transaction_events_before_chain;

INSERT INTO rule_events (kind, subscription_only) VALUES ('deleted', 0);

-- Each event's number is part of its hash, so the writer chooses it before inserting the row:
-- the table's AUTOINCREMENT counter plus one. The counter continues the old table's, so the
-- numbers of events deleted with their transaction before this version are never reused.
CREATE TABLE transaction_events (
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,
    transaction_id INTEGER NOT NULL CHECK (transaction_id > 0),
    kind           TEXT NOT NULL
                   CHECK (kind = 'created' OR kind = 'stateChanged' OR kind = 'finished' OR kind = 'delivered'
                          OR kind = 'revoked' OR kind = 'expirationChanged' OR kind = 'upgraded'
                          OR kind = 'deleted'),
    from_state     TEXT
                   CHECK (from_state = 'purchasing' OR from_state = 'purchased' OR from_state = 'failed'
                          OR from_state = 'restored' OR from_state = 'deferred'),
    to_state       TEXT NOT NULL
                   CHECK (to_state = 'purchasing' OR to_state = 'purchased' OR to_state = 'failed'
                          OR to_state = 'restored' OR to_state = 'deferred'),
    at             INTEGER NOT NULL,
    detail         TEXT,
    row_digest     BLOB NOT NULL CHECK (typeof(row_digest) = 'blob' AND length(row_digest) = 32),
    hash           BLOB NOT NULL CHECK (typeof(hash) = 'blob' AND length(hash) = 32),
    CHECK ((kind = 'created') = (from_state IS NULL))
);
INSERT INTO sqlite_sequence (name, seq)
    SELECT 'transaction_events', seq FROM sqlite_sequence WHERE name = 'transaction_events_before_chain';
CREATE INDEX transaction_events_by_transaction ON transaction_events (transaction_id, seq);

CREATE TRIGGER transaction_events_append_only
BEFORE UPDATE ON transaction_events
BEGIN
    SELECT RAISE(ABORT, 'transaction_events is append-only');
END;

CREATE TRIGGER transaction_events_never_deleted
BEFORE DELETE ON transaction_events
BEGIN
    SELECT RAISE(ABORT, 'transaction_events is append-only: history is never deleted');
END;

-- As in version 8, with `deleted` (which keeps the state, as every event but the first two).
CREATE TRIGGER transaction_events_legal_row
BEFORE INSERT ON transaction_events
WHEN NOT EXISTS (SELECT 1 FROM rule_events WHERE kind = NEW.kind AND (subscription_only = 0
                 OR (SELECT product_type FROM transactions WHERE id = NEW.transaction_id) = 'autoRenewable'))
  OR CASE NEW.kind
       WHEN 'created' THEN NEW.from_state IS NOT NULL
                           OR NOT EXISTS (SELECT 1 FROM rule_initial_states WHERE state = NEW.to_state)
       WHEN 'stateChanged' THEN NOT EXISTS (SELECT 1 FROM rule_transitions
                                           WHERE from_state = NEW.from_state AND to_state = NEW.to_state)
       WHEN 'finished' THEN NEW.from_state IS NOT NEW.to_state
                            OR NOT EXISTS (SELECT 1 FROM rule_states WHERE state = NEW.to_state AND finishable = 1)
       WHEN 'revoked' THEN NEW.from_state IS NOT NEW.to_state
                           OR NOT EXISTS (SELECT 1 FROM rule_states WHERE state = NEW.to_state AND revocable = 1)
       ELSE NEW.from_state IS NOT NEW.to_state
     END
BEGIN
    SELECT RAISE(ABORT, 'illegal transaction history row');
END;

-- The last event signed: its number, its hash, and the ECDSA P-256 signature (raw r || s) of
-- the head's encoding by the signing identity's leaf key. Absent while the history is empty.
CREATE TABLE chain_head (
    id        INTEGER PRIMARY KEY CHECK (id = 1),
    seq       INTEGER NOT NULL CHECK (seq > 0),
    hash      BLOB NOT NULL CHECK (length(hash) = 32),
    signature BLOB NOT NULL CHECK (length(signature) = 64),
    signed_at INTEGER NOT NULL
);
