public import Foundation

/// A raise of the price a subscriber renews at, waiting for the subscription group's next
/// renewal (StoreKit's price increase consent flow).
public struct PriceIncrease: Sendable, Hashable, Codable {
    /// Where the subscriber stands on it.
    public enum Status: String, Sendable, Hashable, Codable {
        /// The increase needs the subscriber's consent, and they have not answered.
        case pending
        /// The subscriber consented, or the increase needs no consent: the next renewal
        /// charges it.
        case agreed
        /// The subscriber declined (which turned auto-renew off).
        case declined
    }

    /// The product whose renewal it raises: the one the group renews to when it was asked.
    public var productID: String
    /// The new price of one period.
    public var price: Decimal
    /// Whether it needs the subscriber's consent (Apple asks for it above a threshold).
    public var needsConsent: Bool
    /// Where the subscriber stands on it.
    public var status: Status
    /// When the store asked, by the store's clock.
    public var requestedAt: Date
    /// When the subscriber answered; `nil` while pending (for an increase that needs no
    /// consent, when it was asked).
    public var answeredAt: Date?

    /// Every field (the storage engine reads them).
    package init(
        productID: String, price: Decimal, needsConsent: Bool, status: Status, requestedAt: Date, answeredAt: Date?
    ) {
        self.productID = productID
        self.price = price
        self.needsConsent = needsConsent
        self.status = status
        self.requestedAt = requestedAt
        self.answeredAt = answeredAt
    }

    enum CodingKeys: String, CodingKey {
        case productID, price, needsConsent, status, requestedAt, answeredAt
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(productID, forKey: .productID)
        // A string keeps the decimal exact for every JSON reader, as a product's price.
        try c.encode(DecimalText.format(price), forKey: .price)
        try c.encode(needsConsent, forKey: .needsConsent)
        try c.encode(status, forKey: .status)
        try c.encode(requestedAt, forKey: .requestedAt)
        try c.encode(answeredAt, forKey: .answeredAt)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let price = try DecimalText.decodePrice(in: c, forKey: .price) else {
            throw DecodingError.valueNotFound(
                String.self, .init(codingPath: c.codingPath + [CodingKeys.price], debugDescription: "no price"))
        }
        self.init(
            productID: try c.decode(String.self, forKey: .productID), price: price,
            needsConsent: try c.decode(Bool.self, forKey: .needsConsent),
            status: try c.decode(Status.self, forKey: .status),
            requestedAt: try c.decode(Date.self, forKey: .requestedAt),
            answeredAt: try c.decodeIfPresent(Date.self, forKey: .answeredAt))
    }

    /// Whether it ends the subscription at the end of its period instead of renewing it: the
    /// subscriber declined, or, with auto-renew still on, had not answered by then. (With
    /// auto-renew turned off while pending, the subscriber cancelled: the subscription expires
    /// for that.)
    public func endsSubscription(autoRenew: Bool) -> Bool {
        status == .declined || (status == .pending && autoRenew)
    }
}
