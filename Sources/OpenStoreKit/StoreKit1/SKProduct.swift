public import Foundation
import StoreLedger

/// A product the store sells, as a products request returns it (StoreKit 1's `SKProduct`):
/// localized for the store's locale, priced in its storefront's currency.
///
/// Sendable by hand: its properties are set by the initializer only; an `open` class cannot be
/// checked by the compiler.
open class SKProduct: NSObject, @unchecked Sendable {
    /// The unit of a subscription period (`SKProduct.PeriodUnit`).
    public enum PeriodUnit: UInt, Sendable {
        /// Periods counted in days.
        case day = 0
        /// Periods counted in weeks.
        case week = 1
        /// Periods counted in calendar months.
        case month = 2
        /// Periods counted in years.
        case year = 3
    }

    /// The product's identifier in the ledger's catalog (its App Store Connect product ID).
    open private(set) var productIdentifier: String
    /// The product's name in the store's locale; the catalog's reference name when it has no
    /// localization for that locale.
    open private(set) var localizedTitle: String
    /// The product's description in the store's locale; empty when the catalog has no localization
    /// for that locale.
    open private(set) var localizedDescription: String
    /// The exact decimal price (never a binary floating point number).
    open private(set) var price: NSDecimalNumber
    /// The shopper's language with the storefront's region and currency: format `price` with it.
    open private(set) var priceLocale: Locale
    /// Whether the purchaser's family can share the product, as the catalog says.
    open private(set) var isFamilyShareable: Bool
    /// The length of one renewal period of an auto-renewable subscription; `nil` for other products.
    open private(set) var subscriptionPeriod: SKProductSubscriptionPeriod?
    /// The subscription's introductory offer; `nil` when it has none or is not an auto-renewable
    /// subscription.
    open private(set) var introductoryPrice: SKProductDiscount?
    /// The subscription group of an auto-renewable subscription; `nil` for other products.
    open private(set) var subscriptionGroupIdentifier: String?
    /// The subscription's promotional offers.
    open private(set) var discounts: [SKProductDiscount]
    /// Hosted content is not simulated: always false, with no download lengths.
    open var isDownloadable: Bool { false }
    /// The sizes of the hosted content files: always empty, as hosted content is not simulated.
    open var downloadContentLengths: [NSNumber] { [] }
    /// The version of the hosted content: always empty, as hosted content is not simulated.
    open var downloadContentVersion: String { "" }
    /// The older name of `downloadContentVersion`: always empty, as hosted content is not simulated.
    open var contentVersion: String { "" }

    /// An empty product (no identifier, no title, a price of 0 in the current locale, no
    /// subscription): what a test double that subclasses `SKProduct` starts from, overriding
    /// what it needs, as with StoreKit's.
    public override init() {
        productIdentifier = ""
        localizedTitle = ""
        localizedDescription = ""
        price = .zero
        priceLocale = .current
        isFamilyShareable = false
        subscriptionPeriod = nil
        introductoryPrice = nil
        subscriptionGroupIdentifier = nil
        discounts = []
        super.init()
    }

    init(_ product: StoreLedger.Product, presentation: ProductPresentation) {
        let localization = presentation.localization(of: product)
        let priceLocale = presentation.priceLocale
        productIdentifier = product.id
        localizedTitle = localization.displayName
        localizedDescription = localization.description
        price = NSDecimalNumber(decimal: product.price)
        self.priceLocale = priceLocale
        isFamilyShareable = product.isFamilyShareable
        subscriptionPeriod = product.subscription.map { SKProductSubscriptionPeriod($0.period) }
        introductoryPrice = product.subscription?.introductoryOffer.map {
            SKProductDiscount($0, type: .introductory, priceLocale: priceLocale)
        }
        subscriptionGroupIdentifier = product.subscription?.groupID
        discounts =
            product.subscription?.promotionalOffers.map {
                SKProductDiscount($0, type: .subscription, priceLocale: priceLocale)
            } ?? []
        super.init()
    }
}

