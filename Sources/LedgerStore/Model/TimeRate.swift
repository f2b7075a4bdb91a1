public import Foundation

/// How fast subscription time passes in the simulated store, as Xcode's StoreKit testing
/// (`SKTestSession.TimeRate`, with the same raw values, which `.storekit` files store as
/// `_timeRate`).
public enum TimeRate: Int, Sendable, Codable, NamedCode {
    case realTime = 0
    case oneHourIsOneDay = 1
    case thirtyMinutesIsOneDay = 2
    case fiveMinutesIsOneDay = 3
    case oneMinuteIsOneDay = 4
    case thirtySecondsIsOneDay = 5
    case oneSecondIsOneDay = 6
    case monthlyRenewalEveryHour = 10
    case monthlyRenewalEveryThirtyMinutes = 11
    case monthlyRenewalEveryFifteenMinutes = 12
    case monthlyRenewalEveryFiveMinutes = 13
    case monthlyRenewalEveryThirtySeconds = 15
    case oneRenewalEveryFifteenMinutes = 1000
    case oneRenewalEveryFiveMinutes = 1001
    case oneRenewalEveryMinute = 1002
    case oneRenewalEveryThirtySeconds = 1003
    case oneRenewalEveryTenSeconds = 1004
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
        let perUnit: Double = switch unit {
        case .day: 1
        case .week: 7
        case .month: 30
        case .year: 365
        }
        return Double(value) * perUnit
    }

    /// Average length in seconds on the Gregorian calendar (a month is 30.436875 days, a year
    /// 365.2425), to estimate how many real-time periods fit between two dates.
    var averageSeconds: Double {
        let perUnit: Double = switch unit {
        case .day: 1
        case .week: 7
        case .month: 30.436875
        case .year: 365.2425
        }
        return Double(value) * perUnit * 86_400
    }

    /// Length in months, with a week a third of a month (Xcode's "monthly renewal" tables).
    var months: Double {
        let perUnit: Double = switch unit {
        case .day: 1.0 / 30
        case .week: 1.0 / 3
        case .month: 1
        case .year: 12
        }
        return Double(value) * perUnit
    }
}
