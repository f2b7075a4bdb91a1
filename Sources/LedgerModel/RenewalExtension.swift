package import Foundation

/// A subscription's renewal date extended by the App Store's server (Extend a Subscription
/// Renewal Date, or a mass extension): the period extended and its new end.
package struct RenewalExtension: Sendable, Hashable {
    /// The request's identifier: the same request again extends nothing more.
    package var requestIdentifier: String
    /// The subscription's original transaction.
    package var originalTransactionID: UInt64
    /// The period extended (its `webOrderLineItemId`).
    package var periodID: UInt64
    /// Days added, 1 to 90.
    package var days: Int
    /// Apple's `extendReasonCode`: 0 undeclared, 1 customer satisfaction, 2 other, 3 service
    /// issue or outage.
    package var reason: Int
    /// The period's new expiration date.
    package var effectiveDate: Date

    /// An extension with every field.
    package init(
        requestIdentifier: String, originalTransactionID: UInt64, periodID: UInt64, days: Int, reason: Int,
        effectiveDate: Date
    ) {
        self.requestIdentifier = requestIdentifier
        self.originalTransactionID = originalTransactionID
        self.periodID = periodID
        self.days = days
        self.reason = reason
        self.effectiveDate = effectiveDate
    }

    /// The most days one extension adds.
    package static let maximumDays = 90
    /// How many extensions a subscription gets in `window`.
    package static let maximumPerWindow = 2
    /// The window the maximum counts in: 365 days.
    package static let window: TimeInterval = 365 * 86_400
    /// The longest request identifier, in bytes.
    package static let requestIdentifierLimit = 128

    /// Whether `text` can identify an extension request: 1 to `requestIdentifierLimit` bytes,
    /// no NUL (`N\0one` and `N\0two` would collide).
    package static func isValidRequestIdentifier(_ text: String) -> Bool {
        (1...requestIdentifierLimit).contains(text.utf8.count) && !text.holdsNUL
    }
}

/// A mass extension of renewal dates (Extend Subscription Renewal Dates for All Active
/// Subscribers), as it stands: it goes over the store's customers in batches, one commit each,
/// and is complete after the last.
package struct MassRenewalExtension: Sendable, Hashable {
    /// The request's identifier: the same request again is not made twice.
    package var requestIdentifier: String
    /// The subscription product whose subscribers it extends.
    package var productID: String
    /// Days added, 1 to 90.
    package var days: Int
    /// Apple's `extendReasonCode`, 0 to 3.
    package var reason: Int
    /// The storefronts it was limited to; empty: all.
    package var storefronts: [String]
    /// When it was asked for, by the store's clock.
    package var date: Date
    /// How many subscriptions it extended.
    package var succeededCount: Int
    /// How many active subscriptions it could not extend (extended twice this year already).
    package var failedCount: Int
    /// When it went over the last customer, by the store's clock; `nil` while it runs.
    package var completeDate: Date?

    /// A mass extension with every field.
    package init(
        requestIdentifier: String, productID: String, days: Int, reason: Int, storefronts: [String], date: Date,
        succeededCount: Int, failedCount: Int, completeDate: Date?
    ) {
        self.requestIdentifier = requestIdentifier
        self.productID = productID
        self.days = days
        self.reason = reason
        self.storefronts = storefronts
        self.date = date
        self.succeededCount = succeededCount
        self.failedCount = failedCount
        self.completeDate = completeDate
    }
}

/// An extension of renewal dates the ledger refuses. Nothing was changed.
package enum RenewalExtensionError: DescribedError, Sendable, Equatable {
    /// Days outside 1...90.
    case invalidDays(Int)
    /// A reason code outside 0...3.
    case invalidReason(Int)
    /// A request identifier empty or longer than 128 bytes.
    case invalidRequestIdentifier
    /// No auto-renewable subscription has this original transaction id.
    case unknownOriginalTransaction(UInt64)
    /// The subscription is not active (expired, in billing retry or grace period, refunded).
    case ineligible(UInt64)
    /// The subscription is in a free offer period (a free trial): Apple's
    /// `SubscriptionExtensionIneligibleError` names it among the states it refuses.
    case inFreeOfferPeriod(UInt64)
    /// The customer has the subscription through Family Sharing: only the purchaser's is
    /// extended (Apple's `FamilySharedSubscriptionExtensionIneligibleError`).
    case familyShared(UInt64)
    /// The subscription was extended twice in the last 365 days already.
    case maximumReached(UInt64)

    package var description: String {
        switch self {
        case .invalidDays(let days): "\(days) days: an extension adds 1 to \(RenewalExtension.maximumDays) days"
        case .invalidReason(let reason): "reason \(reason): Apple's extend reason codes are 0 to 3"
        case .invalidRequestIdentifier:
            "a request identifier has 1 to \(RenewalExtension.requestIdentifierLimit) bytes, none of them NUL"
        case .unknownOriginalTransaction(let id): "no auto-renewable subscription has original transaction \(id)"
        case .ineligible(let id): "the subscription of original transaction \(id) is not active: it cannot be extended"
        case .inFreeOfferPeriod(let id):
            "the subscription of original transaction \(id) is in a free offer period: it cannot be extended"
        case .familyShared(let id):
            "the subscription of original transaction \(id) is shared by a family member: only the purchaser's is extended"
        case .maximumReached(let id):
            "the subscription of original transaction \(id) was extended \(RenewalExtension.maximumPerWindow) times in the last 365 days"
        }
    }
}
