import Foundation
import GRDB
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

/// A store of several customers: each one's purchases, subscriptions, queue and restores are
/// theirs alone; the store's hand (a refund, an approval) acts for a transaction's owner.
@Suite struct CustomerTests {
    /// A store of three customers: `default` (the first, whom the sample catalog's store has),
    /// Alice (from France) and Bob, each with a queue of their own on the same file.
    struct Store {
        let ledger: Ledger
        let alice: PaymentQueue
        let bob: PaymentQueue

        static func with(_ body: (Store) async throws -> Void) async throws {
            try await withTemporaryDirectory { directory in
                let ledger = try SampleCatalog.ledger(in: directory, configuration: StoreFixture.configuration)
                try ledger.addCustomer(Customer(name: "alice", storefront: Storefront(countryCode: "FRA")))
                try ledger.addCustomer(Customer(name: "bob", family: "smiths"))
                let store = Store(
                    ledger: ledger, alice: try PaymentQueue(ledger: try ledger.forCustomer("alice")),
                    bob: try PaymentQueue(ledger: try ledger.forCustomer("bob")))
                try await body(store)
                try ledger.close()
            }
        }
    }

    @Test func aNewStoreHasOneCustomerWhomEveryValueActsFor() async throws {
        try await StoreFixture.with { store in
            #expect(try store.ledger.customers() == [Customer(name: Customer.defaultName)])
            #expect(store.ledger.customerName == Customer.defaultName)
            try await store.buy(SampleCatalog.nonConsumable)
            #expect(try store.ledger.currentEntitlements().map(\.productID) == [SampleCatalog.nonConsumable])
        }
    }

