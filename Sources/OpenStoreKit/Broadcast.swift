import Foundation
import Synchronization

/// Hands values to every listening `AsyncStream`; a listener leaves when its stream ends.
final class Broadcast<Element: Sendable>: Sendable {
    private let listeners = Mutex<[UUID: AsyncStream<Element>.Continuation]>([:])

    /// A new listener's stream; `first` is what it receives before anything sent after the call.
    func listen(first: () -> [Element] = { [] }) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream()
        let id = UUID()
        continuation.onTermination = { [weak self] _ in
            self?.listeners.withLock { _ = $0.removeValue(forKey: id) }
        }
        listeners.withLock { listeners in
            for value in first() { continuation.yield(value) }
            listeners[id] = continuation
        }
        return stream
    }

    /// Sends `values` to every listener; they are made only when someone listens (the values
    /// of `Transaction.updates` are signed and verified: StoreKit 1 code, which never listens,
    /// must not pay for that).
    func send(_ values: @autoclosure () -> [Element]) {
        listeners.withLock { listeners in
            guard !listeners.isEmpty else { return }
            let values = values()
            for continuation in listeners.values {
                for value in values { continuation.yield(value) }
            }
        }
    }

    /// Sends `value` to every listener; without one, runs `otherwise` instead, under the lock
    /// `listen(first:)` takes, so that a value kept by `otherwise` is in the next listener's
    /// `first`.
    func send<Failure: Error>(_ value: Element, otherwise: () throws(Failure) -> Void) throws(Failure) {
        try listeners.withLock { (listeners) throws(Failure) -> Void in
            guard !listeners.isEmpty else { return try otherwise() }
            for continuation in listeners.values { continuation.yield(value) }
        }
    }

    var isEmpty: Bool { listeners.withLock { $0.isEmpty } }

    /// Ends every listener's stream.
    func finishAll() {
        let ending = listeners.withLock { listeners in
            defer { listeners = [:] }
            return Array(listeners.values)
        }
        for continuation in ending { continuation.finish() }
    }
}
