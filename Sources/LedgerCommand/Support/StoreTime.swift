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
            throw InputError(
                description:
                    "invalid duration \"\(text)\": the store clock only moves forward, durations cannot be negative")
        }
        guard
            let components = trimmed.uppercased().hasPrefix("P")
                ? iso8601(trimmed.uppercased()) : compact(trimmed.lowercased())
        else {
            throw InputError(
                description:
                    "invalid duration \"\(text)\": use a number and a unit (30d, 1h30m, 45s, 2w) or ISO 8601 (P1M, P1Y, PT1H)"
            )
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        guard let date = calendar.date(byAdding: components, to: start), date <= Ledger.latestStoreDate else {
            throw InputError(
                description: "invalid duration \"\(text)\": too large (the store clock stops at the year 9999)")
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

    /// Parses an ISO 8601 date (`2027-01-31`, midnight UTC) or date and time with a zone
    /// (`2027-01-31T12:00:00Z`, `2027-01-31T13:00+01:00`, up to three fractional digits),
    /// strictly: a day that does not exist, a time out of range, a time without a zone or
    /// anything after the date is refused, never adjusted, as the clock cannot be moved back.
    /// - Throws: `InputError` naming what is wrong.
    static func date(_ text: String) throws -> Date {
        let shown = quoted(text)
        func invalid(_ why: String) -> InputError {
            InputError(
                description: "invalid date \(shown): \(why); use ISO 8601, such as 2027-01-31 or 2027-01-31T12:00:00Z")
        }
        // ASCII digits only: `\d` alone also matches fullwidth or Arabic-Indic digits, which
        // `Int` does not read.
        let pattern = /(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|[+-]\d{2}:\d{2})?)?/
            .asciiOnlyDigits()
        guard let match = text.prefixMatch(of: pattern) else { throw invalid("expected YYYY-MM-DD, in ASCII digits") }
        guard match.output.0.endIndex == text.endIndex else {
            throw invalid("unexpected \(quoted(String(text[match.output.0.endIndex...]))) after \(match.output.0)")
        }
        let (year, month, day) = (Int(match.output.1)!, Int(match.output.2)!, Int(match.output.3)!)
        guard (1...12).contains(month) else { throw invalid("month \(month) does not exist") }
        let monthLength = daysIn(month: month, year: year)
        guard (1...monthLength).contains(day) else {
            throw invalid("day \(day) does not exist: that month has \(monthLength) days")
        }
        var milliseconds = Int64(daysSince1970(year: year, month: month, day: day)) * 86_400_000
        if let hourText = match.output.4 {
            guard let zone = match.output.8 else { throw invalid("a time needs a zone: Z or an offset such as +01:00") }
            let hour = Int(hourText)!
            let minute = Int(match.output.5!)!
            let second = match.output.6.map { Int($0)! } ?? 0
            guard hour <= 23 else { throw invalid("hour \(hour) is out of range (00 to 23)") }
            guard minute <= 59 else { throw invalid("minute \(minute) is out of range (00 to 59)") }
            guard second <= 59 else { throw invalid("second \(second) is out of range (00 to 59)") }
            var fraction: Int64 = 0
            if let digits = match.output.7 {
                guard digits.count <= 3 else {
                    throw invalid("at most 3 fractional digits: the store keeps milliseconds")
                }
                fraction = Int64(digits.padding(toLength: 3, withPad: "0", startingAt: 0))!
            }
            var offset = 0
            if zone != "Z" {
                let hours = Int(zone.dropFirst().prefix(2))!
                let minutes = Int(zone.suffix(2))!
                guard hours <= 18, minutes <= 59 else { throw invalid("zone offset \(zone) is out of range") }
                offset = (hours * 60 + minutes) * (zone.first == "-" ? -1 : 1)
            }
            milliseconds += Int64(((hour * 60 + minute - offset) * 60 + second)) * 1000 + fraction
        }
        let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        guard date <= Ledger.latestStoreDate else { throw invalid("after the year 9999, where the store clock stops") }
        return date
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (Howard Hinnant's
    /// days-from-civil).
    private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
