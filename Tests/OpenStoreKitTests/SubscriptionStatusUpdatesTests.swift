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

    @Test func finishingOrRedeliveringIsNoChangeAndARelaunchEndsTheSequences() async throws {
        try await Shop.withSession { session in
            let bought = try await session.buyProduct(identifier: Shop.monthly)
            let recorder = StatusRecorder()
            defer { recorder.stop() }
            await bought.finish()
            // A StoreKit 1 observer added gets no unfinished transaction; a relaunch's delivery
            // counts nothing either: more than one read of the watch passes.
            try await Task.sleep(for: .milliseconds(1_500))
            #expect(recorder.received.isEmpty, "\(recorder.summary)")
            try session.disableAutoRenewForTransaction(identifier: UInt(bought.id))
            try await waitFor(session) { recorder.received.count == 1 }
            try session.relaunch()
            try await waitFor(session) { recorder.ended }
        }
    }

    @Test func anExpiryIsSentWhenItsTimeComesWithoutAnyCall() async throws {
        try await Shop.withSession { session in
            // Thirty seconds a period: time enough to start listening before it ends, even on a
            // busy machine.
            session.timeRate = .oneRenewalEveryThirtySeconds
            let bought = try await session.buyProduct(identifier: Shop.yearly)
            try session.disableAutoRenewForTransaction(identifier: UInt(bought.id))
            // The period that ends (on a machine slow enough, the purchase renewed before the
            // control came).
            let last = try #require(session.allTransactions().last { $0.productIdentifier == Shop.yearly })
            let recorder = StatusRecorder()
            defer { recorder.stop() }
            // Nobody calls the store: about thirty seconds after the purchase the year ends.
            try await waitFor(session) { !recorder.received.isEmpty }
            #expect(recorder.summary == [StatusSummary(.expired, false, UInt64(last.identifier))])
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
            // The renewal the status carries: on a machine slow enough, the next one (ten seconds
            // later) may already be made when this reads the store, and sent as subscribed too.
            let renewal = try #require(recorder.received.first).transaction.unsafePayloadValue
            #expect(renewal.originalID == bought.id && renewal.reason == .renewal)
            #expect(recorder.summary.first == StatusSummary(.subscribed, true, renewal.id))
            #expect(recorder.summary.allSatisfy { $0.state == .subscribed && $0.willAutoRenew }, "\(recorder.summary)")
        }
    }

    @Test func aSubscriptionScreenFollowsTheStatusAndOpensTheSheets() async throws {
        try await Shop.withSession { session in
            let screen = SubscriptionScreen()
            let bought = try await session.buyProduct(identifier: Shop.monthly)
            #expect(await screen.currentStates() == [Shop.groupID: .subscribed])
            screen.appear()
            defer { screen.disappear() }
            // The screen's task may start listening a little later: wait for its first report,
            // up to four minutes, a bound for a hang only, as `waitFor`'s (the whole suite runs in
            // parallel on two cores, where a task can wait over a minute to run).
            let id = UInt(bought.id)
            let deadline = Date().addingTimeInterval(240)
            while screen.reportedStates.isEmpty {
                guard Date() < deadline else {
                    Issue.record("the screen never reported a status")
                    return
                }
                try session.disableAutoRenewForTransaction(identifier: id)
                try session.enableAutoRenewForTransaction(identifier: id)
                try await Task.sleep(for: .milliseconds(20))
            }
            try await waitFor(session) { screen.renewalLine == "Renews at 3.99 USD" }
            let scene = UIWindowScene()
            await screen.askForReviewIfLoyal(in: scene)
            #expect(session.reviewRequestCount == 0, "not renewed yet: not loyal")
            try session.advanceTime(by: 8 * 86_400)
            try await waitFor(session) { screen.reportedStates.count >= 2 }
            await screen.askForReviewIfLoyal(in: scene)
            #expect(session.reviewRequestCount == 1, "renewed once: loyal")
            try session.expireSubscription(productIdentifier: Shop.monthly)
            try await waitFor(session) {
                screen.reportedStates.last == .expired && screen.renewalLine == "Does not renew"
            }
            #expect(await screen.manage(groupID: Shop.groupID, in: scene))
            #expect(session.manageSubscriptionsRequests == [Shop.groupID])
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
    /// The sequence ended (its store's launch ended).
    var ended = false
    private var listener: Task<Void, Never>?

    /// Starts listening now: the sequence exists when the call returns.
    init() {
        listener = Self.listen(
            receive: { [weak self] status in await self?.receive(status) }, end: { [weak self] in await self?.end() })
    }

    private func end() {
        ended = true
    }

    private func receive(_ status: Status) {
        received.append(status)
    }

    private nonisolated static func listen(
        receive: @escaping @Sendable (Status) async -> Void, end: @escaping @Sendable () async -> Void
    ) -> Task<Void, Never> {
        var statuses = Status.updates.makeAsyncIterator()
        return Task {
            while let status = await statuses.next() { await receive(status) }
            await end()
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
