package import Crypto
package import Foundation
import LedgerModel
import SwiftASN1
import Synchronization
import X509

/// The certificates a ledger signs with, in DER: a chain from `leaf`, whose key signs, through
/// `intermediate` to `root`, the certificate a server trusts (as a developer exports Xcode's
/// StoreKit testing certificate to test their server's verification).
///
/// It is a **test identity**: every ledger makes its own when it is created (or migrated to
/// schema 9), and keeps its private key in the ledger file, unencrypted. Whoever can read the
/// file can sign as the ledger. Trust a ledger's root only in tests, never for real purchases.
///
/// The chain has what Apple's App Store Server Library checks on the App Store's own chains:
/// three certificates, ES256 (ECDSA P-256 with SHA-256) signatures, the extension
/// 1.2.840.113635.100.6.11.1 on the leaf and 1.2.840.113635.100.6.2.1 on the intermediate, and
/// the strict X.509 form OpenSSL requires (critical basic constraints and key usage, key
/// identifiers). The certificates are valid from 2000-01-01 (so that a test's fixed clock in
/// the past still falls inside them) to 30 (root), 25 (intermediate) and 20 (leaf) years after
/// the ledger made them.
public struct SigningCertificates: Sendable, Hashable {
    /// The certificate whose key signs, in DER.
    public let leaf: [UInt8]
    /// The certificate that issued the leaf, in DER.
    public let intermediate: [UInt8]
    /// The self-signed root a server trusts, in DER.
    public let root: [UInt8]

    /// The chain of `leaf`, `intermediate` and `root`, in DER.
    package init(leaf: [UInt8], intermediate: [UInt8], root: [UInt8]) {
        self.leaf = leaf
        self.intermediate = intermediate
        self.root = root
    }

    /// The chain as a JWS `x5c` header lists it: leaf, intermediate, root.
    public var chain: [[UInt8]] { [leaf, intermediate, root] }

    /// The SHA-256 of `der`, in lowercase hexadecimal: how people compare certificates.
    public static func fingerprint(_ der: [UInt8]) -> String {
        Hex.string(Array(SHA256.hash(data: der)))
    }

    /// `der` as a PEM `CERTIFICATE` block: base64 in lines of 64 characters, ending with a newline.
    public static func pem(_ der: [UInt8]) -> String {
        let base64 = Data(der).base64EncodedString()
        var lines = ["-----BEGIN CERTIFICATE-----"]
        var start = base64.startIndex
        while start < base64.endIndex {
            let end = base64.index(start, offsetBy: 64, limitedBy: base64.endIndex) ?? base64.endIndex
            lines.append(String(base64[start..<end]))
            start = end
        }
        lines.append("-----END CERTIFICATE-----")
        return lines.joined(separator: "\n") + "\n"
    }
}

