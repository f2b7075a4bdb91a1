-- StoreLedger schema, version 27: the store's work over all its customers in bounded steps. The
-- subscriptions the store's clock has something for are found through an index instead of a
-- walk over every subscription of the store; a mass renewal extension goes over the customers in
-- batches, one commit each.
-- Shipped migrations are never edited: a change to the schema is a new file.
--
-- `due_from` is a store time (milliseconds) no later than the next moment passing time does
-- something to the holding: its period ends (it renews, or expires), its grace period or its
-- billing retry ends. NULL: nothing happens to it until something changes it. The store's look
-- at its clock (`ledger serve` every second, a running app's renewal task, a clock move) reads
-- only the holdings with `due_from` at or before now, and after handling them sets each one's
-- next moment. A change that can bring a moment nearer lowers `due_from` in the same statement,
-- by the triggers below, so the value is never later than the truth; a new holding starts at 0
-- (looked at by the next look). Every moment is a period's end or the end of a billing issue's
-- grace period or retry; a billing issue begins only when a period ends (at a look, which sets
-- the holding's next moment, or by a renewal forced now, which ends the period now): so a
-- change of a period is the only change that can bring a moment nearer.
ALTER TABLE subscription_renewal ADD COLUMN due_from INTEGER DEFAULT 0;
-- Every holding there is (0) is looked at once, by the first look after the upgrade.
CREATE INDEX subscription_renewal_by_due ON subscription_renewal (due_from) WHERE due_from IS NOT NULL;

-- A period added (a purchase, a renewal, an upgrade, a family member's share) or one whose end,
-- state or refund changed: its end is a moment of the customer's holdings of its group.
CREATE TRIGGER subscription_periods_are_due_at_their_end AFTER INSERT ON transactions
WHEN NEW.subscription_group_id IS NOT NULL AND NEW.expiration_date IS NOT NULL
BEGIN
    UPDATE subscription_renewal SET due_from = MIN(COALESCE(due_from, NEW.expiration_date), NEW.expiration_date)
    WHERE customer_id = NEW.customer_id AND group_id = NEW.subscription_group_id;
END;

CREATE TRIGGER changed_subscription_periods_are_due_at_their_end
AFTER UPDATE OF expiration_date, state, revocation_date, is_upgraded, purchase_date ON transactions
WHEN NEW.subscription_group_id IS NOT NULL AND NEW.expiration_date IS NOT NULL
BEGIN
    UPDATE subscription_renewal SET due_from = MIN(COALESCE(due_from, NEW.expiration_date), NEW.expiration_date)
    WHERE customer_id = NEW.customer_id AND group_id = NEW.subscription_group_id;
END;

-- A mass extension (Extend Subscription Renewal Dates for All Active Subscribers) runs in
-- batches of customers, each its own commit, as the App Store's runs asynchronously ("the request
-- may take multiple hours or days"): `through_customer` is the last customer it went over,
-- `completed_at` the store time it ended (NULL while it runs). Those made before ended at once.
ALTER TABLE mass_renewal_extensions ADD COLUMN through_customer INTEGER NOT NULL DEFAULT 0;
ALTER TABLE mass_renewal_extensions ADD COLUMN completed_at INTEGER;
UPDATE mass_renewal_extensions SET completed_at = at, through_customer = (SELECT COALESCE(MAX(id), 0) FROM customers);
CREATE INDEX mass_renewal_extensions_running ON mass_renewal_extensions (at) WHERE completed_at IS NULL;
