import Foundation
import LedgerEngine
import LedgerTestSupport
import LedgerTesting
import Testing

/// Subscription period arithmetic (`PeriodCalendar`), written once: renewals make every end
/// with `end(of:rate:anchor:start:)` and `verify` accepts exactly the ends that can make.
@Suite struct PeriodCalendarTests {
    static let day: Int64 = 86_400_000

    static func utc(_ text: String) -> Int64 {
        ISO8601DateFormatter().date(from: text)!.ledgerMilliseconds
    }

    /// In real time, periods count from their anchor: from January 31, February ends on the
    /// 28th (29th in a leap year) and March on the 31st, never drifting to the 28th.
    @Test func monthsCountFromTheirAnchor() {
        var anchor = Self.utc("2025-01-31T10:00:00Z")
        let month = SubscriptionPeriod(value: 1, unit: .month)
        let february = PeriodCalendar.end(of: month, rate: .realTime, anchor: &anchor, start: anchor)
        #expect(february == Self.utc("2025-02-28T10:00:00Z"))
        let march = PeriodCalendar.end(of: month, rate: .realTime, anchor: &anchor, start: february)
        #expect(march == Self.utc("2025-03-31T10:00:00Z"))
        #expect(anchor == Self.utc("2025-01-31T10:00:00Z"))
        // A start that is not a boundary of the anchor (the rate changed) becomes the anchor.
        let moved = Self.utc("2025-03-15T00:00:00Z")
        #expect(
            PeriodCalendar.end(of: month, rate: .realTime, anchor: &anchor, start: moved)
                == Self.utc("2025-04-15T00:00:00Z"))
        #expect(anchor == moved)
    }

    /// What `verify` accepts: from the last day of a month, any end an anchor on that day or
    /// a later one makes; from any other day, the calendar's count only.
    @Test func verifyAcceptsTheEndsAnAnchorCanMake() {
        let month = SubscriptionPeriod(value: 1, unit: .month)
        let february = Self.utc("2025-02-28T10:00:00Z")
        for day in 28...31 {
            #expect(PeriodCalendar.isEnd(of: month, from: february, at: Self.utc("2025-03-\(day)T10:00:00Z")))
        }
        #expect(!PeriodCalendar.isEnd(of: month, from: february, at: Self.utc("2025-03-27T10:00:00Z")))
        #expect(!PeriodCalendar.isEnd(of: month, from: february, at: Self.utc("2025-04-01T10:00:00Z")))
        let mid = Self.utc("2025-03-15T00:00:00Z")
        #expect(PeriodCalendar.isEnd(of: month, from: mid, at: Self.utc("2025-04-15T00:00:00Z")))
        #expect(!PeriodCalendar.isEnd(of: month, from: mid, at: Self.utc("2025-04-16T00:00:00Z")))
        // A week has no month end: only seven days, or an accelerated rate's length.
        let week = SubscriptionPeriod(value: 1, unit: .week)
        #expect(PeriodCalendar.isEnd(of: week, from: february, at: february + 7 * Self.day))
        #expect(!PeriodCalendar.isEnd(of: week, from: february, at: february + 8 * Self.day))
        #expect(PeriodCalendar.isEnd(of: week, from: february, at: february + 7 * 3_600_000))  // an hour a day
    }

    /// Seeded: whatever the anchor (month ends often), period, number of periods before and
    /// in the span, and rate, the renewals' ends are ends `verify` accepts, and a millisecond
    /// off never is.
    @Test(arguments: 0..<8)
    func everyEndRenewalsMakeIsOneVerifyAccepts(seed: UInt64) {
        var random = SplitMix64(seed: 0x9E71 &+ seed)
        let periods = SubscriptionPeriod.appStoreSubscriptionPeriods + SubscriptionPeriod.appStoreOfferPeriods
        for _ in 0..<200 {
            let year = 2000 + Int(random.next() % 40)
            let month = 1 + Int(random.next() % 12)
            let day = random.next() % 2 == 0 ? 28 + Int(random.next() % 4) : 1 + Int(random.next() % 28)
            let text = String(format: "%04d-%02d-01T%02d:%02d:00Z", year, month, random.next() % 24, random.next() % 60)
            let first = Self.utc(text)
            var utc = Calendar(identifier: .gregorian)
            utc.timeZone = TimeZone(identifier: "UTC")!
            let days = utc.range(of: .day, in: .month, for: Date(ledgerMilliseconds: first))!.count
            var anchor = first + Int64(min(day, days) - 1) * Self.day
            let period = periods[Int(random.next() % UInt64(periods.count))]
            let rate =
                random.next() % 3 == 0
                ? TimeRate.allCases[Int(random.next() % UInt64(TimeRate.allCases.count))] : .realTime
            var start = anchor
            for _ in 0..<(random.next() % 30) {
                start = PeriodCalendar.end(of: period, rate: rate, anchor: &anchor, start: start)
            }
            let count = 1 + Int(random.next() % 3)
            var end = start
            for _ in 0..<count { end = PeriodCalendar.end(of: period, rate: rate, anchor: &anchor, start: end) }
            let what = "\(period) \(rate) from \(Date(ledgerMilliseconds: start)) x\(count)"
            #expect(end > start, "\(what)")
            #expect(PeriodCalendar.isEnd(of: period, count: count, from: start, at: end), "\(what)")
            #expect(!PeriodCalendar.isEnd(of: period, count: count, from: start, at: end + 1), "\(what)")
            #expect(!PeriodCalendar.isEnd(of: period, count: count, from: start, at: end - 1), "\(what)")
        }
    }
}
