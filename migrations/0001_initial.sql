-- StoreLedger schema, version 1.
-- Shipped migrations are never edited: a change to the schema is a new file.
-- Dates are INTEGER milliseconds since 1970-01-01 UTC; prices are decimal TEXT.

-- Key/value settings of the simulated store (storefront, locale, ...).
CREATE TABLE store_settings (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
) WITHOUT ROWID;

-- Monotonic counters: transaction ids are taken from here so that an id is never reused,
-- even after a transaction is deleted.
CREATE TABLE ledger_counters (
    name  TEXT PRIMARY KEY NOT NULL,
    value INTEGER NOT NULL CHECK (value >= 0)
) WITHOUT ROWID;
INSERT INTO ledger_counters (name, value) VALUES ('last_transaction_id', 0);

CREATE TABLE subscription_groups (
    id   TEXT PRIMARY KEY NOT NULL CHECK (id <> ''),
    name TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE products (
    id                        TEXT PRIMARY KEY NOT NULL CHECK (id <> ''),
    type                      TEXT NOT NULL
                              CHECK (type IN ('consumable', 'nonConsumable', 'autoRenewable', 'nonRenewable')),
    reference_name            TEXT NOT NULL,
    price                     TEXT NOT NULL,
    family_shareable          INTEGER NOT NULL CHECK (family_shareable IN (0, 1)),
    subscription_group_id     TEXT REFERENCES subscription_groups(id),
    subscription_group_level  INTEGER CHECK (subscription_group_level >= 1),
    subscription_period       TEXT,
    -- Introductory and promotional offers, as JSON (read back whole, never queried).
    offers                    TEXT NOT NULL DEFAULT '[]',
    imported_from             TEXT,
    CHECK ((type = 'autoRenewable') = (subscription_group_id IS NOT NULL
                                       AND subscription_group_level IS NOT NULL
                                       AND subscription_period IS NOT NULL))
) WITHOUT ROWID;

CREATE TABLE product_localizations (
    product_id   TEXT NOT NULL REFERENCES products(id) ON DELETE CASCADE,
    locale       TEXT NOT NULL,
    position     INTEGER NOT NULL,
    display_name TEXT NOT NULL,
    description  TEXT NOT NULL,
    PRIMARY KEY (product_id, locale)
) WITHOUT ROWID;

CREATE TABLE transactions (
    id                     INTEGER PRIMARY KEY NOT NULL CHECK (id > 0),
    original_id            INTEGER NOT NULL CHECK (original_id > 0),
    product_id             TEXT NOT NULL CHECK (product_id <> ''),
    product_type           TEXT NOT NULL
                           CHECK (product_type IN ('consumable', 'nonConsumable', 'autoRenewable', 'nonRenewable')),
    state                  TEXT NOT NULL
                           CHECK (state IN ('purchasing', 'purchased', 'failed', 'restored', 'deferred')),
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
    idempotency_key        TEXT UNIQUE CHECK (idempotency_key <> ''),
    -- What the simulated store decided when the payment was added, so that a transaction
    -- interrupted while purchasing resumes with the same outcome at the next launch.
    planned_state          TEXT CHECK (planned_state IN ('purchased', 'failed', 'deferred')),
    planned_error_code     INTEGER,
    planned_error_message  TEXT,
    created_at             INTEGER NOT NULL,
    updated_at             INTEGER NOT NULL,
    finished_at            INTEGER,
    delivery_count         INTEGER NOT NULL DEFAULT 0 CHECK (delivery_count >= 0),
    last_delivered_at      INTEGER,
    -- What the database can enforce by itself.
    CHECK (NOT (is_finished = 1 AND state IN ('purchasing', 'deferred'))),
    CHECK ((is_finished = 1) = (finished_at IS NOT NULL)),
    CHECK ((state = 'failed') = (error_code IS NOT NULL)),
    CHECK (state <> 'purchasing' OR planned_state IS NOT NULL),
    CHECK (planned_state IS NOT 'failed' OR planned_error_code IS NOT NULL),
    CHECK ((revocation_date IS NULL) = (revocation_reason IS NULL)),
    CHECK ((delivery_count = 0) = (last_delivered_at IS NULL))
);

-- A launch reads only the unfinished transactions: O(unfinished), not O(history).
CREATE INDEX transactions_unfinished ON transactions (id) WHERE is_finished = 0;
CREATE INDEX transactions_by_product ON transactions (product_id, id);
CREATE INDEX transactions_by_state ON transactions (state, id);

-- New transactions enter the ledger only in the states that can start a history.
CREATE TRIGGER transactions_insert_state
BEFORE INSERT ON transactions
WHEN NEW.state NOT IN ('purchasing', 'purchased', 'restored') OR NEW.is_finished <> 0
BEGIN
    SELECT RAISE(ABORT, 'illegal initial transaction state');
END;

-- The legal transitions of SPEC section 2.1, enforced by the ledger itself.
CREATE TRIGGER transactions_legal_transition
BEFORE UPDATE OF state ON transactions
WHEN OLD.state <> NEW.state AND NOT (
       (OLD.state = 'purchasing' AND NEW.state IN ('purchased', 'failed', 'deferred'))
    OR (OLD.state = 'deferred'   AND NEW.state IN ('purchased', 'failed'))
)
BEGIN
    SELECT RAISE(ABORT, 'illegal transaction state transition');
END;

CREATE TRIGGER transactions_finished_is_final
BEFORE UPDATE ON transactions
WHEN OLD.is_finished = 1 AND (NEW.is_finished = 0 OR NEW.state <> OLD.state)
BEGIN
    SELECT RAISE(ABORT, 'a finished transaction cannot change state or be unfinished');
END;

CREATE TRIGGER transactions_identity_is_immutable
BEFORE UPDATE OF id, original_id, product_id, product_type, quantity, purchase_date,
                 original_purchase_date, idempotency_key, created_at ON transactions
WHEN OLD.id IS NOT NEW.id
  OR OLD.original_id IS NOT NEW.original_id
  OR OLD.product_id IS NOT NEW.product_id
  OR OLD.product_type IS NOT NEW.product_type
  OR OLD.quantity IS NOT NEW.quantity
  OR OLD.purchase_date IS NOT NEW.purchase_date
  OR OLD.original_purchase_date IS NOT NEW.original_purchase_date
  OR OLD.idempotency_key IS NOT NEW.idempotency_key
  OR OLD.created_at IS NOT NEW.created_at
BEGIN
    SELECT RAISE(ABORT, 'a transaction''s identity cannot change');
END;

-- Append-only history: one row per creation, state change, finish, delivery and revocation.
CREATE TABLE transaction_events (
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,
    transaction_id INTEGER NOT NULL REFERENCES transactions(id),
    kind           TEXT NOT NULL
                   CHECK (kind IN ('created', 'stateChanged', 'finished', 'delivered', 'revoked')),
    from_state     TEXT CHECK (from_state IN ('purchasing', 'purchased', 'failed', 'restored', 'deferred')),
    to_state       TEXT NOT NULL
                   CHECK (to_state IN ('purchasing', 'purchased', 'failed', 'restored', 'deferred')),
    at             INTEGER NOT NULL,
    detail         TEXT,
    CHECK ((kind = 'created') = (from_state IS NULL))
);
CREATE INDEX transaction_events_by_transaction ON transaction_events (transaction_id, seq);

CREATE TRIGGER transaction_events_append_only
BEFORE UPDATE ON transaction_events
BEGIN
    SELECT RAISE(ABORT, 'transaction_events is append-only');
END;
