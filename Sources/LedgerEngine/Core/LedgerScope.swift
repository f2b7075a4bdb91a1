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

/// A table of named rows a ledger value chooses one of: the store's customers, its apps, a
/// customer's devices in an app. One rule for all three: the row named, or the only row when none
/// is named; in a table of several, none is chosen (with the first ten names for a message).
package struct NamedRows: Sendable {
    let table: String
    let nameColumn: String
    /// The rows of the table that count (a customer's devices in one app), with `arguments`.
    var condition = "1"
    var arguments: StatementArguments = []

    package static let customers = NamedRows(table: "customers", nameColumn: "name")
    package static let apps = NamedRows(table: "apps", nameColumn: "bundle_id")

    /// The devices of `owner`'s customer in its app.
    package static func devices(of owner: Owner) -> NamedRows {
        NamedRows(table: "devices", nameColumn: "name", condition: Owner.condition, arguments: owner.arguments)
    }

    /// The first ten names, in the order the rows were added, and how many rows there are.
    package func someNames(_ db: Database) throws -> (names: [String], count: Int) {
        (
            try String.fetchAll(
                db, sql: "SELECT \(nameColumn) FROM \(table) WHERE \(condition) ORDER BY id LIMIT 10",
                arguments: arguments),
            try count(db)
        )
    }

    private func count(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table) WHERE \(condition)", arguments: arguments) ?? 0
    }

    /// Refuses a new row named `name` when a row has that name already (`duplicate`), or when
    /// the table holds `limit` rows (`full`).
    package func checkRoom(
        _ db: Database, for name: String, limit: Int, duplicate: (String) -> any Error, full: (Int) -> any Error
    ) throws {
        guard try id(db, named: name) == nil else { throw duplicate(name) }
        guard try count(db) < limit else { throw full(limit) }
    }

    /// The id of the row named `name`, if there is one.
    private func id(_ db: Database, named name: String) throws -> Int64? {
        try Int64.fetchOne(
            db, sql: "SELECT id FROM \(table) WHERE \(condition) AND \(nameColumn) = ?", arguments: arguments + [name])
    }

    /// The row named `name`, or the only row when `name` is `nil`: `.notChosen` with
    /// `someNames` when there are several, `nil` when there are none.
    /// - Throws: what `unknown` makes of a name no row has (with `someNames`).
    package func choice(
        _ db: Database, named name: String?, unknown: (String, [String], Int) -> any Error
    ) throws -> ScopeChoice? {
        if let name {
            guard let id = try id(db, named: name) else {
                let (names, count) = try someNames(db)
                throw unknown(name, names, count)
            }
            return .chosen(id: id, name: name)
        }
        let first = try Row.fetchAll(
            db, sql: "SELECT id, \(nameColumn) AS name FROM \(table) WHERE \(condition) ORDER BY id LIMIT 2",
            arguments: arguments)
        switch first.count {
        case 0: return nil
        case 1: return .chosen(id: first[0]["id"], name: first[0]["name"])
        default:
            let (names, count) = try someNames(db)
            return .notChosen(choices: names, count: count)
        }
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
