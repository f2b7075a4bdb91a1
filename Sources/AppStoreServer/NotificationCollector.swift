public import Foundation
import Hummingbird
import HummingbirdTLS
import Logging
import NIOCore
import Synchronization

/// A notification endpoint for tests and benchmarks: a real HTTP server on a loopback port that
/// keeps every POST as it arrives (its body, its `signedPayload`, when it came) and answers with
/// the status the test sets, after the delay it sets. Point the store at ``url``
/// (`StoreSettings.notificationURL`) and the notifications `ledger serve` or a
/// ``NotificationSender`` sends arrive here.
///
/// ```swift
/// let collector = try await NotificationCollector.start()
/// // ledger store set notificationURL <collector.url>; make purchases; serve
/// _ = await collector.wait(forCount: 1, within: 5)
/// print(collector.signedPayloads)
/// await collector.stop()
/// ```
public final class NotificationCollector: Sendable {
    /// One POST received.
    public struct Arrival: Sendable {
        /// When it arrived.
        public let instant: ContinuousClock.Instant
        /// Its body, as sent.
        public let body: Data

        /// The `signedPayload` of its JSON body; `nil` for another body.
        public var signedPayload: String? {
            (try? JSONSerialization.jsonObject(with: body) as? [String: Any])?["signedPayload"] as? String
        }
    }

    private struct Answer {
        var status = 200
        var delay: Duration = .zero
    }

    private let received = Mutex<[Arrival]>([])
    private let answer = Mutex(Answer())
    private let arrivalHandler = Mutex<(@Sendable (Arrival) -> Void)?>(nil)
    private let task = Mutex<Task<Void, any Error>?>(nil)
    private let boundPort = Mutex(0)

    /// The port it listens on.
    public var port: Int { boundPort.withLock { $0 } }
    /// Its address, to give the store as its notification URL.
    public var url: String { "\(scheme)://127.0.0.1:\(port)/notifications" }
    /// `https` when it was started with a certificate, else `http`.
    private let scheme: String
    /// Every POST received, in order of arrival.
    public var arrivals: [Arrival] { received.withLock { $0 } }
    /// The `signedPayload` of each POST received, in order of arrival.
    public var signedPayloads: [String] { arrivals.compactMap(\.signedPayload) }

    private init(scheme: String) {
        self.scheme = scheme
    }

    /// A collector listening on a free loopback port, answering 200 at once; over HTTPS with
    /// `tls` (its certificate must name 127.0.0.1, as `TestCertificateAuthority`'s do).
    public static func start(tls: ServerTLS? = nil) async throws -> NotificationCollector {
        let collector = NotificationCollector(scheme: tls == nil ? "http" : "https")
        let (ports, bound) = AsyncStream<Int>.makeStream()
        let responder = CallbackResponder<BasicRequestContext> { request, _ in
            let body = try await request.body.collect(upTo: 1 << 20)
            let arrival = Arrival(instant: .now, body: Data(body.readableBytesView))
            collector.received.withLock { $0.append(arrival) }
            collector.arrivalHandler.withLock { $0 }?(arrival)
            let answer = collector.answer.withLock { $0 }
            if answer.delay > .zero { try await Task.sleep(for: answer.delay) }
            return Response(status: .init(code: answer.status))
        }
        var logger = Logger(label: "notification-collector")
        logger.logLevel = .critical
        let application = Application(
            responder: responder,
            server: try tls.map { try .tls(.http1(), tlsConfiguration: $0.configuration) } ?? .http1(),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in bound.yield(channel.localAddress?.port ?? 0) }, logger: logger)
        // On threads of its own: a test process's other tests may hold every one of Swift's
        // cooperative threads (two on a two-core machine) while they wait for child processes,
        // and a receiver that cannot answer within the sender's 5 seconds records a timeout.
        collector.task.withLock {
            $0 = Task(executorPreference: DedicatedExecutor.shared) { try await application.run() }
        }
        var iterator = ports.makeAsyncIterator()
        let port = await iterator.next() ?? 0
        collector.boundPort.withLock { $0 = port }
        return collector
    }

    /// Answers the POSTs from now on with `status`, after `delay`.
    public func answer(_ status: Int, after delay: Duration = .zero) {
        answer.withLock { $0 = Answer(status: status, delay: delay) }
    }

    /// Calls `body` with each POST as it arrives, before it is answered, on the collector's own
    /// thread: a test acts at that moment (kills the sender mid-delivery, say), whatever load
    /// delays the test's own tasks. `nil` stops calling.
    public func whenEachArrives(_ body: (@Sendable (Arrival) -> Void)?) {
        arrivalHandler.withLock { $0 = body }
    }

    /// Forgets what arrived so far.
    public func reset() {
        received.withLock { $0 = [] }
    }

    /// Waits until `count` POSTs arrived in all, at most `seconds`; whether they did.
    public func wait(forCount count: Int, within seconds: Double) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if received.withLock({ $0.count }) >= count { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return received.withLock { $0.count } >= count
    }

    /// Stops listening.
    public func stop() async {
        let running = task.withLock { $0 }
        running?.cancel()
        _ = try? await running?.value
    }
}

/// Runs tasks on dispatch's threads, outside Swift's cooperative pool (`Task(executorPreference:)`,
/// inherited by the child tasks a server makes): what runs there goes on while the pool's
/// threads are blocked.
final class DedicatedExecutor: TaskExecutor {
    static let shared = DedicatedExecutor()
    // Serial: a serial queue always gets a thread of its own (it overcommits), where a
    // concurrent one shares the pool of threads sized to the cores.
    private let queue = DispatchQueue(label: "storeledger.dedicated-executor")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
