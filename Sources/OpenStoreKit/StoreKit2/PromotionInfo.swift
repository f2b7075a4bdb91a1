import Foundation
import StoreLedger

extension Product {
    /// A promoted product's order and visibility on this device (`Product.PromotionInfo`),
    /// kept in the ledger (`ledger promotions` shows and changes the same overrides).
    public struct PromotionInfo: Hashable, Sendable {
        /// Whether the promoted product shows in the App Store on this device.
        public enum Visibility: Hashable, Sendable {
            /// `appStoreConnectDefault`: as set in App Store Connect; `visible`: shown; `hidden`: not shown
            /// on this device.
            case appStoreConnectDefault, visible, hidden
        }

        /// The promoted product this entry is about.
        public let productID: Product.ID
        /// Whether the product shows on this device; change it, then `update()` saves it in the ledger.
        public var visibility: Visibility

        init(_ info: StoreLedger.PromotionInfo) {
            productID = info.productID
            visibility =
                switch info.visibility {
                case .appStoreConnectDefault: .appStoreConnectDefault
                case .visible: .visible
                case .hidden: .hidden
                }
        }

        var stored: StoreLedger.PromotionInfo {
            StoreLedger.PromotionInfo(productID: productID, visibility: visibility.stored)
        }

        /// The overrides, in order (empty: App Store Connect's order applies).
        public static var currentOrder: [PromotionInfo] {
            get async throws { try promotionCall { try $0.promotionOrder().map(PromotionInfo.init) } }
        }

        /// Sets the order by product identifiers; an empty list returns to the defaults.
        /// - Throws: `StoreKitError.systemError` for an unknown product (nothing changes).
        public static func updateProductOrder(byID productIDs: some Collection<String>) async throws {
            try promotionCall { _ = try $0.updatePromotionOrder(byIDs: Array(productIDs)) }
        }

        /// Sets the order and visibility of every promoted product; an empty list returns to
        /// the defaults.
        public static func updateAll(_ promotions: some Collection<PromotionInfo>) async throws {
            try promotionCall { _ = try $0.updatePromotions(promotions.map(\.stored)) }
        }

        /// Sets one product's visibility.
        public static func updateProductVisibility(_ visibility: Visibility, for productID: Product.ID) async throws {
            try promotionCall { _ = try $0.updatePromotionVisibility(visibility.stored, for: productID) }
        }

        /// Saves this product's `visibility`.
        public func update() async throws {
            try await Self.updateProductVisibility(visibility, for: productID)
        }

        private static func promotionCall<T>(_ body: (Ledger) throws -> T) throws -> T {
            do {
                return try body(try StoreContext.current().ledger)
            } catch {
                throw StoreKitError.systemError(error)
            }
        }
    }
}

extension Product.PromotionInfo.Visibility {
    var stored: PromotionVisibility {
        switch self {
        case .appStoreConnectDefault: .appStoreConnectDefault
        case .visible: .visible
        case .hidden: .hidden
        }
    }
}
