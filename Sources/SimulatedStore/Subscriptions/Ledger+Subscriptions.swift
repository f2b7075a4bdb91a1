public import Foundation
import GRDB
import LedgerModel

/// Auto-renewable subscriptions: periods, renewals, billing retry and grace, changes of product, auto-renew.
extension Ledger {
    /// Creates the renewals that are due, at most `configuration.renewalLimit` of them (the
    /// rest wait for the next call): for every group whose auto-renew is on and whose
    /// subscription did not lapse, one new `purchased` transaction (reason renewal, same
    /// originalID) per period that ended by the store's time, in order. Returns them oldest first.
    /// Every customer's, or only `customer`'s (a device's launch: in O(their subscriptions),
    /// whatever the store holds; the others' renew when the store's time is next settled for
    /// them or for everyone, dated as they fell due).
    ///
    /// The holdings looked at are those the index says something may be due for: the
    /// customer's, or everyone's (`dueHoldings`, at most `holdingsPerLook`): what is due for them
    /// is made and notified (passing time too), and each is given its next moment
    /// (`scheduleNextLooks`), in the writer's commit.
    func renewDueSubscriptions(_ writer: TransactionWriter, customer: Int64? = nil) throws -> [PaymentTransaction] {
        let (db, now) = (writer.db, writer.now)
        let looked =
            try customer.map { try heldSubscriptions(db, where: "customer_id = ? AND due_from <= ?", [$0, now]) }
            ?? dueHoldings(db, at: now)
        var renewed: [PaymentTransaction] = []
        try walkDueRenewals(db, at: now, limit: configuration.renewalLimit, holdings: looked) { step in
            renewed.append(try self.insertRenewal(writer, step))
        }
        try notifyPassingTime(db, at: now, holdings: looked)
        try scheduleNextLooks(db, of: looked, at: now)
        // Every customer's subscriptions renew; this value's customer's devices hear of theirs.
        return renewed.filter(isOwn)
    }

    /// What a forced renewal did.
    enum ForcedRenewal {
        /// The next period, charged.
        case renewed(PaymentTransaction)
        /// The period that ended now: its renewal failed on a billing issue, as the store's
        /// switches say every renewal does (`BillingSwitches.retryOnRenewal`), and the group is
        /// in billing retry.
        case failed(PaymentTransaction)
    }

    /// Renews the subscription of `productID`'s group now (Xcode's "force renewal"): the
    /// current period ends now and the next one starts, with the product the group renews to;
    /// or, when the store fails every renewal (Xcode's `shouldEnterBillingRetryOnRenewal`), this
    /// one fails too and the group enters billing retry.
    /// - Throws: `UnknownProductError`; `StoreControlError.notAutoRenewable`, `.noSubscription`.
    func forceRenewal(_ db: Database, productID: String) throws -> ForcedRenewal {
        let now = try storeNow(db)
        let held = try heldSubscription(db, productID: productID)
        let state = try renewalState(db, of: held)
        guard let latest = try latestPeriod(db, of: held), latest.revocationDate == nil,
            latest.productID == productID || state.nextProductID == productID
        else { throw StoreControlError.noSubscription(productID) }
        // A renewal the subscriber did not agree to the price of cannot be forced.
        if try priceIncreaseEndingSubscription(db, of: held, renewal: state, latest: latest) != nil {
            throw StoreControlError.priceIncreaseNotAgreed(productID)
        }
        let writer = writer(db, at: now)
        try endPeriod(writer, latest)
        let productID = state.nextProductID ?? latest.productID
        guard let plan = try subscriptionPlan(db, productID: productID) else {
            throw StoreControlError.notAutoRenewable(productID)
        }
        let switches = BillingSwitches(try writer.settings(app: latest.appID))
        if switches.retryOnRenewal {
            let ended = try PaymentTransaction.fetchOne(db, id: latest.id)!
            // The renewal due at the period's end fails (now, when it was running). One that
            // failed already keeps its issue: its start, its grace period, its retries.
            if state.billingIssue(of: ended) == nil, let end = ended.expirationDate?.ledgerMilliseconds {
                try failRenewal(
                    writer, held, state, latest: ended, at: end, plan: plan, rate: try timeRate(db), switches: switches)
            }
            return .failed(ended)
        }
        let run = try renewalOffer(
            db, chain: latest, renewingTo: productID, plan: plan, pendingOffer: state.pendingOffer)
        let end = periodsEnd(run, plan: plan, rate: try timeRate(db), start: now)
        let charge = try renewalCharge(db, of: held, chain: latest, productID: productID)
        // Charged, the increase is over: the renewal's notification reports none waiting.
        try dropPriceIncrease(db, of: held)
        let renewal = try insertRenewal(
            writer,
            RenewalStep(chain: latest, productID: productID, start: now, end: end, offer: run?.offer, charge: charge))
        try saveRenewalState(
            db, of: held,
            RenewalState(
                autoRenew: state.autoRenew, resumedAt: state.resumedAt, nextProductID: nil, periodAnchor: now))
        return .renewed(renewal)
    }

    /// The renewal of `latest` due at `failedAt` fails on a billing issue: no renewal, the group
    /// waits in billing retry (in a grace period when the switches enable one), and the failure
    /// is notified once (`DID_FAIL_TO_RENEW`).
    private func failRenewal(
        _ writer: TransactionWriter, _ held: HeldSubscription, _ state: RenewalState, latest: PaymentTransaction,
        at failedAt: Int64, plan: SubscriptionPlan, rate: TimeRate, switches: BillingSwitches
    ) throws {
        var state = state
        let issue = BillingIssue(
            failedRenewalAt: failedAt, of: plan.period, rate: rate, gracePeriod: switches.gracePeriod)
        state.billingIssue = issue
        try saveRenewalState(writer.db, of: held, state)
        try notify(
            writer, issue.graceUntil == nil ? .renewalFailed : .renewalFailedInGracePeriod, about: latest,
            at: failedAt, once: "renewalFailed:\(latest.id)")
    }

    /// Expires the subscription of `productID`'s group now and turns its auto-renew off (a
    /// pending change of product is dropped).
    /// - Throws: `UnknownProductError`; `StoreControlError.notAutoRenewable`, `.noSubscription`.
    func expireSubscription(_ db: Database, productID: String) throws -> PaymentTransaction {
        let now = try storeNow(db)
        let held = try heldSubscription(db, productID: productID)
        let state = try renewalState(db, of: held)
        guard let latest = try latestPeriod(db, of: held),
            latest.productID == productID || state.nextProductID == productID
        else { throw StoreControlError.noSubscription(productID) }
        try endPeriod(writer(db, at: now), latest)
        try saveRenewalState(
            db, of: held,
            RenewalState(
                autoRenew: false, resumedAt: state.resumedAt, nextProductID: nil, periodAnchor: state.periodAnchor))
        let expired = try PaymentTransaction.fetchOne(db, id: latest.id)!
        try notify(writer(db, at: now), .expiredVoluntarily, about: expired, once: "expired:\(latest.id)")
        return expired
    }

