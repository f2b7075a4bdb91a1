import Foundation
import LedgerTestSupport
import LedgerTesting
import Testing

/// Refused commands change nothing, down to the bytes.
@Suite struct RefusedCommandTests {
    /// The ledger's file as bytes and its modification time.
    static func snapshot(_ path: String) throws -> (Data?, Date?) {
        (fileBytes(path), try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date)
    }

    @Test(arguments: [
        ["refund", "999"], ["init"], ["purchase", "com.example.level1", "--quantity", "0"],
        ["clock", "set", "2001-01-01"],
        ["finish", "999"], ["approve", "1"], ["purchase", "nope"], ["store", "set", "locale", "xx"],
        ["clock", "set", "2030-02-30"], ["subscriptions", "renew", "com.example.level1"],
    ])
    func aRefusedCommandLeavesTheFileByteIdentical(_ arguments: [String]) async throws {
        try await CLIWorkspace.withCatalog { workspace in
            try workspace.ledger("purchase", "com.example.level1")
            let before = try Self.snapshot(workspace.database)
            try await Task.sleep(for: .milliseconds(20))  // a rewrite would show in the modification time
            let result = try workspace.ledger(arguments)
            #expect(result.status != 0 || arguments == ["init"], "\(arguments): \(result.stderr)")
            let after = try Self.snapshot(workspace.database)
            #expect(after.0 == before.0, "\(arguments) changed the file's bytes")
            #expect(after.1 == before.1, "\(arguments) changed the file's modification time")
        }
    }

    @Test func aRefusedImportCreatesNothing() async throws {
        try await CLIWorkspace.empty { workspace in
            let first = try SampleCatalog.write(in: workspace.directory, name: "A.storekit")
            let second = try SampleCatalog.write(in: workspace.directory, name: "B.storekit")
            let result = try workspace.ledger("products", "import", first, second)
            #expect(result.status == 65)
            #expect(result.stderr.contains("already defined by"))
            #expect(!FileManager.default.fileExists(atPath: workspace.database), "no ledger was created")
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: workspace.directory).filter {
                $0.contains("ledger")
            }
            #expect(leftovers.isEmpty, "\(leftovers)")
        }
    }

    @Test(arguments: [
        ("2030-02-30", "day 30 does not exist"), ("2030-06-15T10:00", "needs a zone"), ("2030-06-15T25:00Z", "hour 25"),
        ("2030-06-15garbage", "unexpected \"garbage\""), ("2030-06-15T10:00:00.1234Z", "at most 3 fractional digits"),
        ("2030-13-01", "month 13"), ("30-06-15", "expected YYYY-MM-DD"), ("2030-06-15T10:61Z", "minute 61"),
        ("10000-01-01", "expected YYYY-MM-DD"),
    ])
    func clockSetParsesISO8601Strictly(_ text: String, _ why: String) async throws {
        try await CLIWorkspace.withCatalog { workspace in
            let result = try workspace.ledger("clock", "set", text)
            #expect(result.status == 65, "\(text): \(result.stderr)")
            #expect(result.stderr.contains(why), "\(text): \(result.stderr)")
        }
    }

    @Test func clockSetTakesExactDatesWithZonesAndMilliseconds() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            // The store clock runs on from the time set: compare to the second.
            let set = try workspace.json("clock", "set", "2030-06-15T12:00:00.123+02:00")
            #expect((set["now"] as? String)?.hasPrefix("2030-06-15T10:00:0") == true, "\(set)")
            let leap = try workspace.json("clock", "set", "2032-02-29")
            #expect((leap["now"] as? String)?.hasPrefix("2032-02-29T00:00:0") == true, "\(leap)")
        }
    }
}

