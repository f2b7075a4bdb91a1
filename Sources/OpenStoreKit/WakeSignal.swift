import Synchronization

/// Wakes one waiting task, or the next one to wait when none waits now; a wait also ends by
/// itself after a while. Several signals before a wait wake it once.
final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: (id: UInt64, continuation: CheckedContinuation<Void, Never>)?
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Wakes the waiting task, or the next wait.
    func signal() {
        state.withLock { state in
            if let waiter = state.waiter {
                state.waiter = nil
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
                if state.pending {
                    state.pending = false
                    return nil
                }
                state.nextID += 1
                state.waiter = (state.nextID, continuation)
                return state.nextID
            }
            guard let id else { return continuation.resume() }
            Task {
                try? await Task.sleep(for: limit)
                self.timeOut(id)
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
