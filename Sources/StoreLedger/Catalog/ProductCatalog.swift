import Foundation

/// The answer to a products request: every requested identifier is in exactly one list.
public struct ProductsResponse: Sendable, Hashable {
    /// The products the store knows, in the order requested.
    public var products: [Product]
    /// The requested identifiers the store does not know, in the order requested.
    public var invalidProductIdentifiers: [String]
}

/// What `ProductCatalog.importConfigurations(at:)` stored.
public struct CatalogImport: Sendable, Hashable {
    /// The identifiers of every product the import stored (added or replaced), file by file in
    /// the order the files were given.
    public var productIDs: [String]
    /// The settings of the last file that had any, as they were in the file.
    package var settings: StoreKitSettings
    /// What the import stored but a shopper would see differently from the file: a file made
    /// for another storefront than the ledger's (its prices are shown in the ledger's
    /// currency), a price the currency cannot show exactly (`0.49` in yen).
    public var warnings: [String] = []
}

/// StoreKit configuration files read and checked for one import (`readConfigurations(at:)`):
/// each parsed, no product defined twice.
package struct CheckedConfigurations: Sendable {
    /// The files' paths, as given and in the order given: `configurations[i]` was read from
    /// `paths[i]`.
    package let paths: [String]
    /// The parsed content of each file, in the order of `paths`.
    package let configurations: [StoreKitConfiguration]
}

/// The products the simulated store sells, kept in the ledger.
///
/// There is no "every product of the app" request, as in StoreKit: an app asks for the
/// identifiers it knows (`products(for:)`). `allProducts()` is for tools and tests.
public struct ProductCatalog: Sendable {
    /// The ledger the products are read from and stored in.
    public let ledger: Ledger

    /// The most products one import reads, from all of its files: App Store Connect's limit for
    /// one app. It bounds the work and memory of one import; several imports may hold more.
    public static let maximumImport = 10_000

    /// A catalog of the products stored in `ledger`; nothing is read until asked for.
    public init(ledger: Ledger) {
        self.ledger = ledger
    }

    /// Imports StoreKit configuration files: every file is read and checked first, then all of
    /// their products are stored in one commit. A bad file, or a product defined in two of the
    /// files, changes nothing. The storefront and locale of the files' settings seed the store
    /// when it has none yet; they do not replace a storefront already set (so that importing
    /// another file never changes the currency of the products already there). A file's
    /// `subscriptionOffersKeyPair` replaces the store's key (the last file's when several have one).
    @discardableResult
    public func importConfigurations(at paths: [String]) throws -> CatalogImport {
        try importConfigurations(try Self.readConfigurations(at: paths))
    }

    /// Imports files already read and checked by `readConfigurations(at:)`.
    @discardableResult
    package func importConfigurations(_ files: CheckedConfigurations) throws -> CatalogImport {
        let (paths, configurations) = (files.paths, files.configurations)
        var products: [Product] = []
        var sources: [String: String] = [:]
        var settings = StoreKitSettings()
        var seed: [String: String] = [:]
        var offersKey: SubscriptionOffersKey?
        for (path, configuration) in zip(paths, configurations) {
            offersKey = configuration.subscriptionOffersKey ?? offersKey
            for product in configuration.products {
                sources[product.id] = path
                products.append(product)
            }
            if configuration.settings != StoreKitSettings() { settings = configuration.settings }
            if seed.isEmpty, let storefront = configuration.settings.storefront {
                seed[StoreSettingKey.storefront] = storefront
                seed[StoreSettingKey.locale] =
                    configuration.settings.locale ?? Storefront(countryCode: storefront)?.defaultLocale
            }
        }
        let shown = try ledger.storeSettings()[StoreSettingKey.storefront] ?? seed[StoreSettingKey.storefront]
        let storefront = shown.flatMap(Storefront.init(countryCode:)) ?? .unitedStates
        let warnings = Self.warnings(zip(paths, configurations), storefront: storefront)
        try ledger.saveProducts(products, sources: sources, seedSettings: seed, offersKey: offersKey)
        return CatalogImport(productIDs: products.map(\.id), settings: settings, warnings: warnings)
    }

