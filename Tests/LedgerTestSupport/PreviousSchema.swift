/// What the previous release's ledger looked like: the SQL that takes a ledger of this build
/// back to the schema before the last migration, so that the upgrade tests (Swift and CLI) meet
/// what a user of the previous release has. Update it with every new migration.
public enum PreviousSchema {
    /// The previous schema, as `"N (identifier)"`.
    public static let name = "27 (0027_bounded_store_work)"
    /// This build's schema, as `"N (identifier)"`.
    public static let current = "28 (0028_empty_application_username)"
    /// The last migration's identifier.
    public static let lastMigration = "0028_empty_application_username"

    /// Undoes migration 28: an empty `applicationUsername` refused again, by the CHECK put back
    /// in the table's definition as the migration took it out (SQLite's procedure; whoever runs
    /// this closes the connection after it, so that the next one reads the definition again);
    /// the migration's record removed.
    public static let undoLastMigration = """
        PRAGMA writable_schema = ON;
        UPDATE sqlite_schema
           SET sql = replace(
               sql, 'CHECK (length(CAST(application_username',
               'CHECK (application_username <> '''' AND length(CAST(application_username')
         WHERE type = 'table' AND name = 'transactions';
        PRAGMA writable_schema = RESET;
        DELETE FROM grdb_migrations WHERE identifier = '0028_empty_application_username';
        """

    /// Undoes migration 27 (after `undoLastMigration`): no index of what the store's clock has
    /// for each subscription, mass extensions done at once (none running); the migration's
    /// record removed.
    public static let undoMigration27 = """
        DROP INDEX mass_renewal_extensions_running;
        ALTER TABLE mass_renewal_extensions DROP COLUMN through_customer;
        ALTER TABLE mass_renewal_extensions DROP COLUMN completed_at;
        DROP TRIGGER subscription_periods_are_due_at_their_end;
        DROP TRIGGER changed_subscription_periods_are_due_at_their_end;
        DROP INDEX subscription_renewal_by_due;
        ALTER TABLE subscription_renewal DROP COLUMN due_from;
        DELETE FROM grdb_migrations WHERE identifier = '0027_bounded_store_work';
        """

    /// Undoes migration 26 (after `undoMigration27`): no apps nor devices; the first app's
    /// rows kept, without the column, its settings back among the store's, its mass extensions
    /// keyed by request alone; the migration's record removed.
    public static let undoMigration26 = """
        DROP TABLE devices;
        CREATE TABLE mass_renewal_extensions_25 (
            request_identifier TEXT PRIMARY KEY CHECK (length(request_identifier) BETWEEN 1 AND 128),
            product_id         TEXT NOT NULL,
            days               INTEGER NOT NULL CHECK (days BETWEEN 1 AND 90),
            reason             INTEGER NOT NULL CHECK (reason BETWEEN 0 AND 3),
            storefronts        TEXT,
            at                 INTEGER NOT NULL,
            succeeded          INTEGER NOT NULL CHECK (succeeded >= 0),
            failed             INTEGER NOT NULL CHECK (failed >= 0)
        ) WITHOUT ROWID;
        INSERT INTO mass_renewal_extensions_25
        SELECT request_identifier, product_id, days, reason, storefronts, at, succeeded, failed
        FROM mass_renewal_extensions WHERE app_id = 1;
        DROP TABLE mass_renewal_extensions;
        ALTER TABLE mass_renewal_extensions_25 RENAME TO mass_renewal_extensions;
        DROP TRIGGER apps_keep_their_id;
        DROP TRIGGER apps_keep_their_transactions;
        DROP TRIGGER products_have_an_app;
        DROP TRIGGER products_keep_their_app;
        DROP INDEX products_by_app;
        DROP TRIGGER subscription_groups_keep_their_app;
        ALTER TABLE subscription_groups DROP COLUMN app_id;
        DROP TRIGGER transactions_have_an_app;
        DROP TRIGGER transactions_keep_their_app;
        DROP TRIGGER notifications_keep_their_app;
        DROP INDEX notifications_by_app;
        INSERT OR REPLACE INTO store_settings (key, value) SELECT key, value FROM app_settings WHERE app_id = 1;
        INSERT OR REPLACE INTO store_settings (key, value) SELECT 'bundleID', bundle_id FROM apps WHERE id = 1;
        ALTER TABLE transactions DROP COLUMN app_id;
        ALTER TABLE products DROP COLUMN app_id;
        ALTER TABLE notifications DROP COLUMN app_id;
        DROP TABLE app_settings;
        DROP TABLE apps;
        DELETE FROM grdb_migrations WHERE identifier = '0026_apps';
        """

