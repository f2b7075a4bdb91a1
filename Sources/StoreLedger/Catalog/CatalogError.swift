import Foundation

/// Why a product file was refused. Every case names the file; value errors name the key path
/// (`subscriptionGroups[0].subscriptions[1].recurringSubscriptionPeriod`) and what was expected.
public enum CatalogError: DescribedError, Sendable, Equatable {
    /// No file exists at `path`.
    case missingFile(path: String)
    /// The file at `path` exists but cannot be read: a directory, not a regular file, larger than
    /// 64 MiB (4 MiB for a property list), or a read error (`reason` says which).
    case unreadableFile(path: String, reason: String)
    /// Not JSON or a property list, or cut short.
    case malformedFile(path: String, reason: String)
    /// A required key is absent or null at `keyPath`; `expected` says what it should hold.
    case missingKey(path: String, keyPath: String, expected: String)
    /// The value at `keyPath` has the wrong type or is out of range: `expected` says what was
    /// wanted, `found` what the file holds.
    case invalidValue(path: String, keyPath: String, expected: String, found: String)
    /// A product identifier list was given where product definitions were expected.
    case identifierListNotDefinitions(path: String)
    /// Product definitions were given where an identifier list was expected, or no known shape.
    case notAnIdentifierList(path: String)
    /// An import would read more than `ProductCatalog.maximumImport` products: `count`, up to
    /// and including the file at `path`.
    case tooManyProducts(path: String, count: Int)
    /// Two files of one import define the same product.
    case duplicateProduct(id: String, firstPath: String, secondPath: String)

    public var description: String {
        switch self {
        case .missingFile(let path):
            "\(path): no such file"
        case .unreadableFile(let path, let reason):
            "\(path): cannot read the file: \(reason)"
        case .malformedFile(let path, let reason):
            "\(path): malformed file: \(reason)"
        case .missingKey(let path, let keyPath, let expected):
            "\(path): missing key \(keyPath) (expected \(expected))"
        case .invalidValue(let path, let keyPath, let expected, let found):
            "\(path): \(keyPath): expected \(expected), found \(found)"
        case .identifierListNotDefinitions(let path):
            "\(path) is a list of product identifiers, not product definitions: a StoreKit configuration "
                + "file (.storekit) defines products"
        case .tooManyProducts(let path, let count):
            "\(path): \(count) products in one import, more than the \(ProductCatalog.maximumImport) "
                + "App Store Connect allows one app; import fewer at a time"
        case .duplicateProduct(let id, let first, let second):
            "\(second): product \"\(id)\" is already defined by \(first); import one of the two"
        case .notAnIdentifierList(let path):
            "\(path) is not a product identifier list: expected an array of strings, or a dictionary "
                + "with a Products array (and optional Subscriptions groups)"
        }
    }
}
