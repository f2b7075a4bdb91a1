import Foundation
import LedgerTestSupport
import LedgerTesting
import OpenStoreKit
import OpenStoreKitTest
import StoreLedger
import StoreTesting
import Testing

/// What StoreKit 2 code receives is signed by the store's ledger and verified against its root:
/// `jwsRepresentation` is what a server checks.
@Suite struct SignedResultTests {
    @Test func aPurchaseIsVerifiedAndItsJWSChecksAgainstTheLedgersRoot() async throws {
        try await Shop.withSession { session in
            let monthly = try #require(try await Product.products(for: [Shop.monthly]).first)
            guard case .success(let result) = try await monthly.purchase(), case .verified(let transaction) = result
            else {
                Issue.record("expected a verified purchase")
                return
            }
            let jws = try JWS(compactSerialization: result.jwsRepresentation)
            try jws.verify(trustingRoot: try Ledger.open(at: session.ledgerPath).signingCertificates().root)
            #expect(result.payloadData == transaction.jsonRepresentation && result.payloadData == jws.payload)
            #expect(result.headerData == jws.header && result.signatureData == jws.signature)
            #expect(
                result.signedData
                    == Data(result.jwsRepresentation.split(separator: ".").prefix(2).joined(separator: ".").utf8))
            #expect(result.signedDate == transaction.signedDate)
            let payload = try #require(
                try JSONSerialization.jsonObject(with: transaction.jsonRepresentation) as? [String: Any])
            #expect(
                payload["transactionId"] as? String == String(transaction.id)
                    && payload["productId"] as? String == Shop.monthly)
            #expect(transaction.environment == .xcode)
            let status = try #require(try await monthly.subscription?.status.first)
            guard case .verified(let renewal) = status.renewalInfo else {
                Issue.record("expected verified renewal info")
                return
            }
            #expect(status.renewalInfo.payloadData == renewal.jsonRepresentation && !renewal.jsonRepresentation.isEmpty)
            try JWS(compactSerialization: status.renewalInfo.jwsRepresentation)
                .verify(trustingRoot: try Ledger.open(at: session.ledgerPath).signingCertificates().root)
        }
    }

    /// The store does not check again the signatures it made (`JWS.signatureMatches`): Apple's
    /// own verifier checks every kind of JWS it hands out, signature, chain and fields.
    @Test(
        .enabled(
            if: ApplePython.shouldRun,
            "app-store-server-library and jwcrypto are not in .build/python (.ci/run installs them)"))
    func applesVerifierAcceptsEveryJWSTheStoreHandsOut() async throws {
        let python = try #require(ApplePython.path, "STORELEDGER_PYTHON is set, but: \(ApplePython.unavailableReason)")
        try await Shop.withSession { session in
            let ledger = try Ledger.open(at: session.ledgerPath)
            let controls = StoreTestSession(ledger: ledger)
            // Apple's verifier checks nothing of the Xcode environment's values: the sandbox's.
            try controls.set(.environment, to: "Sandbox")
            let bundleID = try controls.settings().bundleID
            let root = try ledger.signingCertificates().root
            let monthly = try #require(try await Product.products(for: [Shop.monthly]).first)
            let seeds = try #require(try await Product.products(for: [Shop.seeds]).first)
            var handedOut: [(kind: String, jws: String)] = []
            for product in [monthly, seeds] {
                guard case .success(let result) = try await product.purchase(), case .verified = result else {
                    Issue.record("expected a verified purchase of \(product.id)")
                    return
                }
                handedOut.append(("transaction", result.jwsRepresentation))
            }
            for await result in Transaction.all { handedOut.append(("transaction", result.jwsRepresentation)) }
            for await result in Transaction.currentEntitlements {
                handedOut.append(("transaction", result.jwsRepresentation))
            }
            let status = try #require(try await monthly.subscription?.status.first)
            handedOut.append(("transaction", status.transaction.jwsRepresentation))
            handedOut.append(("renewal", status.renewalInfo.jwsRepresentation))
            handedOut.append(("app", try await AppTransaction.shared.jwsRepresentation))
            try await withTemporaryDirectory { directory in
                try Data(root).write(to: URL(fileURLWithPath: directory + "/root.der"))
                try write(handedOut.map { "\($0.kind) \($0.jws)" }.joined(separator: "\n"), to: directory + "/jws.txt")
                let script = """
                    import os, sys
                    from appstoreserverlibrary.models.Environment import Environment
                    from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier
                    folder = sys.argv[1]
                    root = open(os.path.join(folder, "root.der"), "rb").read()
                    verifier = SignedDataVerifier([root], False, Environment.SANDBOX, sys.argv[2])
                    for line in open(os.path.join(folder, "jws.txt")).read().splitlines():
                        kind, jws = line.split(" ")
                        try:
                            if kind == "transaction":
                                print("transaction", verifier.verify_and_decode_signed_transaction(jws).transactionId)
                            elif kind == "renewal":
                                print("renewal", verifier.verify_and_decode_renewal_info(jws).productId)
                            else:
                                print("app", verifier.verify_and_decode_app_transaction(jws).bundleId)
                        except Exception as error:
                            print("FAIL", kind, repr(error))
                    """
                let run = try runProcess(python, ["-c", script, directory, bundleID])
                #expect(run.status == 0, "\(run.output)")
                let lines = run.output.split(separator: "\n")
                #expect(
                    lines.count == handedOut.count && !run.output.contains("FAIL"), "every JWS verified: \(run.output)")
                #expect(lines.last == "app \(bundleID)")
            }
            try ledger.close()
        }
    }

    @Test func theStoresInvalidSignaturesMakeResultsUnverifiedAndTheSandboxSettingShows() async throws {
        try await Shop.withSession { session in
            let controls = StoreTestSession(ledger: try Ledger.open(at: session.ledgerPath))
            try controls.set(.invalidSignatures, to: "true")
            try controls.set(.environment, to: "Sandbox")
            let monthly = try #require(try await Product.products(for: [Shop.monthly]).first)
            guard case .success(.unverified(let bought, let error)) = try await monthly.purchase() else {
                Issue.record("expected an unverified purchase")
                return
            }
            #expect(error == .invalidSignature && bought.environment == .sandbox)
            let status = try #require(try await monthly.subscription?.status.first)
            guard case .unverified(_, .invalidSignature) = status.renewalInfo else {
                Issue.record("expected unverified renewal info")
                return
            }
            // A purchase made outside the app by the test session is signed too.
            let outside = try await session.buyProduct(identifier: Shop.greenhouse)
            #expect(outside.environment == .sandbox && !outside.jsonRepresentation.isEmpty)
            try controls.set(.invalidSignatures, to: "false")
            guard case .verified = try #require(await Transaction.latest(for: Shop.monthly)) else {
                Issue.record("expected the latest transaction verified once the store signs well again")
                return
            }
        }
    }
}
