public import ArgumentParser
import Foundation
import StoreLedger

struct ApproveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "approve", abstract: "Approve a deferred (Ask to Buy) transaction: it becomes purchased.")

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The transaction id.")
    var id: UInt64

    func run() async throws {
        try await changeTransaction(options) { try await $0.approve(id) }
    }
}

struct DeclineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decline", abstract: "Decline a deferred (Ask to Buy) transaction: it fails (paymentCancelled).")

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The transaction id.")
    var id: UInt64

    func run() async throws {
        try await changeTransaction(options) { try await $0.decline(id) }
    }
}

/// Launches a queue, applies `change`, and prints the transaction it returns.
private func changeTransaction(
    _ options: GlobalOptions, _ change: (PaymentQueue) async throws -> PaymentTransaction
) async throws {
    let transaction = try await change(try options.openQueue())
    try options.output.emit(transaction) { describe(transaction) }
}

struct FinishCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "finish",
        abstract: "Finish transactions (purchased, failed or restored), all in one commit.",
        discussion: "Finishing a finished transaction changes nothing. If any id is refused, none is finished.")

    @OptionGroup var options: GlobalOptions

    @Argument(help: "Transaction ids.")
    var ids: [UInt64]

    func validate() throws {
        guard !ids.isEmpty else { throw ValidationError("give at least one transaction id") }
    }

    func run() async throws {
        let result = try await options.openQueue().finishTransactions(ids)
        try options.output.emit(["finished": result.transactions, "replacements": result.replacements]) {
            (result.transactions.map(describe)
                + result.replacements.map { "new purchase replacing an interrupted one: " + describe($0) })
                .joined(separator: "\n")
        }
    }
}

struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List transactions, oldest first (ascending id), one page at a time.",
        discussion: """
            At most \(defaultLimit) transactions unless --limit says otherwise; the output says how many more \
            match. For the next page, pass the last id printed as --after.
            """)

    /// How many transactions `ledger list` shows without `--limit`.
    static let defaultLimit = 100

    @OptionGroup var options: GlobalOptions

    @Option(help: "Only this state: purchasing, purchased, failed, restored or deferred.")
    var state: TransactionState?

    @Option(name: .customLong("product"), help: "Only this product identifier.")
    var productID: String?

    @Flag(help: "Only unfinished transactions (the queue).")
    var unfinished = false

    @Option(parsing: .unconditional, help: "At most this many transactions (default \(defaultLimit)).")
    var limit: Int?

    @Option(parsing: .unconditional, help: "Only transactions with a larger id than this one.")
    var after: UInt64?

    func validate() throws {
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
    }

    func run() async throws {
        let filter = TransactionFilter(
            state: state, productID: productID, unfinishedOnly: unfinished, afterID: after,
            limit: limit ?? Self.defaultLimit)
        let ledger = try options.openLedgerForReading()
        var list = TransactionListWriter(
            json: options.json, showsCustomers: try ledger.customerCount() > 1, showsApps: try ledger.apps().count > 1)
        let more = try ledger.readTransactions(matching: filter) { page, owners, more in
            list.write(page, owners: owners, more: more)
        }
        list.finish(more: more)
    }
}

/// `ledger list`'s output: one line per transaction, or the JSON document
/// `{"more": N, "transactions": [...], "version": 1}` in the same bytes as `Output.emit` would
/// write it whole, streamed through a `HeldOutput`.
struct TransactionListWriter {
    let json: Bool
    /// Whether a line names each transaction's customer (a store of several; JSON always does).
    let showsCustomers: Bool
    /// Whether a line names each transaction's app (a store of several; JSON always does).
    let showsApps: Bool
    private var out = HeldOutput()
    private var lastID: UInt64?

    init(json: Bool, showsCustomers: Bool, showsApps: Bool = false) {
        self.json = json
        self.showsCustomers = showsCustomers
        self.showsApps = showsApps
    }

    /// Writes `page`, whose owners' names and apps' bundle identifiers `owners` has by id.
    mutating func write(_ page: [PaymentTransaction], owners: TransactionOwners, more: Int) {
        if json, lastID == nil { out.bytes += Self.head(more: more).utf8 }
        out.bytes.reserveCapacity(out.bytes.count + page.count * (json ? 1_024 : 128))
        for transaction in page {
            if json {
                out.bytes += (lastID == nil ? "\n    " : ",\n    ").utf8
                TransactionJSON.append(
                    transaction, customer: owners.customers[transaction.customerID] ?? "",
                    app: owners.apps[transaction.appID] ?? "", depth: 2, to: &out.bytes)
            } else {
                let customer =
                    showsCustomers
                    ? "  customer " + TerminalText.escaped(owners.customers[transaction.customerID] ?? "") : ""
                let app = showsApps ? "  app " + TerminalText.escaped(owners.apps[transaction.appID] ?? "") : ""
                out.bytes += (describe(transaction) + customer + app + "\n").utf8
            }
            lastID = transaction.id
        }
        out.flushIfFull()
    }

