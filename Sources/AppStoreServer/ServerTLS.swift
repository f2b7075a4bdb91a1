import Foundation
import NIOSSL

/// The certificate and private key `AppStoreHTTPServer` answers HTTPS with (TLS 1.2 and 1.3
/// only, HTTP/1.1), read and checked when made: a server given one that cannot serve refuses to start,
/// it does not fail at each client's handshake.
///
/// `TestCertificateAuthority` makes such a pair for chosen host names (`ledger tls create`).
public struct ServerTLS: Sendable {
    /// The configuration the server's connections are wrapped with.
    let configuration: TLSConfiguration

    /// The largest certificate or key file read (a chain of a few certificates is a few KiB).
    public static let maximumFileSize = 1 << 20

    /// The server's certificate chain (PEM: its certificate first, then any intermediate) and its
    /// private key (PEM: PKCS#8, or the SEC1 and PKCS#1 forms OpenSSL writes).
    /// - Throws: `TLSFileError`: a file that cannot be read or is larger than
    ///   `maximumFileSize`, no certificate in the chain file, a key that does not read, or one
    ///   that is not the certificate's.
    public init(certificateChainFile: String, privateKeyFile: String) throws(TLSFileError) {
        try self.init(
            certificateChainPEM: try Self.read(certificateChainFile), privateKeyPEM: try Self.read(privateKeyFile),
            names: (certificateChainFile, privateKeyFile))
    }

    /// `init(certificateChainFile:privateKeyFile:)` with the two files' contents.
    public init(certificateChainPEM: [UInt8], privateKeyPEM: [UInt8]) throws(TLSFileError) {
        try self.init(
            certificateChainPEM: certificateChainPEM, privateKeyPEM: privateKeyPEM,
            names: ("the certificate chain", "the private key"))
    }

    private init(
        certificateChainPEM: [UInt8], privateKeyPEM: [UInt8], names: (chain: String, key: String)
    ) throws(TLSFileError) {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMBytes(certificateChainPEM)
        } catch {
            throw TLSFileError(description: "\(names.chain) holds no PEM certificate that reads")
        }
        guard !chain.isEmpty else { throw TLSFileError(description: "\(names.chain) holds no PEM certificate") }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(bytes: privateKeyPEM, format: .pem)
        } catch {
            throw TLSFileError(description: "\(names.key) holds no PEM private key that reads")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        // Made once here so that a key of another certificate is refused now: the context loads
        // the key against the chain's first certificate and refuses one that is not its pair.
        do {
            _ = try NIOSSLContext(configuration: configuration)
        } catch {
            throw TLSFileError(
                description: "\(names.key) is not the private key of the first certificate in \(names.chain) "
                    + "(\(error))")
        }
        self.configuration = configuration
    }

    static func read(_ path: String) throws(TLSFileError) -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw TLSFileError(description: "cannot read \(path)")
        }
        defer { try? handle.close() }
        do {
            let bytes = try handle.read(upToCount: maximumFileSize + 1) ?? Data()
            guard bytes.count <= maximumFileSize else {
                throw TLSFileError(description: "\(path) is larger than \(maximumFileSize) bytes")
            }
            return Array(bytes)
        } catch let error as TLSFileError {
            throw error
        } catch {
            throw TLSFileError(description: "cannot read \(path): \(error.localizedDescription)")
        }
    }
}

/// Why a certificate and key cannot serve HTTPS, or a certificate cannot be trusted
/// (`ServerTLS`, `TrustedAuthorities`).
public struct TLSFileError: Error, CustomStringConvertible, Equatable {
    /// What is wrong, naming the file.
    public let description: String
}

/// Certificate authorities a `NotificationSender` trusts besides the system's: a notification
/// URL with `https` whose certificate chains to one of them is delivered to (a team's test
/// receiver with a certificate of `TestCertificateAuthority`, say).
public struct TrustedAuthorities: Sendable {
    /// The authorities' certificates.
    let certificates: [NIOSSLCertificate]

    /// The PEM certificates in `file` (one or more).
    /// - Throws: `TLSFileError`: a file that cannot be read or is larger than
    ///   `ServerTLS.maximumFileSize`, or holds no certificate that reads.
    public init(pemFile file: String) throws(TLSFileError) {
        try self.init(pem: try ServerTLS.read(file), name: file)
    }

    /// The PEM certificates in `pem`.
    public init(pem: [UInt8]) throws(TLSFileError) {
        try self.init(pem: pem, name: "the authorities")
    }

    private init(pem: [UInt8], name: String) throws(TLSFileError) {
        do {
            certificates = try NIOSSLCertificate.fromPEMBytes(pem)
        } catch {
            throw TLSFileError(description: "\(name) holds no PEM certificate that reads")
        }
        guard !certificates.isEmpty else { throw TLSFileError(description: "\(name) holds no PEM certificate") }
    }
}
