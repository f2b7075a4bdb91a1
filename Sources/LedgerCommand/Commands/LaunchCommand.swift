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
        let observer = RecordingObserver(finishing: finish)
        try await queue.add(observer)
        if let failure = observer.failure { throw failure }
        let result = LaunchResult(
            delivered: observer.delivered, finished: observer.finished,
            completedAtLaunch: queue.completedAtLaunch.map(\.id))
        try options.output.emit(result) {
            var lines = queue.completedAtLaunch.map { "completed at launch: #\($0.id) -> \($0.state.rawValue)" }
            lines += result.delivered.isEmpty ? ["nothing delivered: no unfinished transactions"]
                : result.delivered.map { "delivered " + describe($0) }
            lines += result.finished.map { "finished #\($0)" }
            return lines.joined(separator: "\n")
        }
    }

    struct LaunchResult: Encodable {
        let delivered: [PaymentTransaction]
        let finished: [UInt64]
        let completedAtLaunch: [UInt64]
    }
}

/// An observer that records what it is given and, like an app, may finish it after delivery.
final class RecordingObserver: PaymentTransactionObserver {
    private let finishing: Bool
    private let state = Mutex<(delivered: [PaymentTransaction], finished: [UInt64], failure: (any Error)?)>(([], [], nil))

    init(finishing: Bool) {
        self.finishing = finishing
    }

    var delivered: [PaymentTransaction] { state.withLock { $0.delivered } }
    var finished: [UInt64] { state.withLock { $0.finished } }
    /// The first error of a finish, which the command reports.
    var failure: (any Error)? { state.withLock { $0.failure } }

    func paymentQueue(_ queue: PaymentQueue, updatedTransactions transactions: [PaymentTransaction]) async {
        state.withLock { $0.delivered += transactions }
        guard finishing else { return }
        let finishable = transactions.filter { $0.state.canBeFinished && !$0.isFinished }.map(\.id)
        do {
            let done = try await queue.finish(finishable)
            state.withLock { $0.finished += done.map(\.id) }
        } catch {
            state.withLock { $0.failure = $0.failure ?? error }
        }
    }
}
