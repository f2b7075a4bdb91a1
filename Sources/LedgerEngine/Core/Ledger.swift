import CLedgerSQLite
import Foundation
package import GRDB
import GRDBSQLite
import LedgerModel
import LedgerSigning
package import Synchronization

/// A ledger file: the durable record of products, transactions and the store's settings.
///
/// Every method that changes something is one SQLite write transaction (`BEGIN IMMEDIATE`);
/// it returns only after the commit. A change to a transaction (created, a new state, finished,
/// delivered, refunded, expired, upgraded, deleted) also appends to its history, the hash-chained
/// event log; changes to the catalog, the store's settings and its clock are not events. Reads see
/// committed data only. Several processes may open the same file at once (WAL, busy timeout).
public final class Ledger: Sendable {
    /// Whether opening may create the file.
    public enum OpenMode: Sendable {
        /// The ledger must exist: a missing file is `LedgerError.missingLedger`.
        case existing
        /// Create a new, empty ledger when nothing is at the path.
        case createIfMissing
    }

    /// Whether the ledger may be changed through this value.
    public enum Access: Sendable {
        /// The default: the ledger may be read and changed.
        case readWrite
        /// For inspection: nothing is written, not even SQLite's own WAL setup. (A ledger
        /// whose schema is older than this build is still migrated first.)
        case readOnly
    }

    /// The ledger file's path, as given to `open(at:mode:access:configuration:)`.
    public let path: String
    /// The configuration the ledger was opened with.
    public let configuration: LedgerConfiguration
    /// The ledger's one connection: it writes too, unless the ledger was opened read-only.
    package let reader: DatabaseQueue
    /// The connection that writes; `nil` when opened read-only. One connection, with no journal
    /// set-up of GRDB's (the file is in WAL mode from its creation): GRDB's `DatabasePool`
    /// commits a throw-away table at every open, which rewrote the file's header even for a
    /// command that was then refused.
    package let writer: DatabaseQueue?
    /// Batches the writes of concurrent callers into shared commits (`grouped`).
    let commitGroup: CommitGroup?
    /// What the ledger values of one file (the one `open` returns and the customers' views of
    /// it, `forCustomer(_:)`) share: the writing connection's numbered statements and whether it
    /// was closed.
    package let shared: SharedConnection
    private var statements: PreparedStatements { shared.statements }
    /// Signs the hash chain's head in this ledger's commits; `nil` when it cannot write (or
    /// does not chain, for `ledger-lab bench`).
    package let headSigner: HeadSigner?
    /// The signing identity, read once.
    package let identities: IdentityCache
    /// The changes of transaction rows its writers made (`TransactionWriter`'s row images).
    package let rowChanges: RowChanges
    /// The customer whose purchases this value reads and makes, and the app it makes them in
    /// (`LedgerScope`).
    package let scope: LedgerScope
    /// The customer this value acts for (`scope.customer`).
    package var customerScope: ScopeChoice { scope.customer }
    /// The app this value acts in (`scope.app`).
    package var appScope: ScopeChoice { scope.app }
    /// The device this value runs on (`scope.device`).
    package var deviceScope: ScopeChoice? { scope.device }

    private init(path: String, configuration: LedgerConfiguration, reader: DatabaseQueue, writer: DatabaseQueue?) {
        self.path = path
        self.configuration = configuration
        self.reader = reader
        self.writer = writer
        self.shared = SharedConnection()
        self.scope = LedgerScope(customer: .notChosen(choices: [], count: 0), app: .notChosen(choices: [], count: 0))
        let identities = IdentityCache()
        self.identities = identities
        self.rowChanges = RowChanges()
        let headSigner =
            writer != nil && configuration.keepsHashChain
            ? HeadSigner(
                interval: configuration.headSigningInterval, clock: configuration.clock, identities: identities) : nil
        self.headSigner = headSigner
        self.commitGroup = writer.map {
            CommitGroup(writer: $0, headSigner: headSigner, mapError: { Ledger.mapError($0, path: path) })
        }
    }

