import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// What a request's body needs from the connection, after the HTTP decoder: a deadline, and the
/// `100 Continue` a client that sends `Expect: 100-continue` waits for before it sends the body.
///
/// The deadline closes a connection whose request body does not arrive whole in time from its
/// head.
/// Hummingbird's idle timeout closes a connection that delivers no request part for a while (an
/// idle keep-alive, a head sent byte by byte), but every piece of a body counts as activity: a
/// client sending a 1 MiB body a byte every few seconds would hold its connection for days.
/// This handler, after the HTTP decoder, starts a timer at each request's head and cancels it at
/// its end; when it fires, the connection is closed, whatever the request was.
final class RequestBodyHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let limit: TimeAmount
    private let longestBody: Int
    private var timer: Scheduled<Void>?

    /// Bodies arrive within `limit` of their heads; one announced longer than `longestBody` is
    /// refused (413) without a `100 Continue`.
    init(limit: Duration, longestBody: Int) {
        self.limit = .init(limit)
        self.longestBody = longestBody
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            cancelTimer()
            let loop = context.eventLoop.assumeIsolated()
            timer = loop.scheduleTask(in: limit) { context.close(promise: nil) }
            // The body will be read, or discarded as it arrives for a request refused before it:
            // the client may send it now.
            let length = head.headerFields[.contentLength].flatMap(Int.init) ?? 0
            if head.headerFields[.expect]?.lowercased() == "100-continue", length <= longestBody {
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
            }
        case .body:
            break
        case .end:
            cancelTimer()
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelTimer()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimer()
    }

    private func cancelTimer() {
        timer?.cancel()
        timer = nil
    }
}
