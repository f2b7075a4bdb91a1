import ArgumentParser
import CLedgerBaseline
import Foundation
import LedgerCommand
import StoreLedger
import Synchronization

/// `ledger-lab bench`: each workload against a raw-SQLite baseline doing the same storage work
/// (same pragmas, rows, commits and fsyncs), interleaved A B A B in the same run, so that the
/// ratio holds on a noisy machine where absolute times do not.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Benchmark the ledger against raw SQLite: throughput, launch, restore, list and memory.",
        discussion: """
            Build with `swift build -c release` first for meaningful figures. Creates its ledgers in a temporary \
            folder and removes them. --quick only checks that every workload runs (for CI).
            """)

    @Flag(help: "Tiny sizes: check that every workload runs.")
    var quick = false

    @Flag(help: "Print one JSON document instead of a table.")
    var json = false

    @Option(help: "Ledger sizes (finished transactions) for the launch and list workloads.")
    var sizes: String = "10000,100000,1000000"

    @Option(help: "Purchase cycles per one-writer workload.")
    var cycles = 600

    @Option(help: "Runs of the purchase and payers rows, each with its own interleaved baseline (min, median, max).")
    var runs = 5

    @Option(help: "Restorable purchases for the restore workload.")
    var restorable = 100_000

    @Option(help: "The workloads to run, of \(Workload.allCases.map(\.rawValue).joined(separator: ", ")).")
    var workloads: String = Workload.allCases.map(\.rawValue).joined(separator: ",")

    enum Workload: String, CaseIterable {
        case purchase, payers, chain, launch, redelivery, restore, show, catalog, server, hostile, notifications,
            customers
    }

    func run() async throws {
        // Every argument is checked before any work, --quick or not.
        let sizes = try parseSizes()
        let workloads = try parseWorkloads()
        guard cycles > 0, restorable > 0, (1...100).contains(runs) else {
            throw InputError(
                description:
                    "invalid --cycles \(cycles), --restorable \(restorable) or --runs \(runs): use positive numbers, --runs at most 100"
            )
        }
        let folder = NSTemporaryDirectory() + "storeledger-bench-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var plan =
            quick
            ? Plan(
                cycles: 6, concurrentPayers: 8, sizes: [200, 400], restorable: 300, rounds: 2, runs: 2,
                serverSeconds: 1, burst: 20, backlog: 200)
            : Plan(
                cycles: cycles, concurrentPayers: 64, sizes: sizes, restorable: restorable, rounds: 4, runs: runs,
                serverSeconds: 10, burst: 1_000, backlog: 100_000)
        plan.workloads = workloads
        if quick {
            (plan.catalog, plan.unfinished) = ((100, 690), [100, 1_000])
            (plan.customerStores, plan.massSubscribers) = ([(100, 10), (1_000, 1)], 100)
        }
        var bench = Bench(folder: folder, plan: plan, progress: !json)
        let results = try await bench.runAll()
        let report = Report(
            quick: quick,
            machine: "\(ProcessInfo.processInfo.processorCount) cores, "
                + "\(ProcessInfo.processInfo.physicalMemory / 1_073_741_824) GiB",
            results: results)
        if json {
            let data = try Output.encoder.encode(report)
            FileHandle.standardOutput.write(data + Data("\n".utf8))
        } else {
            print(report.table)
        }
    }

    private func parseWorkloads() throws -> Set<Workload> {
        var chosen: Set<Workload> = []
        for name in workloads.split(separator: ",") {
            guard let workload = Workload(rawValue: name.trimmingCharacters(in: .whitespaces)) else {
                throw InputError(
                    description: """
                        invalid --workloads "\(workloads)": use names from \(Workload.allCases.map(\.rawValue).joined(separator: ","))
                        """)
            }
            chosen.insert(workload)
        }
        guard !chosen.isEmpty else {
            throw InputError(description: "invalid --workloads \"\(workloads)\": name at least one")
        }
        return chosen
    }

    private func parseSizes() throws -> [Int] {
        let values = sizes.split(separator: ",", omittingEmptySubsequences: false)
            .map { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !values.isEmpty, values.allSatisfy({ ($0 ?? 0) > 0 }) else {
            throw InputError(description: "invalid --sizes \"\(sizes)\": use positive numbers such as 10000,100000")
        }
        return values.compactMap { $0 }.sorted()
    }

    struct Plan {
        var cycles: Int
        var concurrentPayers: Int
        var sizes: [Int]
        var restorable: Int
        var rounds: Int
        /// Runs of the purchase and payers rows, each with its interleaved baseline: the row
        /// reports their median and spread.
        var runs: Int
        /// How long each `wrk` run of the server rows lasts.
        var serverSeconds: Int
        /// Purchases committed in the notification burst.
        var burst: Int
        /// Pending notifications the drained backlog holds.
        var backlog: Int
        var workloads = Set(Workload.allCases)
        /// Products imported into a new ledger, then added before the catalog is listed.
        var catalog = (imported: 10_000, added: 69_000)
        /// Unfinished transactions of the ledgers `ledger launch --finish` redelivers.
        var unfinished = [10_000, 100_000]
        /// The stores of many customers: how many customers, and transactions each.
        var customerStores: [(customers: Int, each: Int)] = [(10_000, 10), (100_000, 1)]
        /// The subscribers of the mass extension row.
        var massSubscribers = 10_000
    }

    /// One row of the results.
    struct Result: Encodable {
        let workload: String
        let unit: String
        let ledger: Double
        let baseline: Double?
        /// ledger / baseline for throughputs, baseline / ledger for times: above 1 is better.
        let ratio: Double?
        let target: String
        let peakMemoryMB: Double
        var note: String?
        /// Why the row was not measured (a tool this machine lacks); its figures are then 0.
        var skipped: String? = nil
        /// For a row of several runs: each run's ratio, in the order run (the row shows their median).
        var runRatios: [Double]? = nil

        /// A row not measured, for `reason`.
        static func skipped(_ workload: String, because reason: String) -> Result {
            Result(
                workload: workload, unit: "-", ledger: 0, baseline: nil, ratio: nil, target: "-", peakMemoryMB: 0,
                note: nil, skipped: reason)
        }
    }

    struct Report: Encodable {
        let quick: Bool
        let machine: String
        let results: [Result]

        var table: String {
            var lines = ["machine: \(machine)\(quick ? " (quick: sizes too small for meaningful figures)" : "")", ""]
            lines.append("| workload | StoreLedger | raw SQLite | ratio | target | peak RSS |")
            lines.append("|---|---|---|---|---|---|")
            for r in results {
                if let reason = r.skipped {
                    lines.append("| \(r.workload) | skipped: \(reason) | - | - | - | - |")
                    continue
                }
                let baseline = r.baseline.map { format($0, r.unit) } ?? "-"
                let ratio = r.ratio.map { String(format: "%.2f", $0) } ?? "-"
                lines.append(
                    "| \(r.workload) | \(format(r.ledger, r.unit)) | \(baseline) | \(ratio) | \(r.target) | \(String(format: "%.0f", r.peakMemoryMB)) MB |"
                        + (r.note.map { " \($0)" } ?? ""))
            }
            return lines.joined(separator: "\n")
        }

        private func format(_ value: Double, _ unit: String) -> String {
            switch unit {
            case "ms": String(format: "%.1f ms", value)
            case "x": String(format: "%.2f x", value)
            default: String(format: "%.0f %@", value, unit)
            }
        }
    }
}

