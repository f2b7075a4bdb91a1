import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

/// A mass extension goes over the store's customers in batches, one commit each: the request is
/// recorded with its first batch, runs while batches are left, extends each subscriber once
/// whatever stops it between batches, and is summarized once, after the last.
@Suite struct MassExtensionBatchTests {
    /// Subscribers of the sample catalog's monthly subscription: three batches' worth.
    static let subscribers = 1_100

    static func withStoreOfSubscribers(_ body: (Ledger) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try SampleCatalog.ledger(in: directory, configuration: StoreFixture.configuration)
            defer { try? ledger.close() }
            _ = try StoreTestSession(ledger: ledger).set(.notificationURL, to: "http://127.0.0.1:9/n")
            try ledger.appendSyntheticCustomers(
                count: subscribers, purchasesEach: 1, productID: SampleCatalog.subscription, prefix: "subscriber")
            try await body(ledger)
        }
    }

    @Test func aMassExtensionRunsInBatchesAndIsSummarizedAfterTheLast() async throws {
        try await Self.withStoreOfSubscribers { ledger in
            let first = try ledger.extendRenewalDatesForActiveSubscribers(
                productID: SampleCatalog.subscription, days: 5, reason: 1, requestIdentifier: "outage", batches: 1)
            // The store's first customer (`default`) holds nothing: 499 subscribers in the first 500.
            #expect(first.completeDate == nil && first.succeededCount == 499 && first.failedCount == 0)
            #expect(try Self.summaries(ledger) == 0, "no summary while it runs")
            let again = try ledger.extendRenewalDatesForActiveSubscribers(
                productID: SampleCatalog.subscription, days: 5, reason: 1, requestIdentifier: "outage", batches: 1)
            #expect(again.completeDate == nil && again.succeededCount == 999, "the same request: one more batch")
            #expect(try ledger.continueMassRenewalExtension())
            #expect(try ledger.continueMassRenewalExtension() == false, "none left")
            let done = try #require(try ledger.massRenewalExtension(requestIdentifier: "outage"))
            #expect(done.completeDate == (try ledger.storeDate()) && done.succeededCount == Self.subscribers)
            #expect(try Self.summaries(ledger) == 1)
            #expect(
                try ledger.notifications(limit: 5_000).filter { $0.type == "RENEWAL_EXTENDED" }.count
                    == Self.subscribers, "each subscriber extended once")
            #expect(try ledger.verify() == [])
        }
    }

    /// A process that stops between batches (killed, or closed) leaves the request running; the
    /// next one to go on (`ledger serve`'s sender, or the same request asked again) goes on from
    /// the customer after the last batch: nobody is extended twice.
    @Test func aMassExtensionStoppedBetweenBatchesGoesOnWhereItStopped() async throws {
        try await Self.withStoreOfSubscribers { ledger in
            _ = try ledger.extendRenewalDatesForActiveSubscribers(
                productID: SampleCatalog.subscription, days: 5, reason: 1, requestIdentifier: "outage", batches: 1)
            let path = ledger.path
            try ledger.close()
            let reopened = try Ledger.open(at: path, configuration: StoreFixture.configuration)
            defer { try? reopened.close() }
            let done = try reopened.extendRenewalDatesForActiveSubscribers(
                productID: SampleCatalog.subscription, days: 5, reason: 1, requestIdentifier: "outage")
            #expect(done.completeDate != nil && done.succeededCount == Self.subscribers && done.failedCount == 0)
            let extended = try reopened.notifications(limit: 5_000).filter { $0.type == "RENEWAL_EXTENDED" }
            #expect(
                Set(extended.compactMap(\.originalTransactionID)).count == Self.subscribers
                    && extended.count == Self.subscribers, "each subscriber extended once")
            #expect(try Self.summaries(reopened) == 1)
        }
    }

    static func summaries(_ ledger: Ledger) throws -> Int {
        try ledger.notifications(limit: 5_000).filter { $0.type == "RENEWAL_EXTENSION" && $0.subtype == "SUMMARY" }
            .count
    }
}
