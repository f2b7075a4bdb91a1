import Foundation

/// What the store refuses about a customer's devices (one install of an app for one customer,
/// named by the tests: `Ledger.addDevice(_:)`). Nothing was changed.
public enum DeviceError: DescribedError, Sendable, Equatable {
    /// Not a device's name: 1 to 64 letters, digits, `.`, `_` or `-`.
    case invalidName(String)
    /// The customer has a device of this name in this app already.
    case duplicateName(String)
    /// The customer has no device of this name in this app; `choices`: some of those they have.
    case unknownDevice(String, choices: [String], count: Int)
    /// The customer has several devices in this app and none was named for something that
    /// runs on one.
    case deviceNotChosen(choices: [String], count: Int)
    /// A customer has at most `maximumDevices` devices in one app.
    case tooManyDevices(limit: Int)

    /// The most devices a customer has in one app: a bound on what a store file grows to by
    /// this door (Apple lets an account use ten devices for purchases).
    package static let maximumDevices = 100

    public var description: String {
        switch self {
        case .invalidName(let name):
            "\"\(name.prefix(80))\" is not a device's name: 1 to 64 letters, digits, '.', '_' or '-'"
        case .duplicateName(let name):
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
