import ArgumentParser
import Foundation
import StoreLedger

struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Write a consistent, verified, owner-only copy of the ledger to a new file.",
        discussion: """
            A ledger is its file plus its -wal: copying ledger.sqlite alone can lose the last commits. This copies \
            one snapshot of the committed data (SQLite's VACUUM INTO), checks the copy with verify, and links it \
            into place, so DEST holds nothing or a whole ledger. It reads the ledger and never replaces DEST.
            """)

    @OptionGroup var options: GlobalOptions

    @Argument(help: ArgumentHelp("The new file.", valueName: "dest"))
    var destination: String

    func run() async throws {
        let ledger = try options.openLedgerForReading()
        try ledger.backup(to: destination)
        try options.output.emit(BackupResult(source: ledger.path, backup: destination, verified: true)) {
            "backed up \(ledger.path) to \(destination) (verified)"
        }
    }

    struct BackupResult: Encodable {
        let source: String
        let backup: String
        let verified: Bool
    }
}
