package import Foundation
import StoreLedger

/// Where a command's results go: one JSON document on stdout with `--json`, else text lines.
/// Messages and errors always go to stderr.
package struct Output {
    let json: Bool

    package static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        }
        return encoder
    }()

    /// Prints `document` as JSON (with `--json`), or `text()` otherwise.
    package func emit(_ document: some Encodable, text: () -> String) throws {
        if json {
            let data = try Self.encoder.encode(document)
            FileHandle.standardOutput.write(data + Data("\n".utf8))
        } else {
            let lines = text()
            if !lines.isEmpty { print(lines) }
        }
    }

    package static func message(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}

/// A transaction as one line of text.
func describe(_ t: PaymentTransaction) -> String {
    var line = "#\(t.id)  \(TerminalText.escaped(t.productID))  x\(t.quantity)  \(t.state.rawValue)"
    line += t.isFinished ? "  finished" : "  unfinished"
    line += "  delivered \(t.deliveryCount)x"
    if t.originalID != t.id { line += "  original #\(t.originalID)" }
    if let error = t.error { line += "  error \(error.code.name) (\(error.code.rawValue)): \(error.message)" }
    if let key = t.idempotencyKey { line += "  key \(TerminalText.escaped(key))" }
    if let account = t.appAccountToken { line += "  account \(account.uuidString)" }
    return line
}
