public import Foundation
import Synchronization

/// Formats prices as the App Store shows them: in the storefront's currency, with the shopper's
/// language, never with the machine's locale, and never rounding a price away.
public enum PriceFormatter {
    /// Currencies the App Store prices in whole units: a whole price shows no decimals there
    /// (`¥6`, `NT$30`) even when the currency has a minor unit. A price with decimals still
    /// shows them (`¥1.99`).
    static let wholeUnitCurrencies: Set<String> = ["JPY", "KRW", "CNY", "TWD", "CLP", "VND", "IDR", "HUF", "ISK"]

    /// The locale a price is formatted with: the language of `locale`, the storefront's region
    /// and currency (StoreKit's `priceLocale`).
    public static func priceLocale(storefront: Storefront, locale: String) -> Locale {
        let language = Locale(identifier: locale).language.languageCode?.identifier ?? "en"
        return Locale(identifier: "\(language)_\(storefront.region)@currency=\(storefront.currencyCode)")
    }

    /// `price` formatted for the storefront: `1,99 €` (FRA, fr_FR), `¥600` (JPN), `$0.99` (USA).
    /// It shows the currency's own number of decimals (Foundation's locale data), or more when
    /// the price has more (`¥0.49` in yen, which has none), so that a price is never rounded.
    public static func string(for price: Decimal, storefront: Storefront, locale: String) -> String {
        let key = FormattedPrice(price: price, storefront: storefront.countryCode, locale: locale)
        if let known = formatted.withLock({ $0[key] }) { return known }
        let text = format(price, storefront: storefront, locale: locale)
        formatted.withLock { cache in
            if cache.count >= cacheLimit { cache.removeAll(keepingCapacity: true) }
            cache[key] = text
        }
        return text
    }

    /// Formatting with Foundation's ICU styles costs tens of microseconds a price, and a
    /// catalog has few distinct prices: `products list` of 79,000 products formatted the same
    /// price tiers over and over. The memo is bounded (emptied when full).
    private struct FormattedPrice: Hashable {
        let price: Decimal
        let storefront: String
        let locale: String
    }

    private static let cacheLimit = 4_096
    private static let formatted = Mutex<[FormattedPrice: String]>([:])
    private static let minorUnits = Mutex<[String: Int]>([:])

    private static func format(_ price: Decimal, storefront: Storefront, locale: String) -> String {
        let currency = storefront.currencyCode
        let style = Decimal.FormatStyle.Currency(
            code: currency, locale: priceLocale(storefront: storefront, locale: locale))
        let decimals = decimalPlaces(of: price)
        let shown =
            decimals == 0 && wholeUnitCurrencies.contains(currency)
            ? 0 : max(decimals, minorUnitDigits(of: currency))
        return price.formatted(style.precision(.fractionLength(shown)))
    }

    /// Why `price` cannot be shown exactly in `currency`, or `nil` when it can: it has more
    /// decimals than the currency's minor unit (`0.49` in JPY, `1.999` in USD).
    public static func inexactness(of price: Decimal, in currency: String) -> String? {
        let digits = minorUnitDigits(of: currency)
        let decimals = decimalPlaces(of: price)
        guard decimals > digits else { return nil }
        let unit = digits == 0 ? "no minor unit" : "\(digits) decimal\(digits == 1 ? "" : "s")"
        return
            "price \(price) has \(decimals) decimal\(decimals == 1 ? "" : "s"), but \(currency) has \(unit): no real price can be \(price) \(currency)"
    }

    /// The digits of the currency's minor unit, from Foundation's locale data (2 for USD and
    /// CNY, 0 for JPY, 3 for KWD): the decimals of 1 formatted in that currency.
    public static func minorUnitDigits(of currency: String) -> Int {
        if let known = minorUnits.withLock({ $0[currency] }) { return known }
        let digits = computeMinorUnitDigits(of: currency)
        minorUnits.withLock { cache in
            if cache.count >= cacheLimit { cache.removeAll(keepingCapacity: true) }
            cache[currency] = digits
        }
        return digits
    }

    private static func computeMinorUnitDigits(of currency: String) -> Int {
        let one = Decimal(1).formatted(
            Decimal.FormatStyle.Currency(code: currency, locale: Locale(identifier: "en_US_POSIX")))
        guard let separator = one.lastIndex(of: ".") else { return 0 }
        return one[one.index(after: separator)...].prefix(while: \.isNumber).count
    }

    /// How many decimals `price` has once trailing zeros are dropped (`1.50` has 1).
    static func decimalPlaces(of price: Decimal) -> Int {
        var value = price
        var places = 0
        while places < 38 {
            var whole = Decimal()
            NSDecimalRound(&whole, &value, 0, .plain)
            if whole == value { return places }
            value *= 10
            places += 1
        }
        return places
    }
}
