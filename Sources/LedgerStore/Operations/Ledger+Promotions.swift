import Foundation
import GRDB

/// Whether a promoted product shows in the App Store on this device.
public enum PromotionVisibility: String, Sendable, Codable, CaseIterable {
    case appStoreConnectDefault
    case visible
    case hidden
}

/// One promoted product's override (`Product.PromotionInfo`).
public struct PromotionInfo: Sendable, Hashable, Codable {
    public var productID: String
    public var visibility: PromotionVisibility

    public init(productID: String, visibility: PromotionVisibility = .appStoreConnectDefault) {
        self.productID = productID
        self.visibility = visibility
    }
}

extension Ledger {
    /// The overridden order of promoted products; empty when the App Store Connect defaults
    /// apply. A product left out of the list is hidden.
    public func promotionOrder() throws -> [PromotionInfo] {
        try read { db in try Self.promotions(db) }
    }

    /// Replaces the order and visibility of every promoted product; an empty list resets to
    /// the defaults.
    /// - Throws: `StoreControlError.unknownProduct`, `.duplicatePromotion`.
    @discardableResult
    public func updatePromotions(_ promotions: [PromotionInfo]) throws -> [PromotionInfo] {
        try write { db in try Self.replacePromotions(db, promotions) }
    }

    /// Sets the order by product identifiers, keeping the visibility of products already
    /// listed (others get `appStoreConnectDefault`); an empty list resets to the defaults.
    @discardableResult
    public func updatePromotionOrder(byIDs ids: [String]) throws -> [PromotionInfo] {
        try write { db in
            let visibility = Dictionary(uniqueKeysWithValues: try Self.promotions(db).map { ($0.productID, $0.visibility) })
            return try Self.replacePromotions(db, ids.map { PromotionInfo(productID: $0, visibility: visibility[$0] ?? .appStoreConnectDefault) })
        }
    }

    /// Sets one product's visibility; a product not yet listed is added at the end.
    @discardableResult
    public func updatePromotionVisibility(_ visibility: PromotionVisibility, for productID: String) throws -> [PromotionInfo] {
        try write { db in
            var promotions = try Self.promotions(db)
            if let index = promotions.firstIndex(where: { $0.productID == productID }) {
                promotions[index].visibility = visibility
            } else {
                promotions.append(PromotionInfo(productID: productID, visibility: visibility))
            }
            return try Self.replacePromotions(db, promotions)
        }
    }

    private static func promotions(_ db: Database) throws -> [PromotionInfo] {
        try Row.fetchAll(db, sql: "SELECT product_id, visibility FROM promotions ORDER BY position").map {
            PromotionInfo(productID: $0["product_id"], visibility: PromotionVisibility(rawValue: $0["visibility"]) ?? .appStoreConnectDefault)
        }
    }

    private static func replacePromotions(_ db: Database, _ promotions: [PromotionInfo]) throws -> [PromotionInfo] {
        var seen = Set<String>()
        for promotion in promotions {
            guard seen.insert(promotion.productID).inserted else { throw StoreControlError.duplicatePromotion(promotion.productID) }
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM products WHERE id = ?", arguments: [promotion.productID]) != nil else {
                throw StoreControlError.unknownProduct(promotion.productID)
            }
        }
        try db.execute(sql: "DELETE FROM promotions")
        for (position, promotion) in promotions.enumerated() {
            try db.execute(
                sql: "INSERT INTO promotions (position, product_id, visibility) VALUES (?, ?, ?)",
                arguments: [position, promotion.productID, promotion.visibility.rawValue])
        }
        return promotions
    }
}
