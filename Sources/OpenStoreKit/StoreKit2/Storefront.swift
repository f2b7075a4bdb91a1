public import Foundation
import StoreLedger

/// The App Store storefront of the store (StoreKit 2's `Storefront`).
public struct Storefront: Identifiable, Sendable, Hashable {
    /// ISO 3166-1 alpha-3 (`USA`, `FRA`).
    public let countryCode: String
    /// Apple's numeric identifier of the storefront (`143441` for the United States); the
    /// country code for the storefronts whose number is not known (`Storefront.identifier` of
    /// StoreLedger says which).
    public let id: String
    /// The currency the App Store charges on this storefront.
    public let currency: Locale.Currency?

    init(_ storefront: StoreLedger.Storefront) {
        countryCode = storefront.countryCode
        id = storefront.identifier ?? storefront.countryCode
        currency = Locale.Currency(storefront.currencyCode)
    }

    /// The store's storefront; `nil` when the store's ledger cannot be read.
    public static var current: Storefront? {
        get async {
            guard let context = try? StoreContext.current(), let settings = try? StoreSettings(ledger: context.ledger)
            else { return nil }
            return Storefront(settings.storefront)
        }
    }

    /// The storefront each time a test session of this process changes it.
    public static var updates: Storefronts { Storefronts() }

    /// An asynchronous sequence of storefronts (`Storefront.Storefronts`).
    public struct Storefronts: AsyncSequence, Sendable {
        public typealias Element = Storefront
        public typealias Failure = Never

        public func makeAsyncIterator() -> AsyncStream<Storefront>.Iterator {
            guard let context = try? StoreContext.current() else {
                return AsyncStream<Storefront> { $0.finish() }.makeAsyncIterator()
            }
            return context.storefrontChanges.listen().makeAsyncIterator()
        }
    }
}
