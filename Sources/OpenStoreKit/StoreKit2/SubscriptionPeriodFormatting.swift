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
    /// The format style of a subscription period's length: the period from a start date, as
    /// "1 week", "2 months", "1 year". StoreKit types it `Date.ComponentsFormatStyle`; Foundation
    /// on Linux has that type with no public member (no initializer but `Decodable`'s, no
    /// `format(_:)`), so this one takes its place, with the members code sets on it: `style`,
    /// `locale` and `calendar`. Its words are English whatever `locale` (Foundation on Linux has
    /// no localized unit names); `.spellOut` spells the number in `locale`'s language.
    public struct FormatStyle: Foundation.FormatStyle, Codable, Hashable, Sendable {
        /// How the length reads (`Date.ComponentsFormatStyle.Style`'s cases).
        public enum Style: String, Codable, Hashable, Sendable, CaseIterable {
            /// "2 mths", "1 wk", "3 days", "1 yr".
            case abbreviated
            /// "2mths", "1wk", "3days", "1yr".
            case condensedAbbreviated
            /// "2m", "1w", "3d", "1y".
            case narrow
            /// "2 months", "1 week", "3 days", "1 year": `Product.subscriptionPeriodFormatStyle`'s.
            case wide
            /// "two months", "one week", "three days", "one year".
            case spellOut
        }

        /// How the length reads.
        public var style: Style
        /// The locale `.spellOut` spells numbers in.
        public var locale: Locale
        /// The calendar the range is counted on: the Gregorian calendar in UTC by default, as
        /// the App Store renews.
        public var calendar: Calendar

        /// The style `Product.subscriptionPeriodFormatStyle` gives by default: `.wide`, in
        /// English, on `calendar` (`nil`: the Gregorian calendar in UTC).
        public init(
            style: Style = .wide, locale: Locale = Locale(identifier: "en_US"),
            calendar: Calendar? = nil
        ) {
            self.style = style
            self.locale = locale
            self.calendar = calendar ?? Product.SubscriptionPeriod.calendar
        }

        /// This style in `locale`.
        public func locale(_ locale: Locale) -> Self {
            var copy = self
            copy.locale = locale
            return copy
        }

        /// The range as a whole number of the largest unit that spans it exactly (years, months,
        /// weeks, then days), counted on `calendar`: a month from January 31 ends on February 28
        /// or 29, and is still "1 month".
        public func format(_ value: Range<Date>) -> String {
            let units: [(Calendar.Component, Product.SubscriptionPeriod.Unit)] = [
                (.year, .year), (.month, .month), (.weekOfYear, .week), (.day, .day),
            ]
            for (component, unit) in units {
                let whole =
                    calendar.dateComponents([component], from: value.lowerBound, to: value.upperBound)
                    .value(for: component) ?? 0
                // Calendar arithmetic clamps to the end of a shorter month: one more may fit.
                for count in [whole, whole + 1] where count > 0 {
                    if calendar.date(byAdding: component, value: count, to: value.lowerBound) == value.upperBound {
                        return words(count, unit)
                    }
                }
            }
            return words(calendar.dateComponents([.day], from: value.lowerBound, to: value.upperBound).day ?? 0, .day)
        }

        /// `count` `unit`s as `style` reads them.
        private func words(_ count: Int, _ unit: Product.SubscriptionPeriod.Unit) -> String {
            let plural = count != 1
            let name = Product.SubscriptionPeriod.Unit.FormatStyle().format(unit)
            let wide = name + (plural ? "s" : "")
            switch style {
            case .wide: return "\(count) \(wide)"
            case .abbreviated: return "\(count) \(Self.short(unit, plural))"
            case .condensedAbbreviated: return "\(count)\(Self.short(unit, plural))"
            case .narrow: return "\(count)\(name.prefix(1))"
            case .spellOut:
                let formatter = NumberFormatter()
                formatter.numberStyle = .spellOut
                formatter.locale = locale
                return "\(formatter.string(from: NSNumber(value: count)) ?? String(count)) \(wide)"
            }
        }

        /// The unit's short name (CLDR's English "short" width).
        private static func short(_ unit: Product.SubscriptionPeriod.Unit, _ plural: Bool) -> String {
            let name =
                switch unit {
                case .day: "day"
                case .week: "wk"
                case .month: "mth"
                case .year: "yr"
                }
            return name + (plural ? "s" : "")
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
    /// `Product.SubscriptionPeriod.FormatStyle`, `.wide`, in English; see its comment for why
    /// not `Date.ComponentsFormatStyle`): use it with
    /// `subscription?.subscriptionPeriod.formatted(_:referenceDate:)`.
    public var subscriptionPeriodFormatStyle: SubscriptionPeriod.FormatStyle { SubscriptionPeriod.FormatStyle() }

    /// The format style of a subscription period's unit ("week", "month"; in English).
    public var subscriptionPeriodUnitFormatStyle: SubscriptionPeriod.Unit.FormatStyle {
        SubscriptionPeriod.Unit.FormatStyle()
    }
}
