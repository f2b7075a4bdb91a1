import Foundation
import OpenStoreKit
import OpenStoreKitTest
import Testing

/// `Product.SubscriptionInfo.Status.updates`, `.all` and `status(transactionID:)`.
@MainActor
@Suite struct SubscriptionStatusUpdatesTests {
    typealias Status = Product.SubscriptionInfo.Status

    @Test func eachChangeOfAStatusIsSentOnceAndNothingBeforeTheSequenceStarts() async throws {
        try await Shop.withSession { session in
            let bought = try await session.buyProduct(identifier: Shop.monthly)
            let recorder = StatusRecorder()
            defer { recorder.stop() }
            let id = UInt(bought.id)
            try session.disableAutoRenewForTransaction(identifier: id)
            try await waitFor(session) { recorder.received.count == 1 }
            try session.enableAutoRenewForTransaction(identifier: id)
            try await waitFor(session) { recorder.received.count == 2 }
            // The free trial week ends: the store renews.
            try session.advanceTime(by: 8 * 86_400)
            try await waitFor(session) { recorder.received.count == 3 }
            let renewal = try #require(await Transaction.latest(for: Shop.monthly)).unsafePayloadValue
            #expect(renewal.id != bought.id)
            // Finishing a transaction changes no status; the refund after it does.
            await renewal.finish()
            try session.refundTransaction(identifier: UInt(renewal.id))
            try await waitFor(session) { recorder.received.count == 4 }
            #expect(
                recorder.summary == [
                    StatusSummary(.subscribed, false, bought.id), StatusSummary(.subscribed, true, bought.id),
                    StatusSummary(.subscribed, true, renewal.id), StatusSummary(.revoked, false, renewal.id),
                ])
            #expect(recorder.received.allSatisfy { $0.renewalInfo.unsafePayloadValue.currentProductID == Shop.monthly })
        }
    }

    @Test func anExpiryIsSentWhenItsTimeComesWithoutAnyCall() async throws {
        try await Shop.withSession { session in
            // Ten seconds a period: time enough to start listening before it ends, even on a busy machine.
            session.timeRate = .oneRenewalEveryTenSeconds
            let bought = try await session.buyProduct(identifier: Shop.yearly)
            try session.disableAutoRenewForTransaction(identifier: UInt(bought.id))
            let recorder = StatusRecorder()
            defer { recorder.stop() }
            // Nobody calls the store: about ten seconds after the purchase the year ends.
            try await waitFor(session) { !recorder.received.isEmpty }
            #expect(recorder.summary == [StatusSummary(.expired, false, bought.id)])
            #expect(try recorder.received.last?.renewalInfo.payloadValue.expirationReason == .autoRenewDisabled)
        }
    }

    @Test func aRenewalIsSentAsSubscribedAndNeverAsExpiredInBetween() async throws {
        try await Shop.withSession { session in
            session.timeRate = .oneRenewalEveryTenSeconds
            let bought = try await session.buyProduct(identifier: Shop.yearly)
            let recorder = StatusRecorder()
            defer { recorder.stop() }
            try await waitFor(session) { recorder.received.count == 1 }
            let renewal = try #require(await Transaction.latest(for: Shop.yearly)).unsafePayloadValue
            #expect(renewal.originalID == bought.id && renewal.reason == .renewal)
            #expect(recorder.summary == [StatusSummary(.subscribed, true, renewal.id)])
        }
    }

    @Test func aSubscriptionScreenFollowsTheStatusAndOpensTheSheets() async throws {
        try await Shop.withSession { session in
            let screen = SubscriptionScreen()
            let bought = try await session.buyProduct(identifier: Shop.monthly)
            #expect(await screen.currentStates() == [Shop.groupID: .subscribed])
            screen.appear()
            defer { screen.disappear() }
            // The screen's task may start listening a little later: wait for its first report.
            let id = UInt(bought.id)
            while screen.reportedStates.isEmpty {
                try session.disableAutoRenewForTransaction(identifier: id)
                try session.enableAutoRenewForTransaction(identifier: id)
                try await Task.sleep(for: .milliseconds(20))
            }
            try await waitFor(session) { screen.renewalLine == "Renews at 3.99 USD" }
            try session.expireSubscription(productIdentifier: Shop.monthly)
            try await waitFor(session) {
                screen.reportedStates.last == .expired && screen.renewalLine == "Does not renew"
            }
            let scene = UIWindowScene()
            #expect(await screen.manage(groupID: Shop.groupID, in: scene))
            await screen.askForReviewIfLoyal(in: scene)
            #expect(session.manageSubscriptionsRequests == [Shop.groupID] && session.reviewRequestCount == 1)
        }
    }

    @Test func allGivesEachGroupEverBoughtThenEnds() async throws {
        try await Shop.withSession { session in
            var none = 0
            for await _ in Status.all { none += 1 }
            #expect(none == 0)
            let bought = try await session.buyProduct(identifier: Shop.monthly)
            _ = try await session.buyProduct(identifier: Shop.greenhouse)
            var groups: [(groupID: String, statuses: [Status])] = []
            for await group in Status.all { groups.append(group) }
            #expect(groups.map(\.groupID) == [Shop.groupID])
            #expect(groups.first?.statuses.map { $0.transaction.unsafePayloadValue.id } == [bought.id])
        }
    }

    @Test func statusForATransactionIsItsGroupsStatus() async throws {
        try await Shop.withSession { session in
            let monthly = try await session.buyProduct(identifier: Shop.monthly)
            let greenhouse = try await session.buyProduct(identifier: Shop.greenhouse)
            let status = try #require(try await Product.SubscriptionInfo.status(transactionID: monthly.id))
            #expect(status.state == .subscribed && status.transaction.unsafePayloadValue.id == monthly.id)
            #expect(try await Product.SubscriptionInfo.status(transactionID: greenhouse.id) == nil)
            #expect(try await Product.SubscriptionInfo.status(transactionID: 999_999) == nil)
            try await session.setSimulatedError(.generic(.notEntitled), forAPI: .subscriptionStatus)
            await #expect(throws: StoreKitError.notEntitled) {
                try await Product.SubscriptionInfo.status(transactionID: monthly.id)
            }
            var groups = 0
            for await _ in Status.all { groups += 1 }
            #expect(groups == 0, "a simulated error ends Status.all at once")
        }
    }
}

