public import Foundation
import StoreLedger

/// A product the store sells, as StoreKit 2 shows it (`Product`): localized for the store's
/// locale, priced in its storefront's currency.
public struct Product: Identifiable, Sendable, Hashable {
    public typealias ID = String

    public let id: String
    public let type: ProductType
    public let displayName: String
    public let description: String
    /// The exact decimal price.
    public let price: Decimal
    /// The price as the storefront shows it (`$0.99`, `1,99 €`, `¥600`).
    public let displayPrice: String
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
            return try context.queue.catalog.products(for: identifiers).products.map { Product($0, presentation: presentation) }
        } catch {
            throw StoreKitError.systemError(error)
        }
    }

    /// The latest transaction of this product (`Transaction.latest(for:)`).
    public var latestTransaction: VerificationResult<Transaction>? {
        get async { await Transaction.latest(for: id) }
    }

    /// The transaction that entitles the user to this product now (`Transaction.currentEntitlement(for:)`).
    public var currentEntitlement: VerificationResult<Transaction>? {
        get async { await Transaction.currentEntitlement(for: id) }
    }

    /// The kind of product (`Product.ProductType`), with StoreKit's raw values.
    public struct ProductType: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let consumable = ProductType(rawValue: "Consumable")
        public static let nonConsumable = ProductType(rawValue: "Non-Consumable")
        public static let nonRenewable = ProductType(rawValue: "Non-Renewing Subscription")
        public static let autoRenewable = ProductType(rawValue: "Auto-Renewable Subscription")

        init(_ type: StoreLedger.ProductType) {
            self = switch type {
            case .consumable: .consumable
            case .nonConsumable: .nonConsumable
            case .nonRenewable: .nonRenewable
            case .autoRenewable: .autoRenewable
            }
        }
    }

    /// A subscription period (`Product.SubscriptionPeriod`): `value` × `unit`.
    public struct SubscriptionPeriod: Hashable, Sendable {
        public enum Unit: Hashable, Sendable {
            case day, week, month, year
        }

        public let unit: Unit
        public let value: Int

        init(_ period: StoreLedger.SubscriptionPeriod) {
            value = period.value
            unit = switch period.unit {
            case .day: .day
            case .week: .week
            case .month: .month
            case .year: .year
            }
        }
    }

    /// An introductory or promotional offer (`Product.SubscriptionOffer`).
    public struct SubscriptionOffer: Hashable, Sendable {
        public struct OfferType: RawRepresentable, Hashable, Sendable {
            public let rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }
            public static let introductory = OfferType(rawValue: "introductory")
            public static let promotional = OfferType(rawValue: "promotional")
            public static let winBack = OfferType(rawValue: "winBack")
        }

        public struct PaymentMode: RawRepresentable, Hashable, Sendable {
            public let rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }
            public static let freeTrial = PaymentMode(rawValue: "FreeTrial")
            public static let payAsYouGo = PaymentMode(rawValue: "PayAsYouGo")
            public static let payUpFront = PaymentMode(rawValue: "PayUpFront")
        }

        /// The offer's identifier; `nil` for an introductory offer.
        public let id: String?
        public let type: OfferType
        public let price: Decimal
        public let displayPrice: String
        /// The length of one period of the offer.
        public let period: SubscriptionPeriod
        public let periodCount: Int
        public let paymentMode: PaymentMode

        init(_ offer: StoreLedger.SubscriptionOffer, type: OfferType, presentation: ProductPresentation) {
            id = type == .introductory ? nil : offer.id
            self.type = type
            price = offer.price ?? 0
            displayPrice = presentation.displayPrice(offer.price ?? 0)
            period = SubscriptionPeriod(offer.period)
            periodCount = offer.periodCount
            paymentMode = switch offer.paymentMode {
            case "free": .freeTrial
            case "payUpFront": .payUpFront
            default: .payAsYouGo
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

            public init(keyID: String, nonce: UUID, timestamp: Int, signature: Data) {
                self.keyID = keyID
                self.nonce = nonce
                self.timestamp = timestamp
                self.signature = signature
            }
        }
    }
}
