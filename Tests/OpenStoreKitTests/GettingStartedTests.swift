// The README's example test, word for word (tools/readme-examples checks it): StoreKit 2
// code tested with SKTestSession on a ledger, under `swift test` on Linux.
import Foundation
import OpenStoreKit
import OpenStoreKitTest
import Testing

@Suite struct GettingStartedTests {
    // Your Xcode StoreKit configuration file, found from this source file.
    let configuration = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().appendingPathComponent("../Fixtures/v3.0-garden-shop.storekit")

    @Test func askToBuyThenApprovalUnlocksTheGreenhouse() async throws {
        // A store only this test's StoreKit calls reach: tests run in parallel.
        let session = try SKTestSession(contentsOf: configuration, scope: .taskLocal)
        try await session.withTaskLocalStore {
            session.askToBuyEnabled = true
            let greenhouse = try #require(
                try await Product.products(for: ["com.example.fixtures.garden.greenhouse"]).first)
            #expect(greenhouse.displayPrice == "$2.99")

            // Ask to Buy: the purchase waits for a parent.
            var updates = Transaction.updates.makeAsyncIterator()
            guard case .pending = try await greenhouse.purchase() else {
                Issue.record("expected the purchase to wait for approval")
                return
            }

            let asked = try #require(session.allTransactions().first { $0.pendingAskToBuyConfirmation })
            try session.approveAskToBuyTransaction(identifier: asked.identifier)

            // The approval arrives through Transaction.updates, verified.
            let approved = try #require(await updates.next())
            let transaction = try approved.payloadValue
            #expect(transaction.productID == greenhouse.id)
            await transaction.finish()
            #expect(await Transaction.currentEntitlement(for: greenhouse.id) != nil)
        }
    }
}
