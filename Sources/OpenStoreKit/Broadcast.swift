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

    func send(_ values: [Element]) {
        listeners.withLock { listeners in
            for continuation in listeners.values {
                for value in values { continuation.yield(value) }
            }
        }
    }

    var isEmpty: Bool { listeners.withLock { $0.isEmpty } }
}
