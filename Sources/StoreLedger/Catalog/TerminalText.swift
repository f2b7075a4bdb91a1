import Foundation

/// Text from a file or the ledger made safe to print: control and format characters shown
/// as `\u{…}` escapes.
package enum TerminalText {
    /// `text` with every control, format, line separator and paragraph separator character
    /// replaced by its `\u{…}` escape (hexadecimal code point, as `\u{1b}`); printable ASCII
    /// comes back unchanged.
    package static func escaped(_ text: String) -> String {
        // Printable ASCII, most text, needs no look at Unicode's categories.
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator:
                out += "\\u{\(String(scalar.value, radix: 16))}"
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
