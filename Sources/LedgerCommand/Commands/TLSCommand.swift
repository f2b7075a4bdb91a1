import AppStoreServer
import ArgumentParser
import Foundation
import StoreLedger

/// `ledger tls create`: a test certificate authority and a server certificate, so that clients
/// that insist on `https://` (Apple's server libraries) reach `ledger serve`.
struct TLSCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tls",
        abstract: "Make certificates for serving HTTPS (`ledger serve --tls-certificate`).",
        subcommands: [Create.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a test certificate authority and a server certificate for chosen host names.",
            discussion: """
                Writes three new files into --directory (made if missing): ca.pem, the authority's \
                certificate, for clients to trust; server.pem, the server's certificate followed by the \
                authority's (for --tls-certificate); server-key.pem, its private key (for --tls-key, readable \
                by its owner only). The authority's own key is never written: to issue for other names, \
                run it again. Without --host the certificate is for localhost, 127.0.0.1, ::1 and the hosts \
                Apple's libraries call (api.storekit.apple.com, api.storekit-sandbox.apple.com, their older \
                api.storekit[-sandbox].itunes.apple.com, local-testing-base-url), so they reach the server with a hosts-file entry and the authority trusted (docs/SERVER.md has a \
                recipe per library). The server's certificate is valid for 825 days. It is a test authority: \
                trust it on test machines only. No file is written over: when one of the three exists, none \
                is written (exit 1). It needs no ledger.
                """)

        @OptionGroup var options: GlobalOptions

        @Option(help: ArgumentHelp("Where to write ca.pem, server.pem and server-key.pem.", valueName: "directory"))
        var directory: String

        @Option(
            name: .customLong("host"),
            help: ArgumentHelp(
                "A host name or IP address the certificate is for (repeat it; \(TestCertificateAuthority.maximumHosts) at most).",
                valueName: "name"))
        var hosts: [String] = []

        func validate() throws {
            guard hosts.count <= TestCertificateAuthority.maximumHosts else {
                throw ValidationError("--host: at most \(TestCertificateAuthority.maximumHosts), not \(hosts.count)")
            }
            for host in hosts {
                do {
                    try TestCertificateAuthority.check(host: host)
                } catch {
                    throw ValidationError("--host: \(error)")
                }
            }
        }

        func run() async throws {
            let made = try TestCertificateAuthority.make(
                hosts: hosts.isEmpty ? TestCertificateAuthority.defaultHosts : hosts)
            let files = Files(directory: directory)
            for path in files.all where FileManager.default.fileExists(atPath: path) {
                throw CommandRefusal(description: "\(path) exists: no certificate or key is written over a file")
            }
            let madeDirectory = !FileManager.default.fileExists(atPath: directory)
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw CommandRefusal(description: "cannot make \(directory): \(error.localizedDescription)")
            }
            var written: [String] = []
            do {
                for (path, text, mode) in [
                    (files.authority, made.authority, mode_t(0o644)), (files.certificate, made.certificateChain, 0o644),
                    (files.privateKey, made.privateKey, 0o600),
                ] {
                    try NewFile.write(to: path, mode: mode) { try $0.write(contentsOf: Data(text.utf8)) }
                    written.append(path)
                }
            } catch {
                // None or all: what this run wrote goes when a later file cannot be written (and
                // the directory, when this run made it).
                for path in written { unlink(path) }
                if madeDirectory { rmdir(directory) }
                throw error
            }
            let view = Made(
                authority: files.authority, certificate: files.certificate, privateKey: files.privateKey,
                hosts: made.hosts, notValidAfter: made.notValidAfter.formatted(.iso8601))
            try options.output.emit(view) {
                """
                wrote \(files.authority) (the authority: trust it in clients), \(files.certificate) \
                (--tls-certificate) and \(files.privateKey) (--tls-key)
                for \(made.hosts.joined(separator: ", ")); valid until \(view.notValidAfter)
                """
            }
        }

        /// The three files' paths in `directory`.
        struct Files {
            let authority: String
            let certificate: String
            let privateKey: String

            init(directory: String) {
                let base = URL(fileURLWithPath: directory)
                authority = base.appendingPathComponent("ca.pem").path
                certificate = base.appendingPathComponent("server.pem").path
                privateKey = base.appendingPathComponent("server-key.pem").path
            }

            var all: [String] { [authority, certificate, privateKey] }
        }

        struct Made: Encodable {
            let authority: String
            let certificate: String
            let privateKey: String
            let hosts: [String]
            let notValidAfter: String
        }
    }
}
