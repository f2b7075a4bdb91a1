import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

/// Family Sharing: a family member's purchase reaches the customer owned FAMILY_SHARED, and
/// the end of the sharing revokes it with REVOKE.
@Suite struct FamilySharingTests {
    static let shareable = SampleCatalog.nonConsumable2  // family-shareable
    static let day = NotificationOutboxTests.day

    /// The signed `inAppOwnershipType` of transaction `id`.
    static func ownership(_ ledger: Ledger, _ id: UInt64) throws -> String? {
        try PriceIncreaseTests.payload(try ledger.signedTransaction(id))["inAppOwnershipType"] as? String
    }

    /// The `inAppOwnershipType` of the transaction each notification signed, as `TYPE OWNERSHIP`.
    static func notified(_ ledger: Ledger) throws -> [String] {
        try ledger.notifications().map { notification in
            let payload = try PriceIncreaseTests.payload(try JWS(compactSerialization: notification.signedPayload))
            let data = payload["data"] as? [String: Any]
            let transaction = try (data?["signedTransactionInfo"] as? String).map {
                try PriceIncreaseTests.payload(try JWS(compactSerialization: $0))
            }
            return [notification.type, transaction?["inAppOwnershipType"] as? String].compactMap { $0 }
                .joined(separator: " ")
        }
    }

