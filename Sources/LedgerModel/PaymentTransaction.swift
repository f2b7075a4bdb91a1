public import Foundation

/// One transaction of the ledger: a superset of StoreKit 1's `SKPaymentTransaction` and
/// StoreKit 2's `Transaction`, plus the ledger's bookkeeping.
///
/// Values are snapshots read after a commit; they never change under the caller.
public struct PaymentTransaction: Sendable, Hashable, Identifiable {
    /// Why a transaction exists.
    public enum Reason: String, Sendable, Codable {
        /// Every transaction but a renewal: a payment, an interrupted purchase's replacement, a
        /// restore's copy.
        case purchase
        /// An automatic renewal of an auto-renewable subscription, made by the store.
        case renewal
    }

    /// Unique, never reused, even after a transaction is deleted.
    public var id: UInt64
    /// Equals `id`, except for restores and renewals, which point at the first purchase.
    public var originalID: UInt64
    /// The identifier of the product bought.
    public var productID: String
    /// The kind of the product bought.
    public var productType: ProductType
    /// Where the transaction stands: purchasing, purchased, failed, restored or deferred.
    public var state: TransactionState
    /// Finished transactions have left the queue for good; they stay in the history.
    public var isFinished: Bool
    /// How many items were bought, 1 to 10.
    public var quantity: Int
    /// When the purchase was made, by the store's time: for a subscription, the start of the
    /// period it pays for; for a restored copy, the time of the restore.
    public var purchaseDate: Date
    /// The purchase date of the original transaction (`originalID`); equals `purchaseDate`
    /// except for restores and renewals.
    public var originalPurchaseDate: Date
    /// When the subscription period this transaction pays for ends; `nil` for products that are
    /// not auto-renewable subscriptions.
    public var expirationDate: Date?
    /// When the transaction was refunded; `nil` unless it was.
    public var revocationDate: Date?
    /// Why it was refunded, as StoreKit's `RevocationReason` raw value (0: other, 1: developer
    /// issue); `nil` unless it was refunded.
    public var revocationReason: Int?
    /// Whether this subscription period was replaced early by an upgrade (or a same-level
    /// crossgrade) in its group.
    public var isUpgraded: Bool
    /// StoreKit 2's app account token: the UUID the app tied the purchase to; `nil` when none
    /// was given.
    public var appAccountToken: UUID?
    /// StoreKit 1's `applicationUsername`: the app's opaque account string, as given.
    public var applicationUsername: String?
    /// Set for failed transactions only.
    public var error: TransactionError?
    /// Whether the transaction is a purchase or a subscription's automatic renewal.
    public var reason: Reason
    /// The subscription group of an auto-renewable subscription; `nil` for other products.
    public var subscriptionGroupID: String?
    /// The introductory or promotional offer the subscription period was bought with.
    public var offer: TransactionOffer?
    /// ISO 3166-1 alpha-3 code of the storefront the purchase was made in.
    public var storefront: String
    /// The environment recorded with the row: always `xcode` (`Ledger.environment`), as for
    /// local testing. What a signed transaction names is the store's `environment` setting
    /// when it is signed (`StoreSettings.environment`).
    public var environment: String
    /// The key of the payment that created this transaction, when the caller gave one.
    public var idempotencyKey: String?
    /// For a restored transaction: the purchase it replays.
    public var restoredFromID: UInt64?
    /// When the ledger recorded the transaction, by the store's time.
    public var createdAt: Date
    /// When the row last changed (state, finish, refund, expiration, upgrade); deliveries do
    /// not change it.
    public var updatedAt: Date
    /// When the app finished the transaction; `nil` while it is unfinished.
    public var finishedAt: Date?
    /// How many times this transaction was delivered to observers.
    public var deliveryCount: Int
    /// When the transaction was last delivered to observers; `nil` when it never was.
    public var lastDeliveredAt: Date?
    /// The customer who owns the transaction (the key of their row in the store's customers;
    /// 1 is the first customer, `default` in a ledger made before customers).
    @usableFromInline package var customerID: Int64 = 1
    /// The app the transaction was made in (the key of its row in the store's apps; 1 is the
    /// first app, the only one of a ledger made before apps).
    @usableFromInline package var appID: Int64 = 1

