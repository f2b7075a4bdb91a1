import Foundation
import GRDB

extension Ledger {
    /// Adds or replaces products (with their localizations and subscription groups), all in
    /// one commit: all or none.
    /// - Parameters:
    ///   - sources: the file each product came from, by product id, recorded with it.
    ///   - seedSettings: store settings stored only where the ledger has no value yet (a
    ///     catalog file seeds the store; it does not override what was set since).
    ///   - offersKey: the catalog's subscription offers key, which replaces the store's.
    package func saveProducts(
        _ products: [Product], sources: [String: String] = [:], seedSettings: [String: String] = [:],
        offersKey: SubscriptionOffersKey? = nil
    ) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        try write { db in
            for (key, value) in seedSettings.sorted(by: { $0.key < $1.key }) {
                try db.run(sql: "INSERT OR IGNORE INTO store_settings (key, value) VALUES (?, ?)", arguments: [key, value])
            }
            if let offersKey {
                try Self.saveSettings(db, [
                    StoreSettingKey.subscriptionOffersKeyID: offersKey.id,
                    StoreSettingKey.subscriptionOffersPrivateKey: offersKey.privateKeyBase64,
                ])
            }
            for product in products {
                if let subscription = product.subscription {
                    try db.run(
                        sql: """
                            INSERT INTO subscription_groups (id, name) VALUES (?, ?)
                            ON CONFLICT (id) DO UPDATE SET name = excluded.name
                            """,
                        arguments: [subscription.groupID, subscription.groupName])
                }
                let offersJSON = String(decoding: try encoder.encode(OfferColumn(
                    introductory: product.subscription?.introductoryOffer,
                    promotional: product.subscription?.promotionalOffers ?? [])), as: UTF8.self)
                try db.run(
                    sql: """
                        INSERT INTO products (id, type, reference_name, price, family_shareable, subscription_group_id,
                                              subscription_group_level, subscription_period, offers, imported_from)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
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
                        product.subscription?.period.description, offersJSON, sources[product.id],
                    ])
                try db.run(sql: "DELETE FROM product_localizations WHERE product_id = ?", arguments: [product.id])
                for (position, localization) in product.localizations.enumerated() {
                    try db.run(
                        sql: "INSERT OR REPLACE INTO product_localizations (product_id, locale, position, display_name, description) VALUES (?, ?, ?, ?, ?)",
                        arguments: [product.id, localization.locale, position, localization.displayName, localization.description])
                }
            }
        }
    }

    /// The products with these identifiers that the ledger knows, in the order asked.
    public func products(withIDs ids: [String]) throws -> [Product] {
        try read { db in try ids.compactMap { try Self.fetchProduct(db, id: $0) } }
    }

    /// Every product of the catalog, by identifier.
    public func allProducts() throws -> [Product] {
        try read { db in
            try String.fetchAll(try db.cachedStatement(sql: "SELECT id FROM products ORDER BY id")).compactMap { try Self.fetchProduct(db, id: $0) }
        }
    }

    struct OfferColumn: Codable {
        var introductory: SubscriptionOffer?
        var promotional: [SubscriptionOffer]
    }

    /// The offers stored in a product's `offers` column.
    static func offers(inOffersColumn json: String) -> OfferColumn? {
        try? JSONDecoder().decode(OfferColumn.self, from: Data(json.utf8))
    }

    private static func fetchProduct(_ db: Database, id: String) throws -> Product? {
        guard let row = try Row.fetchOne(
            db,
            sql: """
                SELECT p.*, g.name AS group_name FROM products p
                LEFT JOIN subscription_groups g ON g.id = p.subscription_group_id WHERE p.id = ?
                """,
            arguments: [id])
        else { return nil }
        let localizations = try Row.fetchAll(
            db, sql: "SELECT locale, display_name, description FROM product_localizations WHERE product_id = ? ORDER BY position",
            arguments: [id]
        ).map { ProductLocalization(locale: $0["locale"], displayName: $0["display_name"], description: $0["description"]) }
        var subscription: SubscriptionInfo?
        if let groupID = row["subscription_group_id"] as String?,
           let period = (row["subscription_period"] as String?).flatMap(SubscriptionPeriod.init(iso8601:)) {
            let offers = try? JSONDecoder().decode(OfferColumn.self, from: Data((row["offers"] as String).utf8))
            subscription = SubscriptionInfo(
                groupID: groupID, groupName: row["group_name"] ?? groupID, level: row["subscription_group_level"],
                period: period, introductoryOffer: offers?.introductory, promotionalOffers: offers?.promotional ?? [])
        }
        return Product(
            id: id,
            type: ProductType(rawValue: row["type"]) ?? .consumable,
            referenceName: row["reference_name"],
            localizations: localizations,
            price: DecimalText.parse(row["price"]) ?? 0,
            isFamilyShareable: row["family_shareable"],
            subscription: subscription)
    }
}
