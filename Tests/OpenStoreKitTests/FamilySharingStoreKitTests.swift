import Foundation
import LedgerTesting
import OpenStoreKit
import OpenStoreKitTest
import Testing

import enum LedgerModel.StoreControlError

/// Family Sharing through StoreKit: a shared purchase arrives owned `.familyShared`, and the end
/// of the sharing reaches StoreKit 1's revocation callback and StoreKit 2's updates.
@Suite struct FamilySharingStoreKitTests {
    static let shareable = SampleCatalog.nonConsumable2

    @MainActor @Test func aSharedPurchaseArrivesFamilySharedAndItsRevocationReachesBothAPIs() async throws {
        try await SampleShop.withSession { session in
            let observer = StoreObserver()
            SKPaymentQueue.default().add(observer)
            var updates = Transaction.updates.makeAsyncIterator()
            try session.shareFamilyPurchase(productIdentifier: Self.shareable)
            let shared = try #require(await updates.next()?.payloadValue)
            #expect(shared.productID == Self.shareable && shared.ownershipType == .familyShared)
            #expect(await Transaction.currentEntitlement(for: Self.shareable) != nil)
            try await waitFor(session) { observer.delivered[Self.shareable] == 1 }

            try session.revokeFamilySharing(identifier: UInt(shared.id))
            let revoked = try #require(await updates.next()?.payloadValue)
            #expect(revoked.id == shared.id && revoked.revocationDate != nil)
            #expect(revoked.revocationType == .familyRevocation && shared.revocationType == nil)
            #expect(revoked.revocationTypeStringRepresentation == "FAMILY_REVOKE")
            try await waitFor(session) { observer.revokedProducts == [Self.shareable] }
            #expect(await Transaction.currentEntitlement(for: Self.shareable) == nil)
        }
    }

    /// A refund says how it revoked (Apple's `revocationType`): wholly, or in part for a refund
    /// request granted for the part consumed.
    @MainActor @Test func aRefundSaysWhetherItWasWholeOrProrated() async throws {
        try await SampleShop.withSession { session in
            let whole = try await session.buyProduct(identifier: SampleCatalog.nonConsumable)
            let part = try await session.buyProduct(identifier: SampleCatalog.nonConsumable2)
            try session.refundTransaction(identifier: UInt(whole.id))
            #expect(try await part.beginRefundRequest(in: UIWindowScene()) == .success)
            try session.approveRefundRequest(identifier: UInt(part.id), revocationPercentage: 25_000)
            var revoked: [UInt64: Transaction.RevocationType] = [:]
            for await result in Transaction.all {
                let transaction = result.unsafePayloadValue
                if let type = transaction.revocationType { revoked[transaction.id] = type }
            }
            #expect(revoked == [whole.id: .fullRefund, part.id: .proratedRefund])
        }
    }

    /// A group held both ways has two statuses, the customer's own first, as StoreKit documents
    /// for Family Sharing; a transaction's status is that of the subscription it belongs to.
    @Test func aGroupHeldBothWaysHasAStatusForEach() async throws {
        try await SampleShop.withSession { session in
            let own = try await session.buyProduct(identifier: SampleCatalog.subscription)
            try session.shareFamilyPurchase(productIdentifier: SampleCatalog.yearlySubscription)
            let statuses = try await Product.SubscriptionInfo.status(for: "pro")
            let transactions = try statuses.map { try $0.transaction.payloadValue }
            #expect(transactions.map(\.ownershipType) == [.purchased, .familyShared])
            #expect(transactions.map(\.productID) == [SampleCatalog.subscription, SampleCatalog.yearlySubscription])
            #expect(statuses.allSatisfy { $0.state == .subscribed })
            let shared = try #require(transactions.last)
            let ofShared = try await Product.SubscriptionInfo.status(transactionID: shared.id)
            #expect(try ofShared?.transaction.payloadValue.id == shared.id)
            let ofOwn = try await Product.SubscriptionInfo.status(transactionID: own.id)
            #expect(try ofOwn?.transaction.payloadValue.id == own.id)
        }
    }

    @Test func whatCannotBeSharedThrows() async throws {
        try await SampleShop.withSession { session in
            #expect(throws: StoreControlError.notFamilyShareable(SampleCatalog.nonConsumable)) {
                try session.shareFamilyPurchase(productIdentifier: SampleCatalog.nonConsumable)
            }
            let own = try await session.buyProduct(identifier: SampleCatalog.nonConsumable)
            #expect(own.ownershipType == .purchased)
            #expect(throws: StoreControlError.notFamilyShared(own.id)) {
                try session.revokeFamilySharing(identifier: UInt(own.id))
            }
        }
    }
}
