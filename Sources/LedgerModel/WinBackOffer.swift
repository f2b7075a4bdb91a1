public import Foundation

/// A win-back offer of an auto-renewable subscription (a StoreKit configuration file's
/// `winbackOffers`): a free or discounted offer for a customer whose subscription churned
/// (it expired, and does not renew), and the rules that say which churned customers get it.
public struct WinBackOffer: Sendable, Hashable, Codable {
    /// Who may redeem the offer: the App Store Connect eligibility rules of a win-back offer.
    public struct Eligibility: Sendable, Hashable, Codable {
        /// The months of paid subscription the customer must have had in the group (free trial
        /// periods do not count). App Store Connect's "paid subscription duration".
        public var paidMonths: Int
        /// How many months since the subscription lapsed the customer may redeem it: from the
        /// lower bound to the upper one. App Store Connect's "time since last subscribed".
        public var monthsSinceLapse: ClosedRange<Int>
        /// The months that must pass after the customer redeemed a win-back offer in the group
        /// before another; `nil`: no wait. App Store Connect's "wait between offers".
        public var waitMonths: Int?

        /// The rules; by default any churned customer, for ten years.
        public init(paidMonths: Int = 0, monthsSinceLapse: ClosedRange<Int> = 0...120, waitMonths: Int? = nil) {
            self.paidMonths = paidMonths
            self.monthsSinceLapse = monthsSinceLapse
            self.waitMonths = waitMonths
        }

        /// The longest a rule may count: 120 months (App Store Connect's rules stay far below).
        public static let maximumMonths = 120
    }

    /// Which offers come first when a customer may redeem several (App Store Connect's
    /// `priority`).
    public enum Priority: String, Sendable, Hashable, Codable, CaseIterable {
        /// Offered before the normal ones.
        case high = "HIGH"
        /// Offered after the high-priority ones.
        case normal = "NORMAL"
    }

    /// The offer: its `id` is the offer identifier (Apple's `offerIdentifier`).
    public var offer: SubscriptionOffer
    /// Who may redeem it.
    public var eligibility: Eligibility
    /// Its place among the offers a customer may redeem.
    public var priority: Priority

    /// The offer identifier.
    public var offerID: String { offer.id ?? "" }

    /// A win-back offer `offerID`.
    public init(
        offerID: String, paymentMode: TransactionOffer.PaymentMode, period: SubscriptionPeriod, periodCount: Int,
        price: Decimal?, eligibility: Eligibility = Eligibility(), priority: Priority = .normal
    ) {
        offer = SubscriptionOffer(
            id: offerID, paymentMode: paymentMode, period: period, periodCount: periodCount, price: price)
        self.eligibility = eligibility
        self.priority = priority
    }
}
