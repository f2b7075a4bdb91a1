import Foundation
import GRDB
import LedgerModel
import Synchronization

/// How a connection waits for another process's lock: it retries for up to the configured
/// time, and after one second of waiting tells `LedgerConfiguration.onLockWait` once, so a
/// person running a command knows why nothing happens.
enum LockWait {
    static let noticeAfter: Duration = .seconds(1)

    static func busyMode(_ configuration: LedgerConfiguration) -> Database.BusyMode {
        // Clamped, so that any TimeInterval (NaN, infinity) converts: at most a year.
        let seconds = configuration.busyTimeout.isNaN ? 0 : min(max(0, configuration.busyTimeout), 31_536_000)
        let timeout = Duration.milliseconds(Int64((seconds * 1000).rounded()))
        let notice = configuration.onLockWait
        // The start of the current wait and whether it was announced; a connection is used by
        // one thread at a time, the lock only satisfies Sendable.
        let state = Mutex<(start: ContinuousClock.Instant, announced: Bool)>((.now, false))
        return .callback { tries in
            let now = ContinuousClock.now
            let (waited, announce) = state.withLock { state in
                if tries == 0 { state = (now, false) }
                let waited = now - state.start
                let announce = waited >= noticeAfter && !state.announced
                if announce { state.announced = true }
                return (waited, announce)
            }
            guard waited < timeout else { return false }
            if announce { notice?() }
            // Short sleeps first, so that a lock held briefly costs little.
            usleep(tries < 10 ? 1_000 : tries < 50 ? 5_000 : 20_000)
            return true
        }
    }
}