    /// Undoes migration 25 (after `undoMigration26`): no customers; the first customer's rows kept, without the column,
    /// with the indexes and keys of before; the migration's record removed. (A price increase's
    /// MAC stays the one that covers its customer: the ledgers these tests take back have none.)
    public static let undoMigration25 = """
        DROP TRIGGER transactions_have_a_customer;
        DROP TRIGGER transactions_keep_their_customer;
        DROP TRIGGER customers_keep_their_name;
        DROP TRIGGER customers_keep_their_transactions;
        DROP INDEX transactions_by_group;
        CREATE INDEX transactions_by_group ON transactions (subscription_group_id, purchase_date, id)
            WHERE subscription_group_id IS NOT NULL;
        DROP INDEX transactions_by_product;
        CREATE INDEX transactions_by_product ON transactions (product_id, id);
        DROP INDEX transactions_by_state;
        CREATE INDEX transactions_by_state ON transactions (state, id);
        DROP INDEX transactions_restorable;
        CREATE INDEX transactions_restorable ON transactions (product_type, id)
            WHERE state = 'purchased' AND revocation_date IS NULL;
        DROP INDEX transactions_unfinished;
        CREATE INDEX transactions_unfinished ON transactions (id) WHERE is_finished = 0;
        ALTER TABLE transactions DROP COLUMN customer_id;
        CREATE TABLE subscription_renewal_24 (
            group_id            TEXT NOT NULL,
            shared_original_id  INTEGER NOT NULL DEFAULT 0 CHECK (shared_original_id >= 0),
            auto_renew          INTEGER NOT NULL DEFAULT 1 CHECK (auto_renew IN (0, 1)),
            resumed_at          INTEGER NOT NULL DEFAULT 0,
            next_product_id     TEXT REFERENCES products(id),
            period_anchor       INTEGER,
            billing_issue_since INTEGER,
            grace_until         INTEGER CHECK (grace_until >= billing_issue_since),
            retry_until         INTEGER CHECK (retry_until >= billing_issue_since),
            pending_offer_id    TEXT,
            pending_offer_type  TEXT CHECK (pending_offer_type = 'promotional' OR pending_offer_type = 'code'),
            PRIMARY KEY (group_id, shared_original_id)
        ) WITHOUT ROWID;
        INSERT INTO subscription_renewal_24
        SELECT group_id, shared_original_id, auto_renew, resumed_at, next_product_id, period_anchor,
               billing_issue_since, grace_until, retry_until, pending_offer_id, pending_offer_type
        FROM subscription_renewal WHERE customer_id = 1;
        DROP TABLE subscription_renewal;
        ALTER TABLE subscription_renewal_24 RENAME TO subscription_renewal;
        CREATE TABLE price_increases_24 (
            group_id         TEXT PRIMARY KEY NOT NULL REFERENCES subscription_groups(id),
            product_id       TEXT NOT NULL,
            price            TEXT NOT NULL,
            needs_consent    INTEGER NOT NULL CHECK (needs_consent IN (0, 1)),
            status           TEXT NOT NULL CHECK (status IN ('pending', 'agreed', 'declined')),
            requested_at     INTEGER NOT NULL,
            answered_at      INTEGER, mac BLOB CHECK (mac IS NULL OR length(mac) = 32),
            CHECK ((status = 'pending') = (answered_at IS NULL)),
            CHECK (needs_consent = 1 OR status = 'agreed'),
            CHECK (answered_at IS NULL OR answered_at >= requested_at)
        ) WITHOUT ROWID;
        INSERT INTO price_increases_24
        SELECT group_id, product_id, price, needs_consent, status, requested_at, answered_at, mac
        FROM price_increases WHERE customer_id = 1;
        DROP TABLE price_increases;
        ALTER TABLE price_increases_24 RENAME TO price_increases;
        DROP TABLE family_share_sources;
        DROP TABLE customers;
        DELETE FROM grdb_migrations WHERE identifier = '0025_customers';
        """

    /// Undoes migration 24 (after `undoMigration25`): no `renewal_changes` nor its seal (a
    /// ledger of that release made its downgrades as charged, zero-length purchases).
    public static let undoMigration24 = """
        DROP TABLE renewal_changes;
        DELETE FROM record_seals WHERE table_name = 'renewal_changes';
        DELETE FROM grdb_migrations WHERE identifier = '0024_renewal_changes';
        """
}
