import Foundation

/// The rule of a locale the store takes (its `locale` setting, a configuration file's
/// `_locale`): a known ISO 639 language, then an optional script and a known region, separated
/// by `_` or `-`, as `en_US`, `zh-Hant` or `zh_Hant_TW`; `xx` is refused.
package enum LocaleIdentifier {
    /// Whether `text` is a locale the store takes.
    package static func isValid(_ text: String) -> Bool {
        guard text.utf8.count <= 35,
            text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") })
        else { return false }
        var parts = text.split(separator: /[_-]/, omittingEmptySubsequences: false).map(String.init)
        guard let language = parts.first, (2...3).contains(language.count), language.allSatisfy(\.isLetter),
            languages.contains(language.lowercased())
        else { return false }
        parts.removeFirst()
        if let script = parts.first, script.count == 4, script.allSatisfy(\.isLetter) { parts.removeFirst() }
        if let region = parts.first {
            guard regions.contains(region.uppercased()) else { return false }
            parts.removeFirst()
        }
        return parts.isEmpty
    }

    private static let languages = Set(Locale.LanguageCode.isoLanguageCodes.map(\.identifier))
    private static let regions = Set(Locale.Region.isoRegions.map(\.identifier))
}
