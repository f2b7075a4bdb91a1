import AsyncHTTPClient
import Crypto
import Foundation
import LedgerTestSupport
import LedgerTesting
import NIOCore
import NIOHTTP1
import NIOSSL
import StoreLedger
import StoreTesting
import SwiftASN1
import Testing
@_spi(FixedExpiryValidationTime) import X509

@testable import AppStoreServer

/// HTTPS: the test authority's certificates as clients check them, the server over TLS, and
/// notifications to an `https` receiver.
@Suite struct TLSTests {
    let maker = TokenMaker()

    /// What a client that connects to `host` finds of `made`'s server certificate: valid (it
    /// chains to the authority and names `host`) or not.
    static func validates(
        _ made: TestCertificateAuthority, for host: String, at now: Date = Date()
    ) async throws -> Bool {
        let authority = try Certificate(pemEncoded: made.authority)
        let leaf = try Self.serverCertificate(made)
        let isAddress = host.contains(":") || host.allSatisfy { $0.isNumber || $0 == "." }
        var verifier = Verifier(rootCertificates: CertificateStore([authority])) {
            RFC5280Policy(fixedExpiryValidationTime: now)
            ServerIdentityPolicy(serverHostname: isAddress ? nil : host, serverIP: isAddress ? host : nil)
        }
        if case .validCertificate = await verifier.validate(leaf: leaf, intermediates: CertificateStore()) {
            return true
        }
        return false
    }