    /// Resolves the billing issue of `productID`'s group (Xcode's "resolve issue" on a
    /// subscription in billing retry): the subscription renews now, or, within its grace
    /// period, from the end of its last period (the user loses no days).
    /// - Throws: `StoreControlError.noBillingIssue` when the group is not in billing retry (or
    ///   its retries are over), `.notAutoRenewable`; `UnknownProductError`.
    func resolveBillingIssue(_ db: Database, productID: String) throws -> PaymentTransaction {
        let now = try storeNow(db)
        let held = try heldSubscription(db, productID: productID)
        var state = try renewalState(db, of: held)
        guard let latest = try latestPeriod(db, of: held),
            let issue = state.liveBillingIssue(of: latest, at: now)
        else { throw StoreControlError.noBillingIssue(productID) }
        let renewTo = state.nextProductID ?? latest.productID
        guard let plan = try subscriptionPlan(db, productID: renewTo) else {
            throw StoreControlError.notAutoRenewable(renewTo)
        }
        // Within the grace period the user loses no days; after it, the new period starts now.
        let start = issue.keepsEntitlement(at: now) ? issue.since : now
        let run = try renewalOffer(
            db, chain: latest, renewingTo: renewTo, plan: plan, pendingOffer: state.pendingOffer)
        var anchor = renewTo == latest.productID ? state.periodAnchor ?? start : start
        let end = periodsEnd(run, plan: plan, rate: try timeRate(db), anchor: &anchor, start: start)
        let charge = try renewalCharge(db, of: held, chain: latest, productID: renewTo)
        try dropPriceIncrease(db, of: held)  // charged now (see `forceRenewal`)
        let renewal = try insertRenewal(
            writer(db, at: now),
            RenewalStep(
                chain: latest, productID: renewTo, start: start, end: end, offer: run?.offer, charge: charge,
                recoversFromBillingIssue: true))
        state.billingIssue = nil
        state.nextProductID = nil
        state.pendingOffer = nil
        state.periodAnchor = anchor
        try saveRenewalState(db, of: held, state)
        return renewal
    }

    /// Whether the latest period of the subscription to `productID` (as the store's controls
    /// choose it: `heldSubscription(_:productID:)`) failed to renew on a billing issue (in
    /// billing retry, or expired after it).
    package func hasBillingIssue(_ productID: String) throws -> Bool {
        try read { db in try hasBillingIssue(db, productID: productID) }
    }

    func hasBillingIssue(_ db: Database, productID: String) throws -> Bool {
        let held = try heldSubscription(db, productID: productID)
        guard let latest = try latestPeriod(db, of: held) else { return false }
        return try renewalState(db, of: held).billingIssue(of: latest) != nil
    }

    /// Why a holding's latest period ends without a renewal (`lapse(_:_:_:latest:)`).
    enum Lapse: Equatable {
        /// Refunded: a revoked period never renews.
        case revoked
        /// Its renewal failed on a billing issue: it waits in billing retry, or expired after it.
        case billingIssue(BillingIssue)
        /// A price increase the subscriber did not agree to ends it.
        case priceIncrease
        /// Auto-renew is off, or was turned on again only after the period ended: the
        /// subscriber's choice (Apple's `VOLUNTARY`, `expirationIntent` 1).
        case voluntary
    }

    /// Why the holding's latest period ends without renewing, by the store's rules; `nil` when
    /// it renews at its end. The one rule the renewals (`renewsAtItsEnd`), the statuses'
    /// `expirationReason` and the `EXPIRED` notifications (`passingTime`) ask, in this order:
    /// a refund, a billing issue, a price increase not agreed to, the subscriber's choice.
    /// `increase`: the holding's `renewalPriceIncrease`, which the caller read.
    static func lapse(_ state: RenewalState, latest: PaymentTransaction, increase: PriceIncrease?) -> Lapse? {
        if latest.revocationDate != nil { return .revoked }
        if let issue = state.billingIssue(of: latest) { return .billingIssue(issue) }
        if increase?.endsSubscription(autoRenew: state.autoRenew) == true { return .priceIncrease }
        let end = latest.expirationDate?.ledgerMilliseconds ?? .min
        return !state.autoRenew || end < state.resumedAt ? .voluntary : nil
    }

    /// `lapse(_:latest:increase:)` with the holding's price increase read here.
    func lapse(
        _ db: Database, _ held: HeldSubscription, _ state: RenewalState, latest: PaymentTransaction
    ) throws -> Lapse? {
        Self.lapse(
            state, latest: latest,
            increase: try renewalPriceIncrease(db, of: held, renewal: state, latest: latest))
    }

    /// Whether the holding's latest period (one that has an end) renews when it ends: no
    /// `lapse` of it.
    private func renewsAtItsEnd(
        _ db: Database, _ held: HeldSubscription, _ state: RenewalState, latest: PaymentTransaction
    ) throws -> Bool {
        // Checked first: the holdings the renewals walk all have auto-renew on.
        guard state.autoRenew, latest.expirationDate != nil else { return false }
        return try lapse(db, held, state, latest: latest) == nil
    }

    /// Turns auto-renew of the subscription to `productID` (of its group when none is) on or
    /// off. Off: the subscription expires at its expiration date. Turned on after that date, it
    /// stays expired.
    /// - Throws: `UnknownProductError`; `StoreControlError.notAutoRenewable`.
    func setAutoRenew(_ db: Database, productID: String, enabled: Bool) throws {
        let held = try heldSubscription(db, productID: productID)
        var state = try renewalState(db, of: held)
        let now = try storeNow(db)
        if enabled, !state.autoRenew { state.resumedAt = now }
        let changed = state.autoRenew != enabled
        state.autoRenew = enabled
        try saveRenewalState(db, of: held, state)
        guard changed, let latest = try latestPeriod(db, of: held) else { return }
        try notify(writer(db, at: now), enabled ? .autoRenewTurnedOn : .autoRenewTurnedOff, about: latest)
        // Subscribing again within the period, after declining a price increase, takes it.
        if enabled, latest.revocationDate == nil, (latest.expirationDate?.ledgerMilliseconds ?? 0) > now,
            !held.isFamilyShared, try priceIncrease(db, of: held)?.status == .declined
        {
            try settlePriceIncrease(db, of: held, from: .declined, to: .agreed, at: now)
            try notify(writer(db, at: now), .priceIncreaseAccepted, about: latest)
        }
    }

    /// Whether the subscription to `productID` (of its group when none is) renews automatically.
    package func isAutoRenewEnabled(for productID: String) throws -> Bool {
        try read { db in try renewalState(db, of: try heldSubscription(db, productID: productID)).autoRenew }
    }

