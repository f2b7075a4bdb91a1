import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

/// Refund requests: the customer asks, the App Store grants (a refund) or declines.
@Suite struct RefundRequestTests {
    /// The notifications recorded so far, as `TYPE` or `TYPE reason` for a consumption request.
    static func notified(_ ledger: Ledger) throws -> [String] {
        try ledger.notifications().map { notification in
            let payload =
                try JSONSerialization.jsonObject(
                    with: try JWS(compactSerialization: notification.signedPayload).payload) as? [String: Any]
            let reason = (payload?["data"] as? [String: Any])?["consumptionRequestReason"] as? String
            return [notification.type, reason].compactMap { $0 }.joined(separator: " ")
        }
    }

    @Test func aRequestWaitsThenAGrantRefundsAndADeclineLeavesThePurchase() async throws {
        try await NotificationOutboxTests.withNotifyingStore { ledger, session in
            let coins = try await session.buyProduct(Payment(productID: SampleCatalog.consumable))
            let pro = try await session.buyProduct(Payment(productID: SampleCatalog.nonConsumable))
            try await session.requestRefund(coins.id, reason: .unintendedPurchase)
            try await session.requestRefund(pro.id)
            #expect(try ledger.refundRequests().map(\.outcome) == [.pending, .pending])
            let granted = try await session.decideRefundRequest(coins.id, .grant)
            #expect(granted.revocationDate == NotificationOutboxTests.now && granted.revocationReason == 0)
            let declined = try await session.decideRefundRequest(pro.id, .decline)
            #expect(declined.revocationDate == nil)
            let requests = try ledger.refundRequests()
            #expect(requests.map(\.transactionID) == [coins.id, pro.id])
            #expect(requests.map(\.outcome) == [.granted, .declined])
            #expect(requests.map(\.reason) == [.unintendedPurchase, .other])
            #expect(requests.allSatisfy { $0.decidedAt == NotificationOutboxTests.now })
            // A non-consumable's request asks the server for nothing (Apple: consumables and
            // auto-renewable subscriptions only).
            #expect(
                try Self.notified(ledger) == [
                    "ONE_TIME_CHARGE", "ONE_TIME_CHARGE", "CONSUMPTION_REQUEST UNINTENDED_PURCHASE", "REFUND",
                    "REFUND_DECLINED",
                ])
            // After a decline the customer may ask again.
            try await session.requestRefund(pro.id, reason: .legal)
            #expect(try ledger.refundRequest(of: pro.id)?.outcome == .pending)
            #expect(try ledger.refundRequest(of: pro.id)?.reason == .legal)
        }
    }

    @Test func aSubscriptionsRequestAsksForConsumptionAndAGrantRevokesIt() async throws {
        try await NotificationOutboxTests.withNotifyingStore { ledger, session in
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            try await session.requestRefund(bought.id, reason: .unsatisfiedWithPurchase)
            try await session.decideRefundRequest(bought.id, .grant)
            #expect(try ledger.subscriptionStatus(forProduct: SampleCatalog.subscription)?.state == .revoked)
            #expect(
                try Self.notified(ledger).suffix(2) == ["CONSUMPTION_REQUEST UNSATISFIED_WITH_PURCHASE", "REFUND"])
        }
    }

    @Test func requestsTheStoreCannotTakeAreRefusedAndChangeNothing() async throws {
        try await NotificationOutboxTests.withNotifyingStore { ledger, session in
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.nonConsumable))
            let queue = try PaymentQueue(ledger: ledger)
            let deferred = try await queue.add(
                Payment(productID: SampleCatalog.consumable, simulatedOutcome: .deferred))
            let before = try ledger.notifications().count
            await #expect(throws: PaymentQueueError.unknownTransaction(999)) { try await session.requestRefund(999) }
            await #expect(throws: StoreControlError.cannotRefund(deferred.id, state: .deferred)) {
                try await session.requestRefund(deferred.id)
            }
            await #expect(throws: StoreControlError.noRefundRequest(bought.id)) {
                try await session.decideRefundRequest(bought.id, .grant)
            }
            try await session.requestRefund(bought.id)
            await #expect(throws: StoreControlError.refundRequestPending(bought.id)) {
                try await session.requestRefund(bought.id, reason: .legal)
            }
            #expect(try ledger.refundRequest(of: bought.id)?.reason == .other, "the refused request changed nothing")
            // A refund made directly grants the waiting request; a refunded purchase takes none.
            try await session.refundTransaction(bought.id)
            #expect(try ledger.refundRequest(of: bought.id)?.outcome == .granted)
            await #expect(throws: StoreControlError.alreadyRefunded(bought.id)) {
                try await session.requestRefund(bought.id)
            }
            await #expect(throws: StoreControlError.noRefundRequest(bought.id)) {
                try await session.decideRefundRequest(bought.id, .decline)
            }
            #expect(try ledger.notifications().count == before + 1, "only the refund was notified")
        }
    }

    @Test func deletingATransactionDeletesItsRequest() async throws {
        try await withTemporaryLedger { ledger in
            let session = StoreTestSession(ledger: ledger)
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.nonConsumable))
            try await session.requestRefund(bought.id)
            try await session.deleteTransaction(bought.id)
            #expect(try ledger.refundRequests().isEmpty)
            let again = try await session.buyProduct(Payment(productID: SampleCatalog.consumable))
            try await session.requestRefund(again.id)
            _ = try await session.clearTransactions()
            #expect(try ledger.refundRequests().isEmpty)
        }
    }

    /// A prorated refund (REFUND_PRORATED): revoked as a full one, its part signed as Apple's
    /// `revocationPercentage` on the purchase and its restored copy; a part out of 1...99,999
    /// is refused and changes nothing.
    @Test func aProratedRefundRevokesAndSignsItsPart() async throws {
        try await NotificationOutboxTests.withNotifyingStore { ledger, session in
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            let restored = try await PaymentQueue(ledger: ledger).restoreCompletedTransactions().restored.all()
            let copy = try #require(restored.first)
            for refused in [0, 100_000, -5] {
                await #expect(throws: StoreControlError.invalidRefundPortion(refused)) {
                    try await session.refundTransaction(bought.id, revocationPercentage: refused)
                }
            }
            #expect(try ledger.transaction(bought.id)?.revocationDate == nil, "nothing refused changed")
            try await session.requestRefund(bought.id)
            try await session.decideRefundRequest(bought.id, .grantProrated(revocationPercentage: 25_000))
            #expect(try ledger.subscriptionStatus(forProduct: SampleCatalog.subscription)?.state == .revoked)
            #expect(try ledger.refundRequest(of: bought.id)?.outcome == .granted)
            for id in [bought.id, copy.id] {
                let signed = try PriceIncreaseTests.payload(try ledger.signedTransaction(id))
                #expect(signed["revocationType"] as? String == "REFUND_PRORATED", "\(id)")
                #expect(signed["revocationPercentage"] as? Int == 25_000, "\(id)")
                #expect(try ledger.revocationPercentage(of: id) == 25_000)
            }
            #expect(try Self.notified(ledger).last == "REFUND")
            // A full refund says so, with no percentage.
            let other = try await session.buyProduct(Payment(productID: SampleCatalog.nonConsumable))
            try await session.refundTransaction(other.id)
            let signed = try PriceIncreaseTests.payload(try ledger.signedTransaction(other.id))
            #expect(signed["revocationType"] as? String == "REFUND_FULL" && signed["revocationPercentage"] == nil)
            // Deleting a refunded transaction deletes its part with it.
            try await session.deleteTransaction(copy.id)
            #expect(try ledger.revocationPercentage(of: copy.id) == nil)
        }
    }
}
