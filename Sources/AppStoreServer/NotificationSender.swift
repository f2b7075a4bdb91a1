import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization
public import StoreLedger

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
        /// How long one attempt may take before it counts as `TIMED_OUT`.
        public var attemptTimeout: Duration = .seconds(5)
        /// How many attempts run at once.
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
        /// The notifications attempted, as each stands after its attempt.
        public var attempted: [ServerNotification] = []

        /// How many were delivered.
        public var deliveredCount: Int { attempted.filter { $0.status == .delivered }.count }

        /// A round that attempted `attempted` (nothing by default).
        public init(attempted: [ServerNotification] = []) {
            self.attempted = attempted
        }
    }

    private let ledger: Ledger
    private let limits: Limits
    private let client: HTTPClient

    /// A sender of `ledger`'s outbox. `shutdown()` it when done.
    public init(ledger: Ledger, limits: Limits = Limits()) {
        self.ledger = ledger
        self.limits = limits
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .follow(max: 5, allowCycles: false),
            timeout: .init(connect: .seconds(5), read: .seconds(5)))
        configuration.httpVersion = .http1Only
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Closes the sender's connections.
    public func shutdown() async throws {
        try await client.shutdown()
    }

    /// Attempts every notification due now by the store's clock (at most `limits.batch`), at most
    /// `limits.inFlight` at once, and records each attempt. A store with no notification URL
    /// sends nothing.
    ///
    /// The round's attempts are recorded together, in one commit, once every POST of the round
    /// has ended: one sync for the round, not one per notification. A sender stopped before
    /// that records none of them, and they are sent again.
    public func sendDue() async throws -> Round {
        let (ledger, batch) = (ledger, limits.batch)
        guard let (url, due) = try await Blocking.run({ try Self.due(in: ledger, limit: batch) }), !due.isEmpty
        else { return Round() }
        var outcomes: [NotificationAttemptOutcome] = []
        await withTaskGroup(of: NotificationAttemptOutcome.self) { group in
            var next = due.makeIterator()
            var running = 0
            while let notification = next.next() {
                if running == limits.inFlight, let done = await group.next() {
                    outcomes.append(done)
                    running -= 1
                }
                group.addTask { await self.attempt(notification, to: url) }
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
    /// does whether or not the app runs. Errors of one round (a busy ledger) wait for the next.
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
            while !Task.isCancelled {
                var started = 0
                do {
                    if renewing, ContinuousClock.now - lastSettled >= .seconds(1) {
                        lastSettled = .now
                        let ledger = ledger
                        _ = try await Blocking.run { try ledger.settleDueChanges() }
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
        guard let (url, due) = try await Blocking.run({ try Self.due(in: ledger, limit: free, excluding: taken) })
        else { return 0 }
        for notification in due {
            pipeline.start(notification.sequence)
            group.addTask {
                let outcome = await self.attempt(notification, to: url)
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

    /// Where to send, and the notifications due (`Ledger.dueNotifications`); `nil` when the
    /// store has no notification URL.
    private static func due(
        in ledger: Ledger, limit: Int, excluding taken: Set<Int64> = []
    ) throws -> (url: URL, due: [ServerNotification])? {
        guard let url = try StoreSettings(ledger: ledger).notificationURL else { return nil }
        return (url, try ledger.dueNotifications(limit: limit, excluding: taken))
    }

    /// One attempt to send `notification`, as it ended (not recorded yet).
    private func attempt(_ notification: ServerNotification, to url: URL) async -> NotificationAttemptOutcome {
        let (result, status) = await post(notification.signedPayload, to: url)
        return NotificationAttemptOutcome(notification: notification, result: result, httpStatus: status)
    }

    /// POSTs one signed payload; the outcome in Apple's `sendAttemptResult` terms.
    private func post(_ signedPayload: String, to url: URL) async -> (SendAttemptResult, Int?) {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        let body = try? JSONEncoder().encode(["signedPayload": signedPayload])
        request.body = .bytes(ByteBuffer(bytes: body ?? Data()))
        do {
            let response = try await client.execute(request, timeout: .init(limits.attemptTimeout))
            // The answer's body is not read (Apple requires none), at most a little of it drained.
            _ = try? await response.body.collect(upTo: 64 * 1024)
            let code = Int(response.status.code)
            return (ServerNotification.isSuccess(httpStatus: code) ? .success : .unsuccessfulHTTPResponseCode, code)
        } catch {
            return (Self.result(of: error), nil)
        }
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
