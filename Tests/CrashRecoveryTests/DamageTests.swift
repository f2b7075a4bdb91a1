import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import Testing

/// Ledgers damaged on purpose: `ledger verify` names each problem (exit 2), and a damaged file
/// is refused untouched (exit 74).
@Suite struct DamageTests {
    /// A ledger with a few transactions, changed behind the ledger's back by Python's sqlite3
    /// (with the ledger's own guards, its triggers, dropped first).
    func damaged(_ sql: String, expecting message: String) async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try SampleCatalog.ledger(in: directory)
            for product in [SampleCatalog.consumable, SampleCatalog.nonConsumable] {
                let id = try ledger.addPayment(NewPayment(productID: product, idempotencyKey: "key-\(product)"))
                    .transaction.id
                _ = try ledger.applyPlannedOutcome(of: id)
            }
            try ledger.close()
            let database = directory + "/ledger.sqlite"
            #expect(try LedgerProcess.run(["verify", "--database", database]).status == 0)
            // Parts separated by "-- reconnect" run in fresh connections (schema edits need one).
            #expect(
                try runPython(
                    """
                    import sqlite3
                    for part in '''\(sql)'''.split('-- reconnect'):
                        c = sqlite3.connect('\(database)')
                        for name, in c.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
                            c.execute('DROP TRIGGER ' + name)
                        c.executescript(part)
                        c.commit()
                        c.close()
                    """) == 0)
            let result = try LedgerProcess.run(["verify", "--json", "--database", database])
            #expect(result.status == 2, "\(result.stderr)")
            let problems = try #require(try result.json()["problems"] as? [[String: Any]])
            #expect(problems.contains { ($0["message"] as? String)?.contains(message) == true }, "\(problems)")
            let text = try LedgerProcess.run(["verify", "--database", database])
            #expect(text.status == 2 && text.stdout.contains(message))
        }
    }

    /// The closed ledger `directory`/ledger.sqlite with `count` purchased consumables, and
    /// their ids.
    func purchasedLedger(in directory: String, count: Int) throws -> (database: String, ids: [UInt64]) {
        let ledger = try SampleCatalog.ledger(in: directory)
        let ids = try (0..<count).map { _ in
            try ledger.applyPlannedOutcome(
                of: try ledger.addPayment(NewPayment(productID: SampleCatalog.consumable)).transaction.id
            ).id
        }
        try ledger.close()
        return (directory + "/ledger.sqlite", ids)
    }

    /// A value the ledger never writes, stored behind its back (CHECKs ignored): reading the
    /// transaction is refused with an error that names the ledger file and the value.
    @Test func aTransactionThatCannotBeReadNamesTheLedgerAndTheValue() async throws {
        try await withTemporaryDirectory { directory in
            let (database, ids) = try purchasedLedger(in: directory, count: 1)
            let id = ids[0]
            #expect(
                try runPython(
                    """
                    import sqlite3
                    c = sqlite3.connect('\(database)')
                    c.execute('PRAGMA ignore_check_constraints = ON')
                    c.execute("UPDATE transactions SET reason = 'gift' WHERE id = \(id)")
                    c.commit()
                    """) == 0)
            let result = try LedgerProcess.run(["show", "\(id)", "--database", database])
            #expect(result.status == 74, "\(result.stderr)")
            #expect(
                result.stderr.contains("\(database) is a damaged SQLite database: unexpected value \"gift\""),
                "\(result.stderr)")
        }
    }

    @Test func anIllegalHistoryIsFound() async throws {
        try await damaged(
            """
            INSERT INTO transaction_events (transaction_id, kind, from_state, to_state, at, row_digest, hash)
            VALUES (1, 'stateChanged', 'purchased', 'deferred', 0, zeroblob(32), zeroblob(32))
            """,
            expecting: "illegal change purchased -> deferred")
    }

    /// A reversed refund needs a refund before it; a revocation cleared without one is found.
    @Test func aRefundReversedThatWasNeverMadeIsFound() async throws {
        try await damaged(
            """
            INSERT INTO transaction_events (transaction_id, kind, from_state, to_state, at, row_digest, hash)
            VALUES (2, 'reinstated', 'purchased', 'purchased', 0, zeroblob(32), zeroblob(32))
            """,
            expecting: "refund reversed while not refunded")
    }

    @Test func aRefundClearedWithoutItsReversalIsFound() async throws {
        try await damaged(
            """
            UPDATE transactions SET revocation_date = 5, revocation_reason = 0 WHERE id = 2;
            INSERT INTO transaction_events (transaction_id, kind, from_state, to_state, at, row_digest, hash)
            VALUES (2, 'revoked', 'purchased', 'purchased', 5, zeroblob(32), zeroblob(32));
            UPDATE transactions SET revocation_date = NULL, revocation_reason = NULL WHERE id = 2;
            """,
            expecting: "refund in the history and the row disagree")
    }

    @Test func aHistoryThatDoesNotEndInItsRowIsFound() async throws {
        try await damaged(
            "UPDATE transactions SET state = 'failed', error_code = 2 WHERE id = 1",
            expecting: "history ends in purchased, the row is failed")
    }

    @Test func aFinishedTransactionThatCannotBeFinishedIsFound() async throws {
        try await damaged(
            "PRAGMA ignore_check_constraints = ON; UPDATE transactions SET state = 'deferred', is_finished = 1, finished_at = 0 WHERE id = 2",
            expecting: "finished while deferred")
    }

    @Test func aDuplicatedIdempotencyKeyIsFound() async throws {
        // The keys are unique by an index of their own (migration 0008): lose it.
        try await damaged(
            """
            DROP INDEX transactions_idempotency_key;
            UPDATE transactions SET idempotency_key = 'dup';
            """,
            expecting: "idempotency key dup names transactions 1,2")
    }

    @Test func anIdAboveTheCounterIsFound() async throws {
        try await damaged("UPDATE ledger_counters SET value = 1", expecting: "ids could be reused")
    }

    @Test func aDamagedPageFailsTheIntegrityCheck() async throws {
        try await withTemporaryDirectory { directory in
            // The index fits its root page, whose cells fill it from the end.
            let database = try purchasedLedger(in: directory, count: 30).database
            // Scramble an index page (not the schema's first page): the file still opens.
            #expect(
                try runPython(
                    """
                    import sqlite3
                    c = sqlite3.connect('\(database)')
                    c.execute('PRAGMA wal_checkpoint(TRUNCATE)')
                    page = c.execute("SELECT rootpage FROM sqlite_master WHERE name = 'transactions_by_product'").fetchone()[0]
                    c.close()
                    with open('\(database)', 'r+b') as f:
                        f.seek((page - 1) * 4096 + 3000)   # where the cells are (they fill a page from its end)
                        f.write(bytes(range(256)) * 4)
                    """) == 0)
            let result = try LedgerProcess.run(["verify", "--database", database])
            #expect(result.status == 2, "\(result.stdout) \(result.stderr)")
            #expect(result.stdout.contains("integrity check"), "\(result.stdout)")
        }
    }

    /// A WAL holding commits a killed process made, replaced by junk or with a damaged header,
    /// is refused untouched; cut at its end (what a crash does), it opens.
    @Test func aDamagedWALIsRefusedAndATornOneOpens() async throws {
        try await withTemporaryDirectory { directory in
            try SampleCatalog.ledger(in: directory).close()
            let database = directory + "/ledger.sqlite"
            let child = LedgerProcess.start(
                [
                    "hold-purchases", "--database", database, SampleCatalog.consumable, SampleCatalog.nonConsumable,
                    SampleCatalog.nonConsumable2,
                ])
            let pipe = Pipe()
            child.standardOutput = pipe
            try child.run()
            var output = Data()
            while !String(decoding: output, as: UTF8.self).contains("holding") {
                let chunk = pipe.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                output += chunk
            }
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
            let wal = database + "-wal"
            let intact = try #require(fileBytes(wal))
            #expect(intact.count > 4 * 4_120, "the killed process left its commits in the WAL")

            let before = fileBytes(database)
            try Data(repeating: 0xA5, count: 8_000).write(to: URL(fileURLWithPath: wal))
            let junk = try LedgerProcess.run(["purchase", SampleCatalog.consumable, "--database", database])
            #expect(junk.status == 74 && junk.stderr.contains("no WAL signature"))
            #expect(
                fileBytes(database) == before && fileBytes(wal) == Data(repeating: 0xA5, count: 8_000), "left untouched"
            )
            var badChecksum = intact
            badChecksum[25] ^= 0xFF  // inside the header's checksum
            try badChecksum.write(to: URL(fileURLWithPath: wal))
            let refused = try LedgerProcess.run(["list", "--database", database])
            #expect(refused.status == 74 && refused.stderr.contains("fails its checksum"), "\(refused.stderr)")

            // A WAL cut inside its last frame is what a crash leaves: it opens.
            try intact.prefix(intact.count - 100).write(to: URL(fileURLWithPath: wal))
            let torn = try LedgerProcess.run(["verify", "--database", database])
            #expect(torn.status == 0, "\(torn.stdout) \(torn.stderr)")
        }
    }

    /// A full disk or an I/O error (through the fault VFS): a clear error, exit 74, and the
    /// ledger is as it was.
    @Test(arguments: ["disk-full@write:1", "disk-full@write:3", "io@sync:1", "io-persistent@write:2"])
    func aFullDiskOrAnIOErrorGivesAClearErrorAndChangesNothing(fault: String) async throws {
        try await withTemporaryDirectory { directory in
            try SampleCatalog.ledger(in: directory).close()
            let database = directory + "/ledger.sqlite"
            let result = try LedgerProcess.run(
                ["ledger", "purchase", SampleCatalog.consumable, "--database", database],
                environment: ["STORELEDGER_FAULT": fault],
                program: .lab)
            #expect(result.status == 74, "\(fault): \(result.stderr)")
            #expect(result.stderr.contains(fault.hasPrefix("disk-full") ? "full" : "I/O error"), "\(result.stderr)")
            let list = try LedgerProcess.run(["list", "--json", "--database", database]).json()
            #expect((list["transactions"] as? [Any])?.isEmpty == true, "nothing was half-written")
            #expect(try LedgerProcess.run(["verify", "--database", database]).status == 0)
            #expect(try LedgerProcess.run(["purchase", SampleCatalog.consumable, "--database", database]).status == 0)
        }
    }

    @Test func readOnlyFilesAndFoldersGiveAClearError() async throws {
        try await withTemporaryDirectory { directory in
            let folder = directory + "/ro"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try SampleCatalog.ledger(in: folder).close()
            let database = folder + "/ledger.sqlite"
            try FileManager.default.setAttributes([.posixPermissions: 0o400], ofItemAtPath: database)
            try FileManager.default.setAttributes([.posixPermissions: 0o500], ofItemAtPath: folder)
            defer {
                try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: folder)
                try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: database)
            }
            guard getuid() != 0 else { return }  // root ignores permissions: nothing to check
            let before = fileBytes(database)
            let result = try LedgerProcess.run(["purchase", SampleCatalog.consumable, "--database", database])
            #expect(result.status == 74, "\(result.stderr)")
            #expect(fileBytes(database) == before)
        }
    }
}
