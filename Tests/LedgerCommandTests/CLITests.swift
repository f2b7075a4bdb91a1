import Foundation
import LedgerTestSupport
import LedgerTesting
import Testing

@Suite struct CLIReadCommandTests {
    @Test(arguments: [
        ["list"], ["show", "1"], ["info"], ["products", "list"], ["products", "request", "a"],
        ["launch"], ["finish", "1"], ["purchase", "com.example.level1"], ["approve", "1"],
    ])
    func commandsOnAMissingLedgerExit66AndCreateNothing(_ arguments: [String]) async throws {
        try await CLIWorkspace.empty { (workspace: CLIWorkspace) throws in
            let result = try LedgerProcess.run(arguments + ["--database", workspace.database])
            #expect(result.status == 66)
            #expect(result.stderr.contains("no ledger at \(workspace.database) (create one with `ledger init`"))
            #expect(result.stdout.isEmpty)
            #expect(!FileManager.default.fileExists(atPath: workspace.database))
        }
    }

    @Test func initCreatesAnOwnerOnlyLedgerOnceAndInfoDescribesIt() async throws {
        try await CLIWorkspace.empty { (workspace: CLIWorkspace) throws in
            let created = try workspace.json("init")
            #expect(created["created"] as? Bool == true)
            let attributes = try FileManager.default.attributesOfItem(atPath: workspace.database)
            #expect(attributes[.posixPermissions] as? Int == 0o600)
            #expect(try workspace.json("init")["created"] as? Bool == false)
            let info = try workspace.json("info")
            let migrations = try #require(info["migrations"] as? [String])
            #expect(
                migrations.count
                    == (try FileManager.default.contentsOfDirectory(atPath: Repository.root + "/migrations")).filter {
                        $0.hasSuffix(".sql")
                    }.count)
            #expect(info["schemaVersion"] as? String == migrations.last)
            #expect(info["durability"] as? String == "full")
            #expect((info["counts"] as? [String: Any])?["transactions"] as? Int == 0)
            #expect(try workspace.json("info", "--durability", "normal")["durability"] as? String == "normal")
        }
    }

    @Test func theDatabaseDefaultsToTheEnvironmentThenTheCurrentFolder() async throws {
        try await CLIWorkspace.empty { (workspace: CLIWorkspace) throws in
            let fromEnvironment = workspace.directory + "/env.sqlite"
            #expect(try LedgerProcess.run(["init"], environment: ["LEDGER_DATABASE": fromEnvironment]).status == 0)
            #expect(FileManager.default.fileExists(atPath: fromEnvironment))
            #expect(try LedgerProcess.run(["init"], currentDirectory: workspace.directory).status == 0)
            #expect(FileManager.default.fileExists(atPath: workspace.directory + "/ledger.sqlite"))
        }
    }
}

@Suite struct CLIProductTests {
    @Test func importThenRequestSplitsValidAndInvalidIdentifiers() async throws {
        try await CLIWorkspace.withCatalog { (workspace: CLIWorkspace) throws in
            let response = try workspace.json("products", "request", "com.example.level1", "com.example.unknown")
            let products = try #require(response["products"] as? [[String: Any]])
            #expect(products.map { $0["id"] as? String } == ["com.example.level1"])
            #expect(products.first?["price"] as? String == "0.99")
            #expect(products.first?["displayPrice"] as? String == "$0.99")
            #expect(response["invalidProductIdentifiers"] as? [String] == ["com.example.unknown"])
            let listed = try #require(try workspace.json("products", "list")["products"] as? [[String: Any]])
            #expect(listed.count == 7)
        }
    }

