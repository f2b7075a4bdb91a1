import Foundation
public import StoreLedger

/// A small catalog with one product of each kind, for tests that need to buy things.
public enum SampleCatalog {
    /// A consumable (2.99), used up by each purchase.
    public static let consumable = "com.example.rocket_car"
    /// A non-consumable (0.99), with English and French localizations.
    public static let nonConsumable = "com.example.level1"
    /// A second non-consumable (1.99), without localizations, family-shareable.
    public static let nonConsumable2 = "com.example.level2"
    /// Group "pro": pro.monthly and pro.yearly at level 1 (the highest), basic.monthly at level 2.
    /// pro.monthly has two offer codes: `FREEMONTH` (a free month, for new and lapsed
    /// subscribers) and `LOYALTY` (three months at 2.99, for current subscribers).
    public static let subscription = "com.example.pro.monthly"
    /// Group "pro", level 1: the yearly subscription (49.99), at the level of `subscription`;
    /// family-shareable.
    public static let yearlySubscription = "com.example.pro.yearly"
    /// Group "pro", level 2 (below the pro ones): the monthly basic subscription (1.99).
    public static let basicSubscription = "com.example.basic.monthly"
    /// A non-renewing subscription (9.99), a season pass.
    public static let nonRenewing = "com.example.season_pass"

    /// The catalog as the JSON of a StoreKit configuration (`.storekit`) file: storefront USA,
    /// locale en_US (`ProductCatalog.sampleConfiguration`, what `ledger products sample` prints).
    public static let json = ProductCatalog.sampleConfiguration

    /// Writes the catalog as a `.storekit` file in `directory` and returns its path.
    public static func write(in directory: String, name: String = "Sample.storekit") throws -> String {
        let path = directory + "/" + name
        try Data(json.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A new ledger at `directory/ledger.sqlite` holding the sample catalog.
    public static func ledger(
        in directory: String, configuration: LedgerConfiguration = .init()
    ) throws -> Ledger {
        let ledger = try Ledger.open(
            at: directory + "/ledger.sqlite", mode: .createIfMissing, configuration: configuration)
        try ProductCatalog(ledger: ledger).importConfigurations(at: [try write(in: directory)])
        return ledger
    }
}
