import Foundation
import StoreLedger
import Synchronization

/// The App Store's in-app messages of one launch (StoreKit's `Message`, and StoreKit 1's price
/// consent through `SKPaymentQueueDelegate`). A price increase that waits for the
/// subscriber's consent, a subscription in billing retry, and a churned subscription with a
/// win-back offer for the subscriber, each make one message per launch: when the store
/// launches, or when a test control makes them later.
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
        /// What was messaged this launch, by `Message.Subject.key`. Each list keeps one message
        /// per key (a newer one replaces it), so all are bounded by the catalog.
        var made: [String: Message.Subject] = [:]
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

    /// Makes the messages not made yet this launch (none when the ledger cannot be read): of
    /// the consent requests, of the subscriptions in billing retry, and of the best win-back
    /// offer of each churned subscription. Hands them to the
    /// listeners, or keeps them for the first, and keeps the consent requests for the StoreKit 1
    /// delegate. Returns whether a consent request was made.
    @discardableResult
    func collect() -> Bool {
        let consents = ((try? ledger.pendingPriceIncreases()) ?? []).map { increase, _ in
            Message.Subject.priceConsent(
                productID: increase.productID, price: increase.price, requestedAt: increase.requestedAt)
        }
        // A billing problem is the payer's: a family member's subscription is not the customer's to fix.
        let issues = ((try? ledger.subscriptionsInBillingRetry()) ?? []).filter { !$0.isFamilyShared }.map { status in
            Message.Subject.billingIssue(productID: status.transaction.productID, period: status.transaction.id)
        }
        let winBacks = ((try? ledger.subscriptionsWithWinBackOffersOpen()) ?? []).compactMap { status in
            status.eligibleWinBackOfferIDs.first.map {
                Message.Subject.winBackOffer(
                    productID: status.transaction.productID, offerID: $0, period: status.transaction.id)
            }
        }
        // Under the state's lock, then the listeners' (as `listen`): a listener starting now
        // receives each message once.
        return state.withLock { state in
            var made: [Message] = []
            for subject in consents + issues + winBacks where state.made[subject.key] != subject {
                state.made[subject.key] = subject
                made.append(Message(subject))
            }
            let consentsMade = made.filter { $0.reason == .priceIncreaseConsent }
            Self.keepNewest(consentsMade, in: &state.unoffered)
            if listeners.isEmpty { Self.keepNewest(made, in: &state.untaken) }
            listeners.send(made)
            return !consentsMade.isEmpty
        }
    }

    /// Adds `messages` to `list`, each replacing the one of its key there, if any.
    private static func keepNewest(_ messages: [Message], in list: inout [Message]) {
        for message in messages {
            list.removeAll { $0.subject.key == message.subject.key }
            list.append(message)
        }
    }

    /// A `Message.messages` listener: the messages no listener received yet, then each new one.
    func listen() -> AsyncStream<Message> {
        state.withLock { state in
            defer { state.untaken = [] }
            return listeners.listen { state.untaken }
        }
    }

    /// Shows `message`'s sheet, counted, while what it is about still holds (a consent request
    /// answered since, a billing issue resolved, or a win-back offer no longer open, shows nothing, as StoreKit shows a message
    /// only while it applies).
    func display(_ message: Message) {
        switch message.subject {
        case .priceConsent(let productID, let price, let requestedAt):
            guard let increase = try? ledger.priceIncrease(forProduct: productID), increase.status == .pending,
                increase.price == price, increase.requestedAt == requestedAt
            else { return }
            presentations.recordPriceConsentSheet()
        case .billingIssue(let productID, let period):
            guard let status = try? ledger.subscriptionStatus(forProduct: productID), status.isInBillingRetry,
                status.transaction.id == period
            else { return }
            presentations.recordBillingIssueSheet()
        case .winBackOffer(let productID, let offerID, let period):
            guard let status = try? ledger.subscriptionStatus(forProduct: productID), status.transaction.id == period,
                status.eligibleWinBackOfferIDs.contains(offerID)
            else { return }
            presentations.recordWinBackOfferSheet()
        }
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
        state.withLock { Self.keepNewest([message], in: &$0.deferred) }
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
