import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
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
                #expect(
                    renewal.expirationDate == SubscriptionPeriod(value: 1, unit: .month).advance(renewal.purchaseDate))
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
        (.monthlyRenewalEveryThirtySeconds, "P1Y", 360), (.oneSecondIsOneDay, "P1M", 30),
        (.oneSecondIsOneDay, "P1Y", 365),
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
            try await store.session.setAutoRenew(false, for: SampleCatalog.subscription)
            #expect(try store.ledger.isAutoRenewEnabled(for: SampleCatalog.subscription) == false)
            #expect(try store.queue.currentEntitlements().map(\.productID) == [SampleCatalog.subscription])
            #expect(try await store.session.advanceClock(by: 40 * day).isEmpty)
            #expect(try store.queue.currentEntitlements().isEmpty)
            try await store.session.setAutoRenew(true, for: SampleCatalog.subscription)
            #expect(try await store.queue.processSubscriptionRenewals().isEmpty, "a lapsed subscription stays expired")
            #expect(try store.queue.currentEntitlements().isEmpty)
        }
    }

    @Test func expiringNowEndsTheEntitlementAndStopsRenewals() async throws {
        try await StoreFixture.with { store in
            let bought = try await store.buy(SampleCatalog.subscription)
            try store.ledger.advanceClock(by: day)
            let expired = try await store.session.expireSubscription(SampleCatalog.subscription)
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
            #expect(
                downgrade.state == .purchased && downgrade.expirationDate == downgrade.purchaseDate,
                "no period of its own")
            #expect(
                try store.ledger.pendingProductChange(for: SampleCatalog.subscription)
                    == SampleCatalog.basicSubscription)
            #expect(try store.ledger.transaction(pro.id)?.isUpgraded == false)
            #expect(try store.queue.currentEntitlements().map(\.id) == [pro.id])
            let renewed = try await store.session.advanceClock(by: 31 * day)
            #expect(renewed.map(\.productID) == [SampleCatalog.basicSubscription])
            #expect(renewed.first?.purchaseDate == pro.expirationDate && renewed.first?.originalID == basic.id)
            #expect(pro.originalID == basic.id && downgrade.originalID == basic.id, "one original for the group")
            #expect(try store.queue.currentEntitlements().map(\.id) == renewed.map(\.id))
            #expect(try store.ledger.pendingProductChange(for: SampleCatalog.subscription) == nil)
            #expect(try store.ledger.verify() == [])
        }
    }

    @Test func aCrossgradeToAnotherPeriodWaitsForTheRenewal() async throws {
        try await StoreFixture.with { store in
            let monthly = try await store.buy(SampleCatalog.subscription)
            try await store.buy(SampleCatalog.yearlySubscription)
            let renewed = try await store.session.advanceClock(by: 32 * day)
            #expect(renewed.map(\.productID) == [SampleCatalog.yearlySubscription])
            #expect(renewed.first?.purchaseDate == monthly.expirationDate)
            #expect(
                renewed.first?.expirationDate
                    == SubscriptionPeriod(value: 1, unit: .year).advance(monthly.expirationDate!))
        }
    }

    @Test func buyingTheActiveSubscriptionAgainIsRefused() async throws {
        try await StoreFixture.with { store in
            let first = try await store.buy(SampleCatalog.subscription)
            let again = try await store.buy(SampleCatalog.subscription)
            #expect(again.state == .failed && again.error?.message.hasPrefix("Already subscribed") == true)
            #expect(try store.ledger.transaction(first.id)?.isUpgraded == false)
            #expect(try store.queue.currentEntitlements().map(\.id) == [first.id])
        }
    }

    @Test func expiringOrTurningAutoRenewOffDropsAPendingDowngrade() async throws {
        try await StoreFixture.with { store in
            try await store.buy(SampleCatalog.subscription)
            try await store.buy(SampleCatalog.basicSubscription)
            try await store.session.setAutoRenew(false, for: SampleCatalog.subscription)
            #expect(try await store.session.advanceClock(by: 40 * day).isEmpty)
            #expect(try store.queue.currentEntitlements().isEmpty)
        }
        try await StoreFixture.with { store in
            let pro = try await store.buy(SampleCatalog.subscription)
            try await store.buy(SampleCatalog.basicSubscription)
            let expired = try await store.session.expireSubscription(SampleCatalog.basicSubscription)
            #expect(expired.id == pro.id && expired.expirationDate == storeEpoch)
            #expect(try store.ledger.pendingProductChange(for: SampleCatalog.subscription) == nil)
            for _ in 0..<3 { #expect(try await store.queue.processSubscriptionRenewals().isEmpty) }
            #expect(try store.queue.currentEntitlements().isEmpty)
        }
    }

    @Test func realTimeRenewalsKeepTheDayOfTheMonth() async throws {
        try await withTemporaryDirectory { directory in
            let january31 = try #require(ISO8601DateFormatter().date(from: "2027-01-31T12:00:00Z"))
            let configuration = LedgerConfiguration(clock: .fixed(january31))
            try SampleCatalog.ledger(in: directory, configuration: configuration).close()
            let queue = try PaymentQueue(path: directory + "/ledger.sqlite", configuration: configuration)
            let first = try await queue.add(Payment(productID: SampleCatalog.subscription))
            let renewed = try await StoreTestSession(queue: queue).advanceClock(by: 100 * day)
            let formatter = ISO8601DateFormatter()
            #expect(
                ([first] + renewed).compactMap(\.expirationDate).map(formatter.string(from:)) == [
                    "2027-02-28T12:00:00Z", "2027-03-31T12:00:00Z", "2027-04-30T12:00:00Z", "2027-05-31T12:00:00Z",
                ])
        }
    }

    @Test func aLongJumpAtAFastRateRenewsUpToNowWithinTheLimit() async throws {
        try await StoreFixture.with { store in
            try store.session.update { $0.timeRate = .oneRenewalEveryTenSeconds }
            try await store.buy(SampleCatalog.subscription)
            let renewed = try await store.session.advanceClock(by: 100_005)
            #expect(renewed.count == LedgerConfiguration.defaultRenewalLimit, "exactly the limit is allowed")
            #expect(try store.queue.currentEntitlements().map(\.id) == [renewed.last!.id])
        }
    }

    /// The injected clock itself jumped far (the app was not run for a long time at a fast
    /// rate): each launch makes at most the limit, oldest first, and the next one goes on.
    @Test func aLaunchAfterAFarJumpMakesAtMostTheLimitAndTheNextGoesOn() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger.sqlite"
            let before = LedgerConfiguration(clock: .fixed(storeEpoch), renewalLimit: 5)
            try SampleCatalog.ledger(in: directory, configuration: before).close()
            let first = try PaymentQueue(path: path, configuration: before)
            try StoreTestSession(queue: first).update { $0.timeRate = .oneRenewalEveryTenSeconds }
            try await first.add(Payment(productID: SampleCatalog.subscription))
            try first.ledger.close()
            let after = LedgerConfiguration(clock: .fixed(storeEpoch.addingTimeInterval(125)), renewalLimit: 5)
            let second = try PaymentQueue(path: path, configuration: after)
            #expect(second.renewedAtLaunch.count == 5)
            try second.ledger.close()
            let third = try PaymentQueue(path: path, configuration: after)
            #expect(third.renewedAtLaunch.count == 5, "12 were due: 5, then 5, then 2")
            #expect(try await third.processSubscriptionRenewals().count == 2)
            #expect(try await third.processSubscriptionRenewals().isEmpty)
            #expect(try third.ledger.verify() == [])
            try third.ledger.close()
        }
    }

    /// The store clock stops at the end of 9999: however much time passes after it was set
    /// there, it shows that second, and what is bought is dated then.
    @Test func theStoreClockStopsAtTheEndOfYear9999() async throws {
        var random = SplitMix64(seed: 9999)
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger.sqlite"
            try SampleCatalog.ledger(in: directory, configuration: LedgerConfiguration(clock: .fixed(storeEpoch)))
                .close()
            let setter = try PaymentQueue(path: path, configuration: LedgerConfiguration(clock: .fixed(storeEpoch)))
            try await StoreTestSession(queue: setter).setClock(to: Ledger.latestStoreDate)
            try setter.ledger.close()
            // From two seconds to about a thousand years of the injected clock later.
            for later in [2.0] + (0..<5).map({ _ in Double(random.next() % 31_000_000_000) }) {
                let configuration = LedgerConfiguration(clock: .fixed(storeEpoch.addingTimeInterval(later)))
                let queue = try PaymentQueue(path: path, configuration: configuration)
                #expect(try queue.ledger.storeDate() == Ledger.latestStoreDate, "\(later) s later")
                let bought = try await queue.add(Payment(productID: SampleCatalog.consumable))
                #expect(bought.purchaseDate == Ledger.latestStoreDate)
                await #expect(throws: StoreControlError.self) {
                    try await StoreTestSession(queue: queue).advanceClock(by: 1)
                }
                try queue.ledger.close()
            }
        }
    }

    @Test func aMoveThatWouldMakeMoreRenewalsThanTheLimitIsRefusedAndChangesNothing() async throws {
        try await StoreFixture.with { store in
            try store.session.update { $0.timeRate = .oneRenewalEveryTenSeconds }
            try await store.buy(SampleCatalog.subscription)
            let count = try store.ledger.allTransactions().count
            await #expect(throws: StoreControlError.tooManyRenewals(limit: LedgerConfiguration.defaultRenewalLimit)) {
                try await store.session.advanceClock(by: 100_015)
            }
            await #expect(throws: StoreControlError.tooManyRenewals(limit: LedgerConfiguration.defaultRenewalLimit)) {
                try await store.session.setClock(to: Ledger.latestStoreDate)
            }
            #expect(try store.now() == storeEpoch)
            #expect(try store.ledger.allTransactions().count == count)
        }
    }

    @Test func subscriptionControlsRefuseWhatIsNotASubscription() async throws {
        try await StoreFixture.with { store in
            await #expect(throws: StoreControlError.notAutoRenewable(SampleCatalog.nonConsumable)) {
                try await store.session.expireSubscription(SampleCatalog.nonConsumable)
            }
            await #expect(throws: UnknownProductError(productIdentifier: "nope")) {
                try await store.session.setAutoRenew(false, for: "nope")
            }
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
            // A finished transaction is never handed back as updated (StoreKit 1 never
            // redelivers one); the observer hears which products lost their entitlement.
            #expect(observer.callbacks == [.revoked([SampleCatalog.nonConsumable])])
            #expect(try store.queue.currentEntitlements().isEmpty)
            #expect(try store.ledger.latestTransaction(for: SampleCatalog.nonConsumable)?.id == level1.id)
        }
    }

    @Test func aRefundRevokesThePurchaseWithItsRestoredCopies() async throws {
        try await StoreFixture.with { store in
            let level1 = try await store.buy(SampleCatalog.nonConsumable)
            let copies =
                try await store.queue.restoreCompletedTransactions().restored.all()
                + store.queue.restoreCompletedTransactions().restored.all()
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
            await #expect(throws: PaymentQueueError.unknownTransaction(99)) {
                try await store.session.refundTransaction(99)
            }
            let bought = try await store.buy(SampleCatalog.nonConsumable)
            try await store.session.refundTransaction(bought.id)
            await #expect(throws: StoreControlError.alreadyRefunded(bought.id)) {
                try await store.session.refundTransaction(bought.id)
            }
        }
    }

    @Test func aRefundedSubscriptionStopsRenewing() async throws {
        try await StoreFixture.with { store in
            let bought = try await store.buy(SampleCatalog.subscription)
            try await store.session.refundTransaction(bought.id)
            #expect(try await store.session.advanceClock(by: 100 * day).isEmpty)
        }
        try await StoreFixture.with { store in
            try await store.buy(SampleCatalog.subscription)
            let renewal = try #require(try await store.session.advanceClock(by: 31 * day).first)
            try await store.session.refundTransaction(renewal.id)
            #expect(try await store.session.advanceClock(by: 100 * day).isEmpty, "refunding a renewal ends the chain")
            #expect(try store.queue.currentEntitlements().isEmpty)
        }
    }

    @Test func restoredCopiesFollowTheirSubscription() async throws {
        try await StoreFixture.with { store in
            try await store.buy(SampleCatalog.basicSubscription)
            let copy = try #require(await store.queue.restoreCompletedTransactions().restored.all().first)
            try await store.buy(SampleCatalog.subscription)
            #expect(try store.ledger.transaction(copy.id)?.isUpgraded == true, "the upgrade replaced the copy too")
            let pro = try #require(try store.queue.currentEntitlements().first)
            let proCopy = try #require(
                await store.queue.restoreCompletedTransactions().restored.all().first { $0.restoredFromID == pro.id })
            try await store.session.expireSubscription(SampleCatalog.subscription)
            #expect(try store.ledger.transaction(proCopy.id)?.expirationDate == storeEpoch)
            #expect(try store.queue.currentEntitlements().isEmpty)
            #expect(try store.ledger.verify() == [])
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
            try await store.session.setAutoRenew(false, for: SampleCatalog.subscription)
            #expect(
                try store.queue.currentEntitlements().map(\.id) == [level1Again.id, pass.id],
                "an expired subscription is no entitlement")
        }
    }
}

