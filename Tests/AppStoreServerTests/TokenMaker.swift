import Crypto
import Foundation
import LedgerSigning
import LedgerTesting
import StoreLedger
import StoreTesting

@testable import AppStoreServer

/// Makes bearer tokens as Apple's libraries do (ES256, header `kid`), with whatever claims a
/// test wants, so that each rule of `BearerToken` can be broken alone.
struct TokenMaker {
    let keyID = "TESTKEY123"
    let issuerID = "57246542-96fe-1a63-e053-0824d011072a"
    let bundleID = "com.example.app"
    let key = P256.Signing.PrivateKey()

    /// Python's claims: `iss`, `bid`, `aud`, `exp` five minutes after `now`, no `iat`.
    func claims(now: Date) -> [String: Any] {
        ["iss": issuerID, "bid": bundleID, "aud": "appstoreconnect-v1", "exp": Int(now.timeIntervalSince1970) + 300]
    }

    /// `Bearer <JWT>` with `claims`, signed with `signer` (this maker's key by default).
    func authorization(
        claims: [String: Any], header: [String: Any]? = nil, signer: P256.Signing.PrivateKey? = nil
    ) throws -> String {
        let header = header ?? ["alg": "ES256", "kid": keyID, "typ": "JWT"]
        let input =
            JWS.base64URL(try JSONSerialization.data(withJSONObject: header)) + "."
            + JWS.base64URL(try JSONSerialization.data(withJSONObject: claims))
        let signature = try (signer ?? key).signature(for: Data(input.utf8)).rawRepresentation
        return "Bearer " + input + "." + JWS.base64URL(signature)
    }
}

extension TokenMaker {
    /// A fresh ledger that trusts this maker's key, its store signing for this maker's bundle,
    /// with its clock fixed at `now`, answered by an API at `now`: `body` gets the API, the
    /// ledger, a session of its store and a bearer token that holds.
    func withServedLedger(
        now: Date, _ body: (AppStoreServerAPI, Ledger, StoreTestSession, String) async throws -> Void
    ) async throws {
        try await withTemporaryLedger(configuration: LedgerConfiguration(clock: .fixed(now))) { ledger in
            try ledger.addAPIKey(keyID: keyID, issuerID: issuerID, publicKey: key.publicKey)
            let session = StoreTestSession(ledger: ledger)
            try session.update { $0.bundleID = bundleID }
            let api = AppStoreServerAPI(ledger: ledger, now: { now })
            try await body(api, ledger, session, try authorization(claims: claims(now: now)))
        }
    }
}
