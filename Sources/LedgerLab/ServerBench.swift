import AppStoreServer
import ArgumentParser
import Crypto
import Foundation
import Hummingbird
import LedgerCommand
import Logging
import NIOCore
import StoreLedger
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The server rows of `ledger-lab bench`: `ledger serve` answering Get Transaction Info under
/// `wrk` (64 keep-alive connections), side by side in the same run with the same framework
/// answering a constant body of the same size (`ledger-lab constant-server`: this machine's
/// HTTP ceiling); and its notifications: a burst of purchases from commit to a receiver, and a
/// backlog drained.
extension Bench {
    /// Get Transaction Info on a ledger of the largest size, against the ceiling.
    mutating func serverLoad() async throws -> [BenchCommand.Result] {
        let size = plan.sizes.max() ?? 1_000
        let name = "Get Transaction Info, 64 keep-alive connections, \(size) transactions"
        guard let wrk = Self.executable(named: "wrk") else {
            say("wrk is not installed (apt-get install wrk): the server rows are skipped")
            return [.skipped(name, because: "wrk is not installed (apt-get install wrk)")]
        }
        let (server, token) = try await servedLedger("serve-\(size)", purchases: size)
        defer { server.stop() }
        // The ceiling answers a body as long as a signed transaction's answer.
        let sample = try await ChildServer.fetch(port: server.port, path: "/inApps/v1/transactions/1", token: token)
        let ceiling = try ChildServer.start(
            try Self.labExecutable(), ["constant-server", "--bytes", String(sample.count)])
        defer { ceiling.stop() }
        let signingCeiling = try ChildServer.start(
            try Self.labExecutable(), ["constant-server", "--bytes", String(sample.count), "--sign"])
        defer { signingCeiling.stop() }
        let script = folder + "/random-ids.lua"
        try """
        math.randomseed(25)
        request = function()
          return wrk.format("GET", "/inApps/v1/transactions/" .. math.random(1, \(size)))
        end
        """.write(toFile: script, atomically: true, encoding: .utf8)
        let seconds = plan.serverSeconds
        var served: [WrkRun] = []
        var constant: [WrkRun] = []
        var signing: [WrkRun] = []
        for _ in 0..<2 {
            say("wrk: ledger serve, \(seconds) s...")
            served.append(
                try WrkRun(wrk, port: server.port, seconds: seconds, token: token, script: script))
            say("wrk: constant body, \(seconds) s...")
            constant.append(try WrkRun(wrk, port: ceiling.port, seconds: seconds, token: token, script: nil))
            say("wrk: constant body signed for each answer, \(seconds) s...")
            signing.append(try WrkRun(wrk, port: signingCeiling.port, seconds: seconds, token: token, script: nil))
        }
        let best = served.max { $0.requestsPerSecond < $1.requestsPerSecond }!
        let top = constant.max { $0.requestsPerSecond < $1.requestsPerSecond }!
        let topSigning = signing.max { $0.requestsPerSecond < $1.requestsPerSecond }!
        let memory = server.peakMB
        return [
            result(
                name, unit: "req/s", ledger: best.requestsPerSecond, baseline: top.requestsPerSecond,
                higherIsBetter: true, target: ">= 0.5 (of the constant body)"),
            note(
                result(
                    name + ", against a constant body signed for each answer", unit: "req/s",
                    ledger: best.requestsPerSecond, baseline: topSigning.requestsPerSecond, higherIsBetter: true,
                    target: "-"),
                "baseline: one ES256 signature an answer, nothing else"),
            note(
                result(
                    name + ": p50", unit: "ms", ledger: best.p50, baseline: top.p50, higherIsBetter: false, target: "-"),
                "baseline: the constant body"),
            note(
                result(
                    name + ": p99", unit: "ms", ledger: best.p99, baseline: top.p99, higherIsBetter: false,
                    target: "<= 20 ms"),
                "baseline: the constant body"),
            BenchCommand.Result(
                workload: "ledger serve resident memory after the load (peak)", unit: "MB", ledger: memory,
                baseline: nil, ratio: nil, target: "<= 64 MB", peakMemoryMB: memory, note: nil),
        ]
    }

