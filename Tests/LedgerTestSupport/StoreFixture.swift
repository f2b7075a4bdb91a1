public import Foundation
import LedgerTesting
public import StoreLedger
public import StoreTesting

/// A fixed instant, so that dates in assertions are exact.
public let storeEpoch = Date(timeIntervalSince1970: 1_800_000_000)

/// A launched queue on a new ledger with the sample catalog, a fixed clock (moved only by the
/// store's clock controls) and a test session, for one test.
public struct StoreFixture: Sendable {
    public let queue: PaymentQueue
    public let session: StoreTestSession
    public let directory: String
    public var ledger: Ledger { queue.ledger }
    public var path: String { directory + "/ledger.sqlite" }

    public static let configuration = LedgerConfiguration(clock: .fixed(storeEpoch))

    public static func with(_ body: (StoreFixture) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            try SampleCatalog.ledger(in: directory, configuration: configuration).close()
            let queue = try PaymentQueue(path: directory + "/ledger.sqlite", configuration: configuration)
            try await body(StoreFixture(queue: queue, session: StoreTestSession(queue: queue), directory: directory))
        }
    }

    /// A new launch on the same file.
    public func relaunch() throws -> PaymentQueue {
        try PaymentQueue(path: path, configuration: Self.configuration)
    }

    @discardableResult
    public func buy(
        _ productID: String, account: UUID? = nil, outcome: SimulatedOutcome? = nil
    ) async throws -> PaymentTransaction {
        try await queue.add(Payment(productID: productID, appAccountToken: account, simulatedOutcome: outcome))
    }

    public func now() throws -> Date {
        try ledger.storeDate()
    }
}

public let day: TimeInterval = 86_400
