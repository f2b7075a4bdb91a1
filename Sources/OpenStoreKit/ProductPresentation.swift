import Foundation
import StoreLedger

/// How the store shows products to the shopper now: in the storefront's currency and the
/// shopper's language (the store's settings), as StoreKit 1 and 2 both present them.
struct ProductPresentation: Sendable {
    let settings: StoreSettings

    init(ledger: Ledger) throws {
        settings = try StoreSettings(ledger: ledger)
    }

    func localization(of product: StoreLedger.Product) -> ProductLocalization {
        product.localization(for: settings.locale)
            ?? ProductLocalization(locale: settings.locale, displayName: product.referenceName, description: "")
    }

    /// StoreKit's `priceLocale`: the shopper's language, the storefront's region and currency.
    var priceLocale: Locale {
        PriceFormatter.priceLocale(storefront: settings.storefront, locale: settings.locale)
    }

    func displayPrice(_ price: Decimal) -> String {
        PriceFormatter.string(for: price, storefront: settings.storefront, locale: settings.locale)
    }
}
