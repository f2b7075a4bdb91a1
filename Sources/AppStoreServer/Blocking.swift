import Dispatch

/// Work that blocks its thread, run on threads of its own: SQLite blocks while it waits for a
/// lock or the disk, and neither Swift's cooperative threads nor NIO's event loops (which
/// `ledger serve` makes Swift's executor) may wait: every connection shares them.
enum Blocking {
    private static let threads = DispatchQueue(label: "AppStoreServer.blocking", attributes: .concurrent)

    /// `body`'s result, computed on one of the blocking threads.
    static func run<Result: Sendable, Failure: Error>(
        _ body: @escaping @Sendable () throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        let outcome = await withCheckedContinuation {
            (continuation: CheckedContinuation<Swift.Result<Result, Failure>, Never>) in
            threads.async {
                do throws(Failure) {
                    continuation.resume(returning: .success(try body()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try outcome.get()
    }
}
