public import Foundation
import StoreLedger

/// A product the store sells, as a products request returns it (StoreKit 1's `SKProduct`):
/// localized for the store's locale, priced in its storefront's currency.
open class SKProduct: NSObject, @unchecked Sendable {
    /// The unit of a subscription period (`SKProduct.PeriodUnit`).
    public enum PeriodUnit: UInt, Sendable {
        case day = 0
        case week = 1
        case month = 2
        case year = 3
    }

    open private(set) var productIdentifier: String
    open private(set) var localizedTitle: String
    open private(set) var localizedDescription: String
    /// The exact decimal price (never a binary floating point number).
    open private(set) var price: NSDecimalNumber
    /// The shopper's language with the storefront's region and currency: format `price` with it.
    open private(set) var priceLocale: Locale
    open private(set) var isFamilyShareable: Bool
    open private(set) var subscriptionPeriod: SKProductSubscriptionPeriod?
    open private(set) var introductoryPrice: SKProductDiscount?
    open private(set) var subscriptionGroupIdentifier: String?
    /// The subscription's promotional offers.
    open private(set) var discounts: [SKProductDiscount]
    /// Hosted content is not simulated: always false, with no download lengths.
    open var isDownloadable: Bool { false }
    open var downloadContentLengths: [NSNumber] { [] }
    open var downloadContentVersion: String { "" }
    open var contentVersion: String { "" }

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
        discounts = product.subscription?.promotionalOffers.map {
            SKProductDiscount($0, type: .subscription, priceLocale: priceLocale)
        } ?? []
        super.init()
    }
}

/// A subscription period (StoreKit 1's `SKProductSubscriptionPeriod`): `numberOfUnits` × `unit`.
open class SKProductSubscriptionPeriod: NSObject, @unchecked Sendable {
    open private(set) var numberOfUnits: Int
    open private(set) var unit: SKProduct.PeriodUnit

    init(_ period: SubscriptionPeriod) {
        numberOfUnits = period.value
        unit = switch period.unit {
        case .day: .day
        case .week: .week
        case .month: .month
        case .year: .year
        }
        super.init()
    }
}

/// An introductory or promotional offer of a subscription (StoreKit 1's `SKProductDiscount`).
open class SKProductDiscount: NSObject, @unchecked Sendable {
    public enum PaymentMode: UInt, Sendable {
        case payAsYouGo = 0
        case payUpFront = 1
        case freeTrial = 2
    }

    public enum `Type`: UInt, Sendable {
        case introductory = 0
        case subscription = 1
    }

    open private(set) var price: NSDecimalNumber
    open private(set) var priceLocale: Locale
    /// The offer's identifier; `nil` for an introductory offer.
    open private(set) var identifier: String?
    /// The length of one period of the offer.
    open private(set) var subscriptionPeriod: SKProductSubscriptionPeriod
    open private(set) var numberOfPeriods: Int
    open private(set) var paymentMode: PaymentMode
    open private(set) var type: `Type`

    init(_ offer: SubscriptionOffer, type: `Type`, priceLocale: Locale) {
        price = NSDecimalNumber(decimal: offer.price ?? 0)
        self.priceLocale = priceLocale
        identifier = type == .introductory ? nil : offer.id
        subscriptionPeriod = SKProductSubscriptionPeriod(offer.period)
        numberOfPeriods = offer.periodCount
        paymentMode = switch offer.paymentMode {
        case "free": .freeTrial
        case "payUpFront": .payUpFront
        default: .payAsYouGo
        }
        self.type = type
        super.init()
    }
}

/// The App Store storefront of the store (StoreKit 1's `SKStorefront`).
open class SKStorefront: NSObject, @unchecked Sendable {
    /// ISO 3166-1 alpha-3 (`USA`, `FRA`).
    open private(set) var countryCode: String
    /// Apple's identifier of the storefront. The ledger knows storefronts by their country code
    /// only, so this is the country code too (Apple's is a number such as `143441`).
    open private(set) var identifier: String

    init(_ storefront: StoreLedger.Storefront) {
        countryCode = storefront.countryCode
        identifier = storefront.countryCode
        super.init()
    }
}