    mutating func finish(more: Int) {
        if json {
            out.bytes += (lastID == nil ? Self.head(more: more) + HeldOutput.emptyArray : "\n  ]").utf8
            out.bytes += ",\n  \"version\" : \(Output.jsonVersion)\n}\n".utf8
        } else if lastID == nil, more == 0 {
            out.bytes += "no transactions\n".utf8
        }
        if !json, more > 0 {
            let next = lastID.map { " --after \($0)" } ?? ""
            out.bytes += "... \(more) more: ledger list\(next) (with the same filters), or a larger --limit\n".utf8
        }
        out.flush()
    }

    /// The document up to its array's first element.
    private static func head(more: Int) -> String {
        "{\n  \"more\" : \(more),\n  \"transactions\" : ["
    }
}

extension TransactionState: ExpressibleByArgument {}

struct ShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Show a transaction and its event history.")

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The transaction id.")
    var id: UInt64

    func run() async throws {
        let ledger = try options.openLedgerForReading()
        guard let transaction = try ledger.transaction(id) else { throw PaymentQueueError.unknownTransaction(id) }
        let events = try ledger.events(of: id)
        let shown = Shown(
            transaction: transaction, events: events,
            orderID: transaction.state == .purchased ? OrderID.of(transaction.id) : nil,
            consumption: try ledger.consumptionInformation(for: id).map {
                Shown.Consumption(version: $0.version, request: try JSONValue(Data($0.json.utf8)), date: $0.date)
            },
            serverAppAccountToken: try ledger.serverAppAccountToken(originalTransactionID: transaction.originalID)
                .map { $0?.uuidString.lowercased() ?? "" },
            refundRequest: try ledger.refundRequest(of: id).map(RefundRequestsCommand.RequestView.init),
            ownership: try ledger.isFamilyShared(transaction) ? "FAMILY_SHARED" : "PURCHASED",
            revocationPercentage: try ledger.revocationPercentage(of: id))
        try options.output.emit(shown) {
            ([describe(transaction)] + shown.serverLines
                + events.map { event in
                    let change = event.fromState.map { "\($0.rawValue) -> " } ?? ""
                    return
                        "  \(event.sequence)  \(event.kind.rawValue)  \(change)\(event.toState.rawValue)  \(event.date)"
                        + (event.detail.map { "  \($0)" } ?? "")
                }).joined(separator: "\n")
        }
    }

    /// A transaction, its history, and what the App Store's server keeps about it: its order
    /// id, the consumption information a server sent, the app account token a server set, the
    /// customer's refund request.
    struct Shown: Encodable {
        let transaction: PaymentTransaction
        let events: [TransactionEvent]
        let orderID: String?
        let consumption: Consumption?
        /// The token set by Set App Account Token on the chain; "" when cleared.
        let serverAppAccountToken: String?
        let refundRequest: RefundRequestsCommand.RequestView?
        /// Apple's `inAppOwnershipType`: FAMILY_SHARED when a family member shared it.
        let ownership: String
        /// The part a prorated refund refunded, in milliunits of a percent; `nil` unless prorated.
        let revocationPercentage: Int?

        struct Consumption: Encodable {
            let version: Int
            let request: JSONValue
            let date: Date
        }

        enum CodingKeys: String, CodingKey {
            case transaction, events, orderID, consumption, serverAppAccountToken, refundRequest, ownership,
                revocationPercentage
        }

        /// Every key, an absent value as `null`, so that a JSON reader sees one shape.
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(transaction, forKey: .transaction)
            try container.encode(events, forKey: .events)
            try container.encode(orderID, forKey: .orderID)
            try container.encode(consumption, forKey: .consumption)
            try container.encode(serverAppAccountToken, forKey: .serverAppAccountToken)
            try container.encode(refundRequest, forKey: .refundRequest)
            try container.encode(ownership, forKey: .ownership)
            try container.encode(revocationPercentage, forKey: .revocationPercentage)
        }

        var serverLines: [String] {
            var lines: [String] = []
            if ownership == "FAMILY_SHARED" { lines.append("  shared by a family member (FAMILY_SHARED)") }
            if let revocationPercentage {
                lines.append("  prorated refund: \(revocationPercentage) milliunits of a percent (REFUND_PRORATED)")
            }
            if let orderID { lines.append("  order \(orderID)") }
            if let token = serverAppAccountToken {
                lines.append("  app account token set by the server: " + (token.isEmpty ? "none (cleared)" : token))
            }
            if let consumption {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                let json = (try? encoder.encode(consumption.request)).map { String(decoding: $0, as: UTF8.self) } ?? ""
                lines.append("  consumption information (v\(consumption.version), \(consumption.date)): \(json)")
            }
            if let refundRequest { lines.append("  refund request: " + refundRequest.line) }
            return lines
        }
    }
}
