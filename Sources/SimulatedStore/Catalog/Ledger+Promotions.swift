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
        try read { db in try Self.promotions(db) }
    }

    /// Whether an order was set (by `updatePromotionOrder(byIDs:)` or `updatePromotions(_:)`).
    package func isPromotionOrderOverridden() throws -> Bool {
        try read { db in try Self.orderOverridden(db) }
    }

    /// Replaces the order and visibility of every promoted product; an empty list resets to
    /// the defaults.
    /// - Throws: `UnknownProductError`; `StoreControlError.duplicatePromotion`.
    @discardableResult
    package func updatePromotions(_ promotions: [PromotionInfo]) throws -> [PromotionInfo] {
        try write { db in try Self.replacePromotions(db, promotions, orderOverridden: !promotions.isEmpty) }
    }

    /// Sets the order by product identifiers, keeping the visibility of products already
    /// listed (others get `appStoreConnectDefault`); an empty list resets to the defaults.
    @discardableResult
    package func updatePromotionOrder(byIDs ids: [String]) throws -> [PromotionInfo] {
        try write { db in
            let visibility = Dictionary(
                uniqueKeysWithValues: try Self.promotions(db).map { ($0.productID, $0.visibility) })
            let promotions = ids.map {
                PromotionInfo(productID: $0, visibility: visibility[$0] ?? .appStoreConnectDefault)
            }
            return try Self.replacePromotions(db, promotions, orderOverridden: !ids.isEmpty)
        }
    }

    /// Sets one product's visibility. Without an order set, this overrides the visibility only
    /// (no other product is hidden); with one, a product not in it is added at the end.
    @discardableResult
    package func updatePromotionVisibility(
        _ visibility: PromotionVisibility, for productID: String
    ) throws -> [PromotionInfo] {
        try write { db in
            var promotions = try Self.promotions(db)
            if let index = promotions.firstIndex(where: { $0.productID == productID }) {
                promotions[index].visibility = visibility
            } else {
                promotions.append(PromotionInfo(productID: productID, visibility: visibility))
            }
            return try Self.replacePromotions(db, promotions, orderOverridden: try Self.orderOverridden(db))
        }
    }

    private static let orderOverriddenKey = "promotionOrderOverridden"

    private static func orderOverridden(_ db: Database) throws -> Bool {
        try String.fetchOne(
            try db.cachedStatement(sql: "SELECT value FROM store_settings WHERE key = ?"),
            arguments: [orderOverriddenKey]) == "true"
    }

    private static func promotions(_ db: Database) throws -> [PromotionInfo] {
        try Row.fetchAll(try db.cachedStatement(sql: "SELECT product_id, visibility FROM promotions ORDER BY position"))
            .map {
                PromotionInfo(
                    productID: $0["product_id"],
                    visibility: PromotionVisibility(rawValue: $0["visibility"]) ?? .appStoreConnectDefault)
            }
    }

    private static func replacePromotions(
        _ db: Database, _ promotions: [PromotionInfo], orderOverridden: Bool
    ) throws -> [PromotionInfo] {
        var seen = Set<String>()
        for promotion in promotions {
            guard seen.insert(promotion.productID).inserted else {
                throw StoreControlError.duplicatePromotion(promotion.productID)
            }
            guard
                try Bool.fetchOne(
                    try db.cachedStatement(sql: "SELECT 1 FROM products WHERE id = ?"), arguments: [promotion.productID]
                ) != nil
            else {
                throw UnknownProductError(productIdentifier: promotion.productID)
            }
        }
        try db.run(sql: "DELETE FROM promotions")
        for (position, promotion) in promotions.enumerated() {
            try db.run(
                sql: "INSERT INTO promotions (position, product_id, visibility) VALUES (?, ?, ?)",
                arguments: [position, promotion.productID, promotion.visibility.rawValue])
        }
        try saveSettings(db, [orderOverriddenKey: String(orderOverridden)])
        return promotions
    }
}