    /// A view of `ledger`'s file, on its connections, that acts in `scope`.
    private init(sharing ledger: Ledger, scope: LedgerScope) {
        path = ledger.path
        configuration = ledger.configuration
        reader = ledger.reader
        writer = ledger.writer
        commitGroup = ledger.commitGroup
        shared = ledger.shared
        headSigner = ledger.headSigner
        identities = ledger.identities
        rowChanges = ledger.rowChanges
        self.scope = scope
    }

    /// This ledger's file, acting in `scope`.
    package func withScope(_ scope: LedgerScope) -> Ledger {
        Ledger(sharing: self, scope: scope)
    }

    /// This ledger's file, acting for `customer` in this value's app.
    package func withCustomerScope(_ customer: ScopeChoice) -> Ledger {
        withScope(LedgerScope(customer: customer, app: scope.app))
    }

    /// Opens the ledger at `path`, applying the migrations it lacks.
    ///
    /// - Throws: `LedgerError` when the file is missing (with `.existing`), empty, not a SQLite
    ///   database, damaged, another application's database, or written by a newer version.
    ///   A refused file is never written to.
    public static func open(
        at path: String, mode: OpenMode = .existing, access: Access = .readWrite,
        configuration: LedgerConfiguration = .init()
    ) throws -> Ledger {
        if try !LedgerFile.exists(at: path) {
            guard mode == .createIfMissing else { throw LedgerError.missingLedger(path: path) }
            try create(at: path, configuration: configuration)
        }
        if access == .readOnly {
            // A read never writes: an older ledger is refused, not upgraded.
            let inspector = try readOnlyQueue(path: path, configuration: configuration)
            do {
                if try checkMigrations(inspector, path: path) {
                    let applied = try inspector.read { db in try SchemaUpgrade.appliedIdentifiers(db) }
                    throw LedgerError.olderSchema(path: path, applied: knownMigrations.filter(applied.contains))
                }
                let scope = try inspector.read { db in try LedgerScope(db, configuration) }
                return Ledger(path: path, configuration: configuration, reader: inspector, writer: nil)
                    .withScope(scope)
            } catch {
                try? inspector.close()
                throw mapError(error, path: path)
            }
        }
        // The file's header says it is a ledger (`LedgerFile`). Opening a connection writes
        // nothing (no journal set-up of GRDB's: see `writer`), so the schema is read through the
        // connection that will write. Until it is accepted, closing that connection may not
        // checkpoint the WAL into the file: a ledger from a newer version is left untouched.
        let queue = try writerQueue(path: path, configuration: configuration)
        let ledger = Ledger(path: path, configuration: configuration, reader: queue, writer: queue)
        do {
            try checkpointOnClose(queue, false)
            if try checkMigrations(queue, path: path) {
                // An existing ledger: upgraded in one transaction, its invariants checked first.
                _ = try queue.writeWithoutTransaction { db in
                    try SchemaUpgrade.apply(db, path: path, checkingInvariants: true)
                }
            }
            try checkpointOnClose(queue, true)
            queue.writeWithoutTransaction { db in ledger.statements.attach(to: db) }
            return ledger.withScope(try queue.read { db in try LedgerScope(db, configuration) })
        } catch {
            try? queue.close()
            throw mapError(error, path: path)
        }
    }

    /// Upgrades the ledger at `path` to this build's schema, as opening it for writing does, and
    /// says so: the migrations it lacks, applied in one transaction whose result must hold every
    /// invariant `verify()` checks before it commits. `vouchingForEvents`: the events after the
    /// last signed head of a ledger older than schema 11 (which carried no MACs), when the
    /// caller knows they are the ledger's own; the upgrade signs over exactly those, and refuses
    /// otherwise (`LedgerError.unvouchedEvents` names them). Returns the migrations applied
    /// (none when the ledger is current).
    /// - Throws: `LedgerError` (`.upgradeFailed`: nothing was changed; `.newerSchema`; the
    ///   errors of `open`).
    public static func upgrade(
        at path: String, vouchingForEvents events: ClosedRange<Int64>? = nil,
        configuration: LedgerConfiguration = .init()
    ) throws -> [String] {
        guard try LedgerFile.exists(at: path) else { throw LedgerError.missingLedger(path: path) }
        let queue = try writerQueue(path: path, configuration: configuration)
        defer { try? queue.close() }
        do {
            try checkpointOnClose(queue, false)
            guard try checkMigrations(queue, path: path) else { return [] }
            let before = try queue.read { db in try SchemaUpgrade.appliedIdentifiers(db) }
            _ = try queue.writeWithoutTransaction { db in
                try SchemaUpgrade.apply(db, path: path, checkingInvariants: true, vouching: events)
            }
            try checkpointOnClose(queue, true)
            return knownMigrations.filter { !before.contains($0) }
        } catch {
            throw mapError(error, path: path)
        }
    }

