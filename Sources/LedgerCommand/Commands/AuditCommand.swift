import ArgumentParser
import Foundation
import StoreLedger

struct AuditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "Export the ledger's hash chain for a check made without StoreLedger.",
        subcommands: [Export.self])

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Write the hash chain, every transaction row and the signed head to a new JSON Lines file.",
            discussion: """
                One snapshot of the ledger, as it is (broken links included): a header line (format, the columns a \
                row digest covers, the signing certificates, the genesis value), one line per event with its row \
                digest and link, one line per transaction row, and the signed head. tools/verify-audit FILE checks \
                it with Python alone (docs/HASH-CHAIN.md gives the format). Reads the ledger, signs nothing, and \
                never replaces FILE (exit 1): the file appears whole or not at all.
                """)

        @OptionGroup var options: GlobalOptions

        @Argument(help: ArgumentHelp("The new file.", valueName: "file"))
        var file: String

        func run() async throws {
            let ledger = try options.openLedgerForReading()
            let export = try ledger.exportAudit(to: file)
            try options.output.emit(
                Exported(
                    path: file, events: export.eventCount, transactions: export.transactionCount,
                    signedSequence: export.head?.sequence)
            ) {
                let head = export.head.map { "signed through event \($0.sequence)" } ?? "no signed head (empty history)"
                return
                    "exported \(export.eventCount) events and \(export.transactionCount) transactions to \(file), \(head)"
            }
        }

        struct Exported: Encodable {
            let path: String
            let events: Int
            let transactions: Int
            let signedSequence: Int64?
        }
    }
}
