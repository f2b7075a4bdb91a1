import Synchronization

/// A dictionary of at most `capacity` values that forgets them all when it is full: a cache
/// whose keys repeat (a client's bearer token, a ledger's API keys) and whose misses cost only
/// time, so that no input grows it without a bound.
package final class BoundedCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// How many values it keeps at most.
    package let capacity: Int
    private let entries = Mutex<[Key: Value]>([:])

    /// An empty cache of at most `capacity` values.
    package init(capacity: Int) {
        self.capacity = capacity
    }

    /// The value kept for `key`; setting one when the cache is full forgets all the others.
    package subscript(key: Key) -> Value? {
        get { entries.withLock { $0[key] } }
        set {
            entries.withLock { entries in
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
                entries[key] = newValue
            }
        }
    }
}
