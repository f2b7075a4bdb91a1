import Foundation

/// A customer of the simulated App Store: an Apple Account, called by the name the tests give
/// it. Every transaction belongs to one customer; what a customer buys, restores and is
/// entitled to is theirs alone (docs/STORE.md, "Customers").
public struct Customer: Sendable, Equatable {
    /// The name tests and scripts call the customer by: 1 to 64 letters, digits, `.`, `_` or
    /// `-`. A ledger made before customers has one, named `default`.
    public let name: String
    /// The storefront the customer buys from; `nil`: the store's `storefront` setting.
    public let storefront: Storefront?
    /// The family the customer belongs to (a name, as `name`); `nil`: none.
    public let family: String?

    /// A customer named `name`.
    public init(name: String, storefront: Storefront? = nil, family: String? = nil) {
        self.name = name
        self.storefront = storefront
        self.family = family
    }

    /// The name of the customer a ledger made before customers holds: it owns every
    /// transaction the ledger had.
    public static let defaultName = "default"

    /// The most customers a store holds: a bound on what a store file grows to by this door.
    package static let maximumCount = 1_000_000

    /// The most customers a family holds, as Apple's Family Sharing ("up to five other family
    /// members"): a purchase is shared with at most five others.
    package static let familySize = 6

    /// The most devices a customer has in one app: a bound on what a store file grows to by
    /// this door (Apple lets an account use ten devices for purchases).
    package static let maximumDevices = 100

    /// The longest name, in characters.
    package static let maximumNameLength = 64

    /// Throws `CustomerError.invalidName` unless `name` is a customer's or family's name.
    package static func checkName(_ name: String) throws {
        let allowed = name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                true
            default: false
            }
        }
        guard allowed, (1...maximumNameLength).contains(name.utf8.count) else {
            throw CustomerError.invalidName(name)
        }
    }
}

/// What the store refuses about its customers and their devices (one install of an app for
/// one customer: `Ledger.addDevice(_:)`). Nothing was changed.
public enum CustomerError: DescribedError, Sendable, Equatable {
    /// Not a customer's (or family's, or device's) name: 1 to 64 letters, digits, `.`, `_` or `-`.
    case invalidName(String)
    /// The store has a customer of this name already.
    case duplicateName(String)
    /// The store has no customer of this name; `choices`: some of those it has.
    case unknownCustomer(String, choices: [String], count: Int)
    /// The store has several customers and none was named for something that acts for one.
    case customerNotChosen(choices: [String], count: Int)
    /// The store holds at most `Customer.maximumCount` customers.
    case tooManyCustomers(limit: Int)
    /// The family has as many members as Family Sharing allows.
    case familyFull(String, limit: Int)
    /// The customer belongs to no family (there is none for them to leave).
    case noFamily(String)
    /// The customer has a device of this name in this app already.
    case duplicateDevice(String)
    /// The customer has no device of this name in this app; `choices`: some of those they have.
    case unknownDevice(String, choices: [String], count: Int)
    /// The customer has several devices in this app and none was named for something that
    /// runs on one.
    case deviceNotChosen(choices: [String], count: Int)
    /// A customer has at most `Customer.maximumDevices` devices in one app.
    case tooManyDevices(limit: Int)

    public var description: String {
        switch self {
        case .invalidName(let name):
            "\"\(name.prefix(80))\" is not a name (of a customer, family or device): 1 to \(Customer.maximumNameLength) letters, digits, '.', '_' or '-'"
        case .duplicateName(let name):
            "the store has a customer named \(name) already"
        case .unknownCustomer(let name, let choices, let count):
            "the store has no customer named \(name.prefix(80)); it has \(NameList(choices, count: count))"
        case .customerNotChosen(let choices, let count):
            "the store has \(count) customers: name the one this is for: \(NameList(choices, count: count))"
        case .tooManyCustomers(let limit):
            "the store holds at most \(limit) customers"
        case .familyFull(let family, let limit):
            "the family \(family) has \(limit) members already, as many as Family Sharing allows"
        case .noFamily(let name):
            "the customer \(name) belongs to no family"
        case .duplicateDevice(let name):
            "the customer has a device named \(name) in this app already"
        case .unknownDevice(let name, let choices, let count):
            "the customer has no device named \(name.prefix(80)) in this app; "
                + (count == 0
                    ? "they have none (add one with `ledger devices add NAME`)"
                    : "they have \(NameList(choices, count: count))")
        case .deviceNotChosen(let choices, let count):
            "the customer has \(count) devices in this app: name the one this runs on: \(NameList(choices, count: count))"
        case .tooManyDevices(let limit):
            "a customer has at most \(limit) devices in one app"
        }
    }
}