    /// A connection that may write `path`'s ledger (it writes nothing by opening).
    private static func writerQueue(path: String, configuration: LedgerConfiguration) throws -> DatabaseQueue {
        do {
            return try DatabaseQueue(
                path: configuration.sqlitePath(path), configuration: grdbConfiguration(configuration))
        } catch {
            throw mapError(error, path: path)
        }
    }

    /// Whether closing `queue`'s connection, the last one to the file, may checkpoint its WAL.
    private static func checkpointOnClose(_ queue: DatabaseQueue, _ allowed: Bool) throws {
        try queue.writeWithoutTransaction { db in
            let code = ledger_sqlite_no_checkpoint_on_close(db.sqliteConnection, allowed ? 0 : 1)
            guard code == SQLITE_OK else { throw DatabaseError(resultCode: ResultCode(rawValue: code)) }
        }
    }

    /// Whether migrations are pending; refuses a ledger with migrations this build does not know.
    private static func checkMigrations(_ queue: DatabaseQueue, path: String) throws -> Bool {
        let applied = try queue.read { db in try SchemaUpgrade.appliedIdentifiers(db) }
        let unknown = applied.subtracting(knownMigrations).sorted()
        guard unknown.isEmpty else { throw LedgerError.newerSchema(path: path, unknownMigrations: unknown) }
        return applied.count < knownMigrations.count
    }

    private static func readOnlyQueue(path: String, configuration: LedgerConfiguration) throws -> DatabaseQueue {
        var grdb = Configuration()
        grdb.readonly = true
        grdb.busyMode = LockWait.busyMode(configuration)
        grdb.label = "StoreLedger (read-only)"
        // SQLite reads a WAL database through `-shm`, which it creates beside the file. In a
        // directory nobody can write, no writer can exist either (it would need to create
        // `-wal`): a checkpointed ledger (no `-wal`) is then read as an immutable file.
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let walPresent = FileManager.default.fileExists(atPath: path + "-wal")
        let immutable = !walPresent && access(directory, W_OK) != 0
        do {
            return try DatabaseQueue(path: configuration.sqlitePath(path, immutable: immutable), configuration: grdb)
        } catch {
            if walPresent, access(directory, W_OK) != 0, !FileManager.default.fileExists(atPath: path + "-shm") {
                throw LedgerError.unusable(
                    path: path,
                    reason: """
                        its directory is read-only and it has commits in \(path)-wal, which SQLite reads only through \
                        a \(path)-shm it cannot create there; open it once where its directory is writable \
                        (any command checkpoints it on exit), or copy the file with its -wal to such a directory
                        """)
            }
            throw mapError(error, path: path)
        }
    }

    /// Whether a ledger file is at `path`.
    /// - Throws: `LedgerError` when something is there that is not a usable ledger.
    public static func exists(at path: String) throws -> Bool {
        try LedgerFile.exists(at: path)
    }

    /// Signs the hash chain's head if commits went unsigned since it was last signed (see
    /// `LedgerConfiguration.headSigningInterval`; a write, which waits for another process's
    /// lock as any write does), then closes the ledger's connections. Any use after it throws
    /// `LedgerError` `.unusable` ("it was closed"), a call still running on another task
    /// included; closing again only retries closing the connections, when they did not close.
    /// - Throws: `LedgerError` when the head could not be signed; the connections are closed all the same.
    public func close() throws {
        let wasClosed = shared.isClosed.exchange(true, ordering: .acquiringAndReleasing)
        var signing: (any Error)?
        if !wasClosed, let headSigner, headSigner.mayHaveUnsignedEvents, let writer {
            do {
                try writer.writeWithoutTransaction { db in try db.immediateTransaction { try headSigner.sign(db) } }
            } catch {
                signing = Self.mapError(error, path: path)
            }
        }
        do {
            try closeConnection()
        } catch {
            throw Self.mapError(error, path: path)
        }
        if let signing { throw signing }
    }

