import AppStoreServer
import Crypto
import Foundation
import StoreLedger

/// The rows of a store of many customers (`--workloads customers`): Get Transaction Info under
/// `wrk` on a store of 10,000 customers with 10 transactions each and on one of 100,000
/// customers, each against a store of one customer with as many transactions measured in the
/// same run; a launch of one customer's device in the store of 100,000; the mass extension of
/// 10,000 subscribers; `ledger serve`'s peak memory.
extension Bench {
    /// The unfinished transactions of the customer whose device launches.
    static let launchedUnfinished = 100

    mutating func customers() async throws -> [BenchCommand.Result] {
        var results: [BenchCommand.Result] = []
        if let wrk = Self.executable(named: "wrk") {
            for store in plan.customerStores {
                results += try await customerLoad(wrk, store)
            }
        } else {
            say("wrk is not installed (apt-get install wrk): the customer server rows are skipped")
            results.append(
                .skipped(
                    "Get Transaction Info on stores of many customers",
                    because: "wrk is not installed (apt-get install wrk)"))
        }
        results += try await customerLaunch()
        results.append(try await massExtension())
        return results
    }

    /// Get Transaction Info on random ids of a store of `store.customers` customers, against a
    /// store of one customer with as many transactions, side by side.
    private mutating func customerLoad(
        _ wrk: String, _ store: (customers: Int, each: Int)
    ) async throws -> [BenchCommand.Result] {
        let total = store.customers * store.each
        say(
            "a store of \(store.customers) customers with \(store.each) transaction(s) each, and one of 1 with \(total)..."
        )
        let many = path("customers-\(store.customers)")
        try await Self.filled(many, product: Self.product) { ledger in
            try ledger.appendSyntheticCustomers(
                count: store.customers, purchasesEach: store.each, productID: Self.product)
        }
        let one = path("customers-1-\(total)")
        try await fill(one, finished: total, unfinished: 0)
        let script = folder + "/customers-\(total).lua"
        try """
        math.randomseed(39)
        request = function()
          return wrk.format("GET", "/inApps/v1/transactions/" .. math.random(1, \(total)))
        end
        """.write(toFile: script, atomically: true, encoding: .utf8)
        var best: (many: WrkRun?, one: WrkRun?) = (nil, nil)
        var peak = 0.0
        for _ in 0..<2 {
            for (index, ledgerPath) in [many, one].enumerated() {
                let (server, token) = try Self.serve(ledgerPath)
                defer { server.stop() }
                _ = try await ChildServer.fetch(port: server.port, path: "/inApps/v1/transactions/1", token: token)
                say("wrk: \(index == 0 ? "\(store.customers) customers" : "one customer"), \(plan.serverSeconds) s...")
                let run = try WrkRun(wrk, port: server.port, seconds: plan.serverSeconds, token: token, script: script)
                if index == 0 {
                    if run.requestsPerSecond > best.many?.requestsPerSecond ?? 0 { best.many = run }
                    peak = max(peak, server.peakMB)
                } else if run.requestsPerSecond > best.one?.requestsPerSecond ?? 0 {
                    best.one = run
                }
            }
        }
        guard let many = best.many, let one = best.one else { throw BenchError("wrk measured nothing") }
        let name = "Get Transaction Info, \(store.customers) customers x \(store.each) transaction(s)"
        return [
            note(
                result(
                    name, unit: "req/s", ledger: many.requestsPerSecond, baseline: one.requestsPerSecond,
                    higherIsBetter: true, target: ">= 0.9 (of one customer)"),
                "baseline: one customer with \(total) transactions, same run"),
            note(
                result(
                    name + ": p99", unit: "ms", ledger: many.p99, baseline: one.p99, higherIsBetter: false,
                    target: "<= 20 ms"),
                "baseline: one customer"),
            BenchCommand.Result(
                workload: name + ": ledger serve resident memory (peak)", unit: "MB", ledger: peak, baseline: nil,
                ratio: nil, target: "<= 64 MB", peakMemoryMB: peak, note: nil),
        ]
    }

    /// A launch of one customer's device (their queue: recovery, then the redelivery of their
    /// unfinished transactions to an observer) in the largest store of customers, each of the
    /// others a subscriber, against the same launch in a store of that customer alone.
    /// Then the store's look at its clock with nothing due (`settleDueChanges`, what `ledger
    /// serve` runs every second) in the same two stores: it must not grow with the subscribers.
    private mutating func customerLaunch() async throws -> [BenchCommand.Result] {
        let largest = plan.customerStores.map(\.customers).max() ?? 1
        say("a launch of one device among \(largest) customers, and alone...")
        let crowded = path("launch-among-\(largest)")
        let alone = path("launch-alone")
        for (ledgerPath, others) in [(crowded, largest), (alone, 0)] {
            try await Self.filled(ledgerPath, product: Self.product) { ledger in
                // Each other customer subscribed: a launch that walked every subscription would
                // grow with them.
                if others > 0 {
                    try ledger.appendSyntheticCustomers(
                        count: others, purchasesEach: 1, productID: Self.subscriptionProduct)
                }
                try ledger.addCustomer(Customer(name: "launched"))
                try ledger.forCustomer("launched").appendSyntheticPurchases(
                    productID: Self.product, finished: 0, unfinished: Self.launchedUnfinished)
            }
        }
        var times: [Double] = []
        var looks: [Double] = []
        for ledgerPath in [crowded, alone] {
            var best = Double.infinity
            for _ in 0..<plan.rounds {
                best = min(best, try await time { try await Self.launchAndRedeliver(ledgerPath) })
            }
            times.append(best)
            looks.append(try await lookAtTheClock(ledgerPath, rounds: plan.rounds * 5))
        }
        return [
            note(
                result(
                    "launch of one device with \(Self.launchedUnfinished) unfinished, among \(largest) customers",
                    unit: "ms", ledger: times[0] * 1_000, baseline: times[1] * 1_000, higherIsBetter: false,
                    target: ">= 0.9 (as alone)"),
                "baseline: the same launch in a store of that customer alone; best of \(plan.rounds)"),
            note(
                result(
                    "the store's look at its clock, nothing due, among \(largest) subscribers", unit: "us",
                    ledger: looks[0] * 1_000_000, baseline: looks[1] * 1_000_000, higherIsBetter: false,
                    target: "<= 1,000 us (one indexed read)"),
                "what ledger serve does every second; baseline: a store of no subscriber; best of \(plan.rounds * 5)"),
        ]
    }

