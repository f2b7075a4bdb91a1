import Foundation

/// How the store counts subscription periods, written once: renewals end each period with
/// `end(of:rate:anchor:start:)`, and `verify` accepts a period whose end is one of those it can
/// make (`isEnd(of:count:from:at:)`).
///
/// Times are the ledger's milliseconds.
package enum PeriodCalendar {
    /// The end of the period of `period` that starts at `start`: always one whole period
    /// later, never less, so that every renewal moves time forward.
    ///
    /// In real time periods are counted on the calendar from `anchor`, so that month ends do
    /// not drift (January 31, February 28, March 31); a `start` that is not one of the anchor's
    /// period boundaries (the time rate changed, say) becomes the new anchor. Accelerated
    /// rates use fixed lengths (`TimeRate.end(of:startingAt:)`).
    package static func end(of period: SubscriptionPeriod, rate: TimeRate, anchor: inout Int64, start: Int64) -> Int64 {
        let startDate = Date(ledgerMilliseconds: start)
        guard rate == .realTime else { return rate.end(of: period, startingAt: startDate).ledgerMilliseconds }
        let anchorDate = Date(ledgerMilliseconds: anchor)
        let estimate = Int((startDate.timeIntervalSince(anchorDate) / period.averageSeconds).rounded())
        guard
            let count = (estimate - 2...estimate + 2).first(where: {
                $0 >= 0 && period.advance(anchorDate, times: $0).ledgerMilliseconds == start
            })
        else {
            anchor = start
            return period.advance(startDate).ledgerMilliseconds
        }
        return period.advance(anchorDate, times: count + 1).ledgerMilliseconds
    }

    /// Whether `end` is `count` periods after `start` as renewals make them, at some time
    /// rate and from some anchor: at an accelerated rate, `count` of its fixed lengths; in
    /// real time, counted on the calendar from an anchor of which `start` is a boundary. For
    /// months and years that anchor may be a later day of the month than `start` when `start`
    /// is its month's last day (an anchor of January 31 makes the period from February 28 end
    /// on March 31), so such a period may end up to three days after the calendar's count
    /// from `start`.
    package static func isEnd(of period: SubscriptionPeriod, count: Int = 1, from start: Int64, at end: Int64) -> Bool {
        realTimeEnds(of: period, count: count, from: start).contains(end)
            || TimeRate.allCases.contains { rate in
                guard rate != .realTime else { return false }
                var date = Date(ledgerMilliseconds: start)
                for _ in 0..<count { date = rate.end(of: period, startingAt: date) }
                return date.ledgerMilliseconds == end
            }
    }

    /// The ends `count` periods after `start` can have in real time: one for each day of
    /// the month an anchor of `start` can have.
    static func realTimeEnds(of period: SubscriptionPeriod, count: Int, from start: Int64) -> Set<Int64> {
        let startDate = Date(ledgerMilliseconds: start)
        let fromStart = period.advance(startDate, times: count).ledgerMilliseconds
        guard period.unit == .month || period.unit == .year else { return [fromStart] }
        let day = utc.component(.day, from: startDate)
        guard day == utc.range(of: .day, in: .month, for: startDate)?.count else { return [fromStart] }
        // `start` is the last day of its month: an anchor on any later day (up to the 31st)
        // was clamped to it, and is clamped again, or not, in the end's month.
        let endMonth = period.advance(firstOfMonth(startDate), times: count)
        let daysInEndMonth = utc.range(of: .day, in: .month, for: endMonth)?.count ?? 28
        return Set(
            (day...31).map { anchorDay in
                endMonth.addingTimeInterval(Double(min(anchorDay, daysInEndMonth) - 1) * 86_400).ledgerMilliseconds
            })
    }

    /// The first day of `date`'s month, at `date`'s time of day.
    private static func firstOfMonth(_ date: Date) -> Date {
        date.addingTimeInterval(-Double(utc.component(.day, from: date) - 1) * 86_400)
    }

    private static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()
}
