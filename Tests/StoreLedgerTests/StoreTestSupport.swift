import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger

/// A fixed instant, so that dates in assertions are exact.
let storeEpoch = Date(timeIntervalSince1970: 1_800_000_000)

/// A launched queue on a new ledger with the sample catalog, a fixed clock (moved only by the
/// store's clock controls) and a test session, for one test.
struct StoreFixture {
    let queue: PaymentQueue
    let session: StoreTestSession
    let directory: String
    var ledger: Ledger { queue.ledger }
    var path: String { directory + "/ledger.sqlite" }

    static let configuration = LedgerConfiguration(clock: .fixed(storeEpoch))

    static func with(_ body: (StoreFixture) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            try SampleCatalog.ledger(in: directory, configuration: configuration).close()
            let queue = try PaymentQueue(path: directory + "/ledger.sqlite", configuration: configuration)
            try await body(StoreFixture(queue: queue, session: StoreTestSession(queue: queue), directory: directory))
        }
    }

    /// A new launch on the same file.
    func relaunch() throws -> PaymentQueue {
        try PaymentQueue(path: path, configuration: Self.configuration)
    }

    @discardableResult
    func buy(
        _ productID: String, account: UUID? = nil, outcome: SimulatedOutcome? = nil
    ) async throws -> PaymentTransaction {
        try await queue.add(Payment(productID: productID, appAccountToken: account, simulatedOutcome: outcome))
    }

    func now() throws -> Date {
        try ledger.storeDate()
    }
}

let day: TimeInterval = 86_400
