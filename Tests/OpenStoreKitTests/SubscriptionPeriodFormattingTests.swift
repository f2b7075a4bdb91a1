import Foundation
import OpenStoreKit
import OpenStoreKitTest
import Testing

/// Subscription periods in words, with StoreKit's format styles (in English).
@Suite struct SubscriptionPeriodFormattingTests {
    /// Apple's periods, by how they read.
    static let periods: [(Product.SubscriptionPeriod, String)] = [
        (.everyThreeDays, "3 days"), (.weekly, "1 week"), (.everyTwoWeeks, "2 weeks"), (.monthly, "1 month"),
        (.everyTwoMonths, "2 months"), (.everyThreeMonths, "3 months"), (.everySixMonths, "6 months"),
        (.yearly, "1 year"),
    ]

    /// Seeded random start dates from 1970 to 2100, month ends and leap days included: every
    /// period reads the same from any of them.
    @Test func everyPeriodReadsTheSameFromAnyStartDate() async throws {
        try await Shop.withSession { _ in
            let product = try #require(try await Product.products(for: [Shop.monthly]).first)
            var state: UInt64 = 0x5045_5249_4F44
            // January 31 and February 29, 2024, then the random ones.
            var dates = [Date(timeIntervalSince1970: 1_706_659_200), Date(timeIntervalSince1970: 1_709_164_800)]
            for _ in 0..<200 {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                dates.append(Date(timeIntervalSince1970: Double((state >> 20) % 4_102_444_800)))
            }
            for (period, words) in Self.periods {
                for date in dates {
                    #expect(
                        period.formatted(product.subscriptionPeriodFormatStyle, referenceDate: date) == words,
                        "\(words) from \(date)")
                }
            }
        }
    }

    @Test func unitsAndDurationsReadAsStoreKitsStylesSay() async throws {
        try await Shop.withSession { _ in
            let product = try #require(try await Product.products(for: [Shop.monthly]).first)
            let units: [Product.SubscriptionPeriod.Unit] = [.day, .week, .month, .year]
            #expect(units.map(\.localizedDescription) == ["Day", "Week", "Month", "Year"])
            #expect(
                units.map { $0.formatted(product.subscriptionPeriodUnitFormatStyle) } == [
                    "day", "week", "month", "year",
                ])
            let subscription = try #require(product.subscription)
            #expect(subscription.subscriptionPeriod.formatted(product.subscriptionPeriodFormatStyle) == "1 month")
            #expect(
                Product.SubscriptionPeriod.everyThreeDays.formatted(.units(allowed: [.days], width: .wide)) == "3 days")
            #expect(Product.SubscriptionPeriod.weekly.formatted(.units(allowed: [.weeks], width: .wide)) == "1 week")
        }
    }

    /// The members code sets on StoreKit's style (`style`, `locale`, `calendar`) change what it
    /// reads.
    @Test func theStylesMembersAreSettableAsStoreKitsAre() async throws {
        try await Shop.withSession { _ in
            let product = try #require(try await Product.products(for: [Shop.monthly]).first)
            var style = product.subscriptionPeriodFormatStyle
            #expect(style.style == .wide)
            let reads: [Product.SubscriptionPeriod.FormatStyle.Style: [String]] = [
                .wide: ["2 months", "1 week", "3 days", "1 year"],
                .abbreviated: ["2 mths", "1 wk", "3 days", "1 yr"],
                .condensedAbbreviated: ["2mths", "1wk", "3days", "1yr"],
                .narrow: ["2m", "1w", "3d", "1y"],
                .spellOut: ["two months", "one week", "three days", "one year"],
            ]
            let periods: [Product.SubscriptionPeriod] = [.everyTwoMonths, .weekly, .everyThreeDays, .yearly]
            for (choice, words) in reads {
                style.style = choice
                #expect(periods.map { $0.formatted(style) } == words, "\(choice)")
            }
            style.style = .spellOut
            #expect(
                Product.SubscriptionPeriod.everyThreeMonths.formatted(style.locale(Locale(identifier: "fr_FR")))
                    == "trois months")
            // Counted on the calendar set: from January 31, 2am, in UTC+14, a month ends on
            // February 29, 2am there: a whole month there, 29 days on UTC's calendar.
            style.style = .wide
            var kiribati = Calendar(identifier: .gregorian)
            kiribati.timeZone = try #require(TimeZone(identifier: "Pacific/Kiritimati"))
            let start = Date(timeIntervalSince1970: 1_706_616_000)  // 2024-01-30 12:00 UTC
            let end = try #require(kiribati.date(byAdding: .month, value: 1, to: start))
            #expect(style.format(start..<end) == "29 days")
            style.calendar = kiribati
            #expect(style.format(start..<end) == "1 month")
        }
    }
}
