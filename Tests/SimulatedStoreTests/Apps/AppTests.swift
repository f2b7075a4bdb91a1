import Foundation
import GRDB
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

/// A store of several apps: each has its own products, settings, transactions and
/// notifications; a customer's purchases in one app are not theirs in another.
@Suite struct AppTests {
    /// A store of two apps (the sample catalog's, and `com.example.second` with a product and a
    /// subscription of its own) and two customers, the first and Alice.
    struct Store {
        let ledger: Ledger
        let second: Ledger

        static let secondBundle = "com.example.second"
        static let secondLevel = "second.level"
        static let secondMonthly = "second.monthly"

        static func with(_ body: (Store) async throws -> Void) async throws {
            try await withTemporaryDirectory { directory in
                let ledger = try SampleCatalog.ledger(in: directory, configuration: StoreFixture.configuration)
                try ledger.addApp(App(bundleID: secondBundle, environment: .sandbox, appAppleID: 77))
                try ledger.addCustomer(Customer(name: "alice"))
                let second = try Ledger.open(at: ledger.path, configuration: StoreFixture.configuration)
                    .forApp(secondBundle)
                try second.saveProducts([
                    Product(id: secondLevel, type: .nonConsumable, price: 1.99),
                    Product(
                        id: secondMonthly, type: .autoRenewable, price: 2.99,
                        subscription: SubscriptionInfo(
                            groupID: "second.group", groupName: "Second", level: 1,
                            period: SubscriptionPeriod(value: 1, unit: .month))),
                ])
                try await body(Store(ledger: ledger, second: second))
                try second.close()
                try ledger.close()
            }
        }
    }

    @Test func aNewStoreHasOneAppWhoseBundleIsTheSetting() async throws {
        try await StoreFixture.with { store in
            #expect(try store.ledger.apps() == [App(bundleID: StoreSettings.defaultBundleID)])
            #expect(store.ledger.bundleID == StoreSettings.defaultBundleID)
            _ = try StoreTestSession(ledger: store.ledger).set(.bundleID, to: "com.example.renamed")
            #expect(try store.ledger.apps().map(\.bundleID) == ["com.example.renamed"])
            #expect(try StoreSettings(ledger: store.ledger).bundleID == "com.example.renamed")
        }
    }

