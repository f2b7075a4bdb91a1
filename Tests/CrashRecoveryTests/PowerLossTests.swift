import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

/// Power losses and I/O errors through the fault VFS. Its state is process-wide: the suite has
/// it to itself (`.faultInjection`) and runs its tests one at a time.
@Suite(.serialized, .faultInjection) struct PowerLossTests {
    static let shortWorkload = (seed: UInt64(7), operations: 12)

    /// Every write of a short workload, and every sync, as the moment the power goes.
    @Test func aPowerLossAtAnyWriteOrSyncLosesNothingAcknowledged() async throws {
        try await withTemporaryDirectory { directory in
            let (writes, syncs) = await CrashRun.measure(
                seed: Self.shortWorkload.seed, operations: Self.shortWorkload.operations, durability: .full,
                in: directory)
            #expect(writes > 20 && syncs > 5)
            var fired = 0
            let triggers = (1...writes).map(CrashRun.Trigger.write) + (1...syncs).map(CrashRun.Trigger.sync)
            for (index, trigger) in triggers.enumerated() {
                let run = CrashRun(
                    seed: Self.shortWorkload.seed, operations: Self.shortWorkload.operations, fault: .powerLoss,
                    trigger: trigger,
                    lossMode: index % 3 == 0
                        ? .loseAll : index % 3 == 1 ? .loseRandom(seed: UInt64(index)) : .tornLastWrite)
                let outcome = try await withTemporaryDirectory { await run.run(in: $0) }
                #expect(outcome.violations.isEmpty, "replay: \(run) -> \(outcome.violations)")
                if outcome.faultFired { fired += 1 }
            }
            #expect(fired == triggers.count, "every point was inside the workload")
        }
    }

    /// The control: with `synchronous=NORMAL` a commit is not synced, so holding it to `full`'s
    /// rule must report lost acknowledgements. This shows the harness can fail.
    @Test func theHarnessCatchesLossesUnderNormalDurability() async throws {
        var lossesFound = 0
        for seed in UInt64(1)...6 {
            let run = CrashRun(
                seed: seed, operations: 30, fault: .powerLoss, trigger: .sync(10_000), durability: .normal)
            let outcome = try await withTemporaryDirectory { await run.run(in: $0, checkingAsFull: true) }
            if outcome.violations.contains(where: { $0.invariant == 1 }) { lossesFound += 1 }
            // Held to its own rule (only a suffix may be lost), the same runs are correct.
            let fair = try await withTemporaryDirectory { await run.run(in: $0) }
            #expect(fair.violations.isEmpty, "replay: \(run) -> \(fair.violations)")
        }
        #expect(lossesFound > 0, "a power loss under synchronous=NORMAL should lose acknowledged commits")
    }

    @Test func normalDurabilityLosesOnlyASuffixAtAnyWrite() async throws {
        try await withTemporaryDirectory { directory in
            let (writes, _) = await CrashRun.measure(seed: 3, operations: 12, durability: .normal, in: directory)
            for point in stride(from: Int64(1), through: writes, by: 3) {
                let run = CrashRun(
                    seed: 3, operations: 12, fault: .powerLoss, trigger: .write(point),
                    lossMode: .loseRandom(seed: UInt64(point)), durability: .normal)
                let outcome = try await withTemporaryDirectory { await run.run(in: $0) }
                #expect(outcome.violations.isEmpty, "replay: \(run) -> \(outcome.violations)")
            }
        }
    }

    /// An I/O error or a full disk at any write or sync: the operation fails, nothing
    /// acknowledged is lost, and the ledger stays consistent.
    @Test func ioErrorsAndAFullDiskLeaveTheLedgerConsistent() async throws {
        try await withTemporaryDirectory { directory in
            let (writes, syncs) = await CrashRun.measure(seed: 11, operations: 12, durability: .full, in: directory)
            var runs: [CrashRun] = []
            for point in stride(from: Int64(1), through: writes, by: 2) {
                runs.append(
                    CrashRun(
                        seed: 11, operations: 12, fault: point % 4 == 1 ? .diskFull : .ioError, trigger: .write(point),
                        persistent: point % 3 == 0))
            }
            for point in 1...syncs {
                runs.append(CrashRun(seed: 11, operations: 12, fault: .ioError, trigger: .sync(point)))
            }
            for run in runs {
                let outcome = try await withTemporaryDirectory { await run.run(in: $0) }
                #expect(outcome.violations.isEmpty, "replay: \(run) -> \(outcome.violations)")
            }
        }
    }

