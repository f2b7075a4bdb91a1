public import Foundation
public import OpenStoreKit
import StoreLedger
import StoreTesting
import Synchronization

/// StoreKitTest's `SKTestSession` on a ledger: the store's controls for tests.
///
/// A session makes a new ledger in a temporary directory (`ledgerPath`; the `ledger` tool can
/// inspect it; it is deleted once nothing uses the session's store), imports the
/// configuration file's products and settings, and becomes the process's store: every
/// StoreKit 1 and 2 call of the process reaches it, until another session is made.
///
/// A session made with `scope: .taskLocal` leaves the process's store alone: its store is
/// reached only inside `withTaskLocalStore(_:)` (and tasks started there, except detached
/// ones), so that parallel tests each get their own store, which StoreKitTest cannot do.
///
/// As in StoreKitTest, the controls are synchronous and throw; what they change reaches the
/// app's observers and `Transaction.updates` asynchronously. `waitUntilIdle()` (not in
/// StoreKitTest) waits for that.
///
/// Sendable by hand: its properties are constants set by the initializer and a `Mutex`; some of
/// their types (the configuration read from the file) are not declared `Sendable`.
public final class SKTestSession: @unchecked Sendable {
    /// The rate subscription time passes at (`SKTestSession.TimeRate`): Xcode's cases and raw
    /// values. (Its own type, not the ledger's `TimeRate`, so that a test importing only this
    /// module sees its cases.)
    public enum TimeRate: Int, Sendable, Hashable {
        /// Periods last as long as on the calendar: a monthly subscription renews in a month (the
        /// default).
        case realTime = 0
        /// Each day of a subscription period lasts one hour (a month of 30 days, 30 hours).
        case oneHourIsOneDay = 1
        /// Each day of a subscription period lasts 30 minutes (a month, 15 hours).
        case thirtyMinutesIsOneDay = 2
        /// Each day of a subscription period lasts 5 minutes (a month, 2.5 hours).
        case fiveMinutesIsOneDay = 3
        /// Each day of a subscription period lasts one minute (a month, 30 minutes).
        case oneMinuteIsOneDay = 4
        /// Each day of a subscription period lasts 30 seconds (a month, 15 minutes).
        case thirtySecondsIsOneDay = 5
        /// Each day of a subscription period lasts one second (a month, 30 seconds).
        case oneSecondIsOneDay = 6
        /// A month lasts one hour; a week a third of that, a year twelve times it.
        case monthlyRenewalEveryHour = 10
        /// A month lasts 30 minutes (a week 10 minutes, a year 6 hours).
        case monthlyRenewalEveryThirtyMinutes = 11
        /// A month lasts 15 minutes (a week 5 minutes, a year 3 hours).
        case monthlyRenewalEveryFifteenMinutes = 12
        /// A month lasts 5 minutes (a week 100 seconds, a year an hour).
        case monthlyRenewalEveryFiveMinutes = 13
        /// A month lasts 30 seconds (a week 10 seconds, a year 6 minutes); Xcode has this rate but
        /// the sandbox does not.
        case monthlyRenewalEveryThirtySeconds = 15
        /// Every subscription period lasts 15 minutes, whatever its length.
        case oneRenewalEveryFifteenMinutes = 1000
        /// Every subscription period lasts 5 minutes, whatever its length.
        case oneRenewalEveryFiveMinutes = 1001
        /// Every subscription period lasts one minute, whatever its length.
        case oneRenewalEveryMinute = 1002
        /// Every subscription period lasts 30 seconds, whatever its length.
        case oneRenewalEveryThirtySeconds = 1003
        /// Every subscription period lasts 10 seconds, whatever its length.
        case oneRenewalEveryTenSeconds = 1004
        /// Every subscription period lasts 2 seconds, whatever its length: the fastest rate.
        case oneRenewalEveryTwoSeconds = 1005

        /// The ledger's rate with the same raw value.
        init(_ rate: StoreLedger.TimeRate) {
            self = TimeRate(rawValue: rate.rawValue) ?? .realTime
        }

        /// The ledger's rate with the same raw value.
        var ledgerRate: StoreLedger.TimeRate {
            StoreLedger.TimeRate(rawValue: rawValue) ?? .realTime
        }
    }

    /// Which StoreKit calls reach a session's store.
    public enum Scope: Sendable {
        /// Every call of the process (StoreKitTest's behaviour).
        case process
        /// Only calls made inside `withTaskLocalStore(_:)`.
        case taskLocal
    }

    /// The ledger file of this session's store.
    public let ledgerPath: String
    /// Whom and where its store's launches act for: the store's only customer and device, or
    /// those a session made by `session(forCustomer:device:)` names.
    private let launchConfiguration: LedgerConfiguration
    private let binding: StoreBinding
    private let directory: TemporaryDirectory
    private let configuration: StoreKitConfiguration
    private let state = Mutex(false)
    private var context: StoreContext { binding.context }
    /// The errors `setSimulatedError(_:forAPI:)` set.
    var failures: SimulatedFailures { context.failures }

