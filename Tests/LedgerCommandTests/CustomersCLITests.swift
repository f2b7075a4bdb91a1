import Foundation
import LedgerTestSupport
import LedgerTesting
import Testing

/// `ledger customers` and `--customer`: a store of several customers driven from the tool.
@Suite struct CustomersCLITests {
    @Test func customersAreAddedListedAndShownAndAddCreatesTheStore() async throws {
        try await CLIWorkspace.empty { workspace in
            let added = try workspace.json("customers", "add", "alice", "--storefront", "FRA", "--family", "smiths")
            #expect(added["name"] as? String == "alice" && added["storefront"] as? String == "FRA")
            #expect(added["family"] as? String == "smiths")
            #expect(FileManager.default.fileExists(atPath: workspace.database), "add creates the store")
            #expect(
                try workspace.ledger("customers", "add", "bob").stdout == "added customer bob  storefront the store's\n"
            )
            let listed = try workspace.json("customers", "list")
            let names = (listed["customers"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
            #expect(names == ["default", "alice", "bob"])
            #expect(
                try workspace.ledger("customers", "list", "--after", "alice", "--limit", "1").stdout.hasPrefix("bob "))
            let shown = try workspace.json("customers", "show", "alice")
            #expect(shown["transactions"] as? Int == 0 && (shown["appTransactionID"] as? String)?.isEmpty == false)
        }
    }

    @Test func badCustomersAreRefusedWithTheirExitCodeAndChangeNothing() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            #expect(try workspace.ledger("customers", "add", "alice").status == 0)
            let duplicate = try workspace.ledger("customers", "add", "alice")
            #expect(duplicate.status == 1 && duplicate.stderr.contains("the store has a customer named alice already"))
            let invalid = try workspace.ledger("customers", "add", "a b")
            #expect(invalid.status == 65 && invalid.stderr.contains("is not a name (of a customer, family or device)"))
            let storefront = try workspace.ledger("customers", "add", "carol", "--storefront", "XXX")
            #expect(storefront.status == 65 && storefront.stderr.contains("is not a storefront's country code"))
            let unknown = try workspace.ledger("customers", "show", "carol")
            #expect(unknown.status == 64 && unknown.stderr.contains("the store has no customer named carol"))
            let page = try workspace.ledger("customers", "list", "--limit", "0")
            #expect(page.status == 64)
            #expect(try workspace.json("customers", "list")["customers"].map { ($0 as? [Any])?.count } == 2)
        }
    }

    @Test func aCommandThatActsForACustomerNeedsOneWhenTheStoreHasSeveral() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            // One customer: --customer may be left out, as before.
            #expect(try workspace.ledger("purchase", "com.example.level1").status == 0)  // #1, default's
            #expect(try workspace.ledger("customers", "add", "alice", "--storefront", "FRA").status == 0)
            let refused = try workspace.ledger("purchase", "com.example.level2")
            #expect(refused.status == 64)
            #expect(refused.stderr.contains("the store has 2 customers: name the one this is for: default, alice"))
            #expect(refused.stderr.contains("--customer NAME"))
            let unknown = try workspace.ledger("entitlements", "--customer", "carol")
            #expect(unknown.status == 64 && unknown.stderr.contains("add one with `ledger customers add NAME`"))
            // Before or after the command.
            let bought = try workspace.ledger(arguments: [
                "--customer", "alice", "purchase", "com.example.level2", "--json",
            ])
            #expect(bought.status == 0)
            #expect(try bought.json()["storefront"] as? String == "FRA")
            let alices = try workspace.json("entitlements", "--customer", "alice")
            #expect(
                (alices["entitlements"] as? [[String: Any]])?.compactMap { $0["productID"] as? String } == [
                    "com.example.level2"
                ])
            // Alice's queue does not know default's transaction.
            let finish = try workspace.ledger("finish", "1", "--customer", "alice")
            #expect(finish.status == 1 && finish.stderr.contains("unknown transaction 1"))
            // A restore on Alice's new device restores hers only.
            let restored = try workspace.json("restore", "--customer", "alice")
            #expect((restored["restored"] as? [[String: Any]])?.compactMap { $0["restoredFromID"] as? Int } == [2])
        }
    }

    @Test func aFamilyMembersPurchaseReachesTheFamilyAndAFullFamilyIsRefused() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            for name in ["ann", "ben"] {
                #expect(try workspace.ledger("customers", "add", name, "--family", "smiths").status == 0)
            }
            #expect(try workspace.ledger("purchase", "com.example.level2", "--customer", "ann").status == 0)
            let bens = try workspace.json("entitlements", "--customer", "ben")
            #expect(
                (bens["entitlements"] as? [[String: Any]])?.compactMap { $0["productID"] as? String } == [
                    "com.example.level2"
                ])
            for name in ["cy", "di", "ed", "flo"] {
                #expect(try workspace.ledger("customers", "add", name, "--family", "smiths").status == 0)
            }
            let full = try workspace.ledger("customers", "add", "gus", "--family", "smiths")
            #expect(full.status == 1 && full.stderr.contains("as many as Family Sharing allows"))
            // Ben leaves: his share of Ann's purchase is revoked; he can leave only once.
            let left = try workspace.json("customers", "leave-family", "ben")
            #expect(
                (left["revoked"] as? [[String: Any]])?.compactMap { $0["productID"] as? String } == [
                    "com.example.level2"
                ])
            #expect(
                try workspace.json("entitlements", "--customer", "ben")["entitlements"].map { ($0 as? [Any])?.count }
                    == 0)
            let again = try workspace.ledger("customers", "leave-family", "ben")
            #expect(again.status == 1 && again.stderr.contains("the customer ben belongs to no family"))
        }
    }

    @Test func listShowsEveryCustomersTransactionsWithTheirOwnerUnlessOneIsNamed() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            #expect(try workspace.ledger("customers", "add", "alice").status == 0)
            #expect(try workspace.ledger("purchase", "com.example.level1", "--customer", "alice").status == 0)
            #expect(try workspace.ledger("purchase", "com.example.level2", "--customer", "default").status == 0)
            let all = try workspace.ledger("list")
            #expect(
                all.stdout.split(separator: "\n").map {
                    $0.hasSuffix("customer alice") || $0.hasSuffix("customer default")
                } == [true, true])
            let json = try workspace.json("list")
            #expect(
                (json["transactions"] as? [[String: Any]])?.compactMap { $0["customer"] as? String } == [
                    "alice", "default",
                ])
            let alices = try workspace.json("list", "--customer", "alice")
            #expect(
                (alices["transactions"] as? [[String: Any]])?.compactMap { $0["productID"] as? String } == [
                    "com.example.level1"
                ])
        }
    }
}
