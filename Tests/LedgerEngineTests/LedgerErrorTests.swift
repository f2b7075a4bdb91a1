import Foundation
import GRDB
import LedgerTestSupport
import LedgerTesting
import Testing

@testable import LedgerEngine
@testable import SimulatedStore

/// `LedgerError` keeps its cause: a code to match, SQLite's result code and statement, and the
/// error it comes from.
@Suite struct LedgerErrorTests {
    @Test func aLockHeldTooLongIsMatchedByItsCodeAndKeepsSQLitesError() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger.sqlite"
            let ledger = try Ledger.open(
                at: path, mode: .createIfMissing, configuration: LedgerConfiguration(busyTimeout: 0.05))
            defer { try? ledger.close() }
            let holder = try DatabaseQueue(path: path)
            // The holder keeps the write lock while the ledger tries to write.
            try holder.inTransaction(.immediate) { _ in
                var matched = false
                do {
                    try ledger.write { db in try db.execute(sql: "SELECT 1") }
                } catch LedgerError.busy {
                    matched = true
                } catch {
                    Issue.record("expected LedgerError.busy, got \(error)")
                }
                #expect(matched)
                #expect {
                    try ledger.write { db in try db.execute(sql: "SELECT 1") }
                } throws: { error in
                    guard let error = error as? LedgerError, let cause = error.underlyingError as? DatabaseError else {
                        return false
                    }
                    return error.code == .busy && error.path == path && cause.resultCode == .SQLITE_BUSY
                        && error.sqliteResultCode == 5  // SQLITE_BUSY
                }
                return .rollback
            }
            try holder.close()
            try ledger.write { db in try db.execute(sql: "SELECT 1") }
        }
    }

    /// Every use of a closed ledger throws `.unusable` ("it was closed"), where GRDB would crash
    /// on the closed connection; closing again does nothing. Racing: a call that passed the
    /// closed check just before `close()` closed the connection (made certain here by closing
    /// the connection under the ledger) meets the check made on the connection's own queue.
    @Test(arguments: [false, true])
    func aClosedLedgerRefusesEveryUse(racingClose: Bool) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger.sqlite"
            let ledger = try Ledger.open(at: path, mode: .createIfMissing)
            try ledger.saveProducts([Product(id: "consumable", type: .consumable, price: 1)])
            if racingClose {
                try ledger.closeConnection()  // what `close()` does after setting its flag
            } else {
                try ledger.close()
                try ledger.close()
            }
            func isClosedError(_ error: any Error) -> Bool {
                guard let error = error as? LedgerError else { return false }
                return error.code == .unusable && error.path == path && error.description.contains("it was closed")
            }
            #expect(performing: { try ledger.allTransactions() }, throws: isClosedError)
            #expect(performing: { try ledger.addPayment(NewPayment(productID: "consumable")) }, throws: isClosedError)
            #expect(performing: { try ledger.verify() }, throws: isClosedError)
            #expect(performing: { try ledger.chainStatus() }, throws: isClosedError)
            #expect(performing: { try ledger.backup(to: directory + "/copy.sqlite") }, throws: isClosedError)
            await #expect(performing: { try await ledger.grouped { _ in } }, throws: isClosedError)
            #expect(!FileManager.default.fileExists(atPath: directory + "/copy.sqlite"))
            try ledger.close()
        }
    }

    @Test func aFailedStatementIsQuotedWithoutTheValuesBoundToIt() async throws {
        try await withLedger { (ledger, _) throws in
            _ = try ledger.addPayment(NewPayment(productID: "consumable"))
            let sql = "UPDATE transactions SET state = ? WHERE id = 1"
            #expect {
                try ledger.write { db in try db.execute(sql: sql, arguments: ["secret-state-value"]) }
            } throws: { error in
                guard let error = error as? LedgerError else { return false }
                return error.code == .storage && error.sql == sql
                    && (error.underlyingError as? DatabaseError)?.resultCode == .SQLITE_CONSTRAINT
                    && error.sqliteResultCode.map { $0 & 0xFF } == 19  // SQLITE_CONSTRAINT
                    && error.description.contains(sql) && !error.description.contains("secret-state-value")
                    && error.localizedDescription == error.description
            }
        }
    }

    @Test func theSystemsRefusalIsKeptAsAPOSIXError() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/no-such-folder/ledger.sqlite"
            #expect {
                try Ledger.open(at: path, mode: .createIfMissing)
            } throws: { error in
                guard let error = error as? LedgerError else { return false }
                return error.code == .unusable && error.path == path
                    && (error.underlyingError as? POSIXError)?.code == .ENOENT
                    && error.description == "cannot use the ledger \(path): cannot create it: No such file or directory"
            }
        }
    }

    @Test func aCodeMatchesOnlyLedgerErrorsOfThatCode() {
        let busy: any Error = LedgerError.busy(path: "/tmp/x")
        #expect(LedgerError.busy ~= busy)
        #expect(!(LedgerError.corrupted ~= busy))
        #expect(!(LedgerError.busy ~= PaymentQueueError.unknownTransaction(1)))
        // `==` compares what an error says, not the error it wraps.
        #expect(
            LedgerError.busy(path: "/tmp/x", underlyingError: POSIXError(.EAGAIN)) == LedgerError.busy(path: "/tmp/x"))
        #expect(LedgerError.busy(path: "/tmp/x") != LedgerError.busy(path: "/tmp/y"))
    }
}
