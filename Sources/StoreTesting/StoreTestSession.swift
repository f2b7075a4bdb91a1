public import Foundation
public import StoreLedger

/// The simulated store's test controls, after Xcode's `SKTestSession`: Ask to Buy, failing,
/// interrupted purchases, subscriptions and time, refunds, clearing. Changes are stored in
/// the ledger (the `ledger` tool sees them too) and observers of `queue` are told about the
/// transactions they create or change.
///
/// ```swift
/// let session = StoreTestSession(queue: queue)
/// try session.update { $0.askToBuyEnabled = true }
/// try await session.refundTransaction(id)
/// try await session.advanceClock(by: 31 * 86_400)   // renewals fall due and are delivered
/// ```
public struct StoreTestSession: Sendable {
    /// The ledger holding the store this session controls.
    public let ledger: Ledger
    /// The app's queue in this process, whose observers hear about the transactions the
    /// controls create or change; `nil` for a session that drives the store from outside the
    /// app (the `ledger` tool).
    public let queue: PaymentQueue?

    /// A session whose changes are delivered to `queue`'s observers.
    public init(queue: PaymentQueue) {
        self.ledger = queue.ledger
        self.queue = queue
    }

    /// A session on a ledger with no app in this process: nothing is launched or notified.
    public init(ledger: Ledger) {
        self.ledger = ledger
        self.queue = nil
    }

    // MARK: - Settings

    /// The store's settings as stored now, with defaults for those never set.
    /// - Throws: `LedgerError` when the ledger cannot be read.
    public func settings() throws -> StoreSettings {
        try StoreSettings(ledger: ledger)
    }

    /// Changes settings; only the settings that `change` altered are written, in one commit.
    @discardableResult
    public func update(_ change: (inout StoreSettings) throws -> Void) throws -> StoreSettings {
        let before = try settings()
        var after = before
        try change(&after)
        let old = before.storedValues
        try ledger.setStoreSettings(after.storedValues.filter { old[$0.key] != $0.value })
        return after
    }

    /// Sets one setting from its text form (`ledger store set KEY VALUE`).
    /// - Throws: `StoreSettingError` for a value that does not fit.
    @discardableResult
    public func set(_ control: StoreControl, to value: String) throws -> StoreSettings {
        try update { $0 = try control.apply(value, to: $0) }
    }

    /// Applies the settings of a StoreKit configuration file (storefront, locale, Ask to Buy,
    /// failing transactions, time rate).
    @discardableResult
    public func applySettings(of configuration: StoreKitConfiguration) throws -> StoreSettings {
        try update { $0 = $0.applying(configuration.settings) }
    }

    /// Performs a control through the store's one door (`Ledger.perform`): with an app in
    /// this process, its queue records the delivery in the control's commit and tells the
    /// observers; without one, nobody is told.
    @discardableResult
    private func run(_ action: StoreAction) async throws -> StoreActionOutcome {
        guard let queue else { return try await ledger.perform(action) }
        return try await queue.perform(action)
    }

    // MARK: - Transactions

    /// Ask to Buy approved: the deferred transaction becomes purchased (observers are told).
    /// - Throws: `PaymentQueueError.unknownTransaction`, `.notDeferred`.
    @discardableResult
    public func approveAskToBuyTransaction(_ id: UInt64) async throws -> PaymentTransaction {
        try await run(.approveAskToBuy(id)).transactions[0]
    }

    /// Ask to Buy declined: the deferred transaction fails (observers are told).
    /// - Throws: `PaymentQueueError.unknownTransaction`, `.notDeferred`.
    @discardableResult
    public func declineAskToBuyTransaction(_ id: UInt64) async throws -> PaymentTransaction {
        try await run(.declineAskToBuy(id)).transactions[0]
    }

    /// Resolves the issue of a transaction. An interrupted purchase: returns its replacement
    /// purchase once there is one (the failed transaction is finished), delivering it when it is
    /// new. A subscription in billing retry: it renews (now, or within its grace period from
    /// the end of its last period) and the renewal is returned and delivered.
    /// - Throws: `StoreControlError.notInterrupted` for a transaction with no issue.
    @discardableResult
    public func resolveIssueForTransaction(_ id: UInt64) async throws -> PaymentTransaction? {
        try await run(.resolveIssue(ofTransaction: id)).transactions.first
    }

    /// Resolves the billing issue of `productID`'s subscription group (by product rather than
    /// by transaction): it renews now, or within its grace period from the end of its last
    /// period. The renewal is delivered.
    /// - Throws: `StoreControlError.noBillingIssue`, `.notAutoRenewable`; `UnknownProductError`.
    @discardableResult
    public func resolveBillingIssue(for productID: String) async throws -> PaymentTransaction {
        try await run(.resolveBillingIssue(productID: productID)).transactions[0]
    }

