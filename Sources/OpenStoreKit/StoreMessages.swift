import Foundation
import StoreLedger
import Synchronization

/// The App Store's in-app messages of one launch (StoreKit's `Message`, and StoreKit 1's price
/// consent through `SKPaymentQueueDelegate`). A price increase that waits for the
/// subscriber's consent makes one message per launch: when the store launches, or when a test
/// control asks for consent later.
///
/// StoreKit shows a message nobody listens for by itself. Here nothing is shown unasked, so
/// that a test sees every message: a message waits for the launch's first `Message.messages`
/// listener (later listeners receive the messages made after they started listening), and for
/// the StoreKit 1 queue's delegate, whichever the app has. Showing one is counted
/// (`SKTestSession.priceConsentSheetCount`); the subscriber's answer is the test's
/// (`consentToPriceIncreaseForTransaction`, `declinePriceIncreaseForTransaction`).
final class StoreMessages: Sendable {
    private let ledger: Ledger
    private let presentations: Presentations
    private let listeners = Broadcast<Message>()

    private struct State {
        /// The consent requests messaged this launch: when each group's was asked. One per
        /// group, so bounded by the catalog.
        var made: [String: Date] = [:]
        /// Messages no `Message.messages` listener received yet.
        var untaken: [Message] = []
        /// Messages the StoreKit 1 delegate was not asked about yet.
        var unoffered: [Message] = []
        /// Messages the StoreKit 1 delegate chose to show later (`showPriceConsentIfNeeded()`).
        var deferred: [Message] = []
    }

    private let state = Mutex(State())

    init(ledger: Ledger, presentations: Presentations) {
        self.ledger = ledger
        self.presentations = presentations
    }

    /// Makes the messages of the consent requests not messaged yet this launch (none when the
    /// ledger cannot be read), and hands them to the listeners, or keeps them for the first.
    /// Returns whether any was made.
    @discardableResult
    func collect() -> Bool {
        let pending = (try? ledger.pendingPriceIncreases()) ?? []
        // Under the state's lock, then the listeners' (as `listen`): a listener starting now
        // receives each message once.
        return state.withLock { state in
            var made: [Message] = []
            for (increase, latest) in pending {
                guard let group = latest.subscriptionGroupID, state.made[group] != increase.requestedAt else {
                    continue
                }
                state.made[group] = increase.requestedAt
                made.append(
                    Message(
                        reason: .priceIncreaseConsent,
                        consent: .init(productID: increase.productID, requestedAt: increase.requestedAt)))
            }
            state.unoffered += made
            if listeners.isEmpty { state.untaken += made }
            listeners.send(made)
            return !made.isEmpty
        }
    }

    /// A `Message.messages` listener: the messages no listener received yet, then each new one.
    func listen() -> AsyncStream<Message> {
        state.withLock { state in
            defer { state.untaken = [] }
            return listeners.listen { state.untaken }
        }
    }

    /// Shows `message`'s sheet, counted, while what it asks is still open (a consent request
    /// answered since shows nothing, as StoreKit shows a message only while it applies).
    func display(_ message: Message) {
        guard let consent = message.consent,
            let increase = try? ledger.priceIncrease(forProduct: consent.productID),
            increase.status == .pending, increase.requestedAt == consent.requestedAt
        else { return }
        presentations.recordPriceConsentSheet()
    }

    /// The messages the StoreKit 1 delegate was not asked about yet (taken: it is asked now).
    func takeUnoffered() -> [Message] {
        state.withLock { state in
            defer { state.unoffered = [] }
            return state.unoffered
        }
    }

    /// Keeps `message` for `showPriceConsentIfNeeded()`.
    func deferConsent(_ message: Message) {
        state.withLock { $0.deferred.append(message) }
    }

    /// Shows the deferred consent sheets that still apply (`SKPaymentQueue.showPriceConsentIfNeeded()`).
    func showDeferred() {
        let deferred = state.withLock { state in
            defer { state.deferred = [] }
            return state.deferred
        }
        for message in deferred { display(message) }
    }

    /// Ends the listeners' sequences: the app quit.
    func stop() {
        listeners.finishAll()
    }
}