    /// `ledger serve`'s memory with `HostileLoad.connections` hostile connections open (half of
    /// them announce a 1 MiB body without a token and send part of it, half send half a request
    /// head and stop), and a well-behaved client answered meanwhile.
    mutating func hostileConnections() async throws -> [BenchCommand.Result] {
        let (server, token) = try await servedLedger("hostile", purchases: 1_000)
        defer { server.stop() }
        _ = try await ChildServer.fetch(port: server.port, path: "/inApps/v1/transactions/1", token: token)
        let before = server.residentMB
        let load = try HostileLoad(port: server.port)
        defer { load.close() }
        var latencies: [Double] = []
        for id in 1...HostileLoad.requests {
            let started = ContinuousClock.now
            _ = try await ChildServer.fetch(port: server.port, path: "/inApps/v1/transactions/\(id)", token: token)
            let elapsed = ContinuousClock.now - started
            latencies.append(Self.milliseconds(elapsed))
        }
        let open = load.openCount
        let during = server.residentMB
        latencies.sort()
        let name = "ledger serve with \(HostileLoad.connections) hostile connections open"
        return [
            BenchCommand.Result(
                workload: name + ": resident memory", unit: "MB", ledger: during, baseline: nil, ratio: nil,
                target: "<= 64 MB", peakMemoryMB: server.peakMB,
                note: String(
                    format:
                        "%.0f MB before; %d of %d still open (half announce 1 MiB without a token, half stop mid-head)",
                    before, open, HostileLoad.connections)),
            BenchCommand.Result(
                workload: name + ": \(HostileLoad.requests) Get Transaction Info answered meanwhile, p99", unit: "ms",
                ledger: latencies[Int(Double(latencies.count - 1) * 0.99)], baseline: nil, ratio: nil,
                target: "all answered", peakMemoryMB: server.peakMB,
                note: String(format: "p50 %.1f ms", latencies[latencies.count / 2])),
        ]
    }

    /// A new ledger of `purchases` finished purchases with an API key, served by `ledger serve`
    /// in its own process (`stop()` it), and a bearer token of that key.
    private mutating func servedLedger(_ name: String, purchases: Int) async throws -> (ChildServer, String) {
        let ledgerPath = path(name)
        try await fill(ledgerPath, finished: purchases, unfinished: 0)
        let key = P256.Signing.PrivateKey()
        let ledger = try Ledger.open(at: ledgerPath)
        try ledger.addAPIKey(keyID: "BENCH", issuerID: "bench-issuer", publicKey: key.publicKey)
        try ledger.close()
        let token = try BenchToken.make(key: key, bundleID: StoreSettings.defaultBundleID)
        let server = try ChildServer.start(
            try Self.ledgerExecutable(), ["serve", "--port", "0", "--database", ledgerPath])
        return (server, token)
    }

    /// 1,000 purchases committed in a burst, from their commits to a local receiver; then a
    /// backlog of pending notifications drained by a server started on it.
    mutating func notificationDelivery() async throws -> [BenchCommand.Result] {
        let receiver = try await NotificationCollector.start()
        defer { Task { await receiver.stop() } }
        var results: [BenchCommand.Result] = []

        // The burst: the server runs; this process commits, one purchase after another.
        let burstPath = path("burst")
        let queue = try await benchQueue(at: burstPath, durability: .full)
        try queue.ledger.setStoreSettings([StoreSettingKey.notificationURL: receiver.url])
        let server = try ChildServer.start(
            try Self.ledgerExecutable(), ["serve", "--port", "0", "--database", burstPath])
        defer { server.stop() }
        var committed: [String: ContinuousClock.Instant] = [:]
        for _ in 0..<plan.burst {
            let bought = try await queue.add(Payment(productID: Self.product))
            committed[String(bought.id)] = .now
        }
        guard await receiver.wait(forCount: plan.burst, within: 60) else {
            throw BenchError("the burst's notifications did not all arrive within 60 s")
        }
        let latencies = try receiver.arrivals.compactMap { arrival -> Double? in
            guard let signed = arrival.signedPayload, let sent = committed[try BenchReceiver.transactionID(of: signed)]
            else { return nil }
            let elapsed = arrival.instant - sent
            return Self.milliseconds(elapsed)
        }.sorted()
        guard latencies.count == plan.burst else {
            throw BenchError("\(latencies.count) of \(plan.burst) notifications matched their purchases")
        }
        try queue.ledger.close()
        server.stop()
        results.append(
            BenchCommand.Result(
                workload: "notifications: \(plan.burst) purchases in a burst, commit to receiver, p99", unit: "ms",
                ledger: latencies[Int(Double(latencies.count - 1) * 0.99)], baseline: nil, ratio: nil,
                target: "<= 100 ms", peakMemoryMB: Memory.peakMB,
                note: "p50 \(String(format: "%.1f", latencies[latencies.count / 2])) ms"))

        // The backlog: committed with no server running, drained by one.
        receiver.reset()
        let backlogPath = path("backlog")
        let backlog = try await benchQueue(at: backlogPath, durability: .normal)
        try backlog.ledger.setStoreSettings([StoreSettingKey.notificationURL: receiver.url])
        say("\(plan.backlog) pending notifications...")
        try backlog.ledger.appendSyntheticPurchases(productID: Self.product, finished: plan.backlog, unfinished: 0)
        try backlog.ledger.close()
        let drain = try await time {
            let drainer = try ChildServer.start(
                try Self.ledgerExecutable(), ["serve", "--port", "0", "--database", backlogPath])
            defer { drainer.stop() }
            guard await receiver.wait(forCount: plan.backlog, within: 600) else {
                throw BenchError("the backlog was not drained within 600 s")
            }
        }
        results.append(
            BenchCommand.Result(
                workload: "notifications: \(plan.backlog) pending drained by ledger serve", unit: "notifications/s",
                ledger: Double(plan.backlog) / drain, baseline: nil, ratio: nil, target: ">= 2,000/s",
                peakMemoryMB: Memory.peakMB, note: nil))
        return results
    }

