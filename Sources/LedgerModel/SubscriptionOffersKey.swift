import Crypto
package import Foundation

/// The key promotional offers are signed with (Xcode's "Subscription Offers Key", a `.storekit`
/// file's `subscriptionOffersKeyPair`): an ECDSA P-256 private key and its identifier. The
/// store checks every signed offer against it; a test (standing in for the app's server) signs
/// with it. It is a test key: never an App Store Connect key.
package struct SubscriptionOffersKey: Sendable {
    /// The key identifier a signature names (`keyID`, `keyIdentifier`).
    package let id: String
    private let key: P256.Signing.PrivateKey

    /// A key from its identifier and its PKCS #8 DER encoding in base64, as `.storekit` files
    /// keep it.
    /// - Throws: `SubscriptionOffersKeyError` when the identifier is empty or the key is not a
    ///   base64 PKCS #8 P-256 private key.
    package init(id: String, privateKeyBase64: String) throws {
        try Self.check(id: id)
        guard let der = Data(base64Encoded: privateKeyBase64, options: .ignoreUnknownCharacters),
            let key = try? P256.Signing.PrivateKey(derRepresentation: der)
        else { throw SubscriptionOffersKeyError.invalidPrivateKey }
        self.id = id
        self.key = key
    }

    /// A new random key (for a store that has none).
    package init(generatingWithID id: String) throws {
        try Self.check(id: id)
        self.id = id
        self.key = P256.Signing.PrivateKey()
    }

    private static func check(id: String) throws {
        guard !id.isEmpty, id.utf8.count <= 256 else { throw SubscriptionOffersKeyError.invalidIdentifier(id) }
    }

    /// The private key as `.storekit` files keep it: PKCS #8 DER, base64.
    package var privateKeyBase64: String { key.derRepresentation.base64EncodedString() }

    /// The private key in PEM (PKCS #8), as a server's signing code loads it.
    package var privateKeyPEM: String { key.pemRepresentation }

    /// Signs `payload` as the app's server does: ECDSA P-256 with SHA-256, DER-encoded.
    package func signature(for payload: OfferSignaturePayload) throws -> Data {
        try key.signature(for: payload.bytes).derRepresentation
    }

    /// Whether `signature` (DER) signs `payload` with this key.
    package func isValidSignature(_ signature: Data, for payload: OfferSignaturePayload) -> Bool {
        guard let decoded = try? P256.Signing.ECDSASignature(derRepresentation: signature) else { return false }
        return key.publicKey.isValidSignature(decoded, for: payload.bytes)
    }
}

/// What a promotional offer's signature signs, in Apple's order, joined by U+2063 (invisible
/// separator): bundle id, key id, product id, offer id, the account (app account token or
/// application username, lowercased; empty when none), the nonce (lowercased) and the timestamp
/// in milliseconds.
package struct OfferSignaturePayload: Sendable, Hashable {
    /// The app's bundle identifier.
    package var bundleID: String
    /// The identifier of the subscription offers key that signs.
    package var keyID: String
    /// The identifier of the subscription the offer is for.
    package var productID: String
    /// The identifier of the promotional offer.
    package var offerID: String
    /// The payment's app account token or application username; `""` when it has none.
    package var account: String
    /// The signature's one-time value; signed in lowercase.
    package var nonce: UUID
    /// When the server signed, in milliseconds since 1970.
    package var timestamp: Int64

    /// A payload from its fields, as given (`bytes` lowercases the account and the nonce).
    package init(
        bundleID: String, keyID: String, productID: String, offerID: String, account: String, nonce: UUID,
        timestamp: Int64
    ) {
        self.bundleID = bundleID
        self.keyID = keyID
        self.productID = productID
        self.offerID = offerID
        self.account = account
        self.nonce = nonce
        self.timestamp = timestamp
    }

    /// The UTF-8 bytes that are signed.
    package var bytes: Data {
        let fields = [
            bundleID, keyID, productID, offerID, account.lowercased(), nonce.uuidString.lowercased(), String(timestamp),
        ]
        return Data(fields.joined(separator: "\u{2063}").utf8)
    }
}

/// A subscription offers key that cannot be used.
package enum SubscriptionOffersKeyError: DescribedError, Sendable, Equatable {
    /// The key identifier is empty or longer than 256 bytes.
    case invalidIdentifier(String)
    /// The private key is not a base64 PKCS #8 ECDSA P-256 private key.
    case invalidPrivateKey

    package var description: String {
        switch self {
        case .invalidIdentifier(let id):
            "invalid subscription offers key identifier \"\(id)\": it must be 1 to 256 bytes"
        case .invalidPrivateKey:
            "the subscription offers private key is not a base64 PKCS #8 ECDSA P-256 private key"
        }
    }
}

extension SubscriptionOffersKey {
    /// Whether `signature` (a JWS's ES256 signature: the 64 bytes of r and s) signs
    /// `signingInput` (the JWS's header and payload parts, joined by a period) with this key.
    package func isValidJWSSignature(_ signature: Data, signingInput: String) -> Bool {
        guard let decoded = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
        return key.publicKey.isValidSignature(decoded, for: Data(signingInput.utf8))
    }

    /// Signs `claims` as a compact JWS (ES256, this key's identifier as `kid`), as Apple's
    /// server libraries sign a promotional offer (`PromotionalOfferV2SignatureCreator`): what a
    /// test standing in for the app's server uses.
    package func compactJWS(claims: [String: Any]) throws -> String {
        let header = try JSONSerialization.data(withJSONObject: ["alg": "ES256", "kid": id, "typ": "JWT"])
        let payload = try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])
        let input = Self.base64URL(header) + "." + Self.base64URL(payload)
        let signature = try key.signature(for: Data(input.utf8)).rawRepresentation
        return input + "." + Self.base64URL(signature)
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