    /// The best time of `rounds` looks at the store's clock (`settleDueChanges`) that find
    /// nothing due.
    private func lookAtTheClock(_ path: String, rounds: Int) async throws -> Double {
        let ledger = try Ledger.open(at: path, configuration: LedgerConfiguration(durability: .normal))
        defer { try? ledger.close() }
        // As a server's store: passing time is notified too (nobody listens; nothing is sent).
        try ledger.setStoreSettings([StoreSettingKey.notificationURL: "http://127.0.0.1:9/bench"])
        // The first looks set each new subscription's next moment (10,000 a look); the
        // subscribers' periods are current: nothing else is due.
        while try ledger.settleDueChanges() {}
        var best = Double.infinity
        for _ in 0..<rounds {
            var wrote = false
            best = min(best, try await time { wrote = try ledger.settleDueChanges() })
            if wrote { throw BenchError("a look at the clock found something due") }
        }
        return best
    }

    private static func launchAndRedeliver(_ path: String) async throws {
        var configuration = LedgerConfiguration(durability: .normal)
        configuration.customer = "launched"
        let queue = try PaymentQueue(ledger: try Ledger.open(at: path, configuration: configuration))
        let delivered = try await queue.redeliverUnfinishedTransactions()
        try queue.ledger.close()
        guard delivered == launchedUnfinished else { throw BenchError("the launch delivered \(delivered)") }
    }

    /// Extend Subscription Renewal Dates for All Active Subscribers over `massSubscribers`
    /// customers, each subscribed: in batches, one commit each (the longest is how long the
    /// write lock is held at a time).
    private mutating func massExtension() async throws -> BenchCommand.Result {
        let subscribers = plan.massSubscribers
        say("the mass extension of \(subscribers) subscribers...")
        let ledgerPath = path("mass-\(subscribers)")
        try await Self.filled(ledgerPath, product: Self.subscriptionProduct) { ledger in
            try ledger.appendSyntheticCustomers(
                count: subscribers, purchasesEach: 1, productID: Self.subscriptionProduct, prefix: "subscriber")
        }
        let ledger = try Ledger.open(at: ledgerPath, configuration: LedgerConfiguration(durability: .normal))
        defer { try? ledger.close() }
        var batches: [Double] = []
        batches.append(
            try await time {
                _ = try ledger.extendRenewalDatesForActiveSubscribers(
                    productID: Self.subscriptionProduct, days: 7, reason: 0, requestIdentifier: "bench", batches: 1)
            })
        while true {
            var ran = false
            batches.append(try await time { ran = try ledger.continueMassRenewalExtension() })
            if !ran { break }
        }
        let done = try ledger.massRenewalExtension(requestIdentifier: "bench")
        guard done?.completeDate != nil, done?.succeededCount == subscribers else {
            throw BenchError("the mass extension extended \(done?.succeededCount ?? 0) of \(subscribers)")
        }
        let seconds = batches.reduce(0, +)
        return BenchCommand.Result(
            workload: "mass extension of \(subscribers) subscribers (\(batches.count - 1) batches)", unit: "ms",
            ledger: seconds * 1_000, baseline: nil, ratio: nil, target: "-", peakMemoryMB: Memory.peakMB,
            note: String(
                format: "%.0f subscribers a second; the longest batch (write lock held) %.0f ms",
                Double(subscribers) / seconds, (batches.max() ?? 0) * 1_000))
    }

    /// An auto-renewable subscription, for the mass extension's store.
    static let subscriptionProduct = "bench.subscription"

    /// A new ledger at `path`, with the bench's products, filled by `body` (durability normal).
    private static func filled(_ path: String, product: String, _ body: (Ledger) throws -> Void) async throws {
        let ledger = try Ledger.open(
            at: path, mode: .createIfMissing, configuration: LedgerConfiguration(durability: .normal))
        defer { try? ledger.close() }
        try ledger.saveProducts([
            Product(id: Self.product, type: .consumable, price: 1),
            Product(
                id: subscriptionProduct, type: .autoRenewable, price: 1,
                subscription: SubscriptionInfo(
                    groupID: "bench", groupName: "Bench", level: 1, period: SubscriptionPeriod(value: 1, unit: .month))),
        ])
        try body(ledger)
    }

    /// The API key of the customer stores' servers.
    private static let serverKey = P256.Signing.PrivateKey()

    /// `ledger serve` on `path` (given `serverKey` once), and a token of the key.
    private static func serve(_ path: String) throws -> (ChildServer, String) {
        let key = serverKey
        let ledger = try Ledger.open(at: path)
        if try ledger.apiKey("BENCH") == nil {
            try ledger.addAPIKey(keyID: "BENCH", issuerID: "bench-issuer", publicKey: key.publicKey)
        }
        try ledger.close()
        let token = try BenchToken.make(key: key, bundleID: StoreSettings.defaultBundleID)
        return (try ChildServer.start(try ledgerExecutable(), ["serve", "--port", "0", "--database", path]), token)
    }
}
