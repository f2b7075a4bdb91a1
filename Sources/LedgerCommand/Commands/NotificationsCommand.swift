import AppStoreServer
import ArgumentParser
import Foundation
import StoreLedger

/// `ledger notifications`: the store's outbox of App Store Server Notifications V2.
struct NotificationsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notifications",
        abstract: "List, show and send the store's App Store Server Notifications V2.",
        discussion: """
            While the store has a notification URL (`ledger store set notificationURL URL`), \
            every change the App Store notifies records its notification, signed, in the \
            change's commit. `ledger serve` sends them as they fall due; `send` sends what is \
            due once, without serving.
            """,
        subcommands: [List.self, Show.self, Send.self])

    /// A notification as `list` and `send` print it.
    struct Line: Encodable {
        let uuid: String
        let type: String
        let subtype: String?
        let transactionID: String?
        let originalTransactionID: String?
        let date: Date
        let status: String
        let attempts: Int
        let nextAttemptDate: Date?

        init(_ notification: ServerNotification) {
            uuid = notification.uuid.uuidString.lowercased()
            type = notification.type
            subtype = notification.subtype
            transactionID = notification.transactionID.map(String.init)
            originalTransactionID = notification.originalTransactionID.map(String.init)
            date = notification.date
            status = notification.status.rawValue
            attempts = notification.attempts.count
            nextAttemptDate = notification.nextAttemptDate
        }

        var text: String {
            let kind = type + (subtype.map { "/\($0)" } ?? "")
            let next = nextAttemptDate.map { ", next " + InternetDate.string(from: $0) } ?? ""
            let about = transactionID.map { "  transaction \($0)" } ?? ""
            return "\(uuid)  \(kind)\(about)  \(status) (\(attempts) attempt\(attempts == 1 ? "" : "s")\(next))"
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the notifications in commit order (the first 1,000 after --after).")

        @OptionGroup var options: GlobalOptions

        @Option(help: "Only those pending, delivered or failed.")
        var status: ServerNotification.Status?

        @Option(help: "Only those after this position in the outbox (0: from the first).")
        var after: Int64 = 0

        func run() async throws {
            let lines = try options.openLedgerForReading().notifications(status: status, after: after).map(Line.init)
            try options.output.emit(["notifications": lines]) {
                lines.isEmpty ? "no notifications" : lines.map(\.text).joined(separator: "\n")
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show one notification: its payload decoded, and every attempt to send it.")

        @OptionGroup var options: GlobalOptions

        @Argument(help: "The notification's notificationUUID.")
        var uuid: String

        struct View: Encodable {
            let notification: Line
            let payload: JSONValue
            let transactionInfo: JSONValue?
            let renewalInfo: JSONValue?
            let attempts: [Attempt]
        }

        struct Attempt: Encodable {
            let date: Date
            let sendAttemptResult: String
            let httpStatus: Int?
            let detail: String?
        }

        func run() async throws {
            guard let id = UUID(uuidString: uuid) else {
                throw InputError(description: "\(quoted(uuid)) is not a UUID")
            }
            guard let notification = try options.openLedgerForReading().notification(id) else {
                throw NotificationError.unknownNotification(uuid)
            }
            let payload = try JSONValue(try JWS(compactSerialization: notification.signedPayload).payload)
            func decoded(_ key: String) throws -> JSONValue? {
                guard case .object(let fields) = payload, case .object(let data)? = fields["data"],
                    case .string(let jws)? = data[key]
                else { return nil }
                return try JSONValue(try JWS(compactSerialization: jws).payload)
            }
            let view = View(
                notification: Line(notification), payload: payload,
                transactionInfo: try decoded("signedTransactionInfo"), renewalInfo: try decoded("signedRenewalInfo"),
                attempts: notification.attempts.map {
                    Attempt(
                        date: $0.date, sendAttemptResult: $0.result.rawValue, httpStatus: $0.httpStatus,
                        detail: $0.detail)
                })
            try options.output.emit(view) {
                let attempts = view.attempts.map {
                    "attempt \(InternetDate.string(from: $0.date))  \($0.sendAttemptResult)"
                        + ($0.httpStatus.map { " (HTTP \($0))" } ?? "") + ($0.detail.map { ": \($0)" } ?? "")
                }
                return
                    ([view.notification.text] + attempts + [Self.pretty(view.payload, "payload")]
                    + [
                        view.transactionInfo.map { Self.pretty($0, "transaction info") },
                        view.renewalInfo.map { Self.pretty($0, "renewal info") },
                    ].compactMap { $0 })
                    .joined(separator: "\n")
            }
        }

        private static func pretty(_ value: JSONValue, _ title: String) -> String {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            return "\(title):\n" + String(decoding: (try? encoder.encode(value)) ?? Data(), as: UTF8.self)
        }
    }

    struct Send: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send what is due by the store's clock once (for scripts and CI), and exit.",
            discussion: """
                Makes the renewals and expiries that fell due first, as `ledger serve` does. Each \
                attempt is recorded; a failed one is retried 1, 12, 24, 48 and 72 hours after the \
                previous attempt, by the store's clock. Exit 0 whatever the receiver answered: \
                `list` shows what failed.
                """)

        @OptionGroup var options: GlobalOptions

        @OptionGroup var trust: NotificationTrustOptions

        func run() async throws {
            let authorities = try trust.authorities()
            let ledger = try options.openLedger()
            try ledger.settleDueChanges()
            let sender = NotificationSender(ledger: ledger, trusting: authorities)
            // Round after round, as a round takes at most its batch. Each notification is
            // attempted once at most (a failed one is due again hours later by the store's
            // clock), so this ends.
            var round = NotificationSender.Round()
            do {
                while case let next = try await sender.sendDue(), !next.attempted.isEmpty {
                    round.attempted += next.attempted
                }
            } catch {
                try? await sender.shutdown()
                throw error
            }
            try await sender.shutdown()
            let lines: [Line] = round.attempted.map(Line.init)
            try options.output.emit(["attempted": lines]) {
                lines.isEmpty
                    ? "nothing due"
                    : (lines.map(\.text) + ["sent \(lines.count), delivered \(round.deliveredCount)"])
                        .joined(separator: "\n")
            }
        }
    }
}

/// `--notification-ca FILE`: the authorities a sender of notifications trusts besides the
/// system's (`ledger serve`, `ledger notifications send`).
struct NotificationTrustOptions: ParsableArguments {
    @Option(
        name: .customLong("notification-ca"),
        help: ArgumentHelp(
            "Also trust the PEM certificate authorities in this file for an https notification URL.",
            valueName: "file"))
    var file: String?

    /// The authorities of `--notification-ca`, read now; `nil` without it.
    func authorities() throws -> TrustedAuthorities? {
        guard let file else { return nil }
        do {
            return try TrustedAuthorities(pemFile: file)
        } catch {
            throw CommandRefusal(description: "--notification-ca: \(error.description)")
        }
    }
}
