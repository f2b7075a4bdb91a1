import Synchronization

/// What the app asked the store to show: StoreKit's sheets (a review request, subscription
/// management, offer-code redemption, price consent, billing problem, win-back offer) have no UI on Linux, so each call is counted here for a
/// test to assert (`SKTestSession.reviewRequestCount` and its siblings). Kept per store across
/// relaunches, as simulated errors are, until the session is reset.
package final class Presentations: Sendable {
    /// The counts, by sheet.
    package struct Counts: Sendable, Equatable {
        /// Review requests (`SKStoreReviewController.requestReview`, `AppStore.requestReview(in:)`).
        package var reviewRequests = 0
        /// Subscription management sheets shown: the group each showed, `nil` for all groups.
        package var manageSubscriptions: [String?] = []
        /// Offer-code redemption sheets shown.
        package var offerCodeRedeemSheets = 0
        /// Price consent sheets shown (a `Message` displayed, or a StoreKit 1 delegate's yes).
        package var priceConsentSheets = 0
        /// Billing problem sheets shown (a `Message` displayed).
        package var billingIssueSheets = 0
        /// Win-back offer sheets shown (a `Message` displayed).
        package var winBackOfferSheets = 0
    }

    /// At most this many subscription management sheets are remembered; later ones are
    /// counted in the oldest's place (the list stays bounded whatever the app does).
    package static let manageSubscriptionsLimit = 1_000

    private let counts = Mutex(Counts())

    private let refundSheetClosing = Atomic<Bool>(false)

    /// How the user answers the refund request sheet (`Transaction.beginRefundRequest`) from
    /// now on: `false` (the default), asks for the refund; `true`, closes the sheet without
    /// asking.
    package var refundSheetIsClosed: Bool {
        get { refundSheetClosing.load(ordering: .relaxed) }
        set { refundSheetClosing.store(newValue, ordering: .relaxed) }
    }

    package init() {}

    package var current: Counts { counts.withLock { $0 } }

    func recordReviewRequest() {
        counts.withLock { $0.reviewRequests += 1 }
    }

    func recordManageSubscriptions(group: String?) {
        counts.withLock { counts in
            if counts.manageSubscriptions.count == Self.manageSubscriptionsLimit {
                counts.manageSubscriptions.removeFirst()
            }
            counts.manageSubscriptions.append(group)
        }
    }

    func recordOfferCodeRedeemSheet() {
        counts.withLock { $0.offerCodeRedeemSheets += 1 }
    }

    func recordPriceConsentSheet() {
        counts.withLock { $0.priceConsentSheets += 1 }
    }

    func recordBillingIssueSheet() {
        counts.withLock { $0.billingIssueSheets += 1 }
    }

    func recordWinBackOfferSheet() {
        counts.withLock { $0.winBackOfferSheets += 1 }
    }

    package func clear() {
        counts.withLock { $0 = Counts() }
        refundSheetIsClosed = false
    }
}
