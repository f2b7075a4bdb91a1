import Foundation
import LedgerTestSupport
import StoreLedger
import Testing

@Suite struct SubscriptionTests {
    @Test func aPurchaseRunsOnePeriodAndRenewalsChainAcrossALongClockJump() async throws {
        try await StoreFixture.with { store in
            let first = try await store.buy(SampleCatalog.subscription)
            #expect(first.expirationDate == SubscriptionPeriod(value: 1, unit: .month).advance(storeEpoch))
            let observer = CollectingObserver()
            try await store.queue.add(observer)
            let renewed = try await store.session.advanceClock(by: 95 * day)
            #expect(renewed.count == 3)
            var previous = first
            for renewal in renewed {
                #expect(renewal.reason == .renewal && renewal.state == .purchased && !renewal.isFinished)
                #expect(renewal.originalID == first.id && renewal.originalPurchaseDate == first.purchaseDate)
                #expect(renewal.purchaseDate == previous.expirationDate)
                #expect(renewal.expirationDate == SubscriptionPeriod(value: 1, unit: .month).advance(renewal.purchaseDate))
                #expect(renewal.id > previous.id)
                previous = renewal
            }
            #expect(observer.updated.suffix(3).map(\.id) == renewed.map(\.id))
            #expect(try await store.queue.processSubscriptionRenewals().isEmpty, "nothing more is due")
            #expect(try store.ledger.verify() == [])
        }
    }

    @Test func renewalsThatFellDueWhileClosedAreMadeAtLaunch() async throws {
        try await StoreFixture.with { store in
            try await store.buy(SampleCatalog.subscription)
            try store.ledger.advanceClock(by: 40 * day)
            let relaunched = try store.relaunch()
            #expect(relaunched.renewedAtLaunch.count == 1)
        }
    }

    @Test(arguments: [
        (TimeRate.monthlyRenewalEveryThirtySeconds, "P1M", 30.0), (.monthlyRenewalEveryThirtySeconds, "P1W", 10),
        (.monthlyRenewalEveryThirtySeconds, "P1Y", 360), (.oneSecondIsOneDay, "P1M", 30), (.oneSecondIsOneDay, "P1Y", 365),
        (.oneRenewalEveryTwoSeconds, "P1Y", 2), (.monthlyRenewalEveryHour, "P2M", 7_200),
    ])
    func timeRatesCompressPeriodsAsXcodeDoes(rate: TimeRate, period: String, seconds: Double) throws {
        let end = rate.end(of: try #require(SubscriptionPeriod(iso8601: period)), startingAt: storeEpoch)
        #expect(end.timeIntervalSince(storeEpoch) == seconds)
    }

    @Test func aFastTimeRateRenewsAMonthEveryThirtySeconds() async throws {
        try await StoreFixture.with { store in
            try store.session.update { $0.timeRate = .monthlyRenewalEveryThirtySeconds }
            let first = try await store.buy(SampleCatalog.subscription)
            #expect(first.expirationDate == storeEpoch.addingTimeInterval(30))
            #expect(try await store.session.advanceClock(by: 95).count == 3)
        }
    }

    @Test func withAutoRenewOffTheSubscriptionExpires() async throws {
        try await StoreFixture.with { store in
            try await store.buy(SampleCatalog.subscription)
            try store.session.setAutoRenew(false, for: SampleCatalog.subscription)
            #expect(try store.ledger.isAutoRenewEnabled(for: SampleCatalog.subscription) == false)
            #expect(try store.queue.currentEntitlements().map(\.productID) == [SampleCatalog.subscription])
            #expect(try await store.session.advanceClock(by: 40 * day).isEmpty)
            #expect(try store.queue.currentEntitlements().isEmpty)
            try store.session.setAutoRenew(true, for: SampleCatalog.subscription)
            #expect(try await store.queue.processSubscriptionRenewals().count == 1, "turned back on, it renews from where it stopped")
        }
    }

    @Test func expiringNowEndsTheEntitlementAndStopsRenewals() async throws {
        try await StoreFixture.with { store in
            let bought = try await store.buy(SampleCatalog.subscription)
            try store.ledger.advanceClock(by: day)
            let expired = try store.session.expireSubscription(SampleCatalog.subscription)
            #expect(expired.id == bought.id && expired.expirationDate == storeEpoch.addingTimeInterval(day))
            #expect(try store.queue.currentEntitlements().isEmpty)
            #expect(try await store.session.advanceClock(by: 60 * day).isEmpty)
            #expect(try store.ledger.events(of: bought.id).map(\.kind).contains(.expirationChanged))
        }
    }

    @Test func aForcedRenewalStartsANewPeriodNow() async throws {
        try await StoreFixture.with { store in
            let bought = try await store.buy(SampleCatalog.subscription)
            try store.ledger.advanceClock(by: 2 * day)
            let renewal = try await store.session.forceRenewalOfSubscription(SampleCatalog.subscription)
            let now = storeEpoch.addingTimeInterval(2 * day)
            #expect(renewal.purchaseDate == now && renewal.originalID == bought.id && renewal.reason == .renewal)
            #expect(try store.ledger.transaction(bought.id)?.expirationDate == now)
            #expect(try store.queue.currentEntitlements().map(\.id) == [renewal.id])
        }
    }

    @Test func anUpgradeTakesEffectAtOnceAndADowngradeAtTheNextRenewal() async throws {
        try await StoreFixture.with { store in
            let basic = try await store.buy(SampleCatalog.basicSubscription)
            try store.ledger.advanceClock(by: day)
            let pro = try await store.buy(SampleCatalog.subscription)
            #expect(pro.purchaseDate == storeEpoch.addingTimeInterval(day), "an upgrade starts now")
            #expect(try store.ledger.transaction(basic.id)?.isUpgraded == true)
            #expect(try store.queue.currentEntitlements().map(\.id) == [pro.id])

            let downgrade = try await store.buy(SampleCatalog.basicSubscription)
            #expect(downgrade.purchaseDate == pro.expirationDate, "a downgrade starts at the next renewal")
            #expect(try store.ledger.transaction(pro.id)?.isUpgraded == false)
            #expect(try store.queue.currentEntitlements().map(\.id) == [pro.id])
            try await store.session.advanceClock(by: 31 * day)
            #expect(try store.queue.currentEntitlements().map(\.id) == [downgrade.id])
            #expect(try store.ledger.verify() == [])
        }
    }

    @Test func aCrossgradeToAnotherPeriodWaitsForTheRenewal() async throws {
        try await StoreFixture.with { store in
            let monthly = try await store.buy(SampleCatalog.subscription)
            let yearly = try await store.buy(SampleCatalog.yearlySubscription)
            #expect(yearly.purchaseDate == monthly.expirationDate)
            #expect(yearly.expirationDate == SubscriptionPeriod(value: 1, unit: .year).advance(monthly.expirationDate!))
        }
    }

    @Test func subscriptionControlsRefuseWhatIsNotASubscription() async throws {
        try await StoreFixture.with { store in
            #expect(throws: StoreControlError.notAutoRenewable(SampleCatalog.nonConsumable)) {
                try store.session.expireSubscription(SampleCatalog.nonConsumable)
            }
            #expect(throws: StoreControlError.unknownProduct("nope")) { try store.session.setAutoRenew(false, for: "nope") }
            await #expect(throws: StoreControlError.noSubscription(SampleCatalog.subscription)) {
                try await store.session.forceRenewalOfSubscription(SampleCatalog.subscription)
            }
        }
    }
}

