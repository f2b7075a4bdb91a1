-- StoreLedger schema, version 2: restores, subscriptions, refunds, interrupted purchases,
-- promoted purchases and the store's test controls.

-- The purchase a restored transaction replays (its originalID points at the first purchase of
-- the chain; this points at the exact transaction restored).
ALTER TABLE transactions ADD COLUMN restored_from INTEGER;

-- Renewal state, per subscription group (one active subscription per group).
CREATE TABLE subscription_renewal (
    group_id        TEXT PRIMARY KEY NOT NULL,
    auto_renew      INTEGER NOT NULL DEFAULT 1 CHECK (auto_renew IN (0, 1)),
    -- When auto-renew was last turned on: a period that ended before it lapsed for good.
    resumed_at      INTEGER NOT NULL DEFAULT 0,
    -- The product the next renewal switches to (a downgrade, or a crossgrade to another period).
    next_product_id TEXT REFERENCES products(id),
    -- Where calendar periods are counted from, so that a purchase on the 31st renews on the
    -- last day of shorter months and back on the 31st (not drifting to the 28th).
    period_anchor   INTEGER
) WITHOUT ROWID;

-- Purchases the store interrupted (failed, the user must act outside the app). Once the
-- failed transaction is finished and the issue resolved, a replacement purchase is created.
CREATE TABLE interrupted_purchases (
    transaction_id INTEGER PRIMARY KEY NOT NULL REFERENCES transactions(id),
    resolved       INTEGER NOT NULL DEFAULT 0 CHECK (resolved IN (0, 1)),
    -- Kept when the replacement is deleted, so that resolving again creates no second one.
    replacement_id INTEGER,
    CHECK (replacement_id IS NULL OR resolved = 1)
);

-- Per-ledger ("per device") overrides of the order and visibility of promoted products.
CREATE TABLE promotions (
    position   INTEGER PRIMARY KEY NOT NULL CHECK (position >= 0),
    product_id TEXT NOT NULL UNIQUE REFERENCES products(id),
    visibility TEXT NOT NULL CHECK (visibility IN ('appStoreConnectDefault', 'visible', 'hidden'))
);

-- A purchase's dates are set when the store charges it (an approved Ask to Buy when it is
-- approved, a downgrade at the next renewal); once charged they never change again.
DROP TRIGGER transactions_identity_is_immutable;
CREATE TRIGGER transactions_identity_is_immutable
BEFORE UPDATE OF id, original_id, product_id, product_type, quantity, purchase_date,
                 original_purchase_date, idempotency_key, created_at, restored_from ON transactions
WHEN OLD.id IS NOT NEW.id
  OR OLD.original_id IS NOT NEW.original_id
  OR OLD.product_id IS NOT NEW.product_id
  OR OLD.product_type IS NOT NEW.product_type
  OR OLD.quantity IS NOT NEW.quantity
  OR (OLD.state NOT IN ('purchasing', 'deferred') AND OLD.purchase_date IS NOT NEW.purchase_date)
  OR (OLD.state NOT IN ('purchasing', 'deferred') AND OLD.original_purchase_date IS NOT NEW.original_purchase_date)
  OR OLD.idempotency_key IS NOT NEW.idempotency_key
  OR OLD.created_at IS NOT NEW.created_at
  OR OLD.restored_from IS NOT NEW.restored_from
BEGIN
    SELECT RAISE(ABORT, 'a transaction''s identity cannot change');
END;

-- Restores are fetched per product type and account, over purchased rows only.
CREATE INDEX transactions_restorable ON transactions (product_type, id)
    WHERE state = 'purchased' AND revocation_date IS NULL;

-- Renewals and upgrades look up the latest subscription transaction of a group.
CREATE INDEX transactions_by_group ON transactions (subscription_group_id, purchase_date, id)
    WHERE subscription_group_id IS NOT NULL;

-- The event log gains the kinds that record changes other than state changes: a subscription's
-- expiration moved (expire now, force renewal) and an upgrade. SQLite cannot alter a CHECK
-- constraint, so the table is rebuilt with every row kept.
CREATE TABLE transaction_events_v2 (
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,
    transaction_id INTEGER NOT NULL REFERENCES transactions(id),
    kind           TEXT NOT NULL
                   CHECK (kind IN ('created', 'stateChanged', 'finished', 'delivered', 'revoked',
                                   'expirationChanged', 'upgraded')),
    from_state     TEXT CHECK (from_state IN ('purchasing', 'purchased', 'failed', 'restored', 'deferred')),
    to_state       TEXT NOT NULL
                   CHECK (to_state IN ('purchasing', 'purchased', 'failed', 'restored', 'deferred')),
    at             INTEGER NOT NULL,
    detail         TEXT,
    CHECK ((kind = 'created') = (from_state IS NULL))
);
INSERT INTO transaction_events_v2 (seq, transaction_id, kind, from_state, to_state, at, detail)
    SELECT seq, transaction_id, kind, from_state, to_state, at, detail FROM transaction_events;
DROP TABLE transaction_events;
ALTER TABLE transaction_events_v2 RENAME TO transaction_events;
CREATE INDEX transaction_events_by_transaction ON transaction_events (transaction_id, seq);

CREATE TRIGGER transaction_events_append_only
BEFORE UPDATE ON transaction_events
BEGIN
    SELECT RAISE(ABORT, 'transaction_events is append-only');
END;

-- History is deleted only together with its transaction, by the store's "clear" and "delete"
-- controls, which first list the transaction here (in the same SQLite transaction).
CREATE TABLE transaction_deletions (
    transaction_id INTEGER PRIMARY KEY NOT NULL
);

CREATE TRIGGER transaction_events_delete_only_with_transaction
BEFORE DELETE ON transaction_events
WHEN NOT EXISTS (SELECT 1 FROM transaction_deletions WHERE transaction_id = OLD.transaction_id)
BEGIN
    SELECT RAISE(ABORT, 'transaction_events is append-only: history is deleted only with its transaction');
END;
