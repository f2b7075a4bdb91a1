import Foundation
import LedgerTestSupport
import LedgerTesting
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

    /// Prices of up to 18 digits are read without Foundation's parser: over random texts (digits,
    /// points, zeros, other characters, up to 22 characters), `DecimalText.parse` gives what
    /// `Decimal(string:)` gives after the same checks, to the representation.
    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func shortPricesParseAsFoundationParsesThem(seed: UInt64) {
        let posix = Locale(identifier: "en_US_POSIX")
        var random = SplitMix(seed: seed)
        let alphabet = Array("0000123456789.....x- ")
        for _ in 0..<5_000 {
            let text = String(
                (0..<Int.random(in: 1...22, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
            let plain =
                text.allSatisfy { $0.isASCII && ($0.isNumber || $0 == ".") } && text.filter { $0 == "." }.count <= 1
                && text.first != "." && text.last != "."
            let expected = plain ? Decimal(string: text, locale: posix) : nil
            let parsed = DecimalText.parse(text)
            #expect(parsed == expected, "\(text)")
            if let parsed, let expected {
                #expect(parsed.exponent == expected.exponent && parsed.significand == expected.significand, "\(text)")
                #expect(DecimalText.format(parsed) == DecimalText.format(expected), "\(text)")
            }
        }
        #expect(DecimalText.parse("0.99") == Decimal(string: "0.99") && DecimalText.parse("600") == 600)
        #expect(DecimalText.parse("1.") == nil && DecimalText.parse(".5") == nil && DecimalText.parse("1.2.3") == nil)
    }

    @Test func printableASCIIIsKeptAndEverythingElseAsBefore() {
        #expect(TerminalText.escaped("com.example.gems_50 (Gems) ~!") == "com.example.gems_50 (Gems) ~!")
        #expect(TerminalText.escaped("café ☕︎") == "café ☕︎")
        #expect(TerminalText.escaped("a\u{1B}[2Jb") == "a\\u{1b}[2Jb")
        #expect(TerminalText.escaped("tab\there\u{7F}") == "tab\\u{9}here\\u{7f}")
    }
}
