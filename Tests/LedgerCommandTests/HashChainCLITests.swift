import Foundation
import LedgerTestSupport
import LedgerTesting
import Testing

/// The hash chain against edits made with the `sqlite3` shell, past the triggers (dropped, or
/// removed from the schema with `PRAGMA writable_schema`): `ledger verify` names the first broken
/// link or the row, and `tools/verify-audit` finds the same in an export of the edited ledger.
@Suite struct HashChainCLITests {
    struct Tampering: CustomTestStringConvertible, Sendable {
        let name: String
        /// Each element is one `sqlite3` run (a schema edited with writable_schema is read again
        /// by the next connection).
        let statements: [String]
        let expected: String
        var testDescription: String { name }
    }

    /// The history the workspace holds: 7 events (two purchases, a finish, a third purchase),
    /// its head signed through event 7.
    static let tamperings: [Tampering] = [
        Tampering(
            name: "an event edited with its trigger dropped",
            statements: [
                "DROP TRIGGER transaction_events_append_only; UPDATE transaction_events SET at = at + 1 WHERE seq = 3"
            ],
            expected: "hash chain broken at event 3"),
        Tampering(
            name: "an event edited with its trigger removed by writable_schema",
            statements: [
                "PRAGMA writable_schema = ON; DELETE FROM sqlite_schema WHERE type = 'trigger' AND name = 'transaction_events_append_only'",
                "UPDATE transaction_events SET detail = 'edited' WHERE seq = 5",
            ],
            expected: "hash chain broken at event 5"),
        Tampering(
            name: "an event deleted",
            statements: ["DROP TRIGGER transaction_events_never_deleted; DELETE FROM transaction_events WHERE seq = 3"],
            expected:
                "hash chain broken at event 4: its link does not follow from the history before it (event 3 is not there)"
        ),
        Tampering(
            name: "the last event deleted",
            statements: ["DROP TRIGGER transaction_events_never_deleted; DELETE FROM transaction_events WHERE seq = 7"],
            expected: "the signed head names event 7, which is not there"),
        Tampering(
            name: "an event inserted, copied from another",
            statements: [
                """
                INSERT INTO transaction_events (transaction_id, kind, from_state, to_state, at, detail, row_digest, hash)
                SELECT transaction_id, kind, from_state, to_state, at, detail, row_digest, hash FROM transaction_events WHERE seq = 5
                """
            ],
            expected: "hash chain broken at event 8"),
        Tampering(
            name: "two events swapped",
            statements: [
                """
                DROP TRIGGER transaction_events_append_only;
                UPDATE transaction_events SET seq = -seq WHERE seq IN (3, 4);
                UPDATE transaction_events SET seq = CASE seq WHEN -3 THEN 4 ELSE 3 END WHERE seq < 0;
                """
            ],
            expected: "hash chain broken at event 3"),
        Tampering(
            name: "a row edited without an event",
            statements: ["UPDATE transactions SET storefront = 'FRA' WHERE id = 2"],
            expected: "transaction 2: hash chain: the row differs from what its last event recorded"),
        Tampering(
            name: "a row edited with its identity trigger dropped",
            statements: [
                "DROP TRIGGER transactions_identity_is_immutable; UPDATE transactions SET quantity = 9 WHERE id = 1"
            ],
            expected: "transaction 1: hash chain: the row differs from what its last event recorded"),
        Tampering(
            name: "a row deleted without an event",
            statements: ["DELETE FROM transactions WHERE id = 3"],
            expected: "transaction 3: hash chain: the history goes on, the row is gone"),
        Tampering(
            name: "the head's signature replaced",
            statements: ["UPDATE chain_head SET signature = randomblob(64)"],
            expected: "hash chain: the head's signature is not the ledger's"),
        Tampering(
            name: "the signed head deleted",
            statements: ["DELETE FROM chain_head"],
            expected: "hash chain: the history has no signed head"),
        Tampering(
            name: "the last event cut off and the head moved back to the one before",
            statements: [
                """
                DROP TRIGGER transaction_events_never_deleted; DELETE FROM transaction_events WHERE seq = 7;
                UPDATE chain_head SET seq = 6, hash = (SELECT hash FROM transaction_events WHERE seq = 6)
                """
            ],
            expected: "hash chain: the head's signature is not the ledger's"),
    ]

