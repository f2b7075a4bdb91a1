import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

@Suite struct StoreControlTests {
    /// Ids are SQLite integers: one past `Int64.max` names no transaction, and every API that
    /// takes an id says so instead of trapping.
    @Test(arguments: [UInt64(Int64.max) + 1, UInt64(Int64.max) + 12_345, UInt64.max])
    func idsPastTheLargestStoredOneAreUnknown(_ id: UInt64) async throws {
        try await StoreFixture.with { store in
            func expectUnknown(_ what: String, _ call: () async throws -> Void) async {
                do {
                    try await call()
                    Issue.record("\(what) accepted \(id)")
                } catch let error as PaymentQueueError {
                    #expect(error == .unknownTransaction(id), "\(what)")
                } catch {
                    Issue.record("\(what): \(error)")
                }
            }
            await expectUnknown("approve") { _ = try await store.queue.approve(id) }
            await expectUnknown("decline") { _ = try await store.queue.decline(id) }
            await expectUnknown("finish") { _ = try await store.queue.finish([id]) }
            await expectUnknown("refund") { _ = try await store.session.refundTransaction(id) }
            await expectUnknown("resolve") { _ = try await store.session.resolveIssueForTransaction(id) }
            await expectUnknown("delete") { try await store.session.deleteTransaction(id) }
            await expectUnknown("sign") { _ = try store.queue.ledger.signedTransaction(id) }
            let ledger = store.queue.ledger
            let (stored, events, interrupted) = (
                try ledger.transaction(id), try ledger.events(of: id), try ledger.isInterruptedPurchase(id)
            )
            #expect(stored == nil && events.isEmpty && !interrupted)
        }
    }

