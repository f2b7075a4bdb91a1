package import Crypto
public import Foundation
public import LedgerModel
import SwiftASN1
import Synchronization
package import X509

/// A JSON Web Signature in compact serialization (RFC 7515), as the App Store signs its
/// transactions and renewal info: `BASE64URL(header).BASE64URL(payload).BASE64URL(signature)`,
/// the header `{"alg":"ES256","x5c":[leaf, intermediate, root]}` (each certificate in standard
/// base64 DER), the signature ECDSA P-256 with SHA-256 over the first two parts, as the 64 bytes
/// of `r` and `s`.
public struct JWS: Sendable, Hashable, CustomStringConvertible {
    /// The three parts joined by periods: what `jwsRepresentation` is and a server receives.
    public let compactSerialization: String
    /// The header's JSON.
    public let header: Data
    /// The payload's JSON: the signed transaction or renewal info.
    public let payload: Data
    /// The signature's bytes.
    public let signature: Data
    /// Whether the signature matches the header and payload, when this process made it
    /// (`sign`) with an identity whose key is its leaf certificate's: known, so `verify` does
    /// not check it again; `nil` for a JWS read from text, or signed by a key that is not the
    /// leaf's (then `verify` checks the signature, and refuses it).
    package let signatureMatches: Bool?

    public var description: String { compactSerialization }

