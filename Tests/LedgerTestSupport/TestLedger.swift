public import Foundation
import LedgerTesting
import SimulatedStore
public import StoreLedger

/// A fixed instant, so that dates in assertions are exact.
public let testEpoch = Date(timeIntervalSince1970: 1_800_000_000)

/// Runs `body` with a new ledger (fixed clock, sequential ids) in a fresh directory.
public func withLedger(
    durability: Durability = .full, idGenerator: TransactionIDGenerator = .sequential,
    _ body: (Ledger, String) async throws -> Void
) async throws {
    try await withLedgerResult(durability: durability, idGenerator: idGenerator, body)
}

/// `withLedger`, for a body that returns a value.
@discardableResult
public func withLedgerResult<T>(
    durability: Durability = .full, idGenerator: TransactionIDGenerator = .sequential,
    _ body: (Ledger, String) async throws -> T
) async throws -> T {
    try await withTemporaryDirectory { directory in
        let configuration = LedgerConfiguration(
            durability: durability, clock: .fixed(testEpoch), idGenerator: idGenerator)
        let ledger = try Ledger.open(
            at: directory + "/ledger.sqlite", mode: .createIfMissing, configuration: configuration)
        try ledger.saveProducts([
            Product(id: "consumable", type: .consumable, price: 0.99),
            Product(id: "nonconsumable", type: .nonConsumable, price: Decimal(string: "1.99")!),
            Product(
                id: "monthly", type: .autoRenewable, price: Decimal(string: "4.99")!,
                subscription: SubscriptionInfo(
                    groupID: "g", groupName: "Group", level: 1, period: SubscriptionPeriod(iso8601: "P1M")!)),
        ])
        defer { try? ledger.close() }
        return try await body(ledger, directory)
    }
}

extension Ledger {
    /// One delivery of every unfinished transaction, as a single batch.
    public func recordDeliveryOfUnfinishedTransactions() throws -> [PaymentTransaction] {
        try recordDeliveryOfUnfinishedTransactions(after: 0, through: UInt64(Int64.max), limit: Int(Int32.max))
    }
}