    @Test func customersAreAddedOnceWithNamesTestsCanType() async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try SampleCatalog.ledger(in: directory, configuration: StoreFixture.configuration)
            defer { try? ledger.close() }
            for name in ["", "a b", "é", String(repeating: "x", count: 65), "a/b"] {
                #expect(throws: CustomerError.invalidName(name)) { try ledger.addCustomer(Customer(name: name)) }
            }
            #expect(throws: CustomerError.invalidName("the smiths")) {
                try ledger.addCustomer(Customer(name: "carol", family: "the smiths"))
            }
            try ledger.addCustomer(Customer(name: "carol.1_x-Y", family: "smiths"))
            #expect(throws: CustomerError.duplicateName("carol.1_x-Y")) {
                try ledger.addCustomer(Customer(name: "carol.1_x-Y"))
            }
            #expect(throws: CustomerError.duplicateName(Customer.defaultName)) {
                try ledger.addCustomer(Customer(name: Customer.defaultName))
            }
            #expect(try ledger.customerCount() == 2)
            #expect(try ledger.customer(named: "carol.1_x-Y") == Customer(name: "carol.1_x-Y", family: "smiths"))
            #expect(try ledger.customer(named: "nobody") == nil)
            #expect(try ledger.customers(after: Customer.defaultName).map(\.name) == ["carol.1_x-Y"])
            #expect(try ledger.customers(limit: 1).map(\.name) == [Customer.defaultName])
        }
    }

    @Test func aStoreOfSeveralRefusesWhatActsForNoCustomerAndNamesTheChoices() async throws {
        try await Store.with { store in
            let opened = try Ledger.open(at: store.ledger.path, configuration: StoreFixture.configuration)
            defer { try? opened.close() }
            #expect(opened.customerName == nil)
            let notChosen = CustomerError.customerNotChosen(choices: ["default", "alice", "bob"], count: 3)
            #expect(throws: notChosen) { try opened.currentEntitlements() }
            #expect(throws: notChosen) { try opened.appTransactionID() }
            // A queue is a device: it launches for a customer.
            #expect(throws: notChosen) { try PaymentQueue(ledger: opened) }
            #expect(throws: CustomerError.unknownCustomer("carol", choices: ["default", "alice", "bob"], count: 3)) {
                try opened.forCustomer("carol")
            }
            var configuration = StoreFixture.configuration
            configuration.customer = "carol"
            #expect(throws: CustomerError.unknownCustomer("carol", choices: ["default", "alice", "bob"], count: 3)) {
                try Ledger.open(at: store.ledger.path, configuration: configuration)
            }
            configuration.customer = "bob"
            let bob = try Ledger.open(at: store.ledger.path, configuration: configuration)
            #expect(bob.customerName == "bob")
            try bob.close()
            #expect(
                "\(notChosen)"
                    == "the store has 3 customers: name the one this is for: default, alice, bob"
            )
        }
    }

    @Test func eachCustomersPurchasesQueueAndEntitlementsAreTheirsAlone() async throws {
        try await Store.with { store in
            let level1 = try await store.alice.add(Payment(productID: SampleCatalog.nonConsumable))
            let pro = try await store.alice.add(Payment(productID: SampleCatalog.subscription))
            let coins = try await store.bob.add(Payment(productID: SampleCatalog.consumable))
            #expect(try store.alice.ledger.unfinishedTransactions().map(\.id) == [level1.id, pro.id])
            #expect(try store.bob.ledger.unfinishedTransactions().map(\.id) == [coins.id])
            #expect(try store.bob.ledger.currentEntitlements().isEmpty)
            #expect(
                try store.alice.ledger.currentEntitlements().map(\.productID).sorted()
                    == [SampleCatalog.nonConsumable, SampleCatalog.subscription].sorted())
            #expect(try store.bob.ledger.transaction(level1.id) == nil)
            #expect(try store.bob.ledger.latestTransaction(for: SampleCatalog.nonConsumable) == nil)
            #expect(try store.bob.ledger.subscriptionStatus(forProduct: SampleCatalog.subscription) == nil)
            #expect(try store.bob.ledger.isEligibleForIntroductoryOffer(group: "pro"))
            #expect(try !store.alice.ledger.isEligibleForIntroductoryOffer(group: "pro"))
            // Another customer's transaction is unknown to a queue.
            await #expect(throws: PaymentQueueError.unknownTransaction(level1.id)) {
                try await store.bob.finish([level1.id])
            }
            // Alice's subscription does not make Bob "already subscribed": his is his own chain.
            let bobsPro = try await store.bob.add(Payment(productID: SampleCatalog.subscription))
            #expect(bobsPro.state == .purchased && bobsPro.originalID == bobsPro.id && bobsPro.originalID != pro.id)
            // The store as a whole sees everyone's, oldest first.
            #expect(
                try store.ledger.withCustomerScope(.notChosen(choices: [], count: 3)).transactions().map(\.id)
                    == [level1.id, pro.id, coins.id, bobsPro.id])
            #expect(try store.alice.ledger.transactions().map(\.id) == [level1.id, pro.id])
        }
    }

    @Test func aRestoreOnAnotherDeviceGivesTheCustomersOwnPurchasesOnly() async throws {
        try await Store.with { store in
            let level1 = try await store.alice.add(Payment(productID: SampleCatalog.nonConsumable))
            try await store.alice.finish([level1.id])
            try await store.bob.add(Payment(productID: SampleCatalog.nonConsumable2))
            // Alice's new phone: another queue on her account.
            let phone = try PaymentQueue(ledger: try store.ledger.forCustomer("alice"))
            let restored = await phone.restoreCompletedTransactions()
            #expect(restored.isFinished)
            #expect(try restored.restored.all().map(\.restoredFromID) == [level1.id])
            #expect(try restored.restored.all().allSatisfy { $0.customerID == level1.customerID })
            let bobs = await store.bob.restoreCompletedTransactions()
            #expect(try bobs.restored.all().map(\.productID) == [SampleCatalog.nonConsumable2])
        }
    }

    /// Apple's `Transaction.updates` "emits transactions that customers complete in your app
    /// on another device": a queue hears its customer's purchases made by their other queues
    /// (in this process, or on another connection as another process would), and the store's
    /// renewals, never its own purchases again nor another customer's.
    @Test func aPurchaseOnOneDeviceReachesTheCustomersOtherDevices() async throws {
        try await Store.with { store in
            var configuration = StoreFixture.configuration
            configuration.customer = "alice"
            let padLedger = try Ledger.open(at: store.ledger.path, configuration: configuration)
            defer { try? padLedger.close() }
            let (phone, pad) = (store.alice, try PaymentQueue(ledger: padLedger))
            let (padHears, bobHears) = (CollectingObserver(), CollectingObserver())
            try await pad.add(padHears)
            try await store.bob.add(bobHears)
            let level1 = try await phone.add(Payment(productID: SampleCatalog.nonConsumable))
            let pro = try await phone.add(Payment(productID: SampleCatalog.subscription))
            try await store.bob.add(Payment(productID: SampleCatalog.consumable))
            try await phone.add(Payment(productID: SampleCatalog.nonConsumable2, simulatedOutcome: .userCancelled))
            #expect(try await pad.hearOtherDevices().map(\.id) == [level1.id, pro.id])
            #expect(padHears.callbacks.last == .purchasedOnAnotherDevice([level1, pro]))
            #expect(try await pad.hearOtherDevices().isEmpty, "heard once")
            #expect(try await store.bob.hearOtherDevices().isEmpty, "his own purchase, and none of Alice's")
            #expect(!bobHears.callbacks.contains { if case .purchasedOnAnotherDevice = $0 { true } else { false } })
            // The iPad's own purchase is not news to it; the phone hears of it.
            let level2 = try await pad.add(Payment(productID: SampleCatalog.nonConsumable2))
            #expect(try await pad.hearOtherDevices().isEmpty)
            #expect(try await phone.hearOtherDevices().map(\.id) == [level2.id])
            // A renewal the phone's session makes reaches the iPad too.
            let renewals = try await StoreTestSession(queue: phone).advanceClock(by: 32 * day)
            #expect(!renewals.isEmpty)
            #expect(try await pad.hearOtherDevices().map(\.id) == renewals.map(\.id))
            #expect(try await phone.hearOtherDevices().isEmpty)
            // An Ask to Buy asked on the iPad and approved from elsewhere (the store's hand, by
            // another session); a refund of the phone's purchase by someone else's session.
            let asked = try await pad.add(Payment(productID: SampleCatalog.consumable, simulatedOutcome: .deferred))
            #expect(asked.state == .deferred)
            _ = try await StoreTestSession(queue: store.bob).approveAskToBuyTransaction(asked.id)
            _ = try await StoreTestSession(queue: store.bob).refundTransaction(level1.id)
            let heard = try await pad.hearOtherDevices()
            #expect(heard.map(\.id) == [level1.id, asked.id])
            #expect(
                padHears.callbacks.suffix(2) == [
                    .revoked([SampleCatalog.nonConsumable]), .purchasedOnAnotherDevice([heard[1]]),
                ])
            #expect(heard[1].state == .purchased && heard[0].revocationDate != nil)
            // Heard by itself while both run.
            await pad.startHearingOtherDevices(checkingEvery: .milliseconds(10))
            let pass = try await phone.add(Payment(productID: SampleCatalog.nonRenewing))
            var waited = 0
            while !padHears.callbacks.contains(.purchasedOnAnotherDevice([pass])), waited < 500 {
                try await Task.sleep(for: .milliseconds(10))
                waited += 1
            }
            #expect(padHears.callbacks.contains(.purchasedOnAnotherDevice([pass])))
            await pad.stopHearingOtherDevices()
        }
    }

    /// Family Sharing between customers of one family: a member's purchase of a
    /// family-shareable product reaches the others owned FAMILY_SHARED (never a customer of
    /// another family, never a product that is not shareable), a subscription the same way;
    /// the buyer's refund ends the sharing (each share revoked); a family holds six members.
    @Test func aFamilyMembersPurchaseIsSharedWithTheFamilyUntilItsRefund() async throws {
        try await Store.with { store in
            try store.ledger.addCustomer(Customer(name: "carol", family: "smiths"))
            try store.ledger.addCustomer(Customer(name: "dave"))
            let carol = try PaymentQueue(ledger: try store.ledger.forCustomer("carol"))
            let dave = try PaymentQueue(ledger: try store.ledger.forCustomer("dave"))
            let level2 = try await store.bob.add(Payment(productID: SampleCatalog.nonConsumable2))  // shareable
            try await store.bob.add(Payment(productID: SampleCatalog.nonConsumable))  // not shareable
            let yearly = try await store.bob.add(Payment(productID: SampleCatalog.yearlySubscription))  // shareable
            let shared = try carol.ledger.currentEntitlements()
            #expect(
                shared.map(\.productID) == [SampleCatalog.yearlySubscription, SampleCatalog.nonConsumable2].sorted())
            #expect(try shared.allSatisfy { try carol.ledger.isFamilyShared($0) })
            #expect(
                shared.allSatisfy { $0.customerID != level2.customerID && $0.id != level2.id && $0.id != yearly.id })
            #expect(
                try carol.ledger.subscriptionStatus(forProduct: SampleCatalog.yearlySubscription)?.isFamilyShared
                    == true)
            #expect(try dave.ledger.currentEntitlements().isEmpty, "another family's customer")
            #expect(try store.alice.ledger.currentEntitlements().isEmpty, "no family")
            #expect(try !store.bob.ledger.isFamilyShared(level2), "the buyer's own")
            // The buyer's refund ends the sharing of that purchase only.
            _ = try await StoreTestSession(queue: store.bob).refundTransaction(level2.id)
            let carols = try carol.ledger.transactions()
            let share = try #require(carols.first { $0.productID == SampleCatalog.nonConsumable2 })
            #expect(share.revocationDate != nil && share.revocationReason == 0)
            #expect(try carol.ledger.currentEntitlements().map(\.productID) == [SampleCatalog.yearlySubscription])
            // Six members at most.
            for name in ["erin", "frank", "grace", "heidi"] {
                try store.ledger.addCustomer(Customer(name: name, family: "smiths"))
            }
            #expect(throws: CustomerError.familyFull("smiths", limit: 6)) {
                try store.ledger.addCustomer(Customer(name: "ivan", family: "smiths"))
            }
            #expect(try store.ledger.verify().isEmpty)
        }
    }

    /// A member who leaves the family loses what others shared with them, and the others lose
    /// what they shared (revocation reason 0, `REVOKE` to each holder, as Apple documents for a
    /// customer who "leaves the family group"); their own purchases stay theirs, and what the
    /// family buys afterwards is not shared with them.
    @Test func aMemberWhoLeavesTheFamilyLosesItsSharesOnEitherSide() async throws {
        try await Store.with { store in
            _ = try StoreTestSession(ledger: store.ledger).set(.notificationURL, to: "http://127.0.0.1:9/n")
            try store.ledger.addCustomer(Customer(name: "carol", family: "smiths"))
            try store.ledger.addCustomer(Customer(name: "dana", family: "smiths"))
            let carol = try PaymentQueue(ledger: try store.ledger.forCustomer("carol"))
            let bobs = try await store.bob.add(Payment(productID: SampleCatalog.nonConsumable2))  // shared with both
            let carols = try await carol.add(Payment(productID: SampleCatalog.yearlySubscription))  // with both
            let before = try store.ledger.notifications().count
            let revoked = try store.ledger.leaveFamily("carol")
            // Carol's share of Bob's purchase; Bob's and Dana's shares of Carol's subscription.
            #expect(revoked.count == 3 && revoked.allSatisfy { $0.revocationReason == 0 })
            #expect(Set(revoked.map(\.customerID)).count == 3)
            #expect(try carol.ledger.currentEntitlements().map(\.id) == [carols.id], "her own stays")
            #expect(try store.bob.ledger.currentEntitlements().map(\.id) == [bobs.id])
            let danas = try store.ledger.forCustomer("dana").currentEntitlements()
            #expect(danas.map(\.productID) == [SampleCatalog.nonConsumable2], "Bob's share stays hers")
            let revokes = try store.ledger.notifications().dropFirst(before).map(\.type)
            #expect(revokes == Array(repeating: "REVOKE", count: 3))
            #expect(try store.ledger.customer(named: "carol")?.family == nil)
            // What the family buys afterwards is not shared with her.
            try await PaymentQueue(ledger: try store.ledger.forCustomer("dana"))
                .add(Payment(productID: SampleCatalog.yearlySubscription))  // shareable: Bob's now, not hers
            #expect(try carol.ledger.currentEntitlements().map(\.id) == [carols.id])
            #expect(try store.bob.ledger.currentEntitlements().count == 2)
            #expect(throws: CustomerError.noFamily("carol")) { try store.ledger.leaveFamily("carol") }
            #expect(
                throws: CustomerError.unknownCustomer(
                    "zed", choices: ["default", "alice", "bob", "carol", "dana"], count: 5)
            ) {
                try store.ledger.leaveFamily("zed")
            }
            #expect(try store.ledger.verify().isEmpty)
        }
    }

    /// A family member's synthetic purchases (benchmarks) are shared as payments are, each
    /// share with an id of its own.
    @Test func aFamilyMembersSyntheticPurchasesAreSharedWithIdsOfTheirOwn() async throws {
        try await Store.with { store in
            try store.ledger.addCustomer(Customer(name: "carol", family: "smiths"))
            try store.bob.ledger.appendSyntheticPurchases(
                productID: SampleCatalog.nonConsumable2, finished: 2, unfinished: 1)
            let all = try store.ledger.withCustomerScope(.notChosen(choices: [], count: 0)).transactions()
            #expect(all.count == 6 && Set(all.map(\.id)).count == 6)
            #expect(try store.ledger.forCustomer("carol").transactions().count == 3)
            #expect(try store.ledger.verify().isEmpty)
        }
    }

    @Test func aCustomersStorefrontIsTheOneTheirPurchasesAreMadeIn() async throws {
        try await Store.with { store in
            let french = try await store.alice.add(Payment(productID: SampleCatalog.consumable))
            let american = try await store.bob.add(Payment(productID: SampleCatalog.consumable))
            #expect(french.storefront == "FRA" && american.storefront == "USA")
        }
    }

    @Test func everyCustomersSubscriptionRenewsAndEachHearsOfTheirOwn() async throws {
        try await Store.with { store in
            let alices = try await store.alice.add(Payment(productID: SampleCatalog.subscription))
            let bobs = try await store.bob.add(Payment(productID: SampleCatalog.subscription))
            let session = StoreTestSession(queue: store.alice)
            let heard = try await session.advanceClock(by: 32 * day)
            #expect(!heard.isEmpty && heard.allSatisfy { $0.originalID == alices.originalID })
            let renewedForBob = try store.bob.ledger.transactions().filter { $0.reason == .renewal }
            #expect(!renewedForBob.isEmpty && renewedForBob.allSatisfy { $0.originalID == bobs.originalID })
            #expect(
                try store.bob.ledger.subscriptionStatus(forProduct: SampleCatalog.subscription)?.transaction.id
                    == renewedForBob.last?.id)
        }
    }

    /// A device's launch makes its customer's due renewals only (its work grows with theirs,
    /// not with the store's); another customer's are made at their launch, dated as they fell due.
    @Test func aLaunchRenewsItsCustomersSubscriptionsOnly() async throws {
        try await Store.with { store in
            let alices = try await store.alice.add(Payment(productID: SampleCatalog.subscription))
            let bobs = try await store.bob.add(Payment(productID: SampleCatalog.subscription))
            _ = try store.ledger.advanceClock(by: 32 * day)  // the clock alone: nothing renewed yet
            let phone = try PaymentQueue(ledger: try store.ledger.forCustomer("alice"))
            #expect(phone.renewedAtLaunch.count == 1 && phone.renewedAtLaunch[0].originalID == alices.originalID)
            let whole = store.ledger.withCustomerScope(.notChosen(choices: [], count: 0))
            #expect(try whole.transactions().filter { $0.reason == .renewal }.map(\.originalID) == [alices.originalID])
            let bobsPhone = try PaymentQueue(ledger: try store.ledger.forCustomer("bob"))
            #expect(bobsPhone.renewedAtLaunch.map(\.originalID) == [bobs.originalID])
            #expect(bobsPhone.renewedAtLaunch[0].purchaseDate == bobs.expirationDate)
        }
    }

    @Test func aControlOfOneTransactionActsForItsOwner() async throws {
        try await Store.with { store in
            let bobs = try await store.bob.add(Payment(productID: SampleCatalog.nonConsumable))
            let observer = CollectingObserver()
            try await store.alice.add(observer)
            let before = observer.callbacks.count
            // Alice's test session refunds Bob's purchase: the store's hand reaches every customer.
            let refunded = try await StoreTestSession(queue: store.alice).refundTransaction(bobs.id)
            #expect(refunded.id == bobs.id && refunded.revocationDate != nil)
            #expect(try store.bob.ledger.transaction(bobs.id)?.revocationDate != nil)
            #expect(observer.callbacks.count == before, "Alice's observers hear nothing of Bob's refund")
            #expect(try store.ledger.verify().isEmpty)
        }
    }

    @Test func eachCustomerHasTheirOwnAppTransactionAndDevice() async throws {
        try await Store.with { store in
            let first = try store.ledger.appTransactionID()
            let alice = try store.alice.ledger.appTransactionID()
            let bob = try store.bob.ledger.appTransactionID()
            #expect(Set([first, alice, bob]).count == 3)
            #expect(alice == (try store.ledger.forCustomer("alice").appTransactionID()), "the same at every read")
            #expect(try store.alice.ledger.deviceVerificationID() != store.bob.ledger.deviceVerificationID())
        }
    }

    /// A row's digest covers its customer unless it is the first: a row moved to another
    /// customer with plain SQL no longer matches its history.
    @Test func aTransactionMovedToAnotherCustomerIsReported() async throws {
        try await Store.with { store in
            let bobs = try await store.bob.add(Payment(productID: SampleCatalog.nonConsumable))
            #expect(try store.ledger.verify().isEmpty)
            let raw = try DatabaseQueue(path: store.ledger.path)
            let move = "UPDATE transactions SET customer_id = 1 WHERE id = \(bobs.id)"
            #expect(throws: DatabaseError.self) { try raw.write { db in try db.execute(sql: move) } }
            try await raw.write { db in try db.execute(sql: "DROP TRIGGER transactions_keep_their_customer; " + move) }
            try raw.close()
            let problems = try store.ledger.verify().map(\.message)
            #expect(problems.contains { $0.contains("differs from") || $0.contains("edited") }, "\(problems)")
        }
    }
}
