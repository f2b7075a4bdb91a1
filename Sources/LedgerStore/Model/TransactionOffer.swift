import Foundation

/// The subscription offer a transaction was bought with (StoreKit 2's `Transaction.Offer`).
public struct TransactionOffer: Sendable, Hashable, Codable {
    public enum OfferType: String, Sendable, Codable {
        case introductory, promotional
    }

    public enum PaymentMode: String, Sendable, Codable {
        case freeTrial, payAsYouGo, payUpFront

        /// The mode a StoreKit configuration file names `free`, `payAsYouGo` or `payUpFront`.
        public init?(configurationName name: String) {
            switch name {
            case "free", "freeTrial": self = .freeTrial
            case "payAsYouGo": self = .payAsYouGo
            case "payUpFront": self = .payUpFront
            default: return nil
            }
        }
    }

    public var type: OfferType
    /// The promotional offer's identifier; `nil` for an introductory offer.
    public var id: String?
    public var paymentMode: PaymentMode
    /// The length of one period of the offer.
    public var period: SubscriptionPeriod

    public init(type: OfferType, id: String? = nil, paymentMode: PaymentMode, period: SubscriptionPeriod) {
        self.type = type
        self.id = id
        self.paymentMode = paymentMode
        self.period = period
    }
}
