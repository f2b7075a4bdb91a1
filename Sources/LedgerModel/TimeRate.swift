public import Foundation

/// How fast subscription time passes in the simulated store, as Xcode's StoreKit testing
/// (`SKTestSession.TimeRate`, with the same raw values, which `.storekit` files store as
/// `_timeRate`).
public enum TimeRate: Int, Sendable, Codable, NamedCode {
    /// Periods last as long as on the calendar.
    case realTime = 0
    /// Each day of a period lasts an hour: a month ends after 30 hours.
    case oneHourIsOneDay = 1
    /// Each day of a period lasts 30 minutes: a month ends after 15 hours.
    case thirtyMinutesIsOneDay = 2
    /// Each day of a period lasts 5 minutes: a month ends after 2.5 hours.
    case fiveMinutesIsOneDay = 3
    /// Each day of a period lasts a minute: a month ends after 30 minutes.
    case oneMinuteIsOneDay = 4
    /// Each day of a period lasts 30 seconds: a month ends after 15 minutes.
    case thirtySecondsIsOneDay = 5
    /// Each day of a period lasts a second: a month ends after 30 seconds.
    case oneSecondIsOneDay = 6
    /// A month lasts an hour (a week 20 minutes, a year 12 hours).
    case monthlyRenewalEveryHour = 10
    /// A month lasts 30 minutes (a week 10 minutes, a year 6 hours).
    case monthlyRenewalEveryThirtyMinutes = 11
    /// A month lasts 15 minutes (a week 5 minutes, a year 3 hours).
    case monthlyRenewalEveryFifteenMinutes = 12
    /// A month lasts 5 minutes (a week 100 seconds, a year an hour).
    case monthlyRenewalEveryFiveMinutes = 13
    /// A month lasts 30 seconds (a week 10 seconds, a year 6 minutes).
    case monthlyRenewalEveryThirtySeconds = 15
    /// Every period lasts 15 minutes, whatever its length.
    case oneRenewalEveryFifteenMinutes = 1000
    /// Every period lasts 5 minutes, whatever its length.
    case oneRenewalEveryFiveMinutes = 1001
    /// Every period lasts a minute, whatever its length.
    case oneRenewalEveryMinute = 1002
    /// Every period lasts 30 seconds, whatever its length.
    case oneRenewalEveryThirtySeconds = 1003
    /// Every period lasts 10 seconds, whatever its length.
    case oneRenewalEveryTenSeconds = 1004
    /// Every period lasts 2 seconds, whatever its length.
    case oneRenewalEveryTwoSeconds = 1005

    /// When a subscription period that starts at `start` ends under this rate.
    ///
    /// Real time follows the calendar. "X is one day" rates make each day of the period last X
    /// (a week is 7 days, a month 30, a year 365). "Monthly renewal every X" rates make a month
    /// last X, a week a third of it and a year twelve times it, as Xcode's tables say. "One
    /// renewal every X" rates make every period last X.
    public func end(of period: SubscriptionPeriod, startingAt start: Date) -> Date {
        let seconds: Double
        switch self {
        case .realTime:
            return period.advance(start)
        case .oneHourIsOneDay: seconds = period.days * 3_600
        case .thirtyMinutesIsOneDay: seconds = period.days * 1_800
        case .fiveMinutesIsOneDay: seconds = period.days * 300
        case .oneMinuteIsOneDay: seconds = period.days * 60
        case .thirtySecondsIsOneDay: seconds = period.days * 30
        case .oneSecondIsOneDay: seconds = period.days
        case .monthlyRenewalEveryHour: seconds = period.months * 3_600
        case .monthlyRenewalEveryThirtyMinutes: seconds = period.months * 1_800
        case .monthlyRenewalEveryFifteenMinutes: seconds = period.months * 900
        case .monthlyRenewalEveryFiveMinutes: seconds = period.months * 300
        case .monthlyRenewalEveryThirtySeconds: seconds = period.months * 30
        case .oneRenewalEveryFifteenMinutes: seconds = 900
        case .oneRenewalEveryFiveMinutes: seconds = 300
        case .oneRenewalEveryMinute: seconds = 60
        case .oneRenewalEveryThirtySeconds: seconds = 30
        case .oneRenewalEveryTenSeconds: seconds = 10
        case .oneRenewalEveryTwoSeconds: seconds = 2
        }
        return start.addingTimeInterval(seconds)
    }
}

extension SubscriptionPeriod {
    /// Length in days, with a month of 30 and a year of 365 (accelerated time rates).
    var days: Double {
        let perUnit: Double =
            switch unit {
            case .day: 1
            case .week: 7
            case .month: 30
            case .year: 365
            }
        return Double(value) * perUnit
    }

    /// Average length in seconds on the Gregorian calendar (a month is 30.436875 days, a year
    /// 365.2425), to estimate how many real-time periods fit between two dates.
    package var averageSeconds: Double {
        let perUnit: Double =
            switch unit {
            case .day: 1
            case .week: 7
            case .month: 30.436875
            case .year: 365.2425
            }
        return Double(value) * perUnit * 86_400
    }

    /// Length in months, with a week a third of a month (Xcode's "monthly renewal" tables).
    var months: Double {
        let perUnit: Double =
            switch unit {
            case .day: 1.0 / 30
            case .week: 1.0 / 3
            case .month: 1
            case .year: 12
            }
        return Double(value) * perUnit
    }
}