    /// The product the subscription to `productID` switches to at its next renewal, if any.
    package func pendingProductChange(for productID: String) throws -> String? {
        try read { db in try renewalState(db, of: try heldSubscription(db, productID: productID)).nextProductID }
    }

    // MARK: - Inside transactions

    /// The offer the next renewal of the customer's own subscription of `group` is charged at,
    /// while it covers `now`: a promotional offer waiting for it, or the rest of a pay-as-you-go
    /// offer.
    func offerOfNextRenewal(_ db: Database, group: String, at now: Int64) throws -> TransactionOffer? {
        guard let current = try coveringSubscription(db, of: try own(group), at: now, excluding: 0),
            let latest = try latestPeriod(db, of: try own(group))
        else { return nil }
        let state = try renewalState(db, of: try own(group))
        let productID = state.nextProductID ?? current.productID
        guard let plan = try subscriptionPlan(db, productID: productID) else { return nil }
        return try renewalOffer(
            db, chain: latest, renewingTo: productID, plan: plan, pendingOffer: state.pendingOffer)?.offer
    }

    private static let subscriptionGroupLookup = LedgerSQL(
        "SELECT subscription_group_id FROM products WHERE id = ? AND type = 'autoRenewable'")

    /// Why a subscription purchase is refused when the payment is added: buying the
    /// subscription that is active already (StoreKit: "already subscribed"), unless a change to
    /// another product waits for its renewal (buying it cancels the change). A subscription a
    /// family member shares does not count: the customer may buy their own.
    func alreadySubscribed(_ db: Database, productID: String, at now: Int64) throws -> TransactionError? {
        let lookup = try FastStatement(db, Self.subscriptionGroupLookup)
        lookup.bind(1, productID)
        guard let group = try lookup.first({ $0.optionalString(0) }).flatMap({ $0 }),
            let covering = try coveringSubscription(db, of: try own(group), at: now, excluding: 0),
            covering.productID == productID,
            // Buying it while a change to another product waits cancels the change.
            try renewalState(db, of: try own(group)).nextProductID == nil
        else { return nil }
        return Self.alreadySubscribedError(covering)
    }

    /// StoreKit's "already subscribed", to the period `covering`.
    static func alreadySubscribedError(_ covering: PaymentTransaction) -> TransactionError {
        let until = covering.expirationDate.map { $0.formatted(.iso8601) } ?? "now"
        return TransactionError(
            code: .unknown, message: "Already subscribed to \(covering.productID) until \(until).")
    }

    /// A subscription payment refused when it is charged, as it would have been when it was
    /// added (`alreadySubscribed`): the payment fails with `error`.
    struct AlreadySubscribed: Error {
        let error: TransactionError
    }

    /// The dates of a subscription being charged, by the group's rules: an upgrade (a
    /// higher service level) or a crossgrade with the same period replaces the current
    /// subscription now and marks it `isUpgraded`; a downgrade, or a crossgrade with another
    /// period, takes effect at the next renewal: the group renews to its product, and the
    /// payment is no purchase of its own (`changing`: see `completeRenewalChange`).
    ///
    /// A promotional offer the payment redeemed (recorded with it when it was added) applies
    /// to the period it starts; when it starts none (the product subscribed to already, or a
    /// downgrade), the offer waits for the next renewal, as the App Store applies it. Buying the
    /// product subscribed to again while a change to another one waits cancels the change.
    ///
    /// A family member's purchase shared with the customer starts a subscription of its own
    /// (`HeldSubscription`): the customer's subscription of the group, if any, is left as it is.
    ///
    /// Returns how the payment started (what its notification reports), the period the writer
    /// gives it with its charge (`TransactionWriter.changeState`), and, when it only changes the
    /// next renewal, the current period it changes; `nil` for a product the catalog no longer
    /// has as a subscription. What the start changes elsewhere (the subscription it upgrades, the
    /// renewal state, a price increase) is written here.
    /// - Throws: `AlreadySubscribed` (before writing anything) for the product subscribed to,
    ///   bought with no offer and no change waiting.
    func startSubscriptionPeriod(
        _ writer: TransactionWriter, _ transaction: PaymentTransaction
    ) throws -> (start: SubscriptionStart, dates: TransactionWriter.ChargeDates, changing: PaymentTransaction?)? {
        let (db, now) = (writer.db, writer.now)
        guard let held = try heldSubscription(db, of: transaction),
            let plan = try subscriptionPlan(db, productID: transaction.productID)
        else { return nil }
        var state = try renewalState(db, of: held)
        var end: Int64
        var begins = now
        var start: SubscriptionStart
        var changing: PaymentTransaction?
        var run = transaction.offer.flatMap { $0.type != .introductory ? plan.offerRun($0, pending: true) : nil }
        if let current = try coveringSubscription(db, of: held, at: now, excluding: transaction.id),
            let currentPlan = try subscriptionPlan(db, productID: current.productID)
        {
            let immediate =
                current.productID != transaction.productID
                && (plan.level < currentPlan.level
                    || (plan.level == currentPlan.level && plan.period == currentPlan.period))
            if immediate {
                start = .upgrade
                try markUpgraded(writer, current)
                end = periodsEnd(
                    run, plan: plan, rate: try writer.settings(app: transaction.appID).timeRate, start: now)
                state = RenewalState(autoRenew: true, resumedAt: now, nextProductID: nil, periodAnchor: now)
            } else {
                end = now
                changing = current
                if current.productID != transaction.productID {
                    start = .downgrade
                    state.nextProductID = transaction.productID
                    state.pendingOffer = run.flatMap { PendingOffer($0.offer) }
                } else if let run {
                    // Redeeming an offer of the product subscribed to: it renews at the offer (a
                    // pending change of product is dropped).
                    start = .sameProduct
                    state.nextProductID = nil
                    state.pendingOffer = PendingOffer(run.offer)
                } else {
                    // The product subscribed to, bought again while a change waited (the only
                    // way such a payment is added: `alreadySubscribed`): the change is cancelled,
                    // with the offer that came with it. When none waits any more (an Ask to Buy
                    // approved later, a second payment for the product), it is refused as then.
                    guard state.nextProductID != nil else {
                        throw AlreadySubscribed(error: Self.alreadySubscribedError(current))
                    }
                    start = .keepsCurrentProduct
                    state.nextProductID = nil
                    state.pendingOffer = nil
                }
                // The customer chose what the subscription renews to: it renews.
                if !state.autoRenew { (state.autoRenew, state.resumedAt) = (true, now) }
            }
        } else {
            // A lapsed subscriber's promotional offer starts now; a new subscriber of the group
            // gets its introductory offer, once per group. A back-dated test purchase (always the
            // group's first: `checkBackdating`) starts then, renewing from then up to the store's
            // time unless it was to be cancelled at once.
            start = try hasBought(db, of: held, excluding: transaction.id) ? .resubscribe : .firstTime
            // The app's server may give or withhold the introductory offer, whatever the history.
            let terms = try paymentTerms(db, of: transaction.id)
            if run == nil, let intro = plan.introductoryOffer, terms?.introductoryOffer ?? (start == .firstTime) {
                run = plan.offerRun(intro.offer, pending: true)
            }
            // The date asked for is dropped when the group was bought between the payment and its
            // charge (an Ask to Buy approved later): its history cannot be rewritten.
            let backdating = start == .firstTime ? terms?.backdating : nil
            begins = backdating?.date.ledgerMilliseconds ?? now
            end = periodsEnd(run, plan: plan, rate: try writer.settings(app: transaction.appID).timeRate, start: begins)
            state = RenewalState(
                autoRenew: backdating?.renews ?? true, resumedAt: begins, nextProductID: nil, periodAnchor: begins)
        }
        try saveRenewalState(db, of: held, state)
        // A price increase was for the renewal of the period this one replaces or precedes (an
        // offer for the current product, or a change cancelled, leaves it as it stands).
        if start != .sameProduct, start != .keepsCurrentProduct { try dropPriceIncrease(db, of: held) }
        return (start, .period(start: begins, end: end, offer: run?.offer), changing)
    }

