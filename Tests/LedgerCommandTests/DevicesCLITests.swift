import Foundation
import LedgerTestSupport
import LedgerTesting
import Testing

/// `ledger devices` and `--device`: a customer's devices driven from the tool.
@Suite struct DevicesCLITests {
    @Test func devicesAreAddedListedAndNamedWhenACustomerHasSeveral() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            #expect(try workspace.ledger("devices", "list").stdout.hasPrefix("no named device"))
            #expect(try workspace.ledger("purchase", "com.example.level1").status == 0)  // #1, on the one device
            let phone = try workspace.json("devices", "add", "iphone")
            #expect(phone["name"] as? String == "iphone" && (phone["deviceVerificationID"] as? String)?.count == 36)
            #expect(try workspace.ledger("purchase", "com.example.level2").status == 0, "one device: no name needed")
            let pad = try workspace.ledger("devices", "add", "ipad")
            #expect(pad.status == 0 && pad.stdout.hasPrefix("added device ipad  device verification id "))
            #expect(try workspace.json("devices", "list")["devices"] as? [String] == ["iphone", "ipad"])
            let refused = try workspace.ledger("launch")
            #expect(refused.status == 64)
            #expect(
                refused.stderr.contains(
                    "the customer has 2 devices in this app: name the one this runs on: iphone, ipad"))
            #expect(refused.stderr.contains("--device NAME"))
            let unknown = try workspace.ledger("launch", "--device", "watch")
            #expect(unknown.status == 64 && unknown.stderr.contains("the customer has no device named watch"))
            // Each device's launch delivers the customer's unfinished transactions; a finish on
            // one is the customer's.
            let launched = try workspace.json(arguments: ["--device", "ipad", "launch"])
            #expect((launched["delivered"] as? [[String: Any]])?.compactMap { $0["id"] as? Int } == [1, 2])
            #expect(try workspace.ledger("finish", "1", "2", "--device", "iphone").status == 0)
            let again = try workspace.json("launch", "--device", "ipad")
            #expect((again["delivered"] as? [[String: Any]])?.isEmpty == true)
            let duplicate = try workspace.ledger("devices", "add", "ipad")
            #expect(duplicate.status == 1 && duplicate.stderr.contains("has a device named ipad in this app already"))
            let invalid = try workspace.ledger("devices", "add", "my ipad")
            #expect(invalid.status == 65 && invalid.stderr.contains("is not a name (of a customer, family or device)"))
        }
    }
}
