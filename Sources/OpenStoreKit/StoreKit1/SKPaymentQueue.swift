public import Foundation
import StoreLedger
import Synchronization

/// The app's payment queue (StoreKit 1's `SKPaymentQueue`), on the store's ledger.
///
/// As in StoreKit, `add(_:)`, `finishTransaction(_:)` and the restores return at once and the
/// outcome reaches the observers, on the main actor, once it is committed to the ledger. The
/// calls run in the order they were made. Each observer added receives every unfinished
/// transaction first (at every launch until the app finishes them).
///
/// Sendable by hand: its store is set by the initializer only and its observers are behind a
/// `Mutex`; an `open` class cannot be checked by the compiler.
open class SKPaymentQueue: NSObject, @unchecked Sendable {
    /// The store the queue works on (which owns the queue); `nil` when it could not be opened
    /// or was relaunched since: every call then reports `failure` through the observers.
    private weak var context: StoreContext?
    private let openingFailure: SKError?
    /// The observers, each with the bridge that hears the ledger's queue for it.
    private let bridges = Mutex<[ObserverBridge]>([])
    private let delegateReference = Mutex(WeakDelegate())

    /// Held weakly, as StoreKit's delegate. Sendable by hand: it is read and written only under
    /// `delegateReference`'s lock.
    private struct WeakDelegate: @unchecked Sendable {
        weak var delegate: (any SKPaymentQueueDelegate)?
    }

    init(context: StoreContext) {
        self.context = context
        self.openingFailure = nil
        super.init()
    }

    /// A queue of the store StoreKit calls reach now, as `default()` is (a store whose ledger
    /// cannot be opened: payments fail with an `SKError` saying why): what a test double that
    /// subclasses `SKPaymentQueue` starts from, overriding what it needs. Apps use `default()`.
    public override init() {
        do {
            (context, openingFailure) = (try StoreContext.current(), nil)
        } catch {
            (context, openingFailure) = (nil, SKError(ledgerFailure: error))
        }
        super.init()
    }

    private init(failure: SKError) {
        self.context = nil
        self.openingFailure = failure
        super.init()
    }

    /// Why there is no store to work on.
    private var failure: SKError {
        openingFailure
            ?? SKError(
                .unknown,
                userInfo: [
                    NSLocalizedDescriptionKey: "This payment queue's store was relaunched: use SKPaymentQueue.default()"
                ])
    }

    /// The queue of the store StoreKit calls reach now (see `StoreContext`). When the store's
    /// ledger cannot be opened, a queue whose payments fail with an `SKError` saying why.
    open class func `default`() -> SKPaymentQueue {
        do {
            return try StoreContext.current().skPaymentQueue
        } catch {
            return SKPaymentQueue(failure: SKError(ledgerFailure: error))
        }
    }

    /// Whether the user may make payments (the store's `canMakePayments` control).
    open class func canMakePayments() -> Bool {
        (try? StoreSettings(ledger: StoreContext.current().ledger).canMakePayments) ?? false
    }

    // MARK: - Observers

    /// Adds an observer (held weakly; adding it twice has no effect). It receives every
    /// unfinished transaction first.
    open func add(_ observer: any SKPaymentTransactionObserver) {
        let bridge = ObserverBridge(queue: self, observer: observer)
        let added = bridges.withLock { bridges in
            bridges.removeAll { $0.observer == nil }
            guard !bridges.contains(where: { $0.observer === observer }) else { return false }
            bridges.append(bridge)
            return true
        }
        guard added, let context else { return }
        context.operations.submit { [self] in
            do {
                try await context.queue.add(bridge)
            } catch {
                // Not registered: forget it, so that adding it again retries.
                bridges.withLock { $0.removeAll { $0 === bridge } }
                Self.report(error, doing: "adding an observer")
            }
        }
    }

    /// Removes an observer (and any whose object is gone): it hears no more changes. The ledger's
    /// queue drops it after the calls made before this one have run.
    open func remove(_ observer: any SKPaymentTransactionObserver) {
        let removed = bridges.withLock { bridges in
            let removed = bridges.filter { $0.observer == nil || $0.observer === observer }
            bridges.removeAll { $0.observer == nil || $0.observer === observer }
            return removed
        }
        guard let context else { return }
        context.operations.submit {
            for bridge in removed { await context.queue.remove(bridge) }
        }
    }

    /// The observers added and still alive, in the order they were added.
    open var transactionObservers: [any SKPaymentTransactionObserver] {
        bridges.withLock { $0.compactMap(\.observer) }
    }

    // MARK: - Payments