    @Test func appsAreAddedOnceWithBundleIdentifiersAsAppStoreConnectTakesThem() async throws {
        try await StoreFixture.with { store in
            for bad in ["", "a b", "com.example_app", String(repeating: "x", count: 156), "é"] {
                #expect(throws: AppError.invalidBundleID(bad)) { try store.ledger.addApp(App(bundleID: bad)) }
            }
            try store.ledger.addApp(App(bundleID: "com.example.second-1"))
            #expect(throws: AppError.duplicateBundleID("com.example.second-1")) {
                try store.ledger.addApp(App(bundleID: "com.example.second-1"))
            }
            #expect(throws: AppError.duplicateBundleID(StoreSettings.defaultBundleID)) {
                try store.ledger.addApp(App(bundleID: StoreSettings.defaultBundleID))
            }
            // Renaming one app to another's bundle is refused, and changes nothing.
            let second = try store.ledger.forApp("com.example.second-1")
            #expect(throws: AppError.duplicateBundleID(StoreSettings.defaultBundleID)) {
                try StoreTestSession(ledger: second).set(.bundleID, to: StoreSettings.defaultBundleID)
            }
            #expect(try store.ledger.apps().map(\.bundleID) == [StoreSettings.defaultBundleID, "com.example.second-1"])
        }
    }

    @Test func aStoreOfSeveralAppsRefusesWhatActsInNoAppAndNamesTheChoices() async throws {
        try await Store.with { store in
            let opened = try Ledger.open(at: store.ledger.path, configuration: StoreFixture.configuration)
            defer { try? opened.close() }
            #expect(opened.bundleID == nil)
            let notChosen = AppError.appNotChosen(
                choices: [StoreSettings.defaultBundleID, Store.secondBundle], count: 2)
            #expect(throws: notChosen) { try opened.allProducts() }
            #expect(throws: notChosen) { try StoreSettings(ledger: opened) }
            #expect(throws: notChosen) { try opened.forCustomer("alice").currentEntitlements() }
            #expect(
                throws: AppError.unknownApp(
                    "com.example.third", choices: [StoreSettings.defaultBundleID, Store.secondBundle], count: 2)
            ) { try opened.forApp("com.example.third") }
            var configuration = StoreFixture.configuration
            configuration.app = Store.secondBundle
            configuration.customer = "alice"
            let chosen = try Ledger.open(at: store.ledger.path, configuration: configuration)
            defer { try? chosen.close() }
            #expect(try chosen.allProducts().map(\.id) == [Store.secondLevel, Store.secondMonthly])
        }
    }

    /// A product identifier (and a subscription group's) names one product in the store: each
    /// app's catalog is its own, and another app's product is unknown to it.
    @Test func eachAppHasItsOwnCatalog() async throws {
        try await Store.with { store in
            #expect(try store.ledger.allProducts().map(\.id).contains(SampleCatalog.nonConsumable))
            #expect(try !store.ledger.allProducts().map(\.id).contains(Store.secondLevel))
            #expect(
                try store.second.products(withIDs: [SampleCatalog.nonConsumable, Store.secondLevel]).map(\.id) == [
                    Store.secondLevel
                ])
            #expect(
                throws: AppError.productOfAnotherApp(
                    productID: SampleCatalog.nonConsumable, bundleID: StoreSettings.defaultBundleID)
            ) { try store.second.saveProducts([Product(id: SampleCatalog.nonConsumable, type: .consumable, price: 1)]) }
            // A group of the first app's.
            let group = try #require(
                try store.ledger.products(withIDs: [SampleCatalog.subscription]).first?.subscription)
            #expect(
                throws: AppError.productOfAnotherApp(
                    productID: "second.yearly", bundleID: StoreSettings.defaultBundleID)
            ) {
                try store.second.saveProducts([
                    Product(
                        id: "second.yearly", type: .autoRenewable, price: 9,
                        subscription: SubscriptionInfo(
                            groupID: group.groupID, groupName: "x", level: 2,
                            period: SubscriptionPeriod(value: 1, unit: .year)))
                ])
            }
            #expect(try store.second.allProducts().count == 2, "nothing saved")
            // A group stays its app's when a new catalog moves its products elsewhere.
            try store.second.saveProducts([
                Product(
                    id: Store.secondMonthly, type: .autoRenewable, price: 2.99,
                    subscription: SubscriptionInfo(
                        groupID: "second.other", groupName: "Other", level: 1,
                        period: SubscriptionPeriod(value: 1, unit: .month)))
            ])
            #expect(
                throws: AppError.productOfAnotherApp(productID: "first.monthly", bundleID: Store.secondBundle)
            ) {
                try store.ledger.saveProducts([
                    Product(
                        id: "first.monthly", type: .autoRenewable, price: 1,
                        subscription: SubscriptionInfo(
                            groupID: "second.group", groupName: "x", level: 1,
                            period: SubscriptionPeriod(value: 1, unit: .month)))
                ])
            }
            // Each app's promoted products and their order.
            try store.ledger.updatePromotionOrder(byIDs: [SampleCatalog.nonConsumable])
            try store.second.updatePromotionOrder(byIDs: [Store.secondLevel])
            #expect(throws: UnknownProductError(productIdentifier: SampleCatalog.nonConsumable)) {
                try store.second.updatePromotionOrder(byIDs: [SampleCatalog.nonConsumable])
            }
            #expect(try store.ledger.promotionOrder().map(\.productID) == [SampleCatalog.nonConsumable])
            #expect(try store.second.promotionOrder().map(\.productID) == [Store.secondLevel])
            try store.second.updatePromotions([])
            #expect(try !store.second.isPromotionOrderOverridden() && store.second.promotionOrder().isEmpty)
            #expect(try store.ledger.isPromotionOrderOverridden(), "the first app's order stays")
            #expect(try store.ledger.promotionOrder().map(\.productID) == [SampleCatalog.nonConsumable])
            await #expect(throws: UnknownProductError(productIdentifier: Store.secondLevel)) {
                try await PaymentQueue(ledger: store.ledger).add(Payment(productID: Store.secondLevel))
            }
        }
    }

    /// One customer in two apps: each app's queue, entitlements, restores, statuses and app
    /// transaction are its own; what each signs names its app.
    @Test func aCustomersPurchasesInOneAppAreNotTheirsInAnother() async throws {
        try await Store.with { store in
            let inFirst = try PaymentQueue(ledger: try store.ledger.forCustomer("alice"))
            let inSecond = try PaymentQueue(ledger: try store.second.forCustomer("alice"))
            let level = try await inFirst.add(Payment(productID: SampleCatalog.nonConsumable))
            let secondLevel = try await inSecond.add(Payment(productID: Store.secondLevel))
            let monthly = try await inSecond.add(Payment(productID: Store.secondMonthly))
            #expect(try inFirst.ledger.unfinishedTransactions().map(\.id) == [level.id])
            #expect(try inSecond.ledger.unfinishedTransactions().map(\.id) == [secondLevel.id, monthly.id])
            #expect(try inFirst.ledger.currentEntitlements().map(\.productID) == [SampleCatalog.nonConsumable])
            #expect(
                try inSecond.ledger.currentEntitlements().map(\.productID) == [Store.secondLevel, Store.secondMonthly])
            #expect(try inSecond.ledger.transactions().map(\.id) == [secondLevel.id, monthly.id])
            #expect(try inSecond.ledger.transaction(level.id) == nil, "another app's")
            #expect(try inFirst.ledger.subscriptionStatuses().isEmpty)
            #expect(try inSecond.ledger.subscriptionStatuses().map(\.groupID) == ["second.group"])
            #expect(throws: StoreControlError.unknownSubscriptionGroup("second.group")) {
                try inFirst.ledger.subscriptionStatuses(forGroup: "second.group")
            }
            try await inFirst.finish([level.id])
            try await inSecond.finish([secondLevel.id, monthly.id])
            // A new device of the second app restores that app's purchases only.
            let phone = try PaymentQueue(ledger: try store.second.forCustomer("alice"))
            let restored = await phone.restoreCompletedTransactions()
            #expect(Set(try restored.restored.all().compactMap(\.restoredFromID)) == [secondLevel.id, monthly.id])
            // Each app's app transaction id; what each signs names its bundle and environment.
            let firstID = try inFirst.ledger.appTransactionID()
            let secondID = try inSecond.ledger.appTransactionID()
            let again = try store.second.forCustomer("alice").appTransactionID()
            #expect(firstID != secondID && secondID == again)
            let signed = try #require(try inSecond.ledger.signedPurchase(secondLevel.id))
            let payload = try #require(try JSONSerialization.jsonObject(with: signed.signed.payload) as? [String: Any])
            #expect(payload["bundleId"] as? String == Store.secondBundle)
            #expect(payload["environment"] as? String == "Sandbox")
            #expect(payload["appTransactionId"] as? String == secondID)
            #expect(try inFirst.ledger.signedPurchase(secondLevel.id) == nil, "another app's")
            let app = try JSONSerialization.jsonObject(with: try inSecond.ledger.signedAppTransaction().payload)
            #expect((app as? [String: Any])?["bundleId"] as? String == Store.secondBundle)
            #expect((app as? [String: Any])?["appAppleId"] as? Int == 77)
            #expect(try store.ledger.verify().isEmpty)
        }
    }

    /// Each app records its notifications when it has a URL, and only then; the server's
    /// outbox reads them by app.
    @Test func eachAppNotifiesOnItsOwn() async throws {
        try await Store.with { store in
            _ = try StoreTestSession(ledger: store.second).set(.notificationURL, to: "http://127.0.0.1:9/second")
            #expect(try StoreSettings(ledger: store.ledger).notificationURL == nil)
            try await PaymentQueue(ledger: try store.ledger.forCustomer(Customer.defaultName)).add(
                Payment(productID: SampleCatalog.nonConsumable))
            let bought = try await PaymentQueue(ledger: try store.second.forCustomer(Customer.defaultName)).add(
                Payment(productID: Store.secondLevel))
            #expect(try store.second.notifications().map(\.transactionID) == [bought.id])
            #expect(try store.ledger.notifications().isEmpty, "the first app's outbox")
            #expect(try store.second.notificationHistory(.init(start: .distantPast, end: .distantFuture)).count == 1)
            #expect(try store.ledger.notificationHistory(.init(start: .distantPast, end: .distantFuture)).isEmpty)
        }
    }

    /// The store's hand on a transaction acts for its owner in its app, whatever the session
    /// names: an Ask to Buy of the second app's family-shareable product, approved from a value
    /// that names no app nor customer, is charged and shared with the buyer's family in that app.
    @Test func aStoreControlActsInItsTransactionsApp() async throws {
        try await Store.with { store in
            try store.second.saveProducts([
                Product(id: "second.shared", type: .nonConsumable, price: 3.99, isFamilyShareable: true)
            ])
            try store.ledger.addCustomer(Customer(name: "dana", family: "smiths"))
            try store.ledger.addCustomer(Customer(name: "erin", family: "smiths"))
            try StoreTestSession(ledger: store.ledger).update { $0.askToBuyEnabled = true }
            let asked = try await PaymentQueue(ledger: try store.second.forCustomer("dana"))
                .add(Payment(productID: "second.shared"))
            #expect(asked.state == .deferred && asked.appID != 1)
            let whole = try Ledger.open(at: store.ledger.path, configuration: StoreFixture.configuration)
            defer { try? whole.close() }
            let approved = try await StoreTestSession(ledger: whole).approveAskToBuyTransaction(asked.id)
            #expect(approved.state == .purchased && approved.appID == asked.appID)
            let erins = try store.second.forCustomer("erin").transactions()
            #expect(erins.map(\.productID) == ["second.shared"] && erins.allSatisfy { $0.appID == asked.appID })
            #expect(try store.ledger.forCustomer("erin").transactions().isEmpty, "nothing in the first app")
            #expect(try store.ledger.verify().isEmpty)
        }
    }

    /// A row's digest covers its app unless it is the first: a row moved to another app with
    /// plain SQL no longer matches its history.
    @Test func aTransactionMovedToAnotherAppIsReported() async throws {
        try await Store.with { store in
            let bought = try await PaymentQueue(ledger: try store.second.forCustomer(Customer.defaultName)).add(
                Payment(productID: Store.secondLevel))
            #expect(try store.ledger.verify().isEmpty)
            let raw = try DatabaseQueue(path: store.ledger.path)
            let move = "UPDATE transactions SET app_id = 1 WHERE id = \(bought.id)"
            #expect(throws: DatabaseError.self) { try raw.write { db in try db.execute(sql: move) } }
            try await raw.write { db in try db.execute(sql: "DROP TRIGGER transactions_keep_their_app; " + move) }
            try raw.close()
            let problems = try store.ledger.verify().map(\.message)
            #expect(problems.contains { $0.contains("differs from") || $0.contains("edited") }, "\(problems)")
        }
    }

    /// A notification's MAC covers its app: one moved to another app (which would send it to
    /// that app's URL) with plain SQL is reported.
    @Test func aNotificationMovedToAnotherAppIsReported() async throws {
        try await Store.with { store in
            _ = try StoreTestSession(ledger: store.second).set(.notificationURL, to: "http://127.0.0.1:9/second")
            try await PaymentQueue(ledger: try store.second.forCustomer(Customer.defaultName))
                .add(Payment(productID: Store.secondLevel))
            #expect(try store.ledger.verify().isEmpty)
            let raw = try DatabaseQueue(path: store.ledger.path)
            try await raw.write { db in
                try db.execute(sql: "DROP TRIGGER notifications_keep_their_app; UPDATE notifications SET app_id = 1")
            }
            try raw.close()
            let problems = try store.ledger.verify().map(\.message)
            #expect(problems.contains { $0.contains("notifications row") }, "\(problems)")
        }
    }

    /// A mass extension goes over its app's subscribers, and its request identifier is its
    /// app's: another app's server may use the same one for its own.
    @Test func aMassExtensionIsItsAppsAlone() async throws {
        try await Store.with { store in
            try await PaymentQueue(ledger: try store.ledger.forCustomer("alice"))
                .add(Payment(productID: SampleCatalog.subscription))
            try await PaymentQueue(ledger: try store.second.forCustomer("alice"))
                .add(Payment(productID: Store.secondMonthly))
            try await PaymentQueue(ledger: try store.second.forCustomer(Customer.defaultName))
                .add(Payment(productID: Store.secondMonthly))
            let first = try store.ledger.extendRenewalDatesForActiveSubscribers(
                productID: SampleCatalog.subscription, days: 3, reason: 0, requestIdentifier: "same")
            let second = try store.second.extendRenewalDatesForActiveSubscribers(
                productID: Store.secondMonthly, days: 3, reason: 0, requestIdentifier: "same")
            #expect(first.succeededCount == 1 && first.productID == SampleCatalog.subscription)
            #expect(second.succeededCount == 2 && second.productID == Store.secondMonthly)
            #expect(
                try store.ledger.massRenewalExtension(requestIdentifier: "same")?.productID
                    == SampleCatalog.subscription)
            #expect(try store.second.massRenewalExtension(requestIdentifier: "same")?.productID == Store.secondMonthly)
            // Another app's product is unknown to this app's server.
            #expect(throws: UnknownProductError(productIdentifier: Store.secondMonthly)) {
                try store.ledger.extendRenewalDatesForActiveSubscribers(
                    productID: Store.secondMonthly, days: 3, reason: 0, requestIdentifier: "other")
            }
        }
    }
}
