import Foundation
import GRDB

/// One thing wrong in a ledger, found by `Ledger.verify()`.
public struct LedgerProblem: Sendable, Hashable, CustomStringConvertible {
    /// The transaction concerned, when there is one.
    public var transactionID: UInt64?
    public var message: String

    public var description: String {
        transactionID.map { "transaction \($0): \(message)" } ?? message
    }
}

extension Ledger {
    /// Checks the ledger's own invariants on one consistent snapshot: SQLite's integrity check;
    /// for every transaction, that its history is a legal path through the state machine that
    /// ends in its current row, and that it is not finished in a state that cannot be; that no
    /// idempotency key names two transactions; that no id is above the last one issued.
    /// Returns the problems found; empty when all hold.
    public func verify() throws -> [LedgerProblem] {
        // A damaged file cannot be trusted for the checks that follow: its problems are the
        // answer. (Outside a transaction: SQLite aborts a transaction on a corruption error.)
        let integrity: [LedgerProblem]
        do {
            integrity = try reader.unsafeRead { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
                .filter { $0 != "ok" }.map { LedgerProblem(transactionID: nil, message: "integrity check: \($0)") }
        } catch let error as DatabaseError where [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains(error.resultCode) {
            return [LedgerProblem(transactionID: nil, message: "integrity check: \(error.message ?? "the file is damaged")")]
        } catch {
            throw Self.mapError(error, path: path)
        }
        guard integrity.isEmpty else { return integrity }
        return try read { db in
            var problems: [LedgerProblem] = []
            var events: [UInt64: [TransactionEvent]] = [:]
            let eventRows = try Row.fetchCursor(
                db, sql: "SELECT seq, transaction_id, kind, from_state, to_state, at, detail FROM transaction_events ORDER BY seq")
            while let row = try eventRows.next() {
                let event = try TransactionEvent(row: row)
                events[event.transactionID, default: []].append(event)
            }
            let transactions = try PaymentTransaction.fetchCursor(db, sql: "ORDER BY id")
            while let transaction = try transactions.next() {
                problems += Self.historyProblems(transaction, events.removeValue(forKey: transaction.id) ?? [])
            }
            for id in events.keys.sorted() {
                problems.append(LedgerProblem(transactionID: id, message: "events without a transaction"))
            }
            for row in try Row.fetchAll(db, sql: """
                SELECT idempotency_key, GROUP_CONCAT(id) AS ids FROM transactions
                WHERE idempotency_key IS NOT NULL GROUP BY idempotency_key HAVING COUNT(*) > 1
                """) {
                problems.append(LedgerProblem(
                    transactionID: nil, message: "idempotency key \(row["idempotency_key"] as String) names transactions \(row["ids"] as String)"))
            }
            let lastIssued = try Int64.fetchOne(db, sql: "SELECT value FROM ledger_counters WHERE name = 'last_transaction_id'") ?? 0
            if let highest = try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM transactions"), highest > lastIssued {
                problems.append(LedgerProblem(
                    transactionID: UInt64(highest), message: "id above the last one issued (\(lastIssued)): ids could be reused"))
            }
            return problems
        }
    }

    /// The problems of one transaction's history against its row.
    static func historyProblems(_ transaction: PaymentTransaction, _ events: [TransactionEvent]) -> [LedgerProblem] {
        var problems: [String] = []
        guard let first = events.first, first.kind == .created,
              [.purchasing, .purchased, .restored].contains(first.toState)
        else { return [LedgerProblem(transactionID: transaction.id, message: "history does not start with its creation")] }
        var state = first.toState
        var finished = false, revoked = false, upgraded = false
        var deliveries = 0
        for event in events.dropFirst() {
            if event.fromState != state {
                problems.append("event \(event.sequence) starts from \(event.fromState?.rawValue ?? "nothing"), not \(state.rawValue)")
            }
            switch event.kind {
            case .created:
                problems.append("created twice (event \(event.sequence))")
            case .stateChanged:
                if finished || !state.canMove(to: event.toState) {
                    problems.append("illegal change \(state.rawValue) -> \(event.toState.rawValue) (event \(event.sequence))")
                }
                state = event.toState
            case .finished:
                if finished || !state.canBeFinished {
                    problems.append("finished while \(finished ? "finished" : state.rawValue) (event \(event.sequence))")
                }
                finished = true
            case .delivered:
                deliveries += 1
            case .revoked:
                if revoked || !(state == .purchased || state == .restored) {
                    problems.append("refunded while \(revoked ? "refunded" : state.rawValue) (event \(event.sequence))")
                }
                revoked = true
            case .expirationChanged, .upgraded:
                if transaction.productType != .autoRenewable {
                    problems.append("\(event.kind.rawValue) on a \(transaction.productType.rawValue) (event \(event.sequence))")
                }
                if event.kind == .upgraded { upgraded = true }
            }
        }
        if state != transaction.state { problems.append("history ends in \(state.rawValue), the row is \(transaction.state.rawValue)") }
        if finished != transaction.isFinished { problems.append("history says finished \(finished), the row \(transaction.isFinished)") }
        if deliveries != transaction.deliveryCount {
            problems.append("history has \(deliveries) deliveries, the row counts \(transaction.deliveryCount)")
        }
        if revoked != (transaction.revocationDate != nil) { problems.append("refund in the history and the row disagree") }
        if upgraded && !transaction.isUpgraded { problems.append("upgraded in the history, not in the row") }
        if transaction.isFinished && !transaction.state.canBeFinished {
            problems.append("finished while \(transaction.state.rawValue), which cannot be finished")
        }
        return problems.map { LedgerProblem(transactionID: transaction.id, message: $0) }
    }
}
