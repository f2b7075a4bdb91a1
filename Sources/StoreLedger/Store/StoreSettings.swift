/// The simulated store's environment, stored in the ledger so that the `ledger` tool and the
/// app see the same store.
public struct StoreSettings: Sendable, Hashable {
    public var storefront: Storefront
    /// The shopper's locale: picks product localizations and the language of prices.
    public var locale: String

    public init(storefront: Storefront = .unitedStates, locale: String? = nil) {
        self.storefront = storefront
        self.locale = locale ?? storefront.defaultLocale
    }

    enum Key {
        static let storefront = "storefront"
        static let locale = "locale"
    }

    /// The settings stored in `ledger`, with defaults (USA, en_US) for what is not set.
    public init(ledger: Ledger) throws {
        let stored = try ledger.storeSettings()
        let storefront = stored[Key.storefront].flatMap(Storefront.init(countryCode:)) ?? .unitedStates
        self.init(storefront: storefront, locale: stored[Key.locale])
    }
}
