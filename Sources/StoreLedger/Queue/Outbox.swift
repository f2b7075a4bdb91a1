import Foundation

/// An observer the queue holds without keeping it alive.
struct WeakObserver {
    weak var value: (any PaymentTransactionObserver)?
}

/// Who hears about one change: the listeners registered when it was committed (a listener
/// added later received the change already, in its first update), or one new listener.
struct Audience {
    var observers: [WeakObserver] = []
    var streams: [AsyncStream<PaymentQueueUpdate>.Continuation] = []
}

/// The payment queue's committed changes waiting to be sent, first in first out.
struct Outbox {
    struct Entry {
        let update: PaymentQueueUpdate
        let audience: Audience
    }

    private var entries: [Entry] = []
    private var head = 0
    /// Whether some call is sending the entries now.
    var isDraining = false
    /// Callers of `waitUntilNotified`, resumed when the entries are all sent.
    var idleWaiters: [CheckedContinuation<Void, Never>] = []

    mutating func enqueue(_ update: PaymentQueueUpdate, to audience: Audience) {
        entries.append(Entry(update: update, audience: audience))
    }

    mutating func dequeue() -> Entry? {
        guard head < entries.count else {
            entries.removeAll(keepingCapacity: true)
            head = 0
            return nil
        }
        defer { head += 1 }
        return entries[head]
    }

    mutating func resumeIdleWaiters() {
        let waiters = idleWaiters
        idleWaiters = []
        for waiter in waiters { waiter.resume() }
    }
}

extension [PaymentTransaction] {
    /// The product identifiers, each once, in first-appearance order.
    var productIDs: [String] {
        var seen = Set<String>()
        return map(\.productID).filter { seen.insert($0).inserted }
    }
}
