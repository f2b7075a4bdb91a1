import ArgumentParser
import Foundation
import StoreLedger

/// `ledger certificate export`: the root certificate a server trusts to verify the ledger's
/// signatures.
struct CertificateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "certificate",
        abstract: "Export the root certificate a server trusts to verify the ledger's signatures.",
        subcommands: [Export.self])

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Print (or write) the root certificate of the ledger's signing identity.",
            discussion: """
                Every ledger has its own test signing identity, made when the ledger was created: a P-256 key \
                and a chain from a leaf through an intermediate to this root, like the certificate Xcode's \
                StoreKit testing signs with. Give the root to the server that verifies the ledger's signatures \
                (Apple's App Store Server Library takes it as its root certificate). It is a test identity: its \
                private key is in the ledger file. PEM goes to stdout unless --output is given; DER needs \
                --output (it is binary). --output never replaces a file (exit 1) and writes it whole or not at \
                all (a path it cannot write is exit 65). --chain exports the whole chain, leaf first (PEM only), \
                to inspect it with openssl.
                """)

        enum Format: String, ExpressibleByArgument, CaseIterable { case pem, der }

        @OptionGroup var options: GlobalOptions

        @Option(help: "pem (text, the default) or der (binary: needs --output).")
        var format: Format = .pem

        @Option(help: ArgumentHelp("Write the certificate to this new file instead of stdout.", valueName: "file"))
        var output: String?

        @Flag(help: "The whole chain, leaf, intermediate and root, in PEM.")
        var chain = false

        func validate() throws {
            if format == .der && output == nil {
                throw ValidationError("--format der writes binary: give --output FILE")
            }
            if format == .der && chain { throw ValidationError("--chain is PEM only") }
        }

        func run() async throws {
            let ledger = try options.openLedgerForReading()
            let certificates = try ledger.signingCertificates()
            let root = certificates.root
            let pem = (chain ? certificates.chain : [root]).map(SigningCertificates.pem).joined()
            let bytes = format == .pem ? Array(pem.utf8) : root
            let fingerprint = SigningCertificates.fingerprint(root)
            guard let output else {
                try options.output.emit(Exported(format: "pem", certificate: pem, output: nil, sha256: fingerprint)) {
                    String(pem.dropLast())  // print ends the line
                }
                return
            }
            try writeNewOutputFile(output, holding: "the certificate") { try $0.write(contentsOf: Data(bytes)) }
            try options.output.emit(
                Exported(format: format.rawValue, certificate: nil, output: output, sha256: fingerprint)
            ) {
                "wrote the \(chain ? "certificate chain" : "root certificate") of \(ledger.path) to \(output) "
                    + "(\(format.rawValue); the root's SHA-256 \(fingerprint))"
            }
        }

        struct Exported: Encodable {
            let format: String
            let certificate: String?
            let output: String?
            let sha256: String
        }
    }
}