    /// Completes a payment that changes only the next renewal of `subscription`'s group (a
    /// downgrade, a crossgrade to another period, an offer for the product subscribed to, or
    /// that product bought again to cancel a change): the App Store makes no transaction of it
    /// and charges nothing now. The device's payment ends purchased with no period (its
    /// expiration is its purchase date), finished at once (nothing is delivered for the app to
    /// finish), and is recorded as the change of `subscription`'s renewal (`renewal_changes`), which
    /// the server's views, restores and StoreKit 2's lists leave out. The change is notified
    /// about `subscription`, the period the customer has: its renewal info names the change.
    func completeRenewalChange(
        _ writer: TransactionWriter, _ payment: PaymentTransaction, changing subscription: PaymentTransaction,
        start: SubscriptionStart, dates: TransactionWriter.ChargeDates
    ) throws -> PaymentTransaction {
        let completed = try writer.changeState(payment, to: .purchased, error: nil, dates: dates)
        try records(writer.db).write(.renewalChanges, key: Int64(payment.id)) {
            try writer.db.run(
                sql: "INSERT INTO renewal_changes (transaction_id, subscription_id) VALUES (?, ?)",
                arguments: [Int64(payment.id), Int64(subscription.id)])
        }
        let finished = try writer.finish(completed)
        try notify(writer, .purchase(start, redeeming: payment.offer?.type), about: subscription)
        return finished
    }

    /// The clause that leaves out the payments that only changed a subscription's next renewal
    /// (`completeRenewalChange`): no transaction of the App Store's. Only a row of their shape
    /// (`mayBeRenewalChange`) can be left out; a list leaves it out without checking its record's
    /// MAC (`verify` reports a forged one; a single transaction's use checks it).
    static let notARenewalChange = """
        NOT (product_type = 'autoRenewable' AND expiration_date IS purchase_date
             AND id IN (SELECT transaction_id FROM renewal_changes))
        """

    /// The subscription period whose next renewal `payment` changed (`completeRenewalChange`);
    /// `nil` for any other payment, read only for a payment of a renewal change's shape
    /// (`mayBeRenewalChange`): a purchase's caller asks it of every purchase.
    /// - Throws: `DamagedRow` for a record that does not check.
    package func subscriptionChanged(by payment: PaymentTransaction) throws -> PaymentTransaction? {
        Self.mayBeRenewalChange(payment) ? try subscriptionChanged(byPayment: payment.id) : nil
    }

    /// The subscription period whose next renewal payment `id` changed (`completeRenewalChange`):
    /// what StoreKit 2's purchase returns for it; `nil` for any other payment.
    /// - Throws: `DamagedRow` for a record that does not check.
    package func subscriptionChanged(byPayment id: UInt64) throws -> PaymentTransaction? {
        try read { db in
            try records(db).row(.renewalChanges, key: Int64(clamping: id)).flatMap { row in
                try PaymentTransaction.fetchOne(db, id: UInt64(row["subscription_id"] as Int64))
            }
        }
    }

    /// Whether `transaction` is a payment that only changed a subscription's next renewal. Only
    /// a row that can be one (`mayBeRenewalChange`) is looked up, and its record must carry its
    /// MAC (a record forged to hide a purchase from the server is refused).
    /// - Throws: `DamagedRow` for a record that does not check.
    func isRenewalChange(_ db: Database, _ transaction: PaymentTransaction) throws -> Bool {
        guard Self.mayBeRenewalChange(transaction) else { return false }
        return try records(db).row(.renewalChanges, key: Int64(clamping: transaction.id)) != nil
    }

    /// Whether `transaction` has the shape of a payment that only changed a renewal: an
    /// auto-renewable subscription purchased with no period.
    private static func mayBeRenewalChange(_ transaction: PaymentTransaction) -> Bool {
        transaction.productType == .autoRenewable && transaction.state == .purchased
            && transaction.expirationDate == transaction.purchaseDate
    }

    /// Which of `transactions` are payments that only changed a subscription's next renewal.
    /// Only rows that can be one (`mayBeRenewalChange`, a few) are looked up, each record
    /// checked (`isRenewalChange`).
    /// - Throws: `DamagedRow` for a record that does not check.
    package func renewalChanges(among transactions: [PaymentTransaction]) throws -> Set<UInt64> {
        let candidates = transactions.filter(Self.mayBeRenewalChange)
        guard !candidates.isEmpty else { return [] }
        return try read { db in Set(try candidates.filter { try isRenewalChange(db, $0) }.map(\.id)) }
    }

    /// One renewal the store owes: the period of `productID` from `start` to `end`, in the chain
    /// of `chain` (the group's latest period when the walk began).
    struct RenewalStep {
        let chain: PaymentTransaction
        let productID: String
        let start: Int64
        let end: Int64
        /// The pay-as-you-go introductory offer this period is still charged at, if any.
        var offer: TransactionOffer?
        /// What one period is charged when it is not the catalog's price (`renewalCharge`).
        var charge: Decimal?
        /// Whether it renews a subscription whose billing issue was just resolved.
        var recoversFromBillingIssue = false
    }

