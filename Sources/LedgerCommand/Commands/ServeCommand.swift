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
            When it accepts connections it prints one line, `listening on http://HOST:PORT`, \
            on standard output. SIGINT or SIGTERM: it stops accepting, finishes the requests \
            in flight and exits 0. Answered now: Get Transaction Info, Get Transaction History (v1 and v2), \
            Get Refund History, Get All Subscription Statuses.
            """)

    @OptionGroup var options: GlobalOptions

    @Option(help: "The address to listen on (loopback unless told otherwise).")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on; 0 picks a free one (the line printed says which).")
    var port = 8080

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0 to 65535, not \(port)") }
        guard !host.isEmpty else { throw ValidationError("--host must not be empty") }
    }

    func run() async throws {
        let server = AppStoreHTTPServer(ledger: try options.openLedger(), host: host, port: port)
        do {
            try await server.run(stoppingOnSignals: true) { host, port in
                // Written at once, unbuffered: a script waits for this line to connect.
                FileHandle.standardOutput.write(Data("listening on http://\(host):\(port)\n".utf8))
            }
        } catch {
            throw CommandRefusal(description: "cannot serve on \(host):\(port): \(error)")
        }
    }
}
