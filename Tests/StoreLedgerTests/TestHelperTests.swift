import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import Testing

/// The helpers `LedgerTesting` offers to purchase tests.
@Suite struct TestHelperTests {
    @Test func aTemporaryLedgerHoldsTheSampleCatalogAndIsRemovedAfterwards() async throws {
        let path = try await withTemporaryLedger { ledger in
            let queue = try PaymentQueue(ledger: ledger)
            let observer = CollectingObserver()
            try await queue.add(observer)
            let bought = try await queue.add(Payment(productID: SampleCatalog.consumable))
            await queue.waitUntilNotified()
            #expect(bought.state == .purchased && observer.updated.last?.id == bought.id)
            #expect(observer.committedAtNotification.last??.state == .purchased)
            #expect(try ledger.counts().products == 7)
            return ledger.path
        }
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(!FileManager.default.fileExists(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path))
    }

    @Test func aTemporaryLedgerTakesAnyCatalogAndRefusesABadOne() async throws {
        let one = #"{"products": [{"productID": "tip", "type": "Consumable", "displayPrice": "0.99"}]}"#
        #expect(try await withTemporaryLedger(catalog: one) { try $0.counts().products } == 1)
        await #expect(throws: CatalogError.self) { try await withTemporaryLedger(catalog: "{") { _ in } }
    }
}
