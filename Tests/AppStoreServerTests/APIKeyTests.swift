import AppStoreServer
import Crypto
import Foundation
import LedgerTesting
import StoreLedger
import Testing

/// The ledger's API keys: added once, revoked once, never changed.
@Suite struct APIKeyTests {
    @Test func aKeyIsAddedOnceAndRevokedOnce() async throws {
        try await withTemporaryLedger { (ledger: Ledger) async throws in
            let key = P256.Signing.PrivateKey().publicKey
            let added = try ledger.addAPIKey(keyID: "K1", issuerID: "issuer", publicKey: key)
            #expect(added.revokedAt == nil && added.publicKey.x963Representation == key.x963Representation)
            #expect(throws: APIKeyError.duplicateKeyID("K1")) {
                try ledger.addAPIKey(keyID: "K1", issuerID: "issuer", publicKey: key)
            }
            let revoked = try ledger.revokeAPIKey("K1")
            #expect(revoked.revokedAt != nil && revoked.keyID == "K1")
            #expect(throws: APIKeyError.alreadyRevoked("K1")) { try ledger.revokeAPIKey("K1") }
            #expect(throws: APIKeyError.unknownKeyID("K2")) { try ledger.revokeAPIKey("K2") }
            #expect(throws: APIKeyError.duplicateKeyID("K1"), "a revoked key's id is never reused") {
                try ledger.addAPIKey(keyID: "K1", issuerID: "issuer", publicKey: key)
            }
            #expect(try ledger.apiKeys() == [revoked])
        }
    }

    @Test(arguments: ["", String(repeating: "a", count: 65), "has space", "tab\t", "é", "\u{0}"])
    func identifiersArePrintableASCII(_ id: String) async throws {
        try await withTemporaryLedger { (ledger: Ledger) async throws in
            let key = P256.Signing.PrivateKey().publicKey
            #expect(throws: APIKeyError.invalidIdentifier(id)) {
                try ledger.addAPIKey(keyID: id, issuerID: "issuer", publicKey: key)
            }
            #expect(throws: APIKeyError.invalidIdentifier(id)) {
                try ledger.addAPIKey(keyID: "K", issuerID: id, publicKey: key)
            }
            #expect(try ledger.apiKeys().isEmpty)
        }
    }
}
