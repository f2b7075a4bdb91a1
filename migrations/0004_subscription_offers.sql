-- StoreLedger schema, version 4: the subscription offer a transaction was bought with
-- (StoreKit 2's `Transaction.Offer`): introductory or promotional, its identifier (promotional
-- offers), its payment mode and the length of one of its periods (ISO 8601).
ALTER TABLE transactions ADD COLUMN offer_type TEXT CHECK (offer_type IN ('introductory', 'promotional'));
ALTER TABLE transactions ADD COLUMN offer_id TEXT CHECK (offer_id <> '');
ALTER TABLE transactions ADD COLUMN offer_payment_mode TEXT
    CHECK (offer_payment_mode IN ('freeTrial', 'payAsYouGo', 'payUpFront'));
ALTER TABLE transactions ADD COLUMN offer_period TEXT CHECK (offer_period GLOB 'P[0-9]*[DWMY]');
