-- StoreLedger schema, version 19: prorated refunds.
-- Shipped migrations are never edited: a change to the schema is a new file.
--
-- The App Store may refund part of a purchase, by the customer's use of it (Apple's
-- revocationType REFUND_PRORATED): the purchase is revoked as by a full refund, and the part
-- refunded is kept here, in milliunits of a percent (Apple's revocationPercentage: 25000 is
-- 25%), with each transaction the refund revoked (the purchase and its restored copies). A
-- refund without a row is full.
CREATE TABLE refund_portions (
    transaction_id INTEGER PRIMARY KEY NOT NULL REFERENCES transactions(id),
    percentage     INTEGER NOT NULL CHECK (percentage BETWEEN 1 AND 99999)
);
