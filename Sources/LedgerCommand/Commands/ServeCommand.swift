import AppStoreServer
import ArgumentParser
import Foundation
import StoreLedger

/// `ledger serve`: the App Store Server API over the ledger, on a real port.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the App Store Server API over the ledger.",
        discussion: """
            Answers the App Store Server API with Apple's paths, JSON bodies and error codes, \
            signed as the store signs (see `ledger store set environment`). Every request needs \
            an ES256 bearer token signed with one of the ledger's API keys (`ledger api-keys`). \
            When it accepts connections it prints one line, `listening on http://HOST:PORT` \
            (https with --tls-certificate; an IPv6 host in brackets), on standard output, after a warning on standard error for \
            a ledger with no valid API key (every request would get 401) and for a store that \
            signs for the Xcode environment (Apple's verifiers refuse it unless told). SIGINT or \
            SIGTERM: it stops accepting, finishes the requests in flight and exits 0. It also \
            sends the store's Server Notifications V2 (`ledger notifications`) and makes the \
            renewals the store's clock brings.

            With --tls-certificate and --tls-key it answers HTTPS only (`ledger tls create` \
            writes a test authority and a certificate for Apple's API hosts and this machine). \
            --notification-ca trusts more authorities for an https notification URL.

            Answered: Get Transaction Info, Get App Transaction Info, Get Transaction History \
            (v1 and v2), Get Refund History, Get All Subscription Statuses, Look Up Order ID, \
            Send Consumption Information (v1 and v2), Set App Account Token, Extend a \
            Subscription Renewal Date, Extend Subscription Renewal Dates for All Active \
            Subscribers, Get Status of Subscription Renewal Date Extensions, Request a Test \
            Notification, Get Test Notification Status, Get Notification History, Finish Transaction.

            Clients are bounded: 256 connections, 15 seconds without a request part, 15 seconds \
            for a body, 1 MiB a body; a request without a valid token is refused before its body \
            is read.
            """)

    @OptionGroup var options: GlobalOptions

    @Option(help: "The address to listen on (loopback unless told otherwise).")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on; 0 picks a free one (the line printed says which).")
    var port = 8080

    @Option(
        help: ArgumentHelp(
            "Answer HTTPS with this certificate chain (PEM, the server's first); needs --tls-key.",
            valueName: "file"))
    var tlsCertificate: String?

    @Option(help: ArgumentHelp("The private key of --tls-certificate (PEM).", valueName: "file"))
    var tlsKey: String?

    @OptionGroup var trust: NotificationTrustOptions

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0 to 65535, not \(port)") }
        guard !host.isEmpty else { throw ValidationError("--host must not be empty") }
        guard (tlsCertificate == nil) == (tlsKey == nil) else {
            throw ValidationError("--tls-certificate and --tls-key go together")
        }
    }

    func run() async throws {
        let tls = try serverTLS()
        let authorities = try trust.authorities()
        let ledger = try options.openLedger()
        for warning in try Self.warnings(about: ledger) { Output.message("warning: " + warning) }
        let server = AppStoreHTTPServer(
            ledger: ledger, host: host, port: port, tls: tls, notificationTrust: authorities)
        do {
            try await server.run(stoppingOnSignals: true) { host, port in
                // Written at once, unbuffered: a script waits for this line to connect. An IPv6
                // address is bracketed, as a URL needs it.
                let shown = host.contains(":") ? "[\(host)]" : host
                FileHandle.standardOutput.write(Data("listening on \(server.scheme)://\(shown):\(port)\n".utf8))
            }
        } catch {
            throw CommandRefusal(description: "cannot serve on \(host):\(port): \(error)")
        }
    }

    /// The certificate and key of `--tls-certificate` and `--tls-key`, read and checked now;
    /// `nil` without them.
    private func serverTLS() throws -> ServerTLS? {
        guard let tlsCertificate, let tlsKey else { return nil }
        do {
            return try ServerTLS(certificateChainFile: tlsCertificate, privateKeyFile: tlsKey)
        } catch {
            throw CommandRefusal(description: "cannot serve HTTPS: \(error.description)")
        }
    }

    /// What a server of `ledger`'s store would do that its user may not expect.
    static func warnings(about ledger: Ledger) throws -> [String] {
        var warnings: [String] = []
        if try !ledger.apiKeys().contains(where: { $0.revokedAt == nil }) {
            warnings.append(
                "the ledger has no API key that is not revoked: every request will get 401 "
                    + "(create one with `ledger api-keys create`)")
        }
        let apps = try ledger.apps()
        let inXcode = apps.filter { $0.environment == .xcode }.map(\.bundleID)
        if !inXcode.isEmpty {
            let who =
                apps.count == 1
                ? "the store signs"
                : "the app\(inXcode.count == 1 ? "" : "s") \(inXcode.joined(separator: ", ")) sign\(inXcode.count == 1 ? "s" : "")"
            warnings.append(
                "\(who) for the Xcode environment, which Apple's verifiers refuse unless told "
                    + "(`ledger store set environment Sandbox` for a server's real verification path)")
        }
        return warnings
    }
}
