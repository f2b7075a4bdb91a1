import Foundation
import GRDB
public import LedgerModel

/// The store's catalog: the products it sells, as the ledger keeps them.
extension Ledger {
    /// Adds or replaces products of this value's app (with their localizations and
    /// subscription groups), all in one commit: all or none. A product identifier, and a
    /// subscription group's, names one product (group) in the store: one of another app's is
    /// refused (`AppError.productOfAnotherApp`).
    /// - Parameters:
    ///   - products: the products, each replacing the stored one with its identifier.
    ///   - sources: the file each product came from, by product id, recorded with it.
    ///   - seedSettings: store settings stored only where the ledger has no value yet (a
    ///     catalog file seeds the store; it does not override what was set since).
    ///   - offersKey: the catalog's subscription offers key, which replaces the store's.
    /// - Throws: the database's errors (nothing is saved then).
    package func saveProducts(
        _ products: [Product], sources: [String: String] = [:], seedSettings: [String: String] = [:],
        offersKey: SubscriptionOffersKey? = nil
    ) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let app = try appID()
        try write { db in
            for (key, value) in seedSettings.sorted(by: { $0.key < $1.key })
            where !StoreSettingKey.appKeys.contains(key) {
                try db.run(
                    sql: "INSERT OR IGNORE INTO store_settings (key, value) VALUES (?, ?)", arguments: [key, value])
            }
            if let offersKey {
                try Self.saveStoreWideSettings(
                    db,
                    [
                        StoreSettingKey.subscriptionOffersKeyID: offersKey.id,
                        StoreSettingKey.subscriptionOffersPrivateKey: offersKey.privateKeyBase64,
                    ])
            }
            for product in products {
                let owners = try Int64.fetchAll(
                    db.cachedStatement(
                        sql: """
                            SELECT app_id FROM products WHERE id = ?1
                            UNION SELECT app_id FROM subscription_groups WHERE id = ?2
                            """), arguments: [product.id, product.subscription?.groupID])
                if let other = owners.first(where: { $0 != app }) {
                    throw AppError.productOfAnotherApp(
                        productID: product.id, bundleID: try Self.bundleID(db, app: other) ?? String(other))
                }
                if let subscription = product.subscription {
                    try db.run(
                        sql: """
                            INSERT INTO subscription_groups (id, name, app_id) VALUES (?, ?, ?)
                            ON CONFLICT (id) DO UPDATE SET name = excluded.name
                            """,
                        arguments: [subscription.groupID, subscription.groupName, app])
                }
                let codes = product.subscription?.codeOffers ?? []
                let winBacks = product.subscription?.winBackOffers ?? []
                let offers = ProductOffersColumn(
                    introductory: product.subscription?.introductoryOffer,
                    promotional: product.subscription?.promotionalOffers ?? [], codes: codes.isEmpty ? nil : codes,
                    winBacks: winBacks.isEmpty ? nil : winBacks)
                let offersJSON =
                    offers.introductory == nil && offers.promotional.isEmpty && codes.isEmpty && winBacks.isEmpty
                    ? ProductOffersColumn.none : String(decoding: try encoder.encode(offers), as: UTF8.self)
                try db.run(
                    sql: """
                        INSERT INTO products (id, type, reference_name, price, family_shareable, subscription_group_id,
                                              subscription_group_level, subscription_period, offers, imported_from,
                                              app_id)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        ON CONFLICT (id) DO UPDATE SET
                            type = excluded.type, reference_name = excluded.reference_name, price = excluded.price,
                            family_shareable = excluded.family_shareable,
                            subscription_group_id = excluded.subscription_group_id,
                            subscription_group_level = excluded.subscription_group_level,
                            subscription_period = excluded.subscription_period, offers = excluded.offers,
                            imported_from = excluded.imported_from
                        """,
                    arguments: [
                        product.id, product.type.rawValue, product.referenceName, DecimalText.format(product.price),
                        product.isFamilyShareable, product.subscription?.groupID, product.subscription?.level,
                        product.subscription?.period.description, offersJSON, sources[product.id], app,
                    ])
                try db.run(sql: "DELETE FROM product_localizations WHERE product_id = ?", arguments: [product.id])
                for (position, localization) in product.localizations.enumerated() {
                    try db.run(
                        sql:
                            "INSERT OR REPLACE INTO product_localizations (product_id, locale, position, display_name, description) VALUES (?, ?, ?, ?, ?)",
                        arguments: [
                            product.id, localization.locale, position, localization.displayName,
                            localization.description,
                        ])
                }
            }
        }
    }

    /// The products with these identifiers that the catalog of this value's app has, in the
    /// order asked.
    public func products(withIDs ids: [String]) throws -> [Product] {
        let app = try appID()
        return try read { db in try Self.products(db, withIDs: ids, app: app) }
    }

    /// `products(withIDs:)` inside a transaction.
    /// The catalog's price of product `id`; `nil` when the catalog has no such product. One
    /// prepared lookup: a subscription's status asks for it each time it is read.
    static func catalogPrice(_ db: Database, of id: String) throws -> Decimal? {
        try String.fetchOne(
            try db.cachedStatement(sql: "SELECT price FROM products WHERE id = ?"), arguments: [id]
        ).flatMap(DecimalText.parse)
    }

    /// `app`: only that app's (`nil`: any app's, for what the store knows of its transactions).
    static func products(_ db: Database, withIDs ids: [String], app: Int64? = nil) throws -> [Product] {
        try ids.compactMap { id in
            let product = try FastStatement(db, productQuery + " WHERE p.id = ? AND (?2 IS NULL OR p.app_id = ?2)")
            product.bind(1, id)
            product.bind(2, app)
            let localizations = try FastStatement(db, localizationQuery + " WHERE product_id = ? ORDER BY position")
            localizations.bind(1, id)
            let found = try localizations.all(localization)
            return try product.first { try Self.product($0, localizations: found.map(\.localization)) }
        }
    }

    /// Every product of the catalog, by identifier: one read, whatever the catalog's size. Each
    /// product comes with its localizations as consecutive rows (no table of localizations by
    /// product to build and look up: hashing 79,000 identifiers twice was a tenth of a listing).
    public func allProducts() throws -> [Product] {
        let app = try appID()
        return try read { db in
            var products: [Product] = []
            let catalog = try FastStatement(db, Self.catalogQuery)
            catalog.bind(1, app)
            try catalog.forEachRow { row in
                let localization =
                    row.isNull(10)
                    ? nil
                    : ProductLocalization(
                        locale: row.string(10), displayName: row.string(11), description: row.string(12))
                if let localization, let last = products.indices.last, products[last].id == row.string(0) {
                    products[last].localizations.append(localization)
                } else {
                    products.append(try Self.product(row, localizations: localization.map { [$0] } ?? []))
                }
            }
            return products
        }
    }

    private static let productColumns = """
        p.id, p.type, p.reference_name, p.price, p.family_shareable, p.subscription_group_id,
        p.subscription_group_level, p.subscription_period, p.offers, g.name
        """
    private static let productTables = "products p LEFT JOIN subscription_groups g ON g.id = p.subscription_group_id"
    private static let productQuery = "SELECT \(productColumns) FROM \(productTables)"
    private static let catalogQuery = LedgerSQL(
        """
        SELECT \(productColumns), l.locale, l.display_name, l.description
        FROM \(productTables) LEFT JOIN product_localizations l ON l.product_id = p.id
        WHERE p.app_id = ? ORDER BY p.id, l.position
        """)

    private static let localizationQuery =
        "SELECT product_id, locale, display_name, description FROM product_localizations"

    private static func localization(
        _ row: FastStatement.Columns
    ) -> (productID: String, localization: ProductLocalization) {
        (
            row.string(0),
            ProductLocalization(locale: row.string(1), displayName: row.string(2), description: row.string(3))
        )
    }

    /// A row of `productQuery` or `catalogQuery` (the same first ten columns).
    private static func product(_ row: FastStatement.Columns, localizations: [ProductLocalization]) throws -> Product {
        let id = row.string(0)
        var subscription: SubscriptionInfo?
        if let groupID = row.optionalString(5),
            let period = row.optionalString(7).flatMap(SubscriptionPeriod.init(iso8601:))
        {
            let offers = row.optionalString(8).flatMap(ProductOffersColumn.init(json:))
            subscription = SubscriptionInfo(
                groupID: groupID, groupName: row.optionalString(9) ?? groupID, level: row.int(6),
                period: period, introductoryOffer: offers?.introductory, promotionalOffers: offers?.promotional ?? [],
                codeOffers: offers?.codes ?? [], winBackOffers: offers?.winBacks ?? [])
        }
        return Product(
            id: id,
            type: ProductType(rawValue: row.string(1)) ?? .consumable,
            referenceName: row.string(2),
            localizations: localizations,
            price: DecimalText.parse(row.string(3)) ?? 0,
            isFamilyShareable: row.bool(4),
            subscription: subscription)
    }
}
