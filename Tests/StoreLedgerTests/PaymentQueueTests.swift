import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Synchronization
import Testing

/// Runs `body` with the path of a new ledger holding the sample catalog.
func withSampleLedger(_ body: (String) async throws -> Void) async throws {
    try await withTemporaryDirectory { directory in
        try SampleCatalog.ledger(in: directory).close()
        try await body(directory + "/ledger.sqlite")
    }
}

@Suite struct PaymentQueueTests {
    @Test func observersSeeEachChangeAfterItIsCommitted() async throws {
        try await withSampleLedger { path in
            let queue = try PaymentQueue(path: path)
            let observer = CollectingObserver()
            try await queue.add(observer)
            let transaction = try await queue.add(Payment(productID: SampleCatalog.nonConsumable))
            #expect(transaction.state == .purchased)
            #expect(observer.updated.map(\.state) == [.purchasing, .purchased])
            // What the observer was told is what the ledger held when it was told.
            #expect(observer.committedAtNotification == observer.updated.map(Optional.some))
            #expect(transaction.deliveryCount == 2)
        }
    }

    @Test func unfinishedTransactionsComeBackAtEveryLaunchUntilFinished() async throws {
        try await withSampleLedger { path in
            let first = try PaymentQueue(path: path)
            let a = try await first.add(Payment(productID: SampleCatalog.nonConsumable))
            let b = try await first.add(Payment(productID: SampleCatalog.consumable, simulatedOutcome: .userCancelled))
            let c = try await first.add(Payment(productID: SampleCatalog.consumable))
            try await first.finish(b)

            let secondLaunch = try PaymentQueue(path: path)
            let observer = CollectingObserver()
            try await secondLaunch.add(observer)
            #expect(observer.callbacks == [.updated(observer.updated)])
            #expect(observer.updated.map(\.id) == [a.id, c.id])
            #expect(observer.updated.map(\.deliveryCount) == [1, 1])
            // Every observer added gets the unfinished transactions as its own first update.
            let late = CollectingObserver()
            try await secondLaunch.add(late)
            #expect(late.callbacks == [.updated(late.updated)])
            #expect(late.updated.map(\.id) == [a.id, c.id])
            #expect(late.updated.map(\.deliveryCount) == [2, 2])
            #expect(observer.callbacks.count == 1, "the first observer is not told twice")

            let thirdLaunch = try PaymentQueue(path: path)
            let again = CollectingObserver()
            try await thirdLaunch.add(again)
            #expect(again.updated.map(\.id) == [a.id, c.id])
            #expect(again.updated.map(\.deliveryCount) == [3, 3])
            try await thirdLaunch.finish([a.id, c.id])
            #expect(
                again.callbacks.last
                    == .removed(try [a.id, c.id].map { try #require(try thirdLaunch.ledger.transaction($0)) }))

            let fourthLaunch = try PaymentQueue(path: path)
            let none = CollectingObserver()
            try await fourthLaunch.add(none)
            #expect(none.callbacks.isEmpty)
            #expect(try fourthLaunch.transactions.isEmpty)
        }
    }

    @Test func finishingIsIdempotentAndRemovesOnce() async throws {
        try await withSampleLedger { path in
            let queue = try PaymentQueue(path: path)
            let observer = CollectingObserver()
            try await queue.add(observer)
            let transaction = try await queue.add(Payment(productID: SampleCatalog.consumable))
            let finished = try await queue.finish(transaction)
            #expect(finished.isFinished)
            try await queue.finish(transaction)
            #expect(observer.callbacks.filter { if case .removed = $0 { true } else { false } }.count == 1)
            await #expect(throws: PaymentQueueError.unknownTransaction(999)) { try await queue.finish(999) }
        }
    }

    @Test func observersAreHeldWeaklyAndAddedOnce() async throws {
        try await withSampleLedger { path in
            let queue = try PaymentQueue(path: path)
            let kept = CollectingObserver()
            try await queue.add(kept)
            try await queue.add(kept)
            var dropped: CollectingObserver? = CollectingObserver()
            try await queue.add(dropped!)
            weak let weakDropped = dropped
            dropped = nil
            #expect(weakDropped == nil, "the queue must not keep an observer alive")
            try await queue.add(Payment(productID: SampleCatalog.consumable))
            #expect(kept.updated.count == 2)
            await queue.remove(kept)
            try await queue.add(Payment(productID: SampleCatalog.consumable))
            #expect(kept.updated.count == 2)
        }
    }

    @Test func theUpdatesSequenceReplaysThenFollows() async throws {
        try await withSampleLedger { path in
            let earlier = try await PaymentQueue(path: path).add(Payment(productID: SampleCatalog.nonConsumable))
            let queue = try PaymentQueue(path: path)
            let updates = try await queue.updates()
            let bought = try await queue.add(Payment(productID: SampleCatalog.consumable))
            try await queue.finish(bought)
            var received: [String] = []
            for await update in updates {
                switch update {
                case .updated(let transactions):
                    received += transactions.map { "updated \($0.id) \($0.state.rawValue)" }
                case .removed(let transactions): received += transactions.map { "removed \($0.id)" }
                default: received.append("other")
                }
                if received.count == 4 { break }
            }
            #expect(
                received == [
                    "updated \(earlier.id) purchased", "updated \(bought.id) purchasing",
                    "updated \(bought.id) purchased",
                    "removed \(bought.id)",
                ])
        }
    }

    @Test func anIdempotentRetryNotifiesNothing() async throws {
        try await withSampleLedger { path in
            let queue = try PaymentQueue(path: path)
            let observer = CollectingObserver()
            try await queue.add(observer)
            let first = try await queue.add(Payment(productID: SampleCatalog.consumable, idempotencyKey: "tap-1"))
            let retry = try await queue.add(Payment(productID: SampleCatalog.consumable, idempotencyKey: "tap-1"))
            #expect(retry.id == first.id)
            #expect(observer.updated.count == 2)
            #expect(try queue.transactions.count == 1)
        }
    }

    @Test func outcomesAndAskToBuy() async throws {
        try await withSampleLedger { path in
            let queue = try PaymentQueue(path: path)
            let cancelled = try await queue.add(
                Payment(productID: SampleCatalog.consumable, simulatedOutcome: .userCancelled))
            #expect(
                cancelled.state == .failed && cancelled.error?.code == .paymentCancelled
                    && cancelled.error?.code.rawValue == 2)
            let failed = try await queue.add(
                Payment(
                    productID: SampleCatalog.consumable,
                    simulatedOutcome: .failed(.storeProductNotAvailable, message: "gone")))
            #expect(failed.error == TransactionError(code: .storeProductNotAvailable, message: "gone"))
            let deferred = try await queue.add(
                Payment(productID: SampleCatalog.nonConsumable, simulatedOutcome: .deferred))
            #expect(deferred.state == .deferred)
            await #expect(throws: PaymentQueueError.cannotFinishDeferred(deferred.id)) {
                try await queue.finish(deferred)
            }
            let observer = CollectingObserver()
            try await queue.add(observer)
            let approved = try await queue.approve(deferred.id)
            #expect(approved.state == .purchased)
            #expect(observer.updated.last?.state == .purchased)
            await #expect(throws: PaymentQueueError.notDeferred(approved.id, state: .purchased)) {
                try await queue.decline(approved.id)
            }
        }
    }

    @Test func anApplicationUsernameIsKeptOnlyWhenItIsAUUID() {
        let uuid = UUID()
        #expect(Payment(productID: "p", applicationUsername: uuid.uuidString).appAccountToken == uuid)
        #expect(Payment(productID: "p", applicationUsername: "player-1").appAccountToken == nil)
    }

    @Test func aLaunchCompletesWhatAKilledProcessLeftPurchasing() async throws {
        try await withSampleLedger { path in
            // A process that stored the payment and died before the store processed it.
            let ledger = try Ledger.open(at: path)
            let interrupted = try await ledger.addPayment(
                NewPayment(productID: SampleCatalog.consumable, simulatedOutcome: .deferred)
            ).transaction
            try ledger.close()
            let queue = try PaymentQueue(path: path)
            #expect(queue.completedAtLaunch.map(\.id) == [interrupted.id])
            #expect(queue.completedAtLaunch.first?.state == .deferred)
            let observer = CollectingObserver()
            try await queue.add(observer)
            #expect(observer.updated.map(\.state) == [.deferred])
        }
    }

    @Test func rejectedPaymentsChangeNothing() async throws {
        try await withSampleLedger { path in
            let queue = try PaymentQueue(path: path)
            await #expect(throws: UnknownProductError(productIdentifier: "com.example.nope")) {
                try await queue.add(Payment(productID: "com.example.nope"))
            }
            await #expect(throws: PaymentQueueError.invalidQuantity(11)) {
                try await queue.add(Payment(productID: SampleCatalog.consumable, quantity: 11))
            }
            #expect(try queue.ledger.counts().transactions == 0)
        }
    }
}

