package import Foundation
package import LedgerModel

/// One change the simulated store makes by itself or at a test's request (Xcode's StoreKit
/// testing controls), as a value. Every one goes through `Ledger.perform(_:delivery:)`, the
/// store's one door: it commits the change together with the delivery of what the app's
/// observers are to hear of it, so that the sessions built on it (`StoreTestSession`, the
/// StoreKit test session) only decide who hears, never what is written.
package enum StoreAction: Sendable, Hashable {
    /// Ask to Buy approved: the deferred transaction becomes purchased.
    case approveAskToBuy(UInt64)
    /// Ask to Buy declined: the deferred transaction fails as cancelled.
    case declineAskToBuy(UInt64)
    /// The issue of a transaction resolved: an interrupted purchase, or a subscription in
    /// billing retry (see `Ledger.resolveIssue`).
    case resolveIssue(ofTransaction: UInt64)
    /// The billing issue of a product's subscription group resolved: it renews.
    case resolveBillingIssue(productID: String)
    /// A purchased or restored transaction refunded, with the purchase's other copies;
    /// `reason` is StoreKit's `Transaction.RevocationReason` raw value; `prorated`, the part
    /// refunded in milliunits of a percent when not all of it (Apple's `revocationPercentage`).
    case refund(UInt64, reason: Int, prorated: Int? = nil)
    /// The App Store reverses the refund of a transaction (Apple's `REFUND_REVERSED`): the
    /// purchase, with the copies the refund revoked, entitles again.
    case reverseRefund(UInt64)
    /// The customer asks for the refund of a purchased or restored transaction (StoreKit 2's
    /// refund request sheet), for `reason`.
    case requestRefund(UInt64, reason: RefundRequest.Reason)
    /// The App Store decides the refund request of a transaction: granted (the purchase is
    /// refunded, with its other copies) or declined.
    case decideRefundRequest(UInt64, RefundRequest.Decision)
    /// One transaction deleted: its row goes, its history stays, closed by a `deleted` event.
    /// As in Xcode, its renewals and restored copies (which point at it by `originalID`) stay.
    case deleteTransaction(UInt64)
    /// Every transaction deleted, unfinished ones included (unlike Xcode's reset): their rows
    /// go, their histories stay, each closed by a `deleted` event. Ids are not reused.
    case clearTransactions
    /// A product bought outside the app (from another device): it succeeds whatever the
    /// store's switches, in one commit.
    case buyOutsideTheApp(NewPayment)
    /// A family member bought a family-shareable product and shares it: the customer's
    /// purchase of it, owned FAMILY_SHARED, made as `buyOutsideTheApp` makes one.
    case shareFamilyPurchase(NewPayment)
    /// The family member stops sharing the purchase of a transaction: its chain is revoked.
    case revokeFamilySharing(UInt64)
    /// The subscription of a product's group renewed now.
    case forceRenewal(productID: String)
    /// The subscription of a product's group expired now, its auto-renew turned off.
    case expireSubscription(productID: String)
    /// Auto-renew of a product's subscription group turned on or off.
    case setAutoRenew(productID: String, enabled: Bool)
    /// The App Store raises the price the subscription of a product's group renews at, to
    /// `price` (`nil`: the catalog's), with or without the subscriber's consent.
    case requestPriceIncrease(productID: String, price: Decimal?, needsConsent: Bool)
    /// The subscriber agrees to, or declines, the price increase of a product's group.
    case answerPriceIncrease(productID: String, agree: Bool)
    /// The store's clock moved forward by seconds, and the renewals that fell due made.
    case advanceClock(by: TimeInterval)
    /// The store's clock set (never backwards), and the renewals that fell due made.
    case setClock(to: Date)
    /// The renewals due by the store's clock made (at most the renewal limit).
    case renewDueSubscriptions
}

/// What a `StoreAction` committed, and what the app's observers are to hear of it.
package struct StoreActionOutcome: Sendable {
    /// How observers hear of an action.
    package enum Notice: Sendable, Equatable {
        /// They are not told (a deletion, an expiration, a setting).
        case none
        /// `transactions` are updated: the unfinished ones were counted as delivered in the
        /// action's commit when the action was performed with `.recorded`.
        case updated
        /// `transactions` lost their entitlement (a refund).
        case revoked
        /// `transactions` entitle again (a reversed refund).
        case reinstated
    }

    /// What the action made or changed, the transaction asked about first; empty for an
    /// action that leaves none (a deletion, a setting, a clock move with no renewal due).
    package var transactions: [PaymentTransaction]
    /// How observers hear of it.
    package var notice: Notice
    /// How many transactions it deleted (`clearTransactions`); 0 for the others.
    package var deletedCount = 0
    /// Whether the next renewal may now be due at another time than the store's renewal task
    /// planned (the clock moved, auto-renew turned on): the task must look again.
    package var movesNextRenewal = false

    /// What observers are handed as updated: StoreKit 1 never hands back a finished transaction.
    package var deliverable: [PaymentTransaction] {
        notice == .updated ? transactions.filter { !$0.isFinished } : []
    }
}

extension StoreActionOutcome {
    /// An action whose transactions observers are handed as updated.
    static func updated(_ transactions: [PaymentTransaction]) -> Self {
        StoreActionOutcome(transactions: transactions, notice: .updated)
    }
}
