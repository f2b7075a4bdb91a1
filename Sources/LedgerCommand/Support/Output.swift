package import Foundation
import StoreLedger

/// Where a command's results go: one JSON document on stdout with `--json`, else text lines.
/// Messages and errors always go to stderr.
package struct Output {
    let json: Bool

    /// The version of the JSON documents' shapes, in every document as `"version"`; it grows
    /// when a field is removed or changes meaning (fields may be added without it).
    package static let jsonVersion = 1

    package static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(InternetDate.string(from: date))
        }
        return encoder
    }()

    /// Prints `document` as JSON (with `--json`), with the `version` field, or `text()`
    /// otherwise. The document must be a JSON object.
    package func emit(_ document: some Encodable, text: () -> String) throws {
        if json {
            let data = try Self.encoder.encode(Versioned(document: document))
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

/// A document with the `version` field added to its own (a JSON object's keys).
private struct Versioned<Document: Encodable>: Encodable {
    let document: Document

    private enum Key: String, CodingKey { case version }

    func encode(to encoder: any Encoder) throws {
        try document.encode(to: encoder)
        var container = encoder.container(keyedBy: Key.self)  // the same object as the document's
        try container.encode(Output.jsonVersion, forKey: .version)
    }
}

/// Dates as the JSON documents write them: ISO 8601 in UTC with milliseconds
/// (`2026-11-22T10:06:33.459Z`), the ledger's own precision. Written by hand: Foundation's
/// formatter was most of the cost of a large `ledger list --json`, and it truncates the
/// date's binary fraction, printing at times one millisecond less than the ledger stored.
package enum InternetDate {
    package static func string(from date: Date) -> String {
        var bytes: [UInt8] = []
        append(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the date's text (without quotes) to a byte buffer.
    static func append(_ date: Date, to out: inout [UInt8]) {
        // Past what 64 bits of milliseconds hold (a damaged row), Foundation's words.
        guard let milliseconds = Int64(exactly: (date.timeIntervalSince1970 * 1000).rounded()) else {
            out += date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)).utf8
            return
        }
        let (days, dayMilliseconds) = milliseconds.quotientAndRemainder(dividingBy: 86_400_000)
        let (day, ms) = dayMilliseconds < 0 ? (days - 1, dayMilliseconds + 86_400_000) : (days, dayMilliseconds)
        let (year, month, dayOfMonth) = civilDate(daysSince1970: day)
        if (0...9999).contains(year) {
            digits(year, count: 4, to: &out)
        } else {
            Digits.append(year, width: 4, to: &out)
        }
        out.append(UInt8(ascii: "-"))
        digits(month, count: 2, to: &out)
        out.append(UInt8(ascii: "-"))
        digits(dayOfMonth, count: 2, to: &out)
        out.append(UInt8(ascii: "T"))
        digits(ms / 3_600_000, count: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        digits(ms / 60_000 % 60, count: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        digits(ms / 1_000 % 60, count: 2, to: &out)
        out.append(UInt8(ascii: "."))
        digits(ms % 1_000, count: 3, to: &out)
        out.append(UInt8(ascii: "Z"))
    }

    /// The last `count` decimal digits of a non-negative `value`, most significant first.
    private static func digits(_ value: Int64, count: Int, to out: inout [UInt8]) {
        var divisor: Int64 = 1
        for _ in 1..<count { divisor *= 10 }
        while divisor > 0 {
            out.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
            divisor /= 10
        }
    }

    /// The proleptic Gregorian date of a day counted from 1970-01-01 (Howard Hinnant's
    /// `civil_from_days`).
    static func civilDate(daysSince1970 days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shifted = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shifted + 2) / 5 + 1
        let month = shifted < 10 ? shifted + 3 : shifted - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
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

/// Output written as it is made, for the commands whose output grows with the ledger (`list`,
/// `launch`): held until `heldBytes` (so that an error in a short listing leaves stdout empty),
/// then written in pieces, so that memory does not grow with the output.
struct HeldOutput {
    /// How much output is held back before it streams.
    static let heldBytes = 4 << 20
    /// What JSONEncoder's pretty printing writes for an empty array, after its `[`.
    static let emptyArray = "\n\n  ]"

    var bytes: [UInt8] = []

    mutating func flushIfFull() {
        if bytes.count >= Self.heldBytes { flush() }
    }

    mutating func flush() {
        FileHandle.standardOutput.write(Data(bytes))
        bytes.removeAll(keepingCapacity: true)
    }
}
