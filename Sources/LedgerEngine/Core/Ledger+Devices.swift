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
            let names = try Self.deviceNames(db, owner)
            guard !names.contains(name) else { throw CustomerError.duplicateDevice(name) }
            guard names.count < Customer.maximumDevices else {
                throw CustomerError.tooManyDevices(limit: Customer.maximumDevices)
            }
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
        let owner = Owner(customer: customerID, app: appID)
        let devices = try Row.fetchAll(
            db, sql: "SELECT id, name FROM devices WHERE \(Owner.condition) ORDER BY id LIMIT 11",
            arguments: owner.arguments)
        let count = devices.count <= 10 ? devices.count : try deviceNames(db, owner).count
        let choices = devices.prefix(10).map { $0["name"] as String }
        if let name {
            let found = try devices.first(where: { $0["name"] == name }) ?? named(db, owner, name)
            guard let row = found else {
                throw CustomerError.unknownDevice(name, choices: choices, count: count)
            }
            return .chosen(id: row["id"], name: name)
        }
        switch devices.count {
        case 0: return nil
        case 1: return .chosen(id: devices[0]["id"], name: devices[0]["name"])
        default: return .notChosen(choices: choices, count: count)
        }
    }

    private static func named(_ db: Database, _ owner: Owner, _ name: String) throws -> Row? {
        try Row.fetchOne(
            db, sql: "SELECT id, name FROM devices WHERE \(Owner.condition) AND name = ?",
            arguments: owner.arguments + [name])
    }
}
