import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import Testing

/// Hostile inputs found by outside testing: each is refused with a clear error and an exit
/// code, never a crash (a trap is exit 132 or 133).
@Suite struct HardeningCLITests {
    /// Every command that takes a transaction id, with the id in its place.
    static let idCommands: [[String]] = [
        ["approve"], ["decline"], ["finish"], ["show"], ["refund"], ["store", "resolve"], ["store", "delete"], ["jws"],
    ]

    @Test func idsPastTheLargestStoredOneAreUnknownTransactions() async throws {
        var random = SplitMix64(seed: 63)
        let ids =
            ["9223372036854775807", "9223372036854775808", "18446744073709551615"]
            + (0..<3).map { _ in String(UInt64(Int64.max) + 1 + random.next() % UInt64(Int64.max)) }
        try await CLIWorkspace.withCatalog { workspace in
            for command in Self.idCommands {
                for id in ids {
                    let result = try workspace.ledger(arguments: command + [id])
                    #expect(result.status == 1, "\(command) \(id): exit \(result.status) \(result.stderr)")
                    let expected =
                        command == ["store", "resolve"] && id == "9223372036854775807"
                        ? "is not an interrupted purchase" : "unknown transaction \(id)"
                    #expect(result.stderr.contains(expected), "\(command) \(id): \(result.stderr)")
                }
                // Past UInt64 altogether: a usage error, as any malformed id.
                #expect(try workspace.ledger(arguments: command + ["18446744073709551616"]).status == 64, "\(command)")
            }
        }
    }