/// What a `Status.updates` sequence received, in order.
@MainActor final class StatusRecorder {
    typealias Status = Product.SubscriptionInfo.Status
    var received: [Status] = []
    private var listener: Task<Void, Never>?

    /// Starts listening now: the sequence exists when the call returns.
    init() {
        listener = Self.listen { [weak self] status in await self?.receive(status) }
    }

    private func receive(_ status: Status) {
        received.append(status)
    }

    private nonisolated static func listen(_ receive: @escaping @Sendable (Status) async -> Void) -> Task<Void, Never> {
        var statuses = Status.updates.makeAsyncIterator()
        return Task {
            while let status = await statuses.next() { await receive(status) }
        }
    }

    func stop() { listener?.cancel() }

    /// Each status as (state, will auto-renew, transaction id).
    var summary: [StatusSummary] {
        received.map {
            StatusSummary(
                $0.state, $0.renewalInfo.unsafePayloadValue.willAutoRenew, $0.transaction.unsafePayloadValue.id)
        }
    }
}

struct StatusSummary: Equatable, CustomStringConvertible {
    let state: Product.SubscriptionInfo.RenewalState
    let willAutoRenew: Bool
    let transactionID: UInt64
    init(_ state: Product.SubscriptionInfo.RenewalState, _ willAutoRenew: Bool, _ transactionID: UInt64) {
        (self.state, self.willAutoRenew, self.transactionID) = (state, willAutoRenew, transactionID)
    }
    var description: String { "(\(state), \(willAutoRenew), \(transactionID))" }
}
