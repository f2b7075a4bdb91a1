package import GRDB
import LedgerModel

/// One of the store's customers or apps, as a ledger value acts for it: chosen (by name, or
/// as the store's only one), or not chosen in a store of several.
package enum ScopeChoice: Sendable, Hashable {
    /// The one named when the ledger was opened, or the store's only one.
    case chosen(id: Int64, name: String)
    /// The store has several and none was named: what acts for one is refused (with the first
    /// names and how many there were when the value was made); what reads the whole store works.
    case notChosen(choices: [String], count: Int)

    /// The chosen one's id; `nil` when none is chosen.
    package var id: Int64? {
        if case .chosen(let id, _) = self { return id }
        return nil
    }

    /// The chosen one's name; `nil` when none is chosen.
    package var name: String? {
        if case .chosen(_, let name) = self { return name }
        return nil
    }
}

/// Whose purchases a ledger value reads and makes, and in which app: the store's customers and
/// apps share its file, and each value of `Ledger` acts for one customer in one app
/// (`Ledger.forCustomer(_:)`, `Ledger.forApp(_:)`).
package struct LedgerScope: Sendable, Hashable {
    package var customer: ScopeChoice
    package var app: ScopeChoice
    /// The customer's device in the app: one of their named devices, or `nil` for the one
    /// device of a customer who named none there (every ledger made before devices).
    package var device: ScopeChoice?

    /// The scope a value opened with `configuration` acts in: the customer, app and device it
    /// names, or the store's (the customer's) only ones.
    /// - Throws: `CustomerError.unknownCustomer`, `AppError.unknownApp`,
    ///   `CustomerError.unknownDevice`; for a device named without its customer and app chosen,
    ///   `CustomerError.customerNotChosen` or `AppError.appNotChosen`.
    package init(_ db: Database, _ configuration: LedgerConfiguration) throws {
        customer = try Ledger.customerScope(db, named: configuration.customer)
        app = try Ledger.appScope(db, bundleID: configuration.app)
        device = try Ledger.deviceScope(db, customer: customer, app: app, named: configuration.device)
    }

    package init(customer: ScopeChoice, app: ScopeChoice, device: ScopeChoice? = nil) {
        self.customer = customer
        self.app = app
        self.device = device
    }
}

/// The key of a customer's purchases in one app: the columns `customer_id` and `app_id` of
/// what they own.
package struct Owner: Sendable, Hashable {
    package let customer: Int64
    package let app: Int64

    package init(customer: Int64, app: Int64) {
        self.customer = customer
        self.app = app
    }

    /// The owner of `transaction`.
    package init(of transaction: PaymentTransaction) {
        self.init(customer: transaction.customerID, app: transaction.appID)
    }

    /// The SQL condition on a table's `customer_id` and `app_id` that selects this owner's rows,
    /// with `arguments`.
    package static let condition = "customer_id = ? AND app_id = ?"

    /// The arguments of `condition`.
    package var arguments: StatementArguments { [customer, app] }
}
