import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
public import SimulatedStore
import Synchronization

/// Sends a ledger's App Store Server Notifications V2 to the store's notification URL: each
/// due notification is POSTed as `{"signedPayload": ...}`, then its attempt recorded (HTTP 200
/// to 206 delivers it; anything else is retried on Apple's schedule, by the store's clock).
/// A notification is recorded as attempted only after its POST ends, so a sender killed during
/// one sends it again later, with the same UUID: delivery is at least once.
///
/// `ledger serve` runs one beside the API; `ledger notifications send` calls `sendDue()` once.
public final class NotificationSender: Sendable {
    /// The bounds of a sender's work.
    public struct Limits: Sendable, Hashable {
        /// How long one attempt may take, from its start to the end of the answer, before it is
        /// cut short as `TIMED_OUT`.
        public var attemptTimeout: Duration = .seconds(5)
        /// How many attempts run at once (and connections the sender keeps to the receiver).
        public var inFlight = 16
        /// How many due notifications one round takes.
        public var batch = 256
        /// How many attempts a running sender keeps, ended or not, before they are recorded.
        public var unrecorded = 1_024

        /// The defaults: 5 seconds an attempt, 16 at once, 256 a round, 1,024 unrecorded.
        public init() {}
    }

    /// What one round sent.
    public struct Round: Sendable, Hashable {
        /// The notifications attempted, as each stands after its attempt (`ledger notifications
        /// show` shows one).
        package var attempted: [ServerNotification] = []

        /// How many were attempted.
        public var attemptedCount: Int { attempted.count }

        /// How many were delivered.
        public var deliveredCount: Int { attempted.filter { $0.status == .delivered }.count }

        /// A round that attempted `attempted` (nothing by default).
        package init(attempted: [ServerNotification] = []) {
            self.attempted = attempted
        }
    }

    private let ledger: Ledger
    private let limits: Limits
    private let client: HTTPClient

