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
/// `default()` is one queue for the process, as Apple's "default payment queue instance": kept
/// in a singleton, it keeps working when a test makes a new `SKTestSession` or relaunches the
/// store. Its calls reach the store of the moment, and its observers move with it: at each new
/// store they receive its unfinished transactions, as at a launch. Inside a session's
/// `withTaskLocalStore(_:)`, `default()` is that session's own queue instead, so that parallel
/// tests stay apart.
///
/// Sendable by hand: what it follows is set by the initializer only (a weak reference is a
/// `var`), and its observers and delegate are behind `Mutex`es; an `open` class cannot be
/// checked by the compiler.
open class SKPaymentQueue: NSObject, @unchecked Sendable {
    /// The session's store the queue follows (`withTaskLocalStore`), across its relaunches;
    /// `nil` when it follows the process's store, or when that session is gone.
    private weak var binding: StoreBinding?
    private let followsProcess: Bool
    /// The store the observers are registered with, and the observers, each with the bridge that
    /// hears that store's ledger queue for it.
    private let attachment = Mutex(Attachment())
    private let delegateReference = Mutex(WeakDelegate())

    private struct Attachment {
        weak var context: StoreContext?
        var bridges: [ObserverBridge] = []
    }

    /// Held weakly, as StoreKit's delegate. Sendable by hand: it is read and written only under
    /// `delegateReference`'s lock.
    private struct WeakDelegate: @unchecked Sendable {
        weak var delegate: (any SKPaymentQueueDelegate)?
    }

    /// The queue of a session's store (`binding`), or of the process's store (`nil`).
    init(following binding: StoreBinding?) {
        self.binding = binding
        self.followsProcess = binding == nil
        super.init()
    }

    /// A queue of the store StoreKit calls reach now, as `default()` is: what a test double
    /// that subclasses `SKPaymentQueue` starts from, overriding what it needs. Apps use
    /// `default()`.
    public override init() {
        binding = StoreContext.taskLocal
        followsProcess = binding == nil
        super.init()
    }

    /// The process's queue (see the type's comment).
    static let process = SKPaymentQueue(following: nil)

    /// The queue of the store StoreKit calls reach now: the process's one queue, or inside a
    /// session's `withTaskLocalStore(_:)` that session's queue. When the store's ledger cannot
    /// be opened, its calls fail with an `SKError` saying why.
    open class func `default`() -> SKPaymentQueue {
        StoreContext.taskLocal?.skPaymentQueue ?? process
    }

    /// The store the calls reach now, with the observers moved to it if it changed since the
    /// last call (a new session, a relaunch).
    /// - Throws: `SKError` when the store's ledger cannot be opened, or the session whose store
    ///   the queue followed is gone.
    private func store() throws(SKError) -> StoreContext {
        let context: StoreContext
        do {
            if followsProcess {
                context = try StoreContext.processContext()
            } else if let binding {
                context = binding.context
            } else {
                throw SKError(
                    .unknown,
                    userInfo: [
                        NSLocalizedDescriptionKey:
                            "This payment queue's test session is gone: use SKPaymentQueue.default()"
                    ])
            }
        } catch let error as SKError {
            throw error
        } catch {
            throw SKError(ledgerFailure: error)
        }
        follow(context)
        return context
    }

    /// Moves the observers to the store the queue follows now, if it changed.
    func followStore() {
        _ = try? store()
    }

    /// Registers the observers with `context` when it is not the store they are registered
    /// with: each receives its unfinished transactions, as at a launch, and hears the old store
    /// no more.
    private func follow(_ context: StoreContext) {
        let move = attachment.withLock {
            attachment -> (old: StoreContext?, left: [ObserverBridge], moved: [ObserverBridge])? in
            guard attachment.context !== context else { return nil }
            let (old, left) = (attachment.context, attachment.bridges)
            attachment.context = context
            attachment.bridges = left.compactMap { $0.observer.map { ObserverBridge(queue: self, observer: $0) } }
            return (old, left, attachment.bridges)
        }
        guard let move else { return }
        move.old?.detach(self)
        context.attach(self)
        if let old = move.old {
            old.operations.submit { for bridge in move.left { await old.queue.remove(bridge) } }
        }
        // Only the bridges moved here: one added since registers itself.
        for bridge in move.moved { register(bridge, with: context) }
    }

