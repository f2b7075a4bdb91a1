public import Foundation
import StoreLedger
import Synchronization

/// Called when a request ends (StoreKit 1's `SKRequestDelegate`); both methods are optional.
public protocol SKRequestDelegate: NSObjectProtocol {
    /// The request ended successfully; for a products request, right after its response.
    func requestDidFinish(_ request: SKRequest)
    /// The request failed: here an `SKError` saying the store's ledger could not be opened or read.
    func request(_ request: SKRequest, didFailWithError error: any Error)
}

extension SKRequestDelegate {
    /// Does nothing by default: a delegate that omits it does not hear the end.
    public func requestDidFinish(_ request: SKRequest) {}
    /// Does nothing by default: a delegate that omits it does not hear the failure.
    public func request(_ request: SKRequest, didFailWithError error: any Error) {}
}

/// Receives the answer of a products request (StoreKit 1's `SKProductsRequestDelegate`).
public protocol SKProductsRequestDelegate: SKRequestDelegate {
    /// Receives the answer on the main actor: the catalog's products among those asked for, and the
    /// identifiers the store does not sell.
    func productsRequest(_ request: SKProductsRequest, didReceive response: SKProductsResponse)
}

/// A request to the store (StoreKit 1's `SKRequest`): `start()` runs it, `cancel()` stops it;
/// its `delegate` hears the end on the main actor.
///
/// Sendable by hand: its state is behind a `Mutex`; an `open` class cannot be checked by the
/// compiler.
open class SKRequest: NSObject, @unchecked Sendable {
    private let state = Mutex<(started: Bool, cancelled: Bool)>((false, false))
    private let delegateReference = Mutex(WeakRequestDelegate())

    /// Held weakly, as StoreKit's. Sendable by hand: read and written only under
    /// `delegateReference`'s lock.
    private struct WeakRequestDelegate: @unchecked Sendable {
        weak var delegate: (any SKRequestDelegate)?
    }

    /// Hears the end of the request (`requestDidFinish(_:)`, `request(_:didFailWithError:)`), and,
    /// for a products request, its response when it is an `SKProductsRequestDelegate`; held
    /// weakly, as in StoreKit.
    open var delegate: (any SKRequestDelegate)? {
        get { delegateReference.withLock { $0.delegate } }
        set { delegateReference.withLock { $0.delegate = newValue } }
    }

    /// Starts the request; starting it again does nothing.
    open func start() {
        let first = state.withLock { state in
            defer { state.started = true }
            return !state.started
        }
        guard first else { return }
        let context = Result { try StoreContext.current() }
        Task { [self] in await run(in: context) }
    }

    /// Cancels the request: its delegate hears nothing more.
    open func cancel() {
        state.withLock { $0.cancelled = true }
    }

    var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// The request's work, from a task started by `start()`; subclasses override it.
    func run(in context: Result<StoreContext, any Error>) async {}
}

/// Asks the store for products by identifier (StoreKit 1's `SKProductsRequest`). The
/// delegate receives one `SKProductsResponse`, then `requestDidFinish(_:)`, or
/// `request(_:didFailWithError:)` when the store's ledger cannot be read.
///
/// Sendable by hand: its identifiers are constant and its delegate is set before `start()`, as in
/// StoreKit.
open class SKProductsRequest: SKRequest, @unchecked Sendable {
    private let productIdentifiers: Set<String>

    /// A request for the products with these identifiers; `start()` runs it.
    public init(productIdentifiers: Set<String>) {
        self.productIdentifiers = productIdentifiers
        super.init()
    }

    override func run(in context: Result<StoreContext, any Error>) async {
        let outcome = Result { () throws -> SKProductsResponse in
            let context = try context.get()
            let presentation = try ProductPresentation(ledger: context.ledger)
            let response = try context.queue.catalog.products(for: productIdentifiers.sorted())
            return SKProductsResponse(
                products: response.products.map { SKProduct($0, presentation: presentation) },
                invalidProductIdentifiers: response.invalidProductIdentifiers)
        }
        await MainActor.run { [self] in
            guard !isCancelled, let delegate else { return }
            switch outcome {
            case .success(let response):
                (delegate as? any SKProductsRequestDelegate)?.productsRequest(self, didReceive: response)
                delegate.requestDidFinish(self)
            case .failure(let error):
                delegate.request(self, didFailWithError: SKError(ledgerFailure: error))
            }
        }
    }
}

/// The store's answer to a products request (StoreKit 1's `SKProductsResponse`).
///
/// Sendable by hand: its properties are set by the initializer only; an `open` class cannot be
/// checked by the compiler.
open class SKProductsResponse: NSObject, @unchecked Sendable {
    /// The products the store sells, by identifier.
    open private(set) var products: [SKProduct]
    /// The identifiers asked for that the store does not sell.
    open private(set) var invalidProductIdentifiers: [String]

    init(products: [SKProduct], invalidProductIdentifiers: [String]) {
        self.products = products
        self.invalidProductIdentifiers = invalidProductIdentifiers
        super.init()
    }
}
