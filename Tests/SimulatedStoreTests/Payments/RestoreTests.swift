import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

@Suite struct RestoreTests {
    @Test func aRestoreWithNothingToRestoreStillFinishes() async throws {
        try await StoreFixture.with { store in
            try await store.buy(SampleCatalog.consumable)
            let observer = CollectingObserver()
            try await store.queue.add(observer)
            let before = observer.callbacks.count
            let result = await store.queue.restoreCompletedTransactions()
            #expect(result.isFinished && result.restored.isEmpty)
            #expect(Array(observer.callbacks.dropFirst(before)) == [.restoreFinished])
        }
    }

    @Test func restoresNonConsumablesAndSubscriptionsOnly() async throws {
        try await StoreFixture.with { store in
            let level1 = try await store.buy(SampleCatalog.nonConsumable)
            let pro = try await store.buy(SampleCatalog.subscription)
            try await store.buy(SampleCatalog.consumable)
            try await store.buy(SampleCatalog.nonRenewing)
            try await store.buy(SampleCatalog.nonConsumable2, outcome: .userCancelled)
            let refunded = try await store.buy(SampleCatalog.nonConsumable2)
            try await store.session.refundTransaction(refunded.id)
            try await store.queue.finish([level1.id, pro.id])
            try store.ledger.advanceClock(by: 3_600)

            let observer = CollectingObserver()
            try await store.queue.add(observer)
            let before = observer.callbacks.count
            let result = await store.queue.restoreCompletedTransactions()
            #expect(result.isFinished)
            #expect(try result.restored.all().map(\.restoredFromID) == [level1.id, pro.id])
            for (restored, source) in zip(try result.restored.all(), [level1, pro]) {
                #expect(restored.state == .restored && !restored.isFinished && restored.id > refunded.id)
                #expect(
                    restored.originalID == source.originalID
                        && restored.originalPurchaseDate == source.originalPurchaseDate)
                #expect(restored.purchaseDate == storeEpoch.addingTimeInterval(3_600))
                #expect(restored.productID == source.productID && restored.expirationDate == source.expirationDate)
            }
            // Delivered (committed first), then exactly one "finished".
            #expect(
                Array(observer.callbacks.dropFirst(before)) == [.updated(try result.restored.all()), .restoreFinished])
            #expect(try observer.committedAtNotification.suffix(2) == result.restored.all().map(Optional.some))