    /// Adds `bridge` to `context`'s ledger queue after the calls made before.
    private func register(_ bridge: ObserverBridge, with context: StoreContext) {
        context.operations.submit { [self] in
            do {
                try await context.queue.add(bridge)
            } catch {
                // Not registered: forget it, so that adding its observer again retries.
                attachment.withLock { $0.bridges.removeAll { $0 === bridge } }
                Self.report(error, doing: "adding an observer")
            }
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
        followStore()
        let added = attachment.withLock { attachment -> (ObserverBridge, StoreContext)? in
            attachment.bridges.removeAll { $0.observer == nil }
            guard !attachment.bridges.contains(where: { $0.observer === observer }) else { return nil }
            let bridge = ObserverBridge(queue: self, observer: observer)
            attachment.bridges.append(bridge)
            return attachment.context.map { (bridge, $0) }
        }
        if let (bridge, context) = added {
            register(bridge, with: context)
            // Purchases started on the App Store that waited for the app: a StoreKit 1 app takes
            // them once it has an observer, unless an `intents` sequence listens.
            if !context.purchaseIntents.isListened { offerStorePayments(context.purchaseIntents.takeForStoreKit1()) }
        }
    }

    /// Removes an observer (and any whose object is gone): it hears no more changes. The ledger's
    /// queue drops it after the calls made before this one have run.
    open func remove(_ observer: any SKPaymentTransactionObserver) {
        let (removed, context) = attachment.withLock { attachment in
            let gone = { (bridge: ObserverBridge) in bridge.observer == nil || bridge.observer === observer }
            defer { attachment.bridges.removeAll(where: gone) }
            return (attachment.bridges.filter(gone), attachment.context)
        }
        guard let context else { return }
        context.operations.submit {
            for bridge in removed { await context.queue.remove(bridge) }
        }
    }

    /// The observers added and still alive, in the order they were added.
    open var transactionObservers: [any SKPaymentTransactionObserver] {
        attachment.withLock { $0.bridges.compactMap(\.observer) }
    }

    // MARK: - Payments

    /// Adds a payment. Observers see it `purchasing`, then as the store processed it
    /// (purchased, failed, or deferred for Ask to Buy). A payment the store cannot take (an
    /// unknown product, a quantity outside 1...10, a promotional offer it refuses: unknown
    /// offer, bad signature, ineligible customer) fails at once with an `SKError`, with nothing
    /// stored.
    open func add(_ payment: SKPayment) {
        let payment = payment.copy() as! SKPayment
        let context: StoreContext
        do { context = try store() } catch { return refuse(payment, error) }
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

    /// Asks the observers, on the main actor, about each purchase the customer started on the App
    /// Store (`paymentQueue(_:shouldAddStorePayment:for:)`): a payment every observer answers
    /// `true` for is added to the queue; one an observer answers `false` for is left to the app,
    /// which may add it later, as StoreKit documents.
    func offerStorePayments(_ intents: [PurchaseIntent]) {
        guard !intents.isEmpty else { return }
        let targets = transactionObservers
        Task { @MainActor in
            for intent in intents {
                let payment = SKPayment(product: intent.storeKit1Product)
                let answers = targets.map {
                    $0.paymentQueue(self, shouldAddStorePayment: payment, for: intent.storeKit1Product)
                }
                if !answers.contains(false) { add(payment) }
            }
        }
    }

    /// Tells the observers a payment failed without reaching the ledger.
    private func refuse(_ payment: SKPayment, _ error: SKError) {
        let transaction = SKPaymentTransaction(refused: payment, error: error)
        let targets = attachment.withLock { $0.bridges.compactMap(\.observer) }
        Task { @MainActor in
            for observer in targets { observer.paymentQueue(self, updatedTransactions: [transaction]) }
        }
    }

    /// Finishes a transaction (purchased, failed or restored): it leaves the queue for good and
    /// observers get `removedTransactions`. Finishing twice does nothing more. StoreKit raises
    /// an exception for a transaction still purchasing or deferred; here the call is refused
    /// with a message on standard error and nothing changes.
    open func finishTransaction(_ transaction: SKPaymentTransaction) {
        guard let id = transaction.ledgerID, let context = try? store() else { return }
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
        let context: StoreContext
        do { context = try store() } catch {
            let targets = transactionObservers
            Task { @MainActor in
                for observer in targets {
                    observer.paymentQueue(self, restoreCompletedTransactionsFailedWithError: error)
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
        (try? store())?.messages.showDeferred()
    }

    /// Asks the delegate, on the main actor, about the consent requests it was not asked about:
    /// `true` shows the sheet now, `false` keeps it for `showPriceConsentIfNeeded()`. Without a
    /// delegate they wait for one.
    func offerPriceConsents() {
        guard let delegate, let context = try? store() else { return }
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
        (try? store())?.presentations.recordOfferCodeRedeemSheet()
    }

    /// The unfinished transactions, oldest first, as the ledger holds them now.
    open var transactions: [SKPaymentTransaction] {
        guard let context = try? store() else { return [] }
        return ((try? context.ledger.unfinishedTransactions()) ?? []).map(SKPaymentTransaction.init)
    }

    /// The store's storefront.
    open var storefront: SKStorefront? {
        guard let context = try? store(), let settings = try? StoreSettings(ledger: context.ledger) else { return nil }
        return SKStorefront(settings.storefront)
    }

    /// Returns once every call made on this queue before it has been processed and its
    /// observers called. Not in StoreKit: tests use it instead of waiting on expectations.
    public func waitUntilIdle() async {
        await (try? store())?.waitUntilIdle()
    }

    /// Tells the observers the storefront changed (a test session changed it).
    func storefrontDidChange() {
        let targets = attachment.withLock { $0.bridges.compactMap(\.observer) }
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
