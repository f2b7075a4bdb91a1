import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A TCP client that sends and reads raw bytes, for requests no HTTP client would make: the
/// hostile connections of `bench`'s server rows and of the server's tests.
///
/// Its waits (`received`, `closed`) block a thread of their own, never one of Swift's
/// cooperative threads (two on a two-core machine), which the servers and receivers of the same
/// process need meanwhile. Sendable by hand: one task uses a client at a time, and a wait hands it
/// to its thread and back (the socket and `isClosed` are never touched by two at once).
public final class RawClient: @unchecked Sendable {
    private var socketFD: Int32
    /// Whether the connection ended: closed by this side, or by the server.
    public private(set) var isClosed = false

    /// A connection to `port` on 127.0.0.1.
    public init(port: Int) throws {
        socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            Glibc.close(socketFD)
            throw POSIXError(.ECONNREFUSED)
        }
    }

    deinit { close() }

    /// Sends `text`'s bytes; throws when the connection is closed.
    public func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        let sent = bytes.withUnsafeBytes { Glibc.send(socketFD, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == bytes.count else {
            isClosed = true
            throw POSIXError(.EPIPE)
        }
    }

    /// `receive(upTo:within:)`, waiting on a thread of its own.
    public func received(upTo count: Int, within limit: Duration) async -> String {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: self.receive(upTo: count, within: limit)) }
        }
    }

    /// `waitForClose(within:)`, waiting on a thread of its own.
    public func closed(within limit: Duration) async -> Bool {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: self.waitForClose(within: limit)) }
        }
    }

    /// What arrives within `limit`, up to `count` bytes (less when the connection closes first).
    /// It blocks the calling thread meanwhile.
    public func receive(upTo count: Int, within limit: Duration) -> String {
        var received: [UInt8] = []
        let end = ContinuousClock.now + limit
        while received.count < count, ContinuousClock.now < end, !isClosed {
            guard let chunk = read(upTo: count - received.count, waiting: end - ContinuousClock.now) else { break }
            received += chunk
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// Whether the server closes the connection within `limit` (what it sends meanwhile is read
    /// and dropped).
    public func waitForClose(within limit: Duration) -> Bool {
        let end = ContinuousClock.now + limit
        while !isClosed, ContinuousClock.now < end {
            _ = read(upTo: 4_096, waiting: end - ContinuousClock.now)
        }
        return isClosed
    }

    /// One read, waiting at most `waiting`: the bytes, or `nil` when none came (`isClosed` says
    /// whether the connection ended).
    private func read(upTo count: Int, waiting: Duration) -> [UInt8]? {
        var poller = pollfd(fd: socketFD, events: Int16(POLLIN), revents: 0)
        let milliseconds = max(
            1, Int32(waiting.components.seconds * 1_000 + waiting.components.attoseconds / 1_000_000_000_000_000))
        guard poll(&poller, 1, milliseconds) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: max(1, count))
        let read = recv(socketFD, &buffer, buffer.count, 0)
        guard read > 0 else {
            isClosed = true
            return nil
        }
        return Array(buffer[0..<read])
    }

    /// Closes the connection (again: nothing).
    public func close() {
        guard socketFD >= 0 else { return }
        Glibc.close(socketFD)
        socketFD = -1
        isClosed = true
    }
}
