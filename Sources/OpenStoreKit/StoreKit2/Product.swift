public import Foundation
import StoreLedger

/// A product the store sells, as StoreKit 2 shows it (`Product`): localized for the store's
/// locale, priced in its storefront's currency.
public struct Product: Identifiable, Sendable, Hashable {
    public typealias ID = String

    public let id: String
    /// The kind of product (consumable, non-consumable or a kind of subscription), from the catalog.
    public let type: ProductType
    /// The product's name in the store's locale; the catalog's reference name when it has no
    /// localization for that locale.
    public let displayName: String
    /// The product's description in the store's locale; empty when the catalog has no localization
    /// for that locale.
    public let description: String
    /// The exact decimal price.
    public let price: Decimal
    /// The price as the storefront shows it (`$0.99`, `1,99 €`, `¥600`).
    public let displayPrice: String
    /// Whether the purchaser's family can share the product, as the catalog says.
    public let isFamilyShareable: Bool
    /// Set for auto-renewable subscriptions.
    public let subscription: SubscriptionInfo?
    /// Formats prices in the storefront's currency and the shopper's language.
    public let priceFormatStyle: Decimal.FormatStyle.Currency

    init(_ product: StoreLedger.Product, presentation: ProductPresentation) {
        let localization = presentation.localization(of: product)
        id = product.id
        type = ProductType(product.type)
        displayName = localization.displayName
        description = localization.description
        price = product.price
        displayPrice = presentation.displayPrice(product.price)
        isFamilyShareable = product.isFamilyShareable
        subscription = product.subscription.map { SubscriptionInfo($0, presentation: presentation) }
        priceFormatStyle = Decimal.FormatStyle.Currency(
            code: presentation.settings.storefront.currencyCode, locale: presentation.priceLocale)
    }

    /// The products the store sells among `identifiers`, in the order asked; identifiers the
    /// store does not sell are left out, as StoreKit leaves them out.
    /// - Throws: `StoreKitError.systemError` when the store's ledger cannot be read; the error
    ///   a test simulates for `.loadProducts`.
    public static func products<Identifiers: Collection>(
        for identifiers: Identifiers
    ) async throws -> [Product] where Identifiers.Element == String {
        let context: StoreContext
        do { context = try StoreContext.current() } catch { throw StoreKitError.systemError(error) }
        try context.failures.check(.loadProducts)
        do {
            let presentation = try ProductPresentation(ledger: context.ledger)
            return try context.queue.catalog.products(for: identifiers).products.map {
                Product($0, presentation: presentation)
            }
        } catch {
            throw StoreKitError.systemError(error)
        }
    }

    /// The latest transaction of this product (`Transaction.latest(for:)`).
    public var latestTransaction: VerificationResult<Transaction>? {
        get async { await Transaction.latest(for: id) }
    }

    /// The transactions that entitle the user to this product now
    /// (`Transaction.currentEntitlements(for:)`).
    public var currentEntitlements: Transaction.Transactions { Transaction.currentEntitlements(for: id) }

    /// The transaction that entitles the user to this product now (`Transaction.currentEntitlement(for:)`).
    public var currentEntitlement: VerificationResult<Transaction>? {
        get async { await Transaction.currentEntitlement(for: id) }
    }

    /// The kind of product (`Product.ProductType`), with StoreKit's raw values.
    public struct ProductType: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Used up once bought and can be bought again; finished ones leave `Transaction.all`.
        public static let consumable = ProductType(rawValue: "Consumable")
        /// Bought once and kept for good; it can be restored.
        public static let nonConsumable = ProductType(rawValue: "Non-Consumable")
        /// A subscription of fixed length that does not renew by itself.
        public static let nonRenewable = ProductType(rawValue: "Non-Renewing Subscription")
        /// A subscription that renews every period until cancelled; it has `subscription` info.
        public static let autoRenewable = ProductType(rawValue: "Auto-Renewable Subscription")