    /// Walks the renewals due at `now`, oldest first per group, handing each to `make` (which
    /// stores it; the groups' renewal states are then saved), and stops after `limit` of them.
    /// Returns how many are due, counting at most `limit + 1`, so that a caller passing no
    /// `make` can tell "more than the limit" without making any.
    @discardableResult
    func walkDueRenewals(
        _ db: Database, at now: Int64, limit: Int, holdings: [HeldSubscription],
        make: ((RenewalStep) throws -> Void)? = nil
    ) throws -> Int {
        var due = 0
        // The store's switches, every app's.
        let settings = StoreSettings(stored: try Self.storeWideSettings(db))
        let rate = settings.timeRate
        let billingIssues = BillingSwitches(settings)
        for held in holdings where due <= limit {
            let state = try renewalState(db, of: held)
            guard let latest = try latestPeriod(db, of: held), var start = latest.expirationDate?.ledgerMilliseconds,
                start <= now, try renewsAtItsEnd(db, held, state, latest: latest)
            else { continue }
            let productID = state.nextProductID ?? latest.productID
            guard let plan = try subscriptionPlan(db, productID: productID) else {
                throw StoreControlError.notAutoRenewable(productID)
            }
            if billingIssues.retryOnRenewal {
                if make != nil {
                    try failRenewal(
                        writer(db, at: now), held, state, latest: latest, at: start, plan: plan, rate: rate,
                        switches: billingIssues)
                }
                continue
            }
            var anchor = productID != latest.productID ? start : state.periodAnchor ?? start
            var run = try renewalOffer(
                db, chain: latest, renewingTo: productID, plan: plan, pendingOffer: state.pendingOffer)
            let charge = make == nil ? nil : try renewalCharge(db, of: held, chain: latest, productID: productID)
            var made = 0
            // No period starts at the store's last millisecond: the one before ended there.
            while start <= now, start < Self.latestStoreMilliseconds {
                due += 1
                if due > limit { break }
                let end = Self.withinStoreTime(periodsEnd(run, plan: plan, rate: rate, anchor: &anchor, start: start))
                // The first renewal charges the group's increase (see `forceRenewal`).
                if made == 0, make != nil { try dropPriceIncrease(db, of: held) }
                try make?(
                    RenewalStep(
                        chain: latest, productID: productID, start: start, end: end, offer: run?.offer, charge: charge))
                run = run?.afterOneRenewal
                made += 1
                start = end
            }
            if make != nil, made > 0 {
                try saveRenewalState(
                    db, of: held,
                    RenewalState(
                        autoRenew: state.autoRenew, resumedAt: state.resumedAt, nextProductID: nil, periodAnchor: anchor
                    ))
            }
        }
        return due
    }

    /// When the next renewal falls due by the store's clock: the earliest end of a period that
    /// will renew (auto-renew on, not refunded, not lapsed); `nil` when none will.
    public func nextRenewalDate() throws -> Date? {
        try read { db in
            var next: Int64?
            // In the index's order: a holding's renewal is never before its `due_from`, so the
            // walk ends at the first one due after the earliest renewal found.
            let holdings = try Row.fetchCursor(
                db,
                sql: """
                    SELECT customer_id, group_id, shared_original_id, due_from FROM subscription_renewal
                    WHERE auto_renew = 1 AND due_from IS NOT NULL ORDER BY due_from
                    """)
            while let row = try holdings.next() {
                if let next, row["due_from"] >= next { break }
                let held = HeldSubscription(row)
                guard let latest = try latestPeriod(db, of: held), let end = latest.expirationDate?.ledgerMilliseconds,
                    try renewsAtItsEnd(db, held, try renewalState(db, of: held), latest: latest)
                else { continue }
                next = min(next ?? end, end)
            }
            return next.map(Date.init(ledgerMilliseconds:))
        }
    }

    /// Refuses a clock move that would make more than `configuration.renewalLimit` renewals due.
    func checkRenewalsDue(_ db: Database, at now: Int64) throws {
        let limit = configuration.renewalLimit
        if try walkDueRenewals(db, at: now, limit: limit, holdings: try dueHoldings(db, at: now)) > limit {
            throw StoreControlError.tooManyRenewals(limit: limit)
        }
    }

    // MARK: - What the clock has for each holding (`subscription_renewal.due_from`, migration 27)

    /// The most holdings one look at the store's clock handles (`dueHoldings`): the others are
    /// handled by the next look, their renewals and notifications dated as they fell due.
    static let holdingsPerLook = 10_000

