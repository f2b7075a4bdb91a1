import ArgumentParser
import StoreLedger
import Synchronization

struct LaunchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "launch",
        abstract: "One app launch: adds an observer and prints every transaction delivered to it.",
        discussion: """
            Transactions left purchasing by a killed process are completed first. With --finish, each \
            delivered transaction that can be finished is finished after it is "delivered", as an app would.
            """)

    @OptionGroup var options: GlobalOptions

    @Flag(help: "Finish each delivered transaction (purchased, failed, restored).")
    var finish = false

    func run() async throws {
        let queue = try options.openQueue()
        let observer = LaunchObserver(
            finishing: finish, report: LaunchReport(json: options.json, completedAtLaunch: queue.completedAtLaunch))
        try await queue.add(observer)
        try observer.end()
    }
}

/// The launch's observer: writes each delivery to the report as it comes and, like an app,
/// may finish what it was given. It keeps nothing of a delivery once written, so that a
/// launch's memory does not grow with the number of unfinished transactions.
final class LaunchObserver: PaymentTransactionObserver {
    private let finishing: Bool
    private let state: Mutex<(report: LaunchReport, failure: (any Error)?)>

    init(finishing: Bool, report: LaunchReport) {
        self.finishing = finishing
        state = Mutex((report, nil))
    }

    func paymentQueue(_ queue: PaymentQueue, updatedTransactions transactions: [PaymentTransaction]) async {
        state.withLock { $0.report.write(delivered: transactions) }
        guard finishing, state.withLock({ $0.failure == nil }) else { return }
        let finishable = transactions.filter { $0.state.canBeFinished && !$0.isFinished }.map(\.id)
        do {
            let done = try await queue.finish(finishable)
            state.withLock { $0.report.write(finished: done.map(\.id)) }
        } catch {
            // Reported when the launch ends; nothing more is finished.
            state.withLock { $0.failure = error }
        }
    }

    /// Ends the report, or throws the first error of a finish.
    func end() throws {
        try state.withLock {
            if let failure = $0.failure { throw failure }
            $0.report.end()
        }
    }
}

/// `ledger launch`'s output, written as the launch goes (`HeldOutput`): a line per completed,
/// delivered and finished transaction, or the JSON document `{"completedAtLaunch": [ids],
/// "delivered": [transactions], "finished": [ids], "version": 1}` in the bytes `Output.emit`
/// would write. Only the finished ids wait for the end (8 bytes each): JSON puts them last.
struct LaunchReport {
    let json: Bool
    private var out = HeldOutput()
    private var delivered = 0
    private var finished: [UInt64] = []

    init(json: Bool, completedAtLaunch: [PaymentTransaction]) {
        self.json = json
        if json {
            out.bytes +=
                ("{\n  \"completedAtLaunch\" : [" + Self.idArray(completedAtLaunch.map(\.id)) + ",\n  \"delivered\" : [")
                .utf8
        } else {
            for transaction in completedAtLaunch {
                out.bytes += "completed at launch: #\(transaction.id) -> \(transaction.state.rawValue)\n".utf8
            }
        }
    }

    mutating func write(delivered transactions: [PaymentTransaction]) {
        for transaction in transactions {
            if json {
                out.bytes += (delivered == 0 ? "\n    " : ",\n    ").utf8
                TransactionJSON.append(transaction, depth: 2, to: &out.bytes)
            } else {
                out.bytes += ("delivered " + describe(transaction) + "\n").utf8
            }
            delivered += 1
        }
        out.flushIfFull()
    }

    mutating func write(finished ids: [UInt64]) {
        if json {
            finished += ids
        } else {
            for id in ids { out.bytes += "finished #\(id)\n".utf8 }
            out.flushIfFull()
        }
    }

    mutating func end() {
        if json {
            out.bytes +=
                ((delivered == 0 ? HeldOutput.emptyArray : "\n  ]") + ",\n  \"finished\" : [" + Self.idArray(finished))
                .utf8
            out.bytes += ",\n  \"version\" : \(Output.jsonVersion)\n}\n".utf8
        } else if delivered == 0 {
            out.bytes += "nothing delivered: no unfinished transactions\n".utf8
        }
        out.flush()
    }

    /// An array of ids after its `[`, as JSONEncoder's pretty printing writes it.
    private static func idArray(_ ids: [UInt64]) -> String {
        ids.isEmpty ? HeldOutput.emptyArray : "\n" + ids.map { "    \($0)" }.joined(separator: ",\n") + "\n  ]"
    }
}