/// An observer that finishes every purchased transaction inside its callback, as apps do.
private final class FinishingObserver: PaymentTransactionObserver {
    func paymentQueue(_ queue: PaymentQueue, updatedTransactions transactions: [PaymentTransaction]) async {
        for transaction in transactions where transaction.state == .purchased {
            _ = try? await queue.finish(transaction)
        }
    }
}

/// An observer that finishes purchases later, from a task its callback starts (as a StoreKit 1
/// app's fire-and-forget `finishTransaction` does).
private final class DeferredFinishingObserver: PaymentTransactionObserver {
    /// What the finishing tasks threw, if anything (a test reports it).
    let errors = Mutex<[String]>([])

    func paymentQueue(_ queue: PaymentQueue, updatedTransactions transactions: [PaymentTransaction]) async {
        for transaction in transactions where transaction.state == .purchased {
            Task {
                do {
                    _ = try await queue.finish(transaction)
                } catch {
                    errors.withLock { $0.append("\(error)") }
                }
            }
        }
    }
}

/// An observer that restores again, from its callback, when a restore finishes (once).
///
/// Sendable by hand: `again` is set in a callback and read after `waitUntilNotified()`; the queue
/// runs callbacks one at a time.
private final class RestoringAgainObserver: PaymentTransactionObserver, @unchecked Sendable {
    private(set) var again: RestoreResult?
    func paymentQueue(_ queue: PaymentQueue, updatedTransactions transactions: [PaymentTransaction]) async {}
    func paymentQueueRestoreCompletedTransactionsFinished(_ queue: PaymentQueue) async {
        guard again == nil else { return }
        again = await queue.restoreCompletedTransactions()
    }
}

