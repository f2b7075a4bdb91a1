-- StoreLedger schema, version 24: payments that change a subscription's next renewal.
-- Shipped migrations are never edited: a change to the schema is a new file.
--
-- A current subscriber's downgrade, crossgrade to another period, offer for the product they
-- subscribe to, or purchase of that product again while a change waits (which cancels the
-- change) creates no transaction in the App Store: the subscription renews to the change at its
-- next renewal, and nothing is charged now. The device's payment still ends: its row is
-- purchased, with no period (its expiration is its purchase date), finished at once, and
-- listed here with the subscription period it changes the renewal of. What the App Store's
-- server shows (histories, Get Transaction Info, Look Up Order ID), restores, StoreKit 2's
-- transaction lists and the charge notifications leave these rows out; StoreKit 2's purchase
-- returns the subscription it changed.
--
-- A row reaches what the server signs (a payment it lists is signed; one listed here is not),
-- so it is authenticated as migration 22's records are: its MAC, and the table's seal.
--
-- Ledgers made before keep their downgrades as they were made: charged, zero-length purchases.
CREATE TABLE renewal_changes (
    transaction_id   INTEGER PRIMARY KEY NOT NULL REFERENCES transactions(id),
    -- The period of the subscription whose next renewal the payment changed.
    subscription_id  INTEGER NOT NULL CHECK (subscription_id > 0),
    mac              BLOB CHECK (mac IS NULL OR length(mac) = 32),
    CHECK (subscription_id <> transaction_id)
);
