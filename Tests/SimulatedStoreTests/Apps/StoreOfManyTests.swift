import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

/// The store of many, driven from Swift: two customers of one family, two apps, each customer
/// with an iPhone and an iPad in each app, each device its own queue on one store file; they
/// buy, restore on another device, share and refund, each app's purchases its own, each
/// customer's theirs.
@Suite struct StoreOfManyTests {
    static let apps = [StoreSettings.defaultBundleID, "com.example.second"]

    @Test func twoCustomersOfTwoAppsEachWithAnIPhoneAndAnIPadBuyRestoreShareAndRefund() async throws {
        try await withTemporaryDirectory { directory in
            let store = try SampleCatalog.ledger(in: directory, configuration: StoreFixture.configuration)
            defer { try? store.close() }
            try store.addApp(App(bundleID: Self.apps[1]))
            try store.forApp(Self.apps[1]).saveProducts([
                Product(id: "second.level1", type: .nonConsumable, price: 0.99),
                Product(id: "second.level2", type: .nonConsumable, price: 1.99, isFamilyShareable: true),
            ])
            for customer in ["alice", "bob"] {
                try store.addCustomer(Customer(name: customer, family: "smiths"))
                for app in Self.apps {
                    for device in ["iphone", "ipad"] { try store.forCustomer(customer).forApp(app).addDevice(device) }
                }
            }
            for (app, prefix) in zip(Self.apps, ["com.example.", "second."]) {
                func queue(_ customer: String, _ device: String) throws -> PaymentQueue {
                    try PaymentQueue(ledger: try store.forCustomer(customer).forApp(app).forDevice(device))
                }
                func entitled(_ customer: String) throws -> [String] {
                    try store.forCustomer(customer).forApp(app).currentEntitlements().map(\.productID).sorted()
                }
                let phone = try queue("alice", "iphone")
                let shared = try await phone.add(Payment(productID: prefix + "level2"))
                _ = try await phone.add(Payment(productID: prefix + "level1"))
                #expect(try entitled("alice") == [prefix + "level1", prefix + "level2"])
                #expect(try entitled("bob") == [prefix + "level2"], "the family's share, in \(app)")
                // Her iPad: a launch delivers what is unfinished; a restore gives her purchases.
                let pad = try queue("alice", "ipad")
                #expect(try await pad.redeliverUnfinishedTransactions() == 2)
                let restored = await pad.restoreCompletedTransactions()
                #expect(
                    try restored.restored.all().map(\.productID).sorted() == [prefix + "level1", prefix + "level2"])
                // Bob's iPad: his share, nothing of Alice's own.
                #expect(try queue("bob", "ipad").transactions.map(\.productID) == [prefix + "level2"])
                // The refund of the shared purchase ends the share.
                _ = try await StoreTestSession(ledger: store.forCustomer("alice").forApp(app)).refundTransaction(
                    shared.id)
                #expect(try entitled("alice") == [prefix + "level1"])
                #expect(try entitled("bob") == [], "the share ended with the refund, in \(app)")
            }
            // Each app's purchases are its own.
            #expect(
                try store.forCustomer("alice").forApp(Self.apps[1]).allTransactions()
                    .allSatisfy { $0.productID.hasPrefix("second.") })
            #expect(try store.verify() == [])
        }
    }
}