    @Test func aSharedPurchaseIsOwnedFamilySharedUntilTheSharingStops() async throws {
        try await NotificationOutboxTests.withNotifyingStore { ledger, session in
            let own = try await session.buyProduct(Payment(productID: SampleCatalog.nonConsumable))
            let shared = try await session.shareFamilyPurchase(Payment(productID: Self.shareable))
            #expect(shared.state == .purchased)
            #expect(try ledger.isFamilyShared(shared) && !ledger.isFamilyShared(own))
            #expect(try Self.ownership(ledger, shared.id) == "FAMILY_SHARED")
            #expect(try Self.ownership(ledger, own.id) == "PURCHASED")
            #expect(try ledger.currentEntitlements().map(\.productID).contains(Self.shareable))
            // A restored copy is the same shared purchase.
            let restored = try await PaymentQueue(ledger: ledger).restoreCompletedTransactions().restored.all()
            let copy = try #require(restored.first { $0.productID == Self.shareable })
            #expect(try Self.ownership(ledger, copy.id) == "FAMILY_SHARED")

            let revoked = try await session.revokeFamilySharing(copy.id)
            #expect(revoked.map(\.id) == [copy.id, shared.id])
            #expect(revoked.allSatisfy { $0.revocationDate == NotificationOutboxTests.now && $0.revocationReason == 0 })
            let signed = try PriceIncreaseTests.payload(try ledger.signedTransaction(shared.id))
            #expect(signed["revocationType"] as? String == "FAMILY_REVOKE")
            #expect(try !ledger.currentEntitlements().map(\.productID).contains(Self.shareable))
            #expect(
                try Self.notified(ledger) == [
                    "ONE_TIME_CHARGE PURCHASED", "ONE_TIME_CHARGE FAMILY_SHARED", "REVOKE FAMILY_SHARED",
                ])
            await #expect(throws: StoreControlError.notFamilyShared(shared.id)) {
                try await session.revokeFamilySharing(shared.id)
            }
        }
    }

    @Test func aSharedSubscriptionRenewsSharedAndLosesOnlyItsCurrentPeriod() async throws {
        try await NotificationOutboxTests.withNotifyingStore { ledger, session in
            let shared = try await session.shareFamilyPurchase(Payment(productID: SampleCatalog.yearlySubscription))
            let renewals = try await session.advanceClock(by: 400 * Self.day)
            #expect(renewals.count == 1)
            #expect(try Self.ownership(ledger, renewals[0].id) == "FAMILY_SHARED")
            let revoked = try await session.revokeFamilySharing(shared.id)
            #expect(revoked.map(\.id) == [renewals[0].id], "the expired first period stays as it was")
            #expect(try ledger.transaction(shared.id)?.revocationDate == nil)
            #expect(try ledger.subscriptionStatus(forProduct: SampleCatalog.yearlySubscription)?.state == .revoked)
            #expect(
                try Self.notified(ledger) == [
                    "SUBSCRIBED FAMILY_SHARED", "DID_RENEW FAMILY_SHARED", "REVOKE FAMILY_SHARED",
                ])
        }
    }

    /// A customer subscribed to the group keeps their own subscription beside one a family
    /// member shares: both entitle, each renews as its own (the customer's as PURCHASED, the
    /// share as FAMILY_SHARED), and nothing of the family's product is ever charged to the
    /// customer, during the sharing or after it ended. (The share is pro.yearly, a crossgrade
    /// to another period of the customer's pro.monthly: it was taken as the customer's own
    /// change of product at the next renewal.)
    @Test func aCustomersOwnSubscriptionAndAFamilyShareOfItsGroupRenewEachOnItsOwn() async throws {
        try await NotificationOutboxTests.withNotifyingStore { ledger, session in
            let own = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            let shared = try await session.shareFamilyPurchase(Payment(productID: SampleCatalog.yearlySubscription))
            let sharedEnd = try #require(shared.expirationDate)
            #expect(sharedEnd.timeIntervalSince(shared.purchaseDate) >= 365 * Self.day, "a period of its own")
            #expect(try ledger.pendingProductChange(for: SampleCatalog.subscription) == nil)
            #expect(try ledger.transaction(own.id)?.isUpgraded == false)
            #expect(
                Set(try ledger.currentEntitlements().map(\.productID))
                    == [SampleCatalog.subscription, SampleCatalog.yearlySubscription])
            let statuses = try ledger.subscriptionStatuses(forGroup: "pro")
            #expect(statuses.map(\.isFamilyShared) == [false, true])
            #expect(statuses.map(\.transaction.id) == [own.id, shared.id])
            #expect(statuses.allSatisfy { $0.state == .subscribed && $0.willAutoRenew })
            #expect(
                statuses.map(\.autoRenewProductID) == [SampleCatalog.subscription, SampleCatalog.yearlySubscription])

            let renewed = try await session.advanceClock(by: 40 * Self.day)
            #expect(renewed.map(\.productID) == [SampleCatalog.subscription])
            #expect(try Self.ownership(ledger, renewed[0].id) == "PURCHASED")
            #expect(renewed[0].originalID == own.originalID)

            _ = try await session.revokeFamilySharing(shared.id)
            let later = try await session.advanceClock(by: 400 * Self.day)
            #expect(later.count >= 12 && later.allSatisfy { $0.productID == SampleCatalog.subscription })
            #expect(
                try ledger.allTransactions().filter { $0.productID == SampleCatalog.yearlySubscription }.map(\.id)
                    == [shared.id], "the family's product is never the customer's")
            #expect(try ledger.subscriptionStatus(forProduct: SampleCatalog.subscription)?.state == .subscribed)
            #expect(try ledger.subscriptionStatuses(forGroup: "pro").map(\.state) == [.subscribed, .revoked])
            #expect(
                try Array(Self.notified(ledger).prefix(4)) == [
                    "SUBSCRIBED PURCHASED", "SUBSCRIBED FAMILY_SHARED", "DID_RENEW PURCHASED", "REVOKE FAMILY_SHARED",
                ])
        }
    }

    /// A family member's higher service level is no upgrade of the customer's own lower one:
    /// the customer's basic subscription is not marked upgraded and renews as basic.
    @Test func aHigherLevelSharedIsNoUpgradeOfTheCustomersOwn() async throws {
        try await NotificationOutboxTests.withNotifyingStore { ledger, session in
            let basic = try await session.buyProduct(Payment(productID: SampleCatalog.basicSubscription))
            _ = try await session.shareFamilyPurchase(Payment(productID: SampleCatalog.yearlySubscription))
            #expect(try ledger.transaction(basic.id)?.isUpgraded == false)
            #expect(try ledger.transaction(basic.id)?.expirationDate == basic.expirationDate)
            let renewed = try await session.advanceClock(by: 32 * Self.day)
            #expect(renewed.map(\.productID) == [SampleCatalog.basicSubscription])
        }
    }

    /// Holding the group only through Family Sharing, the customer may still buy their own
    /// subscription, even of the same product (not "already subscribed"), and the share spent no
    /// introductory offer of theirs.
    @Test func aCustomerSubscribedThroughTheFamilyMayBuyTheirOwn() async throws {
        try await NotificationOutboxTests.withNotifyingStore { ledger, session in
            let shared = try await session.shareFamilyPurchase(Payment(productID: SampleCatalog.yearlySubscription))
            #expect(try ledger.isEligibleForIntroductoryOffer(group: "pro"))
            #expect(try ledger.subscriptionStatus(forGroup: "pro")?.isFamilyShared == true)
            let queue = try PaymentQueue(ledger: ledger)
            let own = try await queue.add(Payment(productID: SampleCatalog.yearlySubscription))
            #expect(own.state == .purchased && own.originalID != shared.originalID)
            #expect(try !ledger.isEligibleForIntroductoryOffer(group: "pro"))
            #expect(try ledger.subscriptionStatus(forGroup: "pro")?.transaction.id == own.id)
            #expect(try ledger.subscriptionStatuses(forGroup: "pro").map(\.transaction.id) == [own.id, shared.id])
            #expect(try ledger.currentEntitlements().map(\.id) == [shared.id, own.id], "an entitlement for each")
        }
    }

    /// A store control by product acts on the subscription to that product that is current: a
    /// share, when the customer's own subscription to the product lapsed long ago.
    @Test func controlsActOnTheCurrentSubscriptionToTheProduct() async throws {
        try await NotificationOutboxTests.withNotifyingStore { ledger, session in
            let yearly = SampleCatalog.yearlySubscription
            let own = try await session.buyProduct(Payment(productID: yearly))
            try await session.setAutoRenew(false, for: yearly)
            _ = try await session.advanceClock(by: 400 * Self.day)
            let shared = try await session.shareFamilyPurchase(Payment(productID: yearly))
            #expect(try ledger.subscriptionStatus(forProduct: yearly)?.transaction.id == shared.id)
            try await session.setAutoRenew(false, for: yearly)
            let statuses = try ledger.subscriptionStatuses(forGroup: "pro")
            #expect(statuses.map(\.transaction.id) == [own.id, shared.id])
            #expect(statuses.map(\.state) == [.expired, .subscribed])
            #expect(statuses.map(\.willAutoRenew) == [false, false])
        }
    }

    /// The end of the sharing ends a share waiting in billing retry (its period over, nothing
    /// left to revoke): its billing issue cannot be resolved into a renewal any more.
    @Test func theEndOfTheSharingEndsAShareInBillingRetry() async throws {
        try await NotificationOutboxTests.withNotifyingStore { ledger, session in
            let yearly = SampleCatalog.yearlySubscription
            let shared = try await session.shareFamilyPurchase(Payment(productID: yearly))
            try session.update { $0.billingRetryOnRenewal = true }
            _ = try await session.advanceClock(by: 366 * Self.day)
            #expect(try ledger.subscriptionStatus(forProduct: yearly)?.isInBillingRetry == true)
            #expect(try await session.revokeFamilySharing(shared.id).isEmpty)
            await #expect(throws: StoreControlError.noBillingIssue(yearly)) {
                try await session.resolveBillingIssue(for: yearly)
            }
            #expect(try ledger.allTransactions().map(\.id) == [shared.id])
        }
    }

    @Test func aRefundOfASharedPurchaseRevokesItAndEndsTheSharing() async throws {
        try await NotificationOutboxTests.withNotifyingStore { ledger, session in
            let shared = try await session.shareFamilyPurchase(Payment(productID: Self.shareable))
            try await session.refundTransaction(shared.id)
            #expect(try Self.notified(ledger).last == "REVOKE FAMILY_SHARED")
            await #expect(throws: StoreControlError.notFamilyShared(shared.id)) {
                try await session.revokeFamilySharing(shared.id)
            }
        }
    }

    @Test func whatCannotBeSharedIsRefusedAndChangesNothing() async throws {
        try await NotificationOutboxTests.withNotifyingStore { ledger, session in
            for product in [SampleCatalog.consumable, SampleCatalog.nonConsumable, SampleCatalog.subscription] {
                await #expect(throws: StoreControlError.notFamilyShareable(product)) {
                    try await session.shareFamilyPurchase(Payment(productID: product))
                }
            }
            await #expect(throws: UnknownProductError(productIdentifier: "com.example.none")) {
                try await session.shareFamilyPurchase(Payment(productID: "com.example.none"))
            }
            await #expect(throws: PaymentQueueError.invalidQuantity(0)) {
                try await session.shareFamilyPurchase(Payment(productID: Self.shareable, quantity: 0))
            }
            let own = try await session.buyProduct(Payment(productID: SampleCatalog.nonConsumable))
            await #expect(throws: StoreControlError.notFamilyShared(own.id)) {
                try await session.revokeFamilySharing(own.id)
            }
            await #expect(throws: PaymentQueueError.unknownTransaction(99)) {
                try await session.revokeFamilySharing(99)
            }
            #expect(try ledger.allTransactions().map(\.id) == [own.id], "nothing refused was stored")
            #expect(try Self.notified(ledger) == ["ONE_TIME_CHARGE PURCHASED"])
        }
    }

    @Test func theServersHistorySelectsByOwnership() async throws {
        try await NotificationOutboxTests.withNotifyingStore { ledger, session in
            let own = try await session.buyProduct(Payment(productID: SampleCatalog.nonConsumable))
            let shared = try await session.shareFamilyPurchase(Payment(productID: Self.shareable))
            var query = ServerHistoryQuery()
            query.familyShared = true
            #expect(try ledger.serverHistory(query).transactions.map(\.id) == [shared.id])
            query.familyShared = false
            #expect(try ledger.serverHistory(query).transactions.map(\.id) == [own.id])
            query.familyShared = nil
            #expect(try ledger.serverHistory(query).transactions.map(\.id) == [own.id, shared.id])
        }
    }
}
