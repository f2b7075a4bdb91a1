-- StoreLedger schema, version 16: subscription price increases.
-- Shipped migrations are never edited: a change to the schema is a new file.
--
-- The App Store raises the price a subscriber renews at (StoreKitTest's
-- `requestPriceIncreaseConsentForTransaction`, `ledger subscriptions price-increase request`).
-- A group has at most one increase waiting for its next renewal, of the product that renewal
-- charges. An increase that needs the subscriber's consent is `pending` until they agree or
-- decline; one that does not is `agreed` from the start. The renewal of its product charges an
-- agreed increase's price and removes the increase; a subscriber who declined, or had not
-- answered when the period ended, does not renew (the subscription expires, reason "did not
-- consent to price increase"). A new period that is not such a renewal (a purchase, an upgrade,
-- a renewal to another product) removes it too: it was for the period that ended.
CREATE TABLE price_increases (
    group_id         TEXT PRIMARY KEY NOT NULL REFERENCES subscription_groups(id),
    product_id       TEXT NOT NULL,
    -- The new price of one period, decimal text as the catalog's prices.
    price            TEXT NOT NULL,
    needs_consent    INTEGER NOT NULL CHECK (needs_consent IN (0, 1)),
    status           TEXT NOT NULL CHECK (status IN ('pending', 'agreed', 'declined')),
    -- The store's time of the request and of the subscriber's answer, in milliseconds.
    requested_at     INTEGER NOT NULL,
    answered_at      INTEGER,
    CHECK ((status = 'pending') = (answered_at IS NULL)),
    CHECK (needs_consent = 1 OR status = 'agreed'),
    CHECK (answered_at IS NULL OR answered_at >= requested_at)
) WITHOUT ROWID;

-- The price a renewal was charged when it is not the catalog's: the price the subscriber
-- agreed to in an increase, which the chain's later renewals of the same product keep. A
-- transaction without a row here was charged the catalog's price (or its offer's).
CREATE TABLE charged_prices (
    transaction_id INTEGER PRIMARY KEY NOT NULL REFERENCES transactions(id),
    price          TEXT NOT NULL
);