    /// A clock move and the renewals it makes due are one commit: a power loss at any write or
    /// sync of the move leaves neither or both, never a clock moved with its renewals still to
    /// make (which the next command, a read among them, would have written).
    @Test func aClockMoveAndItsRenewalsAreOneCommit() async throws {
        let epoch = Date(timeIntervalSince1970: 1_800_000_000)
        let triggers =
            (Int64(1)...14).map { (write: $0, sync: Int64?.none) }
            + (Int64(1)...4).map { (write: Int64?.none, sync: $0) }
        var interrupted = 0
        for trigger in triggers {
            try await withTemporaryDirectory { directory in
                FaultInjection.reset()
                let path = directory + "/ledger.sqlite"
                let configuration = FaultInjection.configuration(LedgerConfiguration(clock: .fixed(epoch)))
                try CrashWorkload.prepareLedger(at: path, configuration: configuration)
                let queue = try PaymentQueue(path: path, configuration: configuration)
                let session = StoreTestSession(queue: queue)
                try session.update { $0.timeRate = .oneRenewalEveryTenSeconds }
                try await queue.add(Payment(productID: "workload.monthly"))
                await queue.waitUntilNotified()
                FaultInjection.setLossMode(.loseAll)
                if let point = trigger.write { FaultInjection.arm(.powerLoss, atWrite: point) }
                if let point = trigger.sync { FaultInjection.arm(.powerLoss, atSync: point) }
                let moved = try? await session.advanceClock(by: 35)  // three renewals fall due
                if moved == nil { interrupted += 1 }
                try? queue.ledger.close()
                FaultInjection.powerOn()
                FaultInjection.reset()
                let reopened = try Ledger.open(at: path, configuration: configuration)
                let renewals = try reopened.allTransactions().filter { $0.reason == .renewal }.count
                let clockMoved = try reopened.storeDate() > epoch.addingTimeInterval(30)
                #expect(
                    clockMoved ? renewals == 3 : renewals == 0,
                    "\(trigger): clock moved \(clockMoved), \(renewals) renewals")
                #expect(try reopened.verify() == [])
                try reopened.close()
            }
        }
        #expect(interrupted > 0, "some power losses fell inside the move")
    }

    /// An I/O error during COMMIT leaves its outcome unknown: the ledger reports it, and a
    /// retry with the same idempotency key finds out what happened instead of guessing.
    @Test func aRetryAfterAFailedCommitFindsOutWhatHappened() async throws {
        FaultInjection.reset()
        for syncPoint in Int64(1)...3 {
            try await withTemporaryDirectory { directory in
                let path = directory + "/ledger.sqlite"
                let configuration = FaultInjection.configuration()
                try CrashWorkload.prepareLedger(at: path, configuration: configuration)
                let queue = try PaymentQueue(path: path, configuration: configuration)
                FaultInjection.reset()
                FaultInjection.arm(.ioError, atSync: syncPoint)
                let payment = Payment(productID: "workload.nonconsumable.a", idempotencyKey: "checkout-42")
                var first: PaymentTransaction?
                do {
                    first = try await queue.add(payment)
                } catch {
                    // The outcome is unknown: the retry below tells.
                }
                let retried = try await queue.add(payment)
                #expect(first == nil || first?.id == retried.id)
                #expect(retried.state == .purchased)
                let withKey = try queue.ledger.allTransactions().filter { $0.idempotencyKey == "checkout-42" }
                #expect(withKey.map(\.id) == [retried.id], "exactly one transaction for the key")
                #expect(try queue.ledger.verify() == [])
                try queue.ledger.close()
            }
        }
        FaultInjection.reset()
    }

    @Test func unsyncedWritesAreVisibleUntilThePowerGoes() async throws {
        FaultInjection.reset()
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger.sqlite"
            let configuration = FaultInjection.configuration(LedgerConfiguration(durability: .normal))
            try CrashWorkload.prepareLedger(at: path, configuration: configuration)
            FaultInjection.reset()
            FaultInjection.setLossMode(.loseAll)
            let ledger = try Ledger.open(at: path, configuration: configuration)
            let bought = try ledger.addPayment(NewPayment(productID: "workload.consumable")).transaction
            #expect(try ledger.transaction(bought.id) != nil, "the page cache shows it")
            FaultInjection.powerLoss()
            #expect(FaultInjection.isPoweredOff)
            #expect(throws: (any Error).self) { try ledger.addPayment(NewPayment(productID: "workload.consumable")) }
            try? ledger.close()
            FaultInjection.powerOn()
            let reopened = try Ledger.open(at: path, configuration: configuration)
            #expect(try reopened.transaction(bought.id) == nil, "normal durability did not sync it")
            #expect(try reopened.verify() == [])
            try reopened.close()
            #expect(FaultInjection.counters.unsyncedWritesLost > 0)
        }
    }

    /// Group commit: payments added at the same time share commits (fewer syncs than
    /// commits asked for), a refused one fails alone, and a power loss during a shared commit
    /// loses only what nobody was told about.
    @Test func concurrentPaymentsShareCommits() async throws {
        FaultInjection.reset()
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger.sqlite"
            let configuration = FaultInjection.configuration()
            try CrashWorkload.prepareLedger(at: path, configuration: configuration)
            let queue = try PaymentQueue(path: path, configuration: configuration)
            FaultInjection.reset()
            let results = await withTaskGroup(of: Result<PaymentTransaction, any Error>.self) { group in
                for index in 0..<32 {
                    group.addTask {
                        let product = index == 7 ? "workload.unknown" : "workload.consumable"
                        do { return .success(try await queue.add(Payment(productID: product))) } catch {
                            return .failure(error)
                        }
                    }
                }
                var results: [Result<PaymentTransaction, any Error>] = []
                for await result in group { results.append(result) }
                return results
            }
            let bought = results.compactMap { try? $0.get() }
            #expect(bought.count == 31 && bought.allSatisfy { $0.state == .purchased })
            #expect(
                results.contains {
                    if case .failure(let error as UnknownProductError) = $0 {
                        error.productIdentifier == "workload.unknown"
                    } else {
                        false
                    }
                })
            let syncs = FaultInjection.counters.syncs
            #expect(syncs < 62, "31 payments ask for 62 commits; group commit shares them (\(syncs) syncs)")
            #expect(try queue.ledger.allTransactions().count == 31)
            #expect(try queue.ledger.verify() == [])
            try queue.ledger.close()
        }
    }
}