/// Runs the workloads of a plan.
struct Bench {
    let folder: String
    let plan: BenchCommand.Plan
    let progress: Bool
    var counter = 0

    mutating func path(_ name: String) -> String {
        counter += 1
        return "\(folder)/\(counter)-\(name).sqlite"
    }

    func say(_ text: String) {
        if progress { FileHandle.standardError.write(Data((text + "\n").utf8)) }
    }

    mutating func runAll() async throws -> [BenchCommand.Result] {
        var results: [BenchCommand.Result] = []
        let run = plan.workloads
        if run.contains(.purchase) || run.contains(.payers) {
            for durability in [Durability.full, .normal] where run.contains(.purchase) || durability == .full {
                say("purchase cycles, one writer, durability \(durability.rawValue)...")
                results.append(try await purchaseCycles(durability))
            }
        }
        if run.contains(.payers) {
            say("\(plan.concurrentPayers) concurrent payers, durability full...")
            results.append(try await concurrentPayers())
        }
        if run.contains(.chain) {
            say("purchase cycles with and without the hash chain, durability normal...")
            results += try await chainCost()
        }
        if run.contains(.launch) {
            say("launches and lists...")
            results += try await launches()
        }
        if run.contains(.redelivery) {
            say("launch --finish of \(plan.unfinished.map(String.init).joined(separator: " and ")) unfinished...")
            results += try await redelivery()
        }
        if run.contains(.restore) {
            say("restore of \(plan.restorable)...")
            results.append(try await restore())
        }
        if run.contains(.show) {
            say("show and memory on the largest ledger...")
            results += try await listShowAndMemory()
        }
        if run.contains(.catalog) {
            say("catalog import and list...")
            results += try await catalog()
        }
        if run.contains(.server) {
            say("ledger serve under wrk, against a constant body...")
            results += try await serverLoad()
        }
        if run.contains(.hostile) {
            say("ledger serve with \(HostileLoad.connections) hostile connections open...")
            results += try await hostileConnections()
        }
        if run.contains(.customers) {
            say("stores of many customers...")
            results += try await customers()
        }
        if run.contains(.notifications) {
            say("notifications: a burst of \(plan.burst) purchases, a backlog of \(plan.backlog)...")
            results += try await notificationDelivery()
        }
        return results
    }