    /// Adds a payment. Observers see it `purchasing`, then as the store processed it
    /// (purchased, failed, or deferred for Ask to Buy). A payment the store cannot take (an
    /// unknown product, a quantity outside 1...10, a promotional offer it refuses: unknown
    /// offer, bad signature, ineligible customer) fails at once with an `SKError`, with nothing
    /// stored.
    open func add(_ payment: SKPayment) {
        let payment = payment.copy() as! SKPayment
        guard let context else { return refuse(payment, failure) }
        context.operations.submit { [self] in
            var request = Payment(
                productID: payment.productIdentifier, quantity: payment.quantity,
                applicationUsername: payment.applicationUsername)
            if payment.simulatesAskToBuyInSandbox { request.simulatedOutcome = .deferred }
            if let discount = payment.paymentDiscount {
                guard let signature = Data(base64Encoded: discount.signature) else {
                    return refuse(
                        payment,
                        SKError(
                            .invalidSignature,
                            userInfo: [
                                NSLocalizedDescriptionKey: "The promotional offer's signature is not base64."
                            ]))
                }
                request.discount = PaymentDiscount(
                    offerID: discount.identifier,
                    signature: OfferSignature(
                        keyID: discount.keyIdentifier, nonce: discount.nonce, timestamp: discount.timestamp.int64Value,
                        signature: signature))
            }
            do {
                try await context.queue.add(request)
            } catch let error as UnknownProductError {
                refuse(
                    payment,
                    SKError(.storeProductNotAvailable, userInfo: [NSLocalizedDescriptionKey: error.description]))
            } catch let error as PaymentQueueError {
                refuse(payment, SKError(refusal: error))
            } catch let error as PromotionalOfferError {
                // StoreKit fails such a payment with the offer's error; nothing is recorded.
                refuse(
                    payment, SKError(SKError.Code(error.code), userInfo: [NSLocalizedDescriptionKey: error.description])
                )
            } catch {
                refuse(payment, SKError(ledgerFailure: error))
            }
        }
    }

    /// Tells the observers a payment failed without reaching the ledger.
    private func refuse(_ payment: SKPayment, _ error: SKError) {
        let transaction = SKPaymentTransaction(refused: payment, error: error)
        let targets = bridges.withLock { $0.compactMap(\.observer) }
        Task { @MainActor in
            for observer in targets { observer.paymentQueue(self, updatedTransactions: [transaction]) }
        }
    }

    /// Finishes a transaction (purchased, failed or restored): it leaves the queue for good and
    /// observers get `removedTransactions`. Finishing twice does nothing more. StoreKit raises
    /// an exception for a transaction still purchasing or deferred; here the call is refused
    /// with a message on standard error and nothing changes.
    open func finishTransaction(_ transaction: SKPaymentTransaction) {
        guard let context, let id = transaction.ledgerID else { return }
        context.operations.submit {
            do {
                try await context.queue.finish(id)
            } catch {
                Self.report(error, doing: "finishing transaction \(id)")
            }
        }
    }

    /// Restores the user's completed purchases of non-consumables and auto-renewable
    /// subscriptions: observers receive each as `restored`, then exactly one
    /// `paymentQueueRestoreCompletedTransactionsFinished` (or `...FailedWithError`).
    open func restoreCompletedTransactions() {
        restoreCompletedTransactions(withApplicationUsername: nil)
    }

    /// `restoreCompletedTransactions()` for one account: the purchases made with this
    /// `applicationUsername` (any string).
    open func restoreCompletedTransactions(withApplicationUsername username: String?) {
        guard let context else {
            let targets = bridges.withLock { $0.compactMap(\.observer) }
            let failure = failure
            Task { @MainActor in
                for observer in targets {
                    observer.paymentQueue(self, restoreCompletedTransactionsFailedWithError: failure)
                }
            }
            return
        }
        context.operations.submit {
            _ = await context.queue.restoreCompletedTransactions(applicationUsername: username)
        }
    }

    // Hosted content is not simulated: no transaction has downloads, so there is never one
    // to start, pause, resume or cancel. The calls exist so that code handling downloads
    // compiles unchanged; they do nothing.

    /// Starts downloads: none exist here, so it does nothing.
    open func start(_ downloads: [SKDownload]) {}
    /// Pauses downloads: none exist here, so it does nothing.
    open func pause(_ downloads: [SKDownload]) {}
    /// Resumes downloads: none exist here, so it does nothing.
    open func resume(_ downloads: [SKDownload]) {}
    /// Cancels downloads: none exist here, so it does nothing.
    open func cancel(_ downloads: [SKDownload]) {}

    // MARK: - Price consent

    /// The queue's delegate, held weakly (StoreKit 1's `SKPaymentQueue.delegate`). Set, it is
    /// asked about each price consent request of the launch that it was not asked about yet
    /// (`SKPaymentQueueDelegate.paymentQueueShouldShowPriceConsent(_:)`).
    open weak var delegate: (any SKPaymentQueueDelegate)? {
        get { delegateReference.withLock { $0.delegate } }
        set {
            delegateReference.withLock { $0.delegate = newValue }
            offerPriceConsents()
        }
    }

    /// Shows the price consent sheets the delegate chose to show later, when their increase
    /// still waits for the subscriber's answer (counted: `SKTestSession.priceConsentSheetCount`);
    /// otherwise does nothing.
    open func showPriceConsentIfNeeded() {
        context?.messages.showDeferred()
    }

