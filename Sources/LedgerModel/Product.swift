public import Foundation

/// A product the simulated store sells.
public struct Product: Sendable, Hashable, Identifiable {
    public var id: String
    /// The kind of in-app purchase.
    public var type: ProductType
    /// The name in App Store Connect; not shown to users.
    public var referenceName: String
    /// Display name and description, one per locale.
    public var localizations: [ProductLocalization]
    /// An exact decimal in the storefront's currency (never a binary floating point number).
    public var price: Decimal
    /// Whether Family Sharing shares a purchase with the members of the buyer's family.
    public var isFamilyShareable: Bool
    /// Set for auto-renewable subscriptions only.
    public var subscription: SubscriptionInfo?

    /// A product; `referenceName` defaults to `id`, and `subscription` is for auto-renewable
    /// subscriptions only.
    public init(
        id: String, type: ProductType, referenceName: String? = nil,
        localizations: [ProductLocalization] = [], price: Decimal, isFamilyShareable: Bool = false,
        subscription: SubscriptionInfo? = nil
    ) {
        self.id = id
        self.type = type
        self.referenceName = referenceName ?? id
        self.localizations = localizations
        self.price = price
        self.isFamilyShareable = isFamilyShareable
        self.subscription = subscription
    }

    /// The localization for `locale` (`fr_FR`), else the same language (`fr`), else the first.
    public func localization(for locale: String) -> ProductLocalization? {
        // The exact locale first, without the normalizing below (a catalog of 79,000 products
        // is listed in one locale: most lookups end here).
        if let exact = localizations.first(where: { $0.locale == locale }) { return exact }
        let normalized = locale.replacingOccurrences(of: "-", with: "_")
        let language = normalized.split(separator: "_").first.map(String.init) ?? normalized
        return localizations.first { $0.locale == normalized }
            ?? localizations.first { $0.locale == language || $0.locale.hasPrefix(language + "_") }
            ?? localizations.first
    }
}

/// A product's display name and description in one locale.
public struct ProductLocalization: Sendable, Hashable, Codable {
    /// A locale identifier such as `en_US` or `ja`.
    public var locale: String
    /// The product's name, as shown to users.
    public var displayName: String
    /// The product's description, as shown to users.
    public var description: String

    /// The display name and description for `locale`.
    public init(locale: String, displayName: String, description: String) {
        self.locale = locale
        self.displayName = displayName
        self.description = description
    }
}

/// What makes an auto-renewable subscription one.
public struct SubscriptionInfo: Sendable, Hashable, Codable {
    /// The identifier of the subscription group.
    public var groupID: String
    /// The group's name, as the StoreKit configuration file gives it.
    public var groupName: String
    /// The level inside the group: 1 is the highest service.
    public var level: Int
    /// How long one paid period lasts (`P1M`).
    public var period: SubscriptionPeriod
    /// The offer a subscriber new to the group gets, once; `nil` when there is none.
    public var introductoryOffer: SubscriptionOffer?
    /// The offers a payment can redeem (`PaymentDiscount`); empty when there are none.
    public var promotionalOffers: [SubscriptionOffer]
    /// The offer codes a customer can redeem; empty when there are none.
    public var codeOffers: [CodeOffer]
    /// The win-back offers a churned customer can redeem; empty when there are none.
    public var winBackOffers: [WinBackOffer]

    /// A subscription's details; no offers by default.
    public init(
        groupID: String, groupName: String, level: Int, period: SubscriptionPeriod,
        introductoryOffer: SubscriptionOffer? = nil, promotionalOffers: [SubscriptionOffer] = [],
        codeOffers: [CodeOffer] = [], winBackOffers: [WinBackOffer] = []
    ) {
        self.groupID = groupID
        self.groupName = groupName
        self.level = level
        self.period = period
        self.introductoryOffer = introductoryOffer
        self.promotionalOffers = promotionalOffers
        self.codeOffers = codeOffers
        self.winBackOffers = winBackOffers
    }