    /// Reads a compact serialization, without checking its signature (`verify(trustingRoot:)` does).
    /// - Throws: `JWSVerificationError` `.invalidEncoding` when it is not three base64url parts
    ///   with a JSON header and payload.
    public init(compactSerialization text: String) throws(JWSVerificationError) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw JWSVerificationError(
                .invalidEncoding, "a compact JWS has 3 parts separated by periods, not \(parts.count)")
        }
        let names = ["header", "payload", "signature"]
        var decoded: [Data] = []
        for (part, name) in zip(parts, names) {
            guard let data = Self.base64URLDecoded(part) else {
                throw JWSVerificationError(.invalidEncoding, "the \(name) is not base64url")
            }
            decoded.append(data)
        }
        for (data, name) in zip(decoded.prefix(2), names) {
            guard (try? JSONSerialization.jsonObject(with: data)) is [String: Any] else {
                throw JWSVerificationError(.invalidEncoding, "the \(name) is not a JSON object")
            }
        }
        compactSerialization = text
        (header, payload, signature) = (decoded[0], decoded[1], decoded[2])
        signatureMatches = nil
    }

    /// Signs `payload` with `identity`'s key, listing its chain in the header. Not `matching`:
    /// a real signature of other bytes, which fails verification as a tampered value does.
    package static func sign(payload: Data, with identity: SigningIdentity, matching: Bool = true) throws -> JWS {
        let signingInput = identity.jwsHeader.part + "." + base64URL(payload)
        let signed = matching ? signingInput : signingInput + ".not-this"
        let signature = try identity.privateKey.signature(for: Data(signed.utf8)).rawRepresentation
        // Its parts are known: no need to read back what was just written.
        return JWS(
            compactSerialization: signingInput + "." + base64URL(signature), header: identity.jwsHeader.json,
            payload: payload, signature: signature, matching: identity.keyIsTheLeafs ? matching : nil)
    }

    private init(compactSerialization: String, header: Data, payload: Data, signature: Data, matching: Bool?) {
        (self.compactSerialization, self.header, self.payload, self.signature) =
            (compactSerialization, header, payload, signature)
        signatureMatches = matching
    }

    /// Two JWS are equal when their texts are (the parts follow from the text), however each
    /// was made.
    public static func == (lhs: JWS, rhs: JWS) -> Bool {
        lhs.compactSerialization == rhs.compactSerialization
    }

    /// Hashes the text, as `==` compares it.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(compactSerialization)
    }

    /// Checks the signature and its chain against `root` (a DER certificate, as `ledger
    /// certificate export --format der` writes it), in this order: the header names ES256 and
    /// lists three certificates, the last of which is `root` itself; each is signed by the next;
    /// the intermediate is a certificate authority of path length 0 carrying Apple's
    /// intermediate marker (1.2.840.113635.100.6.2.1), the leaf is not a certificate authority
    /// and carries Apple's leaf marker (1.2.840.113635.100.6.11.1); the leaf's key made the
    /// signature (known without checking it again for a JWS this process signed with the leaf's
    /// own key: `signatureMatches`); then the three certificates are valid at the payload's `signedDate` (or now,
    /// without one), which only a verified payload is trusted to give. Revocation (OCSP) is not
    /// checked, as Apple's libraries do not check it with online checks off.
    ///
    /// ECDSA signatures are malleable: another signature of the same bytes (`s` replaced by
    /// `n - s`) verifies too, here as in every JOSE library. Compare payloads, never signatures.
    /// - Throws: `JWSVerificationError`: `.invalidEncoding` for a header that is not as
    ///   described, `.invalidCertificateChain`, `.invalidSignature`.
    public func verify(trustingRoot root: [UInt8]) throws(JWSVerificationError) {
        try verify(with: VerifiedChains(root: root))
    }

    /// `verify(trustingRoot:)` with `chains`' root, whose chains it remembers: a chain already
    /// checked there (the same three certificates) is not checked again, only the signature
    /// and the dates are. A store hands out many values signed by one chain.
    package func verify(with chains: VerifiedChains) throws(JWSVerificationError) {
        let fields = (try? JSONSerialization.jsonObject(with: header)) as? [String: Any] ?? [:]
        guard fields["alg"] as? String == "ES256" else {
            throw JWSVerificationError(.invalidEncoding, "the header's alg is not ES256")
        }
        guard let x5c = fields["x5c"] as? [String], x5c.count == 3 else {
            throw JWSVerificationError(.invalidEncoding, "the header's x5c does not list 3 certificates")
        }
        let checked = try chains.checked(x5c)
        // A signature this process made is known to match or not: checking it again could
        // only say what its signer knew (OpenStoreKit verifies every value it hands out).
        let matches =
            signatureMatches
            ?? (try? P256.Signing.ECDSASignature(rawRepresentation: signature)).map {
                checked.key.isValidSignature($0, for: Data(signingInput.utf8))
            } ?? false
        guard matches else {
            throw JWSVerificationError(.invalidSignature, "the signature does not match the header and payload")
        }
        let date = signedDate ?? Date()
        for (validity, name) in zip(checked.validity, ["leaf", "intermediate", "root"]) where !validity.contains(date) {
            throw JWSVerificationError(
                .invalidCertificateChain, "the \(name) certificate is not valid at \(date.formatted(.iso8601))")
        }
    }

    /// The leaf's key, once the chain is checked: each certificate is signed by the next (the
    /// root by itself), the intermediate is a certificate authority of path length 0 with
    /// Apple's intermediate marker, the leaf is not an authority and has Apple's leaf marker.
    /// Dates are not checked here.
    package static func signingKey(
        leaf: Certificate, intermediate: Certificate, root: Certificate
    ) throws(JWSVerificationError) -> P256.Signing.PublicKey {
        let links = [(leaf, intermediate, "leaf"), (intermediate, root, "intermediate"), (root, root, "root")]
        for (certificate, issuer, name) in links {
            guard certificate.issuer == issuer.subject,
                issuer.publicKey.isValidSignature(certificate.signature, for: certificate)
            else {
                throw JWSVerificationError(
                    .invalidCertificateChain, "the \(name) certificate is not signed by its issuer")
            }
        }
        guard (try? intermediate.extensions.basicConstraints) == .isCertificateAuthority(maxPathLength: 0),
            intermediate.extensions[oid: SigningIdentity.intermediateMarker] != nil
        else {
            throw JWSVerificationError(
                .invalidCertificateChain, "the intermediate certificate is not a signing certificate authority")
        }
        let leafIsAuthority =
            if case .isCertificateAuthority? = try? leaf.extensions.basicConstraints { true } else { false }
        guard !leafIsAuthority, leaf.extensions[oid: SigningIdentity.leafMarker] != nil else {
            throw JWSVerificationError(.invalidCertificateChain, "the leaf certificate is not a transaction signer")
        }
        guard let key = P256.Signing.PublicKey(leaf.publicKey) else {
            throw JWSVerificationError(.invalidCertificateChain, "the leaf certificate's key is not a P-256 key")
        }
        return key
    }

    /// What the signature signs: the header and payload parts with the period between them.
    package var signingInput: Substring {
        compactSerialization[..<compactSerialization.lastIndex(of: ".")!]  // there are three parts
    }

    /// The payload's `signedDate` (milliseconds since 1970), when it has one.
    public var signedDate: Date? {
        let fields = (try? JSONSerialization.jsonObject(with: payload)) as? [String: Any]
        return (fields?["signedDate"] as? NSNumber).map { Date(ledgerMilliseconds: $0.int64Value) }
    }

    /// `data` in base64url without padding, as each part of a compact JWS is spelled.
    package static func base64URL(_ data: Data) -> String {
        // Byte by byte: Foundation's replacingOccurrences searched the text three times through
        // NSString, most of the cost of a signed value (its header holds three certificates).
        var bytes = Array(data.base64EncodedString().utf8)
        while bytes.last == UInt8(ascii: "=") { bytes.removeLast() }
        for index in bytes.indices {
            if bytes[index] == UInt8(ascii: "+") {
                bytes[index] = UInt8(ascii: "-")
            } else if bytes[index] == UInt8(ascii: "/") {
                bytes[index] = UInt8(ascii: "_")
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func base64URLDecoded(_ part: Substring) -> Data? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(part.utf8.count + 3)
        for byte in part.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                bytes.append(byte)
            case UInt8(ascii: "-"): bytes.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): bytes.append(UInt8(ascii: "/"))
            default: return nil
            }
        }
        bytes += Array(repeating: UInt8(ascii: "="), count: (4 - bytes.count % 4) % 4)
        // Only the canonical spelling: Foundation ignores the unused low bits of the last
        // character, so that two different texts would read as the same signature.
        guard let data = Data(base64Encoded: Data(bytes)), base64URL(data).utf8.elementsEqual(part.utf8) else {
            return nil
        }
        return data
    }
}

