import Foundation
import LedgerTestSupport
import LedgerTesting
import Testing

/// The store of many, driven from the tool: two customers of one family, two apps, each customer
/// with an iPhone and an iPad in each app; they buy, restore on another device, share and refund,
/// each app's purchases its own, each customer's theirs.
@Suite struct StoreOfManyCLITests {
    static let apps = ["com.example.app", "com.example.second"]

    @Test func twoCustomersOfTwoAppsEachWithAnIPhoneAndAnIPadBuyRestoreShareAndRefund() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            // The second app: the sample catalog with its own identifiers.
            let sample = try String(contentsOfFile: workspace.catalog, encoding: .utf8)
            let second = workspace.directory + "/Second.storekit"
            try sample.replacingOccurrences(of: "com.example.", with: "second.")
                .replacingOccurrences(of: "\"id\": \"pro\"", with: "\"id\": \"second-pro\"")
                .write(toFile: second, atomically: true, encoding: .utf8)
            #expect(try workspace.ledger("apps", "add", Self.apps[1]).status == 0)
            #expect(try workspace.ledger("products", "import", second, "--app", Self.apps[1]).status == 0)
            for customer in ["alice", "bob"] {
                #expect(try workspace.ledger("customers", "add", customer, "--family", "smiths").status == 0)
                for app in Self.apps {
                    for device in ["iphone", "ipad"] {
                        let added = try workspace.ledger(
                            "devices", "add", device, "--customer", customer, "--app", app)
                        #expect(added.status == 0, "\(added.stderr)")
                    }
                }
            }
            for (app, prefix) in zip(Self.apps, ["com.example.", "second."]) {
                func run(_ arguments: String...) throws -> [String: Any] {
                    try workspace.json(arguments: arguments + ["--app", app])
                }
                func entitled(_ customer: String) throws -> [String] {
                    let list = try run("entitlements", "--customer", customer)["entitlements"] as? [[String: Any]]
                    return (list ?? []).compactMap { $0["productID"] as? String }.sorted()
                }
                // Alice buys on her iPhone: a product shared with the family, and one not.
                let shared = try run("purchase", prefix + "level2", "--customer", "alice", "--device", "iphone")
                let own = try run("purchase", prefix + "level1", "--customer", "alice", "--device", "iphone")
                let sharedID = try #require(shared["id"] as? Int)
                #expect(own["state"] as? String == "purchased")
                #expect(try entitled("alice") == [prefix + "level1", prefix + "level2"])
                #expect(try entitled("bob") == [prefix + "level2"], "the family's share, in \(app)")
                // Her iPad: a launch delivers what is unfinished; a restore gives her purchases.
                let launched = try run("launch", "--customer", "alice", "--device", "ipad")
                #expect((launched["delivered"] as? [[String: Any]])?.count == 2)
                let restored = try run("restore", "--customer", "alice", "--device", "ipad")
                #expect(
                    ((restored["restored"] as? [[String: Any]]) ?? []).compactMap { $0["productID"] as? String }
                        .sorted() == [prefix + "level1", prefix + "level2"])
                // Bob's devices: his share, nothing of Alice's own.
                let bobs = try run("launch", "--customer", "bob", "--device", "ipad")
                #expect(
                    ((bobs["delivered"] as? [[String: Any]]) ?? []).compactMap { $0["productID"] as? String }
                        == [prefix + "level2"])
                // The refund of the shared purchase ends the share.
                #expect(try workspace.ledger("refund", String(sharedID), "--app", app).status == 0)
                #expect(try entitled("alice") == [prefix + "level1"])
                #expect(try entitled("bob") == [], "the share ended with the refund, in \(app)")
            }
            // Each app's purchases are its own: the second app's list holds only its products.
            let listed = try workspace.json("list", "--app", Self.apps[1])["transactions"] as? [[String: Any]]
            #expect(listed?.allSatisfy { ($0["productID"] as? String)?.hasPrefix("second.") == true } == true)
            #expect(try workspace.ledger("verify").status == 0)
        }
    }
}
