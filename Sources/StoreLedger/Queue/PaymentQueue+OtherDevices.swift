import Foundation

/// The customer's other devices: another queue acting for the same customer (in this process,
/// or another) buys, and this one hears of it, as StoreKit 2's `Transaction.updates` "emits
/// transactions that customers complete in your app on another device".
extension PaymentQueue {
    /// What a queue knows of the purchases it heard of itself, to tell them from those made on
    /// the customer's other devices.
    struct OtherDevices {
        /// Every charged purchase of the customer up to this id was heard of: the launch's
        /// (its redelivery brings the unfinished ones), this queue's own, or another device's.
        var heardThrough: UInt64
        /// The ids after `heardThrough` this queue handed its observers itself.
        var heardHere: Set<UInt64> = []
        /// This queue's writes running now: while one runs, what it committed may not have
        /// reached `heardHere` yet, so nothing is looked for.
        var writesInFlight = 0
        /// The task that looks (`startHearingOtherDevices`).
        var timer: Task<Void, Never>?

        init(heardThrough: UInt64) {
            self.heardThrough = heardThrough
        }

        mutating func heardHere(_ transactions: [PaymentTransaction]) {
            for transaction in transactions where transaction.id > heardThrough {
                heardHere.insert(transaction.id)
            }
        }
    }

    /// Makes this queue hear of the purchases its customer makes on their other devices, and of
    /// the renewals the store makes meanwhile, while it is open: a task looks every `interval`
    /// (one indexed read of the customer's purchases after the last one heard of; nothing
    /// written), and hands what it finds to the observers as `purchasedOnAnotherDevice`, at most
    /// `PaymentQueue.deliveryBatchLimit` a look. Calling it again only changes the interval;
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

    /// Stops looking for other devices' purchases.
    public func stopHearingOtherDevices() {
        otherDevices.timer?.cancel()
        otherDevices.timer = nil
    }

    /// One look: the customer's charged purchases after the last one heard of, those this queue
    /// did not hand out itself delivered as another device's. Returns them.
    @discardableResult
    package func hearOtherDevices() async throws -> [PaymentTransaction] {
        guard otherDevices.writesInFlight == 0 else { return [] }
        let found = try ledger.chargedPurchases(after: otherDevices.heardThrough, limit: Self.deliveryBatchLimit)
        // This queue's own write may have started while the read ran: look again next time.
        guard otherDevices.writesInFlight == 0, let newest = found.last else { return [] }
        let others = found.filter { !otherDevices.heardHere.contains($0.id) }
        otherDevices.heardThrough = max(otherDevices.heardThrough, newest.id)
        otherDevices.heardHere = otherDevices.heardHere.filter { $0 > newest.id }
        if !others.isEmpty { await notify(.purchasedOnAnotherDevice(others)) }
        return others
    }
}
