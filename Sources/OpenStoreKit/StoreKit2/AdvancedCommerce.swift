// Apple's Advanced Commerce API (iOS 18.4): an approved developer's server prices each purchase
// of a generic SKU and signs the request; the app passes it to
// `AdvancedCommerceProduct.purchase(compactJWS:...)`, and the transaction carries
// `advancedCommerceInfo`. Nothing of it can be simulated honestly here: the store has no
// generic SKUs, and its purchases need a request signed for Apple's Advanced Commerce API,
// which is only open to developers Apple approves. So the names exist, refused at compile time
// with a message that says why, rather than compiling into calls that could only fail
// (docs/STOREKIT.md, "What differs on Linux, and why").

/// A generic SKU of Apple's Advanced Commerce API: not simulated (see the message).
@available(
    *, unavailable,
    message:
        "OpenStoreKit does not simulate the Advanced Commerce API: its store has no generic SKUs, and their purchases need a request signed for Apple's Advanced Commerce API (see docs/STOREKIT.md)"
)
public struct AdvancedCommerceProduct: Sendable {
    /// A generic SKU's product identifier.
    public typealias ID = String

    /// The generic SKU `id` (Apple's loads it from the App Store; unavailable here, so never run).
    public init(id: ID) async throws {
        throw StoreKitError.notAvailableInStorefront
    }
}

extension Transaction {
    /// What an Advanced Commerce API transaction carries: not simulated (see the message).
    @available(
        *, unavailable,
        message:
            "OpenStoreKit does not simulate the Advanced Commerce API: no transaction of its store is one (see docs/STOREKIT.md)"
    )
    public struct AdvancedCommerceInfo: Sendable {}

    /// An Advanced Commerce API transaction's details: not simulated (see the message).
    @available(
        *, unavailable,
        message:
            "OpenStoreKit does not simulate the Advanced Commerce API: no transaction of its store is one (see docs/STOREKIT.md)"
    )
    public var advancedCommerceInfo: AdvancedCommerceInfo? { nil }
}