@Suite struct RefundAndEntitlementTests {
    @Test func aRefundRemovesTheEntitlementAndIsDelivered() async throws {
        try await StoreFixture.with { store in
            let level1 = try await store.buy(SampleCatalog.nonConsumable)
            try await store.queue.finish(level1)
            let observer = CollectingObserver()
            try await store.queue.add(observer)
            let refunded = try await store.session.refundTransaction(level1.id, reason: .developerIssue)
            #expect(refunded.state == .purchased && refunded.isFinished)
            #expect(refunded.revocationDate == storeEpoch && refunded.revocationReason == 1)
            #expect(observer.updated.last?.id == level1.id && observer.updated.last?.revocationDate == storeEpoch)
            #expect(try store.queue.currentEntitlements().isEmpty)
            #expect(try store.ledger.latestTransaction(for: SampleCatalog.nonConsumable)?.id == level1.id)
        }
    }

    @Test func aRefundRevokesThePurchaseWithItsRestoredCopies() async throws {
        try await StoreFixture.with { store in
            let level1 = try await store.buy(SampleCatalog.nonConsumable)
            let copies = await store.queue.restoreCompletedTransactions().restored + store.queue.restoreCompletedTransactions().restored
            let refunded = try await store.session.refundTransaction(copies[0].id)
            #expect(refunded.id == copies[0].id)
            for id in [level1.id] + copies.map(\.id) {
                #expect(try store.ledger.transaction(id)?.revocationDate == storeEpoch, "\(id) is still entitled")
            }
            #expect(try store.queue.currentEntitlements().isEmpty)
            #expect(try store.ledger.verify() == [])
        }
    }

    @Test func refundsAreRefusedForWhatCannotBeRefunded() async throws {
        try await StoreFixture.with { store in
            let failed = try await store.buy(SampleCatalog.nonConsumable, outcome: .userCancelled)
            await #expect(throws: StoreControlError.cannotRefund(failed.id, state: .failed)) {
                try await store.session.refundTransaction(failed.id)
            }
            await #expect(throws: PaymentQueueError.unknownTransaction(99)) { try await store.session.refundTransaction(99) }
            let bought = try await store.buy(SampleCatalog.nonConsumable)
            try await store.session.refundTransaction(bought.id)
            await #expect(throws: StoreControlError.alreadyRefunded(bought.id)) { try await store.session.refundTransaction(bought.id) }
        }
    }

    @Test func aRefundedSubscriptionStopsRenewing() async throws {
        try await StoreFixture.with { store in
            let bought = try await store.buy(SampleCatalog.subscription)
            try await store.session.refundTransaction(bought.id)
            #expect(try await store.session.advanceClock(by: 100 * day).isEmpty)
        }
    }

    @Test func entitlementsFollowStoreKit2sRules() async throws {
        try await StoreFixture.with { store in
            try await store.buy(SampleCatalog.consumable)
            try await store.buy(SampleCatalog.nonConsumable)
            let level1Again = try await store.buy(SampleCatalog.nonConsumable)
            let pass = try await store.buy(SampleCatalog.nonRenewing)
            try await store.queue.finish(pass)
            let pro = try await store.buy(SampleCatalog.subscription)
            try await store.buy(SampleCatalog.nonConsumable2, outcome: .deferred)
            #expect(try store.queue.currentEntitlements().map(\.id) == [level1Again.id, pro.id, pass.id])
            try store.ledger.advanceClock(by: 40 * day)
            try store.session.setAutoRenew(false, for: SampleCatalog.subscription)
            #expect(try store.queue.currentEntitlements().map(\.id) == [level1Again.id, pass.id], "an expired subscription is no entitlement")
        }
    }
}