            let withNonRenewing = await store.queue.restoreCompletedTransactions(includeNonRenewing: true)
            #expect(
                try withNonRenewing.restored.all().map(\.productID) == [
                    SampleCatalog.nonConsumable, SampleCatalog.subscription, SampleCatalog.nonRenewing,
                ])
        }
    }

    @Test func whatARestoreReturnsIsWhatItStored() async throws {
        try await StoreFixture.with { store in
            let account = UUID()
            try await store.buy(SampleCatalog.nonConsumable, account: account)
            try await store.buy(SampleCatalog.subscription)
            let restored = try await store.queue.restoreCompletedTransactions().restored.all()
            #expect(restored.count == 2)
            for transaction in restored { #expect(try store.ledger.transaction(transaction.id) == transaction) }
        }
    }

    @Test func restoringTwiceRestoresTwiceAndRestoredOnesComeBackAtLaunch() async throws {
        try await StoreFixture.with { store in
            try await store.buy(SampleCatalog.nonConsumable)
            let first = await store.queue.restoreCompletedTransactions()
            let second = await store.queue.restoreCompletedTransactions()
            #expect(first.restored.count == 1 && second.restored.count == 1)
            #expect(try first.restored.all()[0].id != second.restored.all()[0].id)
            let observer = CollectingObserver()
            try await store.relaunch().add(observer)
            #expect(
                try observer.updated.filter { $0.state == .restored }.map(\.id) == [
                    first.restored.all()[0].id, second.restored.all()[0].id,
                ])
        }
    }

    @Test func aRestoreCanBeScopedToOneAccount() async throws {
        try await StoreFixture.with { store in
            let alice = UUID()
            let bob = UUID()
            try await store.buy(SampleCatalog.nonConsumable, account: alice)
            try await store.buy(SampleCatalog.nonConsumable2, account: bob)
            let result = await store.queue.restoreCompletedTransactions(applicationUsername: bob.uuidString)
            #expect(try result.restored.all().map(\.productID) == [SampleCatalog.nonConsumable2])
            #expect(try result.restored.all().first?.appAccountToken == bob)
            let nobody = await store.queue.restoreCompletedTransactions(applicationUsername: UUID().uuidString)
            #expect(nobody.isFinished && nobody.restored.isEmpty)
        }
    }

    @Test func anApplicationUsernameIsAnyOpaqueStringAndScopesRestores() async throws {
        try await StoreFixture.with { store in
            let token = UUID()
            let player1 = try await store.queue.add(
                Payment(productID: SampleCatalog.nonConsumable, applicationUsername: "player-1"))
            try await store.queue.add(Payment(productID: SampleCatalog.nonConsumable2, applicationUsername: "player-2"))
            let byToken = try await store.queue.add(
                Payment(productID: SampleCatalog.subscription, applicationUsername: token.uuidString))
            #expect(player1.applicationUsername == "player-1" && player1.appAccountToken == nil)
            #expect(byToken.applicationUsername == token.uuidString && byToken.appAccountToken == token)

            let result = await store.queue.restoreCompletedTransactions(applicationUsername: "player-1")
            #expect(result.isFinished)
            #expect(try result.restored.all().map(\.productID) == [SampleCatalog.nonConsumable])
            #expect(try result.restored.all().first?.applicationUsername == "player-1")
            // A UUID name also finds purchases made with that app account token (StoreKit 2).
            try await store.buy(SampleCatalog.nonConsumable2, account: token)
            let mine = await store.queue.restoreCompletedTransactions(applicationUsername: token.uuidString)
            #expect(
                try mine.restored.all().map(\.productID) == [SampleCatalog.subscription, SampleCatalog.nonConsumable2])
        }
    }

    @Test func anEmptyUsernameIsAnAccountLikeAnyOther() async throws {
        try await StoreFixture.with { store in
            try await store.buy(SampleCatalog.nonConsumable)
            let empty = try await store.queue.add(
                Payment(productID: SampleCatalog.nonConsumable2, applicationUsername: ""))
            #expect(empty.applicationUsername == "")
            let stored = try #require(try store.ledger.transaction(empty.id))
            #expect(stored.applicationUsername == "", "kept as \"\", not taken for no username")
            // Apple sets no length rule: "" names the purchases made with "", and only those.
            let result = await store.queue.restoreCompletedTransactions(applicationUsername: "")
            #expect(result.isFinished)
            #expect(try result.restored.all().map(\.productID) == [SampleCatalog.nonConsumable2])
            #expect(try result.restored.all().first?.applicationUsername == "")
            #expect(try store.ledger.verify().isEmpty)
        }
    }

    @Test func aRestoreWithAnOverlongUsernameFailsAndChangesNothing() async throws {
        try await StoreFixture.with { store in
            try await store.buy(SampleCatalog.nonConsumable)
            let observer = CollectingObserver()
            try await store.queue.add(observer)
            let before = observer.callbacks.count
            let long = String(repeating: "é", count: 513)  // 1,026 bytes
            let result = await store.queue.restoreCompletedTransactions(applicationUsername: long)
            #expect(!result.isFinished && result.restored.isEmpty)
            #expect(
                Array(observer.callbacks.dropFirst(before)) == [
                    .restoreFailed(PaymentQueueError.invalidApplicationUsername(long).description)
                ])
            await #expect(throws: PaymentQueueError.invalidApplicationUsername(long)) {
                try await store.queue.add(Payment(productID: SampleCatalog.nonConsumable, applicationUsername: long))
            }
            // The bound is 1,024 bytes: exactly that is a username.
            let longest = String(repeating: "é", count: 512)
            let taken = try await store.queue.add(
                Payment(productID: SampleCatalog.nonConsumable2, applicationUsername: longest))
            #expect(taken.applicationUsername == longest)
            #expect(try store.ledger.transactions(matching: TransactionFilter(state: .restored)).isEmpty)
            #expect(try store.ledger.transactions(matching: TransactionFilter()).count == 2)
        }
    }

    @Test func aRestoreAskedForWhileOneRunsDoesNotStartAnother() async throws {
        try await StoreFixture.with { store in
            for _ in 0..<50 { try await store.buy(SampleCatalog.nonConsumable) }
            let observer = CollectingObserver()
            try await store.queue.add(observer)
            let before = observer.callbacks.count
            async let first = store.queue.restoreCompletedTransactions()
            async let second = store.queue.restoreCompletedTransactions()
            let results = await [first, second]
            #expect(try results[0].restored.all().map(\.id) == results[1].restored.all().map(\.id))
            #expect(try store.ledger.transactions(matching: TransactionFilter(state: .restored)).count == 50)
            #expect(observer.callbacks.dropFirst(before).filter { $0 == .restoreFinished }.count == 1)
        }
    }

    /// A large restore reaches observers in pages of `RestoredTransactions.pageSize`, each
    /// transaction once and counted as delivered once, then one "finished"; the result reads
    /// them back page by page.
    @Test func aLargeRestoreIsDeliveredInPagesAndReadBackInPages() async throws {
        try await StoreFixture.with { store in
            try store.ledger.appendSyntheticPurchases(
                productID: SampleCatalog.nonConsumable, finished: 2_300, unfinished: 0)
            let observer = CollectingObserver()
            try await store.queue.add(observer)
            let before = observer.callbacks.count
            let result = await store.queue.restoreCompletedTransactions()
            #expect(result.isFinished && result.restored.count == 2_300)
            let callbacks = Array(observer.callbacks.dropFirst(before))
            let pages = callbacks.compactMap { callback -> [PaymentTransaction]? in
                if case .updated(let page) = callback { return page }
                return nil
            }
            #expect(pages.map(\.count) == [1_000, 1_000, 300])
            #expect(callbacks.last == .restoreFinished && callbacks.count == 4)
            let delivered = pages.flatMap { $0 }
            #expect(delivered.allSatisfy { $0.state == .restored && $0.deliveryCount == 1 })
            #expect(delivered.map(\.restoredFromID) == (1...2_300).map { Optional(UInt64($0)) })

            var readPages: [Int] = []
            try result.restored.forEachPage(size: 700) { readPages.append($0.count) }
            #expect(readPages == [700, 700, 700, 200])
            #expect(try result.restored.all() == delivered)
        }
    }
}
