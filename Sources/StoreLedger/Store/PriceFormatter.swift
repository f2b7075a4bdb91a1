import Foundation

/// Formats prices as the App Store shows them: in the storefront's currency, with the shopper's
/// language, never with the machine's locale.
public enum PriceFormatter {
    /// Currencies the App Store prices in whole units.
    static let wholeNumberCurrencies: Set<String> = ["JPY", "KRW", "CNY", "TWD", "CLP", "VND", "IDR", "HUF", "ISK"]

    /// The locale a price is formatted with: the language of `locale`, the storefront's region
    /// and currency (StoreKit's `priceLocale`).
    public static func priceLocale(storefront: Storefront, locale: String) -> Locale {
        let language = Locale(identifier: locale).language.languageCode?.identifier ?? "en"
        return Locale(identifier: "\(language)_\(storefront.region)@currency=\(storefront.currencyCode)")
    }

    /// `price` formatted for the storefront: `1,99 €` (FRA, fr_FR), `¥600` (JPN), `$0.99` (USA).
    public static func string(for price: Decimal, storefront: Storefront, locale: String) -> String {
        let currency = storefront.currencyCode
        let style = Decimal.FormatStyle.Currency(code: currency, locale: priceLocale(storefront: storefront, locale: locale))
        if wholeNumberCurrencies.contains(currency) {
            return price.formatted(style.precision(.fractionLength(0)))
        }
        return price.formatted(style)
    }
}
