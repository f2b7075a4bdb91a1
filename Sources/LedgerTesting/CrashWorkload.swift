import Foundation
public import StoreLedger
import StoreTesting

/// A seeded random mix of what an app and the store do to a ledger: purchases with every
/// outcome, Ask to Buy answers, finishes, launches, restores, renewals, refunds and interrupted
/// purchases; with `customers`, each on one of the store's devices (five customers, one of
/// them with an iPhone and an iPad, two of them a family), picked at random, and the store's
/// own writes besides: family purchases and a member leaving, the server's (Finish
/// Transaction, Set App Account Token, the renewal extensions of one subscription and of all)
/// and its notification sender's records. The same seed performs the same operations, so a failing
/// run can be replayed.
public struct CrashWorkload: Sendable {
    /// The seed that picks every operation and its arguments: the same seed performs the same operations.
    public var seed: UInt64
    /// How many operations to draw; one with nothing to act on (no deferred transaction to answer,
    /// say) does nothing, and the first error stops the rest.
    public var operations: Int
    /// Another process runs a workload on the same ledger: an Ask to Buy answer or a refund
    /// that the other process made first (between this one's read and its write) is refused
    /// by the ledger, as it must be, and the workload moves on instead of stopping. Off, any
    /// refusal stops the run: one workload alone never loses such a race.
    public var sharesLedger: Bool
    /// The store has several customers and devices (`prepareLedger(at:configuration:customers:)`),
    /// and each operation runs on one of them: the guarantees are the store file's, whoever
    /// writes. Off, the store's one customer and device do everything (the sequences of the
    /// seeds of before).
    public var customers: Bool

    /// A workload of `operations` operations drawn from `seed`; `sharesLedger` and `customers`
    /// off by default.
    public init(seed: UInt64, operations: Int, sharesLedger: Bool = false, customers: Bool = false) {
        self.seed = seed
        self.operations = operations
        self.sharesLedger = sharesLedger
        self.customers = customers
    }

    /// A refusal that only another process's change to the same transaction explains.
    private static func lostRace(_ error: any Error) -> Bool {
        switch error {
        case PaymentQueueError.notDeferred, StoreControlError.alreadyRefunded: true
        default: false
        }
    }

    /// The products a workload buys; `install(in:)` imports them.
    public static let catalog = """
        {
          "products": [
            {"productID": "workload.nonconsumable.a", "type": "NonConsumable", "displayPrice": "0.99"},
            {"productID": "workload.nonconsumable.b", "type": "NonConsumable", "displayPrice": "1.99"},
            {"productID": "workload.consumable", "type": "Consumable", "displayPrice": "0.49"},
            {"productID": "workload.family.pass", "type": "NonConsumable", "displayPrice": "2.99", "familyShareable": true}
          ],
          "nonRenewingSubscriptions": [
            {"productID": "workload.season", "type": "NonRenewingSubscription", "displayPrice": "4.99"}
          ],
          "subscriptionGroups": [
            {"id": "workload.group", "name": "Workload", "subscriptions": [
              {"productID": "workload.monthly", "type": "RecurringSubscription", "displayPrice": "2.99",
               "groupNumber": 1, "recurringSubscriptionPeriod": "P1M"},
              {"productID": "workload.weekly", "type": "RecurringSubscription", "displayPrice": "0.99",
               "groupNumber": 2, "recurringSubscriptionPeriod": "P1W"}
            ]},
            {"id": "workload.family.group", "name": "Family", "subscriptions": [
              {"productID": "workload.family.monthly", "type": "RecurringSubscription", "displayPrice": "5.99",
               "groupNumber": 1, "recurringSubscriptionPeriod": "P1M", "familyShareable": true}
            ]}
          ]
        }
        """

