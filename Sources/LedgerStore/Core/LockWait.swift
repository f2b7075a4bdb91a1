import Foundation
import GRDB
import Synchronization

/// How a connection waits for another process's lock: it retries for up to the configured
/// time, and after one second of waiting tells `LedgerConfiguration.onLockWait` once, so a
/// person running a command knows why nothing happens.
enum LockWait {
    static let noticeAfter: Duration = .seconds(1)

    static func busyMode(_ configuration: LedgerConfiguration) -> Database.BusyMode {
        let timeout = Duration.milliseconds(Int64((max(0, configuration.busyTimeout) * 1000).rounded()))
        let notice = configuration.onLockWait
        // The start of the current wait and whether it was announced; a connection is used by
        // one thread at a time, the lock only satisfies Sendable.
        let state = Mutex<(start: ContinuousClock.Instant, announced: Bool)>((.now, false))
        return .callback { tries in
            let now = ContinuousClock.now
            let waited = state.withLock { state in
                if tries == 0 { state = (now, false) }
                return now - state.start
            }
            guard waited < timeout else { return false }
            if waited >= noticeAfter, let notice, state.withLock({ state in
                defer { state.announced = true }
                return !state.announced
            }) {
                notice()
            }
            // Short sleeps first, so that a lock held briefly costs little.
            usleep(tries < 10 ? 1_000 : tries < 50 ? 5_000 : 20_000)
            return true
        }
    }
}