@Suite struct NotificationOrderTests {
    @Test func anObserverCanRestoreFromItsCallbackWithoutBlockingTheQueue() async throws {
        try await withSampleLedger { path in
            let queue = try PaymentQueue(path: path)
            try await queue.add(Payment(productID: SampleCatalog.nonConsumable))
            let observer = RestoringAgainObserver()
            try await queue.add(observer)
            let collector = CollectingObserver()
            try await queue.add(collector)
            let first = await queue.restoreCompletedTransactions()
            #expect(first.isFinished && first.restored.count == 1)
            // Asked for while the first one was delivering: it joins it (same rows, no wait).
            #expect(
                try observer.again?.isFinished == true
                    && observer.again?.restored.all().map(\.id) == first.restored.all().map(\.id))
            // The queue still delivers: a new purchase reaches the observers.
            let bought = try await queue.add(Payment(productID: SampleCatalog.consumable))
            let deadline = Date().addingTimeInterval(60)
            while !collector.updated.contains(where: { $0.id == bought.id && $0.state == .purchased }),
                Date() < deadline
            {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(collector.updated.contains { $0.id == bought.id && $0.state == .purchased })
            #expect(collector.callbacks.filter { $0 == .restoreFinished }.count == 1)
        }
    }

    @Test func aFinishFromATaskStartedByACallbackIsStillDelivered() async throws {
        try await withSampleLedger { path in
            let queue = try PaymentQueue(path: path)
            let finisher = DeferredFinishingObserver()
            try await queue.add(finisher)
            let observer = CollectingObserver()
            try await queue.add(observer)
            let bought = try await queue.add(Payment(productID: SampleCatalog.nonConsumable))
            // The finish runs in a task of its own: wait for its removal to be delivered, then
            // check it came last, with the row as finished. The bound is for a hang only: under the
            // whole suite's parallel load on two cores, the task has started 116 s late.
            let isRemoval = { (callback: CollectingObserver.Callback) in
                guard case .removed = callback else { return false }
                return true
            }
            let deadline = Date().addingTimeInterval(240)
            while !observer.callbacks.contains(where: isRemoval), finisher.errors.withLock({ $0.isEmpty }),
                Date() < deadline
            {
                try await Task.sleep(nanoseconds: 1_000_000)
            }
            #expect(finisher.errors.withLock { $0 } == [], "the finishing task threw")
            let callbacks = observer.callbacks
            let finished = try #require(try queue.ledger.transaction(bought.id))
            #expect(finished.isFinished)
            #expect(callbacks.last == .removed([finished]), "\(callbacks)")
        }
    }