@Suite struct AutomaticRenewalTests {
    @Test func anOpenQueueRenewsBySelfWhenTheStoreClockPassesAPeriod() async throws {
        try await StoreFixture.with { store in
            let observer = CollectingObserver()
            try await store.queue.add(observer)
            let bought = try await store.buy(SampleCatalog.subscription)
            await store.queue.startRenewingAutomatically(checkingAtLeastEvery: .milliseconds(20))
            await store.queue.startRenewingAutomatically(checkingAtLeastEvery: .milliseconds(20))  // no second task
            // Nothing is due yet: the task makes nothing.
            try await Task.sleep(for: .milliseconds(100))
            #expect(observer.updated.filter { $0.reason == .renewal }.isEmpty)
            // The clock moves (as `ledger clock advance` from another process would move it):
            // the renewal arrives without anyone asking.
            try store.ledger.advanceClock(by: 31 * day)
            func renewals() -> [PaymentTransaction] { observer.updated.filter { $0.reason == .renewal } }
            let deadline = Date().addingTimeInterval(60)
            while renewals().isEmpty, Date() < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            let renewals = renewals()
            #expect(renewals.count == 1)
            #expect(renewals.first?.originalID == bought.id && renewals.first?.purchaseDate == bought.expirationDate)
        }
    }

