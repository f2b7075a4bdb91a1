import Foundation
import LedgerTestSupport
import LedgerTesting
import OpenStoreKit
import OpenStoreKitTest
import StoreLedger
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
