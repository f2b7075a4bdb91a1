import Foundation
import GRDB
import LedgerModel

/// Whether a promoted product shows in the App Store on this device.
package enum PromotionVisibility: String, Sendable, Codable, CaseIterable {
    /// As App Store Connect sets it: no override.
    case appStoreConnectDefault
    /// Shown, whatever App Store Connect says.
    case visible
    /// Not shown, whatever App Store Connect says.
    case hidden
}

/// One promoted product's override (`Product.PromotionInfo`).
package struct PromotionInfo: Sendable, Hashable, Codable {
    /// The identifier of the promoted product.
    package var productID: String
    /// Whether the product shows; `.appStoreConnectDefault` when not overridden.
    package var visibility: PromotionVisibility

    /// A promoted product, with no visibility override by default.
    package init(productID: String, visibility: PromotionVisibility = .appStoreConnectDefault) {
        self.productID = productID
        self.visibility = visibility
    }
}

/// The order and visibility of the products promoted on the App Store.
extension Ledger {
    /// The promotion overrides, in order. When `isPromotionOrderOverridden()` is false, the App
    /// Store Connect order applies and the list holds visibility overrides only; once an order
    /// is set, a product left out of it is hidden.
    package func promotionOrder() throws -> [PromotionInfo] {
        let app = try appID()
        return try read { db in try Self.promotions(db, app: app) }
    }

    /// Whether the App Store shows `productID` among this device's promoted products, where a
    /// customer can start buying it: not hidden by an override, and in the order when one was set.
    package func showsPromotion(of productID: String) throws -> Bool {
        let app = try appID()
        return try read { db in
            if let promotion = try Self.promotions(db, app: app).first(where: { $0.productID == productID }) {
                return promotion.visibility != .hidden
            }
            return try !Self.orderOverridden(db, app: app)
        }
    }

    /// Whether an order was set (by `updatePromotionOrder(byIDs:)` or `updatePromotions(_:)`).
    package func isPromotionOrderOverridden() throws -> Bool {
        let app = try appID()
        return try read { db in try Self.orderOverridden(db, app: app) }
    }

    /// Replaces the order and visibility of every promoted product; an empty list resets to
    /// the defaults.
    /// - Throws: `UnknownProductError`; `StoreControlError.duplicatePromotion`.
    @discardableResult
    package func updatePromotions(_ promotions: [PromotionInfo]) throws -> [PromotionInfo] {
        let app = try appID()
        return try write { db in
            try Self.replacePromotions(db, app: app, promotions, orderOverridden: !promotions.isEmpty)
        }
    }

    /// Sets the order by product identifiers, keeping the visibility of products already
    /// listed (others get `appStoreConnectDefault`); an empty list resets to the defaults.
    @discardableResult
    package func updatePromotionOrder(byIDs ids: [String]) throws -> [PromotionInfo] {
        let app = try appID()
        return try write { db in
            let visibility = Dictionary(
                uniqueKeysWithValues: try Self.promotions(db, app: app).map { ($0.productID, $0.visibility) })
            let promotions = ids.map {
                PromotionInfo(productID: $0, visibility: visibility[$0] ?? .appStoreConnectDefault)
            }
            return try Self.replacePromotions(db, app: app, promotions, orderOverridden: !ids.isEmpty)
        }
    }

    /// Sets one product's visibility. Without an order set, this overrides the visibility only
    /// (no other product is hidden); with one, a product not in it is added at the end.
    @discardableResult
    package func updatePromotionVisibility(
        _ visibility: PromotionVisibility, for productID: String
    ) throws -> [PromotionInfo] {
        let app = try appID()
        return try write { db in
            var promotions = try Self.promotions(db, app: app)
            if let index = promotions.firstIndex(where: { $0.productID == productID }) {
                promotions[index].visibility = visibility
            } else {
                promotions.append(PromotionInfo(productID: productID, visibility: visibility))
            }
            return try Self.replacePromotions(
                db, app: app, promotions, orderOverridden: try Self.orderOverridden(db, app: app))
        }
    }

    private static let orderOverriddenKey = "promotionOrderOverridden"

    private static func orderOverridden(_ db: Database, app: Int64) throws -> Bool {
        try String.fetchOne(
            try db.cachedStatement(sql: "SELECT value FROM app_settings WHERE app_id = ? AND key = ?"),
            arguments: [app, orderOverriddenKey]) == "true"
    }

    /// App `app`'s promotions (those of its products), in order.
    private static func promotions(_ db: Database, app: Int64) throws -> [PromotionInfo] {
        try Row.fetchAll(
            try db.cachedStatement(
                sql: """
                    SELECT product_id, visibility FROM promotions
                    WHERE product_id IN (SELECT id FROM products WHERE app_id = ?) ORDER BY position
                    """), arguments: [app]
        )
        .map {
            PromotionInfo(
                productID: $0["product_id"],
                visibility: PromotionVisibility(rawValue: $0["visibility"]) ?? .appStoreConnectDefault)
        }
    }

    /// Replaces app `app`'s promotions, placed after every other app's (each app's keep their
    /// order).
    private static func replacePromotions(
        _ db: Database, app: Int64, _ promotions: [PromotionInfo], orderOverridden: Bool
    ) throws -> [PromotionInfo] {
        var seen = Set<String>()
        for promotion in promotions {
            guard seen.insert(promotion.productID).inserted else {
                throw StoreControlError.duplicatePromotion(promotion.productID)
            }
            guard
                try Bool.fetchOne(
                    try db.cachedStatement(sql: "SELECT 1 FROM products WHERE id = ? AND app_id = ?"),
                    arguments: [promotion.productID, app]
                ) != nil
            else {
                throw UnknownProductError(productIdentifier: promotion.productID)
            }
        }
        try db.run(
            sql: "DELETE FROM promotions WHERE product_id IN (SELECT id FROM products WHERE app_id = ?)",
            arguments: [app])
        let first = try Int.fetchOne(db, sql: "SELECT COALESCE(MAX(position) + 1, 0) FROM promotions") ?? 0
        for (offset, promotion) in promotions.enumerated() {
            try db.run(
                sql: "INSERT INTO promotions (position, product_id, visibility) VALUES (?, ?, ?)",
                arguments: [first + offset, promotion.productID, promotion.visibility.rawValue])
        }
        try saveAppSettings(db, app: app, [orderOverriddenKey: String(orderOverridden)])
        return promotions
    }
}
