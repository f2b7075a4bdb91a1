import Crypto
import Foundation
import SimulatedStore

/// The bearer token of an App Store Server API request, checked as the App Store checks one:
/// a JWT signed with ES256 by an API key the ledger holds (header `kid`), issued by that key's
/// issuer (`iss`), for a bundle the store has an app of (`bid`), for the App Store Connect audience (`aud`),
/// not expired (`exp`, by this machine's clock) and living at most an hour. `iat` is optional,
/// as Apple's Python and Java libraries send none.
///
/// Real time, not the store's clock: a client signs with the time of its own machine, and a
/// test that moves the store a month ahead still talks to the server with fresh tokens.
enum BearerToken {
    static let audience = "appstoreconnect-v1"
    /// App Store Connect refuses a token that expires more than an hour after it is made.
    static let longestLife: TimeInterval = 3_600
    /// The longest `Authorization` header read: a token is about 300 bytes.
    static let longestHeader = 8_192

    /// Why a token was refused: the request gets 401 (500 when the ledger's keys cannot be
    /// read), and nothing changes.
    enum Refusal: Error, Equatable {
        case missing, malformed, unsupportedAlgorithm, unknownKey, revokedKey, badSignature
        case wrongIssuer, wrongBundle, wrongAudience, expired, livesTooLong
        case keysUnreadable
    }

    /// The key that signed `authorization`'s token, when the token holds. With `verified`, a
    /// token whose signature and claims checked before is not decoded and verified again: its
    /// key is still read (a revoked key refuses it at once), its bundle and expiry still checked.
    static func check(
        _ authorization: String?, bundleID: String, now: Date, verified: VerifiedTokens? = nil,
        key: (String) throws -> APIKey?
    ) throws(Refusal) -> APIKey {
        try check(authorization, now: now, verified: verified) { keyID, bid in
            (try key(keyID), bid == bundleID)
        }
    }

    /// `check` with the key and the token's bundle read together, by `context`, once the token
    /// names its key: `context` takes the key id and the token's `bid`, and says whether the
    /// store has an app of that bundle.
    static func check(
        _ authorization: String?, now: Date, verified: VerifiedTokens? = nil,
        context: (_ keyID: String, _ bid: String?) throws -> (key: APIKey?, knowsBundle: Bool)
    ) throws(Refusal) -> APIKey {
        guard let authorization, authorization.utf8.count <= longestHeader else { throw .missing }
        if let known = verified?[authorization] {
            let (stored, knowsBundle) = try read(context, known.keyID, known.bundleID)
            guard let found = stored else { throw .unknownKey }
            guard found.revokedAt == nil else { throw .revokedKey }
            guard knowsBundle else { throw .wrongBundle }
            guard known.expiration > now.timeIntervalSince1970 else { throw .expired }
            return found
        }
        return try checkInFull(authorization, now: now, verified: verified, context: context)
    }

    private static func read(
        _ context: (String, String?) throws -> (key: APIKey?, knowsBundle: Bool), _ keyID: String, _ bid: String?
    ) throws(Refusal) -> (key: APIKey?, knowsBundle: Bool) {
        do { return try context(keyID, bid) } catch { throw .keysUnreadable }
    }

    private static func checkInFull(
        _ authorization: String, now: Date, verified: VerifiedTokens?,
        context: (String, String?) throws -> (key: APIKey?, knowsBundle: Bool)
    ) throws(Refusal) -> APIKey {
        guard authorization.hasPrefix("Bearer "),
            let token = try? JWS(compactSerialization: String(authorization.dropFirst("Bearer ".count))),
            let header = try? JSONSerialization.jsonObject(with: token.header) as? [String: Any],
            let claims = try? JSONSerialization.jsonObject(with: token.payload) as? [String: Any]
        else { throw .malformed }
        guard header["alg"] as? String == "ES256" else { throw .unsupportedAlgorithm }
        // A NUL would end the key id where SQLite reads it: `KEY1\0junk` is no key's id.
        guard let keyID = header["kid"] as? String, !keyID.holdsNUL else { throw .unknownKey }
        // A NUL would end the bundle where SQLite reads it, as a key id's.
        let bid = (claims["bid"] as? String).flatMap { $0.holdsNUL ? nil : $0 }
        let (stored, knowsBundle) = try read(context, keyID, bid)
        guard let found = stored else { throw .unknownKey }
        guard found.revokedAt == nil else { throw .revokedKey }
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: token.signature),
            found.publicKey.isValidSignature(signature, for: Data(token.signingInput.utf8))
        else { throw .badSignature }
        guard claims["iss"] as? String == found.issuerID else { throw .wrongIssuer }
        guard let bid, knowsBundle else { throw .wrongBundle }
        guard audiences(claims["aud"]).contains(audience) else { throw .wrongAudience }
        guard let expiration = (claims["exp"] as? NSNumber)?.doubleValue else { throw .malformed }
        guard expiration > now.timeIntervalSince1970 else { throw .expired }
        let issued = (claims["iat"] as? NSNumber)?.doubleValue ?? now.timeIntervalSince1970
        guard expiration - min(issued, now.timeIntervalSince1970) <= longestLife else { throw .livesTooLong }
        verified?[authorization] = VerifiedTokens.Entry(keyID: keyID, bundleID: bid, expiration: expiration)
        return found
    }

    /// `aud` is a string, or an array of them (RFC 7519).
    private static func audiences(_ claim: Any?) -> [String] {
        if let one = claim as? String { return [one] }
        return claim as? [String] ?? []
    }
}

/// Tokens whose signature and claims checked, by `Authorization` header: a server's client
/// sends the same token with every request for up to an hour, and verifying its ECDSA signature
/// each time was most of a request's work. At most `capacity` are kept (all are forgotten when
/// it is reached).
final class VerifiedTokens: Sendable {
    struct Entry: Sendable {
        let keyID: String
        let bundleID: String
        let expiration: TimeInterval
    }

    static let capacity = 1_024
    private let entries = BoundedCache<String, Entry>(capacity: capacity)

    subscript(authorization: String) -> Entry? {
        get { entries[authorization] }
        set { entries[authorization] = newValue }
    }
}
