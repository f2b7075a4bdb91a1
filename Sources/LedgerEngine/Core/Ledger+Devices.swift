package import GRDB
import LedgerModel

/// A customer's devices in an app: each install runs its own payment queue and has its own
/// device verification identifier; the customer's purchases are theirs on every device.
extension Ledger {
    /// The id of the device this value runs on, the key of its row; `nil` for the one device
    /// of a customer who named none in the app.
    /// - Throws: `CustomerError.deviceNotChosen` when the customer has several and none was named.
    package func deviceID() throws -> Int64? {
        switch deviceScope {
        case nil: return nil
        case .chosen(let id, _): return id
        case .notChosen(let choices, let count): throw CustomerError.deviceNotChosen(choices: choices, count: count)
        }
    }

    /// The name of the device this value runs on; `nil` for a customer's unnamed device, or
    /// when the customer has several and none was named.
    package var deviceName: String? { deviceScope?.name }

    /// Adds a device of this value's customer in its app, named `name` (an iPhone, an iPad):
    /// its queue is another device of theirs, with its own device verification identifier.
    /// - Throws: `CustomerError` (`.invalidName`, `.duplicateDevice`, `.tooManyDevices`,
    ///   `.customerNotChosen`), `AppError.appNotChosen`; nothing is changed.
    public func addDevice(_ name: String) throws {
        try Customer.checkName(name)
        let owner = try owner()
        try write { db in
            try NamedRows.devices(of: owner).checkRoom(
                db, for: name, limit: Customer.maximumDevices, duplicate: CustomerError.duplicateDevice,
                full: CustomerError.tooManyDevices)
            try db.execute(
                sql: "INSERT INTO devices (customer_id, app_id, name, created_at) VALUES (?, ?, ?, ?)",
                arguments: [owner.customer, owner.app, name, try storeNow(db)])
        }
    }

    /// This ledger's file, on the same connections, running on this value's customer's device
    /// `name` in its app.
    /// - Throws: `CustomerError.unknownDevice`; `CustomerError.customerNotChosen`,
    ///   `AppError.appNotChosen`.
    public func forDevice(_ name: String) throws -> Ledger {
        let device = try read { db in
            try Self.deviceScope(db, customer: customerScope, app: appScope, named: name)
        }
        return withScope(LedgerScope(customer: customerScope, app: appScope, device: device))
    }

    /// The names of this value's customer's devices in its app, in the order they were added.
    package func deviceNames() throws -> [String] {
        let owner = try owner()
        return try read { db in try Self.deviceNames(db, owner) }
    }

    private static func deviceNames(_ db: Database, _ owner: Owner) throws -> [String] {
        try String.fetchAll(
            db, sql: "SELECT name FROM devices WHERE \(Owner.condition) ORDER BY id", arguments: owner.arguments)
    }

    /// The device a value of `customer` in `app` opened with `name` (or none) runs on: `nil`
    /// when neither is chosen, or the customer named no device there.
    /// - Throws: `CustomerError.unknownDevice`; for a name given without a customer and app
    ///   chosen, `CustomerError.customerNotChosen` or `AppError.appNotChosen`.
    package static func deviceScope(
        _ db: Database, customer: ScopeChoice, app: ScopeChoice, named name: String?
    ) throws -> ScopeChoice? {
        guard let customerID = customer.id, let appID = app.id else {
            guard name != nil else { return nil }
            if case .notChosen(let choices, let count) = customer {
                throw CustomerError.customerNotChosen(choices: choices, count: count)
            }
            if case .notChosen(let choices, let count) = app {
                throw AppError.appNotChosen(choices: choices, count: count)
            }
            return nil
        }
        return try NamedRows.devices(of: Owner(customer: customerID, app: appID)).choice(
            db, named: name, unknown: CustomerError.unknownDevice)
    }
}
