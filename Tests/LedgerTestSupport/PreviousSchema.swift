/// What the previous release's ledger looked like: the SQL that takes a ledger of this build
/// back to the schema before the last migration, so that the upgrade tests (Swift and CLI) meet
/// what a user of the previous release has. Update it with every new migration.
public enum PreviousSchema {
    /// The previous schema, as `"N (identifier)"`.
    public static let name = "23 (0023_family_shared_renewals)"
    /// This build's schema, as `"N (identifier)"`.
    public static let current = "24 (0024_renewal_changes)"
    /// The last migration's identifier.
    public static let lastMigration = "0024_renewal_changes"

    /// Undoes migration 24: no `renewal_changes` nor its seal (a ledger of the previous release
    /// made its downgrades as charged, zero-length purchases), and the migration's record removed.
    public static let undoLastMigration = """
        DROP TABLE renewal_changes;
        DELETE FROM record_seals WHERE table_name = 'renewal_changes';
        DELETE FROM grdb_migrations WHERE identifier = '0024_renewal_changes';
        """
}
