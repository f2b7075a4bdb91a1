import Foundation
import LedgerTesting
import Synchronization
import Testing

/// `FaultInjection.exclusively` (and the `.faultInjection` trait built on it).
@Suite struct FaultScopeTests {
    @Test func twoCallersNeverHoldTheFaultsAtOnce() async throws {
        final class Trace: Sendable { let lines = Mutex<[String]>([]) }
        let trace = Trace()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for name in ["a", "b", "c"] {
                group.addTask {
                    try await FaultInjection.exclusively {
                        trace.lines.withLock { $0.append("enter \(name)") }
                        try await Task.sleep(for: .milliseconds(30))
                        trace.lines.withLock { $0.append("leave \(name)") }
                    }
                }
            }
            try await group.waitForAll()
        }
        let events = trace.lines.withLock { $0 }
        #expect(events.count == 6)
        for pair in stride(from: 0, to: events.count, by: 2) {
            let name = events[pair].dropFirst("enter ".count)
            #expect(events[pair].hasPrefix("enter ") && events[pair + 1] == "leave \(name)", "\(events)")
        }
    }

    @Test func aHolderMayEnterAgainAndLeavesThePowerOnAndNothingArmed() async throws {
        struct Stop: Error {}
        await #expect(throws: Stop.self) {
            try await FaultInjection.exclusively {
                try await FaultInjection.exclusively {  // does not wait for itself
                    FaultInjection.powerLoss()
                    FaultInjection.arm(.ioError, atWrite: 1, persistent: true)
                    #expect(FaultInjection.isPoweredOff)
                    throw Stop()
                }
            }
        }
        #expect(!FaultInjection.isPoweredOff)
        // Nothing armed: a ledger opened through the fault VFS writes.
        try await FaultInjection.exclusively {
            let products = try await withTemporaryLedger(configuration: FaultInjection.configuration()) { ledger in
                try ledger.counts().products
            }
            #expect(products == 7)
        }
    }
}