    @Test func theStoresSwitchesDecideWhenThePaymentDoesNot() async throws {
        try await StoreFixture.with { store in
            try store.session.update { $0.askToBuyEnabled = true }
            #expect(try await store.buy(SampleCatalog.consumable).state == .deferred)
            #expect(
                try await store.buy(SampleCatalog.consumable, outcome: .success).state == .purchased,
                "an explicit outcome wins")
            try store.session.update { $0.failTransactionsError = .paymentInvalid }
            let failed = try await store.buy(SampleCatalog.consumable)
            #expect(failed.state == .failed && failed.error?.code == .paymentInvalid)
            try store.session.update { $0.canMakePayments = false }
            for outcome in [nil, SimulatedOutcome.success] {
                let refused = try await store.buy(SampleCatalog.consumable, outcome: outcome)
                #expect(refused.error?.code == .paymentNotAllowed)
            }
            let settings = try StoreSettings(ledger: try Ledger.open(at: store.path, access: .readOnly))
            #expect(
                !settings.canMakePayments && settings.askToBuyEnabled
                    && settings.failTransactionsError == .paymentInvalid)
        }
    }

    /// A purchase is dated when the store charges it: an Ask to Buy purchase when it is
    /// approved, whatever the product (a non-consumable kept the request's time).
    @Test(arguments: [
        SampleCatalog.nonConsumable, SampleCatalog.consumable, SampleCatalog.nonRenewing, SampleCatalog.subscription,
    ])
    func anApprovedAskToBuyPurchaseIsDatedAtTheApproval(_ product: String) async throws {
        try await StoreFixture.with { store in
            try store.session.update { $0.askToBuyEnabled = true }
            let asked = try await store.buy(product)
            #expect(asked.state == .deferred)
            try await store.session.advanceClock(by: 3_600)
            let approved = try await store.session.approveAskToBuyTransaction(asked.id)
            let approvedAt = try store.ledger.storeDate()
            #expect(approved.purchaseDate == approvedAt && approved.originalPurchaseDate == approvedAt, "\(product)")
            #expect(try store.ledger.transaction(asked.id)?.purchaseDate == approvedAt, "\(product) as stored")
            #expect(try store.ledger.verify() == [])
        }
    }

    /// Approving, declining and restoring tell the observers what they did, as StoreKit does, so
    /// their results may be ignored. This file compiles with warnings as errors in CI: it
    /// stops compiling if one of them warns about an unused result.
    @Test func approvalsDeclinesAndRestoresMayIgnoreTheirResults() async throws {
        try await StoreFixture.with { store in
            let observer = CollectingObserver()
            try await store.queue.add(observer)
            try store.session.update { $0.askToBuyEnabled = true }
            let approved = try await store.buy(SampleCatalog.nonConsumable)
            let declined = try await store.buy(SampleCatalog.consumable)
            try await store.session.approveAskToBuyTransaction(approved.id)
            try await store.session.declineAskToBuyTransaction(declined.id)
            await store.queue.restoreCompletedTransactions()
            let last = Dictionary(observer.updated.map { ($0.id, $0.state) }, uniquingKeysWith: { $1 })
            #expect(last[approved.id] == .purchased && last[declined.id] == .failed)
            #expect(observer.updated.contains { $0.state == .restored && $0.restoredFromID == approved.id })
        }
    }

    @Test func anInterruptedPurchaseIsReplacedOnceFinishedAndResolved() async throws {
        try await StoreFixture.with { store in
            try store.session.update { $0.interruptedPurchasesEnabled = true }
            let interrupted = try await store.buy(SampleCatalog.nonConsumable)
            #expect(interrupted.state == .failed && interrupted.error == Ledger.interruptionError)
            #expect(try await store.session.resolveIssueForTransaction(interrupted.id) == nil, "not finished yet")
            let observer = CollectingObserver()
            try await store.queue.add(observer)
            try await store.queue.finish(interrupted)
            let replacement = try #require(observer.updated.last)
            #expect(replacement.id != interrupted.id && replacement.state == .purchased)
            #expect(replacement.productID == interrupted.productID && replacement.quantity == interrupted.quantity)
            #expect(
                try await store.session.resolveIssueForTransaction(interrupted.id) == replacement,
                "resolving again creates nothing")
            try await store.session.deleteTransaction(replacement.id)
            #expect(
                try await store.session.resolveIssueForTransaction(interrupted.id) == nil,
                "a deleted replacement is not made again")

            let second = try await store.buy(SampleCatalog.nonConsumable2)
            try await store.queue.finish(second)
            let immediate = try #require(try await store.session.resolveIssueForTransaction(second.id))
            #expect(immediate.state == .purchased && immediate.productID == SampleCatalog.nonConsumable2)
            await #expect(throws: StoreControlError.notInterrupted(immediate.id)) {
                try await store.session.resolveIssueForTransaction(immediate.id)
            }
            #expect(try store.ledger.verify() == [])
        }
    }

    @Test func clearingRemovesUnfinishedTransactionsAndIdsAreNotReused() async throws {
        try await StoreFixture.with { store in
            let a = try await store.buy(SampleCatalog.nonConsumable)
            let b = try await store.buy(SampleCatalog.consumable)
            try await store.session.deleteTransaction(a.id)
            // The row goes; the history stays, closed by a `deleted` event (the hash chain keeps every event).
            #expect(try store.ledger.transaction(a.id) == nil)
            let history = try store.ledger.events(of: a.id).map(\.kind)
            #expect(
                history.first == .created && history.last == .deleted && history.filter { $0 == .deleted }.count == 1)
            await #expect(throws: PaymentQueueError.unknownTransaction(a.id)) {
                try await store.session.deleteTransaction(a.id)
            }
            #expect(try await store.session.clearTransactions() == 1)
            #expect(try store.queue.transactions.isEmpty && store.ledger.events(of: b.id).last?.kind == .deleted)
            #expect(try store.ledger.verify() == [])
            #expect(try await store.buy(SampleCatalog.consumable).id == b.id + 1)
        }
    }

    @Test func theHistoryCannotBeDeletedBehindTheLedgersBack() async throws {
        try await StoreFixture.with { store in
            let bought = try await store.buy(SampleCatalog.consumable)
            let sqlite = Process()
            sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            sqlite.arguments = [
                "python3", "-c",
                """
                import sqlite3, sys
                c = sqlite3.connect('\(store.path)')
                try:
                    c.execute('DELETE FROM transaction_events WHERE transaction_id = \(bought.id)')
                    c.commit()
                except sqlite3.DatabaseError as e:
                    sys.exit(3)
                """,
            ]
            try sqlite.run()
            sqlite.waitUntilExit()
            #expect(sqlite.terminationStatus == 3)
            #expect(try store.ledger.events(of: bought.id).count == 2)
        }
    }

    @Test func aStoreKitFilesSettingsSeedTheControls() async throws {
        try await StoreFixture.with { store in
            let arcade = try StoreKitConfiguration(contentsOf: Repository.fixture("v2.0-every-product-type.storekit"))
            let settings = try store.session.applySettings(of: arcade)
            #expect(settings.askToBuyEnabled && settings.failTransactionsError == .unknown)
            let reader = try StoreKitConfiguration(contentsOf: Repository.fixture("v1.2-subscriptions-only.storekit"))
            #expect(try store.session.applySettings(of: reader).timeRate == .oneSecondIsOneDay)
            let taiwan = try StoreKitConfiguration(contentsOf: Repository.fixture("v4.0-taiwan.storekit"))
            let applied = try store.session.applySettings(of: taiwan)
            #expect(
                applied.storefront.countryCode == "TWN" && !applied.askToBuyEnabled
                    && applied.failTransactionsError == nil)
            #expect(applied.timeRate == .realTime)
            let france = try StoreKitConfiguration(contentsOf: Repository.fixture("v6.0-france.storekit"))
            let french = try store.session.applySettings(of: france)
            #expect(
                french.storefront.countryCode == "FRA" && french.locale == "fr_FR"
                    && french.timeRate == .oneRenewalEveryMinute)
            #expect(
                french.failTransactionsError == nil,
                "a file without _failTransactionsEnabled leaves the switch as it is")
        }
    }

    @Test func theClockStaysInRange() async throws {
        try await StoreFixture.with { (store: StoreFixture) throws in
            #expect(throws: StoreControlError.clockOutOfRange(interval: -1)) { try store.ledger.advanceClock(by: -1) }
            #expect(throws: StoreControlError.self) { try store.ledger.advanceClock(by: 1e13) }
            #expect(try store.now() == storeEpoch)
        }
    }

    @Test func theClockOnlyMovesForward() async throws {
        try await StoreFixture.with { store in
            try store.ledger.advanceClock(by: day)
            #expect(try store.now() == storeEpoch.addingTimeInterval(day))
            #expect(
                throws: StoreControlError.clockCannotGoBack(
                    current: storeEpoch.addingTimeInterval(day), requested: storeEpoch)
            ) {
                try store.ledger.setClock(to: storeEpoch)
            }
            try await store.session.setClock(to: storeEpoch.addingTimeInterval(10 * day))
            #expect(try store.now() == storeEpoch.addingTimeInterval(10 * day))
            #expect(
                try await store.buy(SampleCatalog.consumable).purchaseDate == storeEpoch.addingTimeInterval(10 * day))
        }
    }

    @Test(arguments: [
        (StoreControl.storefront, "XYZ"), (.locale, "fr FR"), (.canMakePayments, "maybe"), (.failTransactions, "bogus"),
        (.timeRate, "warp"), (.askToBuy, ""),
    ])
    func badSettingValuesAreRefused(control: StoreControl, value: String) throws {
        #expect(throws: StoreSettingError(control: control, value: value)) {
            try control.apply(value, to: StoreSettings())
        }
    }

    /// A notification URL is checked whole when it is set: the sender must be able to reach it.
    @Test func notificationURLsAreCheckedWhole() throws {
        let accepted = [
            "http://127.0.0.1:9000/notifications", "https://example.com/n", "http://[::1]:8080/x",
            "http://[2001:db8::1]/x", "http://localhost:65535/", "https://a-b.example.com./x?q=1",
            "HTTP://127.0.0.1:1/",
        ]
        for text in accepted {
            let settings = try StoreControl.notificationURL.apply(text, to: StoreSettings())
            #expect(settings.notificationURL?.absoluteString == text, "\(text)")
        }
        let refused: [(text: String, reason: String)] = [
            ("http://127.0.0.1:65536/x", "its port 65536 is not between 1 and 65535"),
            ("http://127.0.0.1:0/x", "its port 0 is not between 1 and 65535"),
            ("ftp://example.com/x", "its scheme is ftp, not http or https"),
            ("http://user:pw@example.com/x", "it names a user or a password"),
            ("http://[::1/x", "it is not a URL"),
            ("http://[not:an:address]/x", "its host [not:an:address] is not a bracketed IPv6 address"),
            ("http://999.1.1.1/x", "its host 999.1.1.1 is not a valid IPv4 address"),
            ("http://-bad.example/x", "its host -bad.example is not a DNS name"),
            ("http://exa_mple.com/x", "its host exa_mple.com is not a DNS name"),
            ("http://example.com\u{0}junk/x", "a control character"),
            ("http://exam ple.com/x", "a space"),
            ("http://exämple.com/x", "not ASCII"),
            ("http:///x", "it has no host"),
            ("http://" + String(repeating: "a", count: 64) + ".com/x", "is not a DNS name"),
            ("http://example.com/" + String(repeating: "x", count: 2048), "longer than 2048 bytes"),
        ]
        for (text, reason) in refused {
            do {
                _ = try StoreControl.notificationURL.apply(text, to: StoreSettings())
                Issue.record("\(text) accepted")
            } catch let error as StoreSettingError {
                #expect(error.reason?.contains(reason) == true, "\(text): \(error)")
                #expect(error.description.hasPrefix("invalid value"), "\(error)")
            }
        }
    }

    /// A URL this release refuses, left by an older one, is read as no URL with the reason kept:
    /// the sender fails each attempt with it rather than sending nowhere.
    @Test func aStoredNotificationURLThatCannotBeUsedKeepsItsReason() {
        let settings = StoreSettings(stored: ["notificationURL": "http://127.0.0.1:65536/x"])
        #expect(settings.notificationURL == nil)
        #expect(
            settings.notificationURLProblem
                == "the notification URL \"http://127.0.0.1:65536/x\" cannot be used: its port 65536 is not between 1 and 65535"
        )
        #expect(StoreSettings(stored: ["notificationURL": "none"]).notificationURLProblem == nil)
        // What reaches a terminal (`notifications show`) has its control characters escaped.
        let escaped = StoreSettings(stored: ["notificationURL": "http://x\u{1B}[2J/"]).notificationURLProblem
        #expect(
            escaped?.contains("http://x\\u{1b}[2J/") == true && escaped?.contains("\u{1B}") == false, "\(escaped ?? "")"
        )
    }

    @Test func settingValuesParse() throws {
        var settings = StoreSettings()
        settings = try StoreControl.failTransactions.apply("paymentNotAllowed", to: settings)
        #expect(settings.failTransactionsError == .paymentNotAllowed)
        settings = try StoreControl.failTransactions.apply("off", to: settings)
        #expect(settings.failTransactionsError == nil)
        settings = try StoreControl.timeRate.apply("1005", to: settings)
        #expect(settings.timeRate == .oneRenewalEveryTwoSeconds)
        settings = try StoreControl.storefront.apply("fra", to: settings)
        #expect(settings.storefront.countryCode == "FRA")
    }
}

