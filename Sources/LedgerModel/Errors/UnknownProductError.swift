import Foundation

/// A product identifier the ledger's catalog does not have: a payment, a test control, a
/// subscription or a promotion named it. Nothing was changed.
public struct UnknownProductError: DescribedError, Sendable, Hashable {
    /// The identifier that matched no product.
    public let productIdentifier: String

    /// An error for `productIdentifier`, which matched no product.
    public init(productIdentifier: String) {
        self.productIdentifier = productIdentifier
    }

    public var description: String {
        "unknown product \"\(productIdentifier)\": it is not in the ledger's catalog"
    }
}
