-- StoreLedger schema, version 23: a family-shared subscription renews on its own.
-- Shipped migrations are never edited: a change to the schema is a new file.
--
-- A customer may hold a subscription group twice: their own subscription, and one a family
-- member shares (docs/STORE.md, "Family Sharing"). Each renews on its own, so the renewal state
-- is kept per group and per holding: `shared_original_id` is 0 for the customer's own
-- subscription, else the original transaction id of the family member's purchase shared with
-- the customer (family_shares). The table is rebuilt with the new key; a group whose latest
-- period is a shared one moves to that share's row (before, the group had one state, and it
-- was the shared subscription's).
CREATE TABLE subscription_renewal_by_holder (
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
    PRIMARY KEY (group_id, shared_original_id)
) WITHOUT ROWID;

INSERT INTO subscription_renewal_by_holder (
    group_id, shared_original_id, auto_renew, resumed_at, next_product_id, period_anchor, billing_issue_since,
    grace_until, retry_until, pending_offer_id, pending_offer_type)
SELECT r.group_id,
       COALESCE((SELECT f.original_transaction_id FROM family_shares f
                 WHERE f.original_transaction_id = (
                     SELECT t.original_id FROM transactions t
                     WHERE t.subscription_group_id = r.group_id AND t.state = 'purchased' AND t.is_upgraded = 0
                       AND t.expiration_date > t.purchase_date
                     ORDER BY t.expiration_date DESC, t.id DESC LIMIT 1)), 0),
       r.auto_renew, r.resumed_at, r.next_product_id, r.period_anchor, r.billing_issue_since, r.grace_until,
       r.retry_until, r.pending_offer_id, r.pending_offer_type
FROM subscription_renewal r;

DROP TABLE subscription_renewal;
ALTER TABLE subscription_renewal_by_holder RENAME TO subscription_renewal;

-- Before, a share of a group the customer subscribed to could be taken as the customer's own
-- change of product at the next renewal: the shared payment got no period of its own, and the
-- customer's subscription waited to renew into the family's product (and charge the customer
-- for it). That change is dropped, since the customer never chose it. The shared payment keeps
-- its history as it was, without a period: the family member shares it again to give it one.
UPDATE subscription_renewal SET next_product_id = NULL
WHERE shared_original_id = 0 AND next_product_id IS NOT NULL
  AND (SELECT f.original_transaction_id FROM transactions t
       LEFT JOIN family_shares f ON f.original_transaction_id = t.original_id
       WHERE t.subscription_group_id = subscription_renewal.group_id AND t.state = 'purchased'
         AND t.expiration_date = t.purchase_date AND t.product_id = subscription_renewal.next_product_id
       ORDER BY t.id DESC LIMIT 1) IS NOT NULL;
