import Foundation
import GRDB
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

/// Seeded random histories of one subscription group (the customer's own purchases and a
/// family member's shares, clock jumps, billing retry and its grace period turned on and off,
/// auto-renew, refunds, resolved billing issues, sharing ended), checking after every step that
/// the rules written in two places agree: what entitles (the entitlements' SQL) is what the
/// statuses call subscribed or in a grace period (Swift), and a subscription is in billing
/// retry exactly when its billing issue can be resolved.
@Suite struct SubscriptionRulesAgreementTests {
    static let day: TimeInterval = 86_400
    static let products = [
        SampleCatalog.subscription, SampleCatalog.yearlySubscription, SampleCatalog.basicSubscription,
    ]

    /// The entitlements' SQL asks of a billing issue what the status asks (`liveBillingIssue`,
    /// then `keepsEntitlement`): still retried, and within its grace period. The store never
    /// makes a grace period that outlasts the retries; with one edited in, a subscription whose
    /// retries are over is expired and entitles nothing (the SQL asked the grace period alone).
    @Test func aGracePeriodOutlastingTheRetriesKeepsNoEntitlementOnceTheyAreOver() async throws {
        try await StoreFixture.with { store in
            try store.session.update {
                $0.billingRetryOnRenewal = true
                $0.billingGracePeriodEnabled = true
            }
            let bought = try await store.buy(SampleCatalog.subscription)
            let end = try #require(bought.expirationDate).ledgerMilliseconds
            _ = try await store.session.advanceClock(
                by: try #require(bought.expirationDate).timeIntervalSince(store.now()) + 60)
            let retrying = try #require(try store.ledger.subscriptionStatus(forProduct: SampleCatalog.subscription))
            #expect(retrying.state == .inGracePeriod)
            #expect(try store.ledger.currentEntitlements().map(\.id) == [bought.id])
            // Retries over 30 seconds after the failed renewal, the grace period ten days later.
            try store.ledger.write { db in
                try db.execute(
                    sql:
                        "UPDATE subscription_renewal SET retry_until = ?, grace_until = ? WHERE billing_issue_since = ?",
                    arguments: [end + 30_000, end + 10 * 86_400_000, end])
            }
            let status = try #require(try store.ledger.subscriptionStatus(forProduct: SampleCatalog.subscription))
            #expect(status.state == .expired && !status.isInBillingRetry)
            #expect(try store.ledger.currentEntitlements().isEmpty)
        }
    }

    @Test(arguments: 0..<32)
    func entitlementsAndStatusesAgreeThroughRandomHistories(seed: UInt64) async throws {
        var random = SplitMix(seed: seed)
        let configuration = LedgerConfiguration(clock: .fixed(Date(timeIntervalSince1970: 1_800_000_000)))
        try await withTemporaryLedger(configuration: configuration) { ledger in
            let session = StoreTestSession(ledger: ledger)
            for step in 0..<80 {
                switch random.next() % 12 {
                case 0, 1: _ = try? await session.buyProduct(Payment(productID: random.pick(Self.products)))
                case 2: _ = try? await session.shareFamilyPurchase(Payment(productID: SampleCatalog.yearlySubscription))
                case 3: _ = try await session.advanceClock(by: Double(1 + random.next() % 90) * Self.day)
                case 4:
                    let retry = random.next() % 2 == 0
                    let grace = random.next() % 2 == 0
                    try session.update {
                        $0.billingRetryOnRenewal = retry
                        $0.billingGracePeriodEnabled = grace
                    }
                case 5: try? await session.setAutoRenew(random.next() % 3 != 0, for: random.pick(Self.products))
                case 6:
                    if let status = try ledger.subscriptionStatuses(forGroup: "pro").randomElement(using: &random) {
                        _ = try? await session.refundTransaction(status.transaction.id)
                    }
                case 7:
                    let shared = try ledger.subscriptionStatuses(forGroup: "pro").filter(\.isFamilyShared)
                    if let status = shared.randomElement(using: &random) {
                        _ = try? await session.revokeFamilySharing(status.transaction.id)
                    }
                case 8:
                    let refunded = try ledger.allTransactions().filter { $0.revocationDate != nil }
                    if let transaction = refunded.randomElement(using: &random) {
                        _ = try? await session.reverseRefund(of: transaction.id)
                    }
                case 9:
                    let product = random.pick(Self.products)
                    _ =
                        try? await
                        (random.next() % 2 == 0
                        ? session.forceRenewalOfSubscription(product) : session.expireSubscription(product))
                case 10:
                    if let status = try ledger.subscriptionStatus(forGroup: "pro") {
                        _ = try? ledger.extendRenewalDate(
                            originalTransactionID: status.transaction.originalID, days: Int(1 + random.next() % 90),
                            reason: 0, requestIdentifier: "extend-\(seed)-\(step)")
                    }
                default: try await checkBillingRetryCanBeResolved(ledger, session, step: step)
                }
                try checkEntitlementsAgree(ledger, step: step, seed: seed)
            }
        }
    }

    /// Every subscribed or in-grace subscription of the group entitles, and nothing else of it.
    private func checkEntitlementsAgree(_ ledger: Ledger, step: Int, seed: UInt64) throws {
        let statuses = try ledger.subscriptionStatuses(forGroup: "pro")
        let entitled = Set(statuses.filter { [.subscribed, .inGracePeriod].contains($0.state) }.map(\.transaction.id))
        let entitlements = Set(try ledger.currentEntitlements().filter { $0.subscriptionGroupID == "pro" }.map(\.id))
        #expect(
            entitled == entitlements,
            "seed \(seed), step \(step): statuses \(statuses.map { ($0.transaction.id, $0.state) })")
    }

    /// A subscription whose status says billing retry has its issue resolved (a renewal), and one
    /// whose status does not is refused, `noBillingIssue`.
    private func checkBillingRetryCanBeResolved(_ ledger: Ledger, _ session: StoreTestSession, step: Int) async throws {
        guard let status = try ledger.subscriptionStatus(forGroup: "pro") else { return }
        let productID = status.transaction.productID
        // The store's controls by product act on this subscription (not on a share of its product).
        guard try ledger.subscriptionStatus(forProduct: productID)?.transaction.id == status.transaction.id else {
            return
        }
        if status.isInBillingRetry {
            let renewal = try await session.resolveBillingIssue(for: productID)
            #expect(renewal.originalID == status.transaction.originalID, "step \(step)")
        } else {
            await #expect(throws: StoreControlError.noBillingIssue(productID), "step \(step)") {
                try await session.resolveBillingIssue(for: productID)
            }
        }
    }
}
