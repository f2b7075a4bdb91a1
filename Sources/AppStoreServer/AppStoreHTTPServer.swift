import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import NIOPosix
public import SimulatedStore

/// The App Store Server API (`AppStoreServerAPI`) on a real port, over HTTP/1.1 with
/// keep-alive (Hummingbird). `ledger serve` runs one; a Swift server's tests can run one
/// in-process on an open ledger:
///
/// ```swift
/// let server = AppStoreHTTPServer(ledger: ledger, port: 0)   // 0: a free port
/// let task = Task { try await server.run { host, port in print("listening on http://\(host):\(port)") } }
/// // ... point the client at the port ...
/// task.cancel()   // stops accepting, finishes the requests in flight
/// ```
public struct AppStoreHTTPServer: Sendable {
    /// The bounds of what clients may hold: connections, and how long a connection may wait
    /// between requests or take to send one. A client that breaks them is disconnected; the
    /// others are answered meanwhile.
    public struct Limits: Sendable, Hashable {
        /// The most connections open at once; past it, new ones wait to be accepted (in the
        /// listen backlog) until one closes.
        public var maximumConnections = 256
        /// How long a connection may deliver no part of a request (its head, or a piece of its
        /// body) before it is closed: an idle keep-alive connection, or a request head sent too
        /// slowly. Never while its answer is being made.
        public var idleTimeout: Duration = .seconds(15)
        /// How long a request's body may take to arrive whole, from its head; past it the
        /// connection is closed.
        public var bodyTimeout: Duration = .seconds(15)

        /// The defaults: 256 connections, 15 seconds idle, 15 seconds a body.
        public init() {}
    }

    /// What the server answers with.
    public let api: AppStoreServerAPI
    /// The address it binds to: loopback unless told otherwise.
    public let host: String
    /// The port it binds to; 0 picks a free one (`run`'s `onListening` says which).
    public let port: Int
    /// Whether it also sends the store's Server Notifications V2 and makes the renewals that fall
    /// due while it runs (`NotificationSender.run`).
    public let sendsNotifications: Bool
    /// What clients may hold.
    public let limits: Limits
    /// The certificate and key it answers HTTPS with; `nil`: plain HTTP.
    public let tls: ServerTLS?
    /// The Server Notifications sender's extra trust (`NotificationSender`'s `trusting`).
    public let notificationTrust: TrustedAuthorities?

    /// `https` when the server has a certificate (`tls`), else `http`.
    public var scheme: String { tls == nil ? "http" : "https" }

    /// A server of `ledger`'s store on `host` and `port` (loopback and 8080 by default), not
    /// started yet (`run`); unless told otherwise it sends the store's notifications too,
    /// trusting `notificationTrust` besides the system's authorities. With `tls` it answers
    /// HTTPS only.
    public init(
        ledger: Ledger, host: String = "127.0.0.1", port: Int = 8080, sendsNotifications: Bool = true,
        limits: Limits = Limits(), tls: ServerTLS? = nil, notificationTrust: TrustedAuthorities? = nil
    ) {
        self.api = AppStoreServerAPI(ledger: ledger)
        self.host = host
        self.port = port
        self.sendsNotifications = sendsNotifications
        self.limits = limits
        self.tls = tls
        self.notificationTrust = notificationTrust
    }

