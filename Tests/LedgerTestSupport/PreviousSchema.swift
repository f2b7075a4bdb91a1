/// What the previous release's ledger looked like: the SQL that takes a ledger of this build
/// back to the schema before the last migration, so that the upgrade tests (Swift and CLI) meet
/// what a user of the previous release has. Update it with every new migration.
public enum PreviousSchema {
    /// The previous schema, as `"N (identifier)"`.
    public static let name = "22 (0022_authenticated_records)"
    /// This build's schema, as `"N (identifier)"`.
    public static let current = "23 (0023_family_shared_renewals)"
    /// The last migration's identifier.
    public static let lastMigration = "0023_family_shared_renewals"

    /// Undoes migration 23: `subscription_renewal` back to one row per group (the newest
    /// holding's when a group has several, as the previous release kept one state per group),
    /// without `shared_original_id`, and the migration's record removed.
    public static let undoLastMigration = """
        CREATE TABLE subscription_renewal_22 (
            group_id        TEXT PRIMARY KEY NOT NULL,
            auto_renew      INTEGER NOT NULL DEFAULT 1 CHECK (auto_renew IN (0, 1)),
            resumed_at      INTEGER NOT NULL DEFAULT 0,
            next_product_id TEXT REFERENCES products(id),
            period_anchor   INTEGER,
            billing_issue_since INTEGER, grace_until INTEGER CHECK (grace_until >= billing_issue_since),
            retry_until INTEGER CHECK (retry_until >= billing_issue_since), pending_offer_id TEXT,
            pending_offer_type TEXT CHECK (pending_offer_type = 'promotional' OR pending_offer_type = 'code')
        ) WITHOUT ROWID;
        INSERT OR IGNORE INTO subscription_renewal_22
        SELECT group_id, auto_renew, resumed_at, next_product_id, period_anchor, billing_issue_since, grace_until,
               retry_until, pending_offer_id, pending_offer_type
        FROM subscription_renewal ORDER BY shared_original_id DESC;
        DROP TABLE subscription_renewal;
        ALTER TABLE subscription_renewal_22 RENAME TO subscription_renewal;
        DELETE FROM grdb_migrations WHERE identifier = '0023_family_shared_renewals';
        """
}