    /// A session with the configuration file `filename` (with or without `.storekit`), looked
    /// for in the main bundle, then in each directory of the `OPENSTOREKIT_CONFIGURATION_PATH`
    /// environment variable (separated by `:`), then in the current directory.
    /// - Throws: `SKTestSessionError.configurationFileNotFound`, or the file's `CatalogError`.
    public convenience init(configurationFileNamed filename: String) throws {
        try self.init(contentsOf: try Self.locateConfiguration(named: filename))
    }

    /// A session with the configuration file at `fileURL` (a `.storekit` file).
    /// - Throws: `CatalogError` for a file that cannot be read or is not a StoreKit configuration.
    public convenience init(contentsOf fileURL: URL) throws {
        try self.init(contentsOf: fileURL, scope: .process)
    }

    /// A session with the configuration file at `fileURL`, reached by the calls `scope` says.
    public init(contentsOf fileURL: URL, scope: Scope) throws {
        let checked = try ProductCatalog.readConfigurations(at: [fileURL.path])
        configuration = checked.configurations[0]
        StoreContext.noteTestSession()
        // Removed (also on failure below) when the session and every launch of its store are gone,
        // or when the process exits: a session bound to the process is never released before.
        directory = try TemporaryDirectory.make(prefix: "OpenStoreKitTest-", removedAtExit: true)
        ledgerPath = directory.path + "/ledger.sqlite"
        launchConfiguration = LedgerConfiguration()
        let ledger = try Ledger.open(at: ledgerPath, mode: .createIfMissing)
        try ProductCatalog(ledger: ledger).importConfigurations(checked)
        try StoreTestSession(ledger: ledger).applySettings(of: configuration)
        binding = StoreBinding(try StoreContext(ledger: ledger, resources: directory))
        if scope == .process { StoreContext.bindProcessStore(binding) }
    }

    /// A session on this session's store (the same ledger file, catalog and test environment)
    /// for customer `customer`'s device `device` (`nil`: their only one): its StoreKit calls,
    /// made inside its `withTaskLocalStore(_:)`, are that device's app (another device of the
    /// same account, or another customer's), and its controls act for that customer. Add the
    /// customer and device first (`Ledger.addCustomer(_:)`, `Ledger.addDevice(_:)` on a ledger
    /// opened at `ledgerPath`). Not in StoreKitTest, whose one session is one device.
    /// - Throws: `CustomerError.unknownCustomer`, `CustomerError.unknownDevice`, `LedgerError`.
    public func session(forCustomer customer: String, device: String? = nil) throws -> SKTestSession {
        var launch = launchConfiguration
        (launch.customer, launch.device) = (customer, device)
        return try SKTestSession(sharing: self, as: launch)
    }

    private init(sharing session: SKTestSession, as launch: LedgerConfiguration) throws {
        (ledgerPath, directory, configuration, launchConfiguration) =
            (session.ledgerPath, session.directory, session.configuration, launch)
        binding = StoreBinding(
            try StoreContext(ledger: try Ledger.open(at: ledgerPath, configuration: launch), resources: directory))
    }