    /// The holdings something may be due for at `now` (`due_from` at or before it), the longest
    /// due first, at most `limit` (`nil`: all); in the walks' order (by customer and group, the
    /// customer's own first, then the shares newest first).
    func dueHoldings(_ db: Database, at now: Int64, limit: Int? = holdingsPerLook) throws -> [HeldSubscription] {
        try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT customer_id, group_id, shared_original_id FROM (
                        SELECT customer_id, group_id, shared_original_id FROM subscription_renewal
                        WHERE due_from <= ? ORDER BY due_from LIMIT ?)
                    ORDER BY customer_id, group_id, shared_original_id = 0 DESC, shared_original_id DESC
                    """), arguments: [now, limit ?? -1]
        ).map(HeldSubscription.init)
    }

    /// Whether something may be due for a holding at `now`: one indexed read.
    func hasDueHoldings(_ db: Database, at now: Int64) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT 1 FROM subscription_renewal WHERE due_from <= ? LIMIT 1"), arguments: [now])
            ?? false
    }

    /// Gives each of `holdings`, just looked at `now`, its next moment (`nextMoment`).
    func scheduleNextLooks(_ db: Database, of holdings: [HeldSubscription], at now: Int64) throws {
        let update = try db.cachedStatement(
            sql: """
                UPDATE subscription_renewal SET due_from = ?
                WHERE customer_id = ? AND group_id = ? AND shared_original_id = ?
                """)
        for held in holdings {
            try update.execute(arguments: [
                try nextMoment(db, of: held, at: now), held.customer, held.group, held.sharedKey,
            ])
        }
    }

    /// Where the index is later than the truth: each holding whose next moment at the store's
    /// time (`nextMoment`) comes before its `due_from`, or has none, so that the store's looks
    /// would miss it (a renewal, an expiry, the end of a grace period or billing retry). Every
    /// holding of the store is read: a check for tests and the crash campaign, not for a look.
    package func dueIndexProblems() throws -> [String] {
        try read { db in
            let now = try storeNow(db)
            return try Row.fetchAll(
                db, sql: "SELECT customer_id, group_id, shared_original_id, due_from FROM subscription_renewal"
            ).compactMap { row in
                let held = HeldSubscription(row)
                guard let moment = try nextMoment(db, of: held, at: now) else { return nil }
                let dueFrom: Int64? = row["due_from"]
                guard dueFrom.map({ $0 > moment }) ?? true else { return nil }
                return "the subscription group \(held.group) of customer \(held.customer)"
                    + (held.sharedOriginal.map { " (shared, original \($0))" } ?? "")
                    + " has a moment at \(moment), and the store's clock would look at it "
                    + (dueFrom.map { "at \($0)" } ?? "never")
            }
        }
    }

    /// The next moment passing time does something to a holding looked at `now`: its latest
    /// period's end when it renews then and has not yet (more than the renewal limit fell due);
    /// else the first after `now` of its period's end, its grace period's and its billing
    /// retry's; `nil` when none is to come (only a change can bring one, and lowers the index).
    private func nextMoment(_ db: Database, of held: HeldSubscription, at now: Int64) throws -> Int64? {
        guard let latest = try latestPeriod(db, of: held), let end = latest.expirationDate?.ledgerMilliseconds else {
            return nil
        }
        let state = try renewalState(db, of: held)
        // No period starts at the store's last millisecond (`walkDueRenewals`).
        if end <= now, end < Self.latestStoreMilliseconds, try renewsAtItsEnd(db, held, state, latest: latest) {
            return end
        }
        return [end, state.billingIssue?.graceUntil, state.billingIssue?.retryUntil].compactMap { $0 }
            .filter { $0 > now }.min()
    }

    /// Stores one renewal: a `purchased` transaction of the step's product and period that
    /// keeps its chain's original id, quantity, account and storefront.
    private func insertRenewal(_ writer: TransactionWriter, _ step: RenewalStep) throws -> PaymentTransaction {
        var row = try NewTransactionRow(
            writer.db, productID: step.productID, owner: Owner(of: step.chain), state: .purchased, at: writer.now)
        row.quantity = step.chain.quantity
        row.appAccountToken = step.chain.appAccountToken
        row.applicationUsername = step.chain.applicationUsername
        row.storefront = step.chain.storefront
        row.purchaseDate = step.start
        row.original = (step.chain.originalID, step.chain.originalPurchaseDate.ledgerMilliseconds)
        row.expirationDate = step.end
        row.offer = step.offer
        row.reason = .renewal
        let renewal = try writer.insert(row)
        if let charge = step.charge { try recordCharge(writer.db, of: renewal.id, price: charge) }
        try notify(writer, step.recoversFromBillingIssue ? .renewedAfterBillingIssue : .renewed, about: renewal)
        return renewal
    }

    /// The end of a period that starts at `start` (which anchors its calendar), at the store's
    /// time rate: the periods of `run`'s offer, or one period of the plan.
    private func periodsEnd(_ run: OfferRun?, plan: SubscriptionPlan, rate: TimeRate, start: Int64) -> Int64 {
        var anchor = start
        return periodsEnd(run, plan: plan, rate: rate, anchor: &anchor, start: start)
    }

    /// Gives `row`, a purchase about to be added, its group's original transaction when it is a
    /// subscription of the customer's own (`ownOriginal`); a family member's share
    /// (`sharedByFamily`) starts its own, and so does the group's first purchase.
    func keepGroupsOriginal(_ db: Database, _ row: inout NewTransactionRow, sharedByFamily: Bool) throws {
        guard row.productType == .autoRenewable, !sharedByFamily, let group = row.subscriptionGroupID,
            let original = try ownOriginal(db, of: .own(group, customer: row.customerID))
        else { return }
        row.original = original
    }

    /// The original transaction of the customer's own subscription of `group`, and its purchase
    /// date: what a new purchase in the group keeps (StoreKit's `originalID`, "the ID of the
    /// original transaction for productID or subscriptionGroupID if this is a subscription"), across
    /// upgrades, downgrades, crossgrades, lapses, resubscriptions and offers. `nil` before the
    /// group's first purchase. A ledger made before kept one chain per purchase: its new purchases
    /// join the chain of the group's latest period that covered time (a pending downgrade's
    /// payment of an older release covered none), else of its latest purchase.
    private func ownOriginal(_ db: Database, of held: HeldSubscription) throws -> (id: UInt64, purchaseDate: Int64)? {
        try Row.fetchOne(
            try db.cachedStatement(
                sql: """
                    SELECT original_id, original_purchase_date FROM transactions
                    WHERE subscription_group_id = :group AND state = 'purchased' AND restored_from IS NULL
                      AND \(HeldSubscription.transactionsCondition)
                    ORDER BY expiration_date > purchase_date DESC, purchase_date DESC, id DESC LIMIT 1
                    """),
            arguments: held.periodArguments
        ).map { (UInt64($0[0] as Int64), $0[1]) }
    }

    /// Whether anything of the holding was ever bought (besides transaction `id`): the
    /// introductory offer is then spent. A family member's purchase shared with the customer
    /// does not spend the customer's.
    func hasBought(_ db: Database, of held: HeldSubscription, excluding id: UInt64) throws -> Bool {
        try Bool.fetchOne(
            try db.cachedStatement(
                sql: """
                    SELECT 1 FROM transactions
                    WHERE subscription_group_id = :group AND state IN ('purchased', 'restored') AND id <> :id
                      AND \(HeldSubscription.transactionsCondition)
                    LIMIT 1
                    """),
            arguments: held.periodArguments + ["id": Int64(id)]) != nil
    }

    /// The offer the next renewal of `chain` into `productID` is charged at, if any: a
    /// promotional offer or offer code waiting for it (`pendingOffer`, when the product has it),
    /// else the chain's pay-as-you-go offer while fewer of the chain's latest periods than the
    /// offer counts carried it. Renewing to another product ends it.
    func renewalOffer(
        _ db: Database, chain: PaymentTransaction, renewingTo productID: String, plan: SubscriptionPlan,
        pendingOffer: PendingOffer?
    ) throws -> OfferRun? {
        if let pendingOffer, let waiting = plan.redeemable(pendingOffer.type, pendingOffer.id) {
            return plan.offerRun(waiting.offer, pending: true)
        }
        guard productID == chain.productID, let offer = chain.offer, offer.paymentMode == .payAsYouGo,
            var run = plan.offerRun(offer, pending: false)
        else { return nil }
        // The chain's latest periods, newest first, as many as the offer has: those at its end
        // that carry the offer were charged at it, back to the purchase that began the run (the
        // chain is the group's: an earlier run of the same offer, before a lapse, is another run).
        let recent = try Row.fetchAll(
            try db.cachedStatement(
                sql: """
                    SELECT offer_type, offer_id, reason FROM transactions
                    WHERE original_id = ? AND state = 'purchased' AND expiration_date > purchase_date
                    ORDER BY purchase_date DESC, id DESC LIMIT ?
                    """),
            arguments: [Int64(chain.originalID), run.renewalsLeft])
        let carrying = recent.prefix {
            ($0["offer_type"] as String?) == offer.type.rawValue && ($0["offer_id"] as String?) == offer.id
        }
        let began = carrying.firstIndex { ($0["reason"] as String?) == PaymentTransaction.Reason.purchase.rawValue }
        let charged = began.map { carrying.distance(from: carrying.startIndex, to: $0) + 1 } ?? carrying.count
        run.renewalsLeft -= charged
        return run.renewalsLeft > 0 ? run : nil
    }

    /// The end of the renewal starting at `start`: the periods of `run`'s offer, or one period
    /// of the plan.
    func periodsEnd(
        _ run: OfferRun?, plan: SubscriptionPlan, rate: TimeRate, anchor: inout Int64, start: Int64
    ) -> Int64 {
        var end = start
        for _ in 0..<(run?.periodsPerRenewal ?? 1) {
            end = PeriodCalendar.end(of: run?.offer.period ?? plan.period, rate: rate, anchor: &anchor, start: end)
        }
        return end
    }

    struct SubscriptionPlan {
        let level: Int
        let period: SubscriptionPeriod
        /// The product's introductory offer, as a transaction records it, with its period count.
        let introductoryOffer: (offer: TransactionOffer, periodCount: Int)?
        /// The product's promotional offers by identifier, each with its period count.
        let promotionalOffers: [String: (offer: TransactionOffer, periodCount: Int)]
        /// The product's offer codes by reference name, each with its period count.
        let codeOffers: [String: (offer: TransactionOffer, periodCount: Int)]
        /// Who may redeem each offer code, by reference name.
        let codeEligibility: [String: Set<CodeOffer.Customer>]
        /// The product's win-back offers, as the catalog lists them.
        let winBackOffers: [WinBackOffer]

        /// The promotional offer or offer code `id`, as a transaction records it, with its period
        /// count; `nil` for another type, or when the plan has none by that name.
        func redeemable(
            _ type: TransactionOffer.OfferType, _ id: String
        ) -> (offer: TransactionOffer, periodCount: Int)? {
            switch type {
            case .promotional: promotionalOffers[id]
            case .code: codeOffers[id]
            case .winBack:
                winBackOffers.first { $0.offerID == id }.map {
                    (
                        TransactionOffer(
                            type: .winBack, id: id, paymentMode: $0.offer.paymentMode, period: $0.offer.period),
                        $0.offer.appliedPeriodCount
                    )
                }
            case .introductory: nil
            }
        }

        /// How renewals charge `offer` (one of this plan's): a free or pay-up-front offer is one
        /// renewal of all its periods, pay as you go one renewal per period. `pending`: from its
        /// first period; otherwise the caller counts the periods already charged.
        func offerRun(_ offer: TransactionOffer, pending: Bool) -> OfferRun? {
            let count =
                offer.type == .introductory
                ? introductoryOffer?.periodCount : offer.id.flatMap { redeemable(offer.type, $0)?.periodCount }
            guard let count else { return nil }
            return offer.paymentMode == .payAsYouGo
                ? OfferRun(offer: offer, periodsPerRenewal: 1, renewalsLeft: count)
                : OfferRun(offer: offer, periodsPerRenewal: pending ? count : 1, renewalsLeft: 1)
        }
    }

    /// The renewals an offer still applies to.
    struct OfferRun {
        let offer: TransactionOffer
        /// How many periods of the offer one renewal covers.
        let periodsPerRenewal: Int
        var renewalsLeft: Int

        /// The run after one more renewal at the offer; `nil` when that was its last.
        var afterOneRenewal: OfferRun? {
            var next = self
            next.renewalsLeft -= 1
            return next.renewalsLeft > 0 ? next : nil
        }
    }

    func subscriptionPlan(_ db: Database, productID: String) throws -> SubscriptionPlan? {
        guard
            let row = try Row.fetchOne(
                try db.cachedStatement(
                    sql: "SELECT subscription_group_level, subscription_period, offers FROM products WHERE id = ?"),
                arguments: [productID]),
            let level = row["subscription_group_level"] as Int?,
            let period = (row["subscription_period"] as String?).flatMap(SubscriptionPeriod.init(iso8601:))
        else { return nil }
        let offers = ProductOffersColumn(json: row["offers"])
        func recorded(
            _ offer: SubscriptionOffer, type: TransactionOffer.OfferType
        ) -> (offer: TransactionOffer, periodCount: Int)? {
            (
                TransactionOffer(
                    type: type, id: type == .introductory ? nil : offer.id, paymentMode: offer.paymentMode,
                    period: offer.period),
                offer.appliedPeriodCount
            )
        }
        var promotional: [String: (offer: TransactionOffer, periodCount: Int)] = [:]
        for offer in offers?.promotional ?? [] {
            if let id = offer.id, promotional[id] == nil { promotional[id] = recorded(offer, type: .promotional) }
        }
        var codes: [String: (offer: TransactionOffer, periodCount: Int)] = [:]
        var eligibility: [String: Set<CodeOffer.Customer>] = [:]
        for code in offers?.codes ?? [] where codes[code.referenceName] == nil {
            codes[code.referenceName] = recorded(code.offer, type: .code)
            eligibility[code.referenceName] = code.eligibility
        }
        return SubscriptionPlan(
            level: level, period: period,
            introductoryOffer: offers?.introductory.flatMap { recorded($0, type: .introductory) },
            promotionalOffers: promotional, codeOffers: codes, codeEligibility: eligibility,
            winBackOffers: offers?.winBacks ?? [])
    }

    /// Whether the holding (a customer's own subscription of a group) covers `now`.
    func isSubscribed(_ db: Database, of held: HeldSubscription, at now: Int64) throws -> Bool {
        try coveringSubscription(db, of: held, at: now, excluding: 0) != nil
    }

    /// The holding's period that covers `now`: of two (a refund of an older period reversed
    /// after a newer one was bought), the one that began last, as `latestPeriod` picks.
    private func coveringSubscription(
        _ db: Database, of held: HeldSubscription, at now: Int64, excluding id: UInt64
    ) throws -> PaymentTransaction? {
        try PaymentTransaction.fetchAll(
            db,
            sql: """
                WHERE subscription_group_id = :group AND state = 'purchased' AND revocation_date IS NULL
                  AND is_upgraded = 0 AND purchase_date <= :now AND expiration_date > :now AND id <> :id
                  AND \(HeldSubscription.transactionsCondition)
                ORDER BY purchase_date DESC, id DESC LIMIT 1
                """,
            arguments: held.periodArguments + ["now": now, "id": Int64(id)]
        ).first
    }

    /// Whether `transaction` is `held`'s latest period: `latestPeriod`'s query, asked for the
    /// id alone (no row is read whole).
    func isLatestPeriod(_ db: Database, _ transaction: PaymentTransaction, of held: HeldSubscription) throws -> Bool {
        try Int64.fetchOne(
            db, sql: "SELECT id FROM transactions " + Self.latestPeriodOfHolding, arguments: held.periodArguments)
            == Int64(transaction.id)
    }

    /// The holding's latest period: the one that began last (refunded ones included: a refund
    /// ends the chain, until a purchase after it begins a period again; a period refunded
    /// early keeps its later expiration, so the order is by start).
    func latestPeriod(_ db: Database, of held: HeldSubscription) throws -> PaymentTransaction? {
        try PaymentTransaction.fetchAll(db, sql: Self.latestPeriodOfHolding, arguments: held.periodArguments).first
    }

    /// The clauses that select a holding's latest period (`latestPeriod`, `isLatestPeriod`): a
    /// purchased period covering time, not replaced by an upgrade (a pending downgrade's payment
    /// has none of its own), the one that began last.
    private static let latestPeriodOfHolding = """
        WHERE subscription_group_id = :group AND state = 'purchased' AND is_upgraded = 0
          AND expiration_date > purchase_date AND \(HeldSubscription.transactionsCondition)
        ORDER BY purchase_date DESC, id DESC LIMIT 1
        """

    func subscriptionGroup(_ db: Database, productID: String) throws -> String {
        guard
            let row = try Row.fetchOne(
                try db.cachedStatement(sql: "SELECT type, subscription_group_id, app_id FROM products WHERE id = ?"),
                arguments: [productID]),
            // Another app's product is unknown to this one.
            appScope.id.map({ row["app_id"] == $0 }) ?? true
        else { throw UnknownProductError(productIdentifier: productID) }
        guard let group = row["subscription_group_id"] as String?, row["type"] == ProductType.autoRenewable.rawValue
        else {
            throw StoreControlError.notAutoRenewable(productID)
        }
        return group
    }

    /// A subscription's renewal state (`subscription_renewal`, per holding).
    struct RenewalState {
        var autoRenew = true
        var resumedAt: Int64 = 0
        var nextProductID: String?
        var periodAnchor: Int64?
        /// A renewal that failed on a billing issue, waiting for it to be resolved.
        var billingIssue: BillingIssue?
        /// A promotional offer or offer code redeemed while subscribed: the next renewal is
        /// charged at it.
        var pendingOffer: PendingOffer?
    }

    /// An offer redeemed while subscribed, waiting for the next renewal: its type and identifier.
    struct PendingOffer {
        let type: TransactionOffer.OfferType
        let id: String

        init(type: TransactionOffer.OfferType, id: String) {
            self.type = type
            self.id = id
        }

        /// `offer`, which a payment redeemed (it has an identifier: promotional or code).
        init?(_ offer: TransactionOffer) {
            guard let id = offer.id else { return nil }
            self.init(type: offer.type, id: id)
        }
    }

    func renewalState(_ db: Database, of held: HeldSubscription) throws -> RenewalState {
        guard
            let row = try Row.fetchOne(
                try db.cachedStatement(
                    sql: """
                        SELECT auto_renew, resumed_at, next_product_id, period_anchor, billing_issue_since, grace_until, retry_until,
                            pending_offer_id, pending_offer_type
                        FROM subscription_renewal WHERE customer_id = ? AND group_id = ? AND shared_original_id = ?
                        """),
                arguments: [held.customer, held.group, held.sharedKey])
        else { return RenewalState() }
        let issue = (row["billing_issue_since"] as Int64?).flatMap { since in
            (row["retry_until"] as Int64?).map {
                BillingIssue(since: since, graceUntil: row["grace_until"], retryUntil: $0)
            }
        }
        return RenewalState(
            autoRenew: row["auto_renew"], resumedAt: row["resumed_at"], nextProductID: row["next_product_id"],
            periodAnchor: row["period_anchor"], billingIssue: issue,
            pendingOffer: (row["pending_offer_id"] as String?).map { id in
                // A ledger migrated from before offer codes waits only for promotional offers.
                PendingOffer(
                    type: (row["pending_offer_type"] as String?).flatMap(TransactionOffer.OfferType.init)
                        ?? .promotional,
                    id: id)
            })
    }

    func saveRenewalState(_ db: Database, of held: HeldSubscription, _ state: RenewalState) throws {
        try db.run(
            sql: """
                INSERT INTO subscription_renewal (
                    customer_id, group_id, shared_original_id, auto_renew, resumed_at, next_product_id, period_anchor,
                    billing_issue_since, grace_until, retry_until, pending_offer_id, pending_offer_type)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (customer_id, group_id, shared_original_id) DO UPDATE SET
                    auto_renew = excluded.auto_renew, resumed_at = excluded.resumed_at,
                    next_product_id = excluded.next_product_id, period_anchor = excluded.period_anchor,
                    billing_issue_since = excluded.billing_issue_since, grace_until = excluded.grace_until,
                    retry_until = excluded.retry_until, pending_offer_id = excluded.pending_offer_id,
                    pending_offer_type = excluded.pending_offer_type
                """,
            arguments: [
                held.customer, held.group, held.sharedKey, state.autoRenew, state.resumedAt, state.nextProductID,
                state.periodAnchor,
                state.billingIssue?.since, state.billingIssue?.graceUntil, state.billingIssue?.retryUntil,
                state.pendingOffer?.id, state.pendingOffer?.type.rawValue,
            ])
    }

    /// A transaction with the restored copies that mirror it.
    func withRestoredCopies(_ db: Database, _ transaction: PaymentTransaction) throws -> [PaymentTransaction] {
        [transaction]
            + (try PaymentTransaction.fetchAll(
                db, sql: "WHERE restored_from = ? ORDER BY id", arguments: [Int64(transaction.id)]))
    }

    /// Moves a subscription's expiration to `now` when it is later, with its restored copies.
    private func endPeriod(_ writer: TransactionWriter, _ transaction: PaymentTransaction) throws {
        for period in try withRestoredCopies(writer.db, transaction) {
            guard let expiration = period.expirationDate?.ledgerMilliseconds, expiration > writer.now else { continue }
            try writer.moveExpiration(of: period, to: writer.now)
        }
    }

    private func markUpgraded(_ writer: TransactionWriter, _ transaction: PaymentTransaction) throws {
        for period in try withRestoredCopies(writer.db, transaction) where !period.isUpgraded {
            try writer.markUpgraded(period)
        }
    }
}

/// The store's billing switches (Xcode's `shouldEnterBillingRetryOnRenewal` and
/// `billingGracePeriodIsEnabled`), read once per walk.
struct BillingSwitches {
    let retryOnRenewal: Bool
    let gracePeriod: Bool

    init(_ settings: StoreSettings) {
        retryOnRenewal = settings.billingRetryOnRenewal
        gracePeriod = settings.billingGracePeriodEnabled
    }
}

extension Ledger.RenewalState {
    /// The billing issue of `latest` (its holding's latest period): the one recorded when its
    /// renewal failed, in billing retry or expired after it; `nil` when none, or when the one
    /// recorded is stale (of a period since deleted or replaced).
    func billingIssue(of latest: PaymentTransaction) -> BillingIssue? {
        guard let billingIssue, billingIssue.concerns(periodEndingAt: latest.expirationDate?.ledgerMilliseconds)
        else { return nil }
        return billingIssue
    }

    /// The billing issue of `latest` while the store still retries it (`now` within the
    /// retries) and the period was not refunded; `nil` otherwise.
    func liveBillingIssue(of latest: PaymentTransaction, at now: Int64) -> BillingIssue? {
        guard latest.revocationDate == nil, let issue = billingIssue(of: latest), issue.isRetried(at: now) else {
            return nil
        }
        return issue
    }
}
