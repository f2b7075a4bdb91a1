import Foundation
import Synchronization

/// The customer's other devices: another queue acting for the same customer (in this process,
/// or another) buys, and this one hears of it, as StoreKit 2's `Transaction.updates` "emits
/// transactions that customers complete in your app on another device".
extension PaymentQueue {
    /// What a queue knows of the changes it handed out itself, to tell them from those made
    /// elsewhere: on the customer's other devices, or by the store's hand (a renewal, an Ask
    /// to Buy approved from another session, a refund).
    struct OtherDevices {
        /// The last history event looked at: every change up to it was heard of.
        var heardThrough: Int64
        /// The transactions this queue handed its observers itself since it last looked, as it
        /// handed them (their state, and whether refunded).
        var heardHere: [UInt64: Version] = [:]
        /// This queue's writes running now: while one runs, what it committed may not have
        /// reached `heardHere` yet, so nothing is looked for.
        var writesInFlight = 0
        /// The task that looks (`startHearingOtherDevices`).
        var timer: Task<Void, Never>?
        /// Set when `heardHere` outgrew `rememberedLimit` and was dropped: the next look starts
        /// from the history's end.
        var forgot = false

        /// The most of its own deliveries a queue keeps between two looks. A queue that never
        /// looks (OpenStoreKit's) would keep every one: past it, they are forgotten, and what
        /// happened elsewhere meanwhile is not heard.
        static let rememberedLimit = 10_000

        /// A transaction's state as a listener knows it.
        struct Version: Equatable {
            let state: TransactionState
            let isRevoked: Bool

            init(_ transaction: PaymentTransaction) {
                (state, isRevoked) = (transaction.state, transaction.revocationDate != nil)
            }
        }

        init(heardThrough: Int64) {
            self.heardThrough = heardThrough
        }

        mutating func heardHere(_ transactions: [PaymentTransaction]) {
            for transaction in transactions { heardHere[transaction.id] = Version(transaction) }
            if heardHere.count > Self.rememberedLimit {
                heardHere = [:]
                forgot = true
            }
        }
    }

    /// Makes this queue hear, while it is open, of what happens to its customer's purchases
    /// elsewhere: a purchase on another of their devices, a renewal the store made, an Ask to
    /// Buy approved from another session, a refund. A task looks every `interval` (reads of
    /// the history after the last event looked at and of the customer's rows it names; nothing
    /// written) and hands the observers the customer's charged purchases as
    /// `purchasedOnAnotherDevice` and the refunded ones as `revokedTransactions`, at most
    /// `PaymentQueue.deliveryBatchLimit` an update. Calling it again only changes the interval;
    /// the task ends with the queue. A read that fails (the ledger busy) is tried at the next look.
    public func startHearingOtherDevices(checkingEvery interval: Duration = .seconds(1)) {
        otherDevices.timer?.cancel()
        let interval = max(interval, .milliseconds(10))
        otherDevices.timer = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let self else { return }
                _ = try? await self.hearOtherDevices()
            }
        }
    }

    /// Stops looking for what happens elsewhere.
    public func stopHearingOtherDevices() {
        otherDevices.timer?.cancel()
        otherDevices.timer = nil
    }

    /// How many history events one look reads at most (the next look goes on from there).
    static let eventsPerLook = 10_000

    /// One look: the customer's transactions changed by the history's events after the last
    /// one looked at, as stored now, without what this queue handed out itself in that state.
    /// Returns what it handed the observers.
    @discardableResult
    package func hearOtherDevices() async throws -> [PaymentTransaction] {
        guard isQuiet else { return [] }
        if otherDevices.forgot {
            otherDevices.heardThrough = try ledger.lastEventSequence()
            otherDevices.forgot = false
            return []
        }
        let changes = try ledger.changedPurchases(
            afterEvent: otherDevices.heardThrough, events: Self.eventsPerLook)
        // This queue's own write, or a change to announce, may have started while the reads
        // ran: look again next time.
        guard isQuiet else { return [] }
        let news = changes.transactions.filter {
            otherDevices.heardHere[$0.id] != OtherDevices.Version($0)
                && ($0.revocationDate != nil || $0.state == .purchased)
        }
        otherDevices.heardThrough = changes.through
        // What this queue handed out is heard of once the look has passed its events.
        if changes.isWhole { otherDevices.heardHere = [:] }
        let revoked = news.filter { $0.revocationDate != nil }
        let purchased = news.filter { $0.revocationDate == nil }
        for batch in Self.batches(revoked) { await notify(.revoked(batch)) }
        for batch in Self.batches(purchased) { await notify(.purchasedOnAnotherDevice(batch)) }
        return news
    }

    /// Whether nothing this queue will hand out itself is being committed: none of its own
    /// writes runs, and no change committed for it waits to be announced.
    private var isQuiet: Bool {
        otherDevices.writesInFlight == 0 && changesToAnnounce.load(ordering: .acquiring) == 0
    }

    private static func batches(_ transactions: [PaymentTransaction]) -> [[PaymentTransaction]] {
        stride(from: 0, to: transactions.count, by: deliveryBatchLimit).map {
            Array(transactions[$0..<min($0 + deliveryBatchLimit, transactions.count)])
        }
    }
}