/// Subscription time from the tool: every move ends, a move past the limit is refused.
@Suite struct ClockBoundTests {
    @Test func aTwentyYearJumpRenewsAYearlySubscriptionTwentyTimes() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            try workspace.ledger("purchase", "com.example.pro.yearly")
            let moved = try workspace.json("clock", "advance", "P20Y")
            #expect((moved["renewed"] as? [Any])?.count == 20)
            #expect(try workspace.ledger("verify").status == 0)
        }
    }

    @Test func aMoveToTheEndOfTimeAtAFastRateIsRefusedWithAClearMessage() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            try workspace.ledger("store", "set", "timeRate", "oneRenewalEveryTwoSeconds")
            try workspace.ledger("purchase", "com.example.pro.monthly")
            let before = fileBytes(workspace.database)
            let result = try workspace.ledger("clock", "set", "9999-12-31")
            #expect(result.status == 1)
            #expect(result.stderr.contains("more than 10000 subscription renewals"), "\(result.stderr)")
            #expect(fileBytes(workspace.database) == before)
        }
    }

    @Test func verifyReportsARenewalWhosePeriodIsWrongAndAnExpirationBeforeItsPurchase() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            try workspace.ledger("purchase", "com.example.pro.monthly")
            try workspace.ledger("clock", "advance", "P2M")
            // Damage two periods behind the ledger's back (triggers allow date changes).
            let status = try runPython(
                """
                import sqlite3
                db = sqlite3.connect('\(workspace.database)')
                rows = db.execute("SELECT id, purchase_date FROM transactions WHERE reason = 'renewal' ORDER BY id").fetchall()
                db.execute("UPDATE transactions SET expiration_date = ? WHERE id = ?", (rows[0][1] + 1, rows[0][0]))
                db.execute("UPDATE transactions SET expiration_date = purchase_date - 1 WHERE id = ?", (rows[1][0],))
                db.commit()
                """)
            #expect(status == 0)
            let result = try workspace.ledger("verify")
            #expect(result.status == 2)
            #expect(result.stdout.contains("is not one P1M period"), "\(result.stdout)")
            #expect(result.stdout.contains("before its purchase date"), "\(result.stdout)")
        }
    }
}

/// Another process's lock, backups, and reading where nothing can be written.
@Suite struct WaitingAndBackupTests {
    @Test func aLockHeldTooLongIsExit75AfterSayingWhy() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            let holder = Process()
            holder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            holder.arguments = [
                "python3", "-c",
                """
                import sqlite3, time
                db = sqlite3.connect('\(workspace.database)', isolation_level=None)
                db.execute('BEGIN IMMEDIATE'); print('locked', flush=True); time.sleep(4); db.execute('ROLLBACK')
                """,
            ]
            let out = Pipe()
            holder.standardOutput = out
            try holder.run()
            _ = out.fileHandleForReading.availableData  // "locked"
            let before = fileBytes(workspace.database)
            let result = try workspace.ledger("purchase", "com.example.level1", "--wait", "1.5")
            holder.waitUntilExit()
            #expect(result.status == 75, "\(result.stderr)")
            #expect(result.stderr.contains("another process holds the ledger"), "\(result.stderr)")
            #expect(result.stderr.contains("is busy"), "\(result.stderr)")
            #expect(
                result.stderr.contains("nothing was changed (try again, or wait longer with --wait SECONDS)"),
                "\(result.stderr)")
            #expect(fileBytes(workspace.database) == before)
            // Released, the same command goes through.
            #expect(try workspace.ledger("purchase", "com.example.level1").status == 0)
        }
    }

    @Test func aBackupIsAVerifiedOwnerOnlyCopyThatHoldsTheLastCommits() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            for _ in 0..<3 { try workspace.ledger("purchase", "com.example.rocket_car") }
            let copy = workspace.directory + "/copy.sqlite"
            let made = try workspace.json("backup", copy)
            #expect(made["verified"] as? Bool == true)
            let mode = try FileManager.default.attributesOfItem(atPath: copy)[.posixPermissions] as? Int
            #expect(mode == 0o600)
            let listed = try LedgerProcess.run(["list", "--json", "--database", copy])
            #expect((try listed.json()["transactions"] as? [Any])?.count == 3)
            #expect(try LedgerProcess.run(["verify", "--database", copy]).status == 0)
            let again = try workspace.ledger("backup", copy)
            #expect(again.status == 1 && again.stderr.contains("never replaces"))
        }
    }

    @Test(
        .enabled(
            if: Unprivileged.isPossible,
            "root ignores directory permissions and /usr/bin/setpriv is missing (apt-get install util-linux)"))
    func readCommandsWorkInAReadOnlyDirectory() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            try workspace.ledger("purchase", "com.example.level1")
            let folder = workspace.directory + "/readonly"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
            let path = folder + "/ledger.sqlite"
            try FileManager.default.copyItem(atPath: workspace.database, toPath: path)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
            try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: folder)
            defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder) }
            // Root ignores directory permissions: run the tool as nobody then.
            let prefix = try #require(Unprivileged.commandPrefix)
            for command in [["list"], ["info"], ["show", "1"], ["verify"], ["products", "list"], ["clock", "show"]] {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: prefix.first ?? LedgerProcess.executable)
                process.arguments =
                    Array(prefix.dropFirst()) + (prefix.isEmpty ? [] : [LedgerProcess.executable])
                    + command + ["--database", path]
                let err = Pipe()
                process.standardOutput = FileHandle.nullDevice
                process.standardError = err
                try process.run()
                let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                process.waitUntilExit()
                #expect(process.terminationStatus == 0, "\(command): \(message)")
            }
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: folder) == ["ledger.sqlite"],
                "nothing created beside it")
        }
    }
}

