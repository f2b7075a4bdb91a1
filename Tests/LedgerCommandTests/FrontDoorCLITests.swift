import Foundation
import LedgerCommand
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

/// The habits people expect of a command-line tool: a version, options anywhere, "did you
/// mean", JSON errors, bounded listings.
@Suite struct FrontDoorCLITests {
    @Test func theVersionIsTheChangelogsLatestReleaseAndTheLicenseIsApache() throws {
        let result = try LedgerProcess.run(["--version"])
        #expect(result.status == 0)
        #expect(result.stdout == LedgerRootCommand.version + "\n")
        let changelog = try String(contentsOfFile: Repository.root + "/CHANGELOG.md", encoding: .utf8)
        let released = changelog.split(separator: "\n").first {
            $0.hasPrefix("## [") && !$0.hasPrefix("## [Unreleased]")
        }
        #expect(released?.hasPrefix("## [\(LedgerRootCommand.version)] - ") == true, "\(released ?? "no release")")
        let license = try String(contentsOfFile: Repository.root + "/LICENSE", encoding: .utf8)
        #expect(license.contains("Apache License") && license.contains("Version 2.0, January 2004"))
        let manifest = try String(contentsOfFile: Repository.root + "/Package.swift", encoding: .utf8)
        #expect(
            manifest.contains(
                "StoreLedger \(LedgerRootCommand.version), licensed under the Apache License, Version 2.0"))
    }

    /// The catalog every guide imports ships with the tool: `products sample` prints it, and
    /// what it prints imports into the catalog the guides describe. It touches no ledger.
    @Test func theSampleCatalogIsPrintedAndImports() async throws {
        try await CLIWorkspace.empty { workspace in
            let sample = try workspace.ledger("products", "sample")
            #expect(sample.status == 0 && sample.stdout == ProductCatalog.sampleConfiguration + "\n")
            #expect(!FileManager.default.fileExists(atPath: workspace.database), "no ledger made")
            try write(sample.stdout, to: workspace.directory + "/Products.storekit")
            #expect(try workspace.ledger("products", "import", workspace.directory + "/Products.storekit").status == 0)
            let listed = try workspace.json("products", "list", "--json")["products"] as? [[String: Any]]
            #expect(
                Set(listed?.compactMap { $0["id"] as? String } ?? []) == [
                    "com.example.level1", "com.example.level2", "com.example.rocket_car", "com.example.season_pass",
                    "com.example.pro.monthly", "com.example.pro.yearly", "com.example.basic.monthly",
                ])
        }
    }

    @Test func globalOptionsWorkBeforeTheCommandToo() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            try workspace.ledger("purchase", "com.example.level1")
            let after = try LedgerProcess.run(["list", "--json", "--database", workspace.database])
            for before in [
                ["--database", workspace.database, "--json", "list"],
                ["--json", "--database=\(workspace.database)", "list"],
                ["--wait", "5", "--durability", "normal", "--database", workspace.database, "list", "--json"],
            ] {
                let result = try LedgerProcess.run(before)
                #expect(result.status == 0, "\(before): \(result.stderr)")
                #expect(result.stdout == after.stdout, "\(before)")
            }
            let nested = try LedgerProcess.run(["--database", workspace.database, "store", "set", "askToBuy", "true"])
            #expect(nested.status == 0, "\(nested.stderr)")
            #expect(try workspace.json("store", "show")["askToBuy"] as? Bool == true)
        }
    }

    @Test(arguments: [
        (["lsit"], "did you mean \"list\"?"), (["store", "sett", "askToBuy", "true"], "did you mean \"set\"?"),
        (["--json", "purchse", "x"], #"did you mean \"purchase\"?"#), (["xyzzy"], "unknown command \"xyzzy\" (see"),
    ])
    func aMistypedCommandIsAUsageErrorThatSuggestsTheNearest(_ arguments: [String], _ expected: String) throws {
        let result = try LedgerProcess.run(arguments)
        #expect(result.status == 64)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains(expected), "\(result.stderr)")
    }

    @Test func optionsWithoutACommandOrBeforeHelpAreUnderstood() async throws {
        for arguments in [["--json"], ["--database", "x.sqlite"], ["--database"]] {
            let result = try LedgerProcess.run(arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.contains("the options need a command after them"), "\(arguments): \(result.stderr)")
        }
        let help = try LedgerProcess.run(["--json", "--database", "x.sqlite", "help", "list"])
        #expect(help.status == 0 && help.stdout.contains("USAGE: ledger list"), "\(help.stderr)")
        let typo = try LedgerProcess.run(["help", "lsit"])
        #expect(
            typo.status == 64 && typo.stderr.contains("no command \"lsit\" (did you mean \"list\"?"), "\(typo.stderr)")
        let nested = try LedgerProcess.run(["--json", "help", "store", "sett"])
        #expect(
            nested.status == 64 && nested.stderr.contains(#"no command \"sett\" (did you mean \"set\"?"#),
            "\(nested.stderr)")
    }

    /// The options `CommandWords` moves after the command are exactly those every command
    /// takes (`GlobalOptions`), as argument-parser describes the commands.
    @Test func theMovedOptionsAreTheOptionsEveryCommandTakes() throws {
        let dump = try LedgerProcess.run(["--experimental-dump-help"])
        let tool = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
        var shared: Set<String>?
        func walk(_ command: [String: Any]) {
            let subcommands = command["subcommands"] as? [[String: Any]] ?? []
            if subcommands.isEmpty, command["commandName"] as? String != "help" {
                let names = (command["arguments"] as? [[String: Any]] ?? []).flatMap { argument in
                    (argument["names"] as? [[String: Any]] ?? []).compactMap {
                        ($0["kind"] as? String) == "long" ? "--" + ($0["name"] as? String ?? "") : nil
                    }
                }
                shared = shared.map { $0.intersection(names) } ?? Set(names)
            }
            subcommands.forEach(walk)
        }
        walk(try #require(tool["command"] as? [String: Any]))
        #expect(shared?.subtracting(["--help", "--version"]) == Set(CommandWords.globalOptions.keys))
    }

    @Test(
        .enabled(
            if: SQLiteShell.shouldRun,
            "the sqlite3 shell is not installed (apt-get install sqlite3; .ci/run installs it)"))
    func aListThatFailsLeavesStdoutEmptyAndHugeDatesPrint() async throws {
        let shell = try #require(SQLiteShell.path, "STORELEDGER_SQLITE3 is set, but: \(SQLiteShell.unavailableReason)")
        try await CLIWorkspace.withCatalog { workspace in
            try workspace.ledger("purchase", "com.example.level1")
            try workspace.ledger("purchase", "com.example.level2")
            // A damaged date that 64 bits of milliseconds cannot hold prints; it does not trap.
            let hugeDate =
                "PRAGMA ignore_check_constraints = ON; DROP TRIGGER transactions_finish_rule; "
                + "DROP TRIGGER transactions_finished_is_final; UPDATE transactions SET finished_at = 9223372036854775807, is_finished = 1 WHERE id = 1"
            #expect(try runProcess(shell, [workspace.database, hugeDate]).status == 0)
            let listed = try workspace.ledger("list", "--json")
            #expect(listed.status == 0, "\(listed.stderr)")
            #expect(try listed.json()["version"] as? Int == 1)
            // A row the ledger cannot read, after one it can: the error, and nothing on stdout.
            let badState =
                "PRAGMA ignore_check_constraints = ON; DROP TRIGGER transactions_legal_transition; "
                + "UPDATE transactions SET state = 'bogus' WHERE id = 2"
            #expect(try runProcess(shell, [workspace.database, badState]).status == 0)
            let broken = try workspace.ledger("list", "--json")
            #expect(broken.status == 74 && broken.stdout.isEmpty, "\(broken.status) \(broken.stdout)")
            #expect(try Self.jsonError(broken)["code"] as? String == "unusableLedger")
        }
    }

    @Test func anUnknownProductOrGroupSuggestsTheNearest() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            let product = try workspace.ledger("purchase", "com.example.levl1")
            #expect(product.status == 1)
            #expect(
                product.stderr.contains("unknown product \"com.example.levl1\"")
                    && product.stderr.contains("did you mean \"com.example.level1\"?"))
            let far = try workspace.ledger("purchase", "org.nothing.alike")
            #expect(far.status == 1 && far.stderr.contains("import it with `ledger products import`"), "\(far.stderr)")
            let group = try workspace.ledger("subscriptions", "status", "Por")
            #expect(group.status == 1)
            #expect(
                group.stderr.contains(
                    "no auto-renewable subscription or subscription group \"Por\" (did you mean \"Pro\"?)"),
                "\(group.stderr)")
        }
    }

    @Test func subscriptionGroupsAreNamedByNameOrIdentifier() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            try workspace.ledger("purchase", SampleCatalog.subscription)
            let byProduct =
                try workspace.json("subscriptions", "status", SampleCatalog.subscription)["status"] as? [String: Any]
            for name in ["Pro", "pro"] {  // the group's name as `products list` shows it, its identifier
                let status = try workspace.json("subscriptions", "status", name)["status"] as? [String: Any]
                #expect(status?["groupID"] as? String == "pro")
                #expect(status?["state"] as? String == byProduct?["state"] as? String)
            }
            #expect(
                try workspace.json("subscriptions", "auto-renew", "Pro", "off")["productID"] as? String
                    == SampleCatalog.subscription)
            let status = try workspace.json("subscriptions", "status", "pro")["status"] as? [String: Any]
            #expect(status?["willAutoRenew"] as? Bool == false)
            #expect(try workspace.json("subscriptions", "renew", "Pro")["renewal"] != nil)
            let notASubscription = try workspace.ledger("subscriptions", "expire", "com.example.level1")
            #expect(notASubscription.status == 1)
        }
    }

    @Test func refundReasonsAreListedByName() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            try workspace.ledger("purchase", "com.example.level1")
            let wrong = try workspace.ledger("refund", "1", "--reason", "because")
            #expect(wrong.status == 64)
            #expect(wrong.stderr.contains("Please provide one of 'other' and 'developerIssue'"), "\(wrong.stderr)")
            let help = try LedgerProcess.run(["help", "refund"])
            #expect(help.stdout.contains("other             - any other reason (0)"))
            #expect(help.stdout.contains("developerIssue    - an issue in the app (1)"))
            let refunded = try workspace.json("refund", "1", "--reason", "developerIssue")
            #expect(refunded["revocationReason"] as? Int == 1)
        }
    }

    /// The last line of stderr as the JSON error document, with stdout empty.
    static func jsonError(_ result: LedgerProcess.Result) throws -> [String: Any] {
        #expect(result.stdout.isEmpty, "stdout: \(result.stdout)")
        let last = try #require(result.stderr.split(separator: "\n").last)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
        #expect(document.keys.sorted() == ["error", "version"] && document["version"] as? Int == 1)
        return try #require(document["error"] as? [String: Any])
    }

    @Test func withJSONAnErrorIsOneJSONDocumentOnStderr() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            let cases: [([String], String, Int)] = [
                (["purchase", "com.example.nope"], "refused", 1),
                (["list", "--limit", "0"], "usage", 64),
                (["lsit"], "usage", 64),
                (["purchase", "com.example.level1", "--account", "not-a-uuid"], "badInput", 65),
            ]
            for (arguments, code, exitCode) in cases {
                let result = try workspace.ledger(arguments: arguments + ["--json"])
                #expect(result.status == Int32(exitCode), "\(arguments)")
                let error = try Self.jsonError(result)
                #expect(error["code"] as? String == code, "\(arguments)")
                #expect(error["exitCode"] as? Int == exitCode, "\(arguments)")
                #expect((error["message"] as? String)?.isEmpty == false, "\(arguments)")
            }
            let missing = try LedgerProcess.run(["info", "--json", "--database", workspace.directory + "/none.sqlite"])
            #expect(missing.status == 66)
            #expect(try Self.jsonError(missing)["code"] as? String == "missingInput")
            // Without --json, the same error is a line of text.
            let text = try workspace.ledger("purchase", "com.example.nope")
            #expect(text.stderr.hasPrefix("error: unknown product"))
        }
    }

    @Test func everyJSONDocumentHasTheVersionField() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            for arguments in [
                ["purchase", "com.example.level1"], ["list"], ["show", "1"], ["info"], ["launch"], ["store", "show"],
                ["clock", "show"], ["entitlements"], ["products", "list"], ["verify"],
                ["subscriptions", "status", "pro"],
            ] {
                let document = try workspace.json(arguments: arguments)
                #expect(document["version"] as? Int == 1, "\(arguments)")
            }
        }
    }

    @Test func aRepeatedIdempotencyKeySaysItReplayed() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            let first = try workspace.json("purchase", "com.example.level1", "--idempotency-key", "order-1")
            #expect(first["replayed"] as? Bool == false)
            let again = try workspace.json("purchase", "com.example.level1", "--idempotency-key", "order-1")
            #expect(again["replayed"] as? Bool == true)
            #expect(again["id"] as? Int == first["id"] as? Int)
            let text = try workspace.ledger("purchase", "com.example.level1", "--idempotency-key", "order-1")
            #expect(text.stdout.contains("replayed: the idempotency key names this earlier transaction"))
            let fresh = try workspace.ledger("purchase", "com.example.level1", "--idempotency-key", "order-2")
            #expect(!fresh.stdout.contains("replayed"))
        }
    }

    /// A workspace whose ledger holds `count` purchases of the consumable, made in-process.
    static func withPurchases(_ count: Int, _ body: (CLIWorkspace) async throws -> Void) async throws {
        try await CLIWorkspace.withCatalog { workspace in
            let queue = try PaymentQueue(path: workspace.database)
            for _ in 0..<count { try await queue.add(Payment(productID: SampleCatalog.consumable)) }
            try queue.ledger.close()
            try await body(workspace)
        }
    }

    @Test func listShowsAHundredRowsUnlessToldAndSaysHowManyMore() async throws {
        try await Self.withPurchases(105) { workspace in
            let text = try workspace.ledger("list")
            let lines = text.stdout.split(separator: "\n")
            #expect(lines.count == 101)
            #expect(lines.last == "... 5 more: ledger list --after 100 (with the same filters), or a larger --limit")
            let json = try workspace.json("list")
            #expect((json["transactions"] as? [Any])?.count == 100 && json["more"] as? Int == 5)
            let all = try workspace.json("list", "--limit", "1000")
            #expect((all["transactions"] as? [Any])?.count == 105 && all["more"] as? Int == 0)
            let rest = try workspace.json("list", "--after", "100")
            #expect((rest["transactions"] as? [[String: Any]])?.map { $0["id"] as? Int } == [101, 102, 103, 104, 105])
            let page = try workspace.ledger("list", "--limit", "3", "--after", "2")
            #expect(
                page.stdout.split(separator: "\n").count == 4 && page.stdout.contains("100 more: ledger list --after 5")
            )
            #expect(try workspace.ledger("list", "--state", "failed").stdout == "no transactions\n")
        }
    }

    /// `ledger list --json`'s document, as `Output.emit` would encode it whole: each
    /// transaction with its owner's name.
    struct ListDocument: Encodable {
        let more: Int
        let transactions: [Listed]
        let version: Int

        init(more: Int, transactions: [PaymentTransaction], version: Int) {
            self.more = more
            self.transactions = transactions.map {
                Listed(transaction: $0, customer: "default", app: "com.example.app")
            }
            self.version = version
        }
    }

    /// A transaction as `ledger list --json` writes it: its fields, `customer` and `app`.
    struct Listed: Encodable {
        let transaction: PaymentTransaction
        let customer: String
        let app: String

        enum Key: String, CodingKey { case customer, app }

        func encode(to encoder: any Encoder) throws {
            try transaction.encode(to: encoder)
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(customer, forKey: .customer)
            try container.encode(app, forKey: .app)
        }
    }

    @Test func theStreamedListIsByteForByteTheEncodersDocument() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            let queue = try PaymentQueue(path: workspace.database)
            let account = UUID()
            try await queue.add(
                Payment(
                    productID: SampleCatalog.nonConsumable, appAccountToken: account,
                    idempotencyKey: "quote\" back\\slash /"))
            try await queue.add(
                Payment(productID: SampleCatalog.nonConsumable2, applicationUsername: "tab\there\u{1}\u{1F}é😀"))
            try await queue.add(
                Payment(productID: SampleCatalog.consumable, simulatedOutcome: .failed(.paymentNotAllowed)))
            // an introductory offer, where the catalog has one
            try await queue.add(Payment(productID: SampleCatalog.subscription))
            try await StoreTestSession(queue: queue).refundTransaction(1)
            _ = await queue.restoreCompletedTransactions()
            let transactions = try queue.ledger.allTransactions()
            try queue.ledger.close()
            for limit in [nil, 1, 1_000] as [Int?] {
                let shown = limit.map { Array(transactions.prefix($0)) } ?? transactions
                let expected = try Output.encoder.encode(
                    ListDocument(more: transactions.count - shown.count, transactions: shown, version: 1))
                let result = try workspace.ledger(
                    arguments: ["list", "--json"] + (limit.map { ["--limit", "\($0)"] } ?? []))
                #expect(
                    result.stdout == String(decoding: expected, as: UTF8.self) + "\n",
                    "limit \(String(describing: limit))")
            }
            let empty = try workspace.ledger("list", "--json", "--state", "deferred")
            let expected = try Output.encoder.encode(ListDocument(more: 0, transactions: [], version: 1))
            #expect(empty.stdout == String(decoding: expected, as: UTF8.self) + "\n")
        }
    }

    /// `ledger launch --json` is written as it goes, in the bytes the encoder would write the
    /// whole document in.
    @Test func theStreamedLaunchIsByteForByteTheEncodersDocument() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            let queue = try PaymentQueue(path: workspace.database)
            try await queue.add(Payment(productID: SampleCatalog.nonConsumable, applicationUsername: "tab\there é"))
            try await queue.add(
                Payment(productID: SampleCatalog.consumable, simulatedOutcome: .failed(.paymentNotAllowed)))
            try await queue.add(Payment(productID: SampleCatalog.subscription))
            try queue.ledger.close()
            let result = try workspace.ledger("launch", "--json")
            let ledger = try Ledger.open(at: workspace.database)
            defer { try? ledger.close() }
            let delivered = try ledger.unfinishedTransactions()
            #expect(delivered.count == 3 && delivered.allSatisfy { $0.deliveryCount == 1 })
            let expected = try Output.encoder.encode(
                LaunchDocument(completedAtLaunch: [], delivered: delivered, finished: [], version: 1))
            #expect(result.stdout == String(decoding: expected, as: UTF8.self) + "\n")
        }
    }

    struct LaunchDocument: Encodable {
        let completedAtLaunch: [UInt64]
        let delivered: [PaymentTransaction]
        let finished: [UInt64]
        let version: Int
    }

    @Test func stringsAreEscapedAsJSONEncoderEscapesThem() throws {
        var random = SplitMix64(seed: 22)
        let alphabet: [Unicode.Scalar] = [
            "a", "Z", "/", "\"", "\\", "\n", "\r", "\t", "\u{0}", "\u{8}", "\u{C}", "\u{1B}", "\u{1F}",
            " ", "é", "\u{2028}", "\u{7F}", "😀", "中",
        ]
        for _ in 0..<500 {
            var value = String.UnicodeScalarView()
            for _ in 0..<Int(random.next() % 12) { value.append(alphabet[Int(random.next() % UInt64(alphabet.count))]) }
            let string = String(value)
            var written: [UInt8] = []
            TransactionJSON.appendString(string, to: &written)
            let encoded = String(decoding: try Output.encoder.encode([string]), as: UTF8.self)
            // The encoder writes ["..."] as "[\n  \"...\"\n]".
            #expect("[\n  " + String(decoding: written, as: UTF8.self) + "\n]" == encoded, "\(string.debugDescription)")
        }
    }

    @Test func datesAreWrittenAsFoundationFormatsThem() {
        var random = SplitMix64(seed: 9)
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        for _ in 0..<2_000 {
            // Whole milliseconds (the ledger's precision) from 1970 to 9999.
            let milliseconds = Int64(random.next() % 253_402_300_799_999)
            let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            // Foundation truncates the binary fraction, so it may print one millisecond less
            // than the one stored; a tenth of a millisecond more shows it the stored one.
            #expect(
                InternetDate.string(from: date) == date.addingTimeInterval(0.000_1).formatted(style), "\(milliseconds)")
        }
        #expect(InternetDate.string(from: Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(InternetDate.string(from: Date(timeIntervalSince1970: 951_782_400.5)) == "2000-02-29T00:00:00.500Z")
        // Before 1582 too, the calendar the store's dates are parsed in: proleptic Gregorian
        // (Foundation's formatter turned to the Julian calendar there: 0999-12-27).
        #expect(InternetDate.string(from: Date(timeIntervalSince1970: -354_285 * 86_400)) == "1000-01-01T00:00:00.000Z")
    }

    @Test func typoDistancesAndSuggestions() {
        #expect(Suggestion.editDistance(Array("lsit"), Array("list")) == 1)  // a transposition is one edit
        #expect(Suggestion.editDistance(Array("kitten"), Array("sitting")) == 3)
        #expect(Suggestion.editDistance(Array(""), Array("abc")) == 3)
        #expect(Suggestion.nearest(to: "purchse", among: ["purchase", "products", "promotions"]) == "purchase")
        #expect(Suggestion.nearest(to: "zzz", among: ["list", "show"]) == nil)
        #expect(
            Suggestion.nearest(to: String(repeating: "a", count: 200), among: [String(repeating: "a", count: 200)])
                == nil)
        // Seeded: stopping early never changes a distance within the limit.
        var random = SplitMix64(seed: 64)
        for _ in 0..<300 {
            let a = (0..<Int(random.next() % 10)).map { _ in Character(Unicode.Scalar(UInt8(97 + random.next() % 4))) }
            let b = (0..<Int(random.next() % 10)).map { _ in Character(Unicode.Scalar(UInt8(97 + random.next() % 4))) }
            let limit = Int(random.next() % 4)
            let full = Suggestion.editDistance(a, b)
            let early = Suggestion.editDistance(a, b, giveUpAbove: limit)
            #expect(min(full, limit + 1) == min(early, limit + 1), "\(a) \(b) \(limit)")
        }
    }

    @Test func theDemoExplainsDeliveriesAndShowsItsObserver() async throws {
        try await CLIWorkspace.empty { workspace in
            let result = try LedgerProcess.run(["demo", "--database", workspace.directory + "/demo.sqlite"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("final class StoreObserver: PaymentTransactionObserver {"))
            #expect(result.stdout.contains("`delivered 2x`"))
            // Step 5 shows the failed transaction as the ledger holds it after the observer finished it.
            let failedLine = try #require(result.stdout.split(separator: "\n").first { $0.contains("  failed  ") })
            #expect(failedLine.contains("finished") && !failedLine.contains("unfinished"), "\(failedLine)")
            #expect(
                result.stdout.contains(
                    "Delivered 2x: the observer was told when it was purchasing and again when it failed."))
        }
    }
}
