/// The four kinds of in-app purchase.
public enum ProductType: String, Sendable, Codable, CaseIterable {
    /// Used up once bought (coins, lives): bought again and again, never restored.
    case consumable
    /// Bought once and kept for good: restored.
    case nonConsumable
    /// A subscription that renews itself at the end of each period until auto-renew is off.
    case autoRenewable
    /// A subscription of set length that does not renew.
    case nonRenewable
}