    @Test func datesInOtherDigitsAreRefusedAsBadInput() async throws {
        // Unicode decimal digits that are not ASCII: fullwidth, Arabic-Indic, Devanagari, Bengali.
        let zeros: [UInt32] = [0xFF10, 0x0660, 0x0966, 0x09E6]
        var random = SplitMix64(seed: 2)
        try await CLIWorkspace.withCatalog { workspace in
            for _ in 0..<12 {
                var date = Array("2030-06-15T12:30:45Z")
                let position = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18][Int(random.next() % 14)]
                let zero = zeros[Int(random.next() % UInt64(zeros.count))]
                date[position] = Character(Unicode.Scalar(zero + UInt32(date[position].wholeNumberValue!))!)
                let text = String(date)
                // In the date: no date at all; in the time: something after the date.
                let why = position < 10 ? "expected YYYY-MM-DD, in ASCII digits" : "unexpected"
                for command in [["clock", "set", text]]
                    + (position < 10 ? [["clock", "set", String(text.prefix(10))]] : [])
                {
                    let result = try workspace.ledger(arguments: command)
                    #expect(result.status == 65, "\(command): exit \(result.status) \(result.stderr)")
                    #expect(result.stderr.contains("invalid date") && result.stderr.contains(why), "\(result.stderr)")
                }
            }
            #expect(try workspace.ledger("clock", "set", "2030-06-15").status == 0)
        }
    }

    @Test func aStoreKitFileWithATimeRateXcodeHasNotIsRefused() async throws {
        var random = SplitMix64(seed: 11)
        let unknown =
            [-1, 7, 14, 999, 1006, Int(Int32.max)] + (0..<4).map { _ in 1_006 + Int(random.next() % 100_000) }
        try await CLIWorkspace.withCatalog { workspace in
            let before = try workspace.json("store", "show")["timeRate"] as? String
            for rate in unknown {
                let file = workspace.directory + "/rate.storekit"
                let catalog =
                    #"{"products": [], "settings": {"_timeRate": \#(rate)}, "version": {"major": 4, "minor": 0}}"#
                try Data(catalog.utf8).write(to: URL(fileURLWithPath: file))
                for command in [["store", "import", file], ["products", "import", file]] {
                    let result = try workspace.ledger(arguments: command)
                    #expect(result.status == 65, "\(command) \(rate): \(result.stderr)")
                    #expect(
                        result.stderr.contains("settings._timeRate")
                            && result.stderr.contains("one of Xcode's time rates"), "\(result.stderr)")
                }
            }
            #expect(try workspace.json("store", "show")["timeRate"] as? String == before, "nothing changed")
        }
    }

    /// The App Store's milliunits of a price the rule accepts, computed from its digits.
    static func milliunits(_ text: String) -> Int64 {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        let fraction = Array(parts.count == 2 ? parts[1] : "")
        var value =
            Int64(parts[0])! * 1000 + Int64(
                String(fraction.prefix(3)).padding(toLength: 3, withPad: "0", startingAt: 0))!
        if fraction.count > 3, fraction[3].wholeNumberValue! >= 5 { value += 1 }  // rounded half up
        return value
    }

    /// Ten of the highest price the catalog takes cost more milliunits than 64 bits hold: the
    /// purchase is refused (it signed a transaction with no price and no currency), the file
    /// unchanged; nine fit, and are signed with their price.
    @Test func aPurchaseWhoseWholePriceCannotBeSignedIsRefused() async throws {
        try await CLIWorkspace.empty { workspace in
            let file = workspace.directory + "/dear.storekit"
            try write(
                #"{"products": [{"productID": "gold", "type": "Consumable", "displayPrice": "999999999999999.99"}], "version": {"major": 4, "minor": 0}}"#,
                to: file)
            #expect(try workspace.ledger("products", "import", file).status == 0)
            let before = fileBytes(workspace.database)
            let refused = try workspace.ledger("purchase", "gold", "--quantity", "10")
            #expect(refused.status == 1, "\(refused.stderr)")
            #expect(
                refused.stderr.contains("10 of gold cost more than a signed transaction's price can hold"),
                "\(refused.stderr)")
            #expect(fileBytes(workspace.database) == before, "nothing changed")
            let bought = try workspace.json("purchase", "gold", "--quantity", "9")
            let payload = try workspace.json("jws", "\(bought["id"] as? Int ?? 0)")["payload"] as? [String: Any]
            #expect((payload?["price"] as? NSNumber)?.int64Value == 8_999_999_999_999_999_910)
            #expect(payload?["currency"] as? String == "USD")
        }
    }

    /// The store's time ends with 9999: a subscription bought at its last day, renewed or
    /// extended there, never expires in the year 10000.
    @Test func noSubscriptionPeriodRunsPastTheEndOfTime() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            #expect(try workspace.ledger("clock", "set", "9999-12-20").status == 0)
            let bought = try workspace.json("purchase", "com.example.pro.monthly")
            #expect(bought["expirationDate"] as? String == "9999-12-31T23:59:59.000Z", "\(bought)")
            #expect(try workspace.ledger("clock", "advance", "P1Y").status == 65, "the clock stops at the end of 9999")
            #expect(try workspace.ledger("clock", "set", "9999-12-31T23:59:59Z").status == 0)
            let listed = try workspace.json("list")["transactions"] as? [[String: Any]] ?? []
            let expirations = listed.compactMap { $0["expirationDate"] as? String }
            #expect(!expirations.isEmpty && expirations.allSatisfy { $0.hasPrefix("9999-") }, "\(expirations)")
            #expect(listed.count == 1, "no renewal starts at the last second: \(listed.count)")
            #expect(try workspace.ledger("verify").status == 0)
        }
    }

    /// A subscription's offers of one kind are bounded (App Store Connect's 10) and named once
    /// each; a key given twice in one object is refused (which value it meant was the reader's
    /// choice). Each refusal names what it found, and imports nothing.
    @Test func offersAreBoundedAndNamedOnceAndKeysAreGivenOnce() async throws {
        func catalog(_ offers: String, key: String = "winbackOffers") -> String {
            #"{"subscriptionGroups": [{"id": "g", "name": "G", "subscriptions": [{"productID": "s", "displayPrice": "1.99", "groupNumber": 1, "recurringSubscriptionPeriod": "P1M", "\#(key)": [\#(offers)]}]}], "version": {"major": 4, "minor": 0}}"#
        }
        func winBack(_ id: String) -> String {
            #"{"offerID": "\#(id)", "paymentMode": "free", "subscriptionPeriod": "P1M"}"#
        }
        try await CLIWorkspace.empty { workspace in
            let cases: [(name: String, text: String, expected: String)] = [
                ("eleven", catalog((0..<11).map { winBack("w\($0)") }.joined(separator: ",")), "at most 10 offers"),
                (
                    "twice", catalog(winBack("w") + "," + winBack("w")),
                    #"an identifier no other offer of the list has, found "w""#
                ),
                (
                    "codes",
                    catalog(
                        #"{"referenceName": "C", "paymentMode": "free", "subscriptionPeriod": "P1M"}"#,
                        key: "codeOffers"
                    ).replacingOccurrences(
                        of: "}]}]}]",
                        with:
                            "}, {\"referenceName\": \"C\", \"paymentMode\": \"free\", \"subscriptionPeriod\": \"P1M\"}]}]}]"
                    ),
                    #"found "C""#
                ),
                (
                    "key",
                    #"{"products": [{"productID": "a", "productID": "b", "type": "Consumable", "displayPrice": "1"}], "version": {"major": 4, "minor": 0}}"#,
                    #"the key "productID" is given twice in one object"#
                ),
            ]
            for (name, text, expected) in cases {
                let file = workspace.directory + "/\(name).storekit"
                try write(text, to: file)
                let refused = try workspace.ledger("products", "import", file)
                #expect(refused.status == 65 && refused.stderr.contains(expected), "\(name): \(refused.stderr)")
                #expect(!FileManager.default.fileExists(atPath: workspace.database), "\(name): nothing imported")
            }
            let ten = workspace.directory + "/ten.storekit"
            try write(catalog((0..<10).map { winBack("w\($0)") }.joined(separator: ",")), to: ten)
            #expect(try workspace.ledger("products", "import", ten).status == 0)
        }
    }

    /// The JWS that gives or withholds the introductory offer is refused in its own words, not
    /// as a promotional offer's signature.
    @Test func anIntroductoryOfferEligibilityRefusalSaysWhatItRefuses() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            let refused = try workspace.ledger(
                "purchase", "com.example.pro.monthly", "--introductory-offer-eligibility", "not-a-jws")
            #expect(refused.status != 0)
            #expect(!refused.stderr.contains("promotional"), "\(refused.stderr)")
            #expect(refused.stderr.contains("the offer's signature is not valid"), "\(refused.stderr)")
        }
    }

    @Test func pricesAreKeptExactlyOrRefused() async throws {
        var random = SplitMix64(seed: 6)
        func digits(_ count: Int) -> String { String((0..<count).map { _ in Character(String(random.next() % 10)) }) }
        var prices = [
            "10000000000000000.00", "9223372036854775.807", "999999999999999.999", "0.99", "0", "600",
            String(repeating: "9", count: 40), "000000000000000000001.5",
        ]
        for _ in 0..<24 {
            let whole = "1" + digits(Int(random.next() % 19))
            let fraction = digits(Int(random.next() % 7))
            prices.append(fraction.isEmpty ? whole : whole + "." + fraction)
        }
        try await CLIWorkspace.empty { workspace in
            for (index, price) in prices.enumerated() {
                let parts = price.split(separator: ".", omittingEmptySubsequences: false)
                let integerDigits = parts[0].drop { $0 == "0" }.count
                let accepted = integerDigits <= 15 && integerDigits + (parts.count == 2 ? parts[1].count : 0) <= 18
                let file = workspace.directory + "/price-\(index).storekit"
                let catalog =
                    #"{"products": [{"productID": "p\#(index)", "type": "NonConsumable", "displayPrice": "\#(price)"}], "version": {"major": 4, "minor": 0}}"#
                try Data(catalog.utf8).write(to: URL(fileURLWithPath: file))
                let imported = try workspace.ledger("products", "import", file)
                guard accepted else {
                    #expect(imported.status == 65, "\(price) was accepted")
                    #expect(
                        imported.stderr.contains("displayPrice") && imported.stderr.contains("at most 18 digits"),
                        "\(imported.stderr)")
                    continue
                }
                #expect(imported.status == 0, "\(price): \(imported.stderr)")
                let bought = try workspace.json("purchase", "p\(index)")
                let payload = try workspace.json("jws", "\(bought["id"] as? Int ?? 0)")["payload"] as? [String: Any]
                #expect((payload?["price"] as? NSNumber)?.int64Value == Self.milliunits(price), "\(price)")
            }
        }
    }

    /// The ledger's rules live in its schema (triggers, rule tables): an edit of either is a
    /// problem `verify` reports, and a backup of such a ledger does not pass as verified.
    @Test(
        .enabled(
            if: SQLiteShell.shouldRun,
            "the sqlite3 shell is not installed (apt-get install sqlite3; .ci/run installs it)"),
        arguments: [
            ("DROP TRIGGER transactions_finish_rule", "schema: trigger transactions_finish_rule is missing"),
            (
                "PRAGMA writable_schema = ON; DELETE FROM sqlite_schema WHERE type = 'trigger'",
                "schema: trigger transactions_legal_transition is missing"
            ),
            (
                "UPDATE rule_states SET finishable = 1 WHERE state = 'deferred'",
                "schema: the rules of rule_states differ from this version's"
            ),
            ("DELETE FROM rule_transitions", "schema: the rules of rule_transitions differ from this version's"),
            ("DROP INDEX transactions_idempotency_key", "schema: index transactions_idempotency_key is missing"),
            (
                "CREATE TRIGGER sneaky AFTER INSERT ON transactions BEGIN SELECT 1; END",
                "schema: trigger sneaky is not this version's"
            ),
        ])
    func verifyFindsTheRulesOfTheDatabaseEdited(_ edit: String, _ expected: String) async throws {
        let shell = try #require(SQLiteShell.path, "STORELEDGER_SQLITE3 is set, but: \(SQLiteShell.unavailableReason)")
        try await CLIWorkspace.withCatalog { workspace in
            try workspace.ledger("purchase", "com.example.level1")
            #expect(try workspace.ledger("verify").status == 0)
            let edited = try runProcess(shell, [workspace.database, edit])
            #expect(edited.status == 0, "\(edited.output)")
            let verified = try workspace.ledger("verify")
            #expect(verified.status == 2, "\(edit): \(verified.stdout)")
            #expect(verified.stdout.contains(expected), "\(edit): \(verified.stdout)")
            let backup = try workspace.ledger("backup", workspace.directory + "/copy.sqlite")
            #expect(backup.status != 0, "\(edit): a backup of it passed as verified")
        }
    }

    @Test func argumentParsersMessagesAreBoundedAndEscapedAndNoWordSneaksInTheHelp() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            // A huge value with an escape sequence: quoted cut short, the ESC shown, not sent.
            let hostile = "\u{1B}[31m" + String(repeating: "a", count: 120_000)
            for json in [false, true] {
                let result = try workspace.ledger(
                    arguments: ["purchase", "x", "--quantity", hostile] + (json ? ["--json"] : []))
                #expect(result.status == 64)
                #expect(result.stderr.utf8.count < 5_000, "\(result.stderr.utf8.count) bytes")
                #expect(!result.stderr.contains("\u{1B}"), "a raw escape reached the terminal")
                #expect(result.stderr.contains(" bytes)"), "\(result.stderr.prefix(300))")  // says how long it was
            }
            // Words argument-parser would read as -d -a -s -h ... (the help, exit 0).
            for arguments in [["purchase", "-dash.start"], ["finish", "-h9"], ["show", "-hx"]] {
                let result = try workspace.ledger(arguments: arguments)
                #expect(result.status == 64, "\(arguments): exit \(result.status)")
                #expect(
                    result.stderr.contains("unknown option") && result.stdout.isEmpty, "\(arguments): \(result.stderr)")
            }
            let escaped = try LedgerProcess.run(["--database", workspace.database, "purchase", "--", "-dash.start"])
            #expect(
                escaped.status == 1 && escaped.stderr.contains(#"unknown product "-dash.start""#), "\(escaped.stderr)")
            #expect(try workspace.ledger("list", "-h").status == 0, "-h alone is still the help")
        }
    }

    @Test func idempotencyKeysAreBoundedInBytes() async throws {
        var random = SplitMix64(seed: 15)
        let pieces = ["a", "é", "中", "😀", "👩‍👩‍👧‍👦", "e\u{301}"]
        try await CLIWorkspace.withCatalog { workspace in
            for index in 0..<16 {
                var key = "k\(index)-"
                let target = 200 + Int(random.next() % 120)
                while key.utf8.count < target { key += pieces[Int(random.next() % UInt64(pieces.count))] }
                let result = try workspace.ledger("purchase", "com.example.rocket_car", "--idempotency-key", key)
                if key.utf8.count <= 256 {
                    #expect(result.status == 0, "\(key.utf8.count) bytes: \(result.stderr)")
                } else {
                    #expect(result.status == 65, "\(key.utf8.count) bytes (\(key.count) characters) was accepted")
                    #expect(
                        result.stderr.contains("(\(key.utf8.count) bytes): it must be 1 to 256 bytes of UTF-8"),
                        "\(result.stderr)")
                }
            }
            // One family emoji is one character and 25 bytes: eleven of them are 275 bytes.
            let family = String(repeating: "👩‍👩‍👧‍👦", count: 11)
            #expect(
                try workspace.ledger("purchase", "com.example.rocket_car", "--idempotency-key", family).status == 65)
        }
    }

    @Test(arguments: [
        (" padded", false), ("padded ", false), ("e\u{301}clair", false), ("\u{E9}clair", true), ("plain.id", true),
    ])
    func productIdentifiersThatWouldSplitInTwoAreRefused(_ id: String, _ accepted: Bool) async throws {
        try await CLIWorkspace.empty { workspace in
            let file = workspace.directory + "/ids.storekit"
            let escaped = id.unicodeScalars.map { $0.isASCII ? String($0) : String(format: "\\u%04x", $0.value) }
                .joined()
            try Data(
                #"{"products": [{"productID": "\#(escaped)", "type": "Consumable", "displayPrice": "1"}], "version": {"major": 4, "minor": 0}}"#
                    .utf8
            )
            .write(to: URL(fileURLWithPath: file))
            let result = try workspace.ledger("products", "import", file)
            #expect(result.status == (accepted ? 0 : 65), "\(id.debugDescription): \(result.stderr)")
            if !accepted { #expect(result.stderr.contains("products[0].productID"), "\(result.stderr)") }
        }
    }

    /// Read commands never write, even with renewals due (a fast time rate and real time
    /// passing): the file stays byte for byte what it was.
    @Test func readCommandsNeverWriteEvenWithRenewalsDue() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            try workspace.ledger("store", "set", "timeRate", "oneRenewalEveryTwoSeconds")
            try workspace.ledger("purchase", SampleCatalog.subscription)
            try await Task.sleep(for: .seconds(2.5))  // a renewal is now due, not made
            let before = try RefusedCommandTests.snapshot(workspace.database)
            for arguments in [
                ["subscriptions", "status", "Pro"], ["list"], ["show", "1"], ["info"], ["verify"], ["jws", "1"],
                ["clock", "show"], ["store", "show"], ["products", "list"], ["promotions", "list"],
            ] {
                let result = try workspace.ledger(arguments: arguments)
                #expect(result.status == 0, "\(arguments): \(result.stderr)")
                let after = try RefusedCommandTests.snapshot(workspace.database)
                #expect(after.0 == before.0 && after.1 == before.1, "\(arguments) wrote to the ledger")
            }
            let launched = try workspace.json("launch")
            #expect((launched["delivered"] as? [Any])?.isEmpty == false, "the app's launch makes the renewal")
        }
    }

    /// The hidden files of a creation, backup or export that a killed process left are removed
    /// by the next one in that folder; a live process's, and names not of ours, stay.
    @Test func temporaryFilesOfKilledProcessesAreRemovedByTheNextCreation() async throws {
        let exited = Process()
        exited.executableURL = URL(fileURLWithPath: "/bin/true")
        try exited.run()
        exited.waitUntilExit()
        let dead = exited.processIdentifier
        let alive = ProcessInfo.processInfo.processIdentifier
        try await CLIWorkspace.withCatalog { workspace in
            let stale = [
                ".ledger.sqlite.creating-\(dead)-1", ".ledger.sqlite.creating-\(dead)-1-wal",
                ".copy.sqlite.backup-\(dead)-22",
                ".my-audit.jsonl.writing-\(dead)-333", ".root.pem.writing-\(dead)-4-journal",
            ]
            let kept = [
                ".ledger.sqlite.creating-\(alive)-5", ".notes-\(dead)-6", "visible.backup-\(dead)-7",
                ".x.sqlite.backup-\(dead)-nope",
            ]
            for (index, command) in [
                ["init", "--database", workspace.directory + "/other.sqlite"],
                ["backup", workspace.directory + "/copy.sqlite", "--database", workspace.database],
                ["audit", "export", workspace.directory + "/audit.jsonl", "--database", workspace.database],
            ].enumerated() {
                for name in stale + kept {
                    _ = FileManager.default.createFile(atPath: workspace.directory + "/" + name, contents: Data())
                }
                let result = try LedgerProcess.run(command)
                #expect(result.status == 0, "\(command): \(result.stderr)")
                let left = Set(try FileManager.default.contentsOfDirectory(atPath: workspace.directory))
                #expect(left.isDisjoint(with: stale), "\(index) \(command): left \(left.intersection(stale))")
                #expect(Set(kept).isSubset(of: left), "\(command) removed \(Set(kept).subtracting(left))")
            }
        }
    }

    /// A row edited outside the ledger (its digest differs from its last event's) is never
    /// signed, and no write changes or deletes it, since its new event would record the edit as
    /// the ledger's; the rest of the ledger works on.
    @Test(
        .enabled(
            if: SQLiteShell.shouldRun,
            "the sqlite3 shell is not installed (apt-get install sqlite3; .ci/run installs it)"))
    func aRowEditedOutsideTheLedgerIsNeitherSignedNorChanged() async throws {
        let shell = try #require(SQLiteShell.path, "STORELEDGER_SQLITE3 is set, but: \(SQLiteShell.unavailableReason)")
        try await CLIWorkspace.withCatalog { workspace in
            try workspace.ledger("purchase", "com.example.level1")  // 1, unfinished
            try workspace.ledger("purchase", "com.example.level2", "--outcome", "deferred")  // 2
            let edit = "UPDATE transactions SET storefront = 'FRA' WHERE id IN (1, 2)"
            #expect(try runProcess(shell, [workspace.database, edit]).status == 0)
            #expect(try workspace.ledger("verify").status == 2)
            let before = try RefusedCommandTests.snapshot(workspace.database)
            for arguments in [
                ["jws", "1"], ["finish", "1"], ["approve", "2"], ["launch"], ["refund", "1"], ["store", "delete", "1"],
                ["store", "clear"], ["restore"],
            ] {
                let result = try workspace.ledger(arguments: arguments)
                // A restore reports its failure as its outcome (exit 1, the reason on stdout).
                let restore = arguments == ["restore"]
                #expect(result.status == (restore ? 1 : 74), "\(arguments): exit \(result.status) \(result.stdout)")
                #expect(restore || result.stdout.isEmpty, "\(arguments) printed \(result.stdout)")
                #expect(
                    (result.stderr + result.stdout).contains("differs from what its history recorded"),
                    "\(arguments): \(result.stderr)")
                let after = try RefusedCommandTests.snapshot(workspace.database)
                #expect(after.0 == before.0, "\(arguments) changed the ledger")
            }
            // Rows the history vouches for are used as before.
            let other = try workspace.json("purchase", "com.example.rocket_car")
            #expect(other["state"] as? String == "purchased")
            #expect(try workspace.ledger("jws", "\(other["id"] as? Int ?? 0)").status == 0)
        }
    }

    @Test func resolvingAgainAfterTheReplacementWasDeletedSaysSo() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            try workspace.ledger("purchase", "com.example.level1", "--outcome", "interrupted")  // 1
            let waiting = try workspace.ledger("store", "resolve", "1")
            #expect(waiting.stdout.contains("the new purchase arrives when the app finishes #1"), "\(waiting.stdout)")
            let finished = try workspace.json("finish", "1")
            let replacement = try #require((finished["replacements"] as? [[String: Any]])?.first?["id"] as? Int)
            #expect(try workspace.ledger("store", "delete", "\(replacement)").status == 0)
            let again = try workspace.ledger("store", "resolve", "1")
            #expect(again.status == 0)
            #expect(again.stdout.contains("its new purchase #\(replacement) was deleted"), "\(again.stdout)")
            #expect(!again.stdout.contains("arrives when the app finishes"))
        }
    }

    /// A backup or an export that cannot be written blames its destination (exit 73, as
    /// sysexits' EX_CANTCREAT), never the ledger; a ledger that fails verification is blamed
    /// for its own backup.
    @Test func aFileThatCannotBeWrittenBlamesTheRightFile() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            try workspace.ledger("purchase", "com.example.level1")
            let nowhere = workspace.directory + "/no-such-folder"
            for arguments in [
                ["backup", nowhere + "/copy.sqlite"], ["audit", "export", nowhere + "/audit.jsonl"],
                ["certificate", "export", "--output", nowhere + "/root.pem"],
            ] {
                let result = try workspace.ledger(arguments: arguments)
                #expect(result.status == 73, "\(arguments): exit \(result.status)")
                #expect(
                    result.stderr.contains("error: cannot write \(nowhere)/")
                        && !result.stderr.contains("cannot use the ledger"),
                    "\(arguments): \(result.stderr)")
                let json = try workspace.ledger(arguments: arguments + ["--json"])
                #expect(try FrontDoorCLITests.jsonError(json)["code"] as? String == "cannotWrite")
            }
        }
    }

    @Test(
        .enabled(
            if: SQLiteShell.shouldRun,
            "the sqlite3 shell is not installed (apt-get install sqlite3; .ci/run installs it)"))
    func aBackupOfALedgerThatFailsVerificationBlamesTheLedger() async throws {
        let shell = try #require(SQLiteShell.path, "STORELEDGER_SQLITE3 is set, but: \(SQLiteShell.unavailableReason)")
        try await CLIWorkspace.withCatalog { workspace in
            try workspace.ledger("purchase", "com.example.level1")
            #expect(
                try runProcess(shell, [workspace.database, "UPDATE transactions SET storefront = 'FRA' WHERE id = 1"])
                    .status == 0)
            let copy = workspace.directory + "/copy.sqlite"
            let result = try workspace.ledger("backup", copy)
            #expect(result.status == 74)
            #expect(
                result.stderr.contains(
                    "cannot use the ledger \(workspace.database): it does not verify, so no backup was written"),
                "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: copy))
        }
    }

    /// A negative number after an option is its value, as after `=`: one answer for both.
    @Test func aNegativeValueReadsTheSameWithOrWithoutEquals() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            for (command, option, value) in [
                (["purchase", "com.example.level1"], "--quantity", "-1"), (["list"], "--limit", "-3"),
                (["list"], "--wait", "-1"),
                (["purchase", "com.example.level1", "--promotional-offer", "x"], "--offer-timestamp", "-5"),
            ] {
                let spaced = try workspace.ledger(arguments: command + [option, value])
                let glued = try workspace.ledger(arguments: command + ["\(option)=\(value)"])
                #expect(
                    spaced.status == glued.status && spaced.status != 0,
                    "\(option) \(value): \(spaced.status) vs \(glued.status)")
                #expect(!spaced.stderr.contains("Missing value"), "\(option) \(value): \(spaced.stderr)")
            }
        }
    }

    /// A full disk or an I/O error says so in words, not as a bare SQLite code.
    @Test(arguments: [
        ("disk-full@write:1", "the disk is full (SQLite error 13): free some space"),
        ("io@write:1", "an I/O error (SQLite error"), ("io@sync:1", "the disk may be full or failing"),
    ])
    func storageFailuresAreExplained(_ fault: String, _ expected: String) async throws {
        try await CLIWorkspace.withCatalog { workspace in
            let result = try LedgerProcess.run(
                ["ledger", "purchase", "com.example.level1", "--database", workspace.database],
                environment: ["STORELEDGER_FAULT": fault], program: .lab)
            #expect(result.status == 74, "\(fault): \(result.stderr)")
            #expect(result.stderr.contains(expected), "\(fault): \(result.stderr)")
        }
    }

    /// `ledger launch` writes each batch of deliveries as it comes (memory does not grow with
    /// the number delivered: `ledger-lab bench --workloads redelivery`), in the order and the
    /// bytes a single document would have.
    @Test func aLargeLaunchIsWrittenBatchByBatch() async throws {
        try await CLIWorkspace.empty { workspace in
            let ledger = try SampleCatalog.ledger(in: workspace.directory)
            let ids = try ledger.appendSyntheticPurchases(
                productID: SampleCatalog.consumable, finished: 0, unfinished: 2_345)
            try ledger.close()
            try FileManager.default.copyItem(atPath: workspace.database, toPath: workspace.directory + "/copy.sqlite")
            let text = try workspace.ledger("launch", "--finish")
            #expect(text.status == 0, "\(text.stderr)")
            let lines = text.stdout.split(separator: "\n").map(String.init)
            // Each batch's deliveries, then the finishes of that batch.
            var expected: [String] = []
            for batch in stride(from: 0, to: ids.count, by: 1_000).map({ Array(ids[$0..<min($0 + 1_000, ids.count)]) })
            {
                expected += batch.map { "delivered #\($0)" } + batch.map { "finished #\($0)" }
            }
            #expect(
                lines.map {
                    $0.hasPrefix("delivered")
                        ? String($0.prefix { $0 != " " }) + " " + String($0.split(separator: " ")[1]) : $0
                }
                    == expected)
            #expect(try workspace.ledger("launch").stdout == "nothing delivered: no unfinished transactions\n")

            let json = try LedgerProcess.run([
                "launch", "--finish", "--json", "--database", workspace.directory + "/copy.sqlite",
            ])
            #expect(json.status == 0, "\(json.stderr)")
            let document = try json.json()
            #expect(
                ((document["delivered"] as? [[String: Any]]) ?? []).compactMap { ($0["id"] as? NSNumber)?.uint64Value }
                    == ids)
            #expect(((document["finished"] as? [NSNumber]) ?? []).map(\.uint64Value) == ids)
            #expect((document["completedAtLaunch"] as? [Any])?.isEmpty == true && document["version"] as? Int == 1)
        }
    }
}
