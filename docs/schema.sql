-- The schema of a new ledger: what migrations/*.sql make, in order, read back from SQLite.
-- Generated: UPDATE_SCHEMA=1 swift test --filter SchemaFileTests (a test compares it).
-- Schema version 28 (0028_empty_application_username).

CREATE TABLE api_keys (
    key_id TEXT PRIMARY KEY CHECK (length(key_id) BETWEEN 1 AND 64),
    issuer_id TEXT NOT NULL CHECK (length(issuer_id) BETWEEN 1 AND 64),
    public_key BLOB NOT NULL CHECK (typeof(public_key) = 'blob' AND length(public_key) = 65),
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
, mac BLOB CHECK (mac IS NULL OR length(mac) = 32)) WITHOUT ROWID;

CREATE TRIGGER api_keys_keep_their_public_key BEFORE UPDATE OF key_id, issuer_id, public_key, created_at ON api_keys
BEGIN
    SELECT RAISE(ABORT, 'an API key is never changed, only revoked');
END;

CREATE TRIGGER api_keys_stay_revoked BEFORE UPDATE OF revoked_at ON api_keys
WHEN OLD.revoked_at IS NOT NULL
BEGIN
    SELECT RAISE(ABORT, 'a revoked API key stays revoked');
END;

CREATE TABLE app_account_tokens (
    original_transaction_id INTEGER PRIMARY KEY CHECK (original_transaction_id > 0),
    token                   TEXT CHECK (token IS NULL OR length(token) = 36),
    set_at                  INTEGER NOT NULL
, mac BLOB CHECK (mac IS NULL OR length(mac) = 32));

CREATE TABLE app_settings (
    app_id  INTEGER NOT NULL REFERENCES apps(id),
    key     TEXT NOT NULL
            CHECK (key IN ('environment', 'appAppleID', 'appVersion', 'notificationURL', 'promotionOrderOverridden')),
    value   TEXT NOT NULL,
    PRIMARY KEY (app_id, key)
) WITHOUT ROWID;

CREATE TABLE apps (
    id          INTEGER PRIMARY KEY NOT NULL CHECK (id > 0),
    bundle_id   TEXT NOT NULL UNIQUE CHECK (length(bundle_id) BETWEEN 1 AND 155),
    -- The store's time the app was added, in milliseconds.
    created_at  INTEGER NOT NULL
);

CREATE TRIGGER apps_keep_their_id BEFORE UPDATE OF id ON apps
BEGIN
    SELECT RAISE(ABORT, 'an app''s id never changes');
END;

CREATE TRIGGER apps_keep_their_transactions BEFORE DELETE ON apps
WHEN EXISTS (SELECT 1 FROM transactions WHERE app_id = OLD.id)
BEGIN
    SELECT RAISE(ABORT, 'an app that has transactions is never removed');
END;

CREATE TABLE chain_head (
    id        INTEGER PRIMARY KEY CHECK (id = 1),
    seq       INTEGER NOT NULL CHECK (seq > 0),
    hash      BLOB NOT NULL CHECK (length(hash) = 32),
    signature BLOB NOT NULL CHECK (length(signature) = 64),
    signed_at INTEGER NOT NULL
);

CREATE TABLE charged_prices (
    transaction_id INTEGER PRIMARY KEY NOT NULL REFERENCES transactions(id),
    price          TEXT NOT NULL
, mac BLOB CHECK (mac IS NULL OR length(mac) = 32));

CREATE TABLE consumption_information (
    transaction_id INTEGER PRIMARY KEY CHECK (transaction_id > 0),
    version        INTEGER NOT NULL CHECK (version = 1 OR version = 2),
    body           TEXT NOT NULL CHECK (json_valid(body) AND length(body) <= 65536),
    received_at    INTEGER NOT NULL
);

CREATE TABLE customers (
    id          INTEGER PRIMARY KEY NOT NULL CHECK (id > 0),
    name        TEXT NOT NULL UNIQUE
                CHECK (length(name) BETWEEN 1 AND 64 AND name NOT GLOB '*[^A-Za-z0-9._-]*'),
    storefront  TEXT CHECK (storefront IS NULL OR (length(storefront) = 3 AND storefront NOT GLOB '*[^A-Z]*')),
    family      TEXT CHECK (family IS NULL OR (length(family) BETWEEN 1 AND 64 AND family NOT GLOB '*[^A-Za-z0-9._-]*')),
    -- The store's time the customer was added, in milliseconds.
    created_at  INTEGER NOT NULL
);

CREATE TRIGGER customers_keep_their_name BEFORE UPDATE OF id, name ON customers
BEGIN
    SELECT RAISE(ABORT, 'a customer''s name and id never change');
END;

CREATE TRIGGER customers_keep_their_transactions BEFORE DELETE ON customers
WHEN EXISTS (SELECT 1 FROM transactions WHERE customer_id = OLD.id)
BEGIN
    SELECT RAISE(ABORT, 'a customer who owns transactions is never removed');
END;

CREATE TABLE devices (
    id          INTEGER PRIMARY KEY NOT NULL CHECK (id > 0),
    customer_id INTEGER NOT NULL REFERENCES customers(id),
    app_id      INTEGER NOT NULL REFERENCES apps(id),
    name        TEXT NOT NULL
                CHECK (length(name) BETWEEN 1 AND 64 AND name NOT GLOB '*[^A-Za-z0-9._-]*'),
    -- The store's time the device was added, in milliseconds.
    created_at  INTEGER NOT NULL,
    UNIQUE (customer_id, app_id, name)
);

CREATE TRIGGER devices_keep_their_name BEFORE UPDATE ON devices
BEGIN
    SELECT RAISE(ABORT, 'a device is never changed');
END;

CREATE TABLE family_share_sources (
    -- The family member's share: the original transaction of their chain (family_shares).
    original_transaction_id INTEGER PRIMARY KEY NOT NULL CHECK (original_transaction_id > 0),
    -- The purchase shared: the original transaction of the buyer's chain.
    purchase_original_id    INTEGER NOT NULL CHECK (purchase_original_id > 0),
    CHECK (purchase_original_id <> original_transaction_id)
);

CREATE INDEX family_share_sources_by_purchase ON family_share_sources (purchase_original_id);

CREATE TABLE family_shares (
    original_transaction_id INTEGER PRIMARY KEY NOT NULL,
    -- The store's time of the share and of its end, in milliseconds.
    shared_at               INTEGER NOT NULL,
    revoked_at              INTEGER, mac BLOB CHECK (mac IS NULL OR length(mac) = 32),
    CHECK (revoked_at IS NULL OR revoked_at >= shared_at)
);

CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);

CREATE TABLE interrupted_purchases (
    transaction_id INTEGER PRIMARY KEY NOT NULL REFERENCES transactions(id),
    resolved       INTEGER NOT NULL DEFAULT 0 CHECK (resolved IN (0, 1)),
    -- Kept when the replacement is deleted, so that resolving again creates no second one.
    replacement_id INTEGER,
    CHECK (replacement_id IS NULL OR resolved = 1)
);

CREATE TABLE ledger_counters (
    name  TEXT PRIMARY KEY NOT NULL,
    value INTEGER NOT NULL CHECK (value >= 0)
) WITHOUT ROWID;

CREATE TABLE "mass_renewal_extensions" (
    app_id             INTEGER NOT NULL REFERENCES apps(id),
    request_identifier TEXT NOT NULL CHECK (length(request_identifier) BETWEEN 1 AND 128),
    product_id         TEXT NOT NULL,
    days               INTEGER NOT NULL CHECK (days BETWEEN 1 AND 90),
    reason             INTEGER NOT NULL CHECK (reason BETWEEN 0 AND 3),
    storefronts        TEXT,
    at                 INTEGER NOT NULL,
    succeeded          INTEGER NOT NULL CHECK (succeeded >= 0),
    failed             INTEGER NOT NULL CHECK (failed >= 0), through_customer INTEGER NOT NULL DEFAULT 0, completed_at INTEGER,
    PRIMARY KEY (app_id, request_identifier)
) WITHOUT ROWID;

CREATE INDEX mass_renewal_extensions_running ON mass_renewal_extensions (at) WHERE completed_at IS NULL;

CREATE TABLE notification_attempts (
    notification_seq INTEGER NOT NULL REFERENCES notifications (seq),
    attempt          INTEGER NOT NULL CHECK (attempt BETWEEN 1 AND 6),
    at               INTEGER NOT NULL,
    result           TEXT NOT NULL
                     CHECK (result IN ('SUCCESS', 'TIMED_OUT', 'TLS_ISSUE', 'CIRCULAR_REDIRECT', 'NO_RESPONSE',
                                       'SOCKET_ISSUE', 'UNSUPPORTED_CHARSET', 'INVALID_RESPONSE',
                                       'PREMATURE_CLOSE', 'UNSUCCESSFUL_HTTP_RESPONSE_CODE', 'OTHER')),
    http_status      INTEGER CHECK (http_status IS NULL OR http_status BETWEEN 100 AND 999), detail TEXT CHECK (detail IS NULL OR length(detail) BETWEEN 1 AND 512),
    PRIMARY KEY (notification_seq, attempt)
) WITHOUT ROWID;

CREATE TRIGGER notification_attempts_append_only
BEFORE UPDATE ON notification_attempts
BEGIN
    SELECT RAISE(ABORT, 'notification_attempts is append-only');
END;

CREATE TRIGGER notification_attempts_never_deleted
BEFORE DELETE ON notification_attempts
BEGIN
    SELECT RAISE(ABORT, 'notification_attempts is append-only');
END;

CREATE TABLE notifications (
    seq                     INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid                    TEXT NOT NULL UNIQUE CHECK (length(uuid) = 36),
    type                    TEXT NOT NULL CHECK (length(type) BETWEEN 1 AND 64),
    subtype                 TEXT CHECK (subtype IS NULL OR length(subtype) BETWEEN 1 AND 64),
    transaction_id          INTEGER CHECK (transaction_id IS NULL OR transaction_id > 0),
    original_transaction_id INTEGER CHECK (original_transaction_id IS NULL OR original_transaction_id > 0),
    -- What the notification reports, for the ones made when time passes (an expiry, the end of
    -- a grace period): the same event is never notified twice.
    event_key               TEXT UNIQUE,
    -- The store's time of the change, in milliseconds: the payload's signedDate.
    created_at              INTEGER NOT NULL,
    signed_payload          TEXT NOT NULL CHECK (length(signed_payload) > 0),
    status                  TEXT NOT NULL DEFAULT 'pending'
                            CHECK (status = 'pending' OR status = 'delivered' OR status = 'failed'),
    -- When the next attempt is due by the store's clock; only while pending.
    next_attempt_at         INTEGER,
    attempts                INTEGER NOT NULL DEFAULT 0 CHECK (attempts BETWEEN 0 AND 6), mac BLOB CHECK (mac IS NULL OR length(mac) = 32), app_id INTEGER NOT NULL DEFAULT 1 CHECK (app_id > 0),
    CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL))
);

CREATE INDEX notifications_by_app ON notifications (app_id, seq);

CREATE INDEX notifications_by_original ON notifications (original_transaction_id, seq);

CREATE INDEX notifications_due ON notifications (next_attempt_at, seq) WHERE status = 'pending';

CREATE TRIGGER notifications_keep_their_app BEFORE UPDATE OF app_id ON notifications
WHEN OLD.app_id IS NOT NEW.app_id
BEGIN
    SELECT RAISE(ABORT, 'a notification''s app never changes');
END;

CREATE TRIGGER notifications_keep_their_payload
BEFORE UPDATE OF seq, uuid, type, subtype, transaction_id, original_transaction_id, event_key, created_at,
    signed_payload ON notifications
BEGIN
    SELECT RAISE(ABORT, 'a notification is never changed, only attempted');
END;

CREATE TRIGGER notifications_never_deleted
BEFORE DELETE ON notifications
BEGIN
    SELECT RAISE(ABORT, 'notifications are never deleted');
END;

CREATE TRIGGER notifications_settled_stay_settled
BEFORE UPDATE OF status ON notifications
WHEN OLD.status <> 'pending'
BEGIN
    SELECT RAISE(ABORT, 'a delivered or failed notification stays so');
END;

CREATE TABLE payment_terms (
    transaction_id            INTEGER PRIMARY KEY NOT NULL REFERENCES transactions(id),
    -- The purchase date, in milliseconds; never after the store's time when the payment was added.
    purchase_date             INTEGER,
    renews                    INTEGER CHECK (renews IS NULL OR renews IN (0, 1)),
    introductory_offer        INTEGER CHECK (introductory_offer IS NULL OR introductory_offer IN (0, 1)),
    introductory_offer_nonce  TEXT UNIQUE CHECK (introductory_offer_nonce IS NULL OR length(introductory_offer_nonce) = 36),
    CHECK ((purchase_date IS NULL) = (renews IS NULL)),
    CHECK ((introductory_offer IS NULL) = (introductory_offer_nonce IS NULL))
);

CREATE TABLE "price_increases" (
    customer_id      INTEGER NOT NULL REFERENCES customers(id),
    group_id         TEXT NOT NULL REFERENCES subscription_groups(id),
    product_id       TEXT NOT NULL,
    -- The new price of one period, decimal text as the catalog's prices.
    price            TEXT NOT NULL,
    needs_consent    INTEGER NOT NULL CHECK (needs_consent IN (0, 1)),
    status           TEXT NOT NULL CHECK (status IN ('pending', 'agreed', 'declined')),
    -- The store's time of the request and of the subscriber's answer, in milliseconds.
    requested_at     INTEGER NOT NULL,
    answered_at      INTEGER,
    mac              BLOB CHECK (mac IS NULL OR length(mac) = 32),
    CHECK ((status = 'pending') = (answered_at IS NULL)),
    CHECK (needs_consent = 1 OR status = 'agreed'),
    CHECK (answered_at IS NULL OR answered_at >= requested_at),
    PRIMARY KEY (customer_id, group_id)
) WITHOUT ROWID;

CREATE TABLE product_localizations (
    product_id   TEXT NOT NULL REFERENCES products(id) ON DELETE CASCADE,
    locale       TEXT NOT NULL,
    position     INTEGER NOT NULL,
    display_name TEXT NOT NULL,
    description  TEXT NOT NULL,
    PRIMARY KEY (product_id, locale)
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
    imported_from             TEXT, app_id INTEGER NOT NULL DEFAULT 1 CHECK (app_id > 0),
    CHECK ((type = 'autoRenewable') = (subscription_group_id IS NOT NULL
                                       AND subscription_group_level IS NOT NULL
                                       AND subscription_period IS NOT NULL))
) WITHOUT ROWID;

CREATE INDEX products_by_app ON products (app_id, id);

CREATE TRIGGER products_have_an_app BEFORE INSERT ON products
WHEN NOT EXISTS (SELECT 1 FROM apps WHERE id = NEW.app_id)
BEGIN
    SELECT RAISE(ABORT, 'a product belongs to an app of the store');
END;

CREATE TRIGGER products_keep_their_app BEFORE UPDATE OF app_id ON products
WHEN OLD.app_id IS NOT NEW.app_id
BEGIN
    SELECT RAISE(ABORT, 'a product''s app never changes');
END;

CREATE TABLE promotions (
    position   INTEGER PRIMARY KEY NOT NULL CHECK (position >= 0),
    product_id TEXT NOT NULL UNIQUE REFERENCES products(id),
    visibility TEXT NOT NULL CHECK (visibility IN ('appStoreConnectDefault', 'visible', 'hidden'))
);

CREATE TABLE record_seals (
    table_name TEXT PRIMARY KEY NOT NULL,
    row_count  INTEGER NOT NULL CHECK (row_count >= 0),
    digest     BLOB NOT NULL CHECK (length(digest) = 32),
    mac        BLOB NOT NULL CHECK (length(mac) = 32)
) WITHOUT ROWID;

CREATE TABLE refund_portions (
    transaction_id INTEGER PRIMARY KEY NOT NULL REFERENCES transactions(id),
    percentage     INTEGER NOT NULL CHECK (percentage BETWEEN 1 AND 99999)
, mac BLOB CHECK (mac IS NULL OR length(mac) = 32));

CREATE TABLE refund_requests (
    transaction_id INTEGER PRIMARY KEY NOT NULL REFERENCES transactions(id),
    -- The customer's reason: Apple's consumptionRequestReason values.
    reason         TEXT NOT NULL CHECK (reason IN ('UNINTENDED_PURCHASE', 'FULFILLMENT_ISSUE',
                       'UNSATISFIED_WITH_PURCHASE', 'LEGAL', 'OTHER')),
    -- The store's time of the request and of its decision, in milliseconds.
    requested_at   INTEGER NOT NULL,
    outcome        TEXT NOT NULL DEFAULT 'pending' CHECK (outcome IN ('pending', 'granted', 'declined')),
    decided_at     INTEGER,
    CHECK ((outcome = 'pending') = (decided_at IS NULL)),
    CHECK (decided_at IS NULL OR decided_at >= requested_at)
);

CREATE TABLE renewal_changes (
    transaction_id   INTEGER PRIMARY KEY NOT NULL REFERENCES transactions(id),
    -- The period of the subscription whose next renewal the payment changed.
    subscription_id  INTEGER NOT NULL CHECK (subscription_id > 0),
    mac              BLOB CHECK (mac IS NULL OR length(mac) = 32),
    CHECK (subscription_id <> transaction_id)
);

CREATE TABLE renewal_extensions (
    request_identifier      TEXT NOT NULL CHECK (length(request_identifier) BETWEEN 1 AND 128),
    original_transaction_id INTEGER NOT NULL CHECK (original_transaction_id > 0),
    period_id               INTEGER NOT NULL CHECK (period_id > 0),
    days                    INTEGER NOT NULL CHECK (days BETWEEN 1 AND 90),
    reason                  INTEGER NOT NULL CHECK (reason BETWEEN 0 AND 3),
    at                      INTEGER NOT NULL,
    effective_date          INTEGER NOT NULL,
    PRIMARY KEY (request_identifier, original_transaction_id)
) WITHOUT ROWID;

CREATE INDEX renewal_extensions_by_original ON renewal_extensions (original_transaction_id, at);

CREATE TABLE rule_events (
    kind              TEXT PRIMARY KEY NOT NULL,
    subscription_only INTEGER NOT NULL CHECK (subscription_only IN (0, 1))
) WITHOUT ROWID;

CREATE TABLE rule_initial_states (
    state TEXT PRIMARY KEY NOT NULL
) WITHOUT ROWID;

CREATE TABLE rule_states (
    state      TEXT PRIMARY KEY NOT NULL,
    finishable INTEGER NOT NULL CHECK (finishable IN (0, 1)),
    revocable  INTEGER NOT NULL CHECK (revocable IN (0, 1))
) WITHOUT ROWID;

CREATE TABLE rule_transitions (
    from_state TEXT NOT NULL,
    to_state   TEXT NOT NULL,
    PRIMARY KEY (from_state, to_state)
) WITHOUT ROWID;

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

CREATE TABLE store_settings (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE subscription_groups (
    id   TEXT PRIMARY KEY NOT NULL CHECK (id <> ''),
    name TEXT NOT NULL
, app_id INTEGER NOT NULL DEFAULT 1 CHECK (app_id > 0)) WITHOUT ROWID;

CREATE TRIGGER subscription_groups_keep_their_app BEFORE UPDATE OF app_id ON subscription_groups
WHEN OLD.app_id IS NOT NEW.app_id
BEGIN
    SELECT RAISE(ABORT, 'a subscription group''s app never changes');
END;

CREATE TABLE "subscription_renewal" (
    customer_id         INTEGER NOT NULL REFERENCES customers(id),
    group_id            TEXT NOT NULL,
    shared_original_id  INTEGER NOT NULL DEFAULT 0 CHECK (shared_original_id >= 0),
    auto_renew          INTEGER NOT NULL DEFAULT 1 CHECK (auto_renew IN (0, 1)),
    -- When auto-renew was last turned on: a period that ended before it lapsed for good.
    resumed_at          INTEGER NOT NULL DEFAULT 0,
    -- The product the next renewal switches to (a downgrade, or a crossgrade to another period).
    next_product_id     TEXT REFERENCES products(id),
    -- Where calendar periods are counted from, so that a purchase on the 31st renews on the
    -- last day of shorter months and back on the 31st (not drifting to the 28th).
    period_anchor       INTEGER,
    billing_issue_since INTEGER,
    grace_until         INTEGER CHECK (grace_until >= billing_issue_since),
    retry_until         INTEGER CHECK (retry_until >= billing_issue_since),
    pending_offer_id    TEXT,
    pending_offer_type  TEXT CHECK (pending_offer_type = 'promotional' OR pending_offer_type = 'code'), due_from INTEGER DEFAULT 0,
    PRIMARY KEY (customer_id, group_id, shared_original_id)
) WITHOUT ROWID;

CREATE INDEX subscription_renewal_by_due ON subscription_renewal (due_from) WHERE due_from IS NOT NULL;

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

CREATE INDEX transaction_events_by_transaction ON transaction_events (transaction_id, seq);

CREATE TRIGGER transaction_events_append_only
BEFORE UPDATE ON transaction_events
BEGIN
    SELECT RAISE(ABORT, 'transaction_events is append-only');
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
       WHEN 'reinstated' THEN NEW.from_state IS NOT NEW.to_state
                              OR NOT EXISTS (SELECT 1 FROM rule_states WHERE state = NEW.to_state AND revocable = 1)
       ELSE NEW.from_state IS NOT NEW.to_state
     END
BEGIN
    SELECT RAISE(ABORT, 'illegal transaction history row');
END;

CREATE TRIGGER transaction_events_never_deleted
BEFORE DELETE ON transaction_events
BEGIN
    SELECT RAISE(ABORT, 'transaction_events is append-only: history is never deleted');
END;

CREATE TABLE "transactions" (
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
                           CHECK (length(CAST(application_username AS BLOB)) <= 1024),
    offer_type             TEXT
                           CHECK (offer_type = 'introductory' OR offer_type = 'promotional' OR offer_type = 'code'
                                  OR offer_type = 'winBack'),
    offer_id               TEXT CHECK (offer_id <> ''),
    offer_payment_mode     TEXT
                           CHECK (offer_payment_mode = 'freeTrial' OR offer_payment_mode = 'payAsYouGo'
                                  OR offer_payment_mode = 'payUpFront'),
    offer_period           TEXT CHECK (offer_period GLOB 'P[0-9]*[DWMY]'),
    offer_nonce            TEXT, customer_id INTEGER NOT NULL DEFAULT 1 CHECK (customer_id > 0), app_id INTEGER NOT NULL DEFAULT 1 CHECK (app_id > 0),
    -- What the database can enforce by itself.
    CHECK (NOT (is_finished = 1 AND (state = 'purchasing' OR state = 'deferred'))),
    CHECK ((is_finished = 1) = (finished_at IS NOT NULL)),
    CHECK ((state = 'failed') = (error_code IS NOT NULL)),
    CHECK (state <> 'purchasing' OR planned_state IS NOT NULL),
    CHECK (planned_state IS NOT 'failed' OR planned_error_code IS NOT NULL),
    CHECK ((revocation_date IS NULL) = (revocation_reason IS NULL)),
    CHECK ((delivery_count = 0) = (last_delivered_at IS NULL))
);

CREATE INDEX transactions_by_group ON transactions (customer_id, subscription_group_id, purchase_date, id)
    WHERE subscription_group_id IS NOT NULL;

CREATE INDEX transactions_by_product ON transactions (customer_id, product_id, id);

CREATE INDEX transactions_by_state ON transactions (customer_id, state, id);

CREATE UNIQUE INDEX transactions_idempotency_key ON transactions (idempotency_key) WHERE idempotency_key IS NOT NULL;

CREATE UNIQUE INDEX transactions_offer_nonce ON transactions (offer_nonce) WHERE offer_nonce IS NOT NULL;

CREATE INDEX transactions_restorable ON transactions (customer_id, product_type, id)
    WHERE state = 'purchased' AND revocation_date IS NULL;

CREATE INDEX transactions_unfinished ON transactions (customer_id, id) WHERE is_finished = 0;

CREATE TRIGGER changed_subscription_periods_are_due_at_their_end
AFTER UPDATE OF expiration_date, state, revocation_date, is_upgraded, purchase_date ON transactions
WHEN NEW.subscription_group_id IS NOT NULL AND NEW.expiration_date IS NOT NULL
BEGIN
    UPDATE subscription_renewal SET due_from = MIN(COALESCE(due_from, NEW.expiration_date), NEW.expiration_date)
    WHERE customer_id = NEW.customer_id AND group_id = NEW.subscription_group_id;
END;

CREATE TRIGGER subscription_periods_are_due_at_their_end AFTER INSERT ON transactions
WHEN NEW.subscription_group_id IS NOT NULL AND NEW.expiration_date IS NOT NULL
BEGIN
    UPDATE subscription_renewal SET due_from = MIN(COALESCE(due_from, NEW.expiration_date), NEW.expiration_date)
    WHERE customer_id = NEW.customer_id AND group_id = NEW.subscription_group_id;
END;

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

CREATE TRIGGER transactions_have_a_customer BEFORE INSERT ON transactions
WHEN NOT EXISTS (SELECT 1 FROM customers WHERE id = NEW.customer_id)
BEGIN
    SELECT RAISE(ABORT, 'a transaction belongs to a customer of the store');
END;

CREATE TRIGGER transactions_have_an_app BEFORE INSERT ON transactions
WHEN NOT EXISTS (SELECT 1 FROM apps WHERE id = NEW.app_id)
BEGIN
    SELECT RAISE(ABORT, 'a transaction belongs to an app of the store');
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

CREATE TRIGGER transactions_keep_their_app BEFORE UPDATE OF app_id ON transactions
WHEN OLD.app_id IS NOT NEW.app_id
BEGIN
    SELECT RAISE(ABORT, 'a transaction''s app never changes');
END;

CREATE TRIGGER transactions_keep_their_customer BEFORE UPDATE OF customer_id ON transactions
WHEN OLD.customer_id IS NOT NEW.customer_id
BEGIN
    SELECT RAISE(ABORT, 'a transaction''s customer never changes');
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
       (OLD.revocation_date IS NULL) = (NEW.revocation_date IS NULL)
    OR NOT EXISTS (SELECT 1 FROM rule_states WHERE state = NEW.state AND revocable = 1)
    OR (NEW.revocation_date IS NULL
        AND EXISTS (SELECT 1 FROM family_shares WHERE original_transaction_id = OLD.original_id)))
BEGIN
    SELECT RAISE(ABORT, 'a refund is set once on a purchased or restored transaction, and only reversed whole (a Family Sharing revocation never)');
END;