/// A subscription period (StoreKit 1's `SKProductSubscriptionPeriod`): `numberOfUnits` × `unit`.
///
/// Sendable by hand: its properties are set by the initializer only; an `open` class cannot be
/// checked by the compiler.
open class SKProductSubscriptionPeriod: NSObject, @unchecked Sendable {
    /// How many `unit`s the period lasts (3 for a three-month period).
    open private(set) var numberOfUnits: Int
    /// The unit the period is counted in.
    open private(set) var unit: SKProduct.PeriodUnit

    init(_ period: SubscriptionPeriod) {
        numberOfUnits = period.value
        unit =
            switch period.unit {
            case .day: .day
            case .week: .week
            case .month: .month
            case .year: .year
            }
        super.init()
    }
}

/// An introductory or promotional offer of a subscription (StoreKit 1's `SKProductDiscount`).
///
/// Sendable by hand: its properties are set by the initializer only; an `open` class cannot be
/// checked by the compiler.
open class SKProductDiscount: NSObject, @unchecked Sendable {
    /// How the customer pays for the offer (`SKProductDiscount.PaymentMode`), with StoreKit's raw values.
    public enum PaymentMode: UInt, Sendable {
        /// The discounted `price` is charged every period, for `numberOfPeriods` periods.
        case payAsYouGo = 0
        /// The discounted `price` is charged once, for the whole offer.
        case payUpFront = 1
        /// Nothing is charged while the offer lasts; `price` is 0.
        case freeTrial = 2
    }

    /// Which kind of offer it is (`SKProductDiscount.Type`), with StoreKit's raw values.
    public enum `Type`: UInt, Sendable {
        /// The group's introductory offer, for customers new to the group.
        case introductory = 0
        /// A promotional offer, redeemed with a signed `SKPaymentDiscount`.
        case subscription = 1
    }

    /// The offer's price in the storefront's currency (per period when paid as you go); 0 for a
    /// free trial.
    open private(set) var price: NSDecimalNumber
    /// The locale to format `price` with: the shopper's language with the storefront's region and
    /// currency.
    open private(set) var priceLocale: Locale
    /// The offer's identifier; `nil` for an introductory offer.
    open private(set) var identifier: String?
    /// The length of one period of the offer.
    open private(set) var subscriptionPeriod: SKProductSubscriptionPeriod
    /// How many `subscriptionPeriod`s the offer lasts.
    open private(set) var numberOfPeriods: Int
    /// How the offer is paid: the catalog's `free` and `payUpFront`; any other mode is pay as you go.
    open private(set) var paymentMode: PaymentMode
    /// Whether it is the introductory offer or a promotional one.
    open private(set) var type: `Type`

    init(_ offer: SubscriptionOffer, type: `Type`, priceLocale: Locale) {
        price = NSDecimalNumber(decimal: offer.price ?? 0)
        self.priceLocale = priceLocale
        identifier = type == .introductory ? nil : offer.id
        subscriptionPeriod = SKProductSubscriptionPeriod(offer.period)
        numberOfPeriods = offer.periodCount
        paymentMode =
            switch offer.paymentMode {
            case .freeTrial: .freeTrial
            case .payAsYouGo: .payAsYouGo
            case .payUpFront: .payUpFront
            }
        self.type = type
        super.init()
    }
}

/// The App Store storefront of the store (StoreKit 1's `SKStorefront`).
///
/// Sendable by hand: its properties are set by the initializer only; an `open` class cannot be
/// checked by the compiler.
open class SKStorefront: NSObject, @unchecked Sendable {
    /// ISO 3166-1 alpha-3 (`USA`, `FRA`).
    open private(set) var countryCode: String
    /// Apple's numeric identifier of the storefront (`143441` for the United States); the
    /// country code for the storefronts whose number is not known (`Storefront.identifier`).
    open private(set) var identifier: String

    init(_ storefront: StoreLedger.Storefront) {
        countryCode = storefront.countryCode
        identifier = storefront.identifier ?? storefront.countryCode
        super.init()
    }
}