    package static func locateConfiguration(
        named filename: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> URL {
        let name = filename.hasSuffix(".storekit") ? String(filename.dropLast(".storekit".count)) : filename
        if let url = Bundle.main.url(forResource: name, withExtension: "storekit") { return url }
        let directories =
            (environment["OPENSTOREKIT_CONFIGURATION_PATH"] ?? "").split(separator: ":").map(String.init)
            + [FileManager.default.currentDirectoryPath]
        for directory in directories {
            let path = directory + "/" + name + ".storekit"
            if FileManager.default.fileExists(atPath: path) { return URL(fileURLWithPath: path) }
        }
        throw SKTestSessionError.configurationFileNotFound(
            name: name + ".storekit", searched: ["main bundle"] + directories)
    }

    /// Runs `body` with this session's store as the store of every StoreKit call made in it
    /// (task-local: tasks it starts inherit it), whatever store the process has.
    public func withTaskLocalStore<Result>(
        isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> Result
    ) async rethrows -> Result {
        try await StoreContext.$taskLocal.withValue(binding, operation: body)
    }

    /// Simulates the app being killed and launched again on the same ledger: StoreKit calls
    /// from now on reach a new launch (payments left purchasing are completed, due renewals
    /// made). The process lives on, so what it holds does too: `SKPaymentQueue.default()` is the
    /// same queue, and each of its observers receives the unfinished transactions, as an
    /// observer added at launch does. To model an object the kill destroyed, remove it from the
    /// queue first. Not in StoreKitTest: crash-recovery tests use it.
    /// - Throws: `LedgerError` when the ledger cannot be opened again.
    public func relaunch() throws {
        let ledger = try Ledger.open(at: ledgerPath, configuration: launchConfiguration)
        binding.replace(
            with: try StoreContext(
                ledger: ledger, resources: directory, failures: context.failures, presentations: context.presentations,
                purchaseIntents: context.purchaseIntents))
    }

    /// Returns once the launch's own work (finishing the StoreKit 2 failures it found), every
    /// StoreKit 1 call made before, and every change this session made, has reached the
    /// observers. Not in StoreKitTest.
    public func waitUntilIdle() async {
        await context.waitUntilIdle()
    }

    private var ledger: Ledger { context.ledger }
    private var controls: StoreTestSession { StoreTestSession(ledger: ledger) }

    // MARK: - Settings

    /// Returns every setting and transaction to the configuration file's: transactions are
    /// deleted (unfinished ones included), the file's settings applied again, and simulated
    /// errors (`setSimulatedError(_:forAPI:)`) and the counts of sheets shown
    /// (`reviewRequestCount`, ...) cleared, and the refund request sheet answered `.request`
    /// again.
    public func resetToDefaultState() {
        report("resetting the test session") {
            try perform(.clearTransactions)
            try controls.update { $0 = StoreSettings().applying(configuration.settings) }
        }
        failures.clearAll()
        context.presentations.clear()
        disableDialogs = false
    }

    /// Deletes every transaction, unfinished ones included.
    public func clearTransactions() {
        report("clearing transactions") { try perform(.clearTransactions) }
    }

    /// StoreKit's confirmation dialogs: the ledger's store has none, so this only records the wish.
    public var disableDialogs: Bool {
        get { state.withLock { $0 } }
        set { state.withLock { $0 = newValue } }
    }

    /// Every purchase the app makes is deferred until `approveAskToBuyTransaction(identifier:)`
    /// or `declineAskToBuyTransaction(identifier:)`. Starts as the configuration file sets it;
    /// `resetToDefaultState()` returns to that. Purchases by `buyProduct` are not affected.
    public var askToBuyEnabled: Bool {
        get { settings.askToBuyEnabled }
        set { change("askToBuyEnabled") { $0.askToBuyEnabled = newValue } }
    }

    /// Every purchase the app makes is interrupted: it fails until
    /// `resolveIssueForTransaction(identifier:)`, and its replacement purchase arrives once the
    /// failed transaction is finished. Off until set; `resetToDefaultState()` turns it off.
    public var interruptedPurchasesEnabled: Bool {
        get { settings.interruptedPurchasesEnabled }
        set { change("interruptedPurchasesEnabled") { $0.interruptedPurchasesEnabled = newValue } }
    }

    /// Every purchase fails with `failureError` (default `.unknown`).
    public var failTransactionsEnabled: Bool {
        get { settings.failTransactionsError != nil }
        set {
            let code = (failureError ?? .unknown).storeErrorCode
            change("failTransactionsEnabled") { $0.failTransactionsError = newValue ? code : nil }
        }
    }

    private let failure = Mutex<SKError.Code?>(nil)

    /// The error failing purchases get while `failTransactionsEnabled`.
    public var failureError: SKError.Code? {
        get { failure.withLock { $0 } }
        set {
            failure.withLock { $0 = newValue }
            if failTransactionsEnabled { failTransactionsEnabled = true }
        }
    }

    /// The storefront's ISO 3166-1 alpha-3 code. Setting one the App Store does not have
    /// changes nothing and is reported on standard error.
    public var storefront: String {
        get { settings.storefront.countryCode }
        set {
            guard let storefront = StoreLedger.Storefront(countryCode: newValue) else {
                return warn("setting the storefront", StoreSettingError(control: .storefront, value: newValue))
            }
            change("storefront") { $0.storefront = storefront }
            context.storefrontDidChange()
        }
    }

    /// The shopper's locale: it picks the products' localized names and descriptions and the
    /// language of prices. Starts as the configuration file's, or the storefront's default.
    public var locale: Locale {
        get { Locale(identifier: settings.locale) }
        set { change("locale") { $0.locale = newValue.identifier } }
    }

    /// Every renewal fails on a billing issue and the subscription enters billing retry, until
    /// `resolveIssueForTransaction(identifier:)` (or the end of the retry period: expired).
    public var shouldEnterBillingRetryOnRenewal: Bool {
        get { settings.billingRetryOnRenewal }
        set { change("shouldEnterBillingRetryOnRenewal") { $0.billingRetryOnRenewal = newValue } }
    }

    /// A subscription in billing retry keeps its entitlement for a grace period.
    public var billingGracePeriodIsEnabled: Bool {
        get { settings.billingGracePeriodEnabled }
        set { change("billingGracePeriodIsEnabled") { $0.billingGracePeriodEnabled = newValue } }
    }

    /// How fast subscription time passes in the store, so that renewals come sooner (`.realTime`
    /// unless the configuration file's `_timeRate` says otherwise).
    public var timeRate: TimeRate {
        get { TimeRate(settings.timeRate) }
        set { change("timeRate") { $0.timeRate = newValue.ledgerRate } }
    }

    private var settings: StoreSettings {
        (try? controls.settings()) ?? StoreSettings()
    }

    private func change(_ what: String, _ body: (inout StoreSettings) -> Void) {
        report("setting \(what)") { try controls.update(body) }
    }

    // MARK: - Transactions

    /// Approves a deferred (Ask to Buy) transaction: it becomes purchased.
    /// - Throws: `PaymentQueueError.unknownTransaction`, `.notDeferred`.
    public func approveAskToBuyTransaction(identifier: UInt) throws {
        try perform(.approveAskToBuy(UInt64(identifier)))
    }

    /// Declines a deferred (Ask to Buy) transaction: it fails as cancelled.
    public func declineAskToBuyTransaction(identifier: UInt) throws {
        try perform(.declineAskToBuy(UInt64(identifier)))
    }

    /// Resolves the issue of a transaction: an interrupted purchase (its replacement purchase
    /// arrives once the failed transaction is finished), or a subscription in billing retry
    /// (it renews now; within its grace period, from the end of its last period).
    /// - Throws: `StoreControlError.notInterrupted` for a transaction with no issue.
    public func resolveIssueForTransaction(identifier: UInt) throws {
        // A renewal of an auto-renewable subscription wakes the renewal task through the
        // delivery (the queue reschedules on any subscription change it notifies).
        try perform(.resolveIssue(ofTransaction: UInt64(identifier)))
    }

    /// Refunds a purchased or restored transaction: observers hear the revocation.
    /// - Throws: `StoreControlError.cannotRefund`, `.alreadyRefunded`, `PaymentQueueError.unknownTransaction`.
    public func refundTransaction(identifier: UInt) throws {
        try perform(.refund(UInt64(identifier), reason: RevocationReason.other.rawValue))
    }

    /// The App Store grants the refund the user asked for (`Transaction.beginRefundRequest`):
    /// the purchase is refunded, and observers hear of the revocation, as `refundTransaction`.
    /// Not in StoreKitTest, where a refund is only `refundTransaction`.
    /// - Throws: `StoreControlError.noRefundRequest` when no request of the transaction waits.
    public func approveRefundRequest(identifier: UInt) throws {
        try perform(.decideRefundRequest(UInt64(identifier), .grant))
    }

    /// The App Store grants part of the refund the user asked for, by their use of the purchase
    /// (`REFUND_PRORATED`): `revocationPercentage` in milliunits of a percent (1 to 99,999;
    /// 25,000 is 25%). The purchase is revoked as by `approveRefundRequest(identifier:)`. Not in
    /// StoreKitTest.
    /// - Throws: `StoreControlError.noRefundRequest`, `.invalidRefundPortion`.
    public func approveRefundRequest(identifier: UInt, revocationPercentage: Int) throws {
        try perform(
            .decideRefundRequest(UInt64(identifier), .grantProrated(revocationPercentage: revocationPercentage)))
    }

    /// The App Store declines the refund the user asked for: the purchase stands (the app's
    /// server is notified `REFUND_DECLINED`). Not in StoreKitTest.
    /// - Throws: `StoreControlError.noRefundRequest` when no request of the transaction waits.
    public func declineRefundRequest(identifier: UInt) throws {
        try perform(.decideRefundRequest(UInt64(identifier), .decline))
    }

    /// The App Store reverses a transaction's refund after a dispute (`REFUND_REVERSED`): the
    /// purchase entitles again, and `Transaction.updates` sends it without its revocation. Not
    /// in StoreKitTest.
    /// - Throws: `StoreControlError.notRefunded`, `.revokedByFamilySharing`.
    public func reverseRefundForTransaction(identifier: UInt) throws {
        try perform(.reverseRefund(UInt64(identifier)))
    }

    /// Deletes one transaction from the store.
    public func deleteTransaction(identifier: UInt) throws {
        try perform(.deleteTransaction(UInt64(identifier)))
    }

    /// The customer starts buying a promoted product on the App Store, or, with
    /// `winBackOfferID`, redeems one of its win-back offers there: the app receives a
    /// `PurchaseIntent` to complete (StoreKit 2's `PurchaseIntent.intents`), or, when no
    /// `intents` sequence listens and the offer is not a win-back one, its StoreKit 1 observers
    /// are asked `paymentQueue(_:shouldAddStorePayment:for:)`. With neither, the intent waits
    /// for the app (at most 100), across relaunches. Not in StoreKitTest (Xcode opens a
    /// `purchaseIntent` URL instead).
    /// - Throws: `UnknownProductError`; `SKTestSessionError.productNotPromoted` when the App
    ///   Store does not show the product among the device's promoted products (hidden, or left
    ///   out of the order set with `Product.PromotionInfo`);
    ///   `SKTestSessionError.unknownWinBackOffer`; `SKTestSessionError.tooManyPurchaseIntents`.
    public func startPurchaseFromAppStore(productIdentifier: String, winBackOfferID: String? = nil) throws {
        do {
            try context.startPurchaseFromAppStore(productID: productIdentifier, winBackOfferID: winBackOfferID)
        } catch let error as PurchaseIntentError {
            throw switch error {
            case .notPromoted(let id): SKTestSessionError.productNotPromoted(productIdentifier: id)
            case .unknownWinBackOffer(let id, let offer):
                SKTestSessionError.unknownWinBackOffer(productIdentifier: id, offerID: offer)
            case .tooManyWaiting(let limit): SKTestSessionError.tooManyPurchaseIntents(limit: limit)
            }
        }
    }

    /// Buys a product outside the app (as from another device): the app hears of it through
    /// its observers and `Transaction.updates`. The purchase succeeds whatever the store's
    /// switches (Ask to Buy, failing, interrupted, `canMakePayments`: they concern the app's
    /// own payments).
    /// - Throws: `UnknownProductError`.
    public func buyProduct(productIdentifier: String) throws {
        _ = try buy(NewPayment(productID: productIdentifier))
    }

    /// Buys a product outside the app with `options` (quantity, app account token, a
    /// promotional offer: `.promotionalOffer(id:)` needs no signature) and returns its
    /// transaction once the app's observers have heard of it.
    /// - Throws: `UnknownProductError` for an unknown product; `PaymentQueueError` for a bad quantity;
    ///   `PromotionalOfferError` for an offer the store refuses;
    ///   `SKTestSessionError.purchaseFailed` when the store did not complete the purchase
    ///   (already subscribed, say).
    public func buyProduct(
        identifier: String, options: Set<OpenStoreKit.Product.PurchaseOption> = []
    ) async throws -> OpenStoreKit.Transaction {
        var payment = Payment(productID: identifier)
        for option in options { option.apply(to: &payment) }
        let bought = try buy(payment.newPayment)
        await waitUntilIdle()
        guard bought.state == .purchased else { throw SKTestSessionError.purchaseFailed(productIdentifier: identifier) }
        return context.origin.result(bought).unsafePayloadValue  // signed, as every transaction handed out
    }

    /// A family member bought a family-shareable product and shares it: the app hears of the
    /// customer's purchase as of one made outside the app, its `ownershipType`
    /// `.familyShared`. Not in StoreKitTest.
    /// - Throws: `UnknownProductError`; `StoreControlError.notFamilyShareable`.
    public func shareFamilyPurchase(productIdentifier: String) throws {
        try perform(.shareFamilyPurchase(NewPayment(productID: productIdentifier)))
    }

    /// The family member stops sharing the purchase of transaction `identifier` (or leaves the
    /// family): its transactions are revoked, and the app hears of it as of a refund
    /// (`didRevokeEntitlementsForProductIdentifiers`, `Transaction.updates`). Not in StoreKitTest.
    /// - Throws: `PaymentQueueError.unknownTransaction`; `StoreControlError.notFamilyShared`.
    public func revokeFamilySharing(identifier: UInt) throws {
        try perform(.revokeFamilySharing(UInt64(identifier)))
    }

    private func buy(_ payment: NewPayment) throws -> PaymentTransaction {
        try perform(.buyOutsideTheApp(payment)).transactions[0]
    }

    // MARK: - Subscriptions and time

    /// Expires the subscription of `productIdentifier`'s group now and turns its auto-renew off
    /// (a pending change of product is dropped). The app's observers are not told.
    /// - Throws: `UnknownProductError`; `StoreControlError.notAutoRenewable`, `.noSubscription`.
    public func expireSubscription(productIdentifier: String) throws {
        try perform(.expireSubscription(productID: productIdentifier))
    }

    /// Renews the subscription now; the renewal reaches the app.
    public func forceRenewalOfSubscription(productIdentifier: String) throws {
        try perform(.forceRenewal(productID: productIdentifier))
    }

    /// Turns auto-renew off for the subscription group of transaction `identifier`'s product: the
    /// subscription expires at the end of its current period instead of renewing.
    /// - Throws: `PaymentQueueError.unknownTransaction`; `StoreControlError.notAutoRenewable` for
    ///   a product that is not an auto-renewable subscription.
    public func disableAutoRenewForTransaction(identifier: UInt) throws {
        try perform(.setAutoRenew(productID: try productID(of: identifier), enabled: false))
    }

    /// Turns auto-renew back on (subscriptions start with it on) for the subscription group of
    /// transaction `identifier`'s product, and wakes the renewal task. Turned on after the
    /// subscription's expiration date, it stays expired.
    /// - Throws: `PaymentQueueError.unknownTransaction`; `StoreControlError.notAutoRenewable` for
    ///   a product that is not an auto-renewable subscription.
    public func enableAutoRenewForTransaction(identifier: UInt) throws {
        try perform(.setAutoRenew(productID: try productID(of: identifier), enabled: true))
    }

    /// The App Store asks the subscriber to consent to a price increase of the subscription of
    /// transaction `identifier`'s group, from its next renewal, at the catalog's price of the
    /// product it renews to (a test that wants another price uses
    /// `requestPriceIncreaseConsentForTransaction(identifier:price:)`). The app receives a
    /// price consent message (`Message.messages`; StoreKit 1: its queue's delegate), and the
    /// subscription's renewal info says `.pending`. A subscriber who has not consented when the
    /// period ends does not renew: it expires, reason `.didNotConsentToPriceIncrease`.
    /// - Throws: `PaymentQueueError.unknownTransaction`; `StoreControlError.notAutoRenewable`,
    ///   `.notRenewing` (expired, refunded, in billing retry, or auto-renew off),
    ///   `.priceIncreasePending`.
    public func requestPriceIncreaseConsentForTransaction(identifier: Int) throws {
        try requestPriceIncreaseConsentForTransaction(identifier: identifier, price: nil)
    }

    /// `requestPriceIncreaseConsentForTransaction(identifier:)` at `price` (`nil`: the
    /// catalog's). Not in StoreKitTest.
    /// - Throws: also `StoreControlError.invalidPrice`.
    public func requestPriceIncreaseConsentForTransaction(identifier: Int, price: Decimal?) throws {
        try perform(
            .requestPriceIncrease(productID: try productID(of: identifier), price: price, needsConsent: true))
    }

    /// The subscriber consents to the pending price increase of transaction `identifier`'s
    /// subscription group: its next renewal charges the new price.
    /// - Throws: `PaymentQueueError.unknownTransaction`; `StoreControlError.noPriceIncrease`
    ///   when none waits for an answer.
    public func consentToPriceIncreaseForTransaction(identifier: Int) throws {
        try perform(.answerPriceIncrease(productID: try productID(of: identifier), agree: true))
    }

    /// The subscriber declines the pending price increase of transaction `identifier`'s
    /// subscription group: auto-renew turns off, and the subscription expires at the end of its
    /// period, reason `.didNotConsentToPriceIncrease`.
    /// - Throws: `PaymentQueueError.unknownTransaction`; `StoreControlError.noPriceIncrease`
    ///   when none waits for an answer.
    public func declinePriceIncreaseForTransaction(identifier: Int) throws {
        try perform(.answerPriceIncrease(productID: try productID(of: identifier), agree: false))
    }

    /// Moves the store's clock forward and delivers the renewals that fell due. Not in
    /// StoreKitTest (where only `timeRate` moves subscription time): tests use it to reach a
    /// renewal without waiting.
    /// - Throws: `StoreControlError.clockOutOfRange`, `.tooManyRenewals`.
    public func advanceTime(by interval: TimeInterval) throws {
        try perform(.advanceClock(by: interval))
    }

    private func productID(of identifier: UInt) throws -> String {
        guard let transaction = try ledger.transaction(UInt64(identifier)) else {
            throw PaymentQueueError.unknownTransaction(UInt64(identifier))
        }
        return transaction.productID
    }

    /// StoreKitTest's price increase controls take an `Int` identifier; a negative one names none.
    private func productID(of identifier: Int) throws -> String {
        guard let identifier = UInt(exactly: identifier) else {
            throw PaymentQueueError.unknownTransaction(UInt64(truncatingIfNeeded: identifier))
        }
        return try productID(of: identifier)
    }

    /// Every transaction of the store, oldest first.
    public func allTransactions() -> [SKTestTransaction] {
        let rows = (try? ledger.allTransactions()) ?? []
        let interrupted = Dictionary(
            ((try? ledger.interruptedPurchases()) ?? []).map { ($0.transactionID, $0.resolved) }
        ) { a, _ in a }
        // The latest period of each group whose price increase waits for consent.
        let awaitingConsent = Set(((try? ledger.pendingPriceIncreases()) ?? []).map(\.transaction.id))
        return rows.map { row in
            SKTestTransaction(
                row,
                autoRenewingEnabled: row.productType == .autoRenewable
                    ? ((try? ledger.isAutoRenewEnabled(for: row.productID)) ?? false) : false,
                hasPurchaseIssue: interrupted[row.id] == false,
                isPendingPriceIncreaseConsent: awaitingConsent.contains(row.id))
        }
    }

    // MARK: - Sheets the app asked for

    // StoreKit's sheets have no UI on Linux: the store counts the calls instead, so that a test
    // asserts the app asked (not in StoreKitTest). Relaunches keep the counts; a reset clears them.

    /// How many times the app requested a review (`SKStoreReviewController.requestReview`,
    /// `AppStore.requestReview(in:)`).
    public var reviewRequestCount: Int { context.presentations.current.reviewRequests }

    /// The subscription management sheets the app showed (`AppStore.showManageSubscriptions`),
    /// oldest first: the subscription group each was for, `nil` for all of them (the last 1,000).
    public var manageSubscriptionsRequests: [String?] { context.presentations.current.manageSubscriptions }

    /// How many times the app showed the offer-code redemption sheet
    /// (`AppStore.presentOfferCodeRedeemSheet(in:)`, `SKPaymentQueue.presentCodeRedemptionSheet()`).
    public var offerCodeRedeemSheetCount: Int { context.presentations.current.offerCodeRedeemSheets }

    /// What the user does in the refund request sheet (`Transaction.beginRefundRequest`).
    public enum RefundRequestSheetAnswer: Sendable, Hashable {
        /// Asks for the refund (for the reason `OTHER`; `ledger refund-requests submit --reason`
        /// asks for another).
        case request
        /// Closes the sheet without asking: `beginRefundRequest` returns `.userCancelled`.
        case cancel
    }

    /// How the user answers the refund request sheet from now on: by default, asks for the
    /// refund. Kept across relaunches; a reset restores the default. Not in StoreKitTest,
    /// whose sheet a tester answers by hand.
    public var refundRequestSheetAnswer: RefundRequestSheetAnswer {
        get { context.presentations.refundSheetIsClosed ? .cancel : .request }
        set { context.presentations.refundSheetIsClosed = newValue == .cancel }
    }

    /// How many price consent sheets were shown: `Message.display(in:)` of a price consent
    /// message, a StoreKit 1 queue delegate answering `true`, or
    /// `SKPaymentQueue.showPriceConsentIfNeeded()` (each only while the increase waits).
    public var priceConsentSheetCount: Int { context.presentations.current.priceConsentSheets }

    /// How many billing problem sheets were shown: `Message.display(in:)` of a billing issue
    /// message, while the subscription was still in billing retry.
    public var billingIssueSheetCount: Int { context.presentations.current.billingIssueSheets }
    /// How many win-back offer sheets the app showed (a `.winBackOffer` `Message` displayed).
    /// Not in StoreKitTest.
    public var winBackOfferSheetCount: Int { context.presentations.current.winBackOfferSheets }

    // MARK: - Performing and reporting

    /// Performs a control through the store's one door (`Ledger.perform`) now, as
    /// StoreKitTest's controls are synchronous and throw, its delivery recorded in its commit
    /// as the store's launch says (`StoreContext.deliveryRecording`); the observers hear of it
    /// after the StoreKit 1 calls made before it.
    @discardableResult
    private func perform(_ action: StoreAction) throws -> StoreActionOutcome {
        let context = context
        // Counted from before the commit to the end of the announcement: the queue's look for
        // other devices' purchases must not take this change for one.
        context.queue.changesToAnnounce.add(1, ordering: .releasing)
        let outcome: StoreActionOutcome
        do {
            outcome = try ledger.perform(action, delivery: context.deliveryRecording)
        } catch {
            context.queue.changesToAnnounce.subtract(1, ordering: .releasing)
            throw error
        }
        context.afterPendingCalls {
            await $0.announce(outcome)
            $0.changesToAnnounce.subtract(1, ordering: .releasing)
            context.storeDidChange()
        }
        return outcome
    }

    /// A setter failed: StoreKitTest's setters cannot throw, so the failure is printed.
    private func report(_ what: String, _ body: () throws -> Void) {
        do { try body() } catch { warn(what, error) }
    }

    private func warn(_ what: String, _ error: any Error) {
        FileHandle.standardError.write(Data("OpenStoreKitTest: \(what) failed: \(error.localizedDescription)\n".utf8))
    }
}

/// A transaction as the test session sees it (StoreKitTest's `SKTestTransaction`).
public final class SKTestTransaction: Sendable {
    /// The transaction's identifier in the store (the ledger's id): what the session's controls
    /// take.
    public let identifier: UInt
    /// The identifier of the first purchase: the transaction's own for a purchase, the purchase's
    /// for its renewals and restored copies.
    public let originalTransactionIdentifier: UInt
    /// The identifier of the product bought.
    public let productIdentifier: String
    /// When the transaction was made (for a subscription, when its period started), by the store's
    /// clock.
    public let purchaseDate: Date
    /// When the subscription period ends, or ended if it was expired early; `nil` for a product
    /// that is not an auto-renewable subscription.
    public let expirationDate: Date?
    /// When the transaction was refunded (StoreKitTest's name; StoreKit 2 calls it
    /// `revocationDate`); `nil` when it was not.
    public let cancelDate: Date?
    /// The transaction's state as StoreKit 1 reports it (purchasing, purchased, failed, restored
    /// or deferred).
    public let state: SKPaymentTransactionState
    /// Whether the product's subscription group renews at the end of its period, when
    /// `allTransactions()` read it; always `false` for a product that is not an auto-renewable
    /// subscription.
    public let autoRenewingEnabled: Bool
    /// An interrupted purchase whose issue is not resolved yet.
    public let hasPurchaseIssue: Bool
    /// The transaction is deferred, waiting for its Ask to Buy approval or decline.
    public let pendingAskToBuyConfirmation: Bool
    /// The subscription's price increase waits for the user's consent (true of its group's
    /// latest period).
    public let isPendingPriceIncreaseConsent: Bool
    /// The app finished the transaction: it has left the payment queue (not in StoreKitTest).
    public let isFinished: Bool

