import ArgumentParser
import Foundation
import StoreLedger

/// `ledger upgrade`: brings a ledger written by an older release to this release's schema,
/// after checking it.
struct UpgradeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upgrade",
        abstract: "Upgrade a ledger written by an older release to this release's schema.",
        discussion: """
            Commands that only read (verify, list, show, jws, ...) never upgrade a ledger: on an older one \
            they say its schema and exit 74, leaving the file as it was. The first command that writes \
            upgrades it, as this one does, and says nothing of it. Either way the migrations the ledger \
            lacks are applied in one transaction, and the result must hold every invariant `ledger verify` \
            checks before it is committed: a failure (a migration's statement, a dropped trigger, an edited \
            row) names the migration, the statement and the reason in one line, exit 74, and changes nothing.

            A ledger older than schema 11 kept no MACs on its events: events after its last signed head \
            cannot be told from events appended without its key. The upgrade refuses them, naming them; \
            if you know they are the ledger's own (a process killed before it signed), say so with \
            --vouch-for-events FIRST-LAST, naming exactly those events, and they are signed over.
            """)

    @OptionGroup var options: GlobalOptions

    @Option(
        name: .customLong("vouch-for-events"),
        help: ArgumentHelp(
            "The events after the last signed head to sign over, as FIRST-LAST (or one number).",
            valueName: "first-last"))
    var vouchForEvents: String?

    func validate() throws {
        _ = try events()
    }

    private func events() throws -> ClosedRange<Int64>? {
        guard let text = vouchForEvents else { return nil }
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        let numbers = parts.map { part in
            part.utf8.allSatisfy { (0x30...0x39).contains($0) } ? Int64(part) : nil
        }
        guard (1...2).contains(parts.count), numbers.allSatisfy({ ($0 ?? 0) > 0 }), let first = numbers[0],
            let last = numbers.last ?? nil, first <= last
        else {
            throw ValidationError("--vouch-for-events takes FIRST-LAST (event numbers, FIRST <= LAST) or one number")
        }
        return first...last
    }

    struct Upgraded: Encodable {
        let path: String
        let applied: [String]
        let schemaVersion: String
    }

    func run() async throws {
        let path = options.databasePath
        let applied = try Ledger.upgrade(
            at: path, vouchingForEvents: try events(), configuration: try options.ledgerConfiguration())
        let report = Upgraded(path: path, applied: applied, schemaVersion: Ledger.knownMigrations.last ?? "")
        try options.output.emit(report) {
            applied.isEmpty
                ? "\(path) is at this release's schema (\(report.schemaVersion)): nothing to upgrade"
                : "upgraded \(path) to schema \(report.schemaVersion): applied \(applied.joined(separator: ", "))"
        }
    }
}
