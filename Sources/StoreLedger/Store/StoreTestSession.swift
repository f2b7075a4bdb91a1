import Foundation

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
    public let queue: PaymentQueue
    public var ledger: Ledger { queue.ledger }

    public init(queue: PaymentQueue) {
        self.queue = queue
    }

    // MARK: - Settings

    public func settings() throws -> StoreSettings {
        try StoreSettings(ledger: ledger)
    }

    /// Changes settings, all in one commit.
    @discardableResult
    public func update(_ change: (inout StoreSettings) throws -> Void) throws -> StoreSettings {
        var settings = try settings()
        try change(&settings)
        try ledger.setStoreSettings(settings.storedValues)
        return settings
    }

    /// Applies the settings of a StoreKit configuration file (storefront, locale, Ask to Buy,
    /// failing transactions, time rate).
    @discardableResult
    public func applySettings(of configuration: StoreKitConfiguration) throws -> StoreSettings {
        try update { $0 = $0.applying(configuration.settings) }
    }

    // MARK: - Transactions

    public func approveAskToBuyTransaction(_ id: UInt64) async throws -> PaymentTransaction {
        try await queue.approve(id)
    }

    public func declineAskToBuyTransaction(_ id: UInt64) async throws -> PaymentTransaction {
        try await queue.decline(id)
    }

    /// Resolves an interrupted purchase; returns the replacement purchase when it arrives now
    /// (the failed transaction was finished already).
    @discardableResult
    public func resolveIssueForTransaction(_ id: UInt64) async throws -> PaymentTransaction? {
        guard let replacement = try ledger.resolveInterruptedPurchase(id) else { return nil }
        return try await queue.deliver([replacement]).first
    }

    /// Refunds a purchased or restored transaction, with the purchase and its restored copies;
    /// observers get the update. Returns the transaction asked for.
    @discardableResult
    public func refundTransaction(_ id: UInt64, reason: RevocationReason = .other) async throws -> PaymentTransaction {
        try await queue.deliver(try ledger.refund(id, reason: reason.rawValue))[0]
    }

    /// Deletes every transaction, unfinished ones included.
    @discardableResult
    public func clearTransactions() throws -> Int {
        try ledger.clearTransactions()
    }

    public func deleteTransaction(_ id: UInt64) throws {
        try ledger.deleteTransaction(id)
    }

    // MARK: - Subscriptions and time

    @discardableResult
    public func forceRenewalOfSubscription(_ productID: String) async throws -> PaymentTransaction {
        try await queue.deliver([try ledger.forceRenewal(of: productID)])[0]
    }

    @discardableResult
    public func expireSubscription(_ productID: String) throws -> PaymentTransaction {
        try ledger.expireSubscription(productID)
    }

    public func setAutoRenew(_ enabled: Bool, for productID: String) throws {
        try ledger.setAutoRenew(of: productID, enabled: enabled)
    }

    /// Moves the store clock forward, then makes and delivers the renewals that fell due.
    @discardableResult
    public func advanceClock(by interval: TimeInterval) async throws -> [PaymentTransaction] {
        try ledger.advanceClock(by: interval)
        return try await queue.processSubscriptionRenewals()
    }

    /// Sets the store clock (never backwards), then makes and delivers the renewals that fell due.
    @discardableResult
    public func setClock(to date: Date) async throws -> [PaymentTransaction] {
        try ledger.setClock(to: date)
        return try await queue.processSubscriptionRenewals()
    }
}

/// Why a transaction was refunded (StoreKit's `Transaction.RevocationReason` raw values).
public enum RevocationReason: Int, Sendable, NamedCode {
    case other = 0
    case developerIssue = 1
}
