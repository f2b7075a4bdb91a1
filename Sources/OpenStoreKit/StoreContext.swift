import Foundation
package import StoreLedger
import Synchronization

/// The store StoreKit calls reach: one launched ledger, as StoreKit has one store per app.
///
/// Which one: the store of the innermost `SKTestSession.withTaskLocalStore` around the call,
/// else the store a test session bound to the process, else the process's default ledger:
/// the file named by the `OPENSTOREKIT_LEDGER` environment variable, else, in a test process
/// (one that made an `SKTestSession`, or a test bundle), a temporary store of its own removed
/// at exit (a call that escaped its test's store, from a detached task say, must not reach a
/// file shared across test runs), else `$XDG_DATA_HOME/OpenStoreKit/<process name>.ledger`
/// (`~/.local/share/...` without `XDG_DATA_HOME`), created when missing. Opening it is the
/// app's launch.
package final class StoreContext: Sendable {
    package let queue: PaymentQueue
    package var ledger: Ledger { queue.ledger }
    /// Runs StoreKit 1's fire-and-forget calls one after another, in the order they were made.
    let operations = OperationChain()
    /// What StoreKit 2's `Transaction.updates` sequences receive.
    let transactionUpdates: TransactionUpdates
    /// What StoreKit 2's `Product.SubscriptionInfo.Status.updates` sequences receive.
    let subscriptionStatusUpdates: SubscriptionStatusUpdates
    /// What the transactions this store hands out finish through.
    package let origin: Transaction.Origin
    /// The StoreKit 1 queues whose observers are registered with this store.
    private let skPaymentQueues = Mutex<[WeakQueue]>([])

    /// Sendable by hand: the queue is Sendable; a weak reference is a `var`, set once.
    private struct WeakQueue: @unchecked Sendable {
        weak var queue: SKPaymentQueue?
    }

    /// The storefront each time a test session of this process changes it.
    let storefrontChanges = Broadcast<Storefront>()

    /// What must live as long as this store (a test session's temporary directory).
    private let resources: (any AnyObject & Sendable)?

    /// The errors tests make StoreKit 2 calls of this store fail with.
    package var failures: SimulatedFailures { origin.failures }

    /// What the app asked this store to show.
    package let presentations: Presentations
    /// The purchases customers started on the App Store, on their way to the app.
    package let purchaseIntents: PurchaseIntentInbox
    /// The App Store's messages of this launch.
    let messages: StoreMessages
    /// The launch's own work (finishing the StoreKit 2 failures left unfinished), which
    /// `waitUntilIdle()` waits for.
    private let launchWork: Task<Void, Never>

    /// Launches on `ledger` (see `PaymentQueue`); `resources` live as long as the store;
    /// `failures`, `presentations` and `purchaseIntents` are kept from an earlier launch of the
    /// same store.
    package init(
        ledger: Ledger, resources: (any AnyObject & Sendable)? = nil, failures: SimulatedFailures = SimulatedFailures(),
        presentations: Presentations = Presentations(), purchaseIntents: PurchaseIntentInbox = PurchaseIntentInbox()
    ) throws {
        self.resources = resources
        self.presentations = presentations
        self.purchaseIntents = purchaseIntents
        let messages = StoreMessages(ledger: ledger, presentations: presentations)
        self.messages = messages
        let origin = Transaction.Origin(failures: failures)
        self.origin = origin
        let updates = TransactionUpdates(ledger: ledger, origin: origin)
        self.transactionUpdates = updates
        let statusUpdates = SubscriptionStatusUpdates(ledger: ledger, origin: origin)
        self.subscriptionStatusUpdates = statusUpdates
        let queue = try PaymentQueue(ledger: ledger, observers: [updates, statusUpdates])
        self.queue = queue
        origin.attach(queue)
        // A running app keeps its subscriptions: the store renews them when they fall due. It
        // hears what happens to its customer's purchases elsewhere (another device's purchase,
        // a refund made by the tool), as StoreKit 2's `Transaction.updates` does.
        Task {
            await queue.startRenewingAutomatically()
            await queue.startHearingOtherDevices()
        }
        launchWork = Task { await updates.finishAbandonedFailures(in: queue) }
        // The App Store's messages of the launch: the price consents that wait.
        messages.collect()
    }

    /// The delivery policy of a change a test control makes in this store: recorded in the
    /// change's commit, as StoreKit 2's `Transaction.updates` observes every launch of it
    /// (`init`) and is handed whatever the store changes.
    package var deliveryRecording: DeliveryRecording { .recorded }

    /// The app quits: the store stops renewing by itself (its calls in flight still end), and
    /// its subscription status sequences end.
    package func shutDown() {
        subscriptionStatusUpdates.stop()
        messages.stop()
        let queue = queue
        Task {
            await queue.stopRenewingAutomatically()
            await queue.stopHearingOtherDevices()
        }
    }

    /// Runs `body` on the queue after the StoreKit 1 calls made before it (a test control's
    /// delivery), without waiting.
    package func afterPendingCalls(_ body: @escaping @Sendable (PaymentQueue) async -> Void) {
        let queue = queue
        operations.submit { await body(queue) }
    }

    /// A test control changed the store: subscription statuses may have changed without any
    /// transaction changing (auto-renew turned off, a subscription expired), and a price
    /// increase may ask for consent.
    package func storeDidChange() {
        subscriptionStatusUpdates.wake()
        // A price consent asked for makes a message, for the listeners and the queue's delegate.
        if messages.collect() {
            for queue in attachedQueues { queue.offerPriceConsents() }
        }
    }

    /// Returns once the launch's own work and every call submitted before have run and their
    /// observers were called.
    package func waitUntilIdle() async {
        await launchWork.value
        await operations.waitUntilIdle()
        await queue.waitUntilNotified()
        // Observers run on the main actor: let the callbacks already queued there run first.
        await MainActor.run {}
    }

    /// Tells StoreKit 1 observers and `Storefront.updates` sequences that the storefront changed.
    package func storefrontDidChange() {
        for queue in attachedQueues { queue.storefrontDidChange() }
        if let settings = try? StoreSettings(ledger: ledger) {
            storefrontChanges.send([Storefront(settings.storefront)])
        }
    }

    /// The customer starts buying `productID` on the App Store: a promoted product, or with
    /// `winBackOfferID`, a win-back offer of it. The intent goes to the `PurchaseIntent.intents`
    /// sequences that listen; without one, to a StoreKit 1 queue with observers, which asks them
    /// `paymentQueue(_:shouldAddStorePayment:for:)` (a win-back offer is StoreKit 2's only);
    /// without either, it waits for the first sequence, or for a StoreKit 1 observer.
    /// - Throws: `UnknownProductError`; `PurchaseIntentError` for a product the App Store does
    ///   not show among the promoted ones, an offer the product lacks, or too many waiting.
    package func startPurchaseFromAppStore(productID: String, winBackOfferID: String?) throws {
        guard let product = try queue.catalog.products(for: [productID]).products.first else {
            throw UnknownProductError(productIdentifier: productID)
        }
        if let winBackOfferID {
            guard product.subscription?.winBackOffers.contains(where: { $0.offer.id == winBackOfferID }) == true else {
                throw PurchaseIntentError.unknownWinBackOffer(productID: productID, offerID: winBackOfferID)
            }
        } else {
            guard try ledger.showsPromotion(of: productID) else {
                throw PurchaseIntentError.notPromoted(productID: productID)
            }
        }
        let intent = PurchaseIntent(
            product, offerID: winBackOfferID, presentation: try ProductPresentation(ledger: ledger))
        if intent.offer == nil, !purchaseIntents.isListened,
            let storeKit1 = attachedQueues.first(where: { !$0.transactionObservers.isEmpty })
        {
            storeKit1.offerStorePayments([intent])
        } else {
            try purchaseIntents.deliver(intent)
        }
    }

    /// The StoreKit 1 queues whose observers hear this store.
    private var attachedQueues: [SKPaymentQueue] {
        skPaymentQueues.withLock { $0.compactMap(\.queue) }
    }

    /// `queue`'s observers hear this store from now on.
    func attach(_ queue: SKPaymentQueue) {
        skPaymentQueues.withLock { queues in
            queues.removeAll { $0.queue == nil || $0.queue === queue }
            queues.append(WeakQueue(queue: queue))
        }
    }

    /// `queue`'s observers moved to another store.
    func detach(_ queue: SKPaymentQueue) {
        skPaymentQueues.withLock { $0.removeAll { $0.queue == nil || $0.queue === queue } }
    }

    // MARK: - Which store

    /// The store of the current task (`SKTestSession.withTaskLocalStore`).
    @TaskLocal package static var taskLocal: StoreBinding?

    private static let processStore = Mutex<StoreBinding?>(nil)

    /// Makes `binding` the store of the whole process (a test session does this).
    package static func bindProcessStore(_ binding: StoreBinding) {
        processStore.withLock { $0 = binding }
        SKPaymentQueue.process.followStore()
    }

    /// Whether `binding` is the store of the whole process.
    static func isProcessStore(_ binding: StoreBinding) -> Bool {
        processStore.withLock { $0 === binding }
    }

    /// The store a StoreKit call made now reaches, launching the default ledger at first use.
    /// - Throws: `LedgerError` when the default ledger cannot be opened or launched.
    package static func current() throws -> StoreContext {
        if let taskLocal { return taskLocal.context }
        return try processContext()
    }

    /// The store of the whole process, launching the default ledger at first use.
    /// - Throws: `LedgerError` when the default ledger cannot be opened or launched.
    static func processContext() throws -> StoreContext {
        try processStore.withLock { bound in
            if let bound { return bound.context }
            let binding = StoreBinding(try openDefaultStore())
            bound = binding
            return binding.context
        }
    }

    /// Where a process's default store is.
    package enum DefaultStore: Equatable {
        /// A ledger file, created when missing.
        case file(String)
        /// A new ledger in a temporary directory, removed when the process exits.
        case temporary
    }

    /// Where the process's store is when no test session bound one (see the type's comment).
    package static func defaultStore(
        environment: [String: String] = ProcessInfo.processInfo.environment, inTestProcess: Bool = isTestProcess
    ) throws -> DefaultStore {
        if let path = environment["OPENSTOREKIT_LEDGER"], !path.isEmpty { return .file(path) }
        return inTestProcess ? .temporary : .file(try defaultLedgerPath(environment: environment))
    }

    /// Whether this process runs tests: it made an `SKTestSession`, or it is a test runner
    /// (`swift test` runs `<package>PackageTests.xctest` on Linux; `xctest` or
    /// `swiftpm-testing-helper` with XCTest's environment on a Mac).
    package static var isTestProcess: Bool {
        let process = ProcessInfo.processInfo
        return testSessionMade.load(ordering: .relaxed) || process.processName.hasSuffix(".xctest")
            || ["xctest", "swiftpm-testing-helper"].contains(process.processName)
            || process.environment["XCTestConfigurationFilePath"] != nil
            || process.environment["XCTestBundlePath"] != nil
    }

    private static let testSessionMade = Atomic<Bool>(false)

    /// Records that the process made a test session: it is a test process from now on.
    package static func noteTestSession() {
        testSessionMade.store(true, ordering: .relaxed)
    }

    private static func openDefaultStore() throws -> StoreContext {
        switch try defaultStore() {
        case .file(let path):
            return try StoreContext(ledger: Ledger.open(at: path, mode: .createIfMissing))
        case .temporary:
            let directory = try TemporaryDirectory.make(prefix: "OpenStoreKit-process-", removedAtExit: true)
            FileHandle.standardError.write(
                Data(
                    ("OpenStoreKit: a StoreKit call was made outside any test session's store (a detached task does not "
                        + "inherit withTaskLocalStore); it reaches a temporary store of this process at \(directory.path), "
                        + "not a ledger shared across runs\n").utf8))
            return try StoreContext(
                ledger: Ledger.open(at: directory.path + "/ledger.sqlite", mode: .createIfMissing), resources: directory
            )
        }
    }

    /// The ledger file of a process that is not a test process (see the type's comment).
    package static func defaultLedgerPath(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> String {
        if let path = environment["OPENSTOREKIT_LEDGER"], !path.isEmpty { return path }
        let dataHome =
            environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share"
        let directory = dataHome + "/OpenStoreKit"
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return directory + "/" + ProcessInfo.processInfo.processName + ".ledger"
    }
}

/// Where StoreKit calls go: one store at a time, replaced when the app "relaunches" (a test
/// session's `relaunch()`), so that bindings made before keep reaching the current launch.
package final class StoreBinding: Sendable {
    private let current: Mutex<StoreContext>
    private let ownQueue = Mutex<SKPaymentQueue?>(nil)

    package init(_ context: StoreContext) {
        current = Mutex(context)
    }

    package var context: StoreContext { current.withLock { $0 } }

    /// Replaces the store: calls made from now on reach `context`; the old one shuts down.
    package func replace(with context: StoreContext) {
        let old = current.withLock { current in
            defer { current = context }
            return current
        }
        old.shutDown()
        // The app's queues keep working: their observers move to the new launch.
        ownQueue.withLock { $0 }?.followStore()
        if StoreContext.isProcessStore(self) { SKPaymentQueue.process.followStore() }
    }

    /// The StoreKit 1 queue of calls made inside this binding's task-local scope.
    var skPaymentQueue: SKPaymentQueue {
        ownQueue.withLock { queue in
            if let queue { return queue }
            let made = SKPaymentQueue(following: self)
            queue = made
            return made
        }
    }
}

/// A directory removed when the last store using it goes (a test session's ledger).
package final class TemporaryDirectory: Sendable {
    package let path: String

    package init(path: String) {
        self.path = path
    }

    /// A new owner-only directory under the system's temporary directory; with
    /// `removedAtExit`, also removed when the process exits (a process-wide store is never
    /// released before).
    package static func make(prefix: String, removedAtExit: Bool = false) throws -> TemporaryDirectory {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(prefix + UUID().uuidString).path
        try FileManager.default.createDirectory(
            atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        if removedAtExit { ExitCleanup.remove(path) }
        return TemporaryDirectory(path: path)
    }

    deinit {
        ExitCleanup.forget(path)
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Directories removed when the process exits normally.
package enum ExitCleanup {
    /// The directories still there: one leaves the set when it is removed before the exit.
    private static let paths = Mutex<Set<String>>([])
    private static let registered = Atomic<Bool>(false)

    /// Whether `path` is removed at the exit, if it is still there then.
    package static func removes(_ path: String) -> Bool {
        paths.withLock { $0.contains(path) }
    }

    static func remove(_ path: String) {
        _ = paths.withLock { $0.insert(path) }
        if !registered.exchange(true, ordering: .relaxed) {
            atexit { ExitCleanup.removeAll() }
        }
    }

    static func forget(_ path: String) {
        _ = paths.withLock { $0.remove(path) }
    }

    private static func removeAll() {
        for path in paths.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: path) }
    }
}

/// Runs operations one at a time in the order they were submitted, without the submitter
/// waiting: StoreKit 1's `add(_:)`, `finishTransaction(_:)` and `restoreCompletedTransactions()`
/// return at once, yet a finish submitted after an add runs after it.
final class OperationChain: Sendable {
    private let tail = Mutex<Task<Void, Never>?>(nil)

    func submit(_ operation: @escaping @Sendable () async -> Void) {
        tail.withLock { tail in
            let previous = tail
            tail = Task {
                await previous?.value
                await operation()
            }
        }
    }

    /// Returns once every operation submitted before the call has run.
    func waitUntilIdle() async {
        await tail.withLock { $0 }?.value
    }
}
