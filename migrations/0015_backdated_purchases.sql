-- StoreLedger schema, version 15: back-dated test purchases.
-- Shipped migrations are never edited: a change to the schema is a new file.
--
-- A test purchase may be dated in the past (StoreKitTest's `purchaseDate(_:renewalBehavior:)`
-- purchase option, `ledger purchase --purchase-date`). The date is kept from the payment's
-- commit to its charge (a payment is added, then charged, in two commits): the charge dates the
-- purchase then, and an auto-renewable subscription's first period starts then, renewing up to
-- the store's time (`renews` 1) or not at all (`renews` 0, StoreKitTest's `cancelImmediately`).
CREATE TABLE backdated_purchases (
    transaction_id INTEGER PRIMARY KEY NOT NULL REFERENCES transactions(id),
    -- The purchase date, in milliseconds; never after the store's time when the payment was added.
    purchase_date  INTEGER NOT NULL,
    renews         INTEGER NOT NULL CHECK (renews IN (0, 1))
);
