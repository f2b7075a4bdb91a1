import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import Testing

/// The README's embedding example, compiled and run, so that the front door stays true.
final class ReadmeStoreObserver: PaymentTransactionObserver {
    let delivered = DeliveredContent()

    func paymentQueue(_ queue: PaymentQueue, updatedTransactions transactions: [PaymentTransaction]) async {
        for transaction in transactions {
            switch transaction.state {
            case .purchased, .restored:
                await delivered.unlockContent(for: transaction.productID, transactionID: transaction.id)
                _ = try? await queue.finish(transaction)
            case .failed:
                _ = try? await queue.finish(transaction)
            case .purchasing, .deferred:
                break
            }
        }
    }
}

/// Content delivery keyed on the transaction id, so a redelivery unlocks nothing twice.
actor DeliveredContent {
    private(set) var unlocked: [UInt64: String] = [:]

    func unlockContent(for productID: String, transactionID: UInt64) {
        unlocked[transactionID] = productID
    }
}

@Suite struct ReadmeExampleTests {
    @Test func theEmbeddingExampleWorks() async throws {
        try await withTemporaryDirectory { directory in
            let catalogFile = try SampleCatalog.write(in: directory)
            let queue = try PaymentQueue(path: directory + "/purchases.sqlite", mode: .createIfMissing)
            try queue.catalog.importConfigurations(at: [catalogFile])
            let observer = ReadmeStoreObserver()
            try await queue.add(observer)
            let response = try queue.catalog.products(for: ["com.example.level1", "com.example.nope"])
            #expect(response.invalidProductIdentifiers == ["com.example.nope"])
            let transaction = try await queue.add(Payment(productID: "com.example.level1", idempotencyKey: "tap-42"))
            #expect(await observer.delivered.unlocked == [transaction.id: "com.example.level1"])
            #expect(try queue.transactions.isEmpty, "the observer finished what it delivered")
        }
    }
}