    // MARK: - Workloads

    /// The one-writer cycle, `plan.runs` times, each run on a new ledger and baseline in
    /// interleaved rounds: the row is the median run, with the runs' spread.
    mutating func purchaseCycles(_ durability: Durability) async throws -> BenchCommand.Result {
        var ledgerRates: [Double] = []
        var baseRates: [Double] = []
        for _ in 0..<plan.runs {
            let (ledger, base) = try await oneWriterRun(durability, cycles: plan.cycles, rounds: plan.rounds)
            ledgerRates.append(ledger)
            baseRates.append(base)
        }
        let ratios = zip(ledgerRates, baseRates).map { $0 / $1 }
        let median = RunSpread(ratios).medianIndex
        var row = result(
            "purchase cycle, 1 writer, \(durability.rawValue)", unit: "cycles/s", ledger: ledgerRates[median],
            baseline: baseRates[median], higherIsBetter: true, target: ">= 0.8")
        row.runRatios = ratios
        row.note = RunSpread(ratios).note
        return row
    }

    /// One run of `cycles` one-writer purchase cycles against the baseline's, in `rounds`
    /// interleaved rounds: cycles a second of each.
    private mutating func oneWriterRun(
        _ durability: Durability, cycles: Int, rounds: Int
    ) async throws -> (ledger: Double, baseline: Double) {
        let ledgerPath = path("cycles")
        let basePath = path("cycles-base")
        let queue = try await benchQueue(at: ledgerPath, durability: durability)
        guard let base = lbase_open(basePath, durability == .full ? 2 : 1) else {
            throw BenchError("cannot open the baseline")
        }
        defer { lbase_close(base) }
        let perRound = max(1, cycles / rounds)
        var ledgerTime = 0.0
        var baseTime = 0.0
        for _ in 0..<rounds {
            ledgerTime += try await time {
                for _ in 0..<perRound {
                    let transaction = try await queue.add(Payment(productID: Self.product))
                    try await queue.finish(transaction)
                }
            }
            baseTime += try await time {
                guard lbase_purchase_cycles(base, Int32(perRound)) == 0 else { throw BenchError("baseline failed") }
            }
        }
        try queue.ledger.close()
        let total = Double(perRound * rounds)
        return (total / ledgerTime, total / baseTime)
    }

