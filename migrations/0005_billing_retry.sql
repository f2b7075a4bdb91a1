-- StoreLedger schema, version 5: billing retry and grace period (Xcode's
-- shouldEnterBillingRetryOnRenewal and billingGracePeriodIsEnabled). When a renewal fails on a
-- billing issue, the group records when (the period's end), until when it keeps its
-- entitlement (grace period; NULL without one) and until when the store retries.
ALTER TABLE subscription_renewal ADD COLUMN billing_issue_since INTEGER;
ALTER TABLE subscription_renewal ADD COLUMN grace_until INTEGER CHECK (grace_until >= billing_issue_since);
ALTER TABLE subscription_renewal ADD COLUMN retry_until INTEGER CHECK (retry_until >= billing_issue_since);
