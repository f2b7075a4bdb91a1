import Foundation

/// The subscription offer a transaction was bought with (StoreKit 2's `Transaction.Offer`).
public struct TransactionOffer: Sendable, Hashable, Codable {
    /// Which kind of offer it is.
    public enum OfferType: String, Sendable, Codable {
        /// An introductory offer (once per subscription group), a promotional offer (redeemed by
        /// a payment), an offer code (redeemed with a code: its reference name is the id), or a
        /// win-back offer (redeemed by a churned customer: its offer identifier is the id).
        case introductory, promotional, code, winBack
    }

    /// How the offer's price is paid.
    public enum PaymentMode: String, Sendable, Codable {
        /// Free for the offer's periods; a reduced price each period; or one reduced price up front.
        case freeTrial, payAsYouGo, payUpFront

        /// The mode a StoreKit configuration file names `free`, `payAsYouGo` or `payUpFront`
        /// (`freeTrial` too, the name of StoreKit's own enum).
        public init?(configurationName name: String) {
            switch name {
            case "free", "freeTrial": self = .freeTrial
            case "payAsYouGo": self = .payAsYouGo
            case "payUpFront": self = .payUpFront
            default: return nil
            }
        }

        /// The name a StoreKit configuration file gives the mode: `free`, `payAsYouGo` or
        /// `payUpFront` (how a catalog stores and prints it).
        public var configurationName: String {
            switch self {
            case .freeTrial: "free"
            case .payAsYouGo: "payAsYouGo"
            case .payUpFront: "payUpFront"
            }
        }
    }

    /// Whether the offer is introductory, promotional, an offer code or a win-back offer.
    public var type: OfferType
    /// The promotional or win-back offer's identifier, or the offer code's reference name;
    /// `nil` for an introductory offer.
    public var id: String?
    /// How the offer is paid: free trial, pay as you go or pay up front.
    public var paymentMode: PaymentMode
    /// The length of one period of the offer.
    public var period: SubscriptionPeriod

    /// An offer of `type`; `id` is for every type but introductory offers.
    public init(type: OfferType, id: String? = nil, paymentMode: PaymentMode, period: SubscriptionPeriod) {
        self.type = type
        self.id = id
        self.paymentMode = paymentMode
        self.period = period
    }
}
