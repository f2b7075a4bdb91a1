public import Foundation

/// A subscription period in ISO 8601 form: `P1W`, `P1M`, `P2M`, `P1Y`, `P3D`.
public struct SubscriptionPeriod: Sendable, Hashable, CustomStringConvertible {
    /// What a period counts; the raw value is its ISO 8601 letter.
    public enum Unit: String, Sendable, CaseIterable {
        /// Days (`D`), on the calendar.
        case day = "D"
        /// Weeks (`W`), of seven calendar days.
        case week = "W"
        /// Months (`M`), on the calendar: from the 31st, the last day of a shorter month.
        case month = "M"
        /// Years (`Y`), on the calendar.
        case year = "Y"
    }

    /// How many units the period lasts: 3 in `P3D`.
    public var value: Int
    /// What the period counts: days, weeks, months or years.
    public var unit: Unit

    /// A period of `value` times `unit` (`P<value><unit>`).
    public init(value: Int, unit: Unit) {
        self.value = value
        self.unit = unit
    }

    /// Parses `P<n><D|W|M|Y>` with n >= 1; `nil` for anything else.
    public init?(iso8601 text: String) {
        guard text.count >= 3, text.first == "P", let unit = Unit(rawValue: String(text.last!)),
            let value = Int(text.dropFirst().dropLast()), value >= 1, value <= 1_000
        else { return nil }
        self.init(value: value, unit: unit)
    }

    public var description: String { "P\(value)\(unit.rawValue)" }

    /// The lengths an auto-renewable subscription renews at on the App Store (App Store
    /// Connect's subscription durations): a week, 1, 2, 3 or 6 months, a year.
    public static let appStoreSubscriptionPeriods: [SubscriptionPeriod] = ["P1W", "P1M", "P2M", "P3M", "P6M", "P1Y"].map
    { period($0) }

    /// The lengths of one period of an offer on the App Store (App Store Connect's offer
    /// durations): 3 days, 1 or 2 weeks, 1, 2, 3 or 6 months, a year.
    public static let appStoreOfferPeriods: [SubscriptionPeriod] =
        ["P3D", "P1W", "P2W", "P1M", "P2M", "P3M", "P6M", "P1Y"].map { period($0) }

    private static func period(_ text: String) -> SubscriptionPeriod {
        guard let period = SubscriptionPeriod(iso8601: text) else { preconditionFailure("not a period: \(text)") }
        return period
    }

    /// The date one period after `date`, by the calendar (UTC), as the App Store renews.
    public func advance(_ date: Date) -> Date {
        advance(date, times: 1)
    }

    /// The date `times` periods after `date`, counted on the calendar (UTC) from `date`, so
    /// that the 31st of January plus two months is the 31st of March.
    public func advance(_ date: Date, times: Int) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let component: Calendar.Component =
            switch unit {
            case .day: .day
            case .week: .weekOfYear
            case .month: .month
            case .year: .year
            }
        return calendar.date(byAdding: component, value: value * times, to: date)!
    }
}

extension SubscriptionPeriod: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let period = SubscriptionPeriod(iso8601: text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "not an ISO 8601 period such as P1M: \(text)")
        }
        self = period
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