    /// A duration in milliseconds, as the latency rows report them.
    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }

    func note(_ row: BenchCommand.Result, _ text: String) -> BenchCommand.Result {
        BenchCommand.Result(
            workload: row.workload, unit: row.unit, ledger: row.ledger, baseline: row.baseline, ratio: row.ratio,
            target: row.target, peakMemoryMB: row.peakMemoryMB, note: text)
    }

    /// The path of an executable on `PATH`, if there is one.
    static func executable(named name: String) -> String? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}

/// One `wrk` run: requests per second and latency percentiles, from its `--latency` report.
struct WrkRun {
    let requestsPerSecond: Double
    let p50: Double
    let p99: Double

    init(_ wrk: String, port: Int, seconds: Int, token: String, script: String?) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: wrk)
        process.arguments =
            ["-t2", "-c64", "-d\(seconds)s", "--latency", "-H", "Authorization: Bearer \(token)"]
            + (script.map { ["-s", $0] } ?? []) + ["http://127.0.0.1:\(port)/inApps/v1/transactions/1"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let report = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0, !report.contains("Non-2xx"),
            let rate = Self.number(after: "Requests/sec:", in: report)
        else { throw BenchError("wrk failed or met errors: \(report.suffix(600))") }
        requestsPerSecond = rate
        p50 = try Self.latency("50%", in: report)
        p99 = try Self.latency("99%", in: report)
    }

    private static func number(after label: String, in report: String) -> Double? {
        report.split(separator: "\n").first { $0.contains(label) }
            .flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }
    }

    /// A latency percentile in milliseconds (`wrk` writes 812.00us, 1.23ms or 1.05s).
    private static func latency(_ percentile: String, in report: String) throws -> Double {
        guard
            let line = report.split(separator: "\n").first(where: {
                $0.trimmingCharacters(in: .whitespaces).hasPrefix(percentile)
            }), let value = line.split(separator: " ").last
        else { throw BenchError("no \(percentile) latency in wrk's report") }
        for (unit, scale) in [("us", 0.001), ("ms", 1.0), ("s", 1000.0)] where value.hasSuffix(unit) {
            if let number = Double(value.dropLast(unit.count)) { return number * scale }
        }
        throw BenchError("wrk's \(percentile) latency \(value) does not read")
    }
}

/// A server in a child process that prints `listening on http://HOST:PORT` when ready.
struct ChildServer {
    let process: Process
    let port: Int

    static func start(_ executable: String, _ arguments: [String]) throws -> ChildServer {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        var bytes = Data()
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, !bytes.contains(UInt8(ascii: "\n")) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            bytes += chunk
        }
        let line = String(decoding: bytes.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
        guard line.hasPrefix("listening on http://"), let port = Int(line.split(separator: ":").last ?? "") else {
            process.terminate()
            throw BenchError("\(arguments.first ?? "") printed \(line)")
        }
        return ChildServer(process: process, port: port)
    }

    /// Its peak resident memory so far, in MB.
    var peakMB: Double { statusMB("VmHWM:") }
    /// Its resident memory now, in MB.
    var residentMB: Double { statusMB("VmRSS:") }

    private func statusMB(_ field: String) -> Double {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field) }),
            let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes / 1024
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    /// One GET with a bearer token; the answer's body.
    static func fetch(port: Int, path: String, token: String) async throws -> Data {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        let (data, response) = try await URLSession.shared.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else {
            throw BenchError("GET \(path) answered \(String(decoding: data.prefix(300), as: UTF8.self))")
        }
        return data
    }
}

