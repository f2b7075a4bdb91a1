/// The four kinds of in-app purchase.
public enum ProductType: String, Sendable, Codable, CaseIterable {
    case consumable
    case nonConsumable
    case autoRenewable
    case nonRenewable
}
