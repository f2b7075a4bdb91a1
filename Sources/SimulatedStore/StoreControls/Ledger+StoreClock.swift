package import Foundation
import GRDB
import LedgerModel

/// The store's clock moves, refused when they would make more renewals due than a move may make.
extension Ledger {
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

    /// Saves the new offset, refusing (and so rolling back) a move that would make more than
    /// `configuration.renewalLimit` renewals due.
    private func setClockOffset(_ db: Database, _ offset: Int64) throws -> Date {
        try Self.saveClockOffset(db, offset)
        let now = try storeNow(db)
        try checkRenewalsDue(db, at: now)
        return Date(ledgerMilliseconds: now)
    }
}
