import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import Testing

@Suite struct PriceAndStorefrontTests {
    @Test func pricesAreNeverRoundedAway() throws {
        let china = try #require(Storefront(countryCode: "CHN"))
        let taiwan = try #require(Storefront(countryCode: "TWN"))
        let japan = try #require(Storefront(countryCode: "JPN"))
        #expect(
            PriceFormatter.string(for: Decimal(string: "1.99")!, storefront: china, locale: "zh_CN").hasSuffix("1.99"))
        #expect(
            PriceFormatter.string(for: Decimal(string: "1.99")!, storefront: taiwan, locale: "zh_TW").hasSuffix("1.99"))
        #expect(
            PriceFormatter.string(for: Decimal(string: "0.49")!, storefront: japan, locale: "ja_JP").hasSuffix("0.49"))
        #expect(PriceFormatter.string(for: 600, storefront: japan, locale: "ja_JP").hasSuffix("600"))
        #expect(
            PriceFormatter.string(for: Decimal(string: "1.999")!, storefront: .unitedStates, locale: "en_US")
                == "$1.999")
        #expect(
            PriceFormatter.string(for: Decimal(string: "1.5")!, storefront: .unitedStates, locale: "en_US") == "$1.50")
    }

    @Test func currencyDigitsComeFromLocaleData() {
        #expect(PriceFormatter.minorUnitDigits(of: "USD") == 2)
        #expect(PriceFormatter.minorUnitDigits(of: "CNY") == 2)
        #expect(PriceFormatter.minorUnitDigits(of: "JPY") == 0)
        #expect(PriceFormatter.minorUnitDigits(of: "KWD") == 3)
        #expect(
            PriceFormatter.inexactness(of: Decimal(string: "0.49")!, in: "JPY")?.contains("JPY has no minor unit")
                == true)
        #expect(PriceFormatter.inexactness(of: Decimal(string: "1.99")!, in: "CNY") == nil)
        #expect(PriceFormatter.inexactness(of: 600, in: "JPY") == nil)
    }

    /// Seeded: random prices with 0 to 4 decimals in every storefront's currency show every
    /// digit they have, and are reported inexact exactly when they have more than the currency.
    @Test(arguments: 0..<4)
    func randomPricesShowEveryDigit(seed: UInt64) throws {
        var random = SplitMix(seed: seed)
        for storefront in Storefront.all {
            let decimals = Int(random.next() % 5)
            let units = Decimal(Int(random.next() % 100_000))
            var scale = Decimal(1)
            for _ in 0..<decimals { scale *= 10 }
            let price = units / scale
            let shown = PriceFormatter.string(for: price, storefront: storefront, locale: "en_US")
            let digits = shown.filter(\.isNumber)
            let expected = "\(price)".filter(\.isNumber).drop { $0 == "0" }
            #expect(digits.contains(String(expected)), "\(storefront) \(price) shown as \(shown)")
            let inexact = PriceFormatter.inexactness(of: price, in: storefront.currencyCode) != nil
            let text = "\(price)"
            let places = text.split(separator: ".").dropFirst().first?.count ?? 0
            #expect(
                inexact == (places > PriceFormatter.minorUnitDigits(of: storefront.currencyCode)),
                "\(storefront) \(price)")
        }
    }

    @Test func everyAppStoreStorefrontIsKnown() {
        #expect(Storefront.all.count == 175)
        for code in ["EST", "LVA", "LTU", "CYP", "MLT", "KWT", "MAR", "SRB", "XKS", "USA", "FRA", "JPN"] {
            #expect(Storefront(countryCode: code) != nil, "\(code)")
        }
        for code in ["XYZ", "", "US", "USAA", "PRK"] { #expect(Storefront(countryCode: code) == nil, "\(code)") }
        let currencies = Set(Locale.Currency.isoCurrencies.map(\.identifier))
        let regions = Set(Locale.Region.isoRegions.map(\.identifier))
        for storefront in Storefront.all {
            #expect(currencies.contains(storefront.currencyCode), "\(storefront): \(storefront.currencyCode)")
            #expect(
                regions.contains(storefront.region) || storefront.region == "XK", "\(storefront): \(storefront.region)")
            #expect(storefront.defaultLocale.hasSuffix("_" + storefront.region))
        }
        #expect(Storefront(countryCode: "EST")?.currencyCode == "EUR")
        #expect(Storefront(countryCode: "EST")?.defaultLocale == "et_EE")
    }

    @Test func storefrontsCarryApplesNumbersWhereKnownEachOnce() {
        let numbers = Storefront.all.compactMap(\.identifier)
        #expect(numbers.count == 131 && Set(numbers).count == numbers.count)
        #expect(numbers.allSatisfy { $0.count == 6 && $0.hasPrefix("143") && Int($0) != nil })
        #expect(Storefront.unitedStates.identifier == "143441")
        #expect(Storefront(countryCode: "GBR")?.identifier == "143444")
        #expect(Storefront(countryCode: "JPN")?.identifier == "143462")
        #expect(Storefront(countryCode: "XKS")?.identifier == nil)
    }

    @Test(
        .enabled(
            if: ISOCodes.isInstalled,
            "Debian's iso-codes is not installed (apt-get install iso-codes; .ci/run installs it)"))
    func theStorefrontTableMatchesItsSources() throws {
        #expect(try checkGeneratedFile(tool: "generate-storefronts") == 0, "run tools/generate-storefronts")
    }

    @Test func importingForAnotherStorefrontOrAnInexactPriceWarns() async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try Ledger.open(at: directory + "/l.sqlite", mode: .createIfMissing)
            let japan = Repository.fixture("v3.0-japan.storekit")
            let first = try ProductCatalog(ledger: ledger).importConfigurations(at: [japan])
            #expect(first.warnings.isEmpty, "\(first.warnings)")
            let france = Repository.fixture("v6.0-france.storekit")
            let second = try ProductCatalog(ledger: ledger).importConfigurations(at: [france])
            #expect(
                second.warnings.contains {
                    $0.contains(france) && $0.contains("FRA") && $0.contains("JPN") && $0.contains("JPY")
                },
                "\(second.warnings)")
            let cheap = directory + "/Cheap.storekit"
            try write(
                """
                {"products": [{"productID": "cheap", "type": "Consumable", "displayPrice": "0.49"}],
                 "settings": {"_storefront": "JPN"}, "version": {"major": 3, "minor": 0}}
                """, to: cheap)
            let third = try ProductCatalog(ledger: ledger).importConfigurations(at: [cheap])
            #expect(
                third.warnings.contains { $0.contains("cheap") && $0.contains("JPY has no minor unit") },
                "\(third.warnings)")
            #expect(try StoreSettings(ledger: ledger).storefront.countryCode == "JPN", "the storefront stays")
            try ledger.close()
        }
    }
}
