import Foundation
import GRDB
import LedgerModel
import LedgerSigning

/// Where a ledger's hash chain stands (`Ledger.chainStatus()`), as stored: `verify()` checks it.
package struct ChainStatus: Sendable, Hashable {
    /// How many events the history holds.
    package var eventCount: Int
    /// The last event's number; `nil` while the history is empty.
    package var lastSequence: Int64?
    /// The last event's link (32 bytes); `nil` while the history is empty.
    package var lastHash: [UInt8]?
    /// The last signed head; `nil` while the history is empty.
    package var head: ChainHead?
    /// The events after the signed head: chained, not yet signed (see
    /// `LedgerConfiguration.headSigningInterval`).
    package var unsignedEventCount: Int
}

extension Ledger {
    /// How many events the history holds, its last link and its signed head (not checked:
    /// `verify()` checks them).
    package func chainStatus() throws -> ChainStatus {
        try read { db in
            let end = try HashChain.last(db)
            let head = try ChainHead.load(db)
            return ChainStatus(
                eventCount: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM transaction_events") ?? 0,
                lastSequence: end?.0, lastHash: end?.1, head: head,
                unsignedEventCount: try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM transaction_events WHERE seq > ?", arguments: [head?.sequence ?? 0])
                    ?? 0)
        }
    }

    /// The hash chain's problems in its links (docs/HASH-CHAIN.md): the first event whose link
    /// does not follow from the one before it (an event edited, deleted, inserted or
    /// reordered); a signed head that is missing, names an event that is not there or whose
    /// link differs, or whose signature is not the ledger's. One pass over the events in
    /// order, keeping only the previous link. The rows are checked against their last events
    /// by `chainRowProblems`, in `verify`'s pass over each transaction.
    static func chainLinkProblems(_ db: Database) throws -> [LedgerProblem] {
        var problems: [LedgerProblem] = []
        guard var previous = try? HashChain.genesis(db) else {
            return [LedgerProblem(transactionID: nil, message: "hash chain: the ledger has no signing identity")]
        }
        let head = try ChainHead.load(db)
        var previousSeq: Int64 = 0
        var brokenAt: Int64?
        var headLink: [UInt8]?
        var count = 0
        try FastStatement(db, HashChain.selectEvents).forEachRow { columns in
            count += 1
            let seq = columns.int64(0)
            var encoding = ChainEncoding()
            encoding.append(raw: previous)
            for index in Int32(0)..<8 { encoding.column(columns, index) }
            let stored = columns.blob(8)
            if brokenAt == nil, encoding.sha256 != stored {
                brokenAt = seq
                let gap =
                    previousSeq + 1 == seq
                    ? ""
                    : previousSeq + 2 == seq
                        ? " (event \(seq - 1) is not there)"
                        : " (events \(previousSeq + 1) to \(seq - 1) are not there)"
                problems.append(
                    LedgerProblem(
                        transactionID: UInt64(exactly: columns.int64(1)),
                        message: """
                            hash chain broken at event \(seq): its link does not follow from the history before it\(gap): \
                            an event at or before it was edited, deleted, inserted or reordered
                            """))
            }
            if seq == head?.sequence { headLink = stored }
            // The links that follow are checked from the stored one: the first break is the one reported.
            previous = stored
            previousSeq = seq
        }
        return problems + (try headProblems(db, head: head, eventCount: count, headLink: headLink))
    }

    /// The hash chain's problems of one transaction id, from its row's digest (`nil`: no row)
    /// and its history: a row that differs from what its last event recorded (edited without
    /// an event), has no history, or exists though its history says it was deleted; a history
    /// that goes on while its row is gone.
    static func chainRowProblems(id: UInt64, rowDigest: [UInt8]?, history: TransactionHistory?) -> [LedgerProblem] {
        let message: String
        switch (rowDigest, history?.events.last) {
        case (nil, nil):
            return []
        case (nil, let last?):
            guard last.kind != .deleted else { return [] }
            message = "hash chain: the history goes on, the row is gone (deleted without an event)"
        case (_?, nil):
            message = "hash chain: the row has no history"
        case (let digest?, let last?):
            if last.kind == .deleted {
                message = "hash chain: the row exists, its history says it was deleted"
            } else if digest != history?.lastRowDigest {
                message = "hash chain: the row differs from what its last event recorded (edited without an event)"
            } else {
                return []
            }
        }
        return [LedgerProblem(transactionID: id, message: message)]
    }

    private static func headProblems(
        _ db: Database, head: ChainHead?, eventCount: Int, headLink: [UInt8]?
    ) throws -> [LedgerProblem] {
        guard let head else {
            return eventCount == 0
                ? [] : [LedgerProblem(transactionID: nil, message: "hash chain: the history has no signed head")]
        }
        guard let headLink else {
            return [
                LedgerProblem(
                    transactionID: nil,
                    message: """
                        hash chain: the signed head names event \(head.sequence), which is not there (the history was cut or renumbered)
                        """)
            ]
        }
        guard headLink == head.hash else {
            return [
                LedgerProblem(
                    transactionID: nil,
                    message: """
                        hash chain: event \(head.sequence)'s link differs from the signed head's (the history up to it was rewritten)
                        """)
            ]
        }
        let identity = try SigningIdentity.load(db)
        guard head.isSigned(by: identity.certificates) else {
            return [LedgerProblem(transactionID: nil, message: "hash chain: the head's signature is not the ledger's")]
        }
        // The events after the head are authenticated by their MACs, or were appended without
        // the key: no writer may sign over them.
        if let forged = try HashChain.firstUnauthenticated(db, after: head.sequence, key: identity.eventKey) {
            return [
                LedgerProblem(
                    transactionID: nil,
                    message: """
                        hash chain: event \(forged) follows the signed head without the ledger's authentication (it was appended \
                        without the ledger's key; no head will be signed over it)
                        """)
            ]
        }
        return []
    }
}