    /// A sender of `ledger`'s outbox. `shutdown()` it when done. An `https` notification URL is
    /// delivered to when its certificate chains to one of the system's authorities or of
    /// `trusting`'s, and names the URL's host.
    ///
    /// Redirects are not followed: a 3xx answer is a failed attempt, as the POST's body would
    /// not reach the place it points to. The connection pool holds `limits.inFlight`
    /// connections to the receiver, so no attempt waits for one inside its timeout.
    public init(ledger: Ledger, limits: Limits = Limits(), trusting authorities: TrustedAuthorities? = nil) {
        self.ledger = ledger
        self.limits = limits
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .init(limits.attemptTimeout), read: .init(limits.attemptTimeout)),
            connectionPool: .init(
                idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(1, limits.inFlight)))
        configuration.httpVersion = .http1Only
        if let authorities {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.additionalTrustRoots = [.certificates(authorities.certificates)]
            configuration.tlsConfiguration = tls
        }
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Closes the sender's connections.
    public func shutdown() async throws {
        try await client.shutdown()
    }

    /// Attempts every notification due now by the store's clock (at most `limits.batch`), at most
    /// `limits.inFlight` at once, each to its app's notification URL, and records each attempt.
    /// An app with no notification URL has none sent.
    ///
    /// The round's attempts are recorded together, in one commit, once every POST of the round
    /// has ended: one sync for the round, not one per notification. A sender stopped before
    /// that records none of them, and they are sent again.
    public func sendDue() async throws -> Round {
        let (ledger, batch) = (ledger, limits.batch)
        let due = try await Blocking.run { try Self.due(in: ledger, limit: batch) }
        guard !due.isEmpty else { return Round() }
        var outcomes: [NotificationAttemptOutcome] = []
        await withTaskGroup(of: NotificationAttemptOutcome.self) { group in
            var next = due.makeIterator()
            var running = 0
            while let (destination, notification) = next.next() {
                if running == limits.inFlight, let done = await group.next() {
                    outcomes.append(done)
                    running -= 1
                }
                group.addTask { await self.attempt(notification, to: destination) }
                running += 1
            }
            for await done in group { outcomes.append(done) }
        }
        try Task.checkCancellation()  // stopped: no attempt recorded, all are sent again later
        let ended = outcomes
        return Round(attempted: try await Blocking.run { try ledger.recordAttempts(ended) })
    }

    /// Sends until cancelled: what is due, as soon as it is due (committed by this process or
    /// another, looked for every `pollInterval`); with `renewing`, it also makes the renewals,
    /// expiries and ends of grace periods that fall due on the store's clock, as the App Store
    /// does whether or not the app runs. It runs the batches of mass extensions left to run
    /// (`Ledger.continueMassRenewalExtension()`), one a round. Errors of one round (a busy
    /// ledger) wait for the next.
    ///
    /// Sending and recording overlap: a POST starts as soon as one of `limits.inFlight` slots is
    /// free, and the attempts that ended are recorded together, in one commit, while others are
    /// sent, so that waiting for the write lock (other processes' commits hold it) never holds a
    /// notification back. Due notifications are read through a connection of the sender's own,
    /// which that wait does not block either. A notification attempted is not taken again until
    /// its attempt is recorded; at most `limits.unrecorded` wait to be.
    public func run(pollInterval: Duration = .milliseconds(10), renewing: Bool = true) async {
        let pipeline = Pipeline()
        var slotFreed = pipeline.slotFreed.makeAsyncIterator()
        let reader =
            (try? Ledger.open(at: ledger.path, access: .readOnly, configuration: ledger.configuration)) ?? ledger
        defer { if reader !== ledger { try? reader.close() } }
        await withDiscardingTaskGroup { group in
            group.addTask { await self.record(pipeline) }
            var lastSettled = ContinuousClock.now - .seconds(1)
            // Whether a mass extension may have batches left: looked for once a second, then
            // one batch a round (its own commit) until none is left.
            var extending = true
            while !Task.isCancelled {
                var started = 0
                do {
                    let ledger = ledger
                    if ContinuousClock.now - lastSettled >= .seconds(1) {
                        lastSettled = .now
                        if renewing { _ = try await Blocking.run { try ledger.settleDueChanges() } }
                        extending = true
                    }
                    if extending {
                        extending = try await Blocking.run { try ledger.continueMassRenewalExtension() }
                    }
                    started = try await startDue(in: pipeline, reading: reader, group: &group)
                } catch {
                    // The next round tries again; a cancelled one ends the loop.
                }
                if pipeline.isFull(limits) {
                    await slotFreed.next()  // an attempt ends within its timeout
                } else if started == 0 {
                    try? await Task.sleep(for: pollInterval)
                }
            }
            pipeline.close()
        }
    }

    /// Starts a POST for each notification due and not attempted already, as many as free
    /// slots allow; returns how many it started.
    private func startDue(
        in pipeline: Pipeline, reading ledger: Ledger, group: inout DiscardingTaskGroup
    ) async throws -> Int {
        let free = pipeline.freeSlots(limits)
        guard free > 0 else { return 0 }
        let taken = pipeline.sequences
        let due = try await Blocking.run { try Self.due(in: ledger, limit: free, excluding: taken) }
        for (destination, notification) in due {
            pipeline.start(notification.sequence)
            group.addTask {
                let outcome = await self.attempt(notification, to: destination)
                // Cut short: not recorded, sent again by the next sender.
                guard !Task.isCancelled else { return pipeline.abandon(notification.sequence) }
                pipeline.finish(outcome)
            }
        }
        return due.count
    }

    /// Records the attempts that ended, each time some have, in one commit for all waiting;
    /// once more when the pipeline closes. A record that fails (the ledger busy past its
    /// timeout) is tried again after `retryInterval`; its sequences stay taken meanwhile.
    private func record(_ pipeline: Pipeline, retryInterval: Duration = .milliseconds(100)) async {
        let ledger = ledger
        let record = { @Sendable (outcomes: [NotificationAttemptOutcome]) in
            try await Blocking.run { try ledger.recordAttempts(outcomes) }
        }
        for await _ in pipeline.ended where !(await pipeline.recordEnded(record)) {
            try? await Task.sleep(for: retryInterval)
            pipeline.ring()
        }
        _ = await pipeline.recordEnded(record)
    }

    /// Where a round sends: the store's notification URL, or why the URL the ledger holds cannot
    /// be used (each attempt then fails with that reason, and the outbox goes on).
    private enum Destination: Sendable {
        case url(URL)
        case unusable(String)
    }

    /// The notifications due (`Ledger.dueNotifications`: those of apps with a notification
    /// URL), each with where to send it: its app's URL.
    private static func due(
        in ledger: Ledger, limit: Int, excluding taken: Set<Int64> = []
    ) throws -> [(Destination, ServerNotification)] {
        let due = try ledger.dueNotifications(limit: limit, excluding: taken)
        var destinations: [Int64: Destination] = [:]
        for app in Set(due.map(\.appID)) {
            let settings = try ledger.settings(ofApp: app)
            if let url = settings.notificationURL {
                destinations[app] = .url(url)
            } else if let problem = settings.notificationURLProblem {
                destinations[app] = .unusable(problem)
            }
        }
        return due.compactMap { notification in destinations[notification.appID].map { ($0, notification) } }
    }

    /// One attempt to send `notification`, as it ended (not recorded yet).
    private func attempt(
        _ notification: ServerNotification, to destination: Destination
    ) async -> NotificationAttemptOutcome {
        guard notification.isAuthentic else {
            return NotificationAttemptOutcome(
                notification: notification, result: .other, httpStatus: nil,
                detail: "its record was changed outside the ledger (verify reports it): it is not sent")
        }
        switch destination {
        case .unusable(let problem):
            return NotificationAttemptOutcome(
                notification: notification, result: .other, httpStatus: nil, detail: problem)
        case .url(let url):
            let (result, status, detail) = await post(notification.signedPayload, to: url)
            return NotificationAttemptOutcome(
                notification: notification, result: result, httpStatus: status, detail: detail)
        }
    }

    /// POSTs one signed payload; the outcome in Apple's `sendAttemptResult` terms, with the
    /// HTTP status and a detail when they say more. The attempt, from its start to the end of the
    /// answer's body, takes at most `limits.attemptTimeout`: past it, it is cut short and
    /// `TIMED_OUT`, however slowly the receiver keeps sending.
    private func post(_ signedPayload: String, to url: URL) async -> (SendAttemptResult, Int?, String?) {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        let body = try? JSONEncoder().encode(["signedPayload": signedPayload])
        request.body = .bytes(ByteBuffer(bytes: body ?? Data()))
        let timeout = limits.attemptTimeout
        let end = ContinuousClock.now + timeout
        let timedOut = (SendAttemptResult.timedOut, Int?.none, "no complete answer within \(Self.seconds(timeout))")
        do {
            // The client's own deadline covers the connection and the answer's head, and tells a
            // refused connection from a slow one; the body is raced against what is left.
            let response = try await client.execute(request, deadline: .now() + .init(timeout))
            switch await Self.drain(response.body, before: end) {
            case .ended: break
            case .timedOut: return timedOut
            case .cut: return (.prematureClose, nil, "the answer's body was cut short")
            }
            let code = Int(response.status.code)
            if ServerNotification.isSuccess(httpStatus: code) { return (.success, code, nil) }
            let location = response.headers.first(name: "Location").map { "\"\($0)\"" } ?? "nowhere"
            let detail =
                (300...399).contains(code)
                ? "a redirect (to \(location)) is not followed: the POST's body would not arrive" : nil
            return (.unsuccessfulHTTPResponseCode, code, detail)
        } catch {
            let result = Self.result(of: error)
            return result == .timedOut ? timedOut : (result, nil, nil)
        }
    }

    /// How an answer's body ended.
    private enum Drained: Sendable {
        /// Whole (or past 64 KiB, which is read no further).
        case ended
        /// Not by the attempt's deadline.
        case timedOut
        /// The connection closed, or failed, before its end.
        case cut
    }

    /// Reads an answer's body to its end (64 KiB of it at most: Apple requires none, and nothing
    /// of it is kept) before `end`. Past `end` the read is cancelled, which closes the connection.
    private static func drain(_ body: HTTPClientResponse.Body, before end: ContinuousClock.Instant) async -> Drained {
        await withTaskGroup(of: Drained.self) { group in
            group.addTask {
                do {
                    _ = try await body.collect(upTo: 64 * 1024)
                    return .ended
                } catch is NIOTooManyBytesError {
                    return .ended
                } catch {
                    return .cut
                }
            }
            group.addTask {
                try? await Task.sleep(until: end)
                return .timedOut
            }
            let first = await group.next() ?? .timedOut
            group.cancelAll()
            return first
        }
    }

    private static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let milliseconds = seconds * 1_000 + attoseconds / 1_000_000_000_000_000
        return milliseconds % 1_000 == 0 ? "\(milliseconds / 1_000) s" : "\(milliseconds) ms"
    }

    /// An attempt's error in Apple's terms.
    static func result(of error: any Error) -> SendAttemptResult {
        if let error = error as? HTTPClientError {
            switch error {
            case .readTimeout, .writeTimeout, .connectTimeout, .deadlineExceeded, .tlsHandshakeTimeout:
                return .timedOut
            case .remoteConnectionClosed:
                return .prematureClose
            case .redirectCycleDetected, .redirectLimitReached:
                return .circularRedirect
            case .invalidURL, .emptyHost, .emptyScheme:
                return .other
            default:
                return .invalidResponse
            }
        }
        if error is NIOSSLError { return .tlsIssue }
        if error is NIOConnectionError || error is IOError || error is ChannelError { return .socketIssue }
        if error is HTTPParserError { return .invalidResponse }
        return .other
    }
}

