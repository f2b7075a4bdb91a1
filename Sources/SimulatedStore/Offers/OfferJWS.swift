import Foundation
import LedgerModel

/// A promotional offer's signature in its 2025 form (`promotionalOffer(_:compactJWS:)`): a
/// compact JWS, ES256, whose claims Apple's `PromotionalOfferV2SignatureCreator` writes
/// (`aud` "promotional-offer", `bid`, `iss`, `iat` in seconds, `nonce`, `productId`,
/// `offerIdentifier`, and optionally `transactionId`).
struct OfferJWS {
    /// The largest JWS taken, in bytes: Apple's are a few hundred.
    static let sizeLimit = 8_192

    let keyID: String
    let claims: [String: Any]
    /// The header and payload parts, joined by a period: what the signature signs.
    let signingInput: String
    let signature: Data

    /// `compact` decoded, or why not (`PromotionalOfferError.invalidSignature`).
    init(_ compact: String) throws {
        func invalid(_ why: String) -> PromotionalOfferError { .invalidSignature("the offer's JWS \(why)") }
        guard compact.utf8.count <= Self.sizeLimit else { throw invalid("is over \(Self.sizeLimit) bytes") }
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let headerData = Self.data(parts[0]), let payloadData = Self.data(parts[1]),
            let signature = Self.data(parts[2]),
            let header = try? JSONSerialization.jsonObject(with: headerData) as? [String: Any],
            let claims = try? JSONSerialization.jsonObject(with: payloadData) as? [String: Any]
        else { throw invalid("is not a compact JWS of JSON objects") }
        guard header["alg"] as? String == "ES256" else { throw invalid("is not signed with ES256") }
        guard let keyID = header["kid"] as? String, !keyID.isEmpty else { throw invalid("names no key (kid)") }
        (self.keyID, self.claims, self.signingInput, self.signature) = (
            keyID, claims, parts[0] + "." + parts[1], signature
        )
    }

    /// The `nonce` claim, when it is a UUID.
    var nonce: UUID? { (claims["nonce"] as? String).flatMap(UUID.init(uuidString:)) }

    /// Refuses a JWS whose claim `name` is missing or is not `expected`.
    func require(_ name: String, is expected: String) throws {
        guard let value = claims[name] as? String else {
            throw PromotionalOfferError.missingParameters("the offer's JWS has no \(name)")
        }
        guard value == expected else {
            throw PromotionalOfferError.invalidSignature(
                "the offer's JWS has \(name) \"\(value)\", not \"\(expected)\"")
        }
    }

    /// The `iat` claim (seconds), in milliseconds.
    func issuedAt() throws -> Int64 {
        guard let seconds = (claims["iat"] as? NSNumber)?.int64Value else {
            throw PromotionalOfferError.missingParameters("the offer's JWS has no iat")
        }
        return seconds.multipliedReportingOverflow(by: 1000).partialValue
    }

    /// The `nonce` claim.
    func requiredNonce() throws -> UUID {
        guard let nonce else { throw PromotionalOfferError.missingParameters("the offer's JWS has no nonce") }
        return nonce
    }

    /// The nonce of `compact`, if it decodes: what the payment records to refuse its reuse.
    static func nonce(of compact: String) -> UUID? { (try? OfferJWS(compact))?.nonce }

    private static func data(_ part: String) -> Data? {
        var base64 = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}