    /// Finalizes the numbered statements, then closes the connection (SQLite refuses to close
    /// one with statements left). Again after it, nothing happens.
    package func closeConnection() throws {
        writer?.writeWithoutTransaction { _ in statements.detach() }
        try reader.close()
    }

    /// The identifiers of the migrations applied to this ledger, in order.
    package func appliedMigrations() throws -> [String] {
        try read { db in
            let applied = try SchemaUpgrade.appliedIdentifiers(db)
            return Self.knownMigrations.filter(applied.contains)
        }
    }

    /// The identifiers of every migration this build knows.
    package static var knownMigrations: [String] { Migration.embedded.map(\.identifier) }

    // MARK: - Creation

    /// Builds the new ledger under a temporary name and links it into place, so that the path
    /// holds either nothing or a complete ledger, never a half-made one.
    private static func create(at path: String, configuration: LedgerConfiguration) throws {
        let (temporary, directory) = try makeTemporaryFile(beside: path, purpose: .creating)
        defer { removeDatabaseFiles(temporary) }
        do {
            var grdb = Configuration()
            grdb.busyMode = LockWait.busyMode(configuration)
            let queue = try DatabaseQueue(path: configuration.sqlitePath(temporary), configuration: grdb)
            try queue.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA journal_mode = WAL")
                try db.execute(sql: "PRAGMA application_id = \(LedgerFile.applicationID)")
            }
            _ = try queue.writeWithoutTransaction { db in
                try SchemaUpgrade.apply(db, path: path, checkingInvariants: false)
            }
            try queue.close()
        } catch {
            throw mapError(error, path: path)
        }
        guard link(temporary, path) == 0 else {
            let failure = errno
            // Another process may have created the ledger first: use theirs, if it is one. (A
            // dangling symbolic link is in the way too, and is not.)
            if errno == EEXIST, try LedgerFile.exists(at: path) { return }
            if failure == EEXIST {
                throw LedgerError.unusable(
                    path: path, reason: "cannot create it: something that is not a file is in the way")
            }
            throw LedgerError.system(failure, path: path, doing: "cannot create it")
        }
        syncDirectory(directory)
    }

    /// An empty, owner-only file beside `path` (SQLite gives its -wal and -shm files the same
    /// mode), for a ledger built there and then linked into place. Returns it and its directory.
    static func makeTemporaryFile(
        beside path: String, purpose: TemporaryFiles.Purpose
    ) throws -> (path: String, directory: String) {
        let (temporary, directory) = TemporaryFiles.name(beside: path, for: purpose)
        let fd = Foundation.open(temporary, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            // A new ledger is the ledger; a backup is a file written elsewhere.
            throw purpose == .creating
                ? LedgerError.system(errno, path: path, doing: "cannot create it")
                : LedgerError.cannotWrite(errno, destination: path)
        }
        Foundation.close(fd)
        return (temporary, directory)
    }

    package static func removeDatabaseFiles(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
    }

    /// Makes the new directory entry durable (a power loss would otherwise forget the file).
    package static func syncDirectory(_ directory: String) {
        let fd = Foundation.open(directory, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        Foundation.close(fd)
    }

    // MARK: - Connections and migrations

    private static func grdbConfiguration(_ configuration: LedgerConfiguration) -> Configuration {
        var grdb = Configuration()
        grdb.busyMode = LockWait.busyMode(configuration)
        grdb.foreignKeysEnabled = true
        grdb.label = "StoreLedger"
        grdb.journalMode = .default  // WAL is the file's own mode; see `writer`
        let durability = configuration.durability
        let trace = configuration.statementTrace
        grdb.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = \(durability.synchronousPragma)")
            try ConnectionSettings.check(db, durability: durability)
            if let trace { db.trace(options: .statement) { trace($0.expandedDescription) } }
        }
        return grdb
    }

    // MARK: - Access

    /// Runs `body` in one IMMEDIATE write transaction; commits when it returns.
    package func write<T>(_ body: (Database) throws -> T) throws -> T {
        guard let writer else { throw LedgerError.unusable(path: path, reason: "it was opened read-only") }
        do {
            return try writer.writeWithoutTransaction { db in
                try db.immediateTransaction(signing: headSigner) { try body(db) }
            }
        } catch {
            throw Self.mapError(error, path: path)
        }
    }

    /// `write(_:)` whose commit does not wait for the disk (`synchronous=NORMAL` for it alone):
    /// for what a power loss may take back at no harm, such as the record of a notification's
    /// attempt (the notification is then sent again, with the same UUID). A killed process
    /// still loses nothing it committed, and the next synced commit syncs this one too.
    package func writeUnsynced<T>(_ body: (Database) throws -> T) throws -> T {
        guard configuration.durability == .full, let writer else { return try write(body) }
        do {
            return try writer.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
                let outcome = Result { try db.immediateTransaction(signing: headSigner) { try body(db) } }
                // Back to the ledger's durability before anything else commits on this connection.
                try db.execute(sql: "PRAGMA synchronous = \(configuration.durability.synchronousPragma)")
                return try outcome.get()
            }
        } catch {
            throw Self.mapError(error, path: path)
        }
    }

    /// Runs `body` in the next group commit (see `CommitGroup`), in its own savepoint.
    package func grouped<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        guard let commitGroup else { throw LedgerError.unusable(path: path, reason: "it was opened read-only") }
        return try await commitGroup.perform(body)
    }

    /// Runs `body` on a consistent snapshot of committed data: a read-only transaction, as
    /// GRDB's `read` makes, which would touch a connection closed by a racing `close()` before
    /// anything could check it.
    package func read<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            return try reader.unsafeRead { db in
                try db.ensureConnected()
                return try db.readOnly {
                    try db.deferredTransaction { try body(db) }
                }
            }
        } catch {
            throw Self.mapError(error, path: path)
        }
    }

    package static func mapError(_ error: any Error, path: String) -> any Error {
        if error is LedgerClosed { return LedgerError.unusable(path: path, reason: "it was closed") }
        if let mismatch = error as? ConnectionSettings.Mismatch {
            return LedgerError.unusable(path: path, reason: mismatch.description)
        }
        if let damaged = error as? DamagedRow {
            return LedgerError.corrupted(path: path, reason: damaged.reason)
        }
        guard let error = error as? DatabaseError else { return error }
        let code: LedgerError.Code =
            switch error.resultCode {
            case .SQLITE_NOTADB: .notADatabase
            case .SQLITE_CORRUPT: .corrupted
            case .SQLITE_BUSY, .SQLITE_LOCKED: .busy
            case .SQLITE_CANTOPEN, .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_AUTH: .unusable
            default: .storage
            }
        return LedgerError(
            code, path: path, reason: error.message ?? "\(error.resultCode)",
            sqliteResultCode: error.extendedResultCode.rawValue, sql: error.sql, underlyingError: error)
    }
}

/// What the values of one ledger file opened once share (`Ledger.withScope(_:)`).
package final class SharedConnection: Sendable {
    /// The writing connection's numbered statements (`LedgerSQL`).
    let statements = PreparedStatements()
    /// Set by `close()`, so that closing again does not sign again. Every use after it is
    /// refused on the connection's own queue (`Database.ensureConnected`), where the connection
    /// closes, so a call racing `close()` is refused too.
    let isClosed = Atomic<Bool>(false)
    /// The `PRAGMA data_version` at which this connection last found the API keys' table whole
    /// (`AuthenticatedRecords.checkWhole`): until another connection commits, it need not look
    /// again (the server asks for every request).
    package let apiKeysCheckedAt = Mutex<Int64?>(nil)

    deinit {
        // Nothing else can use the connection now; its statements must not outlive it.
        statements.detach()
    }
}
