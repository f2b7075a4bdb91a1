import Foundation

/// An App Store message shown over the app (StoreKit's `Message`): the price consent request
/// of a subscription whose price increase waits for the subscriber's consent, the billing
/// problem of a subscription in billing retry, or the win-back offer a churned subscriber may
/// redeem.
///
/// The store makes one per such increase, billing issue or churned subscription and launch
/// (when it launches, or when a test control makes one:
/// `SKTestSession.requestPriceIncreaseConsentForTransaction(identifier:)`, a renewal failing in
/// billing retry, a subscription expiring). Unlike StoreKit, which shows a message nobody listens
/// for by itself, the store keeps it for the launch's first `messages` listener, so that a test
/// sees it; the app shows it with `display(in:)` (counted: `SKTestSession.priceConsentSheetCount`,
/// `billingIssueSheetCount`, `winBackOfferSheetCount`).
public struct Message: Hashable, Sendable {
    /// Why the App Store sends a message (StoreKit's `Message.Reason`). The raw values are
    /// OpenStoreKit's (Apple does not document StoreKit's).
    public struct Reason: RawRepresentable, Hashable, Sendable {
        public let rawValue: Int

        public init(rawValue: Int) { self.rawValue = rawValue }

        /// A message with no more specific reason.
        public static let generic = Reason(rawValue: 0)
        /// A subscription's price increase needs the subscriber's consent.
        public static let priceIncreaseConsent = Reason(rawValue: 1)
        /// A subscription's renewal failed on a billing issue: the subscriber may update their
        /// payment method.
        public static let billingIssue = Reason(rawValue: 2)
        /// A win-back offer is open to a churned subscriber.
        public static let winBackOffer = Reason(rawValue: 3)

        /// The reason in English.
        public var localizedDescription: String {
            switch self {
            case .priceIncreaseConsent: "Price increase consent"
            case .billingIssue: "Billing issue"
            case .winBackOffer: "Win-back offer"
            default: "Generic"
            }
        }
    }

    /// What a message is about, and so when it still applies.
    enum Subject: Hashable, Sendable {
        /// The price increase of `productID`'s group to `price`, asked for at `requestedAt`.
        case priceConsent(productID: String, price: Decimal, requestedAt: Date)
        /// The billing issue of `productID`'s group, whose period `period` did not renew.
        case billingIssue(productID: String, period: UInt64)
        /// The win-back offer `offerID` of `productID`, whose subscription (period `period`)
        /// churned: the best one the subscriber may redeem.
        case winBackOffer(productID: String, offerID: String, period: UInt64)

        /// What a newer subject of the same kind and product replaces.
        var key: String {
            switch self {
            case .priceConsent(let productID, _, _): "consent:" + productID
            case .billingIssue(let productID, _): "billing:" + productID
            case .winBackOffer(let productID, _, _): "winback:" + productID
            }
        }
    }

    /// Why the App Store sends it.
    public let reason: Reason
    let subject: Subject

    init(_ subject: Subject) {
        self.subject = subject
        switch subject {
        case .priceConsent: reason = .priceIncreaseConsent
        case .billingIssue: reason = .billingIssue
        case .winBackOffer: reason = .winBackOffer
        }
    }

    /// The messages of this launch, then each new one, as they are made (StoreKit's
    /// `Message.messages`); an empty sequence when the store cannot be opened.
    public static var messages: Messages { Messages() }

    /// Shows the message (its sheet is counted: `SKTestSession.priceConsentSheetCount`), while
    /// it applies: a consent request the subscriber answered since shows nothing.
    /// - Throws: `StoreKitError.systemError` when the store cannot be opened.
    @MainActor public func display(in scene: UIWindowScene) throws {
        let context: StoreContext
        do { context = try StoreContext.current() } catch { throw StoreKitError.systemError(error) }
        context.messages.display(self)
    }

    /// The asynchronous sequence of App Store messages (StoreKit's `Message.Messages`).
    public struct Messages: AsyncSequence, Sendable {
        public typealias Element = Message
        public typealias Failure = Never

        public func makeAsyncIterator() -> AsyncIterator {
            let stream = (try? StoreContext.current())?.messages.listen() ?? AsyncStream { $0.finish() }
            return AsyncIterator(base: stream.makeAsyncIterator())
        }

        /// Produces the messages (StoreKit's `Message.Messages.AsyncIterator`).
        public struct AsyncIterator: AsyncIteratorProtocol {
            var base: AsyncStream<Message>.AsyncIterator

            public mutating func next() async -> Message? {
                await base.next()
            }
        }
    }
}
