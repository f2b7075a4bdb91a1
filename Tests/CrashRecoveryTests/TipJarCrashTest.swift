import Foundation
import LedgerTesting
import StoreLedger

/// An app's purchase code: it sells tips (consumables), and promises that every tip it was
/// told is bought ends up finished once the app has launched again.
struct TipJar {
    let queue: PaymentQueue

    /// Buys a tip; the returned transaction is what the app shows as bought.
    func buy(_ product: String, key: String) async throws -> PaymentTransaction {
        try await queue.add(Payment(productID: product, idempotencyKey: key))
    }

    /// At launch: finishes whatever the previous run left unfinished.
    func finishLeftovers() async throws -> [PaymentTransaction] {
        try await queue.finishTransactions(queue.transactions.filter(\.state.canBeFinished).map(\.id)).transactions
    }
}

/// The tip jar under crash test: seeded purchases, finishes and relaunches.
struct TipJarSubject: CrashTestSubject {
    func prepare(_ context: CrashTestContext) async throws {
        let catalog = context.directory + "/tips.storekit"
        try Data(
            """
            {"products": [
              {"productID": "tip.small", "type": "Consumable", "displayPrice": "0.99"},
              {"productID": "tip.large", "type": "Consumable", "displayPrice": "4.99"}
            ]}
            """.utf8
        ).write(to: URL(fileURLWithPath: catalog))
        let ledger = try Ledger.open(at: context.ledgerPath, configuration: context.configuration)
        defer { try? ledger.close() }
        try ProductCatalog(ledger: ledger).importConfigurations(at: [catalog])
    }

    func run(_ context: CrashTestContext) async throws {
        var random = context.random()
        var ledger = try Ledger.open(at: context.ledgerPath, configuration: context.configuration)
        var jar = TipJar(queue: try PaymentQueue(ledger: ledger))
        for step in 0..<context.operations {
            switch random.next() % 10 {
            case 0..<6:
                let product = random.next() % 2 == 0 ? "tip.small" : "tip.large"
                let bought = try await jar.buy(product, key: "tip-\(context.seed)-\(step)")
                context.log.record(Acknowledgement(kind: .purchase, transaction: bought))
            case 6..<9:
                context.log.record(.finish, try await jar.finishLeftovers())
            default:
                try ledger.close()  // the app quits and launches again
                ledger = try Ledger.open(at: context.ledgerPath, configuration: context.configuration)
                jar = TipJar(queue: try PaymentQueue(ledger: ledger))
            }
        }
        context.losePower()  // before the close, so that nothing unsynced survives
        try? ledger.close()
    }

    /// The app's promise: after a launch and `finishLeftovers`, no tip it was told of is
    /// unfinished.
    func check(_ context: CrashTestContext, acknowledged: [Acknowledgement]) async -> [InvariantViolation] {
        do {
            let ledger = try Ledger.open(at: context.ledgerPath, configuration: context.configuration)
            defer { try? ledger.close() }
            _ = try await TipJar(queue: try PaymentQueue(ledger: ledger)).finishLeftovers()
            let unfinished = try ledger.unfinishedTransactions().filter { $0.state != .deferred }
            return unfinished.map { InvariantViolation(invariant: 0, message: "tip \($0.id) is still unfinished") }
        } catch {
            return [InvariantViolation(invariant: 0, message: "the tip jar failed to launch: \(error)")]
        }
    }
}
