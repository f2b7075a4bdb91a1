import Foundation
import LedgerTestSupport
import LedgerTesting
import Testing

/// `ledger tls create` and `ledger serve`'s TLS options, as a user runs them.
@Suite struct TLSCLITests {
    @Test func createWritesTheAuthorityTheCertificateAndAnOwnerOnlyKey() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            let directory = workspace.directory + "/tls/new"
            let made = try workspace.json(
                "tls", "create", "--directory", directory, "--host", "api.test", "--host", "::1")
            #expect(made["hosts"] as? [String] == ["api.test", "::1"])
            #expect(made["authority"] as? String == directory + "/ca.pem")
            #expect(made["certificate"] as? String == directory + "/server.pem")
            #expect(made["privateKey"] as? String == directory + "/server-key.pem")
            func mode(_ name: String) throws -> Int {
                try (FileManager.default.attributesOfItem(atPath: directory + "/" + name)[.posixPermissions] as? Int)
                    ?? -1
            }
            #expect(try mode("server-key.pem") == 0o600 && mode("ca.pem") == 0o644 && mode("server.pem") == 0o644)
            let chain = try String(contentsOfFile: directory + "/server.pem", encoding: .utf8)
            let authority = try String(contentsOfFile: directory + "/ca.pem", encoding: .utf8)
            #expect(chain.components(separatedBy: "BEGIN CERTIFICATE").count == 3 && chain.hasSuffix(authority))
            #expect(
                try String(contentsOfFile: directory + "/server-key.pem", encoding: .utf8).hasPrefix(
                    "-----BEGIN PRIVATE KEY-----"))
            // Never over a file: a second run writes none of the three.
            let again = try workspace.ledger("tls", "create", "--directory", directory)
            #expect(again.status == 1 && again.stderr.contains("\(directory)/ca.pem exists"), "\(again.stderr)")
            #expect(try String(contentsOfFile: directory + "/ca.pem", encoding: .utf8) == authority)
        }
    }

    @Test func createRefusesWhatACertificateCannotHoldAndWritesNothing() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            let directory = workspace.directory + "/tls"
            let bad = try workspace.ledger("tls", "create", "--directory", directory, "--host", "bad_name")
            #expect(bad.status == 64)
            #expect(bad.stderr.contains("--host: \"bad_name\" is neither a host name"), "\(bad.stderr)")
            let many = try workspace.ledger(
                arguments: ["tls", "create", "--directory", directory]
                    + (0...100).flatMap { ["--host", "h\($0).test"] })
            #expect(many.status == 64 && many.stderr.contains("--host: at most 100, not 101"), "\(many.stderr)")
            #expect(!FileManager.default.fileExists(atPath: directory))
            // One of the three in the way: none is written.
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try write("mine", to: directory + "/server-key.pem")
            let taken = try workspace.ledger("tls", "create", "--directory", directory)
            #expect(taken.status == 1 && taken.stderr.contains("\(directory)/server-key.pem exists"))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["server-key.pem"])
        }
    }

    @Test func serveRefusesACertificateItCannotServeBeforeListening() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            let first = workspace.directory + "/first"
            let second = workspace.directory + "/second"
            #expect(try workspace.ledger("tls", "create", "--directory", first).status == 0)
            #expect(try workspace.ledger("tls", "create", "--directory", second).status == 0)
            let alone = try workspace.ledger("serve", "--tls-certificate", first + "/server.pem")
            #expect(alone.status == 64 && alone.stderr.contains("--tls-certificate and --tls-key go together"))
            let mismatched = try workspace.ledger(
                "serve", "--tls-certificate", first + "/server.pem", "--tls-key", second + "/server-key.pem")
            #expect(mismatched.status == 1)
            #expect(
                mismatched.stderr.contains(
                    "cannot serve HTTPS: \(second)/server-key.pem is not the private key of the first certificate "
                        + "in \(first)/server.pem"), "\(mismatched.stderr)")
            #expect(mismatched.stdout.isEmpty, "it never listened")
            let swapped = try workspace.ledger(
                "serve", "--tls-certificate", first + "/server-key.pem", "--tls-key", first + "/server-key.pem")
            #expect(
                swapped.status == 1
                    && swapped.stderr.contains(
                        "cannot serve HTTPS: \(first)/server-key.pem holds no PEM certificate that reads")
            )
            let untrusted = try workspace.ledger("serve", "--notification-ca", first + "/server-key.pem")
            #expect(
                untrusted.status == 1
                    && untrusted.stderr.contains(
                        "--notification-ca: \(first)/server-key.pem holds no PEM certificate that reads"),
                "\(untrusted.stderr)")
            let send = try workspace.ledger(
                "notifications", "send", "--notification-ca", workspace.directory + "/none.pem")
            #expect(
                send.status == 1
                    && send.stderr.contains("--notification-ca: cannot read \(workspace.directory)/none.pem"))
        }
    }
}
