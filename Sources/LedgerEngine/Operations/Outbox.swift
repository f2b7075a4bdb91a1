import Foundation
package import GRDB
import LedgerModel
import LedgerSigning

/// The outbox: the notifications the store commits with the changes that cause them, and
/// their attempts. The engine reads its rows and checks them; what a change notifies is the
/// store's rules'.
extension Ledger {
    package static func notifications(
        _ db: Database, where condition: String, arguments: StatementArguments = []
    ) throws -> [ServerNotification] {
        // Cached: each condition is a literal of its caller (here and the store's
        // notifications), and a running sender asks for the due ones every few milliseconds.
        let rows = try Row.fetchAll(
            try db.cachedStatement(
                sql: """
                    SELECT seq, uuid, type, subtype, transaction_id, original_transaction_id, created_at, signed_payload,
                        status, next_attempt_at, attempts, app_id FROM notifications WHERE \(condition)
                    """), arguments: arguments)
        return try rows.map { row in
            let sequence: Int64 = row["seq"]
            guard let uuid = UUID(uuidString: row["uuid"]),
                let status = ServerNotification.Status(rawValue: row["status"])
            else { throw DamagedRow(reason: "notification \(sequence) has a malformed uuid or status") }
            // Most notifications read are about to be sent for the first time: no attempt to read.
            let attempts: [ServerNotification.Attempt] =
                (row["attempts"] as Int) == 0
                ? []
                : try Row.fetchAll(
                    db,
                    sql:
                        """
                        SELECT at, result, http_status, detail FROM notification_attempts
                        WHERE notification_seq = ? ORDER BY attempt
                        """,
                    arguments: [sequence]
                ).map { attempt in
                    guard let result = SendAttemptResult(rawValue: attempt["result"]) else {
                        throw DamagedRow(reason: "notification \(sequence) has an attempt with an unknown result")
                    }
                    return ServerNotification.Attempt(
                        date: Date(ledgerMilliseconds: attempt["at"]), result: result,
                        httpStatus: attempt["http_status"], detail: attempt["detail"])
                }
            return ServerNotification(
                sequence: sequence, uuid: uuid, type: row["type"], subtype: row["subtype"],
                transactionID: (row["transaction_id"] as Int64?).map { UInt64($0) },
                originalTransactionID: (row["original_transaction_id"] as Int64?).map { UInt64($0) },
                date: Date(ledgerMilliseconds: row["created_at"]), signedPayload: row["signed_payload"],
                status: status, nextAttemptDate: (row["next_attempt_at"] as Int64?).map(Date.init(ledgerMilliseconds:)),
                attempts: attempts, appID: row["app_id"])
        }
    }

    /// The outbox's own rules, for `verify()`: each notification's attempts are numbered from 1
    /// without a gap and counted; its status follows from them (delivered after one success,
    /// failed after six failures, pending otherwise, its next attempt due on Apple's schedule);
    /// its signed payload names its UUID, type and subtype.
    package static func outboxProblems(_ db: Database) throws -> [LedgerProblem] {
        var problems: [LedgerProblem] = []
        var after: Int64 = 0
        while true {
            // A page at a time: the outbox may hold millions.
            let page = try notifications(db, where: "seq > ? ORDER BY seq LIMIT 1000", arguments: [after])
            guard let last = page.last else { return problems }
            after = last.sequence
            for notification in page {
                let counted = try Int.fetchOne(
                    db, sql: "SELECT attempts FROM notifications WHERE seq = ?", arguments: [notification.sequence])
                let numbers = try Int.fetchAll(
                    db, sql: "SELECT attempt FROM notification_attempts WHERE notification_seq = ? ORDER BY attempt",
                    arguments: [notification.sequence])
                problems += outboxProblems(
                    notification, counted: counted ?? -1, numbered: numbers == Array(1..<(numbers.count + 1)))
            }
        }
    }

    private static func outboxProblems(
        _ notification: ServerNotification, counted: Int, numbered: Bool
    ) -> [LedgerProblem] {
        var found: [String] = []
        let attempts = notification.attempts
        if !numbered || counted != attempts.count { found.append("its attempts are not numbered 1 to \(counted)") }
        let successes = attempts.filter { $0.result == .success }.count
        let expected: ServerNotification.Status =
            successes > 0 ? .delivered : attempts.count >= ServerNotification.attemptLimit ? .failed : .pending
        if successes > 1 || (successes == 1 && attempts.last?.result != .success) {
            found.append("it was attempted again after a success")
        }
        if notification.status != expected {
            found.append("it is \(notification.status.rawValue), but its attempts make it \(expected.rawValue)")
        }
        if expected == .pending {
            let due =
                attempts.last.map { last in
                    last.date.addingTimeInterval(ServerNotification.retryDelay(afterAttempt: attempts.count) ?? 0)
                } ?? notification.date
            if notification.nextAttemptDate?.ledgerMilliseconds != due.ledgerMilliseconds {
                found.append("its next attempt is not due on Apple's schedule")
            }
        }
        let payload = (try? JWS(compactSerialization: notification.signedPayload)).flatMap {
            try? JSONSerialization.jsonObject(with: $0.payload) as? [String: Any]
        }
        if payload?["notificationUUID"] as? String != notification.uuid.uuidString.lowercased()
            || payload?["notificationType"] as? String != notification.type
            || payload?["subtype"] as? String != notification.subtype
        {
            found.append("its signed payload does not name its UUID, type and subtype")
        }
        return found.map {
            LedgerProblem(
                transactionID: notification.transactionID,
                message: "notification \(notification.uuid.uuidString.lowercased()): \($0)")
        }
    }
}
