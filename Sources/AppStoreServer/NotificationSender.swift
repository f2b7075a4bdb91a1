import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
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

        /// The defaults: 5 seconds an attempt, 16 at once, 256 a round.
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
        guard let url = try StoreSettings(ledger: ledger).notificationURL else { return Round() }
        let due = try ledger.dueNotifications(limit: limits.batch)
        guard !due.isEmpty else { return Round() }
        var outcomes: [NotificationAttemptOutcome] = []
        await withTaskGroup(of: NotificationAttemptOutcome.self) { group in
            var next = due.makeIterator()
            var running = 0
            while let notification = next.next() {
                if running == limits.inFlight, let done = await group.next() {
                    outcomes.append(done)
                    running -= 1
                }
                group.addTask {
                    let (result, status) = await self.post(notification.signedPayload, to: url)
                    return NotificationAttemptOutcome(notification: notification, result: result, httpStatus: status)
                }
                running += 1
            }
            for await done in group { outcomes.append(done) }
        }
        try Task.checkCancellation()  // stopped: no attempt recorded, all are sent again later
        return Round(attempted: try ledger.recordAttempts(outcomes))
    }

    /// Sends until cancelled: what is due, as soon as it is due (committed by this process or
    /// another, looked for every `pollInterval`); with `renewing`, it also makes the renewals,
    /// expiries and ends of grace periods that fall due on the store's clock, as the App Store
    /// does whether or not the app runs. Errors of one round (a busy ledger) wait for the next.
    public func run(pollInterval: Duration = .milliseconds(10), renewing: Bool = true) async {
        var lastSettled = ContinuousClock.now - .seconds(1)
        while !Task.isCancelled {
            var sentSome = false
            do {
                if renewing, ContinuousClock.now - lastSettled >= .seconds(1) {
                    lastSettled = .now
                    try await ledger.settleDueChanges()
                }
                sentSome = !(try await sendDue()).attempted.isEmpty
            } catch {
                // The next round tries again; a cancelled one ends the loop.
            }
            if !sentSome { try? await Task.sleep(for: pollInterval) }
        }
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
