import Dispatch
import Foundation
import GRDB
import LedgerModel
import Synchronization

/// Group commit: write operations that arrive while a commit is in flight share the next
/// commit. Each runs in its own savepoint, so one that fails is rolled back alone; every
/// caller is answered only after the commit that holds its change (or with the commit's error,
/// when the commit fails: then nobody in the group is acknowledged).
final class CommitGroup: Sendable {
    // Sendable by hand: its closures are not, but they run only on the commit queue, one job at a
    // time.
    private struct Job: @unchecked Sendable {
        // `body` and `finish` are only called on the commit queue, one job at a time.
        let body: (Database) throws -> any Sendable
        let finish: (Result<any Sendable, any Error>) -> Void
    }

    private struct State {
        var pending: [Job] = []
        var committing = false
    }

    private let state = Mutex(State())
    private let commits = DispatchQueue(label: "StoreLedger.commits")
    private let writer: DatabaseQueue
    private let mapError: @Sendable (any Error) -> any Error
    /// Signs the ledger's hash chain head in the commits that are due (`HeadSigner`).
    private let headSigner: HeadSigner?

    init(writer: DatabaseQueue, headSigner: HeadSigner?, mapError: @escaping @Sendable (any Error) -> any Error) {
        self.writer = writer
        self.headSigner = headSigner
        self.mapError = mapError
    }

    /// Runs `body` in the next commit and returns its result once that commit is durable.
    ///
    /// When no commit is in flight, the caller commits its own change on its own thread: a lone
    /// writer pays no thread hop. Changes that arrive meanwhile wait for the commit after it,
    /// which the commit queue makes (and answers) while this caller returns.
    ///
    /// The caller's thread is usually one of Swift's few cooperative threads, and a commit
    /// waits for an fsync: only one commit of the whole process is made that way at a time
    /// (`callerCommit`), the others go through their ledger's commit queue, so that ledgers
    /// committing at once (parallel tests, a disk slow to sync) never hold every cooperative
    /// thread.
    func perform<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        let onCallersThread = state.withLock { state in
            guard !state.committing,
                Self.callerCommit.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged
            else { return false }
            state.committing = true
            return true
        }
        if onCallersThread {
            defer {
                Self.callerCommit.store(false, ordering: .releasing)
                handOver()
            }
            return try commitAlone(body)
        }
        let value: any Sendable = try await withCheckedThrowingContinuation { continuation in
            let job = Job(body: { try body($0) }, finish: { continuation.resume(with: $0) })
            let lead = state.withLock { state in
                state.pending.append(job)
                if state.committing { return false }
                state.committing = true
                return true
            }
            if lead { commits.async { self.drain() } }
        }
        return value as! T
    }

    /// One change in its own commit, on the calling thread (GRDB's synchronous write).
    private func commitAlone<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            return try writer.writeWithoutTransaction { db in
                try db.immediateTransaction(signing: headSigner) { try body(db) }
            }
        } catch {
            throw mapError(error)
        }
    }

    /// After a commit made on the caller's thread: the commit queue takes over the changes
    /// that arrived meanwhile, or nobody is committing any more.
    private func handOver() {
        let more = state.withLock { state in
            if state.pending.isEmpty { state.committing = false }
            return !state.pending.isEmpty
        }
        if more { commits.async { self.drain() } }
    }

    /// Commits batches until nobody is waiting.
    private func drain() {
        while true {
            let batch = state.withLock { state in
                let batch = state.pending
                state.pending = []
                if batch.isEmpty { state.committing = false }
                return batch
            }
            guard !batch.isEmpty else { return }
            let outcomes = commit(batch)
            for (job, outcome) in zip(batch, outcomes) { job.finish(outcome) }
            if batch.count > 1 { gather(expecting: batch.count) }
        }
    }

    /// After a shared commit, waits a moment (at most `lingerLimit`) while the callers it just
    /// answered come back with their next change, so that the next commit holds them too: a
    /// commit costs one fsync whatever it holds.
    private func gather(expecting count: Int) {
        let clock = ContinuousClock()
        let deadline = clock.now + Self.lingerLimit
        var seen = state.withLock { $0.pending.count }
        while seen < count / 2, clock.now < deadline {
            usleep(20)
            let now = state.withLock { $0.pending.count }
            if now == seen && now > 0 { break }
            seen = now
        }
    }

    static let lingerLimit = Duration.microseconds(200)

    /// Whether a commit is being made on a caller's thread, in any ledger of the process.
    private static let callerCommit = Atomic<Bool>(false)

    /// Commits `batch` in one transaction: each job in its own savepoint (alone, a job needs
    /// none: if it fails, the whole transaction rolls back). Returns each job's outcome; when
    /// the commit fails, nobody in the batch is acknowledged.
    private func commit(_ batch: [Job]) -> [Result<any Sendable, any Error>] {
        do {
            return try writer.writeWithoutTransaction { db in
                try db.immediateTransaction(signing: headSigner) {
                    if batch.count == 1 { return [.success(try batch[0].body(db))] }
                    var outcomes: [Result<any Sendable, any Error>] = []
                    for job in batch {
                        do {
                            outcomes.append(.success(try db.inCachedSavepoint { try job.body(db) }))
                        } catch let failed as SavepointRollbackFailed {
                            throw failed.error  // rolls the whole batch back: nobody is acknowledged
                        } catch {
                            outcomes.append(.failure(mapError(error)))
                        }
                    }
                    return outcomes
                }
            }
        } catch {
            let failure = mapError(error)
            return batch.map { _ in .failure(failure) }
        }
    }
}
