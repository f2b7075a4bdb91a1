import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

/// What the store lists as open to a customer is what a purchase redeems, through seeded random
/// histories of the sample group (purchases of its three subscriptions, clock jumps, auto-renew
/// turned off and on, refunds). After every step each win-back offer of the basic subscription
/// is tried on a copy of the ledger (`backup(to:)`), so that the history goes on unchanged: a
/// purchase redeems it exactly when the group's status lists it (`eligibleWinBackOfferIDs`).
/// The introductory offer needs no such test: its list and its purchase ask one function
/// (`hasBought`).
@Suite struct OfferEligibilityAgreementTests {
    static let day: TimeInterval = 86_400
    /// The basic subscription, whose churned customers get its win-back offers, twice as often.
    static let products = [
        SampleCatalog.subscription, SampleCatalog.yearlySubscription, SampleCatalog.basicSubscription,
        SampleCatalog.basicSubscription,
    ]
    static let winBackOffers = ["COMEBACK_FREE", "COMEBACK_HALF"]

    @Test(arguments: 0..<6)
    func aWinBackOfferIsRedeemedExactlyWhenTheStatusListsIt(seed: UInt64) async throws {
        var random = SplitMix(seed: seed)
        try await StoreFixture.with { store in
            // Each history begins with a churned subscriber of the basic subscription, whom its
            // offers are for, then goes its random way.
            let first = try await store.session.buyProduct(Payment(productID: SampleCatalog.basicSubscription))
            try await store.session.setAutoRenew(false, for: SampleCatalog.basicSubscription)
            let lapse = Double(1 + random.next() % 60) * Self.day
            _ = try await store.session.advanceClock(
                by: try #require(first.expirationDate).timeIntervalSince(try store.now()) + lapse)
            var listedOnce = false
            for step in 0..<40 {
                let listed = try store.ledger.subscriptionStatus(forGroup: "pro")?.eligibleWinBackOfferIDs ?? []
                listedOnce = listedOnce || !listed.isEmpty
                for offer in Self.winBackOffers {
                    let redeemed = try await Self.redeems(offer, onACopyOf: store, named: "\(step)-\(offer)")
                    #expect(
                        redeemed == listed.contains(offer), "seed \(seed), step \(step): \(offer), listed \(listed)")
                }
                switch random.next() % 8 {
                case 0, 1: _ = try? await store.session.buyProduct(Payment(productID: random.pick(Self.products)))
                case 2, 3: _ = try await store.session.advanceClock(by: Double(1 + random.next() % 200) * Self.day)
                case 4, 5: try? await store.session.setAutoRenew(false, for: random.pick(Self.products))
                case 6: try? await store.session.setAutoRenew(true, for: random.pick(Self.products))
                default:
                    if let latest = try store.ledger.subscriptionStatus(forGroup: "pro")?.transaction {
                        _ = try? await store.session.refundTransaction(latest.id)
                    }
                }
            }
            #expect(listedOnce, "a history that never lists an offer tests the refusals alone")
        }
    }

    /// Whether a purchase of the basic subscription redeeming `offer` is made, on a copy of
    /// `store`'s ledger (removed after).
    static func redeems(_ offer: String, onACopyOf store: StoreFixture, named name: String) async throws -> Bool {
        let path = store.directory + "/copy-\(name).sqlite"
        try store.ledger.backup(to: path)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let copy = try Ledger.open(at: path, configuration: StoreFixture.configuration)
        defer { try? copy.close() }
        var payment = Payment(productID: SampleCatalog.basicSubscription)
        payment.winBackOffer = offer
        do {
            let bought = try await StoreTestSession(ledger: copy).buyProduct(payment)
            return bought.state == .purchased && bought.offer?.type == .winBack
        } catch is PromotionalOfferError {
            return false
        }
    }
}
