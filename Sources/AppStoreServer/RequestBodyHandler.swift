import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// The deadlines of a connection's requests and answers, after the HTTP decoder, and the
/// `100 Continue` a client that sends `Expect: 100-continue` waits for before it sends a body.
///
/// Hummingbird's idle timeout closes a connection that delivers no request part for a while (an
/// idle keep-alive, a head sent byte by byte), but every piece of a body counts as activity, and
/// nothing counts while an answer is being made: a client sending a 1 MiB body a byte every few
/// seconds, or one that pipelines requests and never reads their answers, would hold its
/// connection for days. So each request's body must arrive within `limit` of its head, and each
/// answer must be written whole within `limit` of its head; past either, the connection is closed.
final class RequestBodyHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let limit: TimeAmount
    private let longestBody: Int
    private var bodyTimer: Scheduled<Void>?
    private var answerTimer: Scheduled<Void>?
    /// Requests whose head was read and whose answer has not been written whole.
    private var unanswered = 0

    /// Bodies and answers within `limit` of their heads; a body announced longer than
    /// `longestBody` gets no `100 Continue` (it is refused, 413).
    init(limit: Duration, longestBody: Int) {
        self.limit = .init(limit)
        self.longestBody = longestBody
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            bodyTimer?.cancel()
            bodyTimer = closing(context)
            // The body will be read, or discarded as it arrives for a request refused before it:
            // the client may send it now. Not while an earlier answer is being written (a
            // pipelined request): the interim answer would land inside it.
            let length = head.headerFields[.contentLength].flatMap(Int.init) ?? 0
            if unanswered == 0, head.headerFields[.expect]?.lowercased() == "100-continue", length <= longestBody {
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
            }
            unanswered += 1
        case .body:
            break
        case .end:
            bodyTimer?.cancel()
            bodyTimer = nil
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head:
            answerTimer?.cancel()
            answerTimer = closing(context)
            context.write(data, promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            unanswered = max(0, unanswered - 1)
            // Written whole once the write completes: the client read enough of it.
            let written = promise ?? context.eventLoop.makePromise()
            written.futureResult.assumeIsolated().whenComplete { _ in
                self.answerTimer?.cancel()
                self.answerTimer = nil
            }
            context.write(data, promise: written)
        }
    }

    /// A timer that closes the connection after `limit`.
    private func closing(_ context: ChannelHandlerContext) -> Scheduled<Void> {
        context.eventLoop.assumeIsolated().scheduleTask(in: limit) { context.close(promise: nil) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelTimers()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimers()
    }

    private func cancelTimers() {
        bodyTimer?.cancel()
        answerTimer?.cancel()
        (bodyTimer, answerTimer) = (nil, nil)
    }
}
