import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import Testing

/// The app receipt taken where apps take it: to their server, which reads a transaction id from
/// it with Apple's `ReceiptUtility` and asks the App Store Server API for the history, and to
/// `openssl cms -verify`, which checks its signature against the ledger's root.
@Suite struct ReceiptServerTests {
    /// `ledger receipt` (base64, as an app sends it), read by Apple's Python `ReceiptUtility`;
    /// the id it finds names the customer's history in `ledger serve`'s Get Transaction History.
    @Test(.enabled(if: ApplePython.shouldRun, "\(ApplePython.unavailableReason)"))
    func applesReceiptUtilityFindsATransactionTheServerAnswersFor() async throws {
        let python = try #require(ApplePython.path, "\(ApplePython.unavailableReason)")
        try await withTemporaryDirectory { directory in
            let (path, purchase) = try await ServeCommandTests.prepare(directory)
            let receipt = try LedgerProcess.run(["receipt", "--database", path])
            #expect(receipt.status == 0, "\(receipt.stderr)")
            let server = try ServeCommandTests.Server.start(path)
            defer { _ = server.stop() }
            let (found, history) = try await Self.sendToServer(
                receipt.stdout.trimmingCharacters(in: .whitespacesAndNewlines), python: python, directory: directory,
                port: server.port)
            let ledger = try Ledger.open(at: path, access: .readOnly)
            defer { try? ledger.close() }
            let bought = try ledger.allTransactions().map(\.id)
            #expect(bought.contains(purchase) && bought.count == 2)
            #expect(bought.map(String.init).contains(found))
            #expect(history.map(\.id).sorted() == bought.map(String.init).sorted())
        }
    }

    /// What an app's server does with the receipt (`base64`): Apple's Python `ReceiptUtility`
    /// finds a transaction id in it, and Apple's client asks `ledger serve` (on `port`, with
    /// `directory`'s key and root; `ServeCommandTests.prepare`) for the customer's history,
    /// each transaction checked by Apple's verifier.
    /// - Returns: the id found, and the history's transactions (id and product).
    static func sendToServer(
        _ base64: String, python: String, directory: String, port: Int
    ) async throws -> (found: String, history: [(id: String, product: String)]) {
        let script = """
            \(ServeCommandTests.applePython(directory, port: port))
            import sys
            from appstoreserverlibrary.receipt_utility import ReceiptUtility
            from appstoreserverlibrary.api_client import GetTransactionHistoryVersion
            from appstoreserverlibrary.models.TransactionHistoryRequest import TransactionHistoryRequest
            found = ReceiptUtility().extract_transaction_id_from_app_receipt(sys.argv[1])
            history = client.get_transaction_history(found, None, TransactionHistoryRequest(), GetTransactionHistoryVersion.V2)
            print(found)
            for signed in history.signedTransactions:
                transaction = verifier.verify_and_decode_signed_transaction(signed)
                print(transaction.transactionId, transaction.productId)
            """
        let result = try await onItsOwnThread { try runProcess(python, ["-c", script, base64]) }
        let lines = result.output.split(separator: "\n").map(String.init)
        guard result.status == 0, let found = lines.first else {
            throw LedgerProcess.LedgerProcessError(description: "the server's side failed: \(result.output)")
        }
        let history = lines.dropFirst().map { line in
            let words = line.split(separator: " ").map(String.init)
            return (id: words.first ?? "", product: words.last ?? "")
        }
        return (found, history)
    }

    /// `openssl cms -verify` accepts the receipt against the ledger's root, and hands back the
    /// payload; it refuses a receipt changed by one byte, and one checked against another
    /// ledger's root.
    @Test(.enabled(if: OpenSSLTool.shouldRun, "\(OpenSSLTool.unavailableReason)"))
    func opensslVerifiesTheReceiptAgainstTheLedgersRoot() async throws {
        let openssl = try #require(OpenSSLTool.path, "\(OpenSSLTool.unavailableReason)")
        try await withTemporaryDirectory { directory in
            let (path, _) = try await ServeCommandTests.prepare(directory)
            let written = try LedgerProcess.run(["receipt", "--output", directory + "/receipt", "--database", path])
            #expect(written.status == 0, "\(written.stderr)")
            try FileManager.default.createDirectory(atPath: directory + "/other", withIntermediateDirectories: true)
            let other = try SampleCatalog.ledger(in: directory + "/other")
            try other.close()
            for (name, database) in [("root.pem", path), ("other.pem", other.path)] {
                let exported = try LedgerProcess.run([
                    "certificate", "export", "--output", directory + "/" + name, "--database", database,
                ])
                #expect(exported.status == 0, "\(exported.stderr)")
            }
            func verify(_ receipt: String, root: String) async throws -> (status: Int32, output: String) {
                try? FileManager.default.removeItem(atPath: directory + "/payload")
                return try await onItsOwnThread {
                    try runProcess(
                        openssl,
                        [
                            "cms", "-verify", "-inform", "DER", "-in", directory + "/" + receipt, "-CAfile",
                            directory + "/" + root, "-binary", "-out", directory + "/payload",
                        ])
                }
            }
            let verified = try await verify("receipt", root: "root.pem")
            #expect(verified.status == 0, "\(verified.output)")
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory + "/receipt")))
            let payload = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory + "/payload")))
            #expect(payload == (try ReceiptContents(bytes).payload))

            #expect(try await verify("receipt", root: "other.pem").status != 0, "another ledger's root")
            // Xcode's layout (the content in a constructed OCTET STRING, BER) verifies too.
            #expect(try LedgerProcess.run(["store", "set", "environment", "Xcode", "--database", path]).status == 0)
            let xcode = try LedgerProcess.run(["receipt", "--output", directory + "/xcode", "--database", path])
            #expect(xcode.status == 0, "\(xcode.stderr)")
            #expect(try await verify("xcode", root: "root.pem").status == 0)
            let xcodeBytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory + "/xcode")))
            #expect(
                try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory + "/payload")))
                    == ReceiptContents(xcodeBytes).payload)
            // One byte of the bundle identifier changed: the signature no longer holds.
            var changed = bytes
            let bundle = Array("com.example.app".utf8)
            let at = try #require(
                (0...(changed.count - bundle.count)).first { Array(changed[$0..<($0 + bundle.count)]) == bundle })
            changed[at] ^= 0x01
            try Data(changed).write(to: URL(fileURLWithPath: directory + "/changed"))
            #expect(try await verify("changed", root: "root.pem").status != 0, "a changed receipt")
        }
    }
}
