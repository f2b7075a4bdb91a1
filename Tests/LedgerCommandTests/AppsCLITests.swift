import Foundation
import LedgerTestSupport
import LedgerTesting
import Testing

/// `ledger apps` and `--app`: a store of several apps driven from the tool.
@Suite struct AppsCLITests {
    @Test func appsAreAddedAndListedAndAddCreatesTheStore() async throws {
        try await CLIWorkspace.empty { workspace in
            let added = try workspace.json(
                "apps", "add", "com.example.second", "--environment", "Production", "--app-apple-id", "42")
            #expect(added["bundleID"] as? String == "com.example.second" && added["appAppleID"] as? Int == 42)
            #expect(added["environment"] as? String == "Production")
            #expect(FileManager.default.fileExists(atPath: workspace.database), "add creates the store")
            #expect(
                try workspace.ledger("apps", "list").stdout
                    == "com.example.app  environment Xcode\ncom.example.second  environment Production  appAppleID 42\n"
            )
        }
    }

    @Test func badAppsAreRefusedWithTheirExitCodeAndChangeNothing() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            let duplicate = try workspace.ledger("apps", "add", "com.example.app")
            #expect(duplicate.status == 1 && duplicate.stderr.contains("the store has an app com.example.app already"))
            let invalid = try workspace.ledger("apps", "add", "com.example_app")
            #expect(invalid.status == 65 && invalid.stderr.contains("is not a bundle identifier"))
            let environment = try workspace.ledger("apps", "add", "com.example.x", "--environment", "Staging")
            #expect(environment.status == 64)
            let appleID = try workspace.ledger("apps", "add", "com.example.x", "--app-apple-id", "0")
            #expect(appleID.status == 64 && appleID.stderr.contains("--app-apple-id takes a positive integer"))
            #expect(try workspace.json("apps", "list")["apps"].map { ($0 as? [Any])?.count } == 1)
        }
    }

    /// Two apps, one customer: each app's catalog, settings, purchases and list are its own;
    /// with two apps, a command that acts in one names it.
    @Test func aCommandThatActsInAnAppNeedsOneWhenTheStoreHasSeveral() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            #expect(try workspace.ledger("purchase", "com.example.level1").status == 0)  // #1, the first app's
            #expect(try workspace.ledger("apps", "add", "com.example.second").status == 0)
            let refused = try workspace.ledger("purchase", "com.example.level2")
            #expect(refused.status == 64)
            #expect(
                refused.stderr.contains(
                    "the store has 2 apps: name the one this is for: com.example.app, com.example.second"))
            #expect(refused.stderr.contains("--app BUNDLE_ID"))
            let unknown = try workspace.ledger("entitlements", "--app", "com.example.third")
            #expect(unknown.status == 64 && unknown.stderr.contains("add one with `ledger apps add BUNDLE_ID`"))
            // The second app's catalog: another app's products are refused, its own imported.
            let catalog = workspace.directory + "/second.storekit"
            let sample = try workspace.ledger("products", "sample")
            try sample.stdout.replacingOccurrences(of: "com.example.", with: "second.")
                .replacingOccurrences(of: "\"id\": \"pro\"", with: "\"id\": \"second-pro\"")  // its own group
                .write(toFile: catalog, atomically: true, encoding: .utf8)
            let taken = try workspace.ledger("products", "import", workspace.catalog, "--app", "com.example.second")
            #expect(taken.status != 0 && taken.stderr.contains("is the app com.example.app's"))
            #expect(try workspace.ledger("--app", "com.example.second", "products", "import", catalog).status == 0)
            let products = try workspace.json("products", "list", "--app", "com.example.second")
            #expect(
                (products["products"] as? [[String: Any]])?.allSatisfy {
                    ($0["id"] as? String)?.hasPrefix("second.") == true
                } == true)
            // Its own settings.
            #expect(
                try workspace.ledger("store", "set", "appVersion", "2.5", "--app", "com.example.second").status == 0)
            #expect(
                try workspace.json("store", "show", "--app", "com.example.second")["appVersion"] as? String == "2.5")
            #expect(try workspace.json("store", "show", "--app", "com.example.app")["appVersion"] as? String == "1.0")
            // Its own purchases: another app's product is unknown to it.
            let wrong = try workspace.ledger("purchase", "com.example.level2", "--app", "com.example.second")
            #expect(wrong.status == 1 && wrong.stderr.contains("com.example.level2"))
            let bought = try workspace.ledger("purchase", "second.level1", "--app", "com.example.second", "--json")
            #expect(bought.status == 0)
            let entitlements = try workspace.json("entitlements", "--app", "com.example.second")
            #expect(
                (entitlements["entitlements"] as? [[String: Any]])?.compactMap { $0["productID"] as? String } == [
                    "second.level1"
                ])
            let finish = try workspace.ledger("finish", "1", "--app", "com.example.second")
            #expect(finish.status == 1 && finish.stderr.contains("unknown transaction 1"))
            // `list` without --app shows both apps' transactions, each with its app.
            let listed = try workspace.json("list")
            #expect(
                (listed["transactions"] as? [[String: Any]])?.compactMap { $0["app"] as? String } == [
                    "com.example.app", "com.example.second",
                ])
            #expect(try workspace.ledger("list").stdout.contains("app com.example.second"))
            #expect(try workspace.ledger("list", "--app", "com.example.app").stdout.split(separator: "\n").count == 1)
            #expect(try workspace.ledger("verify").status == 0)
        }
    }
}