    /// Serves until the task is cancelled, or, with `stoppingOnSignals`, until SIGINT or
    /// SIGTERM: it then stops accepting connections and finishes the requests in flight.
    /// `onListening` is called once, when the server accepts connections, with the host and
    /// the port it is bound to.
    public func run(
        stoppingOnSignals: Bool = false, onListening: @escaping @Sendable (String, Int) async -> Void = { _, _ in }
    ) async throws {
        // One read-only connection per core answers the reading requests beside the writer: a
        // request reads on the thread that runs its task, and those are one per core.
        let readers = try ReaderPool(of: api.ledger, count: ProcessInfo.processInfo.activeProcessorCount)
        defer { readers.close() }
        let api = api.reading(through: readers)
        let responder = CallbackResponder<BasicRequestContext> { request, _ in
            // A body announced longer than any request may carry is refused before a byte of it is
            // read; so is one whose request would be refused whatever it held (no valid token, no
            // such endpoint): such a body is discarded as it arrives, never held.
            if let length = request.headers[.contentLength].flatMap(Int.init),
                length > AppStoreServerAPI.maximumBodySize
            {
                return Self.response(AppStoreServerAPI.answer(.payloadTooLarge))
            }
            if let coding = request.headers[.transferEncoding], coding.lowercased() != "chunked" {
                return Self.response(AppStoreServerAPI.answer(.notImplemented))
            }
            if Self.carriesBody(request.headers),
                let refused = api.refusalBeforeBody(
                    method: request.method.rawValue, path: request.uri.path,
                    authorization: request.headers[.authorization])
            {
                return Self.response(refused)
            }
            var body = Data()
            do {
                body = Data(try await request.body.collect(upTo: AppStoreServerAPI.maximumBodySize).readableBytesView)
            } catch {
                return Self.response(AppStoreServerAPI.answer(.payloadTooLarge))
            }
            let call = APIRequest(
                method: request.method.rawValue, path: request.uri.path, query: request.uri.query,
                authorization: request.headers[.authorization], body: body)
            // A read through a free read-only connection waits for nothing: it is answered on
            // this thread. Anything else may wait for SQLite's write lock, which blocks its
            // thread, so it goes to `Blocking`'s: not one of the threads every connection shares.
            if let answer = api.answerReading(call) { return Self.response(answer) }
            return Self.response(await Blocking.run { api.respond(to: call) })
        }
        let (host, limits) = (host, limits)
        let http = HTTPServerBuilder.http1(
            configuration: .init(
                additionalChannelHandlers: [
                    RequestBodyHandler(limit: limits.bodyTimeout, longestBody: AppStoreServerAPI.maximumBodySize)
                ],
                idleTimeout: .init(limits.idleTimeout)))
        let application = Application(
            responder: responder,
            server: try tls.map { try .tls(http, tlsConfiguration: $0.configuration) } ?? http,
            configuration: .init(
                address: .hostname(host, port: port), serverName: nil,
                availableConnectionsDelegate: MaximumAvailableConnections(limits.maximumConnections)),
            onServerRunning: { channel in await onListening(host, channel.localAddress?.port ?? 0) },
            logger: Self.quietLogger)
        let sender = sendsNotifications ? NotificationSender(ledger: api.ledger, trusting: notificationTrust) : nil
        // The sender stops when the server does (a signal, or this task cancelled); an attempt
        // cut short is not recorded, and is made again by the next sender.
        let sending = Task { await sender?.run() }
        var failure: (any Error)?
        do {
            if stoppingOnSignals {
                try await application.runService()
            } else {
                try await application.run()
            }
        } catch {
            failure = error
        }
        sending.cancel()
        await sending.value
        try? await sender?.shutdown()
        if let failure { throw failure }
    }

    /// Makes NIO's event loops, on which the server's connections live, Swift's executor for
    /// the rest of the process: a request's task then runs where its connection's bytes arrive,
    /// not handed between two pools of threads (a third more answers a second on two cores:
    /// docs/PERFORMANCE.md). `ledger serve` calls it first thing in `main`. Call it at most once,
    /// from the main thread, before any task starts; work that blocks is moved off these threads
    /// (`Blocking`).
    public static func runTasksOnEventLoops() {
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
    }

    /// Whether a request's head announces a body: a length other than 0, or a transfer coding.
    private static func carriesBody(_ headers: HTTPFields) -> Bool {
        if headers[.transferEncoding] != nil { return true }
        return headers[.contentLength].map { $0 != "0" } ?? false
    }

    private static func response(_ answer: APIResponse) -> Response {
        guard let json = answer.json else {
            return Response(status: .init(code: answer.status))
        }
        return Response(
            status: .init(code: answer.status), headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: json)))
    }

    /// Hummingbird logs each request at `debug` and its own start at `info`: the command prints
    /// its one line itself.
    private static var quietLogger: Logger {
        var logger = Logger(label: "ledger-serve")
        logger.logLevel = .warning
        return logger
    }
}