    /// The first certificate of `made`'s chain: the server's.
    static func serverCertificate(_ made: TestCertificateAuthority) throws -> Certificate {
        try Certificate(
            pemDocument: try #require(try PEMDocument.parseMultiple(pemString: made.certificateChain).first))
    }

    @Test func theServersCertificateNamesEachHostServesOnlyServersAndChainsToTheAuthority() async throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000.75)
        let made = try TestCertificateAuthority.make(at: now)
        #expect(made.hosts == TestCertificateAuthority.defaultHosts)
        for host in made.hosts { #expect(try await Self.validates(made, for: host, at: now), "\(host)") }
        for other in ["api.example.com", "storekit.apple.com", "10.0.0.1", "::2"] {
            #expect(try await !Self.validates(made, for: other, at: now), "\(other) is not named")
        }
        let leaf = try Self.serverCertificate(made)
        #expect(try leaf.extensions.extendedKeyUsage?.contains(.serverAuth) == true)
        #expect(try leaf.extensions.basicConstraints == .notCertificateAuthority)
        #expect(
            leaf.notValidBefore == Date(timeIntervalSince1970: 1_800_000_000 - 3_600), "an hour before, whole seconds")
        #expect(leaf.notValidAfter == made.notValidAfter)
        #expect(made.notValidAfter == Date(timeIntervalSince1970: 1_800_000_000 - 3_600 + 825 * 86_400))
        #expect(leaf.notValidAfter.timeIntervalSince(leaf.notValidBefore) == 825 * 86_400, "825 days, as Apple counts")
        // A client whose clock is an hour behind accepts it; one past its end does not.
        #expect(try await Self.validates(made, for: "localhost", at: now.addingTimeInterval(-3_599)))
        #expect(try await !Self.validates(made, for: "localhost", at: made.notValidAfter.addingTimeInterval(1)))
        // The chain the server presents ends with the authority; the key is the leaf's.
        #expect(made.certificateChain.hasSuffix(made.authority))
        let key = try Certificate.PrivateKey(pemEncoded: made.privateKey)
        #expect(key.publicKey == leaf.publicKey)
    }

    /// Seeded: random host names and addresses, each named by its certificate, and a name the
    /// certificate was not made for refused.
    @Test(arguments: [1, 2, 3]) func randomHostsAreEachNamed(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        func label() -> String {
            let letters = Array("abcdefghijklmnopqrstuvwxyz0123456789")
            let length = Int.random(in: 1...20, using: &random)
            var text = String((0..<length).map { _ in letters.randomElement(using: &random)! })
            if length > 2, Bool.random(using: &random) {
                text.insert("-", at: text.index(text.startIndex, offsetBy: 1))
            }
            return text
        }
        var hosts: [String] = []
        for _ in 0..<Int.random(in: 1...12, using: &random) {
            switch Int.random(in: 0..<3, using: &random) {
            case 0:
                hosts.append(
                    (0..<4).map { _ in String(Int.random(in: 1...254, using: &random)) }.joined(separator: "."))
            case 1: hosts.append("fd00::" + String(Int.random(in: 1...0xffff, using: &random), radix: 16))
            default:
                hosts.append((0..<Int.random(in: 1...4, using: &random)).map { _ in label() }.joined(separator: "."))
            }
        }
        let made = try TestCertificateAuthority.make(hosts: hosts)
        for host in hosts { #expect(try await Self.validates(made, for: host), "\(host) (seed \(seed))") }
        #expect(try await !Self.validates(made, for: "not-named.example"), "seed \(seed)")
    }

    @Test func hostNamesACertificateCannotHoldAreRefused() throws {
        #expect(throws: TestCertificateAuthority.HostError(description: "a certificate needs at least one host name")) {
            try TestCertificateAuthority.make(hosts: [])
        }
        #expect(throws: TestCertificateAuthority.HostError(description: "at most 100 host names, not 101")) {
            try TestCertificateAuthority.make(hosts: (0...100).map { "h\($0).example" })
        }
        for bad in [
            "bad_name", "", "-lead.example", "trail-.example", "a..b", "*.com", "x.*.example", "é.example",
            "1.2.3", "host.123", String(repeating: "a", count: 64) + ".example",
            (0..<64).map { _ in "abc" }.joined(separator: "."),
        ] {
            #expect(
                throws: TestCertificateAuthority.HostError(
                    description: "\"\(bad.prefix(80))\" is neither a host name (letters, digits and hyphens in "
                        + "dot-separated labels) nor an IP address")
            ) { try TestCertificateAuthority.check(host: bad) }
        }
        for good in ["*.example.com", "local-testing-base-url", "LOCALHOST", "10.1.2.3", "::1", "fe80::1"] {
            #expect(throws: Never.self) { try TestCertificateAuthority.check(host: good) }
        }
    }

    @Test func aCertificateOrKeyThatCannotServeIsRefusedWithItsReason() async throws {
        let made = try TestCertificateAuthority.make()
        let other = try TestCertificateAuthority.make()
        let chain = Array(made.certificateChain.utf8)
        #expect(throws: Never.self) {
            try ServerTLS(certificateChainPEM: chain, privateKeyPEM: Array(made.privateKey.utf8))
        }
        do {
            _ = try ServerTLS(certificateChainPEM: chain, privateKeyPEM: Array(other.privateKey.utf8))
            Issue.record("a key of another certificate was taken")
        } catch {
            #expect(
                error.description.hasPrefix(
                    "the private key is not the private key of the first certificate in the certificate chain ("))
        }
        #expect(throws: TLSFileError(description: "the certificate chain holds no PEM certificate that reads")) {
            try ServerTLS(certificateChainPEM: Array(made.privateKey.utf8), privateKeyPEM: Array(made.privateKey.utf8))
        }
        #expect(throws: TLSFileError(description: "the private key holds no PEM private key that reads")) {
            try ServerTLS(certificateChainPEM: chain, privateKeyPEM: chain)
        }
        #expect(throws: TLSFileError(description: "cannot read /nonexistent/server.pem")) {
            try ServerTLS(certificateChainFile: "/nonexistent/server.pem", privateKeyFile: "/nonexistent/key.pem")
        }
        try await withTemporaryDirectory { directory in
            let large = directory + "/large.pem"
            try Data(count: ServerTLS.maximumFileSize + 1).write(to: URL(fileURLWithPath: large))
            #expect(throws: TLSFileError(description: "\(large) is larger than 1048576 bytes")) {
                try TrustedAuthorities(pemFile: large)
            }
        }
        #expect(throws: TLSFileError(description: "the authorities holds no PEM certificate that reads")) {
            try TrustedAuthorities(pem: Array("not a certificate".utf8))
        }
    }

    /// A served ledger over HTTPS with `made`'s certificate: `body` gets the port and a token.
    func withHTTPSServer(
        _ made: TestCertificateAuthority, _ body: (Ledger, Int, String) async throws -> Void
    ) async throws {
        try await withTemporaryLedger { ledger in
            try ledger.addAPIKey(keyID: maker.keyID, issuerID: maker.issuerID, publicKey: maker.key.publicKey)
            try StoreTestSession(ledger: ledger).update { $0.bundleID = maker.bundleID }
            let tls = try ServerTLS(
                certificateChainPEM: Array(made.certificateChain.utf8), privateKeyPEM: Array(made.privateKey.utf8))
            let server = AppStoreHTTPServer(ledger: ledger, port: 0, sendsNotifications: false, tls: tls)
            #expect(server.scheme == "https")
            let (ports, bound) = AsyncStream<Int>.makeStream()
            let serving = Task { try await server.run { _, port in bound.yield(port) } }
            var iterator = ports.makeAsyncIterator()
            let port = try #require(await iterator.next())
            defer { serving.cancel() }
            try await body(ledger, port, try maker.authorization(claims: maker.claims(now: Date())))
            serving.cancel()
            _ = try? await serving.value
        }
    }

    /// An HTTP client that trusts `authority` (PEM) besides the system's; none: the system's only.
    static func client(trusting authority: String?) throws -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let authority {
            tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMBytes(Array(authority.utf8)))]
        }
        // A client retries a failed handshake until its connect timeout: a short one.
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls, timeout: .init(connect: .seconds(1)))
        configuration.httpVersion = .http1Only
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// The status of `GET url` with `authorization`, or the error that kept it from an answer.
    static func get(_ url: String, authorization: String, with client: HTTPClient) async -> Result<Int, any Error> {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Authorization", value: authorization)
        do {
            let response = try await client.execute(request, timeout: .seconds(10))
            _ = try await response.body.collect(upTo: 1 << 20)
            return .success(Int(response.status.code))
        } catch {
            return .failure(error)
        }
    }

    @Test func theServerAnswersHTTPSToAClientThatTrustsItsAuthorityOnly() async throws {
        let made = try TestCertificateAuthority.make()
        try await withHTTPSServer(made) { ledger, port, authorization in
            let bought = try await StoreTestSession(ledger: ledger).buyProduct(
                Payment(productID: SampleCatalog.nonConsumable))
            let trusting = try Self.client(trusting: made.authority)
            let stranger = try Self.client(trusting: nil)
            let plain = try Self.client(trusting: nil)
            let path = "/inApps/v1/transactions/\(bought.id)"
            for host in ["localhost", "127.0.0.1"] {
                let answer = await Self.get(
                    "https://\(host):\(port)\(path)", authorization: authorization, with: trusting)
                #expect(try answer.get() == 200, "\(host)")
            }
            let refused = await Self.get(
                "https://localhost:\(port)\(path)", authorization: authorization, with: stranger)
            #expect(throws: NIOSSLError.self) { try refused.get() }
            let unencrypted = await Self.get(
                "http://127.0.0.1:\(port)\(path)", authorization: authorization, with: plain)
            #expect(throws: (any Error).self, "plain HTTP gets no answer from a TLS port") { try unencrypted.get() }
            for client in [trusting, stranger, plain] { try await client.shutdown() }
        }
    }

    /// An `https` notification URL whose certificate chains to an authority the sender trusts is
    /// delivered to; a sender that does not trust it records `TLS_ISSUE`.
    @Test func notificationsReachAnHTTPSReceiverWhoseAuthorityTheSenderTrusts() async throws {
        let made = try TestCertificateAuthority.make()
        let receiver = try await NotificationCollector.start(
            tls: try ServerTLS(
                certificateChainPEM: Array(made.certificateChain.utf8), privateKeyPEM: Array(made.privateKey.utf8)))
        #expect(receiver.url.hasPrefix("https://127.0.0.1:"))
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        try await withTemporaryLedger(configuration: LedgerConfiguration(clock: .fixed(now))) { ledger in
            let session = StoreTestSession(ledger: ledger)
            _ = try session.set(.notificationURL, to: receiver.url)
            _ = try await session.buyProduct(Payment(productID: SampleCatalog.consumable))
            // The HTTP client retries a failed handshake until the attempt's timeout: a short one.
            var limits = NotificationSender.Limits()
            limits.attemptTimeout = .seconds(1)
            let stranger = NotificationSender(ledger: ledger, limits: limits)
            let refused = try await stranger.sendDue().attempted
            try await stranger.shutdown()
            #expect(refused.map(\.status) == [.pending])
            #expect(refused.first?.attempts.map(\.result) == [.tlsIssue])
            #expect(receiver.arrivals.isEmpty)
            _ = try await session.advanceClock(by: 3_600)
            let trusting = NotificationSender(
                ledger: ledger, trusting: try TrustedAuthorities(pem: Array(made.authority.utf8)))
            let delivered = try await trusting.sendDue().attempted
            try await trusting.shutdown()
            #expect(delivered.map(\.status) == [.delivered])
            #expect(receiver.signedPayloads == [try ledger.notifications()[0].signedPayload])
        }
        await receiver.stop()
    }
}
