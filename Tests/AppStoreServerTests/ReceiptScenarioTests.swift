import Foundation
import LedgerTestSupport
import OpenStoreKit
import OpenStoreKitTest
import Testing

import enum LedgerTesting.SampleCatalog

/// A StoreKit 1 app's receipt flow, end to end: it buys, refreshes its receipt
/// (`SKReceiptRefreshRequest`), reads it where `Bundle.main.appStoreReceiptURL` would point
/// (`Bundle.main.openStoreKitReceiptURL`), validates it on the device (signature, bundle, hash
/// of its device identifier), and sends it to its server, which finds a transaction id in it with
/// Apple's `ReceiptUtility` and asks `ledger serve` for the customer's history.
@MainActor
@Suite struct ReceiptScenarioTests {
    /// The app's receipt code, as StoreKit 1 apps write it.
    @MainActor final class ReceiptClient: NSObject, SKProductsRequestDelegate, SKPaymentTransactionObserver {
        private(set) var products: [SKProduct] = []
        private(set) var finished: [String] = []
        private(set) var refreshed = false
        private(set) var failure: (any Error)?
        private var requests: [SKRequest] = []

        func loadProducts(_ ids: Set<String>) {
            let request = SKProductsRequest(productIdentifiers: ids)
            request.delegate = self
            requests.append(request)
            request.start()
        }

        func refreshReceipt(_ properties: [String: Any]? = nil) {
            let request = SKReceiptRefreshRequest(receiptProperties: properties)
            request.delegate = self
            requests.append(request)
            request.start()
        }

        nonisolated func productsRequest(_ request: SKProductsRequest, didReceive response: SKProductsResponse) {
            MainActor.assumeIsolated { products = response.products }
        }

        nonisolated func requestDidFinish(_ request: SKRequest) {
            MainActor.assumeIsolated { if request is SKReceiptRefreshRequest { refreshed = true } }
        }

        nonisolated func request(_ request: SKRequest, didFailWithError error: any Error) {
            MainActor.assumeIsolated { failure = error }
        }

        nonisolated func paymentQueue(_ queue: SKPaymentQueue, updatedTransactions transactions: [SKPaymentTransaction])
        {
            MainActor.assumeIsolated {
                for transaction in transactions where transaction.transactionState == .purchased {
                    finished.append(transaction.transactionIdentifier ?? "")
                    queue.finishTransaction(transaction)
                }
            }
        }
    }

