public import Foundation

/// An offer code of an auto-renewable subscription (a StoreKit configuration file's
/// `codeOffers`): the offer a customer gets by redeeming one of its codes, and who may.
public struct CodeOffer: Sendable, Hashable, Codable {
    /// Who may redeem a code, by where the customer stands with the subscription group.
    public enum Customer: String, Sendable, Hashable, Codable, CaseIterable {
        /// Never subscribed to the group.
        case new
        /// Subscribed before; the subscription lapsed.
        case expired
        /// Subscribed now (the offer applies from the next renewal).
        case existing
    }

    /// The offer: its `id` is the code's reference name, what a transaction records as its
    /// offer's identifier (Apple's `offerIdentifier` for an offer code).
    public var offer: SubscriptionOffer
    /// Who may redeem it.
    public var eligibility: Set<Customer>

    /// The code's reference name.
    public var referenceName: String { offer.id ?? "" }

    private enum CodingKeys: String, CodingKey { case offer, eligibility }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        offer = try c.decode(SubscriptionOffer.self, forKey: .offer)
        eligibility = Set(try c.decode([Customer].self, forKey: .eligibility))
    }

    /// Encodes `eligibility` in `Customer.allCases` order, so that the same offer always reads
    /// the same.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(offer, forKey: .offer)
        try c.encode(Customer.allCases.filter(eligibility.contains), forKey: .eligibility)
    }

    /// An offer code named `referenceName`.
    public init(
        referenceName: String, paymentMode: TransactionOffer.PaymentMode, period: SubscriptionPeriod, periodCount: Int,
        price: Decimal?, eligibility: Set<Customer>
    ) {
        offer = SubscriptionOffer(
            id: referenceName, paymentMode: paymentMode, period: period, periodCount: periodCount, price: price)
        self.eligibility = eligibility
    }
}