    @Test func theNextRenewalDateIsTheEarliestPeriodEndThatWillRenew() async throws {
        try await StoreFixture.with { store in
            #expect(try store.ledger.nextRenewalDate() == nil)
            let monthly = try await store.buy(SampleCatalog.subscription)
            #expect(try store.ledger.nextRenewalDate() == monthly.expirationDate)
            try await store.session.setAutoRenew(false, for: SampleCatalog.subscription)
            #expect(try store.ledger.nextRenewalDate() == nil)
        }
    }
}

@Suite struct SubscriptionStatusTests {
    @Test func aPendingDowngradeLeavesTheCurrentPeriodAsTheStatus() async throws {
        try await StoreFixture.with { store in
            let pro = try await store.buy(SampleCatalog.subscription)
            let downgrade = try await store.buy(SampleCatalog.basicSubscription)
            #expect(downgrade.expirationDate == downgrade.purchaseDate, "a downgrade waits for the renewal")
            let status = try #require(try store.ledger.subscriptionStatus(forProduct: SampleCatalog.basicSubscription))
            #expect(status.state == .subscribed && status.transaction.id == pro.id)
            #expect(status.willAutoRenew && status.autoRenewProductID == SampleCatalog.basicSubscription)
            #expect(status.renewalDate == pro.expirationDate)
        }
    }

