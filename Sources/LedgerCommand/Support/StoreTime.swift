import Foundation
import StoreLedger

/// Durations and dates as people type them for `ledger clock`.
enum StoreTime {
    /// Parses `30d`, `1h30m`, `45s`, `2w` (s, m, h, d, w) or ISO 8601 (`P1M`, `P1Y`, `PT1H`,
    /// `P1DT12H`) and returns the date that far after `start`, by the UTC calendar.
    /// - Throws: `InputError` for a negative or malformed duration.
    static func date(after text: String, from start: Date) throws -> Date {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix("-") {
            throw InputError(description: "invalid duration \"\(text)\": the store clock only moves forward, durations cannot be negative")
        }
        guard let components = trimmed.uppercased().hasPrefix("P") ? iso8601(trimmed.uppercased()) : compact(trimmed.lowercased()) else {
            throw InputError(description: "invalid duration \"\(text)\": use a number and a unit (30d, 1h30m, 45s, 2w) or ISO 8601 (P1M, P1Y, PT1H)")
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        guard let date = calendar.date(byAdding: components, to: start), date <= Ledger.latestStoreDate else {
            throw InputError(description: "invalid duration \"\(text)\": too large (the store clock stops at the year 9999)")
        }
        return date
    }

    private static func compact(_ text: String) -> DateComponents? {
        var components = DateComponents()
        var number = ""
        var sawUnit = false
        for character in text {
            if character.isASCII, character.isNumber {
                number.append(character)
                continue
            }
            guard let value = Int(number), value <= 10_000_000 else { return nil }
            switch character {
            case "s": components.second = (components.second ?? 0) + value
            case "m": components.minute = (components.minute ?? 0) + value
            case "h": components.hour = (components.hour ?? 0) + value
            case "d": components.day = (components.day ?? 0) + value
            case "w": components.day = (components.day ?? 0) + value * 7
            default: return nil
            }
            number = ""
            sawUnit = true
        }
        return sawUnit && number.isEmpty ? components : nil
    }

    private static func iso8601(_ text: String) -> DateComponents? {
        var components = DateComponents()
        var number = ""
        var inTime = false
        var sawUnit = false
        for character in text.dropFirst() {
            if character == "T" {
                guard !inTime, number.isEmpty else { return nil }
                inTime = true
                continue
            }
            if character.isASCII, character.isNumber {
                number.append(character)
                continue
            }
            guard let value = Int(number), value <= 10_000_000 else { return nil }
            switch (character, inTime) {
            case ("Y", false): components.year = value
            case ("M", false): components.month = value
            case ("W", false): components.day = (components.day ?? 0) + value * 7
            case ("D", false): components.day = (components.day ?? 0) + value
            case ("H", true): components.hour = value
            case ("M", true): components.minute = value
            case ("S", true): components.second = value
            default: return nil
            }
            number = ""
            sawUnit = true
        }
        return sawUnit && number.isEmpty ? components : nil
    }

    /// Parses an ISO 8601 date (`2027-01-31`, midnight UTC) or date and time
    /// (`2027-01-31T12:00:00Z`, fractional seconds allowed).
    static func date(_ text: String) throws -> Date {
        let formats: [Date.ISO8601FormatStyle] = [
            Date.ISO8601FormatStyle(includingFractionalSeconds: true),
            Date.ISO8601FormatStyle(),
            Date.ISO8601FormatStyle().year().month().day(),
        ]
        for format in formats {
            if let date = try? format.parse(text), date <= Ledger.latestStoreDate { return date }
        }
        throw InputError(description: "invalid date \"\(text)\": use ISO 8601, such as 2027-01-31 or 2027-01-31T12:00:00Z")
    }
}
