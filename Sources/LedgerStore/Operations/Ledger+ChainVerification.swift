import Foundation
import GRDB

/// Where a ledger's hash chain stands (`Ledger.chainStatus()`), as stored: `verify()` checks it.
public struct ChainStatus: Sendable, Hashable {
    /// How many events the history holds.
    public var eventCount: Int
    /// The last event's number; `nil` while the history is empty.
    public var lastSequence: Int64?
    /// The last event's link (32 bytes); `nil` while the history is empty.
    public var lastHash: [UInt8]?
    /// The last signed head; `nil` while the history is empty.
    public var head: ChainHead?
    /// The events after the signed head: chained, not yet signed (see
    /// `LedgerConfiguration.headSigningInterval`).
    public var unsignedEventCount: Int
}

extension Ledger {
    /// How many events the history holds, its last link and its signed head (not checked:
    /// `verify()` checks them).
    public func chainStatus() throws -> ChainStatus {
        try read { db in
            let end = try HashChain.last(db)
            let head = try ChainHead.load(db)
            return ChainStatus(
                eventCount: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM transaction_events") ?? 0,
                lastSequence: end?.0, lastHash: end?.1, head: head,
                unsignedEventCount: try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM transaction_events WHERE seq > ?", arguments: [head?.sequence ?? 0]) ?? 0)
        }
    }

    /// The hash chain's problems (docs/HASH-CHAIN.md): the first event whose link does not
    /// follow from the one before it (an event edited, deleted, inserted or reordered); every
    /// transaction row that differs from what its last event recorded (a row edited without an
    /// event), or has no history, or exists though its history says it was deleted; a signed
    /// head that is missing, names an event that is not there or whose link differs, or whose
    /// signature is not the ledger's.
    static func chainProblems(_ db: Database) throws -> [LedgerProblem] {
        var problems: [LedgerProblem] = []
        guard var previous = try? HashChain.genesis(db) else {
            return [LedgerProblem(transactionID: nil, message: "hash chain: the ledger has no signing identity")]
        }
        let head = try ChainHead.load(db)
        var previousSeq: Int64 = 0
        var brokenAt: Int64?
        var headLink: [UInt8]?
        var lastEvent: [UInt64: (digest: [UInt8], deleted: Bool)] = [:]
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
                let gap = previousSeq + 1 == seq ? "" : previousSeq + 2 == seq ? " (event \(seq - 1) is not there)"
                    : " (events \(previousSeq + 1) to \(seq - 1) are not there)"
                problems.append(LedgerProblem(transactionID: UInt64(exactly: columns.int64(1)), message: """
                    hash chain broken at event \(seq): its link does not follow from the history before it\(gap): \
                    an event at or before it was edited, deleted, inserted or reordered
                    """))
            }
            if seq == head?.sequence { headLink = stored }
            lastEvent[UInt64(bitPattern: columns.int64(1))] = (columns.blob(7), columns.optionalString(2) == "deleted")
            // The links that follow are checked from the stored one: the first break is the one reported.
            previous = stored
            previousSeq = seq
        }
        // One scan of the rows, each digested as it is read.
        try FastStatement(db, HashChain.selectRows(where: "1")).forEachRow { columns in
            let id = UInt64(bitPattern: columns.int64(0))
            guard let last = lastEvent.removeValue(forKey: id) else {
                problems.append(LedgerProblem(transactionID: id, message: "hash chain: the row has no history"))
                return
            }
            if last.deleted {
                problems.append(LedgerProblem(transactionID: id, message: "hash chain: the row exists, its history says it was deleted"))
            } else if HashChain.rowDigest(of: columns) != last.digest {
                problems.append(LedgerProblem(
                    transactionID: id, message: "hash chain: the row differs from what its last event recorded (edited without an event)"))
            }
        }
        for (id, last) in lastEvent.sorted(by: { $0.key < $1.key }) where !last.deleted {
            problems.append(LedgerProblem(transactionID: id, message: "hash chain: the history goes on, the row is gone (deleted without an event)"))
        }
        return problems + (try headProblems(db, head: head, eventCount: count, headLink: headLink))
    }

    private static func headProblems(_ db: Database, head: ChainHead?, eventCount: Int, headLink: [UInt8]?) throws -> [LedgerProblem] {
        guard let head else {
            return eventCount == 0 ? [] : [LedgerProblem(transactionID: nil, message: "hash chain: the history has no signed head")]
        }
        guard let headLink else {
            return [LedgerProblem(transactionID: nil, message: """
                hash chain: the signed head names event \(head.sequence), which is not there (the history was cut or renumbered)
                """)]
        }
        guard headLink == head.hash else {
            return [LedgerProblem(transactionID: nil, message: """
                hash chain: event \(head.sequence)'s link differs from the signed head's (the history up to it was rewritten)
                """)]
        }
        guard head.isSigned(by: try SigningIdentity.load(db).certificates) else {
            return [LedgerProblem(transactionID: nil, message: "hash chain: the head's signature is not the ledger's")]
        }
        return []
    }
}