    init(
        _ row: PaymentTransaction, autoRenewingEnabled: Bool, hasPurchaseIssue: Bool,
        isPendingPriceIncreaseConsent: Bool
    ) {
        self.isPendingPriceIncreaseConsent = isPendingPriceIncreaseConsent
        identifier = UInt(row.id)
        originalTransactionIdentifier = UInt(row.originalID)
        productIdentifier = row.productID
        purchaseDate = row.purchaseDate
        expirationDate = row.expirationDate
        cancelDate = row.revocationDate
        state = SKPaymentTransactionState(row.state)
        self.autoRenewingEnabled = autoRenewingEnabled
        self.hasPurchaseIssue = hasPurchaseIssue
        pendingAskToBuyConfirmation = row.state == .deferred
        isFinished = row.isFinished
    }
}

/// Why a test session could not do what was asked.
public enum SKTestSessionError: Error, Sendable, Equatable, LocalizedError {
    /// `init(configurationFileNamed:)` found no file `name`; `searched` lists where it looked, in
    /// order.
    case configurationFileNotFound(name: String, searched: [String])
    /// `buyProduct(identifier:options:)` made a transaction that is not purchased: the store did
    /// not complete the purchase (already subscribed, say).
    case purchaseFailed(productIdentifier: String)
    /// `setSimulatedError(_:forAPI:)` was given an API type OpenStoreKitTest does not define.
    case unsupportedAPI(String)
    /// `startPurchaseFromAppStore(productIdentifier:winBackOfferID:)`: the App Store does not
    /// show the product among the device's promoted products.
    case productNotPromoted(productIdentifier: String)
    /// `startPurchaseFromAppStore(productIdentifier:winBackOfferID:)`: the product has no
    /// win-back offer with this identifier.
    case unknownWinBackOffer(productIdentifier: String, offerID: String)
    /// `startPurchaseFromAppStore(productIdentifier:winBackOfferID:)`: `limit` purchase intents
    /// wait for the app already (it never listens to `PurchaseIntent.intents`?).
    case tooManyPurchaseIntents(limit: Int)

