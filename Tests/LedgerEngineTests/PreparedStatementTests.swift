import Foundation
import LedgerTestSupport
import LedgerTesting
import Testing

@testable import LedgerEngine
@testable import SimulatedStore

/// The ledger's numbered statements (`LedgerSQL`) belong to the connection that prepared them
/// and never keep it open: SQLite closes a connection only once all its statements are gone.
@Suite struct PreparedStatementTests {
    func buyAndFinish(_ ledger: Ledger, _ productID: String) throws -> UInt64 {
        let added = try ledger.addPayment(NewPayment(productID: productID))
        let bought = try ledger.applyPlannedOutcome(of: added.transaction.id)
        _ = try ledger.finish([bought.id])
        return bought.id
    }

    func open(_ path: String) throws -> Ledger {
        let ledger = try Ledger.open(
            at: path, mode: .createIfMissing, configuration: LedgerConfiguration(clock: .fixed(testEpoch)))
        try ledger.saveProducts([Product(id: "consumable", type: .consumable, price: 0.99)])
        return ledger
    }

    @Test func aLedgerClosedOrReleasedClosesItsConnection() async throws {
        try await withTemporaryDirectory { directory in
            let closed = directory + "/closed.sqlite"
            let released = directory + "/released.sqlite"
            let ledger = try open(closed)
            _ = try buyAndFinish(ledger, "consumable")
            #expect(FileManager.default.fileExists(atPath: closed + "-wal"))
            try ledger.close()  // throws SQLITE_BUSY if a statement were left
            // The last connection to close checkpoints and removes the WAL: it really closed.
            #expect(!FileManager.default.fileExists(atPath: closed + "-wal"))

            try {
                let ledger = try open(released)
                _ = try buyAndFinish(ledger, "consumable")
                #expect(FileManager.default.fileExists(atPath: released + "-wal"))
            }()
            #expect(!FileManager.default.fileExists(atPath: released + "-wal"))
        }
    }

    @Test func twoLedgersOpenAtOnceKeepTheirOwnStatements() async throws {
        try await withTemporaryDirectory { directory in
            let first = try open(directory + "/first.sqlite")
            let second = try open(directory + "/second.sqlite")
            defer {
                try? first.close()
                try? second.close()
            }
            var ids: ([UInt64], [UInt64]) = ([], [])
            for _ in 0..<3 {
                ids.0.append(try buyAndFinish(first, "consumable"))
                ids.1.append(try buyAndFinish(second, "consumable"))
            }
            #expect(ids.0 == [1, 2, 3] && ids.1 == [1, 2, 3])
            #expect(try first.counts().transactions == 3 && second.counts().transactions == 3)
            #expect(try first.verify().isEmpty && second.verify().isEmpty)
        }
    }
}
