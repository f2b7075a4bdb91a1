import Foundation
import OpenStoreKit
import OpenStoreKitTest
import Testing

import enum LedgerModel.PaymentQueueError
import enum LedgerModel.StoreControlError

/// Price increases through StoreKit: the test session asks for consent, the app receives the
/// App Store's message (StoreKit 2) or its queue delegate is asked (StoreKit 1), the renewal
/// info says where the subscriber stands, and the renewal charges the agreed price.
@Suite struct PriceConsentTests {
    static let month: TimeInterval = 31 * 86_400

    /// The renewal info of the shop's subscription group.
    static func renewalInfo() async throws -> Product.SubscriptionInfo.RenewalInfo {
        let status = try #require(try await Product.SubscriptionInfo.status(for: Shop.groupID).first)
        return try status.renewalInfo.payloadValue
    }

    @MainActor @Test func theAppReceivesTheConsentMessageAndTheRenewalChargesTheAgreedPrice() async throws {
        try await Shop.withSession { session in
            let bought = try await session.buyProduct(identifier: Shop.monthly)
            try session.requestPriceIncreaseConsentForTransaction(
                identifier: Int(bought.id), price: Decimal(string: "4.99"))
            await session.waitUntilIdle()
            #expect(try await Self.renewalInfo().priceIncreaseStatus == .pending)
            #expect(try await Self.renewalInfo().renewalPrice == Decimal(string: "4.99"))
            #expect(session.allTransactions().map(\.isPendingPriceIncreaseConsent) == [true])

            // The launch's first listener receives the message made before it listened.
            var messages = Message.messages.makeAsyncIterator()
            let message = try #require(await messages.next())
            #expect(message.reason == .priceIncreaseConsent)
            try message.display(in: UIWindowScene())
            #expect(session.priceConsentSheetCount == 1)

            try session.consentToPriceIncreaseForTransaction(identifier: Int(bought.id))
            await session.waitUntilIdle()
            #expect(try await Self.renewalInfo().priceIncreaseStatus == .agreed)
            #expect(session.allTransactions().map(\.isPendingPriceIncreaseConsent) == [false])
            try message.display(in: UIWindowScene())
            #expect(session.priceConsentSheetCount == 1, "an answered request shows nothing")

            try session.advanceTime(by: Self.month)
            await session.waitUntilIdle()
            let renewal = try #require(await Transaction.latest(for: Shop.monthly)?.payloadValue)
            #expect(renewal.id != bought.id && renewal.price == Decimal(string: "4.99"))
            #expect(try await Self.renewalInfo().priceIncreaseStatus == .noIncreasePending)
        }
    }

    @MainActor @Test func aRequestMadeWhileListeningArrivesAndARelaunchMessagesItAgain() async throws {
        try await Shop.withSession { session in
            let bought = try await session.buyProduct(identifier: Shop.monthly)
            let listening = Task { @MainActor in
                var messages = Message.messages.makeAsyncIterator()
                return await messages.next()
            }
            // The listener is in place once the session is idle (its first `next()` waits).
            await session.waitUntilIdle()
            try session.requestPriceIncreaseConsentForTransaction(identifier: Int(bought.id))
            await session.waitUntilIdle()
            #expect(await listening.value?.reason == .priceIncreaseConsent)
            // The default price: the catalog's.
            #expect(try await Self.renewalInfo().renewalPrice == Decimal(string: "3.99"))

            try session.relaunch()
            var messages = Message.messages.makeAsyncIterator()
            #expect(await messages.next()?.reason == .priceIncreaseConsent, "each launch messages a waiting request")
        }
    }

    @MainActor @Test func aStoreKit1DelegateDecidesWhenTheSheetShows() async throws {
        try await Shop.withSession { session in
            let bought = try await session.buyProduct(identifier: Shop.monthly)
            try session.requestPriceIncreaseConsentForTransaction(identifier: Int(bought.id))
            await session.waitUntilIdle()
            let delegate = ConsentDelegate(showNow: false)
            let queue = SKPaymentQueue.default()
            queue.delegate = delegate
            await session.waitUntilIdle()
            #expect(delegate.asked == 1 && session.priceConsentSheetCount == 0)
            queue.showPriceConsentIfNeeded()
            queue.showPriceConsentIfNeeded()
            #expect(session.priceConsentSheetCount == 1, "shown once, when asked")

            // The subscriber declines: auto-renew off, and the subscription ends with its period.
            try session.declinePriceIncreaseForTransaction(identifier: Int(bought.id))
            await session.waitUntilIdle()
            #expect(session.allTransactions().map(\.autoRenewingEnabled) == [false])
            try session.advanceTime(by: Self.month)
            await session.waitUntilIdle()
            let info = try await Self.renewalInfo()
            #expect(info.expirationReason == .didNotConsentToPriceIncrease && !info.willAutoRenew)
            #expect(await Transaction.currentEntitlement(for: Shop.monthly) == nil)
            #expect(delegate.asked == 1, "a delegate is asked once per request")
        }
    }

