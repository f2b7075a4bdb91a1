import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

/// The outbox of Server Notifications V2: each change the App Store notifies records its
/// notification in the change's commit, with Apple's type and subtype (one scenario per row of
/// `NotifiedEvent`'s table; the offers' rows are in `PromotionalOfferTests`), signed, and only
/// while the store has a notification URL.
@Suite struct NotificationOutboxTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let day: TimeInterval = 86_400
    static let url = "http://127.0.0.1:9/notifications"

    /// A ledger of the sample catalog with a notification URL, its clock fixed at `now`.
    static func withNotifyingStore(
        _ body: (Ledger, StoreTestSession) async throws -> Void
    ) async throws {
        try await withTemporaryLedger(configuration: LedgerConfiguration(clock: .fixed(now))) { ledger in
            let session = StoreTestSession(ledger: ledger)
            _ = try session.set(.notificationURL, to: url)
            try await body(ledger, session)
        }
    }

    /// What a notification's signed payload says: type, subtype, UUID, its transaction's id, and
    /// the subscription status it reports.
    struct Decoded: Equatable {
        let type: String
        let subtype: String?
        let uuid: String
        let transactionID: String?
        let status: Int?

        init(_ notification: ServerNotification) throws {
            let payload = try #require(
                try JSONSerialization.jsonObject(
                    with: try JWS(compactSerialization: notification.signedPayload).payload) as? [String: Any])
            // A summary notification has `summary` in place of `data`.
            let data = try #require((payload["data"] ?? payload["summary"]) as? [String: Any])
            type = try #require(payload["notificationType"] as? String)
            subtype = payload["subtype"] as? String
            uuid = try #require(payload["notificationUUID"] as? String)
            #expect(payload["version"] as? String == "2.0")
            #expect(data["bundleId"] as? String == Ledger.defaultBundleID)
            status = data["status"] as? Int
            transactionID = try (data["signedTransactionInfo"] as? String).map { jws in
                let info = try JSONSerialization.jsonObject(with: try JWS(compactSerialization: jws).payload)
                return try #require((info as? [String: Any])?["transactionId"] as? String)
            }
        }
    }

    /// A charge's notification reports its subscription's status as the status API does, also
    /// when the period just charged is not the latest: an Ask to Buy approved at the instant
    /// another period of the group began, then was refunded, reports that period's refund.
    @Test func aChargeReportsTheStatusOfTheGroupsLatestPeriod() async throws {
        try await Self.withNotifyingStore { ledger, session in
            try session.update { $0.askToBuyEnabled = true }
            let deferred = try await PaymentQueue(ledger: ledger).add(Payment(productID: SampleCatalog.subscription))
            #expect(deferred.state == .deferred)
            try session.update { $0.askToBuyEnabled = false }
            let other = try await session.buyProduct(Payment(productID: SampleCatalog.yearlySubscription))
            try await session.refundTransaction(other.id)
            let approved = try await session.approveAskToBuyTransaction(deferred.id)
            #expect(approved.state == .purchased && approved.purchaseDate == other.purchaseDate, "the same instant")
            let status = try #require(try ledger.subscriptionStatus(forGroup: "pro"))
            #expect(status.transaction.id == other.id && status.state == .revoked)
            let charge = try Decoded(try #require(try ledger.notifications().last))
            #expect(charge.transactionID == String(approved.id))
            #expect(
                charge.status == 5, "revoked, as the status says (it reported 1, active, when it took its own period)")
        }
    }

    /// Each row's scenario: it drives the store and returns the transaction the row's
    /// notification must report (`nil` for the test notification).
    static let scenarios: [NotifiedEvent: @Sendable (Ledger, StoreTestSession) async throws -> UInt64?] = [
        .subscribedFirstTime: { _, session in
            try await session.buyProduct(Payment(productID: SampleCatalog.subscription)).id
        },
        .offerRedeemedFirstTime: { _, session in
            var payment = Payment(productID: SampleCatalog.subscription)
            payment.codeOffer = "FREEMONTH"
            return try await session.buyProduct(payment).id
        },
        .resubscribed: { _, session in
            _ = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            _ = try await session.expireSubscription(SampleCatalog.subscription)
            return try await session.buyProduct(Payment(productID: SampleCatalog.subscription)).id
        },
        .upgraded: { _, session in
            _ = try await session.buyProduct(Payment(productID: SampleCatalog.basicSubscription))
            return try await session.buyProduct(Payment(productID: SampleCatalog.subscription)).id
        },
        // A downgrade, and buying the current product again to cancel it, only change the next
        // renewal: notified about the period the customer has.
        .downgraded: { _, session in
            let current = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            _ = try await session.buyProduct(Payment(productID: SampleCatalog.basicSubscription))
            return current.id
        },
        .downgradeCancelled: { _, session in
            let current = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            _ = try await session.buyProduct(Payment(productID: SampleCatalog.basicSubscription))
            _ = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            return current.id
        },
        .renewed: { _, session in
            _ = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            return try await session.advanceClock(by: 32 * day).last?.id
        },
        .renewedAfterBillingIssue: { _, session in
            try session.update { $0.billingRetryOnRenewal = true }
            _ = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            _ = try await session.advanceClock(by: 32 * day)
            try session.update { $0.billingRetryOnRenewal = false }
            return try await session.resolveBillingIssue(for: SampleCatalog.subscription).id
        },
        .autoRenewTurnedOff: { _, session in
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            try await session.setAutoRenew(false, for: SampleCatalog.subscription)
            return bought.id
        },
        .autoRenewTurnedOn: { _, session in
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            try await session.setAutoRenew(false, for: SampleCatalog.subscription)
            try await session.setAutoRenew(true, for: SampleCatalog.subscription)
            return bought.id
        },
        .renewalFailed: { _, session in
            try session.update { $0.billingRetryOnRenewal = true }
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            _ = try await session.advanceClock(by: 32 * day)
            return bought.id
        },
        .renewalFailedInGracePeriod: { _, session in
            try session.update {
                $0.billingRetryOnRenewal = true
                $0.billingGracePeriodEnabled = true
            }
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            _ = try await session.advanceClock(by: 32 * day)
            return bought.id
        },
        .gracePeriodEnded: { _, session in
            try session.update {
                $0.billingRetryOnRenewal = true
                $0.billingGracePeriodEnabled = true
            }
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            _ = try await session.advanceClock(by: 32 * day)
            _ = try await session.advanceClock(by: 20 * day)
            return bought.id
        },
        .expiredVoluntarily: { _, session in
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            try await session.setAutoRenew(false, for: SampleCatalog.subscription)
            _ = try await session.advanceClock(by: 32 * day)
            return bought.id
        },
        .expiredAfterBillingRetry: { _, session in
            try session.update { $0.billingRetryOnRenewal = true }
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            _ = try await session.advanceClock(by: 32 * day)
            _ = try await session.advanceClock(by: 80 * day)
            return bought.id
        },
        .priceIncreasePending: { _, session in
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            try await session.requestPriceIncrease(for: SampleCatalog.subscription, price: 6)
            return bought.id
        },
        .priceIncreaseAccepted: { _, session in
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            try await session.requestPriceIncrease(for: SampleCatalog.subscription, price: 6)
            return try await session.answerPriceIncrease(for: SampleCatalog.subscription, agree: true).id
        },
        .expiredAfterPriceIncrease: { _, session in
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            try await session.requestPriceIncrease(for: SampleCatalog.subscription, price: 6)
            _ = try await session.advanceClock(by: 32 * day)
            return bought.id
        },
        .refunded: { _, session in
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.nonConsumable))
            return try await session.refundTransaction(bought.id).id
        },
        .refundReversed: { _, session in
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.nonConsumable))
            try await session.refundTransaction(bought.id)
            return try await session.reverseRefund(of: bought.id).id
        },
        .familySharingRevoked: { _, session in
            let shared = try await session.shareFamilyPurchase(Payment(productID: SampleCatalog.nonConsumable2))
            return try await session.revokeFamilySharing(shared.id).first?.id
        },
        .refundRequested: { _, session in
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.consumable))
            return try await session.requestRefund(bought.id, reason: .fulfillmentIssue).id
        },
        .refundDeclined: { _, session in
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.nonConsumable))
            try await session.requestRefund(bought.id)
            return try await session.decideRefundRequest(bought.id, .decline).id
        },
        .renewalExtended: { ledger, session in
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            _ = try ledger.extendRenewalDate(
                originalTransactionID: bought.id, days: 5, reason: 3, requestIdentifier: "outage")
            return bought.id
        },
        .renewalExtensionSummary: { ledger, session in
            _ = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            _ = try ledger.extendRenewalDatesForActiveSubscribers(
                productID: SampleCatalog.subscription, days: 5, reason: 3, requestIdentifier: "mass")
            return nil
        },
        .oneTimeCharge: { _, session in
            try await session.buyProduct(Payment(productID: SampleCatalog.consumable)).id
        },
        .test: { ledger, _ in
            _ = try ledger.requestTestNotification()
            return nil
        },
    ]

    static let offerRows: Set<NotifiedEvent> = [
        .offerRedeemedToResubscribe, .offerRedeemedWithUpgrade, .offerRedeemedWithDowngrade,
        .offerRedeemedForActiveSubscription,
    ]

    @Test func everyRowOfTheTableHasAScenario() {
        #expect(Set(Self.scenarios.keys).union(Self.offerRows) == Set(NotifiedEvent.allCases))
    }

    @Test(arguments: NotifiedEvent.allCases.filter { !offerRows.contains($0) })
    func eachChangeRecordsItsNotification(_ event: NotifiedEvent) async throws {
        try await Self.withNotifyingStore { ledger, session in
            let scenario = try #require(Self.scenarios[event])
            let transaction = try await scenario(ledger, session)
            let all = try ledger.notifications()
            let matching = all.filter {
                $0.type == event.notification.type && $0.subtype == event.notification.subtype
            }
            try #require(matching.count == 1, "\(event): \(all.map { "\($0.type)/\($0.subtype ?? "-")" })")
            let notification = matching[0]
            let decoded = try Decoded(notification)
            #expect(decoded.type == event.notification.type && decoded.subtype == event.notification.subtype)
            #expect(decoded.uuid == notification.uuid.uuidString.lowercased())
            #expect(decoded.transactionID == transaction.map(String.init), "\(event)")
            #expect(notification.transactionID == transaction)
            #expect(notification.status == .pending && notification.attempts.isEmpty)
            #expect(Set(all.map(\.uuid)).count == all.count, "every notification has its own UUID")
        }
    }

    @Test func subscriptionNotificationsCarryTheStatusTheyReport() async throws {
        try await Self.withNotifyingStore { ledger, session in
            _ = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            try await session.setAutoRenew(false, for: SampleCatalog.subscription)
            _ = try await session.advanceClock(by: 32 * Self.day)
            #expect(try ledger.notifications().map { try Decoded($0).status } == [1, 1, 2])
        }
    }

    @Test func withoutANotificationURLNothingIsRecorded() async throws {
        try await withTemporaryLedger(configuration: LedgerConfiguration(clock: .fixed(Self.now))) { ledger in
            let session = StoreTestSession(ledger: ledger)
            _ = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            _ = try await session.advanceClock(by: 32 * Self.day)
            #expect(try ledger.notifications().isEmpty)
            #expect(throws: NotificationError.noURL) { try ledger.requestTestNotification() }
            _ = try session.set(.notificationURL, to: Self.url)
            _ = try await session.advanceClock(by: 32 * Self.day)
            #expect(try ledger.notifications().map(\.type) == ["DID_RENEW"], "only what happened after the URL was set")
            _ = try session.set(.notificationURL, to: "none")
            _ = try await session.buyProduct(Payment(productID: SampleCatalog.consumable))
            #expect(try ledger.notifications().count == 1)
        }
    }

    @Test func passingTimeIsNotifiedOnceHoweverOftenTheStoreLooks() async throws {
        try await Self.withNotifyingStore { ledger, session in
            _ = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            try await session.setAutoRenew(false, for: SampleCatalog.subscription)
            _ = try await session.advanceClock(by: 32 * Self.day)
            _ = try await session.advanceClock(by: 1)
            #expect(try ledger.settleDueChanges() == false, "nothing due: no write")
            _ = try await session.advanceClock(by: 40 * Self.day)
            #expect(try ledger.notifications().filter { $0.type == "EXPIRED" }.count == 1)
        }
    }

    /// The due notifications come the longest due first (a retry after newer ones due before
    /// it), leaving out those a running sender is attempting.
    @Test func dueNotificationsAreTheLongestDueFirstLeavingOutThoseAttempted() async throws {
        try await Self.withNotifyingStore { ledger, session in
            for _ in 0..<2 { _ = try await session.buyProduct(Payment(productID: SampleCatalog.consumable)) }
            let (first, second) = try {
                let all = try ledger.notifications()
                return (all[0], all[1])
            }()
            #expect(try ledger.dueNotifications(limit: 10).map(\.sequence) == [first.sequence, second.sequence])
            #expect(
                try ledger.dueNotifications(limit: 10, excluding: [first.sequence]).map(\.sequence) == [second.sequence]
            )
            #expect(try ledger.dueNotifications(limit: 1).map(\.sequence) == [first.sequence])
            // The first fails (due again in an hour), the second is delivered.
            _ = try ledger.recordAttempts([
                NotificationAttemptOutcome(notification: first, result: .unsuccessfulHTTPResponseCode, httpStatus: 500),
                NotificationAttemptOutcome(notification: second, result: .success, httpStatus: 200),
            ])
            _ = try await session.advanceClock(by: 1_800)
            _ = try await session.buyProduct(Payment(productID: SampleCatalog.consumable))
            let third = try ledger.notifications()[2]
            #expect(try ledger.dueNotifications(limit: 10).map(\.sequence) == [third.sequence])
            _ = try await session.advanceClock(by: 5_400)
            // Due half an hour after the store's start against an hour: the third goes first.
            #expect(try ledger.dueNotifications(limit: 10).map(\.sequence) == [third.sequence, first.sequence])
            #expect(
                try ledger.dueNotifications(limit: 10, excluding: [third.sequence, 999]).map(\.sequence) == [
                    first.sequence
                ])
        }
    }

    @Test func aRefusedChangeRecordsNoNotification() async throws {
        try await Self.withNotifyingStore { ledger, session in
            _ = try await session.buyProduct(Payment(productID: SampleCatalog.nonConsumable))
            let before = try ledger.notifications()
            await #expect(throws: (any Error).self) { try await session.refundTransaction(999) }
            await #expect(throws: (any Error).self) {
                try await session.buyProduct(Payment(productID: SampleCatalog.nonConsumable, quantity: 0))
            }
            #expect(try ledger.notifications() == before)
        }
    }

    @Test func aBadNotificationURLIsRefusedAndChangesNothing() async throws {
        try await withTemporaryLedger { ledger in
            let session = StoreTestSession(ledger: ledger)
            for bad in [
                "ftp://host/x", "http://", "not a url", "http://user:pw@host/",
                "http://h/" + String(repeating: "a", count: 2048),
            ] {
                #expect(throws: StoreSettingError.self, "\(bad)") { try session.set(.notificationURL, to: bad) }
            }
            let url = try session.settings().notificationURL
            #expect(url == nil)
        }
    }
}
