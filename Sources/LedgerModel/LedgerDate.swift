public import Foundation

extension Date {
    /// Milliseconds since 1970, the ledger's storage form. The one rounding rule of the ledger:
    /// to the nearest millisecond (halves away from zero), so that a date read back from the
    /// ledger converts to the very milliseconds it was stored as. Truncating instead turned a
    /// stored 1699999999999 into 1699999999998 and let a renewal start before its predecessor ended.
    @inlinable package var ledgerMilliseconds: Int64 {
        Int64((timeIntervalSince1970 * 1000).rounded(.toNearestOrAwayFromZero))
    }

    @inlinable package init(ledgerMilliseconds ms: Int64) {
        self.init(timeIntervalSince1970: Double(ms) / 1000)
    }
}
