import Crypto
import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

/// A customer's devices: each install of an app runs its own queue, with its own device
/// verification identifier; the customer's purchases are theirs on every device.
@Suite struct DeviceTests {
    /// A store whose customer Alice has an iPhone and an iPad in the sample catalog's app.
    static func withAlicesDevices(_ body: (Ledger) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try SampleCatalog.ledger(in: directory, configuration: StoreFixture.configuration)
            defer { try? ledger.close() }
            try ledger.addCustomer(Customer(name: "alice"))
            try ledger.forCustomer("alice").addDevice("iphone")
            try ledger.forCustomer("alice").addDevice("ipad")
            // A value's customer, app and device are found when it is made.
            try await body(try ledger.forCustomer("alice"))
        }
    }

    @Test func aCustomerHasOneDeviceUntilTheyNameSome() async throws {
        try await StoreFixture.with { store in
            #expect(try store.ledger.deviceNames().isEmpty)
            let unnamed = try store.ledger.deviceVerificationID()
            try await store.buy(SampleCatalog.nonConsumable)
            try store.ledger.addDevice("iphone")
            // Their one named device: chosen without a name; its id is its own.
            let phone = try PaymentQueue(ledger: try store.ledger.forCustomer(Customer.defaultName))
            #expect(phone.ledger.deviceName == "iphone")
            #expect(try phone.ledger.deviceVerificationID() != unnamed)
            #expect(try phone.ledger.unfinishedTransactions().count == 1, "the customer's, on every device")
        }
    }

    @Test func devicesAreAddedOnceWithNamesTestsCanType() async throws {
        try await Self.withAlicesDevices { alice in
            for bad in ["", "a b", "é", String(repeating: "x", count: 65)] {
                #expect(throws: CustomerError.invalidName(bad)) { try alice.addDevice(bad) }
            }
            #expect(throws: CustomerError.duplicateDevice("ipad")) { try alice.addDevice("ipad") }
            #expect(try alice.deviceNames() == ["iphone", "ipad"])
            // Devices are the customer's, in one app: another customer has none of them.
            #expect(try alice.forCustomer(Customer.defaultName).deviceNames().isEmpty)
            let whole = try Ledger.open(at: alice.path, configuration: StoreFixture.configuration)
            defer { try? whole.close() }
            #expect(throws: CustomerError.customerNotChosen(choices: ["default", "alice"], count: 2)) {
                try whole.addDevice("watch")
            }
        }
    }

    @Test func aCustomerWithSeveralDevicesNamesTheOneAQueueRunsOn() async throws {
        try await Self.withAlicesDevices { alice in
            let notChosen = CustomerError.deviceNotChosen(choices: ["iphone", "ipad"], count: 2)
            #expect(throws: notChosen) { try PaymentQueue(ledger: alice) }
            #expect(throws: notChosen) { try alice.deviceVerificationID() }
            #expect(throws: notChosen) { try alice.signedAppTransaction() }
            #expect(throws: CustomerError.unknownDevice("watch", choices: ["iphone", "ipad"], count: 2)) {
                try alice.forDevice("watch")
            }
            var configuration = StoreFixture.configuration
            (configuration.customer, configuration.device) = ("alice", "ipad")
            let opened = try Ledger.open(at: alice.path, configuration: configuration)
            defer { try? opened.close() }
            #expect(opened.deviceName == "ipad")
            #expect(try opened.deviceVerificationID() == alice.forDevice("ipad").deviceVerificationID())
            // What needs no device still works: entitlements are the customer's.
            #expect(try alice.currentEntitlements().isEmpty)
        }
    }

    /// Each device has its own `AppStore.deviceVerificationID`, and an app transaction signed
    /// for a device verifies against its id, as StoreKit computes `deviceVerification`
    /// (SHA-384 of the lowercased nonce, then the device id).
    @Test func eachDeviceVerifiesItsOwnAppTransaction() async throws {
        try await Self.withAlicesDevices { alice in
            let (phone, pad) = (try alice.forDevice("iphone"), try alice.forDevice("ipad"))
            #expect(try phone.deviceVerificationID() != pad.deviceVerificationID())
            #expect(try phone.deviceVerificationID() == alice.forDevice("iphone").deviceVerificationID())
            let nonce = UUID()
            let signed = try pad.signedAppTransaction(nonce: nonce)
            let payload = try #require(try JSONSerialization.jsonObject(with: signed.payload) as? [String: Any])
            let expected = { (device: UUID) in
                Data(SHA384.hash(data: Data((nonce.uuidString.lowercased() + device.uuidString.lowercased()).utf8)))
                    .base64EncodedString()
            }
            #expect(payload["deviceVerification"] as? String == expected(try pad.deviceVerificationID()))
            #expect(payload["deviceVerification"] as? String != expected(try phone.deviceVerificationID()))
            #expect(payload["appTransactionId"] as? String == (try phone.appTransactionID()), "the customer's")
        }
    }

    /// Two devices of one customer side by side in one process: a purchase on the iPad reaches
    /// the iPhone as another device's; an unfinished one comes back at each device's launch until
    /// one finishes it; a restore on a third device copies the customer's purchases.
    @Test func twoDevicesOfOneCustomerRunSideBySide() async throws {
        try await Self.withAlicesDevices { alice in
            let phone = try PaymentQueue(ledger: try alice.forDevice("iphone"))
            let pad = try PaymentQueue(ledger: try alice.forDevice("ipad"))
            let phoneHears = CollectingObserver()
            try await phone.add(phoneHears)
            let level = try await pad.add(Payment(productID: SampleCatalog.nonConsumable))
            #expect(try await phone.hearOtherDevices().map(\.id) == [level.id])
            #expect(phoneHears.callbacks.last == .purchasedOnAnotherDevice([level]))
            #expect(try await pad.hearOtherDevices().isEmpty, "its own")
            let relaunched = try PaymentQueue(ledger: try alice.forDevice("iphone"))
            #expect(try relaunched.ledger.unfinishedTransactions().map(\.id) == [level.id])
            try await phone.finish([level.id])
            #expect(try PaymentQueue(ledger: try alice.forDevice("ipad")).ledger.unfinishedTransactions().isEmpty)
            try alice.addDevice("new-phone")
            let newPhone = try PaymentQueue(ledger: try alice.forDevice("new-phone"))
            let restored = await newPhone.restoreCompletedTransactions()
            #expect(try restored.restored.all().map(\.restoredFromID) == [level.id])
        }
    }
}