/// Input the tool refuses or shows safely.
@Suite struct HostileInputTests {
    @Test func productIdentifiersWithControlCharactersAreRefusedAtImport() async throws {
        try await CLIWorkspace.empty { workspace in
            let file = workspace.directory + "/Nul.storekit"
            try write(
                """
                {"products": [{"productID": "dup\\u0000a", "type": "Consumable", "displayPrice": "1"},
                              {"productID": "dup\\u0000b", "type": "Consumable", "displayPrice": "1"}],
                 "version": {"major": 3, "minor": 0}}
                """, to: file)
            let result = try workspace.ledger("products", "import", file)
            #expect(result.status == 65)
            #expect(result.stderr.contains("products[0].productID"), "\(result.stderr)")
            #expect(
                result.stderr.contains("without control characters") && result.stderr.contains("U+0000"),
                "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: workspace.database))
        }
    }

    @Test func inputsThatAreNotRegularFilesAreSaidToBeSo() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            let fifo = workspace.directory + "/fifo.storekit"
            #expect(mkfifo(fifo, 0o600) == 0)
            for path in [fifo, "/dev/zero"] {
                let result = try workspace.ledger("products", "import", path)
                #expect(result.status == 66, "\(path): \(result.stderr)")
                #expect(result.stderr.contains("not a regular file"), "\(path): \(result.stderr)")
                let request = try workspace.ledger("products", "request", "--ids-file", path)
                #expect(request.stderr.contains("not a regular file"), "\(path): \(request.stderr)")
            }
        }
    }

    @Test func helpOfAnUnknownCommandIsAUsageError() throws {
        let result = try LedgerProcess.run(["help", "frobnicate"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("no command \"frobnicate\""))
        #expect(try LedgerProcess.run(["help", "store", "set"]).status == 0)
    }

    @Test func errorMessagesQuoteABoundedPrefixOfAHugeArgument() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            let huge = String(repeating: "x", count: 100_000) + "\u{1B}[31m"
            let result = try workspace.ledger("purchase", huge)
            #expect(result.status == 1)
            #expect(result.stderr.utf8.count < 2_000, "\(result.stderr.utf8.count) bytes")
            #expect(!result.stderr.contains("\u{1B}"), "control characters are escaped")
        }
    }

    @Test(arguments: ["xx", "xx_YY", "en_QQ", "e", "fr_FR_extra", "en-US"])
    func localesAreChecked(_ locale: String) async throws {
        try await CLIWorkspace.withCatalog { workspace in
            let result = try workspace.ledger("store", "set", "locale", locale)
            #expect(result.status == (locale == "en-US" ? 0 : 65), "\(locale): \(result.stderr)")
        }
    }

    @Test func storedControlCharactersAreEscapedInTables() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            let status = try runPython(
                """
                import sqlite3
                db = sqlite3.connect('\(workspace.database)')
                db.execute("UPDATE product_localizations SET display_name = 'Evil' || char(27) || '[31m' WHERE product_id = 'com.example.level1'")
                db.commit()
                """)
            #expect(status == 0)
            let listed = try workspace.ledger("products", "list")
            #expect(!listed.stdout.contains("\u{1B}") && listed.stdout.contains("\\u{1b}"), "\(listed.stdout)")
        }
    }
}

/// A command closes its ledger before it exits: the close checkpoints `-wal` into the file
/// (and removes it), so the file alone holds every change the command reported.
@Suite struct ClosedBeforeExitTests {
    @Test func everyWriteCommandLeavesItsChangesInTheFileItself() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            let commands = [
                ["purchase", "com.example.level1"], ["launch", "--finish"], ["purchase", "com.example.pro.monthly"],
                ["clock", "advance", "40d"], ["refund", "1"], ["store", "set", "askToBuy", "true"], ["finish", "999"],
            ]
            for command in commands {
                try workspace.ledger(command)
                #expect(!FileManager.default.fileExists(atPath: workspace.database + "-wal"), "\(command) left a -wal")
            }
        }
    }
}