    public var errorDescription: String? {
        switch self {
        case .configurationFileNotFound(let name, let searched):
            "StoreKit configuration file \(name) not found; looked in: \(searched.joined(separator: ", "))"
        case .purchaseFailed(let id):
            "buying \(id) made no purchased transaction (the store's failure switches are on?)"
        case .unsupportedAPI(let name):
            "\(name) is not one of the failable StoreKit APIs of OpenStoreKitTest (loadProducts, purchase, verification, appStoreSync, subscriptionStatus)"
        // The store's own words for why it refused to start the purchase.
        case .productNotPromoted(let id): PurchaseIntentError.notPromoted(productID: id).description
        case .unknownWinBackOffer(let id, let offer):
            PurchaseIntentError.unknownWinBackOffer(productID: id, offerID: offer).description
        case .tooManyPurchaseIntents(let limit): PurchaseIntentError.tooManyWaiting(limit: limit).description
        }
    }
}

/// StoreKitTest's purchase options, for purchases a test session makes.
extension OpenStoreKit.Product.PurchaseOption {
    /// A promotional offer without a signature, for `SKTestSession.buyProduct(identifier:options:)`
    /// (StoreKitTest's `promotionalOffer(id:)`): the store checks the offer and the customer's
    /// eligibility, not a signature.
    public static func promotionalOffer(id: String) -> Self {
        .unsignedPromotionalOffer(id: id)
    }

