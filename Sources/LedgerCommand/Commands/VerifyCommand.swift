import ArgumentParser
import Foundation
import StoreLedger

struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract:
            "Check the ledger: SQLite's integrity check, the schema version, the ledger's own invariants and its hash chain.",
        discussion: """
            The schema and the rules in the database (tables, indexes, triggers, the rule_* tables) must be \
            those this version's migrations make. \
            Every history must be a legal path through the state machine and end in its transaction's row; no \
            transaction finished in a state that cannot be finished; no idempotency key naming two transactions; \
            no id above the last one issued; every subscription expiration after its purchase date, and every \
            renewal starting where its chain's previous period ended and lasting one period of its product. \
            The hash chain (docs/HASH-CHAIN.md) is recomputed: the first event whose link does not follow from the \
            history before it (an event edited, deleted, inserted or reordered), every transaction row that differs \
            from what its last event recorded, and a signed head that is missing, names an event that is not there \
            or is not signed by the ledger's key are reported. \
            Exit 0 when all hold, 2 with one line (or JSON object) per problem. The summary gives the chain's \
            length, the event its signed head names, and the root certificate's SHA-256 fingerprint (compare it \
            with one kept elsewhere: the chain cannot tell a whole ledger replaced by another).
            Nothing is ever written: a ledger from an older version is not upgraded (its checks are this \
            version's, for this version's schema); its schema is reported against this version's, exit 2, and \
            `ledger upgrade` upgrades it after running these checks on the result.
            """)

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        let ledger: Ledger
        do {
            ledger = try options.openLedgerForReading()
        } catch let error as LedgerError where error.code == .olderSchema {
            let problem = Problem(
                transactionID: nil,
                message: "the ledger is at \(error.reason): `ledger upgrade` checks it and upgrades it")
            try options.output.emit(OlderReport(path: error.path, ok: false, problems: [problem])) { problem.message }
            throw ExitCode(LedgerExitCode.problemsFound)
        }
        let problems = try ledger.verify()
        let migrations = try ledger.appliedMigrations()
        let chain = try Chain(ledger.chainStatus(), root: ledger.signingCertificates().root)
        let report = Report(
            path: ledger.path, schemaVersion: migrations.last ?? "", ok: problems.isEmpty,
            problems: problems.map { Problem(transactionID: $0.transactionID, message: $0.message) }, chain: chain)
        try options.output.emit(report) {
            problems.isEmpty
                ? "ok: \(ledger.path) (schema \(report.schemaVersion)) holds every invariant\n\(chain.summary)"
                : problems.map(\.description).joined(separator: "\n")
        }
        if !problems.isEmpty { throw ExitCode(LedgerExitCode.problemsFound) }
    }

    /// What verify says of a ledger written by an older version.
    struct OlderReport: Encodable {
        let path: String
        let ok: Bool
        let problems: [Problem]
    }

    struct Report: Encodable {
        let path: String
        let schemaVersion: String
        let ok: Bool
        let problems: [Problem]
        let chain: Chain
    }

    /// The hash chain as stored (checked above): hashes in lowercase hexadecimal.
    struct Chain: Encodable {
        let events: Int
        let lastSequence: Int64?
        let lastHash: String?
        let signedSequence: Int64?
        let signedHash: String?
        let signedAt: Date?
        let unsignedEvents: Int
        let rootFingerprint: String

        init(_ status: ChainStatus, root: [UInt8]) {
            events = status.eventCount
            lastSequence = status.lastSequence
            lastHash = status.lastHash.map(Hex.string)
            signedSequence = status.head?.sequence
            signedHash = status.head.map { Hex.string($0.hash) }
            signedAt = status.head?.signedAt
            unsignedEvents = status.unsignedEventCount
            rootFingerprint = SigningCertificates.fingerprint(root)
        }

        var summary: String {
            let head =
                signedSequence.map { sequence in
                    "signed through event \(sequence)"
                        + (unsignedEvents > 0 ? " (\(unsignedEvents) later events chained, not yet signed)" : "")
                } ?? "nothing to sign"
            return "hash chain: \(events) events, \(head); root certificate SHA-256 \(rootFingerprint)"
        }
    }

    struct Problem: Encodable {
        let transactionID: UInt64?
        let message: String

        enum CodingKeys: String, CodingKey { case transactionID, message }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(transactionID, forKey: .transactionID)
            try container.encode(message, forKey: .message)
        }
    }
}