        init(_ type: StoreLedger.ProductType) {
            self =
                switch type {
                case .consumable: .consumable
                case .nonConsumable: .nonConsumable
                case .nonRenewable: .nonRenewable
                case .autoRenewable: .autoRenewable
                }
        }
    }

    /// A subscription period (`Product.SubscriptionPeriod`): `value` × `unit`.
    public struct SubscriptionPeriod: Hashable, Sendable {
        /// The unit a subscription period is counted in (`Product.SubscriptionPeriod.Unit`).
        public enum Unit: Hashable, Sendable {
            /// Periods counted in days, weeks, calendar months or years.
            case day, week, month, year
        }

        /// The unit the period is counted in.
        public let unit: Unit
        /// How many `unit`s the period lasts (1 for a monthly subscription).
        public let value: Int

        /// A period of one week.
        public static var weekly: SubscriptionPeriod { SubscriptionPeriod(value: 1, unit: .week) }
        /// A period of one month.
        public static var monthly: SubscriptionPeriod { SubscriptionPeriod(value: 1, unit: .month) }
        /// A period of one year.
        public static var yearly: SubscriptionPeriod { SubscriptionPeriod(value: 1, unit: .year) }
        /// A period of three days.
        public static var everyThreeDays: SubscriptionPeriod { SubscriptionPeriod(value: 3, unit: .day) }
        /// A period of two weeks.
        public static var everyTwoWeeks: SubscriptionPeriod { SubscriptionPeriod(value: 2, unit: .week) }
        /// A period of two months.
        public static var everyTwoMonths: SubscriptionPeriod { SubscriptionPeriod(value: 2, unit: .month) }
        /// A period of three months.
        public static var everyThreeMonths: SubscriptionPeriod { SubscriptionPeriod(value: 3, unit: .month) }
        /// A period of six months.
        public static var everySixMonths: SubscriptionPeriod { SubscriptionPeriod(value: 6, unit: .month) }

        private init(value: Int, unit: Unit) {
            self.value = value
            self.unit = unit
        }

        /// The period as the ledger counts it.
        var ledgerPeriod: StoreLedger.SubscriptionPeriod {
            let ledgerUnit: StoreLedger.SubscriptionPeriod.Unit =
                switch unit {
                case .day: .day
                case .week: .week
                case .month: .month
                case .year: .year
                }
            return StoreLedger.SubscriptionPeriod(value: value, unit: ledgerUnit)
        }

        init(_ period: StoreLedger.SubscriptionPeriod) {
            value = period.value
            unit =
                switch period.unit {
                case .day: .day
                case .week: .week
                case .month: .month
                case .year: .year
                }
        }
    }

    /// An introductory, promotional or win-back offer (`Product.SubscriptionOffer`).
    public struct SubscriptionOffer: Hashable, Sendable {
        /// Which kind of subscription offer it is (`Product.SubscriptionOffer.OfferType`).
        public struct OfferType: RawRepresentable, Hashable, Sendable {
            public let rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }
            /// The group's introductory offer, for customers who never subscribed to the group.
            public static let introductory = OfferType(rawValue: "introductory")
            /// A promotional offer, redeemed with a signature from the app's server.
            public static let promotional = OfferType(rawValue: "promotional")
            /// An offer to win back churned subscribers (`SubscriptionInfo.winBackOffers`).
            public static let winBack = OfferType(rawValue: "winBack")
        }

        /// How the customer pays for an offer (`Product.SubscriptionOffer.PaymentMode`).
        public struct PaymentMode: RawRepresentable, Hashable, Sendable {
            public let rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }
            /// Nothing is charged for the offer's periods.
            public static let freeTrial = PaymentMode(rawValue: "FreeTrial")
            /// The offer's `price` is charged every period, for `periodCount` periods.
            public static let payAsYouGo = PaymentMode(rawValue: "PayAsYouGo")
            /// The offer's `price` is charged once, for all its periods.
            public static let payUpFront = PaymentMode(rawValue: "PayUpFront")

            /// The payment mode in words, in English (the store has no localizations, as
            /// `Product.displayName` is the catalog's): "Free Trial", "Pay As You Go", "Pay Up
            /// Front", or the raw value of another.
            public var localizedDescription: String {
                switch self {
                case .freeTrial: "Free Trial"
                case .payAsYouGo: "Pay As You Go"
                case .payUpFront: "Pay Up Front"
                default: rawValue
                }
            }
        }

        /// The offer's identifier; `nil` for an introductory offer.
        public let id: String?
        /// Whether it is the introductory offer, a promotional one or a win-back one.
        public let type: OfferType
        /// The offer's price in the storefront's currency (per period when paid as you go); 0 for a free trial.
        public let price: Decimal
        /// `price` formatted as the storefront shows it.
        public let displayPrice: String
        /// The length of one period of the offer.
        public let period: SubscriptionPeriod
        /// How many `period`s the offer lasts.
        public let periodCount: Int
        /// How the offer is paid: the catalog's `free` and `payUpFront`; any other mode is pay as you go.
        public let paymentMode: PaymentMode

        init(_ offer: StoreLedger.SubscriptionOffer, type: OfferType, presentation: ProductPresentation) {
            id = type == .introductory ? nil : offer.id
            self.type = type
            price = offer.price ?? 0
            displayPrice = presentation.displayPrice(offer.price ?? 0)
            period = SubscriptionPeriod(offer.period)
            periodCount = offer.periodCount
            paymentMode =
                switch offer.paymentMode {
                case .freeTrial: .freeTrial
                case .payAsYouGo: .payAsYouGo
                case .payUpFront: .payUpFront
                }
        }

        /// The signature of a promotional offer, made by the app's server
        /// (`Product.SubscriptionOffer.Signature`).
        public struct Signature: Hashable, Sendable {
            /// The identifier of the subscription offers key that signed.
            public var keyID: String
            /// The one-time value the server signed (the store accepts it once).
            public var nonce: UUID
            /// When the server signed, in milliseconds since 1970.
            public var timestamp: Int
            /// The ECDSA signature, DER-encoded.
            public var signature: Data

            /// A signature made by the app's server, with the values it signed.
            public init(keyID: String, nonce: UUID, timestamp: Int, signature: Data) {
                self.keyID = keyID
                self.nonce = nonce
                self.timestamp = timestamp
                self.signature = signature
            }
        }
    }
}