    private enum CodingKeys: String, CodingKey {
        case groupID, groupName, level, period, introductoryOffer, promotionalOffers, codeOffers, winBackOffers
    }

    /// Decodes a subscription; `codeOffers` and `winBackOffers` may be absent (JSON written
    /// before them).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            groupID: try c.decode(String.self, forKey: .groupID),
            groupName: try c.decode(String.self, forKey: .groupName),
            level: try c.decode(Int.self, forKey: .level),
            period: try c.decode(SubscriptionPeriod.self, forKey: .period),
            introductoryOffer: try c.decodeIfPresent(SubscriptionOffer.self, forKey: .introductoryOffer),
            promotionalOffers: try c.decode([SubscriptionOffer].self, forKey: .promotionalOffers),
            codeOffers: try c.decodeIfPresent([CodeOffer].self, forKey: .codeOffers) ?? [],
            winBackOffers: try c.decodeIfPresent([WinBackOffer].self, forKey: .winBackOffers) ?? [])
    }
}

/// An introductory or promotional offer of a subscription.
public struct SubscriptionOffer: Sendable, Hashable, Codable {
    /// The offer identifier (promotional offers only).
    public var id: String?
    /// How the offer is paid: a free trial, pay as you go or pay up front (`free`,
    /// `payAsYouGo` or `payUpFront` in a StoreKit configuration file, and when encoded).
    public var paymentMode: TransactionOffer.PaymentMode
    /// The length of one period of the offer.
    public var period: SubscriptionPeriod
    /// How many periods the offer lasts (1 to `maximumPeriodCount` when imported).
    public var periodCount: Int

    /// The most periods an offer lasts: App Store Connect offers at most 12 (a free trial or
    /// an up-front payment is 1 in Apple's own files).
    public static let maximumPeriodCount = 12

    /// `periodCount` as the store applies it: within 1...`maximumPeriodCount`, whatever an
    /// older ledger stored, so that no offer makes unbounded work.
    package var appliedPeriodCount: Int { min(max(1, periodCount), Self.maximumPeriodCount) }
    /// The offer's price; `nil` for a free trial.
    public var price: Decimal?

    /// An offer, with the fields of a StoreKit configuration file.
    public init(
        id: String?, paymentMode: TransactionOffer.PaymentMode, period: SubscriptionPeriod, periodCount: Int,
        price: Decimal?
    ) {
        self.id = id
        self.paymentMode = paymentMode
        self.period = period
        self.periodCount = periodCount
        self.price = price
    }

    private enum CodingKeys: String, CodingKey {
        case id, paymentMode, period, periodCount, price
    }

    /// Decodes an offer whose payment mode is named as in a StoreKit configuration file.
    /// - Throws: `DecodingError.dataCorrupted` for another name.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let mode = try container.decode(String.self, forKey: .paymentMode)
        guard let paymentMode = TransactionOffer.PaymentMode(configurationName: mode) else {
            throw DecodingError.dataCorruptedError(
                forKey: .paymentMode, in: container, debugDescription: "not a payment mode: \(mode)")
        }
        self.init(
            id: try container.decodeIfPresent(String.self, forKey: .id), paymentMode: paymentMode,
            period: try container.decode(SubscriptionPeriod.self, forKey: .period),
            periodCount: try container.decode(Int.self, forKey: .periodCount),
            price: try container.decodeIfPresent(Decimal.self, forKey: .price))
    }

    /// Encodes the payment mode by its configuration name (`free`, `payAsYouGo`, `payUpFront`).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(id, forKey: .id)
        try container.encode(paymentMode.configurationName, forKey: .paymentMode)
        try container.encode(period, forKey: .period)
        try container.encode(periodCount, forKey: .periodCount)
        try container.encodeIfPresent(price, forKey: .price)
    }
}