    @Test func requestReadsIdentifierFiles() async throws {
        try await CLIWorkspace.withCatalog { (workspace: CLIWorkspace) throws in
            let ids = workspace.directory + "/products_v2.json"
            try write(#"["com.example.level2", "com.example.missing"]"#, to: ids)
            let response = try workspace.json(
                "products", "request", "--ids-file", ids,
                "--ids-file", Repository.fixture("ids-array.plist"))
            #expect(
                (response["products"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == ["com.example.level2"]
            )
            #expect((response["invalidProductIdentifiers"] as? [String])?.count == 4)
        }
    }

    @Test func pricesFollowTheStorefrontNotTheMachineLocale() async throws {
        try await CLIWorkspace.empty { (workspace: CLIWorkspace) throws in
            let path = Repository.fixture("v3.0-japan.storekit")
            #expect(try workspace.ledger("products", "import", path).status == 0)
            for machineLocale in ["en_US.UTF-8", "fr_FR.UTF-8", "C"] {
                let result = try workspace.ledger(
                    "products", "list", "--json", environment: ["LANG": machineLocale, "LC_ALL": machineLocale])
                let product = try #require((try result.json()["products"] as? [[String: Any]])?.first)
                #expect(product["currencyCode"] as? String == "JPY")
                let price = try #require(product["displayPrice"] as? String)
                #expect(price.hasSuffix("600") && !price.contains("."), "\(price)")
            }
        }
    }

    @Test func everyFixtureConfigurationImportsFromTheCLI() async throws {
        try await CLIWorkspace.empty { (workspace: CLIWorkspace) throws in
            let files = try Repository.fixtureNames(withExtension: "storekit").map(Repository.fixture)
            #expect(files.count == 8)
            let result = try workspace.ledger(["products", "import"] + files + ["--json"])
            #expect(result.status == 0, "\(result.stderr)")
            // The product counts of the eight files (see CatalogTests' fixtureContents): 2+2+10+5+4+2+7+6.
            #expect((try result.json()["imported"] as? [String])?.count == 38)
            let listed = try #require(try workspace.json("products", "list")["products"] as? [[String: Any]])
            #expect(listed.count == 38)
        }
    }

    /// The real-world corpus (files of other projects, present only beside CI), in one import.
    @Test(
        .enabled(
            if: Repository.realWorldCorpusIsPresent,
            "../shared/fixtures/real-world is absent (it exists only beside CI)"))
    func theRealWorldCorpusImportsFromTheCLIWhenPresent() async throws {
        let files = try #require(Repository.realWorldCorpus(withExtension: "storekit"))
        try await CLIWorkspace.empty { (workspace: CLIWorkspace) throws in
            let result = try workspace.ledger(["products", "import"] + files)
            #expect(result.status == 0, "\(result.stderr)")
        }
    }

    @Test func aMalformedFileExits65NamingTheKeyPathAndCreatesNothing() async throws {
        try await CLIWorkspace.empty { (workspace: CLIWorkspace) throws in
            let bad = workspace.directory + "/bad.storekit"
            try write(#"{"products": [{"productID": "a", "type": "Consumable", "displayPrice": "1.x"}]}"#, to: bad)
            let result = try workspace.ledger("products", "import", bad)
            #expect(result.status == 65)
            #expect(result.stderr.contains(bad) && result.stderr.contains("products[0].displayPrice"))
            #expect(!FileManager.default.fileExists(atPath: workspace.database))
            let missing = try workspace.ledger("products", "import", workspace.directory + "/nope.storekit")
            #expect(missing.status == 66)
            let list = try workspace.ledger("products", "import", Repository.fixture("ids-products.plist"))
            #expect(list.status == 65 && list.stderr.contains("list of product identifiers"))
            #expect(
                list.stderr.contains(
                    "(to buy these identifiers, request them with `ledger products request --ids-file`)"))
        }
    }
}

extension CLIWorkspace {
    @discardableResult
    func ledger(_ arguments: [String], environment: [String: String] = [:]) throws -> LedgerProcess.Result {
        try LedgerProcess.run(
            arguments + ["--database", database], environment: environment, currentDirectory: directory)
    }
}

@Suite struct CLIPurchaseTests {
    @Test func purchaseLaunchAndFinish() async throws {
        try await CLIWorkspace.withCatalog { (workspace: CLIWorkspace) throws in
            let bought = try workspace.json(
                "purchase", "com.example.level1", "--quantity", "2",
                "--account", "6F9619FF-8B86-D011-B42D-00C04FC964FF", "--idempotency-key", "order-1")
            #expect(bought["state"] as? String == "purchased" && bought["isFinished"] as? Bool == false)
            #expect(bought["quantity"] as? Int == 2 && bought["productType"] as? String == "nonConsumable")
            #expect(bought["appAccountToken"] as? String == "6F9619FF-8B86-D011-B42D-00C04FC964FF")
            #expect(bought["idempotencyKey"] as? String == "order-1")
            #expect((bought["purchaseDate"] as? String)?.hasSuffix("Z") == true)
            let id = try #require(bought["id"] as? Int)
            let retry = try workspace.json(
                "purchase", "com.example.level1", "--quantity", "2",
                "--account", "6F9619FF-8B86-D011-B42D-00C04FC964FF", "--idempotency-key", "order-1")
            #expect(retry["id"] as? Int == id)

            let launch = try workspace.json("launch")
            #expect((launch["delivered"] as? [[String: Any]])?.map { $0["id"] as? Int } == [id])
            #expect((launch["delivered"] as? [[String: Any]])?.first?["deliveryCount"] as? Int == 1)
            let finishing = try workspace.json("launch", "--finish")
            #expect(finishing["finished"] as? [Int] == [id])
            #expect((try workspace.json("launch")["delivered"] as? [Any])?.isEmpty == true)
            let shown = try workspace.json("show", "\(id)")
            let kinds = (shown["events"] as? [[String: Any]])?.compactMap { $0["kind"] as? String }
            #expect(kinds == ["created", "stateChanged", "delivered", "delivered", "finished"])
        }
    }

    @Test func failedCancelledAndDeferredPurchasesAreNormalResults() async throws {
        try await CLIWorkspace.withCatalog { (workspace: CLIWorkspace) throws in
            let failed = try workspace.json(
                "purchase", "com.example.rocket_car", "--outcome", "fail", "--error-code", "paymentNotAllowed")
            #expect(failed["state"] as? String == "failed")
            #expect((failed["error"] as? [String: Any])?["code"] as? Int == 4)
            #expect((failed["error"] as? [String: Any])?["name"] as? String == "paymentNotAllowed")
            let byNumber = try workspace.json("purchase", "com.example.rocket_car", "--error-code", "5")
            #expect((byNumber["error"] as? [String: Any])?["name"] as? String == "storeProductNotAvailable")
            let cancelled = try workspace.json("purchase", "com.example.rocket_car", "--outcome", "cancel")
            #expect((cancelled["error"] as? [String: Any])?["code"] as? Int == 2)

            let deferred = try workspace.json("purchase", "com.example.level2", "--outcome", "deferred")
            let deferredID = try #require(deferred["id"] as? Int)
            #expect(deferred["state"] as? String == "deferred")
            let refused = try workspace.ledger("finish", "\(deferredID)")
            #expect(refused.status == 1 && refused.stderr.contains("cannot finish a deferred transaction"))
            #expect(try workspace.json("approve", "\(deferredID)")["state"] as? String == "purchased")
            let again = try workspace.ledger("approve", "\(deferredID)")
            #expect(again.status == 1 && again.stderr.contains("not deferred"))

            let declined = try workspace.json("purchase", "com.example.level2", "--outcome", "deferred")
            let declinedID = try #require(declined["id"] as? Int)
            let result = try workspace.json("decline", "\(declinedID)")
            #expect(result["state"] as? String == "failed" && (result["error"] as? [String: Any])?["code"] as? Int == 2)
        }
    }

    @Test func badInputGetsItsExitCodeAndChangesNothing() async throws {
        try await CLIWorkspace.withCatalog { (workspace: CLIWorkspace) throws in
            let cases: [([String], Int32, String)] = [
                (
                    ["purchase", "com.example.nope"], 1,
                    "error: unknown product \"com.example.nope\": it is not in the ledger's catalog (import it with `ledger products import`)"
                ),
                (["purchase", "com.example.level1", "--quantity", "0"], 65, "invalid quantity 0"),
                (["purchase", "com.example.level1", "--quantity", "11"], 65, "invalid quantity 11"),
                (["purchase", "com.example.level1", "--account", "not-a-uuid"], 65, "invalid account \"not-a-uuid\""),
                (["purchase", "com.example.level1", "--error-code", "bogus"], 65, "unknown error code \"bogus\""),
                (
                    ["purchase", "com.example.level1", "--outcome", "success", "--error-code", "2"], 64,
                    "--error-code goes with --outcome fail"
                ),
                (["purchase", "com.example.level1", "--outcome", "maybe"], 64, "maybe"),
                (["show", "abc"], 64, "abc"),
                (["finish", "-3"], 64, "Missing expected argument"),
                (["show", "42"], 1, "unknown transaction 42"),
                (["finish", "42"], 1, "unknown transaction 42"),
                (["list", "--state", "lost"], 64, "lost"),
                (["list", "--limit", "0"], 64, "--limit"),
            ]
            for (arguments, status, message) in cases {
                let result = try workspace.ledger(arguments)
                #expect(result.status == status, "\(arguments): \(result.stderr)")
                #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
                #expect(result.stdout.isEmpty, "\(arguments)")
            }
            let counts = try workspace.json("info")["counts"] as? [String: Any]
            #expect(counts?["transactions"] as? Int == 0)
        }
    }

    @Test func aFinishWithOneBadIdFinishesNothing() async throws {
        try await CLIWorkspace.withCatalog { (workspace: CLIWorkspace) throws in
            let id = try #require(try workspace.json("purchase", "com.example.level1")["id"] as? Int)
            #expect(try workspace.ledger("finish", "\(id)", "999").status == 1)
            #expect(
                try workspace.json("show", "\(id)")["transaction"].flatMap { $0 as? [String: Any] }?["isFinished"]
                    as? Bool == false)
            #expect(try workspace.ledger("finish", "\(id)", "\(id)").status == 0)
        }
    }

    @Test func productIdentifiersWithQuotesAndSQLAreStoredVerbatim() async throws {
        try await CLIWorkspace.empty { (workspace: CLIWorkspace) throws in
            let hostile = #"com.x'; DROP TABLE transactions; -- \"q\""#
            let catalog = workspace.directory + "/hostile.storekit"
            try write(
                #"{"products": [{"productID": "\#(hostile)", "type": "Consumable", "displayPrice": "1"}]}"#, to: catalog
            )
            #expect(try workspace.ledger("products", "import", catalog).status == 0)
            let id = "com.x'; DROP TABLE transactions; -- \"q\""
            let bought = try workspace.json("purchase", id)
            #expect(bought["productID"] as? String == id)
            let listed = try workspace.json("list", "--product", id)
            #expect((listed["transactions"] as? [[String: Any]])?.count == 1)
        }
    }

    @Test func listPagesOldestFirst() async throws {
        try await CLIWorkspace.withCatalog { (workspace: CLIWorkspace) throws in
            for _ in 0..<5 { _ = try workspace.json("purchase", "com.example.rocket_car") }
            _ = try workspace.json("finish", "1", "2")
            func ids(_ arguments: String...) throws -> [Int] {
                let document = try LedgerProcess.run(arguments + ["--json", "--database", workspace.database]).json()
                return (document["transactions"] as? [[String: Any]])?.compactMap { $0["id"] as? Int } ?? []
            }
            #expect(try ids("list", "--limit", "2") == [1, 2])
            #expect(try ids("list", "--limit", "2", "--after", "2") == [3, 4])
            #expect(try ids("list", "--unfinished") == [3, 4, 5])
            #expect(try ids("list", "--state", "purchased", "--product", "com.example.rocket_car").count == 5)
        }
    }

    @Test func twoProcessesPurchasingAtOnceBothSucceed() async throws {
        try await CLIWorkspace.withCatalog { (workspace: CLIWorkspace) throws in
            let processes = [7, 8].map { seed in
                LedgerProcess.start(
                    [
                        "torture", "--seed", "\(seed)", "--operations", "40", "--shared-ledger", "--database",
                        workspace.database,
                    ],
                    program: .lab)
            }
            let errors = processes.map { _ in Pipe() }
            for (process, pipe) in zip(processes, errors) {
                process.standardOutput = FileHandle.nullDevice
                process.standardError = pipe
                try process.run()
            }
            for (process, pipe) in zip(processes, errors) {
                let message = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                process.waitUntilExit()
                #expect(process.terminationStatus == 0, "\(message)")
            }
            let all = try #require(try workspace.json("list")["transactions"] as? [[String: Any]])
            let ids = all.compactMap { $0["id"] as? Int }
            #expect(Set(ids).count == ids.count && !ids.isEmpty)
        }
    }
}

@Suite struct CLIDamagedLedgerTests {
    func expectRefusedUntouched(_ workspace: CLIWorkspace, message: String) throws {
        let before = fileBytes(workspace.database)
        for arguments in [
            ["list"], ["info"], ["purchase", "com.example.level1"], ["init"],
            ["products", "import", workspace.catalog],
        ] {
            _ = try? SampleCatalog.write(in: workspace.directory)
            let result = try workspace.ledger(arguments)
            #expect(result.status == 74, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
        #expect(fileBytes(workspace.database) == before)
    }

    @Test func randomBytesZeroLengthAndForeignDatabasesExit74Untouched() async throws {
        try await CLIWorkspace.empty { (workspace: CLIWorkspace) throws in
            try Data(repeating: 0x5A, count: 4096).write(to: URL(fileURLWithPath: workspace.database))
            try expectRefusedUntouched(workspace, message: "is not a SQLite database")
            try Data().write(to: URL(fileURLWithPath: workspace.database))
            try expectRefusedUntouched(workspace, message: "empty file")
        }
        try await CLIWorkspace.empty { (workspace: CLIWorkspace) throws in
            #expect(
                try runPython(
                    "import sqlite3; c = sqlite3.connect('\(workspace.database)'); c.execute('create table t(x)'); c.commit()"
                ) == 0)
            try expectRefusedUntouched(workspace, message: "not a StoreLedger ledger")
        }
    }

