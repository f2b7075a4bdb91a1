package import GRDB
public import LedgerModel

extension Ledger {
    /// The name of the customer this value acts for; `nil` when the store has several and
    /// none was named.
    package var customerName: String? { customerScope.name }

    /// The SQL condition on a table's `customer_id` and `app_id` that selects the rows this
    /// value sees: its customer's in its app, each part left out when none is chosen (`1` when
    /// neither is), with its arguments.
    package var scopeCondition: (sql: String, arguments: StatementArguments) {
        var clauses: [String] = []
        var arguments: StatementArguments = []
        if let customer = customerScope.id {
            clauses.append("customer_id = ?")
            arguments += [customer]
        }
        if let app = appScope.id {
            clauses.append("app_id = ?")
            arguments += [app]
        }
        return (clauses.isEmpty ? "1" : clauses.joined(separator: " AND "), arguments)
    }

    /// The id of the customer this value acts for, the key of their rows.
    /// - Throws: `CustomerError.customerNotChosen` when the store has several and none was named.
    package func customerID() throws -> Int64 {
        switch customerScope {
        case .chosen(let id, _): return id
        case .notChosen(let choices, let count): throw CustomerError.customerNotChosen(choices: choices, count: count)
        }
    }

    /// Whether `transaction` is this value's customer's (every transaction is, for a value of
    /// a store of several customers that names none: what reads the whole store).
    package func isOwn(_ transaction: PaymentTransaction) -> Bool {
        (customerScope.id.map { transaction.customerID == $0 } ?? true)
            && (appScope.id.map { transaction.appID == $0 } ?? true)
    }

    /// The customer this value acts for and the app it acts in: the key of what they own.
    /// - Throws: `CustomerError.customerNotChosen`, `AppError.appNotChosen`.
    package func owner() throws -> Owner {
        Owner(customer: try customerID(), app: try appID())
    }

    /// This ledger's file acting for the customer who owns `transaction`: a store control or a
    /// server request about a transaction acts for its owner, whoever the caller acts for.
    package func forOwner(of transaction: PaymentTransaction, _ db: Database) throws -> Ledger {
        try forOwner(Owner(of: transaction), db)
    }

    /// This ledger's file acting for `owner`, inside a transaction.
    package func forOwner(_ owner: Owner, _ db: Database) throws -> Ledger {
        let app =
            appScope.id == owner.app
            ? appScope : .chosen(id: owner.app, name: try Self.bundleID(db, app: owner.app) ?? "")
        let customer =
            customerScope.id == owner.customer
            ? customerScope : .chosen(id: owner.customer, name: try Self.customerName(db, id: owner.customer) ?? "")
        if app == appScope && customer == customerScope { return self }
        return withScope(LedgerScope(customer: customer, app: app))
    }

    /// The name of customer `id`, or `nil`.
    package static func customerName(_ db: Database, id: Int64) throws -> String? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT name FROM customers WHERE id = ?"), arguments: [id])
    }

    /// `forOwner(of:_:)` outside a transaction.
    package func forOwner(of transaction: PaymentTransaction) throws -> Ledger {
        if customerScope.id == transaction.customerID && appScope.id == transaction.appID { return self }
        return try read { db in try forOwner(of: transaction, db) }
    }

    /// This ledger's file reading every customer's rows (of this value's app), acting for
    /// none: the App Store's server, whose requests act for the customer a transaction names
    /// (`forOwner(of:)`).
    package var acrossCustomers: Ledger {
        withCustomerScope(.notChosen(choices: [], count: 0))
    }

    /// This ledger's file, on the same connections, acting for the customer named `name`.
    /// - Throws: `CustomerError.unknownCustomer`.
    public func forCustomer(_ name: String) throws -> Ledger {
        withScope(
            try read { db in
                let customer = try Self.customerScope(db, named: name)
                // The customer's only device in the app, if they named one.
                return LedgerScope(
                    customer: customer, app: appScope,
                    device: try Self.deviceScope(db, customer: customer, app: appScope, named: nil))
            })
    }

    /// Adds a customer to the store. A new store has one, `Customer.defaultName`.
    /// - Throws: `CustomerError` (`.invalidName` for the name or the family's,
    ///   `.duplicateName`, `.tooManyCustomers`); nothing is changed.
    @discardableResult
    public func addCustomer(_ customer: Customer) throws -> Customer {
        try Customer.checkName(customer.name)
        if let family = customer.family { try Customer.checkName(family) }
        return try write { db in
            try NamedRows.customers.checkRoom(
                db, for: customer.name, limit: Customer.maximumCount, duplicate: CustomerError.duplicateName,
                full: CustomerError.tooManyCustomers)
            if let family = customer.family,
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM customers WHERE family = ?", arguments: [family]) ?? 0
                    >= Customer.familySize
            {
                throw CustomerError.familyFull(family, limit: Customer.familySize)
            }
            try db.execute(
                sql: "INSERT INTO customers (name, storefront, family, created_at) VALUES (?, ?, ?, ?)",
                arguments: [customer.name, customer.storefront?.countryCode, customer.family, try storeNow(db)])
            return customer
        }
    }

    /// The customer named `name`, or `nil`.
    package func customer(named name: String) throws -> Customer? {
        try read { db in try Self.customerRow(db, named: name).map(Self.customer(_:)) }
    }

    /// The store's customers in the order they were added, after the one named `after` (the
    /// last of the previous page), at most `limit` of them.
    package func customers(after: String? = nil, limit: Int = 1_000) throws -> [Customer] {
        try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, name, storefront, family FROM customers
                    WHERE id > COALESCE((SELECT id FROM customers WHERE name = ?), 0) ORDER BY id LIMIT ?
                    """,
                arguments: [after, max(0, limit)]
            ).map(Self.customer(_:))
        }
    }

    /// How many customers the store has.
    package func customerCount() throws -> Int {
        try read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM customers") ?? 0 }
    }

    /// How many transactions this value's customer owns, and how many of them are unfinished.
    package func customerCounts() throws -> (transactions: Int, unfinished: Int) {
        let owner = try owner()
        return try read { db in
            (
                try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM transactions WHERE \(Owner.condition)", arguments: owner.arguments)
                    ?? 0,
                try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM transactions WHERE \(Owner.condition) AND is_finished = 0",
                    arguments: owner.arguments) ?? 0
            )
        }
    }

    /// The storefront customer `id` buys from, when it is not the store's (`nil`).
    package func customerStorefront(_ db: Database, _ id: Int64) throws -> String? {
        try String.fetchOne(
            db.cachedStatement(sql: "SELECT storefront FROM customers WHERE id = ?"), arguments: [id])
    }

    /// The scope a value opened with `name` (or none) acts in.
    /// - Throws: `CustomerError.unknownCustomer` for a name the store does not have.
    package static func customerScope(_ db: Database, named name: String?) throws -> ScopeChoice {
        try NamedRows.customers.choice(db, named: name, unknown: CustomerError.unknownCustomer)
            ?? .notChosen(choices: [], count: 0)
    }

    private static func customerRow(_ db: Database, named name: String) throws -> Row? {
        try Row.fetchOne(
            db, sql: "SELECT id, name, storefront, family FROM customers WHERE name = ?", arguments: [name])
    }

    private static func customer(_ row: Row) -> Customer {
        Customer(
            name: row["name"], storefront: (row["storefront"] as String?).flatMap(Storefront.init(countryCode:)),
            family: row["family"])
    }
}
