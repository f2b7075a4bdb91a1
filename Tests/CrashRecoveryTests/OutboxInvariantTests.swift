import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

/// Invariant 7 (`InvariantChecker`): the outbox goes with the changes it reports. The check
/// passes on a campaign's store and finds each way the outbox could part from its changes.
@Suite struct OutboxInvariantTests {
    static func outboxViolations(_ path: String) async -> [InvariantViolation] {
        await InvariantChecker.check(ledgerAt: path, configuration: LedgerConfiguration(), acknowledged: [])
            .filter { $0.invariant == 7 }
    }

    @Test func aCampaignStoreKeepsOneChargeNotificationPerPurchase() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger.sqlite"
            try CrashWorkload.prepareLedger(at: path, configuration: LedgerConfiguration())
            let ledger = try Ledger.open(at: path)
            let session = StoreTestSession(ledger: ledger)
            _ = try await session.buyProduct(Payment(productID: "workload.consumable"))
            _ = try await session.buyProduct(Payment(productID: "workload.monthly"))
            _ = try await session.advanceClock(by: 40 * 86_400)  // a renewal
            try ledger.close()
            #expect(await Self.outboxViolations(path) == [])
        }
    }

    @Test func aPurchaseWithoutItsNotificationIsFound() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger.sqlite"
            try CrashWorkload.prepareLedger(at: path, configuration: LedgerConfiguration())
            let ledger = try Ledger.open(at: path)
            let session = StoreTestSession(ledger: ledger)
            _ = try session.set(.notificationURL, to: "none")
            let silent = try await session.buyProduct(Payment(productID: "workload.consumable"))
            _ = try session.set(.notificationURL, to: CrashWorkload.notificationURL)
            try ledger.close()
            #expect(
                await Self.outboxViolations(path).map(\.message) == [
                    "purchased \(silent.id) has 0 charge notifications, not 1"
                ])
        }
    }

    /// Every app with a URL is checked, not the first only: a second app's purchase made while
    /// its URL was off is found; one of an app that never had a URL is not asked for.
    @Test func aSecondAppsPurchaseWithoutItsNotificationIsFound() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger.sqlite"
            try CrashWorkload.prepareLedger(at: path, configuration: LedgerConfiguration())
            let ledger = try Ledger.open(at: path)
            var sessions: [StoreTestSession] = []
            for bundle in ["com.example.second", "com.example.quiet"] {
                try ledger.addApp(App(bundleID: bundle))
                let app = try ledger.forApp(bundle)
                try app.saveProducts([Product(id: bundle + ".coin", type: .consumable, price: 1)])
                sessions.append(StoreTestSession(ledger: app))
            }
            let (second, quiet) = (sessions[0], sessions[1])
            _ = try second.set(.notificationURL, to: CrashWorkload.notificationURL)
            _ = try await second.buyProduct(Payment(productID: "com.example.second.coin"))
            _ = try second.set(.notificationURL, to: "none")
            let silent = try await second.buyProduct(Payment(productID: "com.example.second.coin"))
            _ = try second.set(.notificationURL, to: CrashWorkload.notificationURL)
            _ = try await quiet.buyProduct(Payment(productID: "com.example.quiet.coin"))
            try ledger.close()
            #expect(
                await Self.outboxViolations(path).map(\.message) == [
                    "purchased \(silent.id) has 0 charge notifications, not 1"
                ])
        }
    }

    @Test(.enabled(if: SQLiteShell.shouldRun, "\(SQLiteShell.unavailableReason)"))
    func aNotificationOfATransactionNeverCommittedIsFound() async throws {
        let shell = try #require(SQLiteShell.path, "\(SQLiteShell.unavailableReason)")
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger.sqlite"
            try CrashWorkload.prepareLedger(at: path, configuration: LedgerConfiguration())
            let forged = try runProcess(
                shell,
                [
                    path,
                    """
                    INSERT INTO notifications (uuid, type, transaction_id, original_transaction_id, created_at,
                        signed_payload, next_attempt_at)
                    VALUES ('00000000-0000-0000-0000-000000000001', 'ONE_TIME_CHARGE', 999, 999, 0, 'x', 0);
                    """,
                ])
            #expect(forged.status == 0, "\(forged.output)")
            let found = await Self.outboxViolations(path).map(\.message)
            #expect(found == ["notification 00000000-0000-0000-0000-000000000001 reports 999, never committed"])
        }
    }

    /// `ledger verify` checks the outbox's own rules: a status its attempts do not make is found.
    @Test(.enabled(if: SQLiteShell.shouldRun, "\(SQLiteShell.unavailableReason)"))
    func verifyFindsANotificationMarkedDeliveredWithoutAnAttempt() async throws {
        let shell = try #require(SQLiteShell.path, "\(SQLiteShell.unavailableReason)")
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger.sqlite"
            try CrashWorkload.prepareLedger(at: path, configuration: LedgerConfiguration())
            let ledger = try Ledger.open(at: path)
            _ = try await StoreTestSession(ledger: ledger).buyProduct(Payment(productID: "workload.consumable"))
            let uuid = try #require(try ledger.notifications().first?.uuid.uuidString.lowercased())
            #expect(try ledger.verify() == [])
            try ledger.close()
            let edited = try runProcess(
                shell, [path, "UPDATE notifications SET status = 'delivered', next_attempt_at = NULL;"])
            #expect(edited.status == 0, "\(edited.output)")
            let reopened = try Ledger.open(at: path)
            #expect(
                try reopened.verify().map(\.message) == [
                    "notification \(uuid): it is delivered, but its attempts make it pending",
                    "notification \(uuid): its next attempt is not due on Apple's schedule",
                ])
            try reopened.close()
        }
    }
}
