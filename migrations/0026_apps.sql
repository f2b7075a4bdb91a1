-- StoreLedger schema, version 26: a store of several apps, and each customer's devices.
-- Shipped migrations are never edited: a change to the schema is a new file.
--
-- An app is a bundle identifier with its own settings (the environment its signed values name,
-- its Apple ID, the version installed, where its Server Notifications go) and its own products.
-- Every transaction and notification belongs to one app; a customer's purchases in one app are
-- not the purchases of another (docs/STORE.md, "Apps"). A ledger made before is a store of one
-- app, whose bundle identifier is the store's `bundleID` setting.
CREATE TABLE apps (
    id          INTEGER PRIMARY KEY NOT NULL CHECK (id > 0),
    bundle_id   TEXT NOT NULL UNIQUE CHECK (length(bundle_id) BETWEEN 1 AND 155),
    -- The store's time the app was added, in milliseconds.
    created_at  INTEGER NOT NULL
);

INSERT INTO apps (id, bundle_id, created_at)
VALUES (1, COALESCE((SELECT value FROM store_settings WHERE key = 'bundleID' AND length(value) BETWEEN 1 AND 155),
                    'com.example.app'),
        CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));

CREATE TRIGGER apps_keep_their_id BEFORE UPDATE OF id ON apps
BEGIN
    SELECT RAISE(ABORT, 'an app''s id never changes');
END;

CREATE TRIGGER apps_keep_their_transactions BEFORE DELETE ON apps
WHEN EXISTS (SELECT 1 FROM transactions WHERE app_id = OLD.id)
BEGIN
    SELECT RAISE(ABORT, 'an app that has transactions is never removed');
END;

-- The settings that are each app's own (and whether its promoted products' order was set: the
-- promotions are each app's, as its products); the store's test switches (storefront, locale, Ask to
-- Buy, failures, time rate, billing) stay in store_settings, shared by every app as Xcode's one
-- test environment is.
CREATE TABLE app_settings (
    app_id  INTEGER NOT NULL REFERENCES apps(id),
    key     TEXT NOT NULL
            CHECK (key IN ('environment', 'appAppleID', 'appVersion', 'notificationURL', 'promotionOrderOverridden')),
    value   TEXT NOT NULL,
    PRIMARY KEY (app_id, key)
) WITHOUT ROWID;

INSERT INTO app_settings (app_id, key, value)
SELECT 1, key, value FROM store_settings
WHERE key IN ('environment', 'appAppleID', 'appVersion', 'notificationURL', 'promotionOrderOverridden');

DELETE FROM store_settings
WHERE key IN ('bundleID', 'environment', 'appAppleID', 'appVersion', 'notificationURL', 'promotionOrderOverridden');

-- Each product is one app's (a product identifier names one product in the store: Apple makes
-- it unique within an app, the store across its apps, so that a transaction's product names
-- its app). Products made before are the first app's.
ALTER TABLE products ADD COLUMN app_id INTEGER NOT NULL DEFAULT 1 CHECK (app_id > 0);

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

CREATE INDEX products_by_app ON products (app_id, id);

-- Each subscription group is one app's too, and stays so when a new catalog drops its products
-- (its subscribers' renewal states are keyed by customer and group).
ALTER TABLE subscription_groups ADD COLUMN app_id INTEGER NOT NULL DEFAULT 1 CHECK (app_id > 0);

CREATE TRIGGER subscription_groups_keep_their_app BEFORE UPDATE OF app_id ON subscription_groups
WHEN OLD.app_id IS NOT NEW.app_id
BEGIN
    SELECT RAISE(ABORT, 'a subscription group''s app never changes');
END;

-- The app of each transaction: its product's. Rows made before are the first app's. A row's
-- digest in the hash chain covers the column when it is not 1 (docs/HASH-CHAIN.md), so the
-- digests recorded before stay right.
ALTER TABLE transactions ADD COLUMN app_id INTEGER NOT NULL DEFAULT 1 CHECK (app_id > 0);

CREATE TRIGGER transactions_have_an_app BEFORE INSERT ON transactions
WHEN NOT EXISTS (SELECT 1 FROM apps WHERE id = NEW.app_id)
BEGIN
    SELECT RAISE(ABORT, 'a transaction belongs to an app of the store');
END;

CREATE TRIGGER transactions_keep_their_app BEFORE UPDATE OF app_id ON transactions
WHEN OLD.app_id IS NOT NEW.app_id
BEGIN
    SELECT RAISE(ABORT, 'a transaction''s app never changes');
END;

-- The app each notification is for, which sends it to its own URL. Rows made before are the
-- first app's.
ALTER TABLE notifications ADD COLUMN app_id INTEGER NOT NULL DEFAULT 1 CHECK (app_id > 0);

CREATE TRIGGER notifications_keep_their_app BEFORE UPDATE OF app_id ON notifications
WHEN OLD.app_id IS NOT NEW.app_id
BEGIN
    SELECT RAISE(ABORT, 'a notification''s app never changes');
END;

CREATE INDEX notifications_by_app ON notifications (app_id, seq);

-- A device is one install of an app for one customer (an iPhone, an iPad), named by the tests:
-- what a payment queue runs on. Each has its own device verification identifier (StoreKit's
-- `AppStore.deviceVerificationID`, which app transactions are bound to); the customer's
-- purchases, finishes and restores are theirs on every device (docs/STORE.md, "Devices"). A
-- customer with no named device in an app has one device there, as every ledger made before.
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

-- A mass extension's request identifier is its app's: two apps' servers may each use one.
CREATE TABLE mass_renewal_extensions_by_app (
    app_id             INTEGER NOT NULL REFERENCES apps(id),
    request_identifier TEXT NOT NULL CHECK (length(request_identifier) BETWEEN 1 AND 128),
    product_id         TEXT NOT NULL,
    days               INTEGER NOT NULL CHECK (days BETWEEN 1 AND 90),
    reason             INTEGER NOT NULL CHECK (reason BETWEEN 0 AND 3),
    storefronts        TEXT,
    at                 INTEGER NOT NULL,
    succeeded          INTEGER NOT NULL CHECK (succeeded >= 0),
    failed             INTEGER NOT NULL CHECK (failed >= 0),
    PRIMARY KEY (app_id, request_identifier)
) WITHOUT ROWID;

INSERT INTO mass_renewal_extensions_by_app
    (app_id, request_identifier, product_id, days, reason, storefronts, at, succeeded, failed)
SELECT 1, request_identifier, product_id, days, reason, storefronts, at, succeeded, failed
FROM mass_renewal_extensions;

DROP TABLE mass_renewal_extensions;
ALTER TABLE mass_renewal_extensions_by_app RENAME TO mass_renewal_extensions;