@Suite struct PromotionTests {
    @Test func promotionOverridesFollowPromotionInfo() async throws {
        try await StoreFixture.with { store in
            let ledger = store.ledger
            #expect(try ledger.promotionOrder().isEmpty, "no overrides: the defaults apply")
            try ledger.updatePromotionOrder(byIDs: [SampleCatalog.subscription, SampleCatalog.nonConsumable])
            #expect(
                try ledger.promotionOrder() == [
                    PromotionInfo(productID: SampleCatalog.subscription),
                    PromotionInfo(productID: SampleCatalog.nonConsumable),
                ])
            try ledger.updatePromotionVisibility(.hidden, for: SampleCatalog.nonConsumable)
            try ledger.updatePromotionVisibility(.visible, for: SampleCatalog.consumable)
            // Reordering keeps each product's visibility; leaving one out hides it.
            try ledger.updatePromotionOrder(byIDs: [SampleCatalog.nonConsumable, SampleCatalog.consumable])
            let reopened = try Ledger.open(at: store.path, access: .readOnly)
            #expect(
                try reopened.promotionOrder() == [
                    PromotionInfo(productID: SampleCatalog.nonConsumable, visibility: .hidden),
                    PromotionInfo(productID: SampleCatalog.consumable, visibility: .visible),
                ])
            try ledger.updatePromotions([PromotionInfo(productID: SampleCatalog.nonRenewing, visibility: .visible)])
            #expect(try ledger.promotionOrder().map(\.productID) == [SampleCatalog.nonRenewing])
            try ledger.updatePromotionOrder(byIDs: [])
            #expect(try ledger.promotionOrder().isEmpty, "an empty list resets")
        }
    }

    @Test func unknownOrRepeatedProductsChangeNothing() async throws {
        try await StoreFixture.with { store in
            let ledger = store.ledger
            try ledger.updatePromotionOrder(byIDs: [SampleCatalog.consumable])
            #expect(throws: UnknownProductError(productIdentifier: "com.example.nope")) {
                try ledger.updatePromotionOrder(byIDs: [SampleCatalog.nonConsumable, "com.example.nope"])
            }
            #expect(throws: StoreControlError.duplicatePromotion(SampleCatalog.nonConsumable)) {
                try ledger.updatePromotionOrder(byIDs: [SampleCatalog.nonConsumable, SampleCatalog.nonConsumable])
            }
            #expect(throws: UnknownProductError(productIdentifier: "x")) {
                try ledger.updatePromotionVisibility(.hidden, for: "x")
            }
            #expect(try ledger.promotionOrder() == [PromotionInfo(productID: SampleCatalog.consumable)])
        }
    }
}