    /// Creates the ledger at `path` (when missing) and imports the workload's catalog; with
    /// `customers`, adds Alice, with an iPhone and an iPad, Bob, and Carol, with a phone, and
    /// Dave, a family.
    public static func prepareLedger(
        at path: String, configuration: LedgerConfiguration, customers: Bool = false
    ) throws {
        let catalogPath = path + ".catalog-\(getpid()).storekit"
        try Data(catalog.utf8).write(to: URL(fileURLWithPath: catalogPath))
        defer { try? FileManager.default.removeItem(atPath: catalogPath) }
        let ledger = try Ledger.open(at: path, mode: .createIfMissing, configuration: configuration)
        defer { try? ledger.close() }
        try ProductCatalog(ledger: ledger).importConfigurations(at: [catalogPath])
        // Every change Apple notifies records its notification in its commit (invariant 7);
        // nothing is sent (no server runs).
        _ = try StoreTestSession(ledger: ledger).set(.notificationURL, to: notificationURL)
        // Several customers and devices write at once (the guarantees are the store file's):
        // added once, when two processes share the ledger.
        guard customers else { return }
        let smiths = "smiths"
        for (name, family) in [("alice", nil), ("bob", nil), ("carol", smiths), ("dave", smiths)]
        where try ledger.customer(named: name) == nil {
            try ledger.addCustomer(Customer(name: name, family: family))
        }
        let alice = try ledger.forCustomer("alice")
        for device in ["iphone", "ipad"] where try !alice.deviceNames().contains(device) {
            try alice.addDevice(device)
        }
        let carol = try ledger.forCustomer("carol")
        if try !carol.deviceNames().contains("phone") { try carol.addDevice("phone") }
    }

    /// The notification URL of the campaign's stores (never served).
    public static let notificationURL = "http://127.0.0.1:9/crash-campaign"

    /// The store's devices a workload acts on, each a queue launched on `ledger`'s file: with
    /// `customers`, the first customer's, Alice's iPhone and iPad, Bob's, Carol's phone and
    /// Dave's (the family's last); else the store's one.
    func devices(of ledger: Ledger) throws -> [PaymentQueue] {
        guard customers else { return [try PaymentQueue(ledger: ledger)] }
        let alice = try ledger.forCustomer("alice")
        return try [
            ledger.forCustomer(Customer.defaultName), alice.forDevice("iphone"), alice.forDevice("ipad"),
            ledger.forCustomer("bob"), ledger.forCustomer("carol").forDevice("phone"), ledger.forCustomer("dave"),
        ].map { try PaymentQueue(ledger: $0) }
    }

    /// How many devices of `devices(of:)` belong to the family (the last ones).
    static let familyDevices = 2

    private static let products = [
        "workload.nonconsumable.a", "workload.nonconsumable.b", "workload.consumable", "workload.season",
        "workload.monthly", "workload.weekly",
    ]

