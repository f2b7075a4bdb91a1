import Crypto
import Foundation
import GRDB
import LedgerTestSupport
import LedgerTesting
import Testing

@testable import LedgerEngine
@testable import SimulatedStore

/// The schema can be read without replaying the migrations (docs/schema.sql, what they make),
/// and the shipped migrations never change (migrations/SHA256SUMS).
@Suite struct SchemaFileTests {
    static let schemaFile = Repository.root + "/docs/schema.sql"
    static let sums = Repository.root + "/migrations/SHA256SUMS"

    /// Every table, index, trigger and view of a new ledger, as SQLite keeps their text, table
    /// by table.
    static func schemaOfANewLedger() async throws -> String {
        try await withTemporaryDirectory { directory in
            let ledger = try Ledger.open(at: directory + "/schema.sqlite", mode: .createIfMissing)
            defer { try? ledger.close() }
            let rows = try ledger.read { db in
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT type, name, tbl_name, sql FROM sqlite_master
                        WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'
                        ORDER BY tbl_name, CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 WHEN 'trigger' THEN 2 ELSE 3 END, name
                        """)
            }
            let statements = rows.map { row -> String in
                let sql: String = row["sql"]
                return sql + ";"
            }
            return """
                -- The schema of a new ledger: what migrations/*.sql make, in order, read back from SQLite.
                -- Generated: UPDATE_SCHEMA=1 swift test --filter SchemaFileTests (a test compares it).
                -- Schema version \(Ledger.knownMigrations.count) (\(Ledger.knownMigrations.last ?? "")).


                """ + statements.joined(separator: "\n\n") + "\n"
        }
    }

    @Test func theSchemaFileIsWhatTheMigrationsMake() async throws {
        let schema = try await Self.schemaOfANewLedger()
        if ProcessInfo.processInfo.environment["UPDATE_SCHEMA"] == "1" {
            try schema.write(toFile: Self.schemaFile, atomically: true, encoding: .utf8)
        }
        let stored = try? String(contentsOfFile: Self.schemaFile, encoding: .utf8)
        #expect(stored == schema, "docs/schema.sql is stale: run UPDATE_SCHEMA=1 swift test --filter SchemaFileTests")
    }

    /// A shipped migration is history: ledgers in the field ran its text. A new migration adds
    /// its line to migrations/SHA256SUMS (`sha256sum 00NN_name.sql >> SHA256SUMS`); an edited
    /// one fails here.
    @Test func theShippedMigrationsAreFrozen() throws {
        let folder = Repository.root + "/migrations"
        let lines = try String(contentsOfFile: Self.sums, encoding: .utf8).split(separator: "\n")
        var frozen: [String: String] = [:]
        for line in lines {
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            #expect(parts.count == 2, "\(line)")
            if parts.count == 2 { frozen[String(parts[1])] = String(parts[0]) }
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".sql") }.sorted()
        #expect(
            Set(files) == Set(frozen.keys), "every migration, and only they, have their sum in migrations/SHA256SUMS")
        for file in files {
            let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + file))
            let sum = SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
            #expect(frozen[file] == sum, "\(file) changed after it shipped: add a new migration instead")
        }
    }
}
