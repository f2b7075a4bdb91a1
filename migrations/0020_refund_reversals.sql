-- StoreLedger schema, version 20: reversed refunds.
-- Shipped migrations are never edited: a change to the schema is a new file.
--
-- The App Store may reverse a refund it granted, after a dispute the customer raised (Apple's
-- REFUND_REVERSED): the purchase entitles again. Its revocation date and reason are cleared,
-- with a `reinstated` event in its history, and a prorated refund's part goes. A revocation is
-- still set once, then only cleared whole: never moved to another date or reason.
--
-- SQLite cannot alter a CHECK constraint, so the history table is rebuilt to accept the new
-- kind: every event is copied as it is (number, hashes and MAC included, so the hash chain
-- and the signed head still verify), the AUTOINCREMENT counter is carried over (numbers are
-- never reused), and its index and triggers are made again.
DROP TRIGGER transaction_events_append_only;
DROP TRIGGER transaction_events_never_deleted;
DROP TRIGGER transaction_events_legal_row;
DROP INDEX transaction_events_by_transaction;
DROP TRIGGER transactions_revocation_rule;
ALTER TABLE transaction_events RENAME TO transaction_events_v19;

INSERT INTO rule_events (kind, subscription_only) VALUES ('reinstated', 0);

CREATE TABLE transaction_events (
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,
    transaction_id INTEGER NOT NULL CHECK (transaction_id > 0),
    kind           TEXT NOT NULL
                   CHECK (kind = 'created' OR kind = 'stateChanged' OR kind = 'finished' OR kind = 'delivered'
                          OR kind = 'revoked' OR kind = 'expirationChanged' OR kind = 'upgraded'
                          OR kind = 'deleted' OR kind = 'reinstated'),
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
    mac            BLOB CHECK (mac IS NULL OR (typeof(mac) = 'blob' AND length(mac) = 32)),
    CHECK ((kind = 'created') = (from_state IS NULL))
);
INSERT INTO transaction_events (seq, transaction_id, kind, from_state, to_state, at, detail, row_digest, hash, mac)
    SELECT seq, transaction_id, kind, from_state, to_state, at, detail, row_digest, hash, mac
    FROM transaction_events_v19 ORDER BY seq;
DELETE FROM sqlite_sequence WHERE name = 'transaction_events';
INSERT INTO sqlite_sequence (name, seq)
    SELECT 'transaction_events', seq FROM sqlite_sequence WHERE name = 'transaction_events_v19';
DROP TABLE transaction_events_v19;
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

-- As in version 10, with `reinstated`, which, as `revoked`, keeps a revocable state.
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
       WHEN 'reinstated' THEN NEW.from_state IS NOT NEW.to_state
                              OR NOT EXISTS (SELECT 1 FROM rule_states WHERE state = NEW.to_state AND revocable = 1)
       ELSE NEW.from_state IS NOT NEW.to_state
     END
BEGIN
    SELECT RAISE(ABORT, 'illegal transaction history row');
END;

-- A revocation is set on a purchased or restored transaction that has none, or cleared whole
-- (a reversed refund); its date and reason never change otherwise. A purchase a family member
-- shared is revoked from the customer by Family Sharing (FAMILY_REVOKE), which is not the
-- customer's refund: its revocation is never cleared.
CREATE TRIGGER transactions_revocation_rule
BEFORE UPDATE OF revocation_date, revocation_reason ON transactions
WHEN (OLD.revocation_date IS NOT NEW.revocation_date OR OLD.revocation_reason IS NOT NEW.revocation_reason) AND (
       (OLD.revocation_date IS NULL) = (NEW.revocation_date IS NULL)
    OR NOT EXISTS (SELECT 1 FROM rule_states WHERE state = NEW.state AND revocable = 1)
    OR (NEW.revocation_date IS NULL
        AND EXISTS (SELECT 1 FROM family_shares WHERE original_transaction_id = OLD.original_id)))
BEGIN
    SELECT RAISE(ABORT, 'a refund is set once on a purchased or restored transaction, and only reversed whole (a Family Sharing revocation never)');
END;
