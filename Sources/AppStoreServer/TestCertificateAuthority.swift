import Crypto
public import Foundation
import SwiftASN1
import X509

#if canImport(Glibc)
import Glibc
#endif

/// A certificate authority for tests and a server certificate it issued for chosen host names, in
/// PEM: what `ledger serve --tls-certificate --tls-key` answers HTTPS with, and what a client
/// (Apple's libraries, a browser, curl) is told to trust (`authority`). `ledger tls create`
/// writes them.
///
/// Apple's server libraries hard-code `https://` and Apple's hosts; with the authority trusted
/// and a hosts-file entry pointing Apple's host name at the server, they reach it unchanged.
///
/// It is a **test authority**: its private key is never kept (no more certificates can be issued
/// from it; make a new one), and it names itself as StoreLedger's. Trust it only on a test machine.
///
/// The certificates have what Apple's platforms and OpenSSL require of a server's: ECDSA P-256
/// with SHA-256; the authority's critical basic constraints (a CA that issues no other CA) and
/// key usage; the server's subject alternative names (DNS names and IP addresses), its key
/// usage (digital signature) and extended key usage (server authentication), and key
/// identifiers. The server's certificate is valid for `serverValidity` (825 days: the longest
/// Apple's platforms accept from an authority a user added), from an hour before it was made
/// (a client's clock a little behind still accepts it), so until 825 days less an hour after
/// it was made; the authority's for ten years.
public struct TestCertificateAuthority: Sendable, Hashable {
    /// The authority's certificate, to be trusted by clients (PEM).
    public let authority: String
    /// The server's certificate, then the authority's (PEM): the chain the server presents.
    public let certificateChain: String
    /// The server's private key (PEM, PKCS#8).
    public let privateKey: String
    /// The names the server's certificate is for.
    public let hosts: [String]
    /// When the server's certificate expires.
    public let notValidAfter: Date

    /// How long the server's certificate is valid.
    public static let serverValidity: TimeInterval = 825 * 86_400

    /// The most host names one certificate is made for.
    public static let maximumHosts = 100

    /// The host names a certificate is made for when none is chosen: this machine by name and by
    /// address, and the App Store Server API's hosts as Apple's libraries name them (production
    /// and sandbox, in their current and older spellings, and the local-testing host).
    public static let defaultHosts = [
        "localhost", "127.0.0.1", "::1", "api.storekit.apple.com", "api.storekit-sandbox.apple.com",
        "api.storekit.itunes.apple.com", "api.storekit-sandbox.itunes.apple.com", "local-testing-base-url",
    ]

    /// A new authority (a new P-256 key, dropped once it signed) and a server certificate for
    /// `hosts` (DNS names, a wildcard as the first label allowed, or IPv4 and IPv6 addresses),
    /// valid from an hour before `now`.
    /// - Throws: `TestCertificateAuthority.HostError` for an empty list, more than
    ///   `maximumHosts`, or a name that is neither a host name nor an address.
    public static func make(hosts: [String] = defaultHosts, at now: Date = Date()) throws -> TestCertificateAuthority {
        guard !hosts.isEmpty else { throw HostError(description: "a certificate needs at least one host name") }
        guard hosts.count <= maximumHosts else {
            throw HostError(description: "at most \(maximumHosts) host names, not \(hosts.count)")
        }
        let names = try hosts.map(subjectAlternativeName)
        // Whole seconds, as a certificate holds its dates.
        let now = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let authorityKey = P256.Signing.PrivateKey()
        let serverKey = P256.Signing.PrivateKey()
        let start = now.addingTimeInterval(-3_600)
        let authorityName = try DistinguishedName {
            OrganizationName("StoreLedger test authority (not for real traffic)")
            CommonName("StoreLedger Test TLS CA")
        }
        // The names are the subject alternative names; the common name only says what it is
        // (a host name may be longer than a common name may be).
        let serverName = try DistinguishedName {
            OrganizationName("StoreLedger test authority (not for real traffic)")
            CommonName("StoreLedger test server")
        }
        let authorityPublic = Certificate.PublicKey(authorityKey.publicKey)
        let serverPublic = Certificate.PublicKey(serverKey.publicKey)
        let authorityIdentifier = SubjectKeyIdentifier(hash: authorityPublic)
        let signer = Certificate.PrivateKey(authorityKey)
        let authority = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: authorityPublic,
            notValidBefore: start, notValidAfter: now.addingTimeInterval(3_652 * 86_400),
            issuer: authorityName, subject: authorityName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                authorityIdentifier
            },
            issuerPrivateKey: signer)
        // Counted from its start, as Apple's platforms count a certificate's validity.
        let notValidAfter = start.addingTimeInterval(serverValidity)
        let server = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: serverPublic,
            notValidBefore: start, notValidAfter: notValidAfter,
            issuer: authorityName, subject: serverName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(names)
                SubjectKeyIdentifier(hash: serverPublic)
                AuthorityKeyIdentifier(keyIdentifier: authorityIdentifier.keyIdentifier)
            },
            issuerPrivateKey: signer)
        let authorityPEM = try authority.serializeAsPEM().pemString + "\n"
        return TestCertificateAuthority(
            authority: authorityPEM, certificateChain: try server.serializeAsPEM().pemString + "\n" + authorityPEM,
            privateKey: serverKey.pemRepresentation + "\n", hosts: hosts, notValidAfter: notValidAfter)
    }

    /// A host name the certificate cannot be made for.
    public struct HostError: Error, CustomStringConvertible, Equatable {
        /// What is wrong with it.
        public let description: String
    }

    /// Refuses a host name `make` would refuse (`HostError`), without making anything.
    public static func check(host: String) throws {
        _ = try subjectAlternativeName(host)
    }

    /// `host` as a certificate names it: an IP address (v4 or v6) or a DNS name (RFC 1123 labels
    /// of letters, digits and inner hyphens, at most 63 bytes each and 253 in all; the first
    /// label may be `*`; the last is not all digits, which clients read as an IPv4 address).
    static func subjectAlternativeName(_ host: String) throws -> GeneralName {
        if let address = ipAddress(host) { return .ipAddress(ASN1OctetString(contentBytes: address[...])) }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        let valid =
            host.utf8.count <= 253 && !(labels.last ?? "").allSatisfy(\.isNumber)
            && labels.enumerated().allSatisfy { index, label in
                if index == 0, label == "*", labels.count > 2 { return true }
                return (1...63).contains(label.utf8.count) && label.first != "-" && label.last != "-"
                    && label.unicodeScalars.allSatisfy {
                        $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-")
                    }
            }
        guard valid else {
            throw HostError(
                description: "\"\(host.prefix(80))\" is neither a host name (letters, digits and hyphens in "
                    + "dot-separated labels) nor an IP address")
        }
        return .dnsName(host.lowercased())
    }

    /// The bytes of `host` when it is an IPv4 (4 bytes) or IPv6 (16 bytes) address.
    private static func ipAddress(_ host: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }
}
