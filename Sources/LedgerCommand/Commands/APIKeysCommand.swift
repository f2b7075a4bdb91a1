import AppStoreServer
import ArgumentParser
import Crypto
import Foundation
import StoreLedger

/// `ledger api-keys`: the keys the App Store Server API accepts bearer tokens from.
struct APIKeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api-keys",
        abstract: "Manage the App Store Server API's keys, as App Store Connect issues them.",
        discussion: """
            The ledger keeps only a key's public half; `ledger serve` accepts the ES256 bearer \
            tokens its private half signs (header kid = the key id, iss = the issuer id).
            """,
        subcommands: [Create.self, Add.self, List.self, Revoke.self])

    /// What names a key: its identifier and its issuer's, as App Store Connect shows them.
    struct KeyNames: ParsableArguments {
        @Option(help: "The key's identifier (the tokens' kid).")
        var keyID: String

        @Option(help: "The issuer identifier (the tokens' iss).")
        var issuerID: String
    }

    /// A key as `list` and the others print it.
    struct KeyView: Encodable {
        let keyID: String
        let issuerID: String
        let createdAt: Date
        let revokedAt: Date?

        init(_ key: APIKey) {
            (keyID, issuerID, createdAt, revokedAt) = (key.keyID, key.issuerID, key.createdAt, key.revokedAt)
        }

        enum CodingKeys: String, CodingKey { case keyID, issuerID, createdAt, revokedAt }

        /// Every field, an absent `revokedAt` as `null`, so that a JSON reader sees one shape.
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(keyID, forKey: .keyID)
            try container.encode(issuerID, forKey: .issuerID)
            try container.encode(createdAt, forKey: .createdAt)
            try container.encode(revokedAt, forKey: .revokedAt)
        }

        var line: String {
            "\(keyID)  issuer \(issuerID)  " + (revokedAt.map { "revoked " + InternetDate.string(from: $0) } ?? "valid")
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a new API key: its private key is written to --output, its public half kept.",
            discussion: """
                Writes a new P-256 private key as PKCS#8 PEM (what App Store Connect's .p8 files \
                hold), readable by its owner only. --output never replaces a file.
                """)

        @OptionGroup var options: GlobalOptions

        @OptionGroup var names: KeyNames

        @Option(help: "Where to write the private key (PEM).")
        var output: String

        func run() async throws {
            try APIKey.checkIdentifier(names.keyID)
            try APIKey.checkIdentifier(names.issuerID)
            let ledger = try options.openLedger()
            if try ledger.apiKey(names.keyID) != nil { throw APIKeyError.duplicateKeyID(names.keyID) }
            let privateKey = P256.Signing.PrivateKey()
            try writeNewOutputFile(output, holding: "a private key", mode: 0o600) {
                try $0.write(contentsOf: Data(privateKey.pemRepresentation.utf8))
            }
            let key: APIKey
            do {
                key = try ledger.addAPIKey(
                    keyID: names.keyID, issuerID: names.issuerID, publicKey: privateKey.publicKey)
            } catch {
                unlink(output)  // the ledger did not take it: leave no private key of nothing behind
                throw error
            }
            try options.output.emit(KeyView(key)) { "created API key \(KeyView(key).line); private key in \(output)" }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a key the team has: its public key (PEM), or its .p8 (only the public half is kept).")

        @OptionGroup var options: GlobalOptions

        @OptionGroup var names: KeyNames

        @Option(help: "A PEM file: the key's PUBLIC KEY, or its PRIVATE KEY (.p8).")
        var publicKey: String

        /// The longest key file read: a PEM key is a few hundred bytes.
        static let longestFile = 64 * 1_024

        func run() async throws {
            let key = try Self.readPublicKey(publicKey)
            let added = try options.openLedger().addAPIKey(
                keyID: names.keyID, issuerID: names.issuerID, publicKey: key)
            try options.output.emit(KeyView(added)) { "added API key " + KeyView(added).line }
        }

        static func readPublicKey(_ path: String) throws -> P256.Signing.PublicKey {
            guard let handle = FileHandle(forReadingAtPath: path) else {
                throw InputError(description: "cannot read \(path)")
            }
            defer { try? handle.close() }
            let data = (try? handle.read(upToCount: longestFile + 1)) ?? Data()
            guard data.count <= longestFile else {
                throw APIKeyError.invalidPublicKey("\(path) is larger than \(longestFile) bytes")
            }
            let pem = String(decoding: data, as: UTF8.self)
            if let key = try? P256.Signing.PublicKey(pemRepresentation: pem) { return key }
            if let key = try? P256.Signing.PrivateKey(pemRepresentation: pem) { return key.publicKey }
            throw APIKeyError.invalidPublicKey("\(path) holds no P-256 PUBLIC KEY or PRIVATE KEY in PEM")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the API keys, valid and revoked.")

        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let keys = try options.openLedgerForReading().apiKeys().map(KeyView.init)
            try options.output.emit(["keys": keys]) {
                keys.isEmpty ? "no API keys" : keys.map(\.line).joined(separator: "\n")
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke an API key: the tokens it signs are refused from now on.")

        @OptionGroup var options: GlobalOptions

        @Argument(help: "The key's identifier.")
        var keyID: String

        func run() async throws {
            let revoked = try options.openLedger().revokeAPIKey(keyID)
            try options.output.emit(KeyView(revoked)) { "revoked API key " + KeyView(revoked).line }
        }
    }
}