    /// Every field, as the ledger stores them (the storage engine builds transactions from its rows).
    @inlinable package init(
        id: UInt64,
        originalID: UInt64,
        productID: String,
        productType: ProductType,
        state: TransactionState,
        isFinished: Bool,
        quantity: Int,
        purchaseDate: Date,
        originalPurchaseDate: Date,
        expirationDate: Date?,
        revocationDate: Date?,
        revocationReason: Int?,
        isUpgraded: Bool,
        appAccountToken: UUID?,
        applicationUsername: String?,
        error: TransactionError?,
        reason: Reason,
        subscriptionGroupID: String?,
        offer: TransactionOffer?,
        storefront: String,
        environment: String,
        idempotencyKey: String?,
        restoredFromID: UInt64?,
        createdAt: Date,
        updatedAt: Date,
        finishedAt: Date?,
        deliveryCount: Int,
        lastDeliveredAt: Date?,
        customerID: Int64 = 1,
        appID: Int64 = 1
    ) {
        self.id = id
        self.originalID = originalID
        self.productID = productID
        self.productType = productType
        self.state = state
        self.isFinished = isFinished
        self.quantity = quantity
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expirationDate = expirationDate
        self.revocationDate = revocationDate
        self.revocationReason = revocationReason
        self.isUpgraded = isUpgraded
        self.appAccountToken = appAccountToken
        self.applicationUsername = applicationUsername
        self.error = error
        self.reason = reason
        self.subscriptionGroupID = subscriptionGroupID
        self.offer = offer
        self.storefront = storefront
        self.environment = environment
        self.idempotencyKey = idempotencyKey
        self.restoredFromID = restoredFromID
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.finishedAt = finishedAt
        self.deliveryCount = deliveryCount
        self.lastDeliveredAt = lastDeliveredAt
        self.customerID = customerID
        self.appID = appID
    }
}

extension PaymentTransaction: Codable {
    /// The JSON keys, in one list: the encoder's, and the CLI's fast JSON writer's.
    package enum CodingKeys: String, CodingKey, CaseIterable {
        case id, originalID, productID, productType, state, isFinished, quantity, purchaseDate,
            originalPurchaseDate, expirationDate, revocationDate, revocationReason, isUpgraded,
            appAccountToken, applicationUsername, error, reason, subscriptionGroupID, offer, storefront, environment,
            idempotencyKey, restoredFromID, createdAt, updatedAt, finishedAt, deliveryCount, lastDeliveredAt
    }

    /// Encodes every field, absent ones as `null`, so that a JSON reader sees one shape.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(originalID, forKey: .originalID)
        try c.encode(productID, forKey: .productID)
        try c.encode(productType, forKey: .productType)
        try c.encode(state, forKey: .state)
        try c.encode(isFinished, forKey: .isFinished)
        try c.encode(quantity, forKey: .quantity)
        try c.encode(purchaseDate, forKey: .purchaseDate)
        try c.encode(originalPurchaseDate, forKey: .originalPurchaseDate)
        try c.encode(expirationDate, forKey: .expirationDate)
        try c.encode(revocationDate, forKey: .revocationDate)
        try c.encode(revocationReason, forKey: .revocationReason)
        try c.encode(isUpgraded, forKey: .isUpgraded)
        try c.encode(appAccountToken, forKey: .appAccountToken)
        try c.encode(applicationUsername, forKey: .applicationUsername)
        try c.encode(error, forKey: .error)
        try c.encode(reason, forKey: .reason)
        try c.encode(subscriptionGroupID, forKey: .subscriptionGroupID)
        try c.encode(offer, forKey: .offer)
        try c.encode(storefront, forKey: .storefront)
        try c.encode(environment, forKey: .environment)
        try c.encode(idempotencyKey, forKey: .idempotencyKey)
        try c.encode(restoredFromID, forKey: .restoredFromID)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(updatedAt, forKey: .updatedAt)
        try c.encode(finishedAt, forKey: .finishedAt)
        try c.encode(deliveryCount, forKey: .deliveryCount)
        try c.encode(lastDeliveredAt, forKey: .lastDeliveredAt)
    }
}

/// A test purchase dated in the past (StoreKitTest's `purchaseDate(_:renewalBehavior:)`).
public struct BackdatedPurchase: Sendable, Hashable {
    /// The purchase date: not after the store's time.
    public var date: Date
    /// For an auto-renewable subscription: whether it renews from that date up to the store's
    /// time (`renewUntilNow`), or has its first period only (`cancelImmediately`).
    public var renews: Bool

    /// A purchase dated `date`, renewing up to now unless `renews` is false.
    public init(date: Date, renews: Bool = true) {
        self.date = date
        self.renews = renews
    }
}
