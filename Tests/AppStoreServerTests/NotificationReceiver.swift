import Foundation
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// A team's notification endpoint in the test process: a real HTTP server on a loopback port
/// that keeps every body POSTed to it (as it arrives) and answers with the status the test sets,
/// after the delay it sets.
final class NotificationReceiver: Sendable {
    private struct State {
        var bodies: [Data] = []
        var status = 200
        var delay: Duration = .zero
    }

    private let state = Mutex(State())
    private let task = Mutex<Task<Void, any Error>?>(nil)
    private let boundPort = Mutex(0)

    /// The port it listens on.
    var port: Int { boundPort.withLock { $0 } }
    var url: String { "http://127.0.0.1:\(port)/notifications" }

    /// The `signedPayload` of each POST received, in order of arrival.
    var payloads: [String] {
        state.withLock { $0.bodies }.compactMap {
            (try? JSONSerialization.jsonObject(with: $0) as? [String: String])?["signedPayload"]
        }
    }

    /// How later POSTs are answered.
    func answer(_ status: Int, after delay: Duration = .zero) {
        state.withLock { ($0.status, $0.delay) = (status, delay) }
    }

    /// A receiver listening on a free loopback port.
    static func start() async throws -> NotificationReceiver {
        let receiver = NotificationReceiver()
        let (ports, bound) = AsyncStream<Int>.makeStream()
        let responder = CallbackResponder<BasicRequestContext> { request, _ in
            let body = try await request.body.collect(upTo: 1 << 20)
            let (status, delay) = receiver.state.withLock { state in
                state.bodies.append(Data(body.readableBytesView))
                return (state.status, state.delay)
            }
            if delay > .zero { try await Task.sleep(for: delay) }
            return Response(status: .init(code: status))
        }
        var logger = Logger(label: "receiver")
        logger.logLevel = .warning
        let application = Application(
            responder: responder, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in bound.yield(channel.localAddress?.port ?? 0) }, logger: logger)
        receiver.task.withLock { $0 = Task { try await application.run() } }
        var iterator = ports.makeAsyncIterator()
        let port = await iterator.next() ?? 0
        receiver.boundPort.withLock { $0 = port }
        return receiver
    }

    /// Stops listening.
    func stop() async {
        let running = task.withLock { $0 }
        running?.cancel()
        _ = try? await running?.value
    }

    /// Waits until `count` POSTs arrived, at most `seconds`; whether they did.
    func waitForPayloads(_ count: Int, within seconds: Double) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if payloads.count >= count { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return payloads.count >= count
    }
}
