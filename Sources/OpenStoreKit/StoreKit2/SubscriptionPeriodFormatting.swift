public import Foundation
import StoreLedger

// Describing a subscription period in words ("1 month", "3 days"), as StoreKit's format styles
// do. The words are English whatever the storefront: Foundation on Linux has no localized
// names for them.

extension Product.SubscriptionPeriod.Unit {
    /// The unit's name, capitalized: "Day", "Week", "Month" or "Year" (in English).
    public var localizedDescription: String {
        switch self {
        case .day: "Day"
        case .week: "Week"
        case .month: "Month"
        case .year: "Year"
        }
    }

    /// The unit formatted with `format` (`Product.subscriptionPeriodUnitFormatStyle`).
    public func formatted<S: Foundation.FormatStyle>(_ format: S) -> S.FormatOutput where S.FormatInput == Self {
        format.format(self)
    }

    /// The format style of a subscription period's unit (StoreKit's
    /// `Product.SubscriptionPeriod.Unit.FormatStyle`): its name in lowercase English ("week").
    public struct FormatStyle: Foundation.FormatStyle, Codable, Hashable, Sendable {
        /// The style `Product.subscriptionPeriodUnitFormatStyle` gives.
        public init() {}

        public func format(_ value: Product.SubscriptionPeriod.Unit) -> String {
            value.localizedDescription.lowercased()
        }
    }
}

extension Product.SubscriptionPeriod {
    /// The format style of a subscription period's length (StoreKit's, a
    /// `Date.ComponentsFormatStyle`, which Foundation on Linux lacks): the period from a start
    /// date, as "1 week", "2 months", "1 year" (English, the period's own unit).
    public struct FormatStyle: Foundation.FormatStyle, Codable, Hashable, Sendable {
        /// The style `Product.subscriptionPeriodFormatStyle` gives.
        public init() {}

        /// The range as a whole number of the largest unit that spans it exactly (years, months,
        /// weeks, then days), counted on the Gregorian calendar in UTC: a month from January 31
        /// ends on February 28 or 29, and is still "1 month".
        public func format(_ value: Range<Date>) -> String {
            let calendar = Product.SubscriptionPeriod.calendar
            let units: [(Calendar.Component, String)] = [
                (.year, "year"), (.month, "month"), (.weekOfYear, "week"), (.day, "day"),
            ]
            for (component, name) in units {
                let whole =
                    calendar.dateComponents([component], from: value.lowerBound, to: value.upperBound)
                    .value(for: component) ?? 0
                // Calendar arithmetic clamps to the end of a shorter month: one more may fit.
                for count in [whole, whole + 1] where count > 0 {
                    if calendar.date(byAdding: component, value: count, to: value.lowerBound) == value.upperBound {
                        return Self.count(count, name)
                    }
                }
            }
            let days = calendar.dateComponents([.day], from: value.lowerBound, to: value.upperBound).day ?? 0
            return Self.count(days, "day")
        }

        private static func count(_ value: Int, _ unit: String) -> String {
            "\(value) \(unit)" + (value == 1 ? "" : "s")
        }
    }

    /// The Gregorian calendar in UTC, which periods are counted on here.
    static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        return calendar
    }()

    /// The dates the period spans from `referenceDate`, as the App Store renews
    /// (`StoreLedger.SubscriptionPeriod.advance`: the Gregorian calendar in UTC).
    func dates(from referenceDate: Date) -> Range<Date> {
        referenceDate..<max(ledgerPeriod.advance(referenceDate), referenceDate)
    }

    /// The period from `referenceDate`, formatted with a style of date ranges
    /// (`Product.subscriptionPeriodFormatStyle`).
    public func formatted<S: Foundation.FormatStyle>(
        _ format: S, referenceDate: Date = .now
    ) -> S.FormatOutput where S.FormatInput == Range<Date> {
        format.format(dates(from: referenceDate))
    }

    /// The period from `referenceDate`, as a duration, formatted with a style of durations
    /// (`Duration.UnitsFormatStyle`, say).
    public func formatted<S: Foundation.FormatStyle>(
        _ format: S, referenceDate: Date = .now
    ) -> S.FormatOutput where S.FormatInput == Duration {
        let range = dates(from: referenceDate)
        let milliseconds = Int64((range.upperBound.timeIntervalSince(range.lowerBound) * 1000).rounded())
        return format.format(.milliseconds(milliseconds))
    }
}

extension Product {
    /// The format style of this product's subscription period (StoreKit's; here
    /// `Product.SubscriptionPeriod.FormatStyle`, in English): use it with
    /// `subscription?.subscriptionPeriod.formatted(_:referenceDate:)`.
    public var subscriptionPeriodFormatStyle: SubscriptionPeriod.FormatStyle { SubscriptionPeriod.FormatStyle() }

    /// The format style of a subscription period's unit ("week", "month"; in English).
    public var subscriptionPeriodUnitFormatStyle: SubscriptionPeriod.Unit.FormatStyle {
        SubscriptionPeriod.Unit.FormatStyle()
    }
}
