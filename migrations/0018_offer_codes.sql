-- StoreLedger schema, version 18: offer codes (and a place for win-back offers).
-- Shipped migrations are never edited: a change to the schema is a new file.
--
-- A transaction records the offer it was charged at: introductory, promotional, and now an
-- offer code (`code`, its reference name as the offer id) or a win-back offer (`winBack`).
-- SQLite cannot alter a CHECK constraint, so the table is rebuilt with every row kept (the
-- hash chain's row digests do not change: same columns, same values), and its indexes and
-- triggers are made again, with the one trigger of another table that reads it. An offer a
-- subscriber redeemed while subscribed waits for the next renewal with its type.
DROP TRIGGER transactions_finish_rule;
DROP TRIGGER transactions_finished_is_final;
DROP TRIGGER transactions_identity_is_immutable;
DROP TRIGGER transactions_insert_state;
DROP TRIGGER transactions_legal_transition;
DROP TRIGGER transactions_revocation_rule;
DROP TRIGGER transaction_events_legal_row;

CREATE TABLE transactions_v18 (
    id                     INTEGER PRIMARY KEY NOT NULL CHECK (id > 0),
    original_id            INTEGER NOT NULL CHECK (original_id > 0),
    product_id             TEXT NOT NULL CHECK (product_id <> ''),
    product_type           TEXT NOT NULL
                           CHECK (product_type = 'consumable' OR product_type = 'nonConsumable'
                                  OR product_type = 'autoRenewable' OR product_type = 'nonRenewable'),
    state                  TEXT NOT NULL
                           CHECK (state = 'purchasing' OR state = 'purchased' OR state = 'failed'
                                  OR state = 'restored' OR state = 'deferred'),
    is_finished            INTEGER NOT NULL DEFAULT 0 CHECK (is_finished IN (0, 1)),
    quantity               INTEGER NOT NULL CHECK (quantity BETWEEN 1 AND 10),
    purchase_date          INTEGER NOT NULL,
    original_purchase_date INTEGER NOT NULL,
    expiration_date        INTEGER,
    revocation_date        INTEGER,
    revocation_reason      INTEGER,
    is_upgraded            INTEGER NOT NULL DEFAULT 0 CHECK (is_upgraded IN (0, 1)),
    app_account_token      TEXT,
    error_code             INTEGER,
    error_message          TEXT,
    reason                 TEXT NOT NULL CHECK (reason IN ('purchase', 'renewal')),
    subscription_group_id  TEXT,
    storefront             TEXT NOT NULL,
    environment            TEXT NOT NULL,
    idempotency_key        TEXT CHECK (idempotency_key <> ''),  -- unique: transactions_idempotency_key
    -- What the simulated store decided when the payment was added, so that a transaction
    -- interrupted while purchasing resumes with the same outcome at the next launch.
    planned_state          TEXT
                           CHECK (planned_state = 'purchased' OR planned_state = 'failed' OR planned_state = 'deferred'),
    planned_error_code     INTEGER,
    planned_error_message  TEXT,
    created_at             INTEGER NOT NULL,
    updated_at             INTEGER NOT NULL,
    finished_at            INTEGER,
    delivery_count         INTEGER NOT NULL DEFAULT 0 CHECK (delivery_count >= 0),
    last_delivered_at      INTEGER,
    restored_from          INTEGER,
    application_username   TEXT
                           CHECK (application_username <> '' AND length(CAST(application_username AS BLOB)) <= 1024),
    offer_type             TEXT
                           CHECK (offer_type = 'introductory' OR offer_type = 'promotional' OR offer_type = 'code'
                                  OR offer_type = 'winBack'),
    offer_id               TEXT CHECK (offer_id <> ''),
    offer_payment_mode     TEXT
                           CHECK (offer_payment_mode = 'freeTrial' OR offer_payment_mode = 'payAsYouGo'
                                  OR offer_payment_mode = 'payUpFront'),
    offer_period           TEXT CHECK (offer_period GLOB 'P[0-9]*[DWMY]'),
    offer_nonce            TEXT,
    -- What the database can enforce by itself.
    CHECK (NOT (is_finished = 1 AND (state = 'purchasing' OR state = 'deferred'))),
    CHECK ((is_finished = 1) = (finished_at IS NOT NULL)),
    CHECK ((state = 'failed') = (error_code IS NOT NULL)),
    CHECK (state <> 'purchasing' OR planned_state IS NOT NULL),
    CHECK (planned_state IS NOT 'failed' OR planned_error_code IS NOT NULL),
    CHECK ((revocation_date IS NULL) = (revocation_reason IS NULL)),
    CHECK ((delivery_count = 0) = (last_delivered_at IS NULL))
);
INSERT INTO transactions_v18 (
    id, original_id, product_id, product_type, state, is_finished, quantity, purchase_date,
    original_purchase_date, expiration_date, revocation_date, revocation_reason, is_upgraded,
    app_account_token, error_code, error_message, reason, subscription_group_id, storefront,
    environment, idempotency_key, planned_state, planned_error_code, planned_error_message, created_at,
    updated_at, finished_at, delivery_count, last_delivered_at, restored_from, application_username,
    offer_type, offer_id, offer_payment_mode, offer_period, offer_nonce)
SELECT
    id, original_id, product_id, product_type, state, is_finished, quantity, purchase_date,
    original_purchase_date, expiration_date, revocation_date, revocation_reason, is_upgraded,
    app_account_token, error_code, error_message, reason, subscription_group_id, storefront,
    environment, idempotency_key, planned_state, planned_error_code, planned_error_message, created_at,
    updated_at, finished_at, delivery_count, last_delivered_at, restored_from, application_username,
    offer_type, offer_id, offer_payment_mode, offer_period, offer_nonce
FROM transactions;
DROP TABLE transactions;
ALTER TABLE transactions_v18 RENAME TO transactions;

CREATE INDEX transactions_by_group ON transactions (subscription_group_id, purchase_date, id)
    WHERE subscription_group_id IS NOT NULL;

CREATE INDEX transactions_by_product ON transactions (product_id, id);

CREATE INDEX transactions_by_state ON transactions (state, id);

CREATE UNIQUE INDEX transactions_idempotency_key ON transactions (idempotency_key) WHERE idempotency_key IS NOT NULL;

CREATE UNIQUE INDEX transactions_offer_nonce ON transactions (offer_nonce) WHERE offer_nonce IS NOT NULL;

CREATE INDEX transactions_restorable ON transactions (product_type, id)
    WHERE state = 'purchased' AND revocation_date IS NULL;

CREATE INDEX transactions_unfinished ON transactions (id) WHERE is_finished = 0;

CREATE TRIGGER transactions_finish_rule
BEFORE UPDATE OF is_finished ON transactions
WHEN OLD.is_finished = 0 AND NEW.is_finished = 1
 AND NOT EXISTS (SELECT 1 FROM rule_states WHERE state = NEW.state AND finishable = 1)
BEGIN
    SELECT RAISE(ABORT, 'a transaction in this state cannot be finished');
END;

CREATE TRIGGER transactions_finished_is_final
BEFORE UPDATE OF state, is_finished ON transactions
WHEN OLD.is_finished = 1 AND (NEW.is_finished = 0 OR NEW.state <> OLD.state)
BEGIN
    SELECT RAISE(ABORT, 'a finished transaction cannot change state or be unfinished');
END;

CREATE TRIGGER transactions_identity_is_immutable
BEFORE UPDATE OF id, original_id, product_id, product_type, quantity, purchase_date,
                 original_purchase_date, idempotency_key, created_at, restored_from ON transactions
WHEN OLD.id IS NOT NEW.id
  OR OLD.original_id IS NOT NEW.original_id
  OR OLD.product_id IS NOT NEW.product_id
  OR OLD.product_type IS NOT NEW.product_type
  OR OLD.quantity IS NOT NEW.quantity
  OR (OLD.state <> 'purchasing' AND OLD.state <> 'deferred' AND OLD.purchase_date IS NOT NEW.purchase_date)
  OR (OLD.state <> 'purchasing' AND OLD.state <> 'deferred'
      AND OLD.original_purchase_date IS NOT NEW.original_purchase_date)
  OR OLD.idempotency_key IS NOT NEW.idempotency_key
  OR OLD.created_at IS NOT NEW.created_at
  OR OLD.restored_from IS NOT NEW.restored_from
BEGIN
    SELECT RAISE(ABORT, 'a transaction''s identity cannot change');
END;

CREATE TRIGGER transactions_insert_state
BEFORE INSERT ON transactions
WHEN NOT EXISTS (SELECT 1 FROM rule_initial_states WHERE state = NEW.state) OR NEW.is_finished <> 0
  OR NEW.revocation_date IS NOT NULL OR NEW.revocation_reason IS NOT NULL
BEGIN
    SELECT RAISE(ABORT, 'illegal initial transaction state');
END;

CREATE TRIGGER transactions_legal_transition
BEFORE UPDATE OF state ON transactions
WHEN OLD.state <> NEW.state
 AND NOT EXISTS (SELECT 1 FROM rule_transitions WHERE from_state = OLD.state AND to_state = NEW.state)
BEGIN
    SELECT RAISE(ABORT, 'illegal transaction state transition');
END;

CREATE TRIGGER transactions_revocation_rule
BEFORE UPDATE OF revocation_date, revocation_reason ON transactions
WHEN (OLD.revocation_date IS NOT NEW.revocation_date OR OLD.revocation_reason IS NOT NEW.revocation_reason) AND (
       OLD.revocation_date IS NOT NULL
    OR NEW.revocation_date IS NULL
    OR NOT EXISTS (SELECT 1 FROM rule_states WHERE state = NEW.state AND revocable = 1))
BEGIN
    SELECT RAISE(ABORT, 'only a purchased or restored transaction can be refunded, and only once');
END;

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

-- The type of the offer waiting for the next renewal (`pending_offer_id`): promotional or code.
ALTER TABLE subscription_renewal ADD COLUMN pending_offer_type TEXT
    CHECK (pending_offer_type = 'promotional' OR pending_offer_type = 'code');
UPDATE subscription_renewal SET pending_offer_type = 'promotional' WHERE pending_offer_id IS NOT NULL;
