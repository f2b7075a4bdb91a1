import Foundation

/// An App Store message shown over the app (StoreKit's `Message`): here, the price consent
/// request of a subscription whose price increase waits for the subscriber's consent.
///
/// The store makes one per such increase and launch (when it launches, or when a test asks for
/// consent: `SKTestSession.requestPriceIncreaseConsentForTransaction(identifier:)`). Unlike
/// StoreKit, which shows a message nobody listens for by itself, the store keeps it for the
/// launch's first `messages` listener, so that a test sees it; the app shows it with
/// `display(in:)` (counted: `SKTestSession.priceConsentSheetCount`). Billing-issue and win-back
/// messages are not made.
public struct Message: Hashable, Sendable {
    /// Why the App Store sends a message (StoreKit's `Message.Reason`).
    public struct Reason: Hashable, Sendable, CustomStringConvertible {
        public let description: String

        /// A message with no more specific reason.
        public static let generic = Reason(description: "generic")
        /// A subscription's renewal failed on a billing issue.
        public static let billingIssue = Reason(description: "billingIssue")
        /// A subscription's price increase needs the subscriber's consent.
        public static let priceIncreaseConsent = Reason(description: "priceIncreaseConsent")
        /// A win-back offer is open to a lapsed subscriber.
        public static let winBackOffer = Reason(description: "winBackOffer")
    }

    /// The price consent request a message shows.
    struct Consent: Hashable, Sendable {
        let productID: String
        let requestedAt: Date
    }

    /// Why the App Store sends it.
    public let reason: Reason
    let consent: Consent?

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