    @Test(.enabled(if: ApplePython.shouldRun, "\(ApplePython.unavailableReason)"))
    func aStoreKit1AppRefreshesValidatesAndSendsItsReceiptToItsServer() async throws {
        let python = try #require(ApplePython.path, "\(ApplePython.unavailableReason)")
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = URL(fileURLWithPath: try SampleCatalog.write(in: directory))
        let session = try SKTestSession(contentsOf: file, scope: .taskLocal)
        let path = session.ledgerPath
        // The server's side: the store signs for the Sandbox (where Apple's verifier checks
        // signatures), an API key, the root the server trusts.
        for (command, result) in try await Self.prepareServerSide(path, directory: directory) {
            #expect(result.status == 0, "\(command): \(result.stderr)")
        }
        try await session.withTaskLocalStore {
            let app = ReceiptClient()
            SKPaymentQueue.default().add(app)
            let receiptURL = try #require(Bundle.main.openStoreKitReceiptURL)
            #expect(!FileManager.default.fileExists(atPath: receiptURL.path), "no receipt before a purchase")

            app.loadProducts([SampleCatalog.nonConsumable])
            try await until(session) { !app.products.isEmpty }
            SKPaymentQueue.default().add(SKPayment(product: app.products[0]))
            try await until(session) { app.finished.count == 1 }
            app.refreshReceipt()
            try await until(session) { app.refreshed || app.failure != nil }
            #expect(app.failure == nil)

            // On the device: the receipt is the store's, for this app, on this device.
            let bytes = try [UInt8](Data(contentsOf: try #require(Bundle.main.openStoreKitReceiptURL)))
            let receipt = try ReceiptContents(bytes)
            let root = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory + "/root.cer")))
            let created = try date(receipt, 12)
            #expect(try await ReceiptContents.isSignedByIdentity(bytes, root: root, at: created))
            #expect(try receipt.text(0) == "ProductionSandbox" && receipt.text(2) == "com.example.app")
            let device = try #require(AppStore.deviceVerificationID)
            #expect(receipt.fields[5] == receipt.expectedHash(device: device))
            #expect(try receipt.purchases.map { try ReceiptContents.text($0[1703]) } == app.finished)

            // On the server: Apple's library reads the receipt, the App Store answers.
            let (found, history) = try await Self.sendToServer(
                Data(bytes).base64EncodedString(), path: path, python: python, directory: directory)
            #expect(found == app.finished[0])
            #expect(history.map(\.product) == [SampleCatalog.nonConsumable])
        }
    }

    /// The sandbox's test receipts, a refused property, and a cancelled request.
    @Test func aRefreshTakesTheSandboxPropertiesAndRefusesWhatIsNotSimulated() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let session = try SKTestSession(
            contentsOf: URL(fileURLWithPath: try SampleCatalog.write(in: directory)), scope: .taskLocal)
        try await session.withTaskLocalStore {
            let app = ReceiptClient()
            app.refreshReceipt([SKReceiptPropertyIsExpired: NSNumber(value: true)])
            try await until(session) { app.refreshed || app.failure != nil }
            let url = try #require(Bundle.main.openStoreKitReceiptURL)
            let expired = try ReceiptContents([UInt8](Data(contentsOf: url)))
            let created = try date(expired, 12)
            let expiration = try date(expired, 21)
            #expect(expiration == created.addingTimeInterval(-86_400))
            #expect(expired.purchases.isEmpty, "a refresh writes the receipt before any purchase")

            let revoked = ReceiptClient()
            revoked.refreshReceipt([SKReceiptPropertyIsRevoked: true])
            try await until(session) { revoked.refreshed || revoked.failure != nil }
            #expect((revoked.failure as? SKError)?.code == .unknown)
            #expect(
                revoked.failure?.localizedDescription.contains("SKReceiptPropertyIsRevoked is not simulated")
                    == true)

            let cancelled = ReceiptClient()
            let request = SKReceiptRefreshRequest()
            request.delegate = cancelled
            request.start()
            request.cancel()
            await session.waitUntilIdle()
            try await Task.sleep(for: .milliseconds(50))
            #expect(
                !cancelled.refreshed && cancelled.failure == nil, "a cancelled request's delegate hears nothing")
        }
    }

    /// The server's side, off the main actor (the app's callbacks run there while the tool
    /// runs): the store signs for the Sandbox (where Apple's verifier checks signatures), an API
    /// key, the root the server trusts.
    nonisolated private static func prepareServerSide(
        _ path: String, directory: String
    ) async throws -> [([String], LedgerProcess.Result)] {
        let commands = [
            ["store", "set", "environment", "Sandbox"], ["store", "set", "bundleID", "com.example.app"],
            [
                "api-keys", "create", "--key-id", "KEY1", "--issuer-id", ServeCommandTests.issuer, "--output",
                directory + "/key.p8",
            ],
            ["certificate", "export", "--format", "der", "--output", directory + "/root.cer"],
        ]
        return try await onItsOwnThread { try commands.map { ($0, try LedgerProcess.run($0 + ["--database", path])) } }
    }

    /// The app's server takes the receipt, with `ledger serve` running on the store (off the
    /// main actor).
    nonisolated private static func sendToServer(
        _ base64: String, path: String, python: String, directory: String
    ) async throws -> (found: String, history: [(id: String, product: String)]) {
        let server = try ServeCommandTests.Server.start(path)
        defer { _ = server.stop() }
        return try await ReceiptServerTests.sendToServer(
            base64, python: python, directory: directory, port: server.port)
    }

    /// A new directory for one test's files.
    private static func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("receipt-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// The receipt's date field `type`.
    private func date(_ receipt: ReceiptContents, _ type: Int) throws -> Date {
        let text = try receipt.text(type)
        return try #require(text.flatMap { ISO8601DateFormatter().date(from: $0) }, "field \(type): \(text ?? "none")")
    }

    /// Waits until `condition` holds, letting the store's calls and callbacks run; four minutes
    /// bound a hang only.
    private func until(_ session: SKTestSession, _ condition: () -> Bool) async throws {
        let deadline = Date().addingTimeInterval(240)
        while !condition() {
            guard Date() < deadline else {
                Issue.record("timed out waiting")
                return
            }
            await session.waitUntilIdle()
            if !condition() { try await Task.sleep(for: .milliseconds(1)) }
        }
    }
}
