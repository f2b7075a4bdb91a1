import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

@testable import AppStoreServer

/// Sending the outbox to a real receiver on loopback: each attempt recorded with Apple's
/// `sendAttemptResult`, retries 1, 12, 24, 48 and 72 hours after the previous attempt by the
/// store's clock, one UUID for every attempt, each notification on its own.
@Suite(.serialized) struct NotificationSenderTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let hour: TimeInterval = 3_600

    /// A ledger of the sample catalog whose notifications go to a fresh receiver.
    static func withReceiver(
        attemptTimeout: Duration = .seconds(5),
        _ body: (Ledger, StoreTestSession, NotificationCollector, NotificationSender) async throws -> Void
    ) async throws {
        let receiver = try await NotificationCollector.start()
        var limits = NotificationSender.Limits()
        limits.attemptTimeout = attemptTimeout
        try await withTemporaryLedger(configuration: LedgerConfiguration(clock: .fixed(now))) { ledger in
            let session = StoreTestSession(ledger: ledger)
            _ = try session.set(.notificationURL, to: receiver.url)
            let sender = NotificationSender(ledger: ledger, limits: limits)
            do {
                try await body(ledger, session, receiver, sender)
            } catch {
                try? await sender.shutdown()
                await receiver.stop()
                throw error
            }
            try await sender.shutdown()
        }
        await receiver.stop()
    }

    @Test func aSuccessDeliversItOnce() async throws {
        try await Self.withReceiver { ledger, session, receiver, sender in
            receiver.answer(206)
            _ = try await session.buyProduct(Payment(productID: SampleCatalog.consumable))
            let round = try await sender.sendDue()
            #expect(round.attempted.map(\.status) == [.delivered])
            #expect(round.attempted.first?.attempts.map(\.result) == [.success])
            #expect(round.attempted.first?.attempts.first?.httpStatus == 206)
            #expect(try await sender.sendDue().attempted.isEmpty, "delivered: never sent again")
            #expect(receiver.signedPayloads == [try ledger.notifications()[0].signedPayload])
        }
    }

    @Test func aFailureIsRetriedOnApplesScheduleByTheStoreClockWithOneUUID() async throws {
        try await Self.withReceiver { ledger, session, receiver, sender in
            receiver.answer(500)
            _ = try await session.buyProduct(Payment(productID: SampleCatalog.consumable))
            var attempted: ServerNotification?
            for (number, delay) in [0.0, 1, 12, 24, 48, 72].enumerated() {
                if delay > 1 {
                    _ = try await session.advanceClock(by: (delay - 1) * Self.hour + 3_599)
                    #expect(
                        try await sender.sendDue().attempted.isEmpty, "attempt \(number + 1) is not due a second early")
                    _ = try await session.advanceClock(by: 1)
                } else if delay == 1 {
                    _ = try await session.advanceClock(by: Self.hour)
                }
                let next: ServerNotification = try #require(try await sender.sendDue().attempted.first)
                #expect(next.attempts.count == number + 1)
                attempted = next
            }
            let failed = try #require(attempted)
            #expect(failed.status == .failed && failed.nextAttemptDate == nil)
            #expect(failed.attempts.allSatisfy { $0.result == .unsuccessfulHTTPResponseCode && $0.httpStatus == 500 })
            let gaps = zip(failed.attempts.dropFirst(), failed.attempts).map {
                $0.date.timeIntervalSince($1.date) / Self.hour
            }
            #expect(gaps == [1, 12, 24, 48, 72])
            _ = try await session.advanceClock(by: 1_000 * Self.hour)
            #expect(try await sender.sendDue().attempted.isEmpty, "six attempts, then no more")
            #expect(
                receiver.signedPayloads.count == 6 && Set(receiver.signedPayloads).count == 1,
                "the same payload each time")
        }
    }

    @Test func anUnreachableServerIsASocketIssueAndATimeoutIsTimedOut() async throws {
        try await Self.withReceiver(attemptTimeout: .milliseconds(500)) { ledger, session, receiver, sender in
            receiver.answer(200, after: .seconds(3))
            _ = try await session.buyProduct(Payment(productID: SampleCatalog.consumable))
            #expect(try await sender.sendDue().attempted.first?.attempts.last?.result == .timedOut)
            await receiver.stop()
            _ = try await session.advanceClock(by: Self.hour)
            let refused = try await sender.sendDue().attempted.first
            #expect(refused?.attempts.last?.result == .socketIssue, "\(String(describing: refused?.attempts))")
            #expect(refused?.status == .pending)
        }
    }

    /// A failed attempt delays only its notification: a later one of the same transaction goes
    /// out on time, before the first one's retry (Apple's order: a server keeps the notification
    /// with the latest `signedDate`, which a retry keeps).
    @Test func aFailedNotificationDelaysOnlyItself() async throws {
        try await Self.withReceiver { ledger, session, receiver, sender in
            receiver.answer(503)
            _ = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            #expect(try await sender.sendDue().attempted.map(\.status) == [.pending], "the first attempt fails")
            receiver.answer(200)
            _ = try await session.advanceClock(by: Self.hour / 2)
            try await session.setAutoRenew(false, for: SampleCatalog.subscription)
            let second = try await sender.sendDue().attempted
            #expect(second.map(\.type) == ["DID_CHANGE_RENEWAL_STATUS"] && second.map(\.status) == [.delivered])
            _ = try await session.advanceClock(by: Self.hour / 2)
            let retried = try await sender.sendDue().attempted
            #expect(retried.map(\.type) == ["SUBSCRIBED"] && retried.map(\.status) == [.delivered])
            // Arrived out of order: the one signed last is the latest state.
            let signed = try ledger.notifications().map { ($0.type, $0.date) }
            #expect(signed.map(\.0) == ["SUBSCRIBED", "DID_CHANGE_RENEWAL_STATUS"])
            #expect(signed[0].1 < signed[1].1)
            #expect(
                receiver.signedPayloads.suffix(2)
                    == (try ledger.notifications().reversed().map(\.signedPayload)).suffix(2)
            )
        }
    }

    @Test func theServerSendsWhatAnotherConnectionCommitsAtOnce() async throws {
        let receiver = try await NotificationCollector.start()
        try await withTemporaryLedger { ledger in
            _ = try StoreTestSession(ledger: ledger).set(.notificationURL, to: receiver.url)
            let server = AppStoreHTTPServer(ledger: ledger, port: 0)
            let serving = Task { try await server.run() }
            // Another connection to the file: as `ledger purchase` in another process.
            let other = try Ledger.open(at: ledger.path)
            let started = ContinuousClock.now
            _ = try await StoreTestSession(ledger: other).buyProduct(Payment(productID: SampleCatalog.consumable))
            let arrived = await receiver.wait(forCount: 1, within: 5)
            let elapsed = ContinuousClock.now - started
            // The round's attempts are recorded once its POSTs end: wait for that before stopping.
            let deadline = ContinuousClock.now + .seconds(5)
            while try ledger.notifications().first?.status != .delivered, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            serving.cancel()
            _ = try? await serving.value
            try other.close()
            // Seen by polling (every 10 ms), not at some later sweep: well under 5 seconds even on a
            // loaded machine (`ledger-lab bench` measures the latency itself).
            #expect(arrived && elapsed < .seconds(5), "arrived \(arrived) after \(elapsed)")
            #expect(try ledger.notifications().map(\.status) == [.delivered])
        }
        await receiver.stop()
    }

    /// While it runs, the server renews what falls due on the store's clock (the App Store
    /// renews whether the app runs or not) and notifies it, with no other process acting.
    @Test func theServerRenewsWhatFallsDueAndNotifiesIt() async throws {
        let receiver = try await NotificationCollector.start()
        try await withTemporaryLedger { ledger in
            let session = StoreTestSession(ledger: ledger)
            _ = try session.set(.notificationURL, to: receiver.url)
            try session.update { $0.timeRate = .oneRenewalEveryTwoSeconds }
            _ = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            let serving = Task { try await AppStoreHTTPServer(ledger: ledger, port: 0).run() }
            let deadline = ContinuousClock.now + .seconds(20)
            var renewed = false
            while !renewed, ContinuousClock.now < deadline {
                renewed = try ledger.notifications().contains { $0.type == "DID_RENEW" && $0.status == .delivered }
                try await Task.sleep(for: .milliseconds(50))
            }
            serving.cancel()
            _ = try? await serving.value
            #expect(renewed, "a renewal made and notified by the server alone")
            #expect(try ledger.allTransactions().contains { $0.reason == .renewal })
        }
        await receiver.stop()
    }

    /// A running sender POSTs while the ledger's write lock is held by another process (whose
    /// commits a purchase burst keeps making), and records the attempts once it is free: the
    /// record never holds a notification back.
    @Test(.enabled(if: Self.hasPython, "needs python3 to hold the lock from another process"))
    func aRunningSenderSendsWhileAnotherProcessHoldsTheWriteLock() async throws {
        try await Self.withReceiver { ledger, session, receiver, sender in
            for _ in 0..<3 { _ = try await session.buyProduct(Payment(productID: SampleCatalog.consumable)) }
            let holder = try Self.holdWriteLock(of: ledger.path, seconds: 3)
            let running = Task { await sender.run() }
            let arrived = await receiver.wait(forCount: 3, within: 2.5)
            // Seen through a connection of its own: the ledger's waits behind the record.
            let observer = try Ledger.open(at: ledger.path, access: .readOnly)
            let stillPending = try observer.notifications().map(\.status)
            try observer.close()
            holder.waitUntilExit()
            let deadline = ContinuousClock.now + .seconds(10)
            while try ledger.notifications().contains(where: { $0.status != .delivered }),
                ContinuousClock.now < deadline
            {
                try await Task.sleep(for: .milliseconds(20))
            }
            running.cancel()
            await running.value
            #expect(arrived, "all three POSTed while the lock was held")
            #expect(stillPending == [.pending, .pending, .pending], "recorded only once the lock is free")
            #expect(try ledger.notifications().map(\.status) == [.delivered, .delivered, .delivered])
            #expect(try ledger.notifications().map(\.attempts.count) == [1, 1, 1], "each sent once")
            #expect(receiver.signedPayloads.count == 3)
        }
    }

    /// The sender of `ledger serve` runs the batches a mass extension has left, one a round,
    /// until it is complete: the server answered after the first.
    @Test func aRunningSenderRunsAMassExtensionToItsEnd() async throws {
        try await withTemporaryLedger(configuration: LedgerConfiguration(clock: .fixed(Self.now))) { ledger in
            try ledger.appendSyntheticCustomers(
                count: 1_200, purchasesEach: 1, productID: SampleCatalog.subscription, prefix: "subscriber")
            let first = try ledger.extendRenewalDatesForActiveSubscribers(
                productID: SampleCatalog.subscription, days: 3, reason: 0, requestIdentifier: "mass", batches: 1)
            #expect(first.completeDate == nil)
            let sender = NotificationSender(ledger: ledger)
            let running = Task { await sender.run(renewing: false) }
            let deadline = ContinuousClock.now + .seconds(30)
            while try ledger.massRenewalExtension(requestIdentifier: "mass")?.completeDate == nil,
                ContinuousClock.now < deadline
            {
                try await Task.sleep(for: .milliseconds(20))
            }
            running.cancel()
            await running.value
            try await sender.shutdown()
            let done = try #require(try ledger.massRenewalExtension(requestIdentifier: "mass"))
            #expect(done.completeDate != nil && done.succeededCount == 1_200 && done.failedCount == 0)
        }
    }

    /// At most `limits.inFlight` attempts run at once, and a running sender starts the next as
    /// soon as one ends (not at its next look).
    @Test func aRunningSenderKeepsItsSlotsFullAndNoFuller() async throws {
        let receiver = try await NotificationCollector.start()
        var limits = NotificationSender.Limits()
        limits.inFlight = 2
        try await withTemporaryLedger(configuration: LedgerConfiguration(clock: .fixed(Self.now))) { ledger in
            let session = StoreTestSession(ledger: ledger)
            _ = try session.set(.notificationURL, to: receiver.url)
            for _ in 0..<6 { _ = try await session.buyProduct(Payment(productID: SampleCatalog.consumable)) }
            // Each answer takes 2 seconds: the first two hold both slots that long.
            receiver.answer(200, after: .seconds(2))
            let sender = NotificationSender(ledger: ledger, limits: limits)
            let running = Task { await sender.run(pollInterval: .seconds(30)) }
            _ = await receiver.wait(forCount: 2, within: 5)
            try await Task.sleep(for: .milliseconds(300))
            let firstWave = receiver.arrivals.count
            // Each wave waits for a slot, not for the 30-second look.
            let all = await receiver.wait(forCount: 6, within: 20)
            running.cancel()
            await running.value
            try await sender.shutdown()
            #expect(firstWave == 2, "two in flight at once, not more")
            #expect(all, "the next attempts start as slots free up")
        }
        await receiver.stop()
    }

    /// A notification URL an older release took (its port past 65535) neither stops the sender
    /// nor sends nowhere: each attempt fails as `OTHER` with the reason, and a URL set right
    /// afterwards delivers the same notification. A subscription's charge, whose rules read the
    /// settings first, records its notification as a one-time purchase does.
    @Test(arguments: [SampleCatalog.consumable, SampleCatalog.subscription])
    func aStoredURLThatCannotBeUsedFailsEachAttemptWithItsReason(productID: String) async throws {
        try await Self.withReceiver { ledger, session, receiver, sender in
            try ledger.setStoreSettings(["notificationURL": "http://127.0.0.1:65536/x"])
            _ = try await session.buyProduct(Payment(productID: productID))
            let failed = try #require(try await sender.sendDue().attempted.first)
            #expect(failed.status == .pending && failed.attempts.map(\.result) == [.other])
            #expect(failed.attempts.first?.httpStatus == nil)
            #expect(
                failed.attempts.first?.detail
                    == "the notification URL \"http://127.0.0.1:65536/x\" cannot be used: its port 65536 is not between 1 and 65535"
            )
            #expect(try ledger.notifications()[0].attempts == failed.attempts, "the detail is recorded")
            _ = try session.set(.notificationURL, to: receiver.url)
            _ = try await session.advanceClock(by: Self.hour)
            #expect(try await sender.sendDue().attempted.map(\.status) == [.delivered])
        }
    }

    /// A redirect is not followed (the POST would become a GET without its body): the attempt
    /// fails with the status and where it pointed, and the receiver saw one POST, nothing else.
    @Test(arguments: [301, 302, 307, 308])
    func aRedirectIsNotADelivery(status: Int) async throws {
        let (attempted, receiver) = try await Self.oneAttempt(to: .redirect(status: status))
        let attempt = try #require(attempted?.attempts.first)
        #expect(attempted?.status == .pending)
        #expect(attempt.result == .unsuccessfulHTTPResponseCode && attempt.httpStatus == status)
        #expect(attempt.detail?.contains("redirect (to \"\(receiver.url)/moved\") is not followed") == true)
        #expect(receiver.methods == ["POST"])
    }

    /// The timeout counts from the request's start to the end of the answer: a receiver that
    /// answers at once and then trickles its body is cut short at the limit, not at its end.
    @Test func aTricklingAnswerIsCutShortAtTheTimeout() async throws {
        var limits = NotificationSender.Limits()
        limits.attemptTimeout = .seconds(1)
        let started = ContinuousClock.now
        let (attempted, _) = try await Self.oneAttempt(
            to: .trickle(every: .milliseconds(200), count: 100), limits: limits)
        let elapsed = ContinuousClock.now - started
        #expect(attempted?.attempts.map(\.result) == [.timedOut])
        #expect(attempted?.attempts.first?.detail == "no complete answer within 1 s")
        // 20 seconds of trickle; cut at 1 (a loaded machine, and the set-up, may add a little).
        #expect(elapsed < .seconds(8), "\(elapsed)")
    }

    /// An answer whose body is cut short is a premature close, not a delivery.
    @Test func anAnswerCutShortIsAPrematureClose() async throws {
        let (attempted, _) = try await Self.oneAttempt(to: .cutShort)
        #expect(attempted?.status == .pending)
        #expect(attempted?.attempts.map(\.result) == [.prematureClose], "\(String(describing: attempted))")
    }

    /// One purchase's notification sent once, with `limits`, to a receiver that misbehaves as
    /// `behaviour` says: the notification as its attempt left it, and the receiver (stopped).
    static func oneAttempt(
        to behaviour: HostileReceiver.Behaviour, limits: NotificationSender.Limits = .init()
    ) async throws -> (ServerNotification?, HostileReceiver) {
        let receiver = try await HostileReceiver.start(behaviour)
        var attempted: ServerNotification?
        try await withTemporaryLedger(configuration: LedgerConfiguration(clock: .fixed(Self.now))) { ledger in
            let session = StoreTestSession(ledger: ledger)
            _ = try session.set(.notificationURL, to: receiver.url)
            _ = try await session.buyProduct(Payment(productID: SampleCatalog.consumable))
            let sender = NotificationSender(ledger: ledger, limits: limits)
            attempted = try await sender.sendDue().attempted.first
            try await sender.shutdown()
        }
        await receiver.stop()
        return (attempted, receiver)
    }

    /// `limits.inFlight` attempts run at once over as many connections: none waits for a
    /// connection inside its timeout. Sixteen answers that each take most of the timeout all
    /// arrive and are all delivered (the HTTP client's default pool of 8 made the second half
    /// wait, and time out).
    @Test func sixteenSlowAnswersAtOnceAreAllDelivered() async throws {
        try await Self.withReceiver(attemptTimeout: .milliseconds(2_500)) { ledger, session, receiver, sender in
            for _ in 0..<16 { _ = try await session.buyProduct(Payment(productID: SampleCatalog.consumable)) }
            receiver.answer(200, after: .milliseconds(1_500))
            let round = try await sender.sendDue()
            #expect(round.attempted.count == 16)
            #expect(round.deliveredCount == 16, "\(round.attempted.flatMap(\.attempts).map(\.result))")
            #expect(receiver.arrivals.count == 16)
        }
    }

    static let hasPython = FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")

    /// Another process holding `path`'s write lock for `seconds`; returns once it holds it.
    static func holdWriteLock(of path: String, seconds: Double) throws -> Process {
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        holder.arguments = [
            "-c",
            """
            import sqlite3, time
            db = sqlite3.connect('\(path)', isolation_level=None)
            db.execute('BEGIN IMMEDIATE'); print('locked', flush=True); time.sleep(\(seconds)); db.execute('ROLLBACK')
            """,
        ]
        let out = Pipe()
        holder.standardOutput = out
        try holder.run()
        _ = out.fileHandleForReading.availableData  // "locked"
        return holder
    }
}
