import Foundation

/// An app of the simulated App Store: a bundle identifier with its own settings (the
/// environment its signed values name, its Apple ID, the version installed, where its Server
/// Notifications go) and its own products. Every transaction is made in one app; a customer's
/// purchases in one app are not theirs in another (docs/STORE.md, "Apps").
public struct App: Sendable, Equatable {
    /// The bundle identifier: 1 to 155 letters, digits, hyphens and periods
    /// (`com.example.app`). A ledger made before apps has one, its `bundleID` setting.
    public let bundleID: String
    /// The environment the app's signed values name.
    public let environment: SigningEnvironment
    /// The app's Apple ID (`appAppleId`), which Apple's verifiers require in production.
    public let appAppleID: Int64?

    /// An app of bundle identifier `bundleID`.
    public init(bundleID: String, environment: SigningEnvironment = .xcode, appAppleID: Int64? = nil) {
        self.bundleID = bundleID
        self.environment = environment
        self.appAppleID = appAppleID
    }

    /// The most apps a store holds: a bound on what a store file grows to by this door.
    package static let maximumCount = 1_000

    /// Throws `AppError.invalidBundleID` unless `bundleID` is a bundle identifier: 1 to 155
    /// letters, digits, hyphens and periods, as App Store Connect takes them.
    package static func checkBundleID(_ bundleID: String) throws(AppError) {
        let allowed = bundleID.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"):
                true
            default: false
            }
        }
        guard allowed, (1...155).contains(bundleID.utf8.count) else { throw .invalidBundleID(bundleID) }
    }
}

/// What the store refuses about its apps. Nothing was changed.
public enum AppError: DescribedError, Sendable, Equatable {
    /// Not a bundle identifier: 1 to 155 letters, digits, hyphens and periods.
    case invalidBundleID(String)
    /// The store has an app of this bundle identifier already.
    case duplicateBundleID(String)
    /// The store has no app of this bundle identifier; `choices`: some of those it has.
    case unknownApp(String, choices: [String], count: Int)
    /// The store has several apps and none was named for something that acts in one.
    case appNotChosen(choices: [String], count: Int)
    /// The store holds at most `App.maximumCount` apps.
    case tooManyApps(limit: Int)
    /// The product is another app's: a product identifier names one product in the store.
    case productOfAnotherApp(productID: String, bundleID: String)

    public var description: String {
        switch self {
        case .invalidBundleID(let bundleID):
            "\"\(bundleID.prefix(80))\" is not a bundle identifier: 1 to 155 letters, digits, hyphens and periods"
        case .duplicateBundleID(let bundleID):
            "the store has an app \(bundleID) already"
        case .unknownApp(let bundleID, let choices, let count):
            "the store has no app \(bundleID.prefix(160)); it has \(NameList(choices, count: count))"
        case .appNotChosen(let choices, let count):
            "the store has \(count) apps: name the one this is for: \(NameList(choices, count: count))"
        case .tooManyApps(let limit):
            "the store holds at most \(limit) apps"
        case .productOfAnotherApp(let productID, let bundleID):
            "the product \(productID.prefix(160)) is the app \(bundleID)'s: a product identifier names one product in the store"
        }
    }
}

/// Some names of a longer list, for a message: "a, b and 3 more".
package struct NameList: CustomStringConvertible {
    let names: [String]
    let count: Int

    package init(_ names: [String], count: Int) {
        self.names = names
        self.count = count
    }

    package var description: String {
        let shown = names.joined(separator: ", ")
        return count > names.count ? "\(shown) and \(count - names.count) more" : shown
    }
}
