import Foundation
import StoreLedger
import Testing

/// The fast paths of formatting give what the general ones give.
@Suite struct TextAndPriceFastPathTests {
    /// Prices are remembered once formatted (a bounded memo, emptied when full): 5,000 distinct
    /// prices, more than it holds, formatted twice, give the same strings, and the memo keeps
    /// storefronts and languages apart.
    @Test func rememberedPricesAreTheFormattedOnes() throws {
        let france = try #require(Storefront(countryCode: "FRA"))
        let prices = (1...5_000).map { Decimal($0) / 100 }
        let first = prices.map { PriceFormatter.string(for: $0, storefront: .unitedStates, locale: "en_US") }
        let second = prices.map { PriceFormatter.string(for: $0, storefront: .unitedStates, locale: "en_US") }
        #expect(first == second)
        #expect(first[98] == "$0.99" && first[4_999] == "$50.00")
        let price = Decimal(string: "1.99")!
        #expect(PriceFormatter.string(for: price, storefront: .unitedStates, locale: "en_US") == "$1.99")
        let french = PriceFormatter.string(for: price, storefront: france, locale: "fr_FR")
        let english = PriceFormatter.string(for: price, storefront: france, locale: "en_US")
        #expect(french.hasPrefix("1,99") && english.hasPrefix("€") && french != english)
    }

    @Test func printableASCIIIsKeptAndEverythingElseAsBefore() {
        #expect(TerminalText.escaped("com.example.gems_50 (Gems) ~!") == "com.example.gems_50 (Gems) ~!")
        #expect(TerminalText.escaped("café ☕︎") == "café ☕︎")
        #expect(TerminalText.escaped("a\u{1B}[2Jb") == "a\\u{1b}[2Jb")
        #expect(TerminalText.escaped("tab\there\u{7F}") == "tab\\u{9}here\\u{7f}")
    }
}
