-- StoreLedger schema, version 25: a store of several customers.
-- Shipped migrations are never edited: a change to the schema is a new file.
--
-- A customer is an Apple Account of the simulated App Store: a name the tests choose, the
-- storefront they buy from (none: the store's `storefront` setting), and the family they
-- belong to, if any (docs/STORE.md, "Customers"). Every transaction belongs to one customer;
-- the rules that read "the customer's" purchases (subscriptions, entitlements, restores, the
-- queue) read that customer's rows only. A ledger made before is a store of one customer,
-- named `default`, who owns every transaction it holds.
CREATE TABLE customers (
    id          INTEGER PRIMARY KEY NOT NULL CHECK (id > 0),
    name        TEXT NOT NULL UNIQUE
                CHECK (length(name) BETWEEN 1 AND 64 AND name NOT GLOB '*[^A-Za-z0-9._-]*'),
    storefront  TEXT CHECK (storefront IS NULL OR (length(storefront) = 3 AND storefront NOT GLOB '*[^A-Z]*')),
    family      TEXT CHECK (family IS NULL OR (length(family) BETWEEN 1 AND 64 AND family NOT GLOB '*[^A-Za-z0-9._-]*')),
    -- The store's time the customer was added, in milliseconds.
    created_at  INTEGER NOT NULL
);

INSERT INTO customers (id, name, storefront, family, created_at)
VALUES (1, 'default', NULL, NULL, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));

-- A customer is never removed while they own a transaction (nor renamed: names are how tests
-- and scripts call them).
CREATE TRIGGER customers_keep_their_name BEFORE UPDATE OF id, name ON customers
BEGIN
    SELECT RAISE(ABORT, 'a customer''s name and id never change');
END;

CREATE TRIGGER customers_keep_their_transactions BEFORE DELETE ON customers
WHEN EXISTS (SELECT 1 FROM transactions WHERE customer_id = OLD.id)
BEGIN
    SELECT RAISE(ABORT, 'a customer who owns transactions is never removed');
END;

-- The owner of each transaction. Rows made before belong to customer 1. The column is not
-- declared a foreign key (SQLite adds no column with a non-null default that is one); the
-- triggers below hold the same rule. A row's digest in the hash chain covers the column
-- when it is not 1 (docs/HASH-CHAIN.md), so the digests recorded before stay right.
ALTER TABLE transactions ADD COLUMN customer_id INTEGER NOT NULL DEFAULT 1 CHECK (customer_id > 0);

CREATE TRIGGER transactions_have_a_customer BEFORE INSERT ON transactions
WHEN NOT EXISTS (SELECT 1 FROM customers WHERE id = NEW.customer_id)
BEGIN
    SELECT RAISE(ABORT, 'a transaction belongs to a customer of the store');
END;

CREATE TRIGGER transactions_keep_their_customer BEFORE UPDATE OF customer_id ON transactions
WHEN OLD.customer_id IS NOT NEW.customer_id
BEGIN
    SELECT RAISE(ABORT, 'a transaction''s customer never changes');
END;

-- The indexes the customer's reads use lead with the customer: a customer's subscriptions,
-- products, queue and restorable purchases are found without reading anyone else's.
DROP INDEX transactions_by_group;
CREATE INDEX transactions_by_group ON transactions (customer_id, subscription_group_id, purchase_date, id)
    WHERE subscription_group_id IS NOT NULL;
DROP INDEX transactions_by_product;
CREATE INDEX transactions_by_product ON transactions (customer_id, product_id, id);
DROP INDEX transactions_by_state;
CREATE INDEX transactions_by_state ON transactions (customer_id, state, id);
DROP INDEX transactions_restorable;
CREATE INDEX transactions_restorable ON transactions (customer_id, product_type, id)
    WHERE state = 'purchased' AND revocation_date IS NULL;
DROP INDEX transactions_unfinished;
CREATE INDEX transactions_unfinished ON transactions (customer_id, id) WHERE is_finished = 0;

-- Family Sharing between the store's customers: a customer's purchase of a family-shareable
-- product is shared with the other members of their family, each getting it owned
-- FAMILY_SHARED (a chain of their own, in family_shares). Each share names the purchase it
-- shares, so that a refund of the purchase ends the sharing. (A share made by the simulated
-- family member of before names none.)
CREATE TABLE family_share_sources (
    -- The family member's share: the original transaction of their chain (family_shares).
    original_transaction_id INTEGER PRIMARY KEY NOT NULL CHECK (original_transaction_id > 0),
    -- The purchase shared: the original transaction of the buyer's chain.
    purchase_original_id    INTEGER NOT NULL CHECK (purchase_original_id > 0),
    CHECK (purchase_original_id <> original_transaction_id)
);

CREATE INDEX family_share_sources_by_purchase ON family_share_sources (purchase_original_id);

-- A subscription's renewal state is the holder's: keyed by customer too.
CREATE TABLE subscription_renewal_by_customer (
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
    pending_offer_type  TEXT CHECK (pending_offer_type = 'promotional' OR pending_offer_type = 'code'),
    PRIMARY KEY (customer_id, group_id, shared_original_id)
) WITHOUT ROWID;

INSERT INTO subscription_renewal_by_customer (
    customer_id, group_id, shared_original_id, auto_renew, resumed_at, next_product_id, period_anchor,
    billing_issue_since, grace_until, retry_until, pending_offer_id, pending_offer_type)
SELECT 1, group_id, shared_original_id, auto_renew, resumed_at, next_product_id, period_anchor,
       billing_issue_since, grace_until, retry_until, pending_offer_id, pending_offer_type
FROM subscription_renewal;

DROP TABLE subscription_renewal;
ALTER TABLE subscription_renewal_by_customer RENAME TO subscription_renewal;

-- A price increase is the subscriber's: keyed by customer too. Its MAC covers the customer
-- from now on; the upgrade stamps again each row whose MAC checked before (a row forged
-- before is left without one, and verify goes on reporting it).
CREATE TABLE price_increases_by_customer (
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

INSERT INTO price_increases_by_customer (
    customer_id, group_id, product_id, price, needs_consent, status, requested_at, answered_at, mac)
SELECT 1, group_id, product_id, price, needs_consent, status, requested_at, answered_at, mac
FROM price_increases;

DROP TABLE price_increases;
ALTER TABLE price_increases_by_customer RENAME TO price_increases;
