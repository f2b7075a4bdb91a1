import Foundation
import StoreLedger
import Synchronization

/// A purchase the customer started outside the app (StoreKit 2's `PurchaseIntent`): a promoted
/// product chosen on the App Store, or a win-back offer redeemed there. The app completes it by
/// buying `product` (with `offer`, as `Product.PurchaseOption.winBackOffer(_:)`).
///
/// Here a test starts one with `SKTestSession.startPurchaseFromAppStore(productIdentifier:winBackOfferID:)`.
/// It reaches the `intents` sequences that listen; without one, a StoreKit 1 observer's
/// `paymentQueue(_:shouldAddStorePayment:for:)` (for a promoted product); without either, it
/// waits, and the first sequence made receives it (see docs/STOREKIT.md).
public struct PurchaseIntent: Equatable, Identifiable, Sendable {
    /// The product the customer chose.
    public let product: Product
    /// The win-back offer the customer redeemed, if any: add it to the purchase's options.
    public let offer: Product.SubscriptionOffer?

    /// The product's identifier.
    public var id: Product.ID { product.id }

    /// What StoreKit 1's delegate is asked about: the same product.
    let storeKit1Product: SKProduct

    init(_ product: StoreLedger.Product, offerID: String?, presentation: ProductPresentation) {
        let shown = Product(product, presentation: presentation)
        self.product = shown
        self.offer = offerID.flatMap { id in shown.subscription?.winBackOffers.first { $0.id == id } }
        self.storeKit1Product = SKProduct(product, presentation: presentation)
    }

    public static func == (a: PurchaseIntent, b: PurchaseIntent) -> Bool {
        a.product == b.product && a.offer == b.offer
    }

    /// Each purchase intent, as the customer starts it on the App Store. Start iterating as
    /// early as possible at launch: intents that arrived before wait for the first sequence.
    public static var intents: PurchaseIntents { PurchaseIntents() }

    /// An asynchronous sequence of purchase intents (`PurchaseIntent.PurchaseIntents`).
    public struct PurchaseIntents: AsyncSequence, Sendable {
        public typealias Element = PurchaseIntent
        public typealias Failure = Never

        public func makeAsyncIterator() -> AsyncStream<PurchaseIntent>.Iterator {
            guard let context = try? StoreContext.current() else {
                return AsyncStream<PurchaseIntent> { $0.finish() }.makeAsyncIterator()
            }
            return context.purchaseIntents.listen().makeAsyncIterator()
        }
    }
}

/// The purchases customers started on the App Store, on their way to the app: handed to the
/// `PurchaseIntent.intents` sequences listening, else kept (at most `waitingLimit`) for the
/// first one. A relaunch keeps those waiting, as the App Store keeps a purchase the app was not
/// running for.
package final class PurchaseIntentInbox: Sendable {
    /// How many intents may wait for the app: past that, starting another is refused.
    package static let waitingLimit = 100

    private let listeners = Broadcast<PurchaseIntent>()
    private let waiting = Mutex<[PurchaseIntent]>([])

    package init() {}

    /// A new `intents` sequence's stream: the intents waiting come first.
    func listen() -> AsyncStream<PurchaseIntent> {
        listeners.listen {
            waiting.withLock { waiting in
                defer { waiting = [] }
                return waiting
            }
        }
    }

    /// Whether an `intents` sequence listens.
    var isListened: Bool { !listeners.isEmpty }

    /// Hands `intent` to the sequences listening, else keeps it for the first one.
    /// - Throws: `PurchaseIntentError.tooManyWaiting` when `waitingLimit` intents wait already.
    func deliver(_ intent: PurchaseIntent) throws(PurchaseIntentError) {
        try listeners.send(intent) { () throws(PurchaseIntentError) -> Void in
            try waiting.withLock { (waiting) throws(PurchaseIntentError) -> Void in
                guard waiting.count < Self.waitingLimit else { throw .tooManyWaiting(limit: Self.waitingLimit) }
                waiting.append(intent)
            }
        }
    }

    /// Takes the waiting intents StoreKit 1 can take (those without a win-back offer, which only
    /// StoreKit 2 knows).
    func takeForStoreKit1() -> [PurchaseIntent] {
        waiting.withLock { waiting in
            let taken = waiting.filter { $0.offer == nil }
            waiting.removeAll { $0.offer == nil }
            return taken
        }
    }
}

/// Why a purchase could not be started from the App Store.
package enum PurchaseIntentError: DescribedError, Equatable, Sendable {
    /// `limit` purchase intents wait for the app already.
    case tooManyWaiting(limit: Int)
    /// The App Store does not show this product among the device's promoted products (hidden,
    /// or left out of the order set with `Product.PromotionInfo`).
    case notPromoted(productID: String)
    /// The product has no win-back offer with this identifier.
    case unknownWinBackOffer(productID: String, offerID: String)

    package var description: String {
        switch self {
        case .tooManyWaiting(let limit):
            "\(limit) purchases started on the App Store already wait for the app (does it listen to PurchaseIntent.intents?)"
        case .notPromoted(let productID):
            "the App Store does not show \(productID) among this device's promoted products (hidden, or not in the order set)"
        case .unknownWinBackOffer(let productID, let offerID):
            "\(productID) has no win-back offer \(offerID)"
        }
    }
}
