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
            (result.transactions.map(describe) + result.replacements.map { "new purchase replacing an interrupted one: " + describe($0) })
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

    /// How many transactions are read (and written out) at once: memory does not grow with
    /// `--limit`.
    static let pageSize = 1_000

    @OptionGroup var options: GlobalOptions

    @Option(help: "Only this state: purchasing, purchased, failed, restored or deferred.")
    var state: TransactionState?

    @Option(name: .customLong("product"), help: "Only this product identifier.")
    var productID: String?

    @Flag(help: "Only unfinished transactions (the queue).")
    var unfinished = false

    @Option(help: "At most this many transactions (default \(defaultLimit)).")
    var limit: Int?

    @Option(help: "Only transactions with a larger id than this one.")
    var after: UInt64?

    func validate() throws {
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
    }

    func run() async throws {
        let ledger = try options.openLedgerForReading()
        var filter = TransactionFilter(state: state, productID: productID, unfinishedOnly: unfinished, afterID: after)
        let shown = limit ?? Self.defaultLimit
        var list = TransactionListWriter(json: options.json, more: max(0, try ledger.transactionCount(matching: filter) - shown))
        var remaining = shown
        while remaining > 0 {
            filter.limit = min(remaining, Self.pageSize)
            let page = try ledger.transactions(matching: filter)
            list.write(page)
            remaining -= page.count
            guard page.count == filter.limit, let last = page.last else { break }
            filter.afterID = last.id
        }
        list.finish()
    }
}

/// `ledger list`'s output written a page at a time: one line per transaction, or the JSON
/// document `{"more": N, "transactions": [...], "version": 1}` in the same bytes as
/// `Output.emit` would write it whole.
struct TransactionListWriter {
    let json: Bool
    /// How many transactions match after the last one written.
    let more: Int
    private var lastID: UInt64?

    init(json: Bool, more: Int) {
        self.json = json
        self.more = more
        if json { Self.write("{\n  \"more\" : \(more),\n  \"transactions\" : [") }
    }

    mutating func write(_ page: [PaymentTransaction]) {
        guard !page.isEmpty else { return }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(page.count * (json ? 1_024 : 128))
        for transaction in page {
            if json {
                bytes += (lastID == nil ? "\n    " : ",\n    ").utf8
                TransactionJSON.append(transaction, depth: 2, to: &bytes)
            } else {
                bytes += (describe(transaction) + "\n").utf8
            }
            lastID = transaction.id
        }
        FileHandle.standardOutput.write(Data(bytes))
    }

    func finish() {
        if json {
            Self.write((lastID == nil ? "\n\n  ]" : "\n  ]") + ",\n  \"version\" : \(Output.jsonVersion)\n}\n")
        } else if lastID == nil {
            Self.write(more > 0 ? "" : "no transactions\n")
        }
        if !json, more > 0 {
            let next = lastID.map { " --after \($0)" } ?? ""
            Self.write("... \(more) more: ledger list\(next) (with the same filters), or a larger --limit\n")
        }
    }

    private static func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
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
        try options.output.emit(Shown(transaction: transaction, events: events)) {
            ([describe(transaction)] + events.map { event in
                let change = event.fromState.map { "\($0.rawValue) -> " } ?? ""
                return "  \(event.sequence)  \(event.kind.rawValue)  \(change)\(event.toState.rawValue)  \(event.date)"
                    + (event.detail.map { "  \($0)" } ?? "")
            }).joined(separator: "\n")
        }
    }

    struct Shown: Encodable {
        let transaction: PaymentTransaction
        let events: [TransactionEvent]
    }
}