/// Why a JWS failed verification, in StoreKit's terms (`VerificationResult.VerificationError`),
/// with what exactly was wrong.
public struct JWSVerificationError: DescribedError, Sendable, Hashable {
    /// The kinds of failure.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// Not a compact JWS, or its header is not ES256 with a three-certificate `x5c`.
        case invalidEncoding
        /// The chain does not lead to the trusted root, or a certificate is unreadable, badly
        /// signed or not valid at the signing date.
        case invalidCertificateChain
        /// The signature does not match the header and payload.
        case invalidSignature
    }

    /// The kind of failure.
    public let kind: Kind
    /// What was wrong.
    public let reason: String

    package init(_ kind: Kind, _ reason: String) {
        self.kind = kind
        self.reason = reason
    }

    public var description: String { "the JWS does not verify (\(kind.rawValue)): \(reason)" }
}

/// The certificate chains checked against one trusted root (`JWS.verify(with:)`): for each, the
/// leaf's key and the three certificates' validity. At most `limit` are kept (a ledger has one).
package final class VerifiedChains: Sendable {
    package struct Checked: Sendable {
        let key: P256.Signing.PublicKey
        let validity: [ClosedRange<Date>]
    }

    let root: [UInt8]
    private let chains = Mutex<[[String]: Checked]>([:])
    static let limit = 8

    package init(root: [UInt8]) {
        self.root = root
    }

    /// How many chains were checked and kept.
    package var count: Int { chains.withLock { $0.count } }

    /// `x5c` checked as `JWS.verify(trustingRoot:)` says, or as it was the first time.
    package func checked(_ x5c: [String]) throws(JWSVerificationError) -> Checked {
        if let known = chains.withLock({ $0[x5c] }) { return known }
        var chain: [Certificate] = []
        for (text, name) in zip(x5c, ["leaf", "intermediate", "root"]) {
            guard let der = Data(base64Encoded: text), let certificate = try? Certificate(derEncoded: [UInt8](der))
            else {
                throw JWSVerificationError(.invalidCertificateChain, "the \(name) certificate cannot be read")
            }
            chain.append(certificate)
        }
        guard Data(base64Encoded: x5c[2]) == Data(root) else {
            throw JWSVerificationError(.invalidCertificateChain, "the chain does not end with the trusted root")
        }
        let key = try JWS.signingKey(leaf: chain[0], intermediate: chain[1], root: chain[2])
        let checked = Checked(key: key, validity: chain.map { $0.notValidBefore...$0.notValidAfter })
        chains.withLock { chains in
            if chains.count < Self.limit { chains[x5c] = checked }
        }
        return checked
    }
}
