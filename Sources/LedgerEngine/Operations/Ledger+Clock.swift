public import Foundation
import GRDB
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
    static let latestStoreMilliseconds = latestStoreDate.ledgerMilliseconds

    /// `date`, or the end of the store's time when it is later.
    static func withinStoreTime(_ date: Int64) -> Int64 {
        min(date, latestStoreMilliseconds)
    }

    /// Moves the store clock forward by `interval` seconds (rounded to the millisecond), and
    /// nothing else: the renewals that fall due are made by the next launch or store action
    /// (`StoreAction.renewDueSubscriptions`), as when time passes while the app is closed.
    /// The store's control is `StoreAction.advanceClock`, which renews in the same commit.
    /// - Throws: `StoreControlError.clockOutOfRange` for a negative interval or one past
    ///   `latestStoreDate`; `.tooManyRenewals` when more than `configuration.renewalLimit` renewals would
    ///   fall due. A refused move changes nothing.
    @discardableResult
    package func advanceClock(by interval: TimeInterval) throws -> Date {
        try write { db in try advanceClock(db, by: interval) }
    }

    @discardableResult
    func advanceClock(_ db: Database, by interval: TimeInterval) throws -> Date {
        let now = Date(ledgerMilliseconds: try storeNow(db))
        guard interval >= 0, interval.isFinite, interval <= Self.latestStoreDate.timeIntervalSince(now) else {
            throw StoreControlError.clockOutOfRange(interval: interval)
        }
        return try setClockOffset(
            db, try Self.clockOffset(db) + Int64((interval * 1000).rounded(.toNearestOrAwayFromZero)))
    }

    /// Sets the store clock to `date` (rounded to the millisecond), which must not be earlier
    /// than the store's time now.
    /// - Throws: `StoreControlError.clockCannotGoBack`, `.clockOutOfRange` past
    ///   `latestStoreDate`, `.tooManyRenewals`. A refused move changes nothing.
    @discardableResult
    package func setClock(to date: Date) throws -> Date {
        try write { db in try setClock(db, to: date) }
    }

    @discardableResult
    func setClock(_ db: Database, to date: Date) throws -> Date {
        let now = try storeNow(db)
        let target = date.ledgerMilliseconds
        guard target >= now else {
            throw StoreControlError.clockCannotGoBack(current: Date(ledgerMilliseconds: now), requested: date)
        }
        guard date <= Self.latestStoreDate else {
            throw StoreControlError.clockOutOfRange(interval: date.timeIntervalSince(Date(ledgerMilliseconds: now)))
        }
        return try setClockOffset(db, try Self.clockOffset(db) + (target - now))
    }

    /// The store's time inside a transaction, in milliseconds.
    func storeNow(_ db: Database) throws -> Int64 {
        try Self.storeNow(db, clock: configuration.clock)
    }

    /// The store's time by `clock` and the stored clock offset, in milliseconds.
    static func storeNow(_ db: Database, clock: LedgerClock) throws -> Int64 {
        storeNow(clock: clock, offset: try clockOffset(db))
    }

    /// The store's time from the stored value of the clock offset (read with other settings).
    func storeNow(clockOffset stored: String?) -> Int64 {
        Self.storeNow(clock: configuration.clock, offset: stored.flatMap { Int64($0) } ?? 0)
    }

    /// The one rule of the store's time: the clock plus the offset, stopped at
    /// `latestStoreDate` (time passing after the clock was set to the end of 9999 moves it no
    /// further).
    private static func storeNow(clock: LedgerClock, offset: Int64) -> Int64 {
        let (sum, overflow) = clock.now().ledgerMilliseconds.addingReportingOverflow(offset)
        return overflow ? latestStoreMilliseconds : min(sum, latestStoreMilliseconds)
    }

    private static func clockOffset(_ db: Database) throws -> Int64 {
        try FastStatement(db, clockOffsetQuery).first { Int64($0.string(0)) }.flatMap { $0 } ?? 0
    }

    private static let clockOffsetQuery = LedgerSQL(
        "SELECT value FROM store_settings WHERE key = '\(StoreSettingKey.clockOffset)'")

    /// Saves the new offset, refusing (and so rolling back) a move that would make more than
    /// `configuration.renewalLimit` renewals due.
    private func setClockOffset(_ db: Database, _ offset: Int64) throws -> Date {
        try Self.saveSettings(db, [StoreSettingKey.clockOffset: String(offset)])
        let now = try storeNow(db)
        try checkRenewalsDue(db, at: now)
        return Date(ledgerMilliseconds: now)
    }

    /// The store's time rate inside a transaction (its settings read as `StoreSettings`, the
    /// one place they are parsed).
    func timeRate(_ db: Database) throws -> TimeRate {
        try StoreSettings(db).timeRate
    }
}
