import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Testing

@testable import AppStoreServer

/// The connection deadlines of `ledger serve`, on an embedded channel whose clock the test moves:
/// a body must arrive, and an answer be written, within the limit of its head; `100 Continue`
/// never lands inside an earlier answer.
@Suite struct RequestBodyHandlerTests {
    static func channel() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel(handler: RequestBodyHandler(limit: .seconds(2), longestBody: 1 << 20))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    static func head(expecting: Bool = false, length: Int = 10) -> HTTPRequestPart {
        var fields: HTTPFields = [.contentLength: String(length)]
        if expecting { fields[.expect] = "100-continue" }
        return .head(HTTPRequest(method: .post, scheme: nil, authority: "x", path: "/", headerFields: fields))
    }

    @Test func aBodyThatDoesNotArriveInTimeClosesTheConnection() throws {
        let channel = try Self.channel()
        try channel.writeInbound(Self.head())
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1_900))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(200))
        #expect(!channel.isActive, "closed at the body's deadline")
    }

    @Test func aBodyInTimeKeepsTheConnection() throws {
        let channel = try Self.channel()
        try channel.writeInbound(Self.head())
        try channel.writeInbound(HTTPRequestPart.end(nil))
        channel.embeddedEventLoop.advanceTime(by: .seconds(10))
        #expect(channel.isActive)
    }

    /// A client that never reads its answers (pipelined requests) holds its connection no longer
    /// than the limit: an answer not written whole in time closes it.
    @Test func anAnswerNotWrittenWholeInTimeClosesTheConnection() throws {
        let channel = try Self.channel()
        try channel.writeInbound(Self.head())
        try channel.writeInbound(HTTPRequestPart.end(nil))
        try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .ok)))
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(2_100))
        #expect(!channel.isActive, "closed at the answer's deadline")

        let answered = try Self.channel()
        try answered.writeInbound(Self.head())
        try answered.writeInbound(HTTPRequestPart.end(nil))
        try answered.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .ok)))
        try answered.writeOutbound(HTTPResponsePart.end(nil))
        answered.embeddedEventLoop.advanceTime(by: .seconds(10))
        #expect(answered.isActive, "an answer written whole keeps it")
    }

    @Test func continueIsSentOnlyWhenNoAnswerIsPending() throws {
        let channel = try Self.channel()
        try channel.writeInbound(Self.head(expecting: true))
        let interim = try channel.readOutbound(as: HTTPResponsePart.self)
        guard case .head(let response)? = interim else {
            Issue.record("no 100 Continue: \(String(describing: interim))")
            return
        }
        #expect(response.status == .continue)
        try channel.writeInbound(HTTPRequestPart.end(nil))
        // A second request pipelined while the first one's answer is not written: no interim answer.
        try channel.writeInbound(Self.head(expecting: true))
        #expect(try channel.readOutbound(as: HTTPResponsePart.self) == nil)
        // Too long a body: refused at once elsewhere (413), so no 100 Continue either.
        let long = try Self.channel()
        try long.writeInbound(Self.head(expecting: true, length: (1 << 20) + 1))
        #expect(try long.readOutbound(as: HTTPResponsePart.self) == nil)
    }
}