    /// Refunds a purchased or restored transaction, with the purchase and its restored copies;
    /// observers are told which products lost their entitlement (`.revoked`; a finished
    /// transaction is never handed back as updated). Returns the transaction asked for.
    /// `revocationPercentage`: a prorated refund of that part, in milliunits of a percent (1 to
    /// 99,999; Apple's `REFUND_PRORATED`), which revokes the same.
    /// - Throws: `StoreControlError.cannotRefund`, `.alreadyRefunded`, `.invalidRefundPortion`;
    ///   `PaymentQueueError.unknownTransaction`.
    @discardableResult
    public func refundTransaction(
        _ id: UInt64, reason: RevocationReason = .other, revocationPercentage: Int? = nil
    ) async throws -> PaymentTransaction {
        try await run(.refund(id, reason: reason.rawValue, prorated: revocationPercentage)).transactions[0]
    }

    /// The App Store reverses a transaction's refund, after a dispute the customer raised
    /// (Apple's `REFUND_REVERSED`): the purchase, with the restored copies the refund revoked,
    /// entitles again. Observers hear `reinstatedTransactions` (StoreKit 2's
    /// `Transaction.updates` sends them). Returns the transaction asked for.
    /// - Throws: `StoreControlError.notRefunded`, `.revokedByFamilySharing`;
    ///   `PaymentQueueError.unknownTransaction`.
    @discardableResult
    public func reverseRefund(of id: UInt64) async throws -> PaymentTransaction {
        try await run(.reverseRefund(id)).transactions[0]
    }

    /// The customer asks for the refund of a purchased or restored transaction (StoreKit 2's
    /// refund request sheet), for `reason`; the App Store decides later
    /// (`decideRefundRequest`). A consumable's or an auto-renewable subscription's request
    /// notifies `CONSUMPTION_REQUEST` (with a notification URL). Returns the transaction;
    /// observers are not told.
    /// - Throws: `StoreControlError.cannotRefund`, `.alreadyRefunded`, `.refundRequestPending`;
    ///   `PaymentQueueError.unknownTransaction`.
    @discardableResult
    public func requestRefund(_ id: UInt64, reason: RefundRequest.Reason = .other) async throws -> PaymentTransaction {
        try await run(.requestRefund(id, reason: reason)).transactions[0]
    }

    /// The App Store decides the pending refund request of transaction `id`: granted, the
    /// purchase is refunded as `refundTransaction` refunds it (observers hear of the
    /// revocation); declined, nothing changes but the request, and `REFUND_DECLINED` is
    /// notified. Returns the transaction as stored after.
    /// - Throws: `StoreControlError.noRefundRequest`; a grant, the refund's errors.
    @discardableResult
    public func decideRefundRequest(
        _ id: UInt64, _ decision: RefundRequest.Decision
    ) async throws
        -> PaymentTransaction
    {
        try await run(.decideRefundRequest(id, decision)).transactions[0]
    }

    /// Deletes every transaction, unfinished ones included: their rows go, their histories
    /// stay, each closed by a `deleted` event; ids are not reused. Returns how many were deleted.
    @discardableResult
    public func clearTransactions() async throws -> Int {
        try await run(.clearTransactions).deletedCount
    }

    /// Deletes one transaction, without telling observers: its row goes, its history stays,
    /// closed by a `deleted` event (the hash chain keeps every event). As in Xcode, its
    /// renewals and restored copies (which point at it by `originalID`) stay as they are.
    /// - Throws: `PaymentQueueError.unknownTransaction`.
    public func deleteTransaction(_ id: UInt64) async throws {
        try await run(.deleteTransaction(id))
    }

    /// Buys a product outside the app (as from another device), in one commit: it succeeds
    /// whatever the store's switches (Ask to Buy, failing, interrupted, `canMakePayments`:
    /// they concern the app's own payments), and the app's observers hear of it. A
    /// subscription bought while its group's is active fails as "already subscribed".
    /// - Throws: `UnknownProductError`; `PaymentQueueError` for a bad quantity or account name;
    ///   `PromotionalOfferError` for an offer the store refuses.
    @discardableResult
    public func buyProduct(_ payment: Payment) async throws -> PaymentTransaction {
        try await run(.buyOutsideTheApp(payment.newPayment)).transactions[0]
    }

    /// A family member bought `payment`'s product (a family-shareable one) and shares it: the
    /// customer's purchase of it, owned FAMILY_SHARED (so are its renewals and restored
    /// copies), made and delivered as `buyProduct` makes one. Returns it.
    /// - Throws: `StoreControlError.notFamilyShareable`; `buyProduct`'s errors.
    @discardableResult
    public func shareFamilyPurchase(_ payment: Payment) async throws -> PaymentTransaction {
        try await run(.shareFamilyPurchase(payment.newPayment)).transactions[0]
    }