    @Test func aLapsedSubscriptionDoesNotRenewEvenWithAutoRenewTurnedBackOn() async throws {
        try await StoreFixture.with { store in
            try await store.buy(SampleCatalog.subscription)
            try await store.session.setAutoRenew(false, for: SampleCatalog.subscription)
            try await store.session.advanceClock(by: 40 * day)
            try await store.session.setAutoRenew(true, for: SampleCatalog.subscription)
            let status = try #require(try store.ledger.subscriptionStatus(forProduct: SampleCatalog.subscription))
            #expect(status.state == .expired && !status.willAutoRenew && status.renewalDate == nil)
            // It lapsed by the subscriber's choice, as the EXPIRED notification says (VOLUNTARY):
            // turning auto-renew on again later does not change why.
            #expect(status.expirationReason == .autoRenewDisabled)
        }
    }

    @Test func renewalsKeepTheApplicationUsernameSoThatRestoresFindThem() async throws {
        try await StoreFixture.with { store in
            let bought = try await store.queue.add(
                Payment(productID: SampleCatalog.subscription, applicationUsername: "player-9"))
            let renewals = try await store.session.advanceClock(by: 40 * day)
            #expect(renewals.count == 1 && renewals[0].applicationUsername == "player-9")
            let restored = try await store.queue.restoreCompletedTransactions(applicationUsername: "player-9").restored
                .all()
            #expect(restored.compactMap(\.restoredFromID) == [bought.id, renewals[0].id])
        }
    }