    @MainActor @Test func aDelegateThatSaysYesShowsTheSheetWhenTheRequestArrives() async throws {
        try await Shop.withSession { session in
            let bought = try await session.buyProduct(identifier: Shop.monthly)
            let delegate = ConsentDelegate(showNow: true)
            SKPaymentQueue.default().delegate = delegate
            try session.requestPriceIncreaseConsentForTransaction(identifier: Int(bought.id))
            await session.waitUntilIdle()
            #expect(delegate.asked == 1 && session.priceConsentSheetCount == 1)
            SKPaymentQueue.default().showPriceConsentIfNeeded()
            #expect(session.priceConsentSheetCount == 1, "nothing was kept for later")
        }
    }

    @MainActor @Test func statusUpdatesReportTheRequestAndTheAnswer() async throws {
        try await Shop.withSession { session in
            let bought = try await session.buyProduct(identifier: Shop.monthly)
            let seen = PriceIncreaseRecorder()
            let watching = Task { @MainActor in
                for await status in Product.SubscriptionInfo.Status.updates {
                    seen.statuses.append(try status.renewalInfo.payloadValue.priceIncreaseStatus)
                }
            }
            defer { watching.cancel() }
            // The task may start listening a little later: change the status until it reports.
            let id = UInt(bought.id)
            for _ in 0..<1_000 where seen.statuses.isEmpty {
                try session.disableAutoRenewForTransaction(identifier: id)
                try session.enableAutoRenewForTransaction(identifier: id)
                await session.waitUntilIdle()
            }
            try session.requestPriceIncreaseConsentForTransaction(identifier: Int(bought.id))
            for _ in 0..<1_000 where !seen.statuses.contains(.pending) { await session.waitUntilIdle() }
            try session.consentToPriceIncreaseForTransaction(identifier: Int(bought.id))
            for _ in 0..<1_000 where !seen.statuses.contains(.agreed) { await session.waitUntilIdle() }
            #expect(seen.statuses.filter { $0 != .noIncreasePending } == [.pending, .agreed])
        }
    }

    @MainActor @Test func aSubscriptionInBillingRetryMessagesItsBillingProblemUntilResolved() async throws {
        try await Shop.withSession { session in
            session.shouldEnterBillingRetryOnRenewal = true
            let bought = try await session.buyProduct(identifier: Shop.monthly)
            try session.advanceTime(by: Self.month)
            await session.waitUntilIdle()
            var messages = Message.messages.makeAsyncIterator()
            let message = try #require(await messages.next())
            #expect(message.reason == .billingIssue && message.reason.localizedDescription == "Billing issue")
            #expect(Message.Reason(rawValue: message.reason.rawValue) == .billingIssue)
            try message.display(in: UIWindowScene())
            #expect(session.billingIssueSheetCount == 1 && session.priceConsentSheetCount == 0)
            try session.resolveIssueForTransaction(identifier: UInt(bought.id))
            await session.waitUntilIdle()
            try message.display(in: UIWindowScene())
            #expect(session.billingIssueSheetCount == 1, "a resolved issue shows nothing")
        }
    }

    /// Requests made and answered while nobody listens leave one message, the newest: what
    /// waits for the first listener stays bounded.
    @MainActor @Test func onlyTheNewestRequestWaitsForTheFirstListener() async throws {
        try await Shop.withSession { session in
            let bought = try await session.buyProduct(identifier: Shop.monthly)
            for round in 0..<20 {
                try session.requestPriceIncreaseConsentForTransaction(
                    identifier: Int(bought.id), price: Decimal(4 + round))
                await session.waitUntilIdle()
                if round < 19 { try session.consentToPriceIncreaseForTransaction(identifier: Int(bought.id)) }
            }
            var messages = Message.messages.makeAsyncIterator()
            let first = try #require(await messages.next())
            try first.display(in: UIWindowScene())
            #expect(session.priceConsentSheetCount == 1, "the first message is the request still waiting")
        }
    }

    @Test func controlsTheStoreCannotTakeThrowItsError() async throws {
        try await Shop.withSession { session in
            let bought = try await session.buyProduct(identifier: Shop.monthly)
            #expect(throws: PaymentQueueError.unknownTransaction(UInt64(truncatingIfNeeded: -1))) {
                try session.requestPriceIncreaseConsentForTransaction(identifier: -1)
            }
            #expect(throws: StoreControlError.noPriceIncrease(Shop.monthly)) {
                try session.consentToPriceIncreaseForTransaction(identifier: Int(bought.id))
            }
            let seeds = try await session.buyProduct(identifier: Shop.seeds)
            #expect(throws: StoreControlError.notAutoRenewable(Shop.seeds)) {
                try session.requestPriceIncreaseConsentForTransaction(identifier: Int(seeds.id))
            }
        }
    }
}

/// A StoreKit 1 queue delegate that counts the price consent questions and answers `showNow`.
@MainActor final class ConsentDelegate: NSObject, SKPaymentQueueDelegate {
    let showNow: Bool
    private(set) var asked = 0

    init(showNow: Bool) { self.showNow = showNow }

    nonisolated func paymentQueueShouldShowPriceConsent(_ paymentQueue: SKPaymentQueue) -> Bool {
        MainActor.assumeIsolated {
            asked += 1
            return showNow
        }
    }
}

/// The price increase statuses a `Status.updates` listener saw, in order.
@MainActor final class PriceIncreaseRecorder {
    var statuses: [Product.SubscriptionInfo.RenewalInfo.PriceIncreaseStatus] = []
}
