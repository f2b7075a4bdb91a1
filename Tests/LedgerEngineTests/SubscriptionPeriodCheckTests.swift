import Foundation
import LedgerModel
import Testing

/// `verify`'s invariant 3 (`SubscriptionPeriodCheck`): a renewal never starts inside the period
/// before it in its chain, where a subscription's chain is the group's (one original
/// transaction): a period an upgrade replaced, or refunded, ended then; a period made earlier
/// but begun later (an Ask to Buy approved later) is not the one before.
@Suite struct SubscriptionPeriodCheckTests {
    static let day: TimeInterval = 86_400
    static let epoch = Date(timeIntervalSince1970: 1_800_000_000)

    /// A purchased period of the week-long product, of chain 1, from `start` (days after the
    /// epoch) for `days`.
    static func period(
        _ id: UInt64, from start: Double, days: Double = 7, reason: PaymentTransaction.Reason = .renewal,
        upgraded: Bool = false, revoked: Bool = false
    ) -> PaymentTransaction {
        let begins = epoch.addingTimeInterval(start * day)
        return PaymentTransaction(
            id: id, originalID: 1, productID: "weekly", productType: .autoRenewable, state: .purchased,
            isFinished: true, quantity: 1, purchaseDate: begins, originalPurchaseDate: epoch,
            expirationDate: begins.addingTimeInterval(days * day), revocationDate: revoked ? begins : nil,
            revocationReason: revoked ? 0 : nil, isUpgraded: upgraded, appAccountToken: nil,
            applicationUsername: nil, error: nil, reason: reason, subscriptionGroupID: "g", offer: nil,
            storefront: "USA", environment: "Xcode", idempotencyKey: nil, restoredFromID: nil, createdAt: begins,
            updatedAt: begins, finishedAt: begins, deliveryCount: 0, lastDeliveredAt: nil)
    }

    static func problems(_ periods: [PaymentTransaction]) -> [String] {
        var check = SubscriptionPeriodCheck(periods: ["weekly": SubscriptionPeriod(value: 1, unit: .week)])
        return periods.flatMap { check.problems($0, []) }
    }

    @Test func aRenewalInsideThePeriodBeforeItIsReported() {
        let found = Self.problems([Self.period(1, from: 0, reason: .purchase), Self.period(2, from: 3)])
        #expect(found.count == 1 && found[0].contains("inside the previous period of its chain"))
        #expect(Self.problems([Self.period(1, from: 0, reason: .purchase), Self.period(2, from: 7)]).isEmpty)
    }

    @Test(arguments: [(true, false), (false, true)])
    func aPeriodReplacedByAnUpgradeOrRefundedEndedThen(upgraded: Bool, revoked: Bool) {
        let replaced = Self.period(1, from: 0, days: 30, reason: .purchase, upgraded: upgraded, revoked: revoked)
        #expect(Self.problems([replaced, Self.period(2, from: 3)]).isEmpty)
    }

    @Test func aPeriodMadeEarlierButBegunLaterIsNotTheOneBefore() {
        let approvedLater = Self.period(1, from: 10, days: 30, reason: .purchase)
        #expect(Self.problems([approvedLater, Self.period(2, from: 3)]).isEmpty)
        // After it, its end counts again.
        #expect(Self.problems([approvedLater, Self.period(2, from: 3), Self.period(3, from: 20)]).count == 1)
    }
}