extension Product: Codable {
    enum CodingKeys: String, CodingKey {
        case id, type, referenceName, localizations, price, isFamilyShareable, subscription
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(type, forKey: .type)
        try c.encode(referenceName, forKey: .referenceName)
        try c.encode(localizations, forKey: .localizations)
        // A string keeps the decimal exact for every JSON reader.
        try c.encode(DecimalText.format(price), forKey: .price)
        try c.encode(isFamilyShareable, forKey: .isFamilyShareable)
        try c.encode(subscription, forKey: .subscription)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let price = try DecimalText.decodePrice(in: c, forKey: .price) else {
            throw DecodingError.keyNotFound(
                CodingKeys.price, .init(codingPath: c.codingPath, debugDescription: "a product has a price"))
        }
        self.init(
            id: try c.decode(String.self, forKey: .id),
            type: try c.decode(ProductType.self, forKey: .type),
            referenceName: try c.decode(String.self, forKey: .referenceName),
            localizations: try c.decode([ProductLocalization].self, forKey: .localizations),
            price: price,
            isFamilyShareable: try c.decode(Bool.self, forKey: .isFamilyShareable),
            subscription: try c.decodeIfPresent(SubscriptionInfo.self, forKey: .subscription))
    }
}

/// Exact decimal <-> text, independent of the machine's locale.
package enum DecimalText {
    private static let posix = Locale(identifier: "en_US_POSIX")

    /// Parses a plain non-negative decimal such as `0.99` or `600`; anything else is `nil`.
    package static func parse(_ text: String) -> Decimal? {
        if let short = parseShort(text) { return short }
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            text.filter({ $0 == "." }).count <= 1, text.first != ".", text.last != "."
        else { return nil }
        return Decimal(string: text, locale: posix)
    }

    /// A non-zero price of at most 18 digits, read without Foundation's parser (which was a
    /// sixth of listing a large catalog); the same value and representation as
    /// `Decimal(string:)`, which keeps no trailing zeros. `nil` for anything else, which the
    /// general path then decides.
    private static func parseShort(_ text: String) -> Decimal? {
        var significand: UInt64 = 0
        var digits = 0
        var fractionDigits = 0
        var sawPoint = false
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                guard digits < 18 else { return nil }
                significand = significand * 10 + UInt64(byte - UInt8(ascii: "0"))
                digits += 1
                if sawPoint { fractionDigits += 1 }
            case UInt8(ascii: ".") where !sawPoint && digits > 0:
                sawPoint = true
            default:
                return nil
            }
        }
        guard significand > 0, !sawPoint || fractionDigits > 0 else { return nil }
        return Decimal(sign: .plus, exponent: -fractionDigits, significand: Decimal(significand))
    }

    /// Whether `text` is a price the ledger keeps exactly: plain digits with at most one point,
    /// at most 18 digits after the integer part's leading zeros, at most 15 of them before the
    /// point. Such a price is exact as a `Decimal`, and its thousandths (the App Store's
    /// milliunits, in signed payloads) fit in 64 bits; more digits would be rounded or wrap.
    package static func isExactPrice(_ text: String) -> Bool {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, parts.count == 1 || !parts[1].isEmpty,
            text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: ".") })
        else { return false }
        let integerDigits = whole.drop { $0 == "0" }.count
        let fractionDigits = parts.count == 2 ? parts[1].count : 0
        return integerDigits <= 15 && integerDigits + fractionDigits <= 18
    }

    /// The price written as decimal text under `key` (as `format` writes it); `nil` when the key
    /// is absent or null.
    /// - Throws: `DecodingError.dataCorrupted` for text that is not a decimal price.
    package static func decodePrice<Key: CodingKey>(
        in container: KeyedDecodingContainer<Key>, forKey key: Key
    ) throws -> Decimal? {
        guard let text = try container.decodeIfPresent(String.self, forKey: key) else { return nil }
        guard let price = parse(text) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container, debugDescription: "not a decimal price: \(text)")
        }
        return price
    }

    /// The decimal as plain text with a `.` separator and no grouping (`0.99`), whatever the
    /// machine's locale.
    package static func format(_ value: Decimal) -> String {
        var value = value
        return NSDecimalString(&value, posix)
    }
}