/// An ES256 bearer token as Apple's libraries make one, valid for an hour.
enum BenchToken {
    static func make(key: P256.Signing.PrivateKey, bundleID: String) throws -> String {
        let now = Int(Date().timeIntervalSince1970)
        let header = #"{"alg":"ES256","kid":"BENCH","typ":"JWT"}"#
        let claims =
            #"{"iss":"bench-issuer","iat":\#(now),"exp":\#(now + 3_000),"aud":"appstoreconnect-v1","bid":"\#(bundleID)"}"#
        let input = base64URL(Data(header.utf8)) + "." + base64URL(Data(claims.utf8))
        let signature = try key.signature(for: Data(input.utf8))
        return input + "." + base64URL(signature.rawRepresentation)
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// Reading the notifications a `NotificationCollector` received.
enum BenchReceiver {
    /// The transaction a notification reports (its signed transaction's `transactionId`).
    static func transactionID(of signed: String) throws -> String {
        func payload(_ jws: String) throws -> [String: Any] {
            let parts = jws.split(separator: ".")
            guard parts.count == 3 else { throw BenchError("not a JWS") }
            var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
            guard let data = Data(base64Encoded: base64),
                let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
            else { throw BenchError("a JWS payload does not decode") }
            return object
        }
        guard let data = try payload(signed)["data"] as? [String: Any],
            let transaction = data["signedTransactionInfo"] as? String,
            let id = try payload(transaction)["transactionId"] as? String
        else { throw BenchError("a notification without a transaction") }
        return id
    }
}

/// `ledger-lab constant-server --bytes N [--sign]`: Hummingbird answering every request with
/// the same JSON body of N bytes: the HTTP ceiling the server rows of `bench` compare with. It
/// runs on Swift's own executor, as Hummingbird runs by default (`ledger serve` runs its tasks on
/// NIO's event loops; for a constant body the two measured the same, within the noise). With
/// `--sign`, each answer also carries a new ES256 signature of the body (BoringSSL, as `ledger
/// serve` signs): the ceiling of any server that signs what it answers.
struct ConstantServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "constant-server", shouldDisplay: false)

    @Option(help: "The body's length in bytes.")
    var bytes = 1_000

    @Flag(help: "Sign the body for every answer.")
    var sign = false

    /// The base64url of a raw P-256 signature: 86 characters.
    static let signatureLength = 86

    func run() async throws {
        let shortest = sign ? Self.signatureLength + 3 : 2
        guard (shortest...(1 << 20)).contains(bytes) else { throw ValidationError("--bytes: \(shortest) to 1048576") }
        let signed = Array(repeating: UInt8(ascii: "a"), count: bytes - (sign ? Self.signatureLength + 3 : 2))
        let key = P256.Signing.PrivateKey()
        let sign = sign
        let responder = CallbackResponder<BasicRequestContext> { _, _ in
            var body = Array(#"""#.utf8) + signed
            if sign {
                let signature = try key.signature(for: signed).rawRepresentation.base64EncodedString()
                body += Array(".".utf8) + Array(signature.utf8.prefix(Self.signatureLength))
            }
            body += Array(#"""#.utf8)
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
        var logger = Logger(label: "constant-server")
        logger.logLevel = .warning
        let application = Application(
            responder: responder, configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: nil),
            onServerRunning: { channel in
                let line = "listening on http://127.0.0.1:\(channel.localAddress?.port ?? 0)\n"
                FileHandle.standardOutput.write(Data(line.utf8))
            }, logger: logger)
        try await application.runService()
    }
}

/// Hostile connections to a server: half announce a 1 MiB body without a token and send 64 KiB
/// of it, half send part of a request head and stop.
struct HostileLoad {
    static let connections = 200
    /// The requests a well-behaved client makes while they are open.
    static let requests = 200

    private let clients: [RawClient]

    init(port: Int) throws {
        var clients: [RawClient] = []
        let chunk = String(repeating: "x", count: 64 * 1_024)
        for index in 0..<Self.connections {
            let client = try RawClient(port: port)
            if index.isMultiple(of: 2) {
                try client.send(
                    "POST /inApps/v1/notifications/history HTTP/1.1\r\nHost: bench\r\n"
                        + "Content-Type: application/json\r\nContent-Length: 1048576\r\n\r\n" + chunk)
            } else {
                try client.send("GET /inApps/v1/transactions/1 HTTP/1.1\r\nHost: bench\r\nAuthoriz")
            }
            clients.append(client)
        }
        self.clients = clients
    }

    /// How many the server has not closed yet (none is closed before its deadlines).
    var openCount: Int {
        clients.filter { !$0.waitForClose(within: .milliseconds(1)) }.count
    }

    func close() {
        for client in clients { client.close() }
    }
}