    /// An offer code, for `SKTestSession.buyProduct(identifier:options:)` (StoreKitTest's
    /// `codeOffer(referenceName:)`): the purchase redeems the code of the product's
    /// `codeOffers` named `referenceName`, as a customer redeeming it in the code redemption
    /// sheet does; the store checks that the code is for the customer (new to the subscription
    /// group, lapsed, or subscribed now).
    public static func codeOffer(referenceName: String) -> Self {
        .code(referenceName: referenceName)
    }

    /// How a back-dated auto-renewable subscription renews
    /// (StoreKitTest's `Product.PurchaseOption.SubscriptionRenewalBehavior`).
    public enum SubscriptionRenewalBehavior: Sendable, Hashable {
        /// One period only: the subscription is cancelled at once.
        case cancelImmediately
        /// It renews from the purchase date up to the store's time, one transaction per period.
        case renewUntilNow
    }

    /// Dates the purchase `date` (StoreKitTest's `purchaseDate(_:renewalBehavior:)`): not after
    /// the store's time (the purchase fails with `StoreKitError.systemError` otherwise). A
    /// back-dated auto-renewable subscription must be its group's first purchase; it renews
    /// from then up to the store's time (the renewals arrive in `Transaction.updates`, made as a
    /// clock move makes them, at most the renewal limit) or, with `.cancelImmediately`, has its
    /// first period only.
    public static func purchaseDate(
        _ date: Date, renewalBehavior: SubscriptionRenewalBehavior = .renewUntilNow
    ) -> Self {
        .backdated(BackdatedPurchase(date: date, renews: renewalBehavior == .renewUntilNow))
    }
}