    /// The family member stops sharing the purchase of transaction `id` (or leaves the family):
    /// its transactions still entitled are revoked, observers hear of it as of a refund, and
    /// `REVOKE` is notified. Returns them, `id`'s first.
    /// - Throws: `PaymentQueueError.unknownTransaction`; `StoreControlError.notFamilyShared`.
    @discardableResult
    public func revokeFamilySharing(_ id: UInt64) async throws -> [PaymentTransaction] {
        try await run(.revokeFamilySharing(id)).transactions
    }

    // MARK: - Subscriptions and time

    /// Renews the subscription of `productID`'s group now: its current period ends and the next
    /// begins, with the product the group renews to. The renewal is delivered and returned.
    /// When the store fails renewals (`StoreControl.billingRetryOnRenewal`), this one fails as
    /// every renewal does: the period ends now, the group enters billing retry
    /// (`hasBillingIssue(_:)`), `DID_FAIL_TO_RENEW` is notified, and the period that ended is
    /// returned; observers are not told.
    /// - Throws: `UnknownProductError`; `StoreControlError.notAutoRenewable`, `.noSubscription`.
    @discardableResult
    public func forceRenewalOfSubscription(_ productID: String) async throws -> PaymentTransaction {
        try await run(.forceRenewal(productID: productID)).transactions[0]
    }

    /// Expires the subscription of `productID`'s group now and turns its auto-renew off (a pending
    /// change of product is dropped). Returns its latest period's transaction as stored after;
    /// observers are not told.
    /// - Throws: `UnknownProductError`; `StoreControlError.notAutoRenewable`, `.noSubscription`.
    @discardableResult
    public func expireSubscription(_ productID: String) async throws -> PaymentTransaction {
        try await run(.expireSubscription(productID: productID)).transactions[0]
    }

    /// Turns auto-renew of `productID`'s subscription group on or off. Off: the subscription
    /// expires at its expiration date. Turned on after that date, it stays expired. Turned on,
    /// it wakes the app's renewal task.
    /// - Throws: `UnknownProductError`; `StoreControlError.notAutoRenewable`.
    public func setAutoRenew(_ enabled: Bool, for productID: String) async throws {
        try await run(.setAutoRenew(productID: productID, enabled: enabled))
    }

    /// The App Store raises the price the subscription of `productID`'s group renews at, from
    /// its next renewal, to `price` (by default the catalog's price of the product it renews
    /// to). With `needsConsent` (what StoreKitTest's `requestPriceIncreaseConsentForTransaction`
    /// simulates), the increase waits for the subscriber's answer (`answerPriceIncrease`) and
    /// notifies `PRICE_INCREASE` `PENDING`: a subscriber who has not agreed when the period
    /// ends does not renew. Without, it is agreed at once (`ACCEPTED`). Returns the group's
    /// latest period; observers are not told.
    /// - Throws: `UnknownProductError`; `StoreControlError.notAutoRenewable`, `.noSubscription`,
    ///   `.notRenewing`, `.priceIncreasePending`, `.invalidPrice`.
    @discardableResult
    public func requestPriceIncrease(
        for productID: String, price: Decimal? = nil, needsConsent: Bool = true
    ) async throws -> PaymentTransaction {
        try await run(.requestPriceIncrease(productID: productID, price: price, needsConsent: needsConsent))
            .transactions[0]
    }

    /// The subscriber's answer to the price increase of `productID`'s group: agreed, the next
    /// renewal charges the new price (`PRICE_INCREASE` `ACCEPTED`); declined, auto-renew turns
    /// off and the subscription expires at the end of its period, for not consenting. Returns
    /// the group's latest period; observers are not told.
    /// - Throws: `UnknownProductError`; `StoreControlError.notAutoRenewable`, `.noSubscription`,
    ///   `.noPriceIncrease`.
    @discardableResult
    public func answerPriceIncrease(for productID: String, agree: Bool) async throws -> PaymentTransaction {
        try await run(.answerPriceIncrease(productID: productID, agree: agree)).transactions[0]
    }

    /// Moves the store clock forward and makes the renewals that fell due, in one commit, then
    /// delivers them.
    /// - Throws: `StoreControlError.clockOutOfRange` for a negative or too large interval,
    ///   `.tooManyRenewals`.
    @discardableResult
    public func advanceClock(by interval: TimeInterval) async throws -> [PaymentTransaction] {
        try await run(.advanceClock(by: interval)).transactions
    }

    /// Sets the store clock (never backwards) and makes the renewals that fell due, in one
    /// commit, then delivers them.
    /// - Throws: `StoreControlError.clockCannotGoBack`, `.clockOutOfRange`, `.tooManyRenewals`.
    @discardableResult
    public func setClock(to date: Date) async throws -> [PaymentTransaction] {
        try await run(.setClock(to: date)).transactions
    }
}

/// Why a transaction was refunded (StoreKit's `Transaction.RevocationReason` raw values).
public enum RevocationReason: Int, Sendable, NamedCode {
    /// Refunded for any other reason (raw value 0); the default of `refundTransaction`.
    case other = 0
    /// Refunded because of an actual or perceived issue in the app (raw value 1).
    case developerIssue = 1
}
