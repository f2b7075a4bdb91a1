-- StoreLedger schema, version 15: a payment's terms, kept from its commit to its charge.
-- Shipped migrations are never edited: a change to the schema is a new file.
--
-- A payment is added, then charged, in two commits. What it asked for that the charge applies
-- is kept here in between, so that a crash between the two changes nothing:
-- - a test purchase dated in the past (StoreKitTest's `purchaseDate(_:renewalBehavior:)`,
--   `ledger purchase --purchase-date`): the charge dates the purchase then, and an
--   auto-renewable subscription's first period starts then, renewing up to the store's time
--   (`renews` 1) or not at all (`renews` 0, StoreKitTest's `cancelImmediately`);
-- - the app's server's say on the introductory offer (StoreKit's
--   `introductoryOfferEligibility(compactJWS:)`): 1 gives it, 0 withholds it, whatever the
--   customer's history; its JWS's nonce is kept so that it is used once.
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
