public import Foundation

/// A customer's request for the refund of a purchase, and what the App Store decided.
public struct RefundRequest: Sendable, Hashable, Codable {
    /// Why the customer asks: Apple's `consumptionRequestReason` values.
    public enum Reason: String, Sendable, Hashable, Codable, CaseIterable {
        /// The customer did not mean to buy it.
        case unintendedPurchase = "UNINTENDED_PURCHASE"
        /// The app did not deliver what was bought.
        case fulfillmentIssue = "FULFILLMENT_ISSUE"
        /// The customer is not satisfied with it.
        case unsatisfiedWithPurchase = "UNSATISFIED_WITH_PURCHASE"
        /// A legal reason.
        case legal = "LEGAL"
        /// Any other reason.
        case other = "OTHER"
    }

    /// What the App Store decides.
    public enum Decision: Sendable, Hashable {
        /// The purchase is refunded.
        case grant
        /// Part of the purchase is refunded, by the customer's use of it (Apple's
        /// `REFUND_PRORATED`): `revocationPercentage` in milliunits of a percent (1 to 99,999:
        /// 25,000 is 25%). The purchase is revoked as by a full refund.
        case grantProrated(revocationPercentage: Int)
        /// The purchase stands.
        case decline
    }

    /// Where the request stands.
    public enum Outcome: String, Sendable, Hashable, Codable {
        /// The App Store has not decided yet.
        case pending
        /// The purchase was refunded.
        case granted
        /// The App Store declined to refund it.
        case declined
    }

    /// The transaction whose refund is asked for.
    public var transactionID: UInt64
    /// Why the customer asks.
    public var reason: Reason
    /// When the customer asked, by the store's clock.
    public var requestedAt: Date
    /// Where the request stands.
    public var outcome: Outcome
    /// When the App Store decided; `nil` while pending.
    public var decidedAt: Date?

    /// Every field (the storage engine reads them).
    package init(transactionID: UInt64, reason: Reason, requestedAt: Date, outcome: Outcome, decidedAt: Date?) {
        self.transactionID = transactionID
        self.reason = reason
        self.requestedAt = requestedAt
        self.outcome = outcome
        self.decidedAt = decidedAt
    }
}
