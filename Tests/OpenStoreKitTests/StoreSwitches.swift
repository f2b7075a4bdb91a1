import Foundation
import StoreLedger
import StoreTesting

/// Store switches StoreKitTest has no property for, set on a session's ledger as
/// `ledger store set` would.
enum StoreSwitches {
    static func setPaymentsAllowed(_ allowed: Bool, ledgerPath: String) throws {
        let ledger = try Ledger.open(at: ledgerPath)
        defer { try? ledger.close() }
        try StoreTestSession(ledger: ledger).update { $0.canMakePayments = allowed }
    }
}