    @Test func aLedgerFromANewerVersionExits74Untouched() async throws {
        try await CLIWorkspace.empty { (workspace: CLIWorkspace) throws in
            #expect(try workspace.ledger("init").status == 0)
            #expect(
                try runPython(
                    """
                    import sqlite3
                    c = sqlite3.connect('\(workspace.database)')
                    c.execute("insert into grdb_migrations values ('0099_future')")
                    c.commit()
                    c.execute('pragma wal_checkpoint(TRUNCATE)')
                    c.close()
                    """) == 0)
            try expectRefusedUntouched(workspace, message: "newer version")
        }
    }
}

@Suite struct CLIDemoTests {
    @Test func theDemoTellsTheStoryAndReplacesOnlyItsOwnFile() async throws {
        try await CLIWorkspace.empty { (workspace: CLIWorkspace) throws in
            let first = try LedgerProcess.run(["demo"], currentDirectory: workspace.directory)
            #expect(first.status == 0, "\(first.stderr)")
            #expect(first.stdout.contains("delivered #1") && first.stdout.contains("nothing delivered"))
            #expect(first.stdout.contains("ledger list --database ledger-demo.sqlite"))
            #expect(first.stdout.contains("restore finished: 5 restored"))
            #expect(FileManager.default.fileExists(atPath: workspace.directory + "/ledger-demo.sqlite"))
            #expect(try LedgerProcess.run(["demo"], currentDirectory: workspace.directory).status == 0)
            let list = try LedgerProcess.run([
                "list", "--json", "--database", workspace.directory + "/ledger-demo.sqlite",
            ]).json()
            #expect((list["transactions"] as? [Any])?.count == 12)
            // The commands the demo suggests work as printed.
            let suggested = try LedgerProcess.run(
                ["show", "1", "--database", "ledger-demo.sqlite"], currentDirectory: workspace.directory)
            #expect(suggested.status == 0, "\(suggested.stderr)")
            let summary = try LedgerProcess.run(["demo", "--json"], currentDirectory: workspace.directory)
            #expect(try summary.json()["acknowledgedBeforeCrash"] as? [Int] == [1, 2])

            #expect(try workspace.ledger("init").status == 0)
            let refused = try LedgerProcess.run(
                ["demo", "--database", workspace.database], currentDirectory: workspace.directory)
            #expect(refused.status == 1 && refused.stderr.contains("did not make"))
        }
    }
}
