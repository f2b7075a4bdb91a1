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

    @Test func aHolderMayEnterAgainAndTheNextStartsWithThePowerOnAndNothingArmed() async throws {
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
        // (Between two holders another test may hold the faults: look from the next turn.)
        try await FaultInjection.exclusively {
            #expect(!FaultInjection.isPoweredOff)
            // Nothing armed: a ledger opened through the fault VFS writes.
            let products = try await withTemporaryLedger(configuration: FaultInjection.configuration()) { ledger in
                try ledger.counts().products
            }
            #expect(products == 7)
        }
    }
}

/// A suite marked `.faultInjection` without `.serialized`: its cases would run at once, but each
/// has the fault VFS to itself, so none ever sees another holding it.
@Suite(.faultInjection) struct FaultTraitTests {
    static let holder = Mutex<Int?>(nil)

    @Test(arguments: 1...4)
    func eachTestHasTheFaultsToItself(_ number: Int) async throws {
        let before = Self.holder.withLock { holder in
            defer { holder = number }
            return holder
        }
        #expect(before == nil, "test \(number) started while test \(before ?? 0) held the faults")
        #expect(!FaultInjection.isPoweredOff && FaultInjection.counters.faults == 0)
        FaultInjection.powerLoss()  // the next test must start with the power on
        try await Task.sleep(for: .milliseconds(30))
        #expect(Self.holder.withLock { $0 } == number)
        Self.holder.withLock { $0 = nil }
    }
}