/// A ledger's signing key and its certificate chain (`SigningCertificates`), made once.
package struct SigningIdentity: Sendable {
    package let privateKey: P256.Signing.PrivateKey

    /// The key of the events' MACs (`HashChain.mac`): SHA-256 of the text `StoreLedger event
    /// MAC 1` and the private key, so that only a holder of the key can authenticate an event.
    package var eventKey: [UInt8] {
        var hash = SHA256()
        hash.update(data: Data("StoreLedger event MAC 1".utf8))
        hash.update(data: privateKey.rawRepresentation)
        return hash.finalize().withUnsafeBytes { [UInt8]($0) }
    }
    package let certificates: SigningCertificates
    package let createdAt: Date
    /// The first part of every JWS this identity signs: the header
    /// `{"alg":"ES256","x5c":[leaf, intermediate, root]}` in base64url, made once (the three
    /// certificates are most of a signed value's bytes).
    package let jwsHeader: (json: Data, part: String)
    /// The `appTransactionId` of the store's one customer: decimal digits derived from the root
    /// certificate (SHA-256, its first 8 bytes modulo 10^18), the same for every transaction a
    /// ledger signs, and different from another ledger's.
    package let appTransactionID: String
    /// The store's one device (StoreKit's `AppStore.deviceVerificationID`): a UUID derived from
    /// the root certificate, as `appTransactionID` is, so the same for every launch of a ledger.
    package let deviceVerificationID: UUID
    /// Whether the private key is the leaf certificate's: only then does a signature it makes
    /// verify against the chain, and a JWS it signs knows so without checking it again
    /// (`JWS.signatureMatches`). An identity whose key was swapped in the file is not.
    package let keyIsTheLeafs: Bool

    package init(privateKey: P256.Signing.PrivateKey, certificates: SigningCertificates, createdAt: Date) {
        self.privateKey = privateKey
        self.certificates = certificates
        self.createdAt = createdAt
        let leaf = (try? Certificate(derEncoded: certificates.leaf)).flatMap { P256.Signing.PublicKey($0.publicKey) }
        keyIsTheLeafs = leaf?.rawRepresentation == privateKey.publicKey.rawRepresentation
        // Standard base64 needs no escaping in a JSON string (`/` need not be escaped).
        let chain = certificates.chain.map { "\"" + Data($0).base64EncodedString() + "\"" }
        let json = Data(("{\"alg\":\"ES256\",\"x5c\":[" + chain.joined(separator: ",") + "]}").utf8)
        jwsHeader = (json, JWS.base64URL(json))
        let digest = SHA256.hash(data: certificates.root).prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        appTransactionID = String(digest % 1_000_000_000_000_000_000)
        var device = SHA256()
        device.update(data: Data("StoreLedger device 1".utf8))
        device.update(data: certificates.root)
        deviceVerificationID = Self.uuid(Array(device.finalize()))
    }

    /// The `appTransactionId` of customer `customer` in app `app` (the keys of their rows; 1 is
    /// the first, the one customer and app of a ledger made before customers and apps, whose id
    /// is `appTransactionID`): for the others, decimal digits derived as the first's from the
    /// root certificate, the customer and the app, so the same at every signature and different
    /// for each customer of each app (Apple: "a unique identifier for each Apple Account that
    /// downloads your app").
    package func appTransactionID(ofCustomer customer: Int64, app: Int64 = 1) -> String {
        guard customer != 1 || app != 1 else { return appTransactionID }
        let digest =
            app == 1
            ? customerDigest("StoreLedger customer 1", customer) : customerDigest("StoreLedger app 1", customer, app)
        return String(digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } % 1_000_000_000_000_000_000)
    }

    /// The device of customer `customer` (StoreKit's `AppStore.deviceVerificationID`): the
    /// first customer's unnamed device's is `deviceVerificationID`; the others' are derived
    /// alike; a named device's (`device`, the key of its row) from it alone, each its own.
    package func deviceVerificationID(ofCustomer customer: Int64, device: Int64? = nil) -> UUID {
        if let device { return Self.uuid(customerDigest("StoreLedger named device 1", device)) }
        guard customer != 1 else { return deviceVerificationID }
        return Self.uuid(customerDigest("StoreLedger customer device 1", customer))
    }

    private func customerDigest(_ label: String, _ keys: Int64...) -> [UInt8] {
        var hash = SHA256()
        hash.update(data: Data(label.utf8))
        hash.update(data: certificates.root)
        for key in keys { withUnsafeBytes(of: key.bigEndian) { hash.update(bufferPointer: $0) } }
        return Array(hash.finalize())
    }

    /// A version 4 UUID made of `bytes`' first 16.
    private static func uuid(_ bytes: [UInt8]) -> UUID {
        UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6] & 0x0F | 0x40, bytes[7],
                bytes[8] & 0x3F | 0x80, bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }

    /// The extension Apple's verifiers require on the leaf of an App Store signing chain.
    static let leafMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
    /// The extension Apple's verifiers require on the intermediate of an App Store signing chain.
    static let intermediateMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]

    /// A new identity: three new P-256 keys, of which only the leaf's is kept.
    package static func make(at now: Date) throws -> SigningIdentity {
        let rootKey = P256.Signing.PrivateKey()
        let intermediateKey = P256.Signing.PrivateKey()
        let leafKey = P256.Signing.PrivateKey()
        let start = Date(timeIntervalSince1970: 946_684_800)  // 2000-01-01
        let year = 365.25 * 86_400
        let rootName = try DistinguishedName {
            CountryName("US")
            OrganizationName("StoreLedger test identity (not Apple)")
            CommonName("StoreLedger Test Root CA")
        }
        let intermediateName = try DistinguishedName {
            CountryName("US")
            OrganizationName("StoreLedger test identity (not Apple)")
            CommonName("StoreLedger Test Signing CA")
        }
        let leafName = try DistinguishedName {
            CountryName("US")
            OrganizationName("StoreLedger test identity (not Apple)")
            CommonName("StoreLedger Test Transaction Signer")
        }
        let rootPublic = Certificate.PublicKey(rootKey.publicKey)
        let intermediatePublic = Certificate.PublicKey(intermediateKey.publicKey)
        let leafPublic = Certificate.PublicKey(leafKey.publicKey)
        let rootIdentifier = SubjectKeyIdentifier(hash: rootPublic)
        let intermediateIdentifier = SubjectKeyIdentifier(hash: intermediatePublic)

        /// A certificate of `subject`'s key, valid from `start` for `years`, signed by `issuerKey`.
        func issue(
            _ publicKey: Certificate.PublicKey, subject: DistinguishedName, issuer: DistinguishedName, years: Double,
            signedBy issuerKey: P256.Signing.PrivateKey, extensions: Certificate.Extensions
        ) throws -> Certificate {
            try Certificate(
                version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: publicKey,
                notValidBefore: start, notValidAfter: now.addingTimeInterval(years * year),
                issuer: issuer, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: extensions, issuerPrivateKey: Certificate.PrivateKey(issuerKey))
        }
        let root = try issue(
            rootPublic, subject: rootName, issuer: rootName, years: 30, signedBy: rootKey,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                rootIdentifier
            })
        let intermediate = try issue(
            intermediatePublic, subject: intermediateName, issuer: rootName, years: 25, signedBy: rootKey,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                intermediateIdentifier
                AuthorityKeyIdentifier(keyIdentifier: rootIdentifier.keyIdentifier)
                Certificate.Extension(oid: intermediateMarker, critical: false, value: [0x05, 0x00])  // ASN.1 NULL
            })
        let leaf = try issue(
            leafPublic, subject: leafName, issuer: intermediateName, years: 20, signedBy: intermediateKey,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                SubjectKeyIdentifier(hash: leafPublic)
                AuthorityKeyIdentifier(keyIdentifier: intermediateIdentifier.keyIdentifier)
                Certificate.Extension(oid: leafMarker, critical: false, value: [0x05, 0x00])
            })
        func der(_ certificate: Certificate) throws -> [UInt8] {
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            return serializer.serializedBytes
        }
        return SigningIdentity(
            privateKey: leafKey,
            certificates: SigningCertificates(
                leaf: try der(leaf), intermediate: try der(intermediate), root: try der(root)),
            createdAt: now)
    }
}

/// Bytes in lowercase hexadecimal, as hashes and fingerprints are shown.
package enum Hex {
    package static func string(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
