import Foundation
import LedgerTesting
import OpenStoreKit
import OpenStoreKitTest
import Testing

import class LedgerEngine.Ledger
import struct LedgerModel.Customer

/// Several devices and customers through StoreKit, side by side in one process: each
/// `SKTestSession.session(forCustomer:device:)` is one device's app on the same store.
@Suite struct DevicesStoreKitTests {
    @Test func twoDevicesOfOneCustomerAndAnotherCustomerSideBySide() async throws {
        let session = try SKTestSession(contentsOf: SampleShop.file, scope: .taskLocal)
        let ledger = try Ledger.open(at: session.ledgerPath)
        try ledger.addCustomer(Customer(name: "alice"))
        try ledger.addCustomer(Customer(name: "bob"))
        let alice = try ledger.forCustomer("alice")
        try alice.addDevice("iphone")
        try alice.addDevice("ipad")
        try ledger.close()
        let (phone, pad) = (
            try session.session(forCustomer: "alice", device: "iphone"),
            try session.session(forCustomer: "alice", device: "ipad")
        )
        let bob = try session.session(forCustomer: "bob")
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
    }
}
