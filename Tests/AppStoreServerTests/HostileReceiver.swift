import Foundation
import Hummingbird
import Logging
import NIOCore
import Synchronization

@testable import AppStoreServer

/// A notification endpoint that misbehaves as outside testing found receivers do: it redirects
/// the POST elsewhere, or answers at once and then trickles its body a byte at a time. It counts
/// every request by method, so that a followed redirect (a GET) would show.
final class HostileReceiver: Sendable {
    enum Behaviour: Sendable {
        /// Answers `status` with a `Location` header pointing back to itself.
        case redirect(status: Int)
        /// Answers 200 at once, then one byte of body every `every`, `count` bytes in all.
        case trickle(every: Duration, count: Int)
        /// Answers 200 announcing 100 bytes of body, sends 10 and closes the connection.
        case cutShort
    }

    private let requests = Mutex<[String]>([])
    private let task = Mutex<Task<Void, any Error>?>(nil)
    private let boundPort = Mutex(0)

    var url: String { "http://127.0.0.1:\(boundPort.withLock { $0 })/notifications" }
    /// The method of every request received, in order.
    var methods: [String] { requests.withLock { $0 } }

    private init() {}

    static func start(_ behaviour: Behaviour) async throws -> HostileReceiver {
        let receiver = HostileReceiver()
        let (ports, bound) = AsyncStream<Int>.makeStream()
        let responder = CallbackResponder<BasicRequestContext> { request, _ in
            _ = try await request.body.collect(upTo: 1 << 20)
            receiver.requests.withLock { $0.append(request.method.rawValue) }
            switch behaviour {
            case .redirect(let status):
                return Response(status: .init(code: status), headers: [.location: receiver.url + "/moved"])
            case .trickle(let every, let count):
                return Response(
                    status: .ok, headers: [.contentLength: String(count)],
                    body: ResponseBody { writer in
                        for _ in 0..<count {
                            try await Task.sleep(for: every)
                            try await writer.write(ByteBuffer(string: "x"))
                        }
                        try await writer.finish(nil)
                    })
            case .cutShort:
                return Response(
                    status: .ok, headers: [.contentLength: "100"],
                    body: ResponseBody { writer in
                        try await writer.write(ByteBuffer(string: "0123456789"))
                        throw CancellationError()
                    })
            }
        }
        var logger = Logger(label: "hostile-receiver")
        logger.logLevel = .critical
        let application = Application(
            responder: responder, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in bound.yield(channel.localAddress?.port ?? 0) }, logger: logger)
        receiver.task.withLock {
            $0 = Task(executorPreference: DedicatedExecutor.shared) { try await application.run() }
        }
        var iterator = ports.makeAsyncIterator()
        let port = await iterator.next() ?? 0
        receiver.boundPort.withLock { $0 = port }
        return receiver
    }

    func stop() async {
        let running = task.withLock { $0 }
        running?.cancel()
        _ = try? await running?.value
    }
}