    /// 64 payers against one writer at `full`, `plan.runs` times. Each run alternates, in
    /// `plan.rounds` rounds, a quarter of the plan's cycles by one writer with eight times as
    /// many by the payers, on two ledgers of its own: the payers wait for the writer's CPU, the
    /// one writer for the disk, and the machine's speed at each moves on its own from one
    /// second to the next, so each ratio compares measurements made side by side. The note
    /// gives the range of each.
    mutating func concurrentPayers() async throws -> BenchCommand.Result {
        let payers = plan.concurrentPayers
        let perRound = max(1, plan.cycles / plan.rounds)
        let perPayer = max(1, perRound * 8 / payers)
        var rates: [Double] = []
        var oneWriterRates: [Double] = []
        var ratios: [Double] = []
        for _ in 0..<plan.runs {
            let single = try await benchQueue(at: path("one-writer"), durability: .full)
            let queue = try await benchQueue(at: path("payers"), durability: .full)
            var (singleTime, payersTime) = (0.0, 0.0)
            for _ in 0..<plan.rounds {
                singleTime += try await time {
                    for _ in 0..<perRound {
                        try await single.finish(try await single.add(Payment(productID: Self.product)))
                    }
                }
                payersTime += try await time {
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for _ in 0..<payers {
                            group.addTask {
                                for _ in 0..<perPayer {
                                    try await queue.finish(try await queue.add(Payment(productID: Self.product)))
                                }
                            }
                        }
                        try await group.waitForAll()
                    }
                }
            }
            try single.ledger.close()
            try queue.ledger.close()
            oneWriterRates.append(Double(perRound * plan.rounds) / singleTime)
            rates.append(Double(payers * perPayer * plan.rounds) / payersTime)
            ratios.append(rates.last! / oneWriterRates.last!)
        }
        let spread = RunSpread(ratios)
        return BenchCommand.Result(
            workload: "purchase cycle, \(payers) concurrent payers, full", unit: "cycles/s",
            ledger: rates[spread.medianIndex], baseline: nil, ratio: ratios[spread.medianIndex],
            target: ">= 8 x one writer, spread <= 20 %", peakMemoryMB: Memory.peakMB,
            note: "ratio: against the 1-writer full throughput measured in alternate rounds of the same run; "
                + spread.note
                + String(
                    format: "; one writer %.0f to %.0f cycles/s, payers %.0f to %.0f", oneWriterRates.min()!,
                    oneWriterRates.max()!, rates.min()!, rates.max()!),
            runRatios: ratios)
    }

    /// Launch and `ledger list` on ledgers of every size: how their cost grows with history.
    mutating func launches() async throws -> [BenchCommand.Result] {
        var results: [BenchCommand.Result] = []
        var launchTimes: [Int: Double] = [:]
        var listTimes: [Int: Double] = [:]
        let executable = try Self.ledgerExecutable()
        for size in plan.sizes {
            let ledgerPath = path("launch-\(size)")
            let basePath = path("launch-\(size)-base")
            try await fill(ledgerPath, finished: size, unfinished: 1_000)
            guard let filler = lbase_open(basePath, 2) else { throw BenchError("cannot open the baseline") }
            _ = lbase_fill(filler, Int64(size), 1_000)
            lbase_close(filler)
            var ledgerTime = Double.infinity
            var baseTime = Double.infinity
            for _ in 0..<3 {
                ledgerTime = min(
                    ledgerTime,
                    try await time {
                        let queue = try PaymentQueue(path: ledgerPath)
                        let observer = CountingObserver()
                        try await queue.add(observer)
                        guard observer.count == 1_000 else { throw BenchError("launch delivered \(observer.count)") }
                        try queue.ledger.close()
                    })
                baseTime = min(
                    baseTime,
                    try await time {
                        guard let base = lbase_open(basePath, 2) else { throw BenchError("cannot open the baseline") }
                        defer { lbase_close(base) }
                        guard lbase_launch(base) == 1_000 else { throw BenchError("baseline launch failed") }
                    })
            }
            launchTimes[size] = ledgerTime
            results.append(
                result(
                    "launch: 1,000 unfinished among \(size) finished", unit: "ms", ledger: ledgerTime * 1000,
                    baseline: baseTime * 1000, higherIsBetter: false,
                    target: size >= 1_000_000 ? "<= 10 ms, >= 0.5" : "-"))
            var listTime = Double.infinity
            for _ in 0..<5 {
                listTime = min(
                    listTime,
                    try await time {
                        try runProcess(executable, ["list", "--limit", "50", "--json", "--database", ledgerPath])
                    })
            }
            listTimes[size] = listTime
            results.append(
                BenchCommand.Result(
                    workload: "ledger list --limit 50, \(size + 1_000) transactions (whole process)", unit: "ms",
                    ledger: listTime * 1000,
                    baseline: nil, ratio: nil, target: "<= 100 ms", peakMemoryMB: Memory.peakMB, note: nil))
            if size <= 100_000 {
                results.append(try await wholeList(ledgerPath, transactions: size + 1_000, executable: executable))
            }
        }
        if let smallest = plan.sizes.first, let largest = plan.sizes.last, smallest != largest {
            for (name, times) in [("launch", launchTimes), ("list", listTimes)] {
                guard let small = times[smallest], let large = times[largest] else { continue }
                results.append(
                    BenchCommand.Result(
                        workload: "\(name) growth: \(largest) / \(smallest) finished", unit: "x", ledger: large / small,
                        baseline: nil,
                        ratio: nil, target: name == "launch" ? "<= 1.5" : "-", peakMemoryMB: Memory.peakMB, note: nil))
            }
        }
        return results
    }

    /// The whole of a ledger listed as JSON against the same list as text, interleaved: the
    /// JSON (13 times the bytes) should cost about what the text costs, not what an encoder does.
    func wholeList(_ ledgerPath: String, transactions: Int, executable: String) async throws -> BenchCommand.Result {
        let arguments = ["list", "--limit", "\(transactions)", "--database", ledgerPath]
        var textTime = Double.infinity
        var jsonTime = Double.infinity
        for _ in 0..<5 {
            textTime = min(textTime, try await time { try runProcess(executable, arguments) })
            jsonTime = min(jsonTime, try await time { try runProcess(executable, arguments + ["--json"]) })
        }
        return BenchCommand.Result(
            workload: "ledger list --json, all \(transactions) transactions (whole process)", unit: "ms",
            ledger: jsonTime * 1000,
            baseline: nil, ratio: jsonTime / textTime, target: "-", peakMemoryMB: Memory.peakMB,
            note: "ratio: against the same list as text (JSON writes about 13 times its bytes)")
    }

    /// `ledger launch --finish`, as text and as JSON, on ledgers of each size of
    /// `plan.unfinished` unfinished transactions: whole processes, with each one's own peak
    /// memory, which should not grow with the number delivered (it is delivered in batches).
    mutating func redelivery() async throws -> [BenchCommand.Result] {
        var results: [BenchCommand.Result] = []
        var peaks: [String: [Int: Double]] = [:]
        for count in plan.unfinished {
            for format in ["text", "json"] {
                let ledgerPath = path("redelivery-\(count)-\(format)")
                try await fill(ledgerPath, finished: 0, unfinished: count)
                var peak = 0.0
                let seconds = try await time {
                    peak = try runMeasuringMemory(
                        ["launch", "--finish", "--database", ledgerPath] + (format == "json" ? ["--json"] : []))
                }
                peaks[format, default: [:]][count] = peak
                results.append(
                    BenchCommand.Result(
                        workload:
                            "ledger launch --finish\(format == "json" ? " --json" : ""), \(count) unfinished (whole process)",
                        unit: "ms", ledger: seconds * 1000, baseline: nil, ratio: nil, target: "-", peakMemoryMB: peak,
                        note: "peak RSS: the process's own (the same command run by `ledger-lab peak-memory`)"))
            }
        }
        if let smallest = plan.unfinished.first, let largest = plan.unfinished.last, smallest != largest {
            for format in ["text", "json"] {
                guard let small = peaks[format]?[smallest], let large = peaks[format]?[largest] else { continue }
                results.append(
                    BenchCommand.Result(
                        workload: "launch --finish (\(format)) memory growth: \(largest) / \(smallest) unfinished",
                        unit: "x",
                        ledger: large / small, baseline: nil, ratio: nil, target: "<= 1.5", peakMemoryMB: large,
                        note: nil))
            }
        }
        return results
    }

    mutating func restore() async throws -> BenchCommand.Result {
        let ledgerPath = path("restore")
        let basePath = path("restore-base")
        try await fill(ledgerPath, finished: plan.restorable, unfinished: 0, product: Self.restorableProduct)
        guard let base = lbase_open(basePath, 2) else { throw BenchError("cannot open the baseline") }
        defer { lbase_close(base) }
        _ = lbase_fill(base, Int64(plan.restorable), 0)
        let queue = try PaymentQueue(path: ledgerPath)
        let before = Memory.residentMB
        Memory.resetPeak()
        var restored = 0
        let ledgerTime = try await time {
            let result = await queue.restoreCompletedTransactions()
            guard result.isFinished else { throw BenchError("the restore failed") }
            restored = result.restored.count
        }
        let growth = Memory.peakMB - before
        try queue.ledger.close()
        let baseTime = try await time {
            guard lbase_restore(base) == Int64(plan.restorable) else { throw BenchError("baseline restore failed") }
        }
        guard restored == plan.restorable else { throw BenchError("restored \(restored) of \(plan.restorable)") }
        var row = result(
            "restore of \(plan.restorable) purchases", unit: "restored/s", ledger: Double(restored) / ledgerTime,
            baseline: Double(restored) / baseTime, higherIsBetter: true,
            target: ">= 100000/s, >= 0.5, <= 16 MB growth")
        row = BenchCommand.Result(
            workload: row.workload, unit: row.unit, ledger: row.ledger, baseline: row.baseline, ratio: row.ratio,
            target: row.target, peakMemoryMB: row.peakMemoryMB, note: String(format: "memory growth %.0f MB", growth))
        return row
    }

    mutating func listShowAndMemory() async throws -> [BenchCommand.Result] {
        guard let size = plan.sizes.last else { return [] }
        let ledgerPath = path("big-\(size)")
        let basePath = path("big-\(size)-base")
        let unfinished = try await fill(ledgerPath, finished: size, unfinished: 1_000)
        guard let filler = lbase_open(basePath, 2) else { throw BenchError("cannot open the baseline") }
        _ = lbase_fill(filler, Int64(size), 1_000)
        lbase_close(filler)
        let executable = try Self.ledgerExecutable()
        var results: [BenchCommand.Result] = []
        var best = Double.infinity
        var baseBest = Double.infinity
        for _ in 0..<5 {
            best = min(
                best,
                try await time {
                    try runProcess(executable, ["show", "\(unfinished.last ?? 1)", "--json", "--database", ledgerPath])
                })
            baseBest = min(
                baseBest,
                try await time {
                    guard let base = lbase_open(basePath, 2) else { throw BenchError("cannot open the baseline") }
                    defer { lbase_close(base) }
                    _ = lbase_list(base, 1)
                })
        }
        results.append(
            BenchCommand.Result(
                workload: "ledger show ID, \(size + 1_000) transactions (whole process)", unit: "ms",
                ledger: best * 1000,
                baseline: baseBest * 1000, ratio: nil, target: "<= 100 ms", peakMemoryMB: Memory.peakMB,
                note: "baseline: the row read in-process, no process start"))
        let resident = try probeMemory(ledgerPath)
        results.append(
            BenchCommand.Result(
                workload: "memory of an open ledger with \(size + 1_000) transactions", unit: "MB", ledger: resident,
                baseline: nil, ratio: nil, target: "<= 40 MB", peakMemoryMB: resident, note: "resident, after launch"))
        return results
    }

    /// `ledger products import` of a 10,000-product file into a new ledger, then `ledger
    /// products list` once the catalog holds 79,000: whole processes, as a user runs them.
    mutating func catalog() async throws -> [BenchCommand.Result] {
        let executable = try Self.ledgerExecutable()
        let (imported, more) = plan.catalog
        let first = folder + "/catalog-1.storekit"
        try Self.catalogFile(prefix: "bench.catalog.a", count: imported).write(to: URL(fileURLWithPath: first))
        // The rest in files of at most one import's limit, imported one by one.
        var rest: [String] = []
        for (index, start) in stride(from: 0, to: more, by: ProductCatalog.maximumImport).enumerated() {
            rest.append(folder + "/catalog-\(index + 2).storekit")
            try Self.catalogFile(
                prefix: "bench.catalog.\(index)", count: min(ProductCatalog.maximumImport, more - start)
            )
            .write(to: URL(fileURLWithPath: rest.last!))
        }
        let localized = folder + "/catalog-localized.storekit"
        try Self.catalogFile(prefix: "bench.catalog.l", count: imported, localizations: 40).write(
            to: URL(fileURLWithPath: localized))
        let localizedSize =
            Double(try FileManager.default.attributesOfItem(atPath: localized)[.size] as? Int ?? 0) / 1_048_576
        Memory.resetPeak()  // the files were built in this process; the rows report what follows
        var importTime = Double.infinity
        var ledgerPath = ""
        for _ in 0..<3 {
            ledgerPath = path("catalog")
            try runProcess(executable, ["init", "--database", ledgerPath])
            importTime = min(
                importTime,
                try await time { try runProcess(executable, ["products", "import", first, "--database", ledgerPath]) })
        }
        let localizedLedger = path("catalog-localized")
        let localizedTime = try await time {
            try runProcess(executable, ["products", "import", localized, "--database", localizedLedger])
        }
        // The peaks: the same imports again, into new ledgers, each run by `peak-memory`.
        let importPeak = try runMeasuringMemory(["products", "import", first, "--database", path("catalog-peak")])
        let localizedPeak = try runMeasuringMemory([
            "products", "import", localized, "--database", path("catalog-localized-peak"),
        ])
        for file in rest { try runProcess(executable, ["products", "import", file, "--database", ledgerPath]) }
        var listTime = Double.infinity
        var jsonTime = Double.infinity
        for _ in 0..<3 {
            listTime = min(
                listTime, try await time { try runProcess(executable, ["products", "list", "--database", ledgerPath]) })
            jsonTime = min(
                jsonTime,
                try await time { try runProcess(executable, ["products", "list", "--json", "--database", ledgerPath]) })
        }
        return [
            BenchCommand.Result(
                workload: "ledger products import, \(imported) products (whole process)", unit: "ms",
                ledger: importTime * 1000,
                baseline: nil, ratio: nil, target: "<= 1000 ms", peakMemoryMB: importPeak,
                note: "peak RSS: the import's own (run again by `ledger-lab peak-memory`)"),
            BenchCommand.Result(
                workload: "ledger products import, \(imported) products of 40 localizations (whole process)",
                unit: "ms",
                ledger: localizedTime * 1000, baseline: nil, ratio: (localizedPeak - importPeak) / localizedSize,
                target: "ratio <= 4",
                peakMemoryMB: localizedPeak,
                note: String(
                    format: "ratio: peak RSS (the import's own) beyond the row above's, over the file's %.0f MB",
                    localizedSize)),
            BenchCommand.Result(
                workload: "ledger products list, \(imported + more) products (whole process)", unit: "ms",
                ledger: listTime * 1000, baseline: nil, ratio: nil, target: "<= 500 ms", peakMemoryMB: Memory.peakMB,
                note: nil),
            BenchCommand.Result(
                workload: "ledger products list --json, \(imported + more) products (whole process)", unit: "ms",
                ledger: jsonTime * 1000, baseline: nil, ratio: nil, target: "-", peakMemoryMB: Memory.peakMB,
                note: "Foundation's JSONEncoder: most of the time"),
        ]
    }

    /// A StoreKit configuration file of `count` products: consumables, non-consumables, and
    /// monthly subscriptions in groups of ten, each with `localizations` localizations.
    static func catalogFile(prefix: String, count: Int, localizations: Int = 1) throws -> Data {
        var products: [[String: Any]] = []
        var groups: [String: [[String: Any]]] = [:]
        for index in 0..<count {
            let id = "\(prefix).\(index)"
            let localization = (0..<localizations).map {
                [
                    "locale": $0 == 0 ? "en_US" : "x\($0)", "displayName": "Product \(index)",
                    "description": "Benchmark product \(index)",
                ]
            }
            var product: [String: Any] = [
                "productID": id, "referenceName": id, "displayPrice": "0.99", "familyShareable": false,
                "internalID": "\(index)", "localizations": localization,
            ]
            switch index % 5 {
            case 0, 1:
                product["type"] = "Consumable"
                products.append(product)
            case 2, 3:
                product["type"] = "NonConsumable"
                products.append(product)
            default:
                let group = "\(prefix).group.\(index / 50)"
                product.merge([
                    "type": "RecurringSubscription", "recurringSubscriptionPeriod": "P1M", "subscriptionGroupID": group,
                    "groupNumber": groups[group, default: []].count + 1, "adHocOffers": [], "codeOffers": [],
                    "introductoryOffer": NSNull(),
                ]) { $1 }
                groups[group, default: []].append(product)
            }
        }
        let subscriptionGroups = groups.keys.sorted().map {
            ["id": $0, "name": $0, "localizations": [], "subscriptions": groups[$0]!]
        }
        return try JSONSerialization.data(
            withJSONObject: [
                "identifier": "BENCH", "version": ["major": 4, "minor": 0], "products": products,
                "subscriptionGroups": subscriptionGroups, "nonRenewingSubscriptions": [], "settings": [:],
            ] as [String: Any])
    }

    // MARK: - Helpers

    /// What the hash chain costs a one-writer purchase cycle at `normal` (the issue's budget:
    /// 10 %): the same cycles on three ledgers, in interleaved rounds of the same run, without
    /// the chain (the baseline column), with it as shipped (head signed at most every 10 ms), and
    /// with the head signed at every commit.
    mutating func chainCost() async throws -> [BenchCommand.Result] {
        var unchained = LedgerConfiguration(durability: .normal)
        unchained.keepsHashChain = false
        let shipped = LedgerConfiguration(durability: .normal)
        let everyCommit = LedgerConfiguration(durability: .normal, headSigningInterval: .zero)
        var queues: [PaymentQueue] = []
        for (index, configuration) in [unchained, shipped, everyCommit].enumerated() {
            queues.append(try await benchQueue(at: path("chain-\(index)"), configuration: configuration))
        }
        // Three times the rounds of the other workloads: the difference measured is small, and
        // shorter interleaved rounds share the machine's drifts more evenly.
        let rounds = plan.rounds * 3
        let perRound = max(1, plan.cycles / rounds)
        var times = [0.0, 0.0, 0.0]
        for _ in 0..<rounds {
            for (index, queue) in queues.enumerated() {
                times[index] += try await time {
                    for _ in 0..<perRound {
                        let transaction = try await queue.add(Payment(productID: Self.product))
                        try await queue.finish(transaction)
                    }
                }
            }
        }
        for queue in queues { try queue.ledger.close() }
        let total = Double(perRound * rounds)
        let note = "(raw SQLite column: the same ledger without the chain)"
        return [
            chainResult(
                "purchase cycle, 1 writer, normal, hash chain, head signed every 10 ms", total / times[1],
                total / times[0], note),
            chainResult(
                "purchase cycle, 1 writer, normal, hash chain, head signed at every commit", total / times[2],
                total / times[0], note),
        ]
    }

    private func chainResult(
        _ name: String, _ chained: Double, _ unchained: Double, _ note: String
    ) -> BenchCommand.Result {
        BenchCommand.Result(
            workload: name, unit: "cycles/s", ledger: chained, baseline: unchained, ratio: chained / unchained,
            target: ">= 0.9", peakMemoryMB: Memory.peakMB, note: note)
    }

    static let product = "bench.consumable"
    static let restorableProduct = "bench.nonconsumable"

    func benchQueue(at path: String, durability: Durability) async throws -> PaymentQueue {
        try await benchQueue(at: path, configuration: LedgerConfiguration(durability: durability))
    }

    func benchQueue(at path: String, configuration: LedgerConfiguration) async throws -> PaymentQueue {
        let ledger = try Ledger.open(at: path, mode: .createIfMissing, configuration: configuration)
        try ledger.saveProducts([
            Product(id: Self.product, type: .consumable, price: 1),
            Product(id: Self.restorableProduct, type: .nonConsumable, price: 1),
        ])
        return try PaymentQueue(ledger: ledger)
    }

    @discardableResult
    func fill(_ path: String, finished: Int, unfinished: Int, product: String = product) async throws -> [UInt64] {
        let queue = try await benchQueue(at: path, durability: .normal)
        defer { try? queue.ledger.close() }
        return try queue.ledger.appendSyntheticPurchases(productID: product, finished: finished, unfinished: unfinished)
    }

    func result(
        _ name: String, unit: String, ledger: Double, baseline: Double, higherIsBetter: Bool, target: String
    ) -> BenchCommand.Result {
        BenchCommand.Result(
            workload: name, unit: unit, ledger: ledger, baseline: baseline,
            ratio: higherIsBetter ? ledger / baseline : baseline / ledger, target: target, peakMemoryMB: Memory.peakMB,
            note: nil)
    }

    func time(_ body: () async throws -> Void) async throws -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        try await body()
        let elapsed = clock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// This `ledger-lab`.
    static func labExecutable() throws -> String {
        try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    }

    /// The shipped `ledger`, built beside this `ledger-lab`: the whole-process rows measure it,
    /// not the lab.
    static func ledgerExecutable() throws -> String { try executableBesideTheLab("ledger") }

    /// The executable `name` built beside this lab (`swift build -c release` builds them all).
    static func executableBesideTheLab(_ name: String) throws -> String {
        let lab = try labExecutable()
        let path = URL(fileURLWithPath: lab).deletingLastPathComponent().appendingPathComponent(name).path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw BenchError("no `\(name)` beside \(lab): build every product (swift build -c release)")
        }
        return path
    }

    func runProcess(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchError("\(arguments.joined(separator: " ")) failed") }
    }

    /// Runs `ledger ARGUMENTS` in a process of this lab (`peak-memory`: the same code as the
    /// shipped `ledger`); returns that process's own peak resident memory in MB.
    func runMeasuringMemory(_ arguments: [String]) throws -> Double {
        let output = try runLab(["peak-memory"] + arguments, reading: \.standardError)
        let prefix = Memory.peakPrefix
        guard let line = output.split(separator: "\n").last, line.hasPrefix(prefix),
            let peak = Double(line.dropFirst(prefix.count))
        else { throw BenchError("\(arguments.joined(separator: " ")): no peak in \(output.suffix(500))") }
        return peak
    }

    /// The resident memory of a process that opened the ledger and launched on it, linking what
    /// an app links (`ledger-cycles resident`).
    func probeMemory(_ path: String) throws -> Double {
        let output = try run(
            try Self.executableBesideTheLab("ledger-cycles"), ["resident", path], reading: \.standardOutput)
        guard let value = Double(output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw BenchError("the memory probe printed \(output)")
        }
        return value
    }

    /// Runs this lab with `arguments` to its end; returns what it wrote to `stream` (the
    /// other output is discarded).
    private func runLab(_ arguments: [String], reading stream: ReferenceWritableKeyPath<Process, Any?>) throws -> String
    {
        try run(try Self.labExecutable(), arguments, reading: stream)
    }

    /// Runs `executable` with `arguments` to its end; returns what it wrote to `stream`.
    private func run(
        _ executable: String, _ arguments: [String], reading stream: ReferenceWritableKeyPath<Process, Any?>
    ) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let pipe = Pipe()
        process[keyPath: stream] = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchError(
                "\(URL(fileURLWithPath: executable).lastPathComponent) \(arguments.joined(separator: " ")) failed: "
                    + "\(output.suffix(500))")
        }
        return output
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

private final class CountingObserver: PaymentTransactionObserver {
    private let delivered = Mutex(0)
    var count: Int { delivered.withLock { $0 } }

    func paymentQueue(_ queue: PaymentQueue, updatedTransactions transactions: [PaymentTransaction]) async {
        delivered.withLock { $0 += transactions.count }
    }
}

/// The ratios of a row's runs: the median run, and how far apart the runs are.
struct RunSpread {
    let values: [Double]

    init(_ values: [Double]) { self.values = values }

    /// The run whose value is the median (the lower middle one of an even count).
    var medianIndex: Int {
        let order = values.indices.sorted { values[$0] < values[$1] }
        return order[(order.count - 1) / 2]
    }

    /// (max - min) / median.
    var spread: Double {
        guard let low = values.min(), let high = values.max() else { return 0 }
        let median = values[medianIndex]
        return median > 0 ? (high - low) / median : 0
    }

    /// "runs: min a, median b, max c (spread s %)".
    var note: String {
        guard let low = values.min(), let high = values.max() else { return "" }
        return String(
            format: "%d runs: min %.2f, median %.2f, max %.2f (spread %.0f %%)", values.count, low,
            values[medianIndex], high, spread * 100)
    }
}