/// A running sender's attempts between their start and their record: the sequences taken
/// (not to be taken again before their record), how many POSTs run, the outcomes of those
/// that ended, and the bells that ring when one ends.
private final class Pipeline: Sendable {
    private struct State {
        var sequences: Set<Int64> = []
        var posting = 0
        var ended: [NotificationAttemptOutcome] = []
    }

    private let state = Mutex(State())
    /// Rings when an attempt ends (once for many: it keeps one ring).
    let ended: AsyncStream<Void>
    private let endedBell: AsyncStream<Void>.Continuation
    /// Rings when a slot in flight is free again.
    let slotFreed: AsyncStream<Void>
    private let slotBell: AsyncStream<Void>.Continuation

    init() {
        (ended, endedBell) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        (slotFreed, slotBell) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    var sequences: Set<Int64> { state.withLock { $0.sequences } }

    /// How many attempts may start now: free slots in flight, room among the unrecorded.
    func freeSlots(_ limits: NotificationSender.Limits) -> Int {
        state.withLock { state in
            min(limits.inFlight - state.posting, limits.unrecorded - state.sequences.count, limits.batch)
        }
    }

    /// Whether no attempt may start before one ends.
    func isFull(_ limits: NotificationSender.Limits) -> Bool {
        freeSlots(limits) <= 0
    }

    func start(_ sequence: Int64) {
        state.withLock { state in
            state.sequences.insert(sequence)
            state.posting += 1
        }
    }

    func finish(_ outcome: NotificationAttemptOutcome) {
        state.withLock { state in
            state.posting -= 1
            state.ended.append(outcome)
        }
        slotBell.yield()
        ring()
    }

    func abandon(_ sequence: Int64) {
        state.withLock { state in
            state.posting -= 1
            state.sequences.remove(sequence)
        }
        slotBell.yield()
    }

    /// Records the outcomes that ended with `record`; on success their sequences may be taken
    /// again (a failed attempt is due again later). Returns whether it recorded (or had nothing
    /// to record).
    func recordEnded(_ record: ([NotificationAttemptOutcome]) async throws -> [ServerNotification]) async -> Bool {
        let outcomes = state.withLock { $0.ended }
        guard !outcomes.isEmpty else { return true }
        guard (try? await record(outcomes)) != nil else { return false }
        state.withLock { state in
            state.ended.removeFirst(outcomes.count)
            for outcome in outcomes { state.sequences.remove(outcome.notification.sequence) }
        }
        return true
    }

    /// Rings the `ended` bell: what ended is recorded.
    func ring() {
        endedBell.yield()
    }

    func close() {
        endedBell.finish()
        slotBell.finish()
    }
}
