public import ArgumentParser
import Foundation
public import StoreLedger
public import StoreTesting

extension RevocationReason: ExpressibleByArgument {
    public init?(argument: String) {
        self.init(nameOrRawValue: argument)
    }

    /// Every reason by name, for the help and for the error a wrong one gets.
    public static var allValueStrings: [String] { allCases.map(\.name) }

    public static var allValueDescriptions: [String: String] {
        [
            RevocationReason.other.name: "any other reason (0)",
            RevocationReason.developerIssue.name: "an issue in the app (1)",
        ]
    }
}

struct RefundCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "refund",
        abstract:
            "Refund a purchased or restored transaction: sets its revocation date and reason; the state does not change."
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The transaction id.")
    var id: UInt64

    @Option(help: "Why it was refunded (StoreKit's revocation reasons; default other):")
    var reason: RevocationReason?

    @Option(
        name: .customLong("revocation-percentage"), parsing: .unconditional,
        help: "A prorated refund of this part, in milliunits of a percent (1...99999; 25000 is 25%).")
    var revocationPercentage: Int?

    func run() async throws {
        let refunded = try await StoreTestSession(ledger: try options.openLedger()).refundTransaction(
            id, reason: reason ?? .other, revocationPercentage: revocationPercentage)
        try options.output.emit(refunded) { "refunded " + describe(refunded) }
    }
}

/// `ledger reverse-refund`: the App Store reverses a refund after a dispute (REFUND_REVERSED).
struct ReverseRefundCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reverse-refund",
        abstract: "Reverse a refund, as the App Store does after a dispute the customer raised (REFUND_REVERSED).",
        discussion: """
            The purchase, with the restored copies its refund revoked, entitles again: the revocation date and \
            reason are cleared (a prorated refund's part too), and each transaction's history records it. A \
            subscription keeps its renewal date: a period that ended while refunded stays ended. Family \
            Sharing's end is not a refund and cannot be reversed.
            """)

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The id of a refunded transaction.")
    var id: UInt64

    func run() async throws {
        let reinstated = try await StoreTestSession(ledger: try options.openLedger()).reverseRefund(of: id)
        try options.output.emit(reinstated) { "reinstated " + describe(reinstated) }
    }
}

extension RefundRequest.Reason: ExpressibleByArgument {
    public init?(argument: String) {
        guard let reason = Self.allCases.first(where: { $0.rawValue == argument.uppercased() }) else { return nil }
        self = reason
    }

    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
}

/// `ledger refund-requests`: a customer asks for a refund; the App Store grants or declines it.
struct RefundRequestsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "refund-requests",
        abstract: "Ask for a refund as a customer does, then grant or decline it as the App Store does.",
        discussion: """
            submit records the customer's request (StoreKit 2's refund request sheet), with Apple's reasons; \
            a consumable's or an auto-renewable subscription's notifies CONSUMPTION_REQUEST (when the store has \
            a notification URL). approve refunds the purchase as `ledger refund` does (REFUND); decline leaves \
            it (REFUND_DECLINED). A transaction has one request waiting at most.
            """,
        subcommands: [Submit.self, Approve.self, Decline.self, List.self])

    /// A request as the commands print it.
    struct RequestView: Encodable {
        let transactionID: UInt64
        let reason: String
        let requestedAt: Date
        let outcome: String
        let decidedAt: Date?

        init(_ request: RefundRequest) {
            transactionID = request.transactionID
            reason = request.reason.rawValue
            requestedAt = request.requestedAt
            outcome = request.outcome.rawValue
            decidedAt = request.decidedAt
        }

        enum CodingKeys: String, CodingKey { case transactionID, reason, requestedAt, outcome, decidedAt }

        /// Every field, an absent `decidedAt` as `null`, so that a JSON reader sees one shape.
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(transactionID, forKey: .transactionID)
            try container.encode(reason, forKey: .reason)
            try container.encode(requestedAt, forKey: .requestedAt)
            try container.encode(outcome, forKey: .outcome)
            try container.encode(decidedAt, forKey: .decidedAt)
        }

        var line: String {
            "transaction \(transactionID)  \(reason)  \(outcome)  asked \(InternetDate.string(from: requestedAt))"
                + (decidedAt.map { "  decided " + InternetDate.string(from: $0) } ?? "")
        }
    }

    /// The request of `id` as stored now.
    static func view(_ ledger: Ledger, _ id: UInt64) throws -> RequestView {
        guard let request = try ledger.refundRequest(of: id) else { throw StoreControlError.noRefundRequest(id) }
        return RequestView(request)
    }

    /// `approve` and `decline`: the App Store's decision on the request of `id`, printed.
    static func decide(_ id: UInt64, _ decision: RefundRequest.Decision, options: GlobalOptions) async throws {
        let ledger = try options.openLedger()
        try await StoreTestSession(ledger: ledger).decideRefundRequest(id, decision)
        let view = try view(ledger, id)
        try options.output.emit(view) { (decision == .decline ? "declined " : "granted ") + view.line }
    }

    struct Submit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The customer asks for the refund of a purchased or restored transaction.")

        @OptionGroup var options: GlobalOptions

        @Argument(help: "The transaction id.")
        var id: UInt64

        @Option(help: "The customer's reason (Apple's consumptionRequestReason; default OTHER).")
        var reason: RefundRequest.Reason = .other

        func run() async throws {
            let ledger = try options.openLedger()
            try await StoreTestSession(ledger: ledger).requestRefund(id, reason: reason)
            let view = try RefundRequestsCommand.view(ledger, id)
            try options.output.emit(view) { "requested " + view.line }
        }
    }

    struct Approve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The App Store grants the waiting refund request: the purchase is refunded.")

        @OptionGroup var options: GlobalOptions

        @Argument(help: "The transaction id.")
        var id: UInt64

        @Option(
            name: .customLong("revocation-percentage"), parsing: .unconditional,
            help: "Grant part of it, by the customer's use (REFUND_PRORATED): milliunits of a percent, 1...99999.")
        var revocationPercentage: Int?

        func run() async throws {
            try await RefundRequestsCommand.decide(
                id, revocationPercentage.map { .grantProrated(revocationPercentage: $0) } ?? .grant, options: options)
        }
    }

    struct Decline: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The App Store declines the waiting refund request: the purchase stands.")

        @OptionGroup var options: GlobalOptions

        @Argument(help: "The transaction id.")
        var id: UInt64

        func run() async throws {
            try await RefundRequestsCommand.decide(id, .decline, options: options)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the refund requests, by transaction id, 1,000 at a time.")

        @OptionGroup var options: GlobalOptions

        @Option(help: "Only the requests of transactions after this id (the last id of the previous page).")
        var after: UInt64 = 0

        func run() async throws {
            let requests = try options.openLedgerForReading().refundRequests(after: after).map(RequestView.init)
            try options.output.emit(["requests": requests]) {
                requests.isEmpty ? "no refund requests" : requests.map(\.line).joined(separator: "\n")
            }
        }
    }
}
