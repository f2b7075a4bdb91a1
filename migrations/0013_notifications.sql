-- StoreLedger schema, version 13: App Store Server Notifications V2, in a durable outbox.
-- Shipped migrations are never edited: a change to the schema is a new file.
--
-- While the store has a notification URL, every change the App Store notifies writes its
-- notification here, signed, in the commit of the change (docs/SERVER.md, "Notifications"):
-- a notification is never lost with a crash, and never made twice for one change. `ledger
-- serve` (or `ledger notifications send`) POSTs each one, then records the attempt; until a
-- success it is retried 1, 12, 24, 48 and 72 hours after the previous attempt, by the store's
-- clock. Its UUID and signed payload never change.
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
    attempts                INTEGER NOT NULL DEFAULT 0 CHECK (attempts BETWEEN 0 AND 6),
    CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL))
);
CREATE INDEX notifications_due ON notifications (next_attempt_at, seq) WHERE status = 'pending';
CREATE INDEX notifications_by_original ON notifications (original_transaction_id, seq);

CREATE TRIGGER notifications_keep_their_payload
BEFORE UPDATE OF seq, uuid, type, subtype, transaction_id, original_transaction_id, event_key, created_at,
    signed_payload ON notifications
BEGIN
    SELECT RAISE(ABORT, 'a notification is never changed, only attempted');
END;

CREATE TRIGGER notifications_settled_stay_settled
BEFORE UPDATE OF status ON notifications
WHEN OLD.status <> 'pending'
BEGIN
    SELECT RAISE(ABORT, 'a delivered or failed notification stays so');
END;

CREATE TRIGGER notifications_never_deleted
BEFORE DELETE ON notifications
BEGIN
    SELECT RAISE(ABORT, 'notifications are never deleted');
END;

-- Every attempt to send a notification, with Apple's sendAttemptResult.
CREATE TABLE notification_attempts (
    notification_seq INTEGER NOT NULL REFERENCES notifications (seq),
    attempt          INTEGER NOT NULL CHECK (attempt BETWEEN 1 AND 6),
    at               INTEGER NOT NULL,
    result           TEXT NOT NULL
                     CHECK (result IN ('SUCCESS', 'TIMED_OUT', 'TLS_ISSUE', 'CIRCULAR_REDIRECT', 'NO_RESPONSE',
                                       'SOCKET_ISSUE', 'UNSUPPORTED_CHARSET', 'INVALID_RESPONSE',
                                       'PREMATURE_CLOSE', 'UNSUCCESSFUL_HTTP_RESPONSE_CODE', 'OTHER')),
    http_status      INTEGER CHECK (http_status IS NULL OR http_status BETWEEN 100 AND 999),
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

-- The store's time up to which passing time (expiries, ends of grace periods) was notified.
INSERT INTO ledger_counters (name, value) VALUES ('notifications_report_time_from', 0);

-- What the team's server told the App Store through the API: each table keeps what one
-- endpoint sets, and nothing here changes a transaction's row (its history vouches for it).

-- Send Consumption Information: the last body sent for a transaction (version 1 or 2 of the
-- endpoint), as JSON.
CREATE TABLE consumption_information (
    transaction_id INTEGER PRIMARY KEY CHECK (transaction_id > 0),
    version        INTEGER NOT NULL CHECK (version = 1 OR version = 2),
    body           TEXT NOT NULL CHECK (json_valid(body) AND length(body) <= 65536),
    received_at    INTEGER NOT NULL
);

-- Set App Account Token: the token the server set on an original transaction, which the
-- transactions of its chain are signed with from then on; NULL: cleared.
CREATE TABLE app_account_tokens (
    original_transaction_id INTEGER PRIMARY KEY CHECK (original_transaction_id > 0),
    token                   TEXT CHECK (token IS NULL OR length(token) = 36),
    set_at                  INTEGER NOT NULL
);

-- Extend a Subscription Renewal Date: each extension, once per request identifier and
-- original transaction (the same request again extends nothing more).
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

-- Extend Subscription Renewal Dates for All Active Subscribers: each request, done in its commit.
CREATE TABLE mass_renewal_extensions (
    request_identifier TEXT PRIMARY KEY CHECK (length(request_identifier) BETWEEN 1 AND 128),
    product_id         TEXT NOT NULL,
    days               INTEGER NOT NULL CHECK (days BETWEEN 1 AND 90),
    reason             INTEGER NOT NULL CHECK (reason BETWEEN 0 AND 3),
    storefronts        TEXT,
    at                 INTEGER NOT NULL,
    succeeded          INTEGER NOT NULL CHECK (succeeded >= 0),
    failed             INTEGER NOT NULL CHECK (failed >= 0)
) WITHOUT ROWID;
