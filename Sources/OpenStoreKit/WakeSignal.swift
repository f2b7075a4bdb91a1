import Synchronization

/// Wakes the one task that waits on it, or its next wait when it is not waiting now; a wait
/// also ends by itself after a while. Several signals before a wait wake it once. One task
/// waits at a time (the status watch): a second concurrent wait is a programming error.
final class WakeSignal: Sendable {
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, Never>
        /// Ends the wait when its time is up; cancelled when a signal ends it first.
        var timeout: Task<Void, Never>?
    }

    private struct State {
        var pending = false
        var waiter: Waiter?
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Wakes the waiting task, or the next wait.
    func signal() {
        state.withLock { state in
            if let waiter = state.waiter {
                state.waiter = nil
                waiter.timeout?.cancel()
                waiter.continuation.resume()
            } else {
                state.pending = true
            }
        }
    }

    /// Returns at the next signal (at once if one came since the last wait), or after `limit`.
    func wait(atMost limit: Duration) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let id: UInt64? = state.withLock { state in
                precondition(state.waiter == nil, "WakeSignal: one task waits at a time")
                if state.pending {
                    state.pending = false
                    return nil
                }
                state.nextID += 1
                state.waiter = Waiter(id: state.nextID, continuation: continuation)
                return state.nextID
            }
            guard let id else { return continuation.resume() }
            let timeout = Task {
                guard (try? await Task.sleep(for: limit)) != nil else { return }  // cancelled: signalled
                self.timeOut(id)
            }
            // Kept so that a signal cancels it; a signal that came first ended the wait already.
            state.withLock { state in
                if state.waiter?.id == id { state.waiter?.timeout = timeout } else { timeout.cancel() }
            }
        }
    }

    /// Ends the wait `id` if it still runs (a signal may have ended it, and another begun).
    private func timeOut(_ id: UInt64) {
        state.withLock { state in
            guard let waiter = state.waiter, waiter.id == id else { return }
            state.waiter = nil
            waiter.continuation.resume()
        }
    }
}
