-- StoreLedger schema, version 14: refund requests.
-- Shipped migrations are never edited: a change to the schema is a new file.
--
-- A customer asks the App Store for a refund of a purchase (StoreKit 2's
-- `Transaction.beginRefundRequest`, `ledger refund-requests submit`), with a reason; the App
-- Store reviews it, then grants it (the purchase is refunded, as `ledger refund` does) or
-- declines it. A transaction has at most one request waiting: a new one is taken only once the
-- last was decided, and replaces it. When the store has a notification URL, the request of a
-- consumable or an auto-renewable subscription notifies CONSUMPTION_REQUEST, and a decline
-- REFUND_DECLINED, in the commit of the change.
CREATE TABLE refund_requests (
    transaction_id INTEGER PRIMARY KEY NOT NULL REFERENCES transactions(id),
    -- The customer's reason: Apple's consumptionRequestReason values.
    reason         TEXT NOT NULL CHECK (reason IN ('UNINTENDED_PURCHASE', 'FULFILLMENT_ISSUE',
                       'UNSATISFIED_WITH_PURCHASE', 'LEGAL', 'OTHER')),
    -- The store's time of the request and of its decision, in milliseconds.
    requested_at   INTEGER NOT NULL,
    outcome        TEXT NOT NULL DEFAULT 'pending' CHECK (outcome IN ('pending', 'granted', 'declined')),
    decided_at     INTEGER,
    CHECK ((outcome = 'pending') = (decided_at IS NULL)),
    CHECK (decided_at IS NULL OR decided_at >= requested_at)
);