    @Test func restoresForDifferentAccountsAtOnceEachRestoreTheirOwn() async throws {
        try await StoreFixture.with { store in
            try await store.queue.add(Payment(productID: SampleCatalog.nonConsumable, applicationUsername: "ann"))
            try await store.queue.add(Payment(productID: SampleCatalog.nonConsumable2, applicationUsername: "bob"))
            async let ann = store.queue.restoreCompletedTransactions(applicationUsername: "ann")
            async let bob = store.queue.restoreCompletedTransactions(applicationUsername: "bob")
            let (annResult, bobResult) = await (ann, bob)
            #expect(try annResult.restored.all().map(\.productID) == [SampleCatalog.nonConsumable])
            #expect(try bobResult.restored.all().map(\.productID) == [SampleCatalog.nonConsumable2])
        }
    }
}

@Suite struct BillingRetryTests {
    private func enterBillingRetry(_ store: StoreFixture, grace: Bool) async throws -> PaymentTransaction {
        try store.session.update {
            $0.billingRetryOnRenewal = true
            $0.billingGracePeriodEnabled = grace
        }
        let bought = try await store.buy(SampleCatalog.subscription)
        let renewals = try await store.session.advanceClock(by: 31 * day)
        #expect(renewals.isEmpty, "the renewal fails on a billing issue")
        return bought
    }