    /// A workspace with the history above, verified untouched first.
    static func withHistory(_ body: (CLIWorkspace) async throws -> Void) async throws {
        try await CLIWorkspace.withCatalog { workspace in
            for arguments in [
                ["purchase", SampleCatalog.nonConsumable], ["purchase", SampleCatalog.consumable], ["finish", "1"],
                ["purchase", SampleCatalog.nonConsumable2],
            ] {
                let result = try workspace.ledger(arguments: arguments)
                #expect(result.status == 0, "\(arguments): \(result.stderr)")
            }
            let clean = try workspace.ledger("verify")
            #expect(
                clean.status == 0 && clean.stdout.contains("hash chain: 7 events, signed through event 7;"),
                "\(clean.stdout)")
            try await body(workspace)
        }
    }

    /// An event appended after the signed head by someone without the key (Python computes its
    /// link as the chain does; it records the row as it is): `ledger jws` refuses to sign the
    /// transaction it is about (exit 74, saying why), where it signed it before; another
    /// transaction is still signed.
    @Test func noSignerSignsATransactionWhoseUnsignedEventsAreNotAuthenticated() async throws {
        try await Self.withHistory { workspace in
            #expect(try workspace.ledger("jws", "1").status == 0)
            let forged = try runPython(
                """
                import hashlib, sqlite3, struct
                def text(v): return b"\\x00" if v is None else b"\\x02" + struct.pack(">I", len(v.encode())) + v.encode()
                def integer(v): return b"\\x01" + struct.pack(">q", v)
                def blob(v): return b"\\x03" + struct.pack(">I", len(v)) + v
                db = sqlite3.connect('\(workspace.database)')
                seq, previous = db.execute("SELECT seq, hash FROM transaction_events ORDER BY seq DESC LIMIT 1").fetchone()
                digest, at = db.execute(
                    "SELECT row_digest, at FROM transaction_events WHERE transaction_id = 1 ORDER BY seq DESC LIMIT 1").fetchone()
                data = (bytes(previous) + integer(seq + 1) + integer(1) + text("revoked") + text("purchased")
                        + text("purchased") + integer(at) + text(None) + blob(bytes(digest)))
                link = hashlib.sha256(data).digest()
                db.execute("INSERT INTO transaction_events (seq, transaction_id, kind, from_state, to_state, at, detail, "
                           "row_digest, hash, mac) VALUES (?, 1, 'revoked', 'purchased', 'purchased', ?, NULL, ?, ?, NULL)",
                           (seq + 1, at, digest, link))
                db.commit()
                """)
            #expect(forged == 0)
            let refused = try workspace.ledger("jws", "1")
            #expect(refused.status == 74, "\(refused.stdout)")
            #expect(
                refused.stderr.contains("has event 8 after the signed head without the ledger's authentication"),
                "\(refused.stderr)")
            #expect(try workspace.ledger("jws", "2").status == 0, "another transaction's history holds")
            let verified = try workspace.ledger("verify")
            #expect(verified.status == 2 && verified.stdout.contains("event 8"), "\(verified.stdout)")
        }
    }

    @Test(
        .enabled(
            if: SQLiteShell.shouldRun,
            "the sqlite3 shell is not installed (apt-get install sqlite3; .ci/run installs it)"),
        arguments: tamperings)
    func verifyFindsTheTampering(_ tampering: Tampering) async throws {
        guard let shell = SQLiteShell.path else {
            Issue.record("STORELEDGER_SQLITE3 is set, but: \(SQLiteShell.unavailableReason)")
            return
        }
        try await Self.withHistory { workspace in
            for statement in tampering.statements {
                let edit = try runProcess(shell, [workspace.database, statement])
                #expect(edit.status == 0, "sqlite3 refused: \(statement)")
            }
            let verified = try workspace.ledger("verify", "--json")
            #expect(verified.status == 2, "\(verified.stdout) \(verified.stderr)")
            let problems = try verified.json()["problems"] as? [[String: Any]] ?? []
            let messages = problems.map { problem in
                ((problem["transactionID"] as? Int).map { "transaction \($0): " } ?? "")
                    + (problem["message"] as? String ?? "")
            }
            #expect(messages.contains { $0.contains(tampering.expected) }, "\(messages)")

            // The export of the edited ledger carries the same evidence to a checker without Swift.
            guard let python = ApplePython.path else { return }
            let export = workspace.directory + "/audit.jsonl"
            #expect(try workspace.ledger("audit", "export", export).status == 0)
            let audit = try runProcess(python, [Repository.root + "/tools/verify-audit", export])
            let expected = tampering.expected.replacingOccurrences(of: "hash chain: ", with: "")
            #expect(audit.status == 1 && audit.output.contains(expected), "\(audit.output)")
        }
    }

    /// An untouched ledger's export checks, against the exported root too; an edited export, a
    /// truncated one, and another ledger's root are found; a file that is not an export is refused.
    @Test(
        .enabled(
            if: ApplePython.shouldRun,
            "app-store-server-library and jwcrypto are not in .build/python (.ci/run installs them)"))
    func verifyAuditChecksAnExportIndependently() async throws {
        guard let python = ApplePython.path else {
            Issue.record("STORELEDGER_PYTHON is set, but: \(ApplePython.unavailableReason)")
            return
        }
        try await Self.withHistory { workspace in
            let directory = workspace.directory
            let export = directory + "/audit.jsonl"
            let exported = try workspace.json("audit", "export", export)
            #expect(
                exported["events"] as? Int == 7 && exported["transactions"] as? Int == 3
                    && exported["signedSequence"] as? Int == 7)
            let again = try workspace.ledger("audit", "export", export)
            #expect(again.status == 1 && again.stderr.contains("\(export) exists"))
            #expect(try workspace.ledger("certificate", "export", "--output", directory + "/root.pem").status == 0)
            let tool = Repository.root + "/tools/verify-audit"
            let ok = try runProcess(python, [tool, export, "--root", directory + "/root.pem"])
            #expect(
                ok.status == 0 && ok.output.hasPrefix("ok: 7 events chained, signed through event 7"), "\(ok.output)")

            let lines = try String(contentsOfFile: export, encoding: .utf8).split(separator: "\n").map(String.init)
            func check(_ edited: [String], expecting message: String, _ extra: [String] = []) throws {
                let path = directory + "/edited.jsonl"
                try (edited.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
                let result = try runProcess(python, [tool, path] + extra)
                #expect(result.status == 1 && result.output.contains(message), "\(message): \(result.output)")
            }
            var edited = lines
            edited[3] = edited[3].replacingOccurrences(of: #""detail":null"#, with: #""detail":"edited""#)
            #expect(edited[3] != lines[3])
            try check(edited, expecting: "hash chain broken at event 3")
            try check(
                lines.filter { !$0.contains(#""seq":7,"transactionId""#) },
                expecting: "the signed head names event 7, which is not there")
            #expect(try LedgerProcess.run(["init", "--database", directory + "/other.sqlite"]).status == 0)
            #expect(
                try LedgerProcess.run([
                    "certificate", "export", "--database", directory + "/other.sqlite", "--output",
                    directory + "/other.pem",
                ]).status == 0)
            try check(
                lines, expecting: "the export's root certificate is not the one given with --root",
                ["--root", directory + "/other.pem"])
            let notAnExport = try runProcess(python, [tool, directory + "/root.pem"])
            #expect(notAnExport.status == 2)

            // A head placed before the real one: the format has one head, last.
            let head = try #require(lines.last { $0.contains(#""type":"head""#) })
            let forged = head.replacingOccurrences(of: #""seq":7"#, with: #""seq":3"#)
            try check(Array(lines.dropLast()) + [forged, head], expecting: "a second signed head")
            // Files no export is: exit 2 with one line, never a traceback.
            for (name, hostile) in [
                (
                    "deep nesting",
                    [lines[0], String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)]
                ),
                (
                    "a sequence number of 2^70",
                    [lines[0], lines[1].replacingOccurrences(of: #""seq":1"#, with: #""seq":1180591620717411303424"#)]
                ),
                ("a line that is no object", [lines[0], "[1, 2]"]),
            ] {
                let path = directory + "/hostile.jsonl"
                try (hostile.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
                // stderr too
                let result = try runProcess("/bin/sh", ["-c", #""$0" "$1" "$2" 2>&1"#, python, tool, path])
                #expect(
                    result.status == 2 && result.output.contains("not a usable audit export"),
                    "\(name): \(result.output)")
                #expect(!result.output.contains("Traceback"), "\(name): \(result.output)")
            }
        }
    }
}
