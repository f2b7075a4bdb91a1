import Crypto
import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import Testing

@testable import AppStoreServer

/// Each rule of the App Store Server API's bearer tokens, broken alone, gets its refusal; the
/// token Apple's libraries make passes.
@Suite struct BearerTokenTests {
    let maker = TokenMaker()
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func key(revoked: Bool = false) -> APIKey {
        APIKey(
            keyID: maker.keyID, issuerID: maker.issuerID, publicKey: maker.key.publicKey, createdAt: now,
            revokedAt: revoked ? now : nil)
    }

    func check(_ authorization: String?, key: APIKey? = nil) throws(BearerToken.Refusal) -> APIKey {
        let stored = key ?? self.key()
        return try BearerToken.check(authorization, bundleID: maker.bundleID, now: now) { id in
            id == stored.keyID ? stored : nil
        }
    }

    @Test func theTokenApplesLibrariesMakePasses() throws {
        #expect(try check(try maker.authorization(claims: maker.claims(now: now))).keyID == maker.keyID)
        var withIssuedAt = maker.claims(now: now)
        withIssuedAt["iat"] = Int(now.timeIntervalSince1970)
        withIssuedAt["aud"] = ["other", "appstoreconnect-v1"]
        #expect(try check(try maker.authorization(claims: withIssuedAt)).keyID == maker.keyID)
    }

    /// A token verified once is not verified again, but its key, bundle and expiry still are.
    @Test func aVerifiedTokenIsStillRefusedWhenItsKeyIsRevokedOrItExpires() throws {
        let verified = VerifiedTokens()
        let token = try maker.authorization(claims: maker.claims(now: now))
        func check(key: APIKey, bundle: String = maker.bundleID, at time: Date) throws(BearerToken.Refusal) {
            _ = try BearerToken.check(token, bundleID: bundle, now: time, verified: verified) { _ in key }
        }
        try check(key: key(), at: now)
        #expect(verified[token]?.keyID == maker.keyID, "kept once verified")
        try check(key: key(), at: now)
        #expect(throws: BearerToken.Refusal.revokedKey) { try check(key: key(revoked: true), at: now) }
        #expect(throws: BearerToken.Refusal.wrongBundle) { try check(key: key(), bundle: "com.other", at: now) }
        #expect(throws: BearerToken.Refusal.expired) { try check(key: key(), at: now.addingTimeInterval(3_600)) }
        // A refused token is not kept: a forged signature never passes by the cache.
        let forged = try maker.authorization(claims: maker.claims(now: now), signer: P256.Signing.PrivateKey())
        #expect(throws: BearerToken.Refusal.badSignature) {
            _ = try BearerToken.check(forged, bundleID: maker.bundleID, now: now, verified: verified) { _ in key() }
        }
        #expect(verified[forged] == nil)
    }

    @Test func eachBrokenRuleIsRefused() throws {
        let good = maker.claims(now: now)
        func changed(_ key: String, _ value: Any?) -> [String: Any] {
            var claims = good
            claims[key] = value
            return claims
        }
        let cases: [(String?, BearerToken.Refusal)] = [
            (nil, .missing),
            ("Basic abc", .malformed),
            ("Bearer not.a.jwt", .malformed),
            (
                try maker.authorization(claims: good, header: ["alg": "HS256", "kid": maker.keyID]),
                .unsupportedAlgorithm
            ),
            (try maker.authorization(claims: good, header: ["alg": "ES256", "kid": "OTHER"]), .unknownKey),
            (try maker.authorization(claims: good, header: ["alg": "ES256"]), .unknownKey),
            (try maker.authorization(claims: good, signer: P256.Signing.PrivateKey()), .badSignature),
            (try maker.authorization(claims: changed("iss", "someone-else")), .wrongIssuer),
            (try maker.authorization(claims: changed("bid", "com.example.other")), .wrongBundle),
            (try maker.authorization(claims: changed("aud", "appstoreconnect-v2")), .wrongAudience),
            (try maker.authorization(claims: changed("exp", nil)), .malformed),
            (try maker.authorization(claims: changed("exp", Int(now.timeIntervalSince1970))), .expired),
            (try maker.authorization(claims: changed("exp", Int(now.timeIntervalSince1970) + 3_601)), .livesTooLong),
        ]
        for (authorization, refusal) in cases {
            #expect(throws: refusal, "\(authorization ?? "nil")") { try check(authorization) }
        }
        #expect(throws: BearerToken.Refusal.revokedKey) {
            try check(try maker.authorization(claims: good), key: key(revoked: true))
        }
        let huge = "Bearer " + String(repeating: "a", count: BearerToken.longestHeader)
        #expect(throws: BearerToken.Refusal.missing) { try check(huge) }
    }

    /// Seeded: a token with any one byte changed never passes.
    @Test(arguments: 0..<4)
    func aTokenWithAnyByteChangedIsRefused(seed: UInt64) throws {
        var random = SplitMix64(seed: 0x70CE + seed)
        let token = try maker.authorization(claims: maker.claims(now: now))
        var bytes = Array(token.utf8)
        for _ in 0..<50 {
            let index = "Bearer ".count + Int(random.next() % UInt64(bytes.count - "Bearer ".count))
            let original = bytes[index]
            bytes[index] = UInt8(ascii: "A") + UInt8(random.next() % 26)
            if bytes[index] != original {
                #expect(throws: BearerToken.Refusal.self) { try check(String(decoding: bytes, as: UTF8.self)) }
            }
            bytes[index] = original
        }
    }
}
