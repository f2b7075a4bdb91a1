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
}