    /// Runs the operations against the ledger at `path`, recording every acknowledged change
    /// in `log` as it is returned. Stops at the first error (a power loss, an injected I/O
    /// error) and returns it; `nil` when every operation ran. With `powerLossAtEnd`, the power
    /// goes before the ledger is closed (closing checkpoints, which syncs what `normal`
    /// durability left unsynced).
    public func run(
        ledgerAt path: String, configuration: LedgerConfiguration, log: AcknowledgementLog, powerLossAtEnd: Bool = false
    ) async -> (any Error)? {
        var random = SplitMix64(seed: seed)
        var ledger: Ledger?
        defer {
            if powerLossAtEnd { FaultInjection.powerLoss() }
            try? ledger?.close()
        }
        do {
            FaultInjection.label("launch")
            ledger = try Ledger.open(at: path, configuration: configuration)
            var devices = try self.devices(of: ledger!)
            for index in 0..<operations {
                // One device draws nothing: the sequences of a store of one stay as they were.
                let queue = devices.count == 1 ? devices[0] : devices[Int(random.next() % UInt64(devices.count))]
                // A store of customers draws among the store's own writes too (`storeOperation`).
                let roll = random.next() % (customers ? 100 + Self.storeOperations : 100)
                FaultInjection.label(Self.label(of: roll))
                switch roll {
                case 100...:
                    try await storeOperation(
                        roll - 100, &random, ledger: ledger!, family: Array(devices.suffix(Self.familyDevices)),
                        log: log)
                case 40..<45:
                    // A burst of payments at once: they share commits (group commit).
                    let burst = (0..<4).map { _ in Self.products[Int(random.next() % UInt64(Self.products.count))] }
                    let current = queue
                    let bought = try await withThrowingTaskGroup(of: PaymentTransaction.self) { group in
                        for product in burst { group.addTask { try await current.add(Payment(productID: product)) } }
                        return try await group.reduce(into: []) { $0.append($1) }
                    }
                    for transaction in bought.sorted(by: { $0.id < $1.id }) {
                        log.record(Acknowledgement(kind: .purchase, transaction: transaction, burst: index))
                    }
                case 0..<40:
                    let outcomes: [SimulatedOutcome] = [
                        .success, .success, .success, .userCancelled, .deferred, .interrupted,
                        .failed(StoreErrorCode(rawValue: Int(random.next() % 6))!),
                    ]
                    let product = Self.products[Int(random.next() % UInt64(Self.products.count))]
                    let quantity = Int(random.next() % 3) + 1
                    // The key names the payment, so that a workload replayed on the same ledger
                    // retries the same payment (idempotently) rather than reusing a key for another.
                    let key = random.next() % 3 == 0 ? "workload-\(seed)-\(index)-\(product)-\(quantity)" : nil
                    let transaction = try await queue.add(
                        Payment(
                            productID: product, quantity: quantity, idempotencyKey: key,
                            simulatedOutcome: outcomes[Int(random.next() % UInt64(outcomes.count))]))
                    log.record(Acknowledgement(kind: .purchase, transaction: transaction))
                case 45..<55:
                    guard let id = try pick(&random, queue.transactions.filter { $0.state == .deferred }) else {
                        continue
                    }
                    let approve = random.next() % 2 == 0
                    do {
                        let transaction = approve ? try await queue.approve(id) : try await queue.decline(id)
                        log.record(Acknowledgement(kind: approve ? .approve : .decline, transaction: transaction))
                    } catch  where sharesLedger && Self.lostRace(error) { continue }
                case 55..<80:
                    guard let id = try pick(&random, queue.transactions.filter { $0.state.canBeFinished }) else {
                        continue
                    }
                    let result = try await queue.finishTransactions([id])
                    log.record(.finish, result.transactions)
                    log.record(.resolve, result.replacements)
                case 80..<85:
                    // A relaunch: a new ledger connection and queues; the first observer of each
                    // gets its queue.
                    try ledger?.close()
                    ledger = try Ledger.open(at: path, configuration: configuration)
                    devices = try self.devices(of: ledger!)
                    for device in devices {
                        log.record(.renewal, device.renewedAtLaunch)
                        _ = try await device.redeliverUnfinishedTransactions()
                    }
                case 85..<89:
                    let result = await queue.restoreCompletedTransactions()
                    if case .failed(let error) = result.outcome { throw error }
                    log.record(.restore, try result.restored.all())
                case 89..<93:
                    let renewed = try await StoreTestSession(queue: queue).advanceClock(
                        by: Double(random.next() % 40) * 86_400)
                    log.record(.renewal, renewed)
                case 93..<96:
                    let purchased = try ledger!.transactions(matching: TransactionFilter(state: .purchased, limit: 200))
                    // A downgrade's payment charged nothing: there is nothing to refund.
                    let changes = try ledger!.renewalChanges(among: purchased)
                    let refundable = purchased.filter { $0.revocationDate == nil && !changes.contains($0.id) }
                    guard let id = pick(&random, refundable) else { continue }
                    do {
                        log.record(.refund, [try await StoreTestSession(queue: queue).refundTransaction(id)])
                    } catch  where sharesLedger && Self.lostRace(error) { continue }
                default:
                    let interrupted = try ledger!.interruptedPurchases().filter { !$0.resolved }.map(\.transactionID)
                    guard !interrupted.isEmpty else { continue }
                    let id = interrupted[Int(random.next() % UInt64(interrupted.count))]
                    if let replacement = try await StoreTestSession(queue: queue).resolveIssueForTransaction(id) {
                        log.record(.resolve, [replacement])
                    }
                }
            }
            return nil
        } catch {
            return error
        }
    }

    /// The name of what a roll of `run` does, for the fault VFS's trace (`FaultInjection.label`).
    static func label(of roll: UInt64) -> String {
        switch roll {
        case 0..<40: "purchase"
        case 40..<45: "burst of purchases"
        case 45..<55: "Ask to Buy answer"
        case 55..<80: "finish"
        case 80..<85: "relaunch"
        case 85..<89: "restore"
        case 89..<93: "clock move and renewals"
        case 93..<96: "refund"
        case 96..<100: "resolved interrupted purchase"
        default: storeOperationLabel(roll - 100)
        }
    }

    func pick(_ random: inout SplitMix64, _ candidates: [PaymentTransaction]) -> UInt64? {
        candidates.isEmpty ? nil : candidates[Int(random.next() % UInt64(candidates.count))].id
    }
}

/// A small seeded generator (SplitMix64): the same seed gives the same sequence everywhere.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator starting from `seed`: equal seeds give equal sequences.
    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
