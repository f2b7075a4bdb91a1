-- StoreLedger schema, version 6: promotional offers. A payment redeems an offer with a
-- signature whose nonce the App Store accepts once: the nonce is kept with the transaction and
-- a second payment with it is refused. An offer redeemed for the product a customer is
-- subscribed to takes effect at the next renewal: the group keeps the offer until then.
ALTER TABLE transactions ADD COLUMN offer_nonce TEXT;
CREATE UNIQUE INDEX transactions_offer_nonce ON transactions (offer_nonce) WHERE offer_nonce IS NOT NULL;
ALTER TABLE subscription_renewal ADD COLUMN pending_offer_id TEXT;
