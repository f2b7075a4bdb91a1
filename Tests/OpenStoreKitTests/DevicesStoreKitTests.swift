import Foundation
import LedgerTesting
import OpenStoreKit
import OpenStoreKitTest
import Synchronization
import Testing

import class LedgerEngine.Ledger
import struct LedgerModel.Customer
import class StoreLedger.PaymentQueue

/// Several devices and customers through StoreKit, side by side in one process: each
/// `SKTestSession.session(forCustomer:device:)` is one device's app on the same store.
@Suite struct DevicesStoreKitTests {
    @Test func twoDevicesOfOneCustomerAndAnotherCustomerSideBySide() async throws {
        let (session, phone, pad, bob) = try Self.aliceWithTwoDevicesAndBob()
        // StoreKit 2 on the iPad buys, and finishes.
        let bought = try await pad.withTaskLocalStore {
            let product = try #require(try await Product.products(for: [SampleCatalog.nonConsumable]).first)
            guard case .success(let verification) = try await product.purchase() else {
                Issue.record("the purchase did not succeed")
                return UInt64(0)
            }
            let transaction = try verification.payloadValue
            await transaction.finish()
            return transaction.id
        }
        // The iPhone, the same account: entitled; its own device id.
        let phoneSees = try await phone.withTaskLocalStore {
            (
                try await Transaction.currentEntitlement(for: SampleCatalog.nonConsumable)?.payloadValue.id,
                AppStore.deviceVerificationID
            )
        }
        let padDevice = await pad.withTaskLocalStore { AppStore.deviceVerificationID }
        #expect(phoneSees.0 == bought)
        #expect(phoneSees.1 != nil && padDevice != nil && phoneSees.1 != padDevice)
        // Bob: nothing of Alice's.
        let bobSees = await bob.withTaskLocalStore {
            await Transaction.currentEntitlement(for: SampleCatalog.nonConsumable)
        }
        #expect(bobSees == nil)
        // A new launch of the iPhone (the app killed and opened again) is still Alice's iPhone.
        try phone.relaunch()
        let again = try await phone.withTaskLocalStore {
            try await Transaction.currentEntitlement(for: SampleCatalog.nonConsumable)?.payloadValue.id
        }
        #expect(again == bought)
        _ = session  // the store lives as long as its first session
    }

    /// A running app hears its customer's purchases made on their other device, through
    /// `Transaction.updates` (Apple: it "emits transactions that customers complete in your app
    /// on another device"); another customer's app hears nothing of them.
    @Test func aPurchaseOnTheIPadReachesTheRunningIPhonesTransactionUpdates() async throws {
        let (session, phone, pad, bob) = try Self.aliceWithTwoDevicesAndBob()
        let phoneHeard = Heard()
        let bobHeard = Heard()
        let listeners = [
            await phone.withTaskLocalStore {
                Task { for await update in Transaction.updates { phoneHeard.add(update) } }
            },
            await bob.withTaskLocalStore { Task { for await update in Transaction.updates { bobHeard.add(update) } } },
        ]
        defer { for listener in listeners { listener.cancel() } }
        // Each listener hears its own app's session first: then it is surely listening.
        for (device, heard) in [(phone, phoneHeard), (bob, bobHeard)] {
            let own = try await device.buyProduct(identifier: SampleCatalog.consumable).id
            #expect(await heard.wait(for: own, within: .seconds(10)))
        }
        let bought = try await pad.withTaskLocalStore {
            let product = try #require(try await Product.products(for: [SampleCatalog.nonConsumable]).first)
            guard case .success(let verification) = try await product.purchase() else { return UInt64(0) }
            let transaction = try verification.payloadValue
            await transaction.finish()
            return transaction.id
        }
        #expect(await phoneHeard.wait(for: bought, within: .seconds(10)), "the iPhone hears the iPad's purchase")
        // A look of Bob's app has run since (they look every second).
        try await Task.sleep(for: .milliseconds(1_500))
        #expect(!bobHeard.ids.contains(bought), "another customer hears nothing of it")
        #expect(phoneHeard.ids.filter { $0 == bought }.count == 1, "heard once")
        _ = session
    }

    /// While the iPhone's app looks for other devices' purchases every 10 ms, the test session's
    /// own purchases (committed, then announced to the app) reach its `Transaction.updates`
    /// once each: a look never takes them for another device's.
    @Test func aSessionsOwnPurchasesAreNeverHeardTwiceWhileTheAppLooksForOtherDevices() async throws {
        let (session, phone, _, _) = try Self.aliceWithTwoDevicesAndBob()
        let heard = Heard()
        let queue = try await phone.withTaskLocalStore { try StoreContext.current().queue }
        await queue.startHearingOtherDevices(checkingEvery: .milliseconds(10))
        let listener = await phone.withTaskLocalStore {
            Task { for await update in Transaction.updates { heard.add(update) } }
        }
        defer {
            listener.cancel()
            // Back to the app's pace: a look every 10 ms is this test's, not the rest of the run's.
            Task { await queue.startHearingOtherDevices() }
        }
        var bought: [UInt64] = []
        for _ in 0..<20 {
            bought.append(try await phone.buyProduct(identifier: SampleCatalog.consumable).id)
        }
        #expect(await heard.wait(for: bought.last!, within: .seconds(5)))
        try await Task.sleep(for: .milliseconds(100))
        #expect(heard.ids == bought, "each once, in order")
        _ = session
    }

    /// A store of Alice (an iPhone and an iPad) and Bob, each device's app its own session.
    static func aliceWithTwoDevicesAndBob() throws -> (SKTestSession, SKTestSession, SKTestSession, SKTestSession) {
        let session = try SKTestSession(contentsOf: SampleShop.file, scope: .taskLocal)
        let ledger = try Ledger.open(at: session.ledgerPath)
        try ledger.addCustomer(Customer(name: "alice"))
        try ledger.addCustomer(Customer(name: "bob"))
        let alice = try ledger.forCustomer("alice")
        try alice.addDevice("iphone")
        try alice.addDevice("ipad")
        try ledger.close()
        return (
            session, try session.session(forCustomer: "alice", device: "iphone"),
            try session.session(forCustomer: "alice", device: "ipad"), try session.session(forCustomer: "bob")
        )
    }
}

/// The transaction ids a `Transaction.updates` sequence received, in order.
final class Heard: Sendable {
    private let received = Mutex<[UInt64]>([])

    var ids: [UInt64] { received.withLock { $0 } }

    func add(_ update: VerificationResult<Transaction>) {
        received.withLock { $0.append(update.unsafePayloadValue.id) }
    }

    /// Whether `id` arrived within `limit`.
    func wait(for id: UInt64, within limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if ids.contains(id) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return ids.contains(id)
    }
}