    /// Asks the delegate, on the main actor, about the consent requests it was not asked about:
    /// `true` shows the sheet now, `false` keeps it for `showPriceConsentIfNeeded()`. Without a
    /// delegate they wait for one.
    func offerPriceConsents() {
        guard let context, let delegate else { return }
        let messages = context.messages.takeUnoffered()
        guard !messages.isEmpty else { return }
        let offer = UncheckedDelegate(delegate: delegate)
        context.operations.submit { [self] in
            await MainActor.run {
                for message in messages {
                    if offer.delegate.paymentQueueShouldShowPriceConsent(self) {
                        context.messages.display(message)
                    } else {
                        context.messages.deferConsent(message)
                    }
                }
            }
        }
    }

    /// The delegate, carried to the main actor, where StoreKit calls it whatever its isolation.
    /// Sendable by hand: it is used on the main actor only.
    private struct UncheckedDelegate: @unchecked Sendable {
        let delegate: any SKPaymentQueueDelegate
    }

    /// Shows the sheet where the user redeems an offer code: recorded
    /// (`SKTestSession.offerCodeRedeemSheetCount`), as there is no sheet on Linux.
    open func presentCodeRedemptionSheet() {
        context?.presentations.recordOfferCodeRedeemSheet()
    }

    /// The unfinished transactions, oldest first, as the ledger holds them now.
    open var transactions: [SKPaymentTransaction] {
        guard let context else { return [] }
        return ((try? context.ledger.unfinishedTransactions()) ?? []).map(SKPaymentTransaction.init)
    }

    /// The store's storefront.
    open var storefront: SKStorefront? {
        guard let context, let settings = try? StoreSettings(ledger: context.ledger) else { return nil }
        return SKStorefront(settings.storefront)
    }

    /// Returns once every call made on this queue before it has been processed and its
    /// observers called. Not in StoreKit: tests use it instead of waiting on expectations.
    public func waitUntilIdle() async {
        await context?.waitUntilIdle()
    }

    /// Tells the observers the storefront changed (a test session changed it).
    func storefrontDidChange() {
        let targets = bridges.withLock { $0.compactMap(\.observer) }
        Task { @MainActor in
            for observer in targets { observer.paymentQueueDidChangeStorefront(self) }
        }
    }

    /// A fire-and-forget call failed where StoreKit gives no way to report it.
    private static func report(_ error: any Error, doing what: String) {
        FileHandle.standardError.write(Data("OpenStoreKit: \(what) failed: \(error.localizedDescription)\n".utf8))
    }
}

extension SKError {
    /// What StoreKit reports for a payment the queue refused.
    init(refusal: PaymentQueueError) {
        let code: Code =
            switch refusal {
            case .emptyProductIdentifier: .storeProductNotAvailable
            default: .paymentInvalid
            }
        self.init(code, userInfo: [NSLocalizedDescriptionKey: refusal.description])
    }
}

/// Hears the ledger's queue for one StoreKit 1 observer and calls it on the main actor.
///
/// Sendable by hand: its two weak references are set by the initializer only (a weak reference is a
/// `var`).
final class ObserverBridge: PaymentTransactionObserver, @unchecked Sendable {
    // Touched only on the main actor once added; StoreKit calls observers there too, whatever
    // their own isolation, which is why a non-Sendable observer may be held here.
    private(set) weak var observer: (any SKPaymentTransactionObserver)?
    private weak var skQueue: SKPaymentQueue?

    init(queue: SKPaymentQueue, observer: any SKPaymentTransactionObserver) {
        self.skQueue = queue
        self.observer = observer
    }

    private func onMain(
        _ call: @escaping @Sendable @MainActor (any SKPaymentTransactionObserver, SKPaymentQueue) -> Void
    ) async {
        await MainActor.run {
            guard let observer, let skQueue else { return }
            call(observer, skQueue)
        }
    }

    func paymentQueue(_ queue: PaymentQueue, updatedTransactions transactions: [PaymentTransaction]) async {
        let updated = transactions.map(SKPaymentTransaction.init)
        await onMain { $0.paymentQueue($1, updatedTransactions: updated) }
    }

    func paymentQueue(_ queue: PaymentQueue, removedTransactions transactions: [PaymentTransaction]) async {
        let removed = transactions.map(SKPaymentTransaction.init)
        await onMain { $0.paymentQueue($1, removedTransactions: removed) }
    }

    func paymentQueue(
        _ queue: PaymentQueue, didRevokeEntitlementsForProductIdentifiers productIdentifiers: [String]
    ) async {
        await onMain { $0.paymentQueue($1, didRevokeEntitlementsForProductIdentifiers: productIdentifiers) }
    }

    func paymentQueueRestoreCompletedTransactionsFinished(_ queue: PaymentQueue) async {
        await onMain { $0.paymentQueueRestoreCompletedTransactionsFinished($1) }
    }

    func paymentQueue(_ queue: PaymentQueue, restoreCompletedTransactionsFailedWithError error: any Error) async {
        let failure = SKError(ledgerFailure: error)
        await onMain { $0.paymentQueue($1, restoreCompletedTransactionsFailedWithError: failure) }
    }
}
