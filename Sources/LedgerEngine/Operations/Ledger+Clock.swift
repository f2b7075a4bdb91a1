public import Foundation
package import GRDB
import LedgerModel

extension Ledger {
    /// The store's time: the injected clock plus the offset `advanceClock` and `setClock` keep
    /// in the ledger, so that every process using the file sees the same store time.
    public func storeDate() throws -> Date {
        try read { db in Date(ledgerMilliseconds: try storeNow(db)) }
    }

    /// The latest date the store clock can show: the end of year 9999.
    public static let latestStoreDate = Date(timeIntervalSince1970: 253_402_300_799)

    /// `latestStoreDate` in the ledger's milliseconds. No subscription period, however started
    /// or extended, ends after it: the last one is cut there (the clock never passes it).
    package static let latestStoreMilliseconds = latestStoreDate.ledgerMilliseconds

    /// `date`, or the end of the store's time when it is later.
    package static func withinStoreTime(_ date: Int64) -> Int64 {
        min(date, latestStoreMilliseconds)
    }

    /// The store's time inside a transaction, in milliseconds.
    package func storeNow(_ db: Database) throws -> Int64 {
        try Self.storeNow(db, clock: configuration.clock)
    }

    /// The store's time by `clock` and the stored clock offset, in milliseconds.
    package static func storeNow(_ db: Database, clock: LedgerClock) throws -> Int64 {
        storeNow(clock: clock, offset: try clockOffset(db))
    }

    /// The store's time from the stored value of the clock offset (read with other settings).
    package func storeNow(clockOffset stored: String?) -> Int64 {
        Self.storeNow(clock: configuration.clock, offset: stored.flatMap { Int64($0) } ?? 0)
    }

    /// The one rule of the store's time: the clock plus the offset, stopped at
    /// `latestStoreDate` (time passing after the clock was set to the end of 9999 moves it no
    /// further).
    private static func storeNow(clock: LedgerClock, offset: Int64) -> Int64 {
        let (sum, overflow) = clock.now().ledgerMilliseconds.addingReportingOverflow(offset)
        return overflow ? latestStoreMilliseconds : min(sum, latestStoreMilliseconds)
    }

    package static func clockOffset(_ db: Database) throws -> Int64 {
        try FastStatement(db, clockOffsetQuery).first { Int64($0.string(0)) }.flatMap { $0 } ?? 0
    }

    private static let clockOffsetQuery = LedgerSQL(
        "SELECT value FROM store_settings WHERE key = '\(StoreSettingKey.clockOffset)'")

    /// Saves a new clock offset (milliseconds added to the clock), nothing else: the store's
    /// controls that move its clock check what the move makes due.
    package static func saveClockOffset(_ db: Database, _ offset: Int64) throws {
        try saveStoreWideSettings(db, [StoreSettingKey.clockOffset: String(offset)])
    }

    /// The store's time rate inside a transaction (its settings read as `StoreSettings`, the
    /// one place they are parsed): every app's.
    package func timeRate(_ db: Database) throws -> TimeRate {
        StoreSettings(stored: try Self.storeWideSettings(db)).timeRate
    }
}