    @Test func aChangeMadeInsideACallbackReachesEveryObserverAfterTheChangeBeingDelivered() async throws {
        try await withSampleLedger { path in
            let queue = try PaymentQueue(path: path)
            let finisher = FinishingObserver()
            let second = CollectingObserver()
            try await queue.add(finisher)
            try await queue.add(second)
            let bought = try await queue.add(Payment(productID: SampleCatalog.nonConsumable))
            let kinds = second.callbacks.map { callback -> String in
                switch callback {
                case .updated(let transactions): "updated \(transactions.map(\.state.rawValue))"
                case .removed(let transactions): "removed \(transactions.map(\.id))"
                default: "other"
                }
            }
            #expect(kinds == ["updated [\"purchasing\"]", "updated [\"purchased\"]", "removed [\(bought.id)]"])
            #expect(try queue.ledger.transaction(bought.id)?.isFinished == true)
        }
    }

    @Test func anAnalyticsObserverAddedFirstDoesNotTakeTheLaunchRedeliveryAway() async throws {
        try await withSampleLedger { path in
            let unfinished = try await PaymentQueue(path: path).add(Payment(productID: SampleCatalog.nonConsumable))
            let launch = try PaymentQueue(path: path)
            let analytics = CollectingObserver()
            try await launch.add(analytics)
            let purchases = FinishingObserver()
            try await launch.add(purchases)
            #expect(try launch.ledger.transaction(unfinished.id)?.isFinished == true)
            #expect(analytics.callbacks.last == .removed([try #require(try launch.ledger.transaction(unfinished.id))]))
        }
    }

    @Test func aRefundOfAnUnfinishedTransactionIsARevocationNotAnUpdate() async throws {
        try await StoreFixture.with { store in
            let bought = try await store.buy(SampleCatalog.nonConsumable)
            let observer = CollectingObserver()
            try await store.queue.add(observer)
            let updates = try await store.queue.updates()
            let before = observer.callbacks.count
            try await store.session.refundTransaction(bought.id)
            #expect(Array(observer.callbacks.dropFirst(before)) == [.revoked([SampleCatalog.nonConsumable])])
            var received: [PaymentQueueUpdate] = []
            for await update in updates {
                received.append(update)
                if received.count == 2 { break }
            }
            guard case .updated(let first) = received[0], case .revoked(let revoked) = received[1] else {
                Issue.record("expected the redelivery then the revocation, got \(received)")
                return
            }
            #expect(first.map(\.id) == [bought.id])
            #expect(revoked.map(\.id) == [bought.id] && revoked[0].revocationDate == storeEpoch)
        }
    }
}

@Suite struct ErrorMessageTests {
    @Test func everyPublicErrorIsALocalizedErrorThatSaysWhatItPrints() {
        let errors: [any Error & CustomStringConvertible] = [
            LedgerError.missingLedger(path: "/tmp/x"), PaymentQueueError.unknownTransaction(7),
            UnknownProductError(productIdentifier: "com.example.nope"),
            StoreControlError.alreadyRefunded(3), CatalogError.missingFile(path: "/tmp/p.storekit"),
            StoreSettingError(control: .timeRate, value: "fast"),
            TransactionError(code: .paymentCancelled),
        ]
        for error in errors {
            #expect(error.localizedDescription == error.description)
            #expect(!error.description.isEmpty)
        }
        #expect(TransactionError(code: .paymentCancelled).localizedDescription == "The user cancelled the payment.")
    }
}

@Suite struct LibraryTextTests {
    /// The libraries' messages reach an app's users, who have no `ledger` tool: only the CLI
    /// adds hints about its commands (`failure(_:)` in LedgerCommand).
    @Test func noLibraryMessageTellsItsReaderToRunTheLedgerTool() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources").standardizedFileURL
        var checked = 0
        for module in ["LedgerEngine", "StoreLedger", "OpenStoreKit", "OpenStoreKitTest", "LedgerTesting"] {
            let folder = sources.appendingPathComponent(module)
            let files =
                FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?
                .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
            for file in files {
                checked += 1
                for (number, line) in try String(contentsOf: file, encoding: .utf8).split(separator: "\n").enumerated()
                {
                    let code = line.trimmingCharacters(in: .whitespaces)
                    guard !code.hasPrefix("//"), let quote = code.firstIndex(of: "\"") else { continue }
                    #expect(!code[quote...].contains("`ledger "), "\(file.lastPathComponent):\(number + 1): \(code)")
                }
            }
        }
        #expect(checked > 50)
    }
}
