import Crypto
import Foundation
import LedgerTestSupport
import LedgerTesting
import Testing

@testable import LedgerEngine
@testable import LedgerSigning
@testable import SimulatedStore

/// The app transaction the ledger signs (StoreKit's `AppTransaction`).
@Suite struct AppTransactionTests {
    @Test func theAppTransactionIsSignedWithTheStoresSettingsAndBoundToItsDevice() async throws {
        try await withLedger { (ledger, _) throws in
            var settings = try StoreSettings(ledger: ledger)
            settings.appVersion = "2.3.1"
            settings.environment = .sandbox
            settings.appAppleID = 1_234_567_890
            try ledger.setStoreSettings(settings.storedValues)
            let nonce = UUID()
            let jws = try ledger.signedAppTransaction(nonce: nonce)
            try JWS(compactSerialization: jws.compactSerialization)
                .verify(trustingRoot: try ledger.signingCertificates().root)
            let fields = try #require(try JSONSerialization.jsonObject(with: jws.payload) as? [String: Any])
            let identity = try ledger.read { db in try SigningIdentity.load(db) }
            #expect(fields["receiptType"] as? String == "Sandbox" && fields["bundleId"] as? String == "com.example.app")
            #expect(fields["appAppleId"] as? Int64 == 1_234_567_890)
            #expect(fields["applicationVersion"] as? String == "2.3.1")
            #expect(fields["originalApplicationVersion"] as? String == "1.0")
            #expect(fields["originalPurchaseDate"] as? Int64 == identity.createdAt.ledgerMilliseconds)
            #expect(fields["receiptCreationDate"] as? Int64 == (try ledger.storeDate()).ledgerMilliseconds)
            #expect(fields["appTransactionId"] as? String == identity.appTransactionID)
            #expect(fields["originalPlatform"] as? String == "iOS")
            // StoreKit's device check: SHA-384 of the lowercased nonce, then the lowercased device id.
            let device = try ledger.deviceVerificationID()
            let expected = SHA384.hash(
                data: Data((nonce.uuidString.lowercased() + device.uuidString.lowercased()).utf8))
            #expect(fields["deviceVerification"] as? String == Data(expected).base64EncodedString())
            #expect(fields["deviceVerificationNonce"] as? String == nonce.uuidString.lowercased())
        }
    }

    @Test func eachLedgerIsItsOwnDeviceAndKeepsIt() async throws {
        let first = try await withLedgerResult { (ledger, _) throws in
            let device = try ledger.deviceVerificationID()
            #expect(try ledger.deviceVerificationID() == device)
            #expect(device.uuidString.dropFirst(14).first == "4", "a version 4 UUID")
            return device
        }
        let second = try await withLedgerResult { (ledger, _) throws in try ledger.deviceVerificationID() }
        #expect(first != second)
    }
}