    @Test func aFailedRenewalWaitsInBillingRetryWithoutEntitlementUntilResolved() async throws {
        try await StoreFixture.with { store in
            let bought = try await enterBillingRetry(store, grace: false)
            let status = try #require(try store.ledger.subscriptionStatus(forProduct: SampleCatalog.subscription))
            #expect(
                status.state == .inBillingRetryPeriod && status.isInBillingRetry
                    && status.gracePeriodExpirationDate == nil)
            #expect(status.willAutoRenew && status.renewalDate == nil && status.expirationReason == .billingError)
            #expect(try store.queue.currentEntitlements().isEmpty)
            #expect(try await store.session.advanceClock(by: 5 * day).isEmpty, "no renewal while the issue lasts")
            let renewal = try #require(try await store.session.resolveIssueForTransaction(bought.id))
            #expect(renewal.reason == .renewal && renewal.originalID == bought.id)
            #expect(
                renewal.purchaseDate == storeEpoch.addingTimeInterval(36 * day),
                "it renews now: the days in retry are lost")
            #expect(try store.ledger.subscriptionStatus(forProduct: SampleCatalog.subscription)?.state == .subscribed)
            #expect(try store.queue.currentEntitlements().map(\.id) == [renewal.id])
            #expect(try store.ledger.verify() == [])
        }
    }

    @Test func aGracePeriodKeepsTheEntitlementAndAResolutionInItLosesNoDays() async throws {
        try await StoreFixture.with { store in
            let bought = try await enterBillingRetry(store, grace: true)
            let expiration = try #require(bought.expirationDate)
            let status = try #require(try store.ledger.subscriptionStatus(forProduct: SampleCatalog.subscription))
            #expect(status.state == .inGracePeriod && status.isInBillingRetry)
            #expect(status.gracePeriodExpirationDate == expiration.addingTimeInterval(16 * day))
            #expect(try store.queue.currentEntitlements().map(\.id) == [bought.id])
            let renewal = try #require(try await store.session.resolveIssueForTransaction(bought.id))
            #expect(renewal.purchaseDate == expiration)
            #expect(try store.ledger.verify() == [])
        }
    }

    @Test func afterTheGracePeriodTheEntitlementGoesAndAfterTheRetriesItExpires() async throws {
        try await StoreFixture.with { store in
            let bought = try await enterBillingRetry(store, grace: true)
            try await store.session.advanceClock(by: 17 * day)
            #expect(
                try store.ledger.subscriptionStatus(forProduct: SampleCatalog.subscription)?.state
                    == .inBillingRetryPeriod)
            #expect(try store.queue.currentEntitlements().isEmpty)
            try await store.session.advanceClock(by: 50 * day)
            let expired = try #require(try store.ledger.subscriptionStatus(forProduct: SampleCatalog.subscription))
            #expect(expired.state == .expired && expired.expirationReason == .billingError && !expired.isInBillingRetry)
            await #expect(throws: StoreControlError.noBillingIssue(SampleCatalog.subscription)) {
                try await store.session.resolveIssueForTransaction(bought.id)
            }
            await #expect(throws: StoreControlError.noBillingIssue(SampleCatalog.subscription)) {
                try await store.session.resolveBillingIssue(for: SampleCatalog.subscription)
            }
        }
    }

    /// A forced renewal (Xcode's "force renewal", `ledger subscriptions renew`) fails when
    /// every renewal fails: the period ends now, the group enters billing retry, the failure is
    /// notified once (`DID_FAIL_TO_RENEW`, with `GRACE_PERIOD` when enabled), no transaction is
    /// made nor delivered; forced again while retried, nothing more (the retries keep their
    /// start, and end 60 days after the first failure).
    @Test(arguments: [false, true])
    func aForcedRenewalFailsAsEveryRenewalDoes(grace: Bool) async throws {
        try await StoreFixture.with { store in
            _ = try store.session.set(.notificationURL, to: "http://127.0.0.1:9/n")
            try store.session.update {
                $0.billingRetryOnRenewal = true
                $0.billingGracePeriodEnabled = grace
            }
            let bought = try await store.buy(SampleCatalog.subscription)
            try store.ledger.advanceClock(by: 2 * day)
            let count = try store.ledger.allTransactions().count
            let delivered = try #require(try store.ledger.transaction(bought.id)).deliveryCount
            let ended = try await store.session.forceRenewalOfSubscription(SampleCatalog.subscription)
            let now = storeEpoch.addingTimeInterval(2 * day)
            #expect(ended.id == bought.id && ended.expirationDate == now, "the period ended now")
            #expect(try store.ledger.allTransactions().count == count, "no renewal")
            #expect(try store.ledger.transaction(bought.id)?.deliveryCount == delivered, "observers are not told")
            #expect(try store.ledger.hasBillingIssue(SampleCatalog.subscription))
            let status = try #require(try store.ledger.subscriptionStatus(forProduct: SampleCatalog.subscription))
            #expect(status.state == (grace ? .inGracePeriod : .inBillingRetryPeriod) && status.isInBillingRetry)
            #expect(try store.queue.currentEntitlements().map(\.id) == (grace ? [bought.id] : []))
            let failed = { try store.ledger.notifications().filter { $0.type == "DID_FAIL_TO_RENEW" } }
            #expect(try failed().map(\.subtype) == [grace ? "GRACE_PERIOD" : nil])
            try store.ledger.advanceClock(by: day)
            _ = try await store.session.forceRenewalOfSubscription(SampleCatalog.subscription)
            #expect(try failed().count == 1, "notified once")
            // The retries keep their start: 60 days after the first failure they are over.
            try store.ledger.advanceClock(by: 59 * day + 3_600)
            let over = try #require(try store.ledger.subscriptionStatus(forProduct: SampleCatalog.subscription))
            #expect(over.state == .expired && over.expirationReason == .billingError, "\(over.state)")
            #expect(try store.ledger.verify() == [])
        }
    }

    @Test func anInterruptedPurchaseInAGroupInBillingRetryResolvesAsInterrupted() async throws {
        try await StoreFixture.with { store in
            _ = try await enterBillingRetry(store, grace: false)
            try store.session.update { $0.interruptedPurchasesEnabled = true }
            let interrupted = try await store.buy(SampleCatalog.yearlySubscription)
            #expect(interrupted.state == .failed)
            try await store.queue.finish(interrupted)
            let replacement = try #require(try await store.session.resolveIssueForTransaction(interrupted.id))
            #expect(replacement.productID == SampleCatalog.yearlySubscription && replacement.reason == .purchase)
            #expect(try store.ledger.subscriptionStatus(forProduct: SampleCatalog.subscription)?.state == .subscribed)
        }
    }

    /// Billing retry under every time rate, with random clock jumps and a random resolution
    /// (seeded): the state follows the grace and retry windows, a resolution in grace loses no
    /// days, one after it starts at the resolution, and the ledger verifies.
    @Test(arguments: 0..<10)
    func billingRetryHoldsUnderEveryRate(seed: Int) async throws {
        var random = SplitMix(seed: UInt64(seed) &+ 0xB111)
        let rate = random.pick([
            TimeRate.realTime, .oneHourIsOneDay, .monthlyRenewalEveryFiveMinutes, .oneRenewalEveryMinute,
        ])
        let grace = random.next() % 2 == 0
        try await StoreFixture.with { store in
            try store.session.update {
                $0.timeRate = rate
                $0.billingRetryOnRenewal = true
                $0.billingGracePeriodEnabled = grace
            }
            let bought = try await store.buy(SampleCatalog.subscription)
            let expiration = try #require(bought.expirationDate)
            let jump = expiration.timeIntervalSince(storeEpoch) * Double(1 + random.next() % 40) / 10
            #expect(try await store.session.advanceClock(by: jump).isEmpty)
            let status = try #require(try store.ledger.subscriptionStatus(forProduct: SampleCatalog.subscription))
            let now = try store.now()
            if now < expiration {
                #expect(status.state == .subscribed)
            } else if status.state == .expired {
                #expect(status.expirationReason == .billingError)
                await #expect(throws: StoreControlError.noBillingIssue(SampleCatalog.subscription)) {
                    try await store.session.resolveBillingIssue(for: SampleCatalog.subscription)
                }
            } else {
                let inGrace = status.state == .inGracePeriod
                #expect(inGrace ? grace : status.state == .inBillingRetryPeriod, "\(rate) \(status.state)")
                #expect(try !store.queue.currentEntitlements().isEmpty == inGrace)
                let renewal = try await store.session.resolveBillingIssue(for: SampleCatalog.subscription)
                #expect(renewal.purchaseDate == (inGrace ? expiration : now), "\(rate)")
            }
            #expect(try store.ledger.verify() == [], "\(rate)")
        }
    }
}