    /// Reads and checks StoreKit configuration files for one import, without touching any
    /// ledger: each must parse, and no product may be defined by two of them.
    /// - Throws: `CatalogError`.
    package static func readConfigurations(at paths: [String]) throws -> CheckedConfigurations {
        var configurations: [StoreKitConfiguration] = []
        var count = 0
        for path in paths {
            let configuration = try StoreKitConfiguration(contentsOf: path, importedBefore: count)
            count += configuration.products.count
            configurations.append(configuration)
        }
        var sources: [String: String] = [:]
        for (path, configuration) in zip(paths, configurations) {
            for product in configuration.products {
                if let first = sources[product.id] {
                    throw CatalogError.duplicateProduct(id: product.id, firstPath: first, secondPath: path)
                }
                sources[product.id] = path
            }
        }
        return CheckedConfigurations(paths: paths, configurations: configurations)
    }

    /// The warnings of importing `files` into a ledger whose prices show on `storefront`.
    private static func warnings(
        _ files: some Sequence<(String, StoreKitConfiguration)>, storefront: Storefront
    ) -> [String] {
        var warnings: [String] = []
        for (path, configuration) in files {
            if let own = configuration.settings.storefront, own != storefront.countryCode {
                warnings.append(
                    "\(path): made for storefront \(own), but the ledger's storefront is \(storefront.countryCode): "
                        + "its prices are shown in \(storefront.currencyCode); the storefront stays \(storefront.countryCode)"
                )
            }
            for product in configuration.products {
                if let why = PriceFormatter.inexactness(of: product.price, in: storefront.currencyCode) {
                    warnings.append("\(path): product \(product.id): \(why)")
                }
            }
        }
        return warnings
    }

    /// Adds or replaces products made in code (rather than read from a configuration file),
    /// all in one commit.
    public func save(_ products: [Product]) throws {
        try ledger.saveProducts(products, offersKey: nil)
    }

    /// Adds or replaces products made in code, with the subscription offers key promotional
    /// offers are checked with (it replaces the store's), all in one commit.
    package func save(_ products: [Product], offersKey: SubscriptionOffersKey?) throws {
        try ledger.saveProducts(products, offersKey: offersKey)
    }

    /// A products request (`SKProductsRequest`).
    public func products(for identifiers: some Sequence<String>) throws -> ProductsResponse {
        var seen = Set<String>()
        let requested = identifiers.filter { seen.insert($0).inserted }
        let known = Dictionary(uniqueKeysWithValues: try ledger.products(withIDs: requested).map { ($0.id, $0) })
        return ProductsResponse(
            products: requested.compactMap { known[$0] },
            invalidProductIdentifiers: requested.filter { known[$0] == nil })
    }

    /// Every product of the catalog, by identifier.
    public func allProducts() throws -> [Product] {
        try ledger.allProducts()
    }

    /// The product's price as the current storefront shows it (`1,99 €` on FRA in French).
    public func displayPrice(of product: Product) throws -> String {
        let settings = try StoreSettings(ledger: ledger)
        return PriceFormatter.string(for: product.price, storefront: settings.storefront, locale: settings.locale)
    }
}

// MARK: - Promotions (`Product.PromotionInfo`)

extension ProductCatalog {
    /// The promotion overrides, in order (see `Ledger.promotionOrder()`).
    package func promotionOrder() throws -> [PromotionInfo] {
        try ledger.promotionOrder()
    }

    /// Replaces the order and visibility of every promoted product; an empty list resets to
    /// the defaults.
    /// - Throws: `UnknownProductError`; `StoreControlError.duplicatePromotion`.
    @discardableResult
    package func updatePromotions(_ promotions: [PromotionInfo]) throws -> [PromotionInfo] {
        try ledger.updatePromotions(promotions)
    }

    /// Sets the order by product identifiers, keeping the visibility of products already
    /// listed; an empty list resets to the defaults.
    /// - Throws: `UnknownProductError`; `StoreControlError.duplicatePromotion`.
    @discardableResult
    package func updatePromotionOrder(byIDs ids: [String]) throws -> [PromotionInfo] {
        try ledger.updatePromotionOrder(byIDs: ids)
    }

    /// Sets one product's visibility.
    /// - Throws: `UnknownProductError`.
    @discardableResult
    package func updatePromotionVisibility(
        _ visibility: PromotionVisibility, for productID: String
    ) throws -> [PromotionInfo] {
        try ledger.updatePromotionVisibility(visibility, for: productID)
    }
}
