import Foundation
public import StoreLedger
import Synchronization

/// One broken crash invariant (`InvariantChecker` lists the seven), with what was expected.
public struct InvariantViolation: Sendable, Hashable, CustomStringConvertible {
    /// The number of the invariant, as `InvariantChecker` lists them (1 to 7).
    public var invariant: Int
    /// What was found, and what was expected, in words.
    public var message: String

    /// A violation of invariant number `invariant` (1 to 7), explained by `message`.
    public init(invariant: Int, message: String) {
        self.invariant = invariant
        self.message = message
    }

    public var description: String { "invariant \(invariant): \(message)" }
}

/// Reopens a ledger after a crash and checks the ledger's crash invariants against what was
/// acknowledged (docs/RELIABILITY.md):
/// 1. every acknowledged change is present (when `lossAllowed`, a power loss with durability
///    `normal` may lose a suffix of them, never anything before something that survived);
/// 2. nothing is duplicated (an idempotency key names one transaction);
/// 3. every history is a legal path that ends in its row, and the hash chain verifies: every
///    link, every row against its last event, the signed head (`Ledger.verify()`);
/// 4. the launch delivers every unfinished transaction, oldest first, and no finished one;
/// 5. no transaction is left purchasing after the launch;
/// 6. `PRAGMA integrity_check` is ok and the ledger opens;
/// 7. the outbox of notifications went with the changes it reports: every charge (a purchase
///    or a renewal) made while the store had a notification URL has exactly one notification,
///    and no notification reports a transaction that never existed;
/// 8. the store's clock will look at every subscription when something is due for it: its
///    index (`subscription_renewal.due_from`) is nowhere later than the truth.
public enum InvariantChecker {
    /// Reopens the ledger at `path` with `configuration` and returns the invariants it breaks, in the
    /// order found (empty when none). `acknowledged` is the run's log, in order; `lossAllowed` lets
    /// a suffix of it be lost. Launches a `PaymentQueue` on the ledger, which changes it as a
    /// launch does (completing purchases left `purchasing`, making due renewals).
    public static func check(
        ledgerAt path: String, configuration: LedgerConfiguration, acknowledged: [Acknowledgement],
        lossAllowed: Bool = false
    ) async -> [InvariantViolation] {
        var violations: [InvariantViolation] = []
        let ledger: Ledger
        do {
            ledger = try Ledger.open(at: path, configuration: configuration)
        } catch {
            return [InvariantViolation(invariant: 6, message: "the ledger does not open: \(error)")]
        }
        defer { try? ledger.close() }
        do {
            for problem in try ledger.verify() {
                let integrity = problem.message.hasPrefix("integrity check")
                violations.append(InvariantViolation(invariant: integrity ? 6 : 3, message: problem.description))
            }
            let byID = Dictionary(uniqueKeysWithValues: try ledger.allTransactions().map { ($0.id, $0) })
            violations += checkAcknowledged(acknowledged, byID: byID, lossAllowed: lossAllowed)
            violations += try checkOutbox(ledger, byID: byID)
            violations += try ledger.dueIndexProblems().map { InvariantViolation(invariant: 8, message: $0) }

            var keys: [String: Set<UInt64>] = [:]
            for transaction in byID.values {
                if let key = transaction.idempotencyKey { keys[key, default: []].insert(transaction.id) }
            }
            for (key, ids) in keys where ids.count > 1 {
                violations.append(
                    InvariantViolation(invariant: 2, message: "idempotency key \(key) names \(ids.sorted())"))
            }

            // Every device of every customer launches (each completes its customer's payments).
            let queues = try Self.launches(of: ledger)
            let purchasing = try ledger.transactions(matching: TransactionFilter(state: .purchasing))
            if !purchasing.isEmpty {
                violations.append(
                    InvariantViolation(invariant: 5, message: "left purchasing after launch: \(purchasing.map(\.id))"))
            }
            for queue in queues {
                let expected = try queue.ledger.unfinishedTransactions().map(\.id)
                let observer = LaunchObserver()
                try await queue.add(observer)
                let delivered = observer.delivered
                if delivered.map(\.id) != expected {
                    violations.append(
                        InvariantViolation(
                            invariant: 4,
                            message: "the launch delivered \(delivered.map(\.id)), the unfinished ones are \(expected)")
                    )
                }
                if delivered.contains(where: \.isFinished) {
                    violations.append(
                        InvariantViolation(invariant: 4, message: "the launch delivered a finished transaction"))
                }
            }
        } catch {
            violations.append(
                InvariantViolation(invariant: 6, message: "the ledger failed while being checked: \(error)"))
        }
        return violations
    }

    /// A launch of each device of each customer of `ledger`'s store (of its first 100
    /// customers: a campaign's store has a few), in the order they were added.
    static func launches(of ledger: Ledger) throws -> [PaymentQueue] {
        try ledger.customers(limit: 100).flatMap { customer in
            let owner = try ledger.forCustomer(customer.name)
            let devices = try owner.deviceNames()
            return try (devices.isEmpty ? [owner] : devices.map { try owner.forDevice($0) })
                .map { try PaymentQueue(ledger: $0) }
        }
    }

    /// Whether a notification of `type` and `subtype` reports a charge: one per purchase or
    /// renewal. A downgrade, an offer for the active subscription and a downgrade cancelled
    /// (`DID_CHANGE_RENEWAL_PREF` or `OFFER_REDEEMED` with subtype `DOWNGRADE` or none) change
    /// only the next renewal: they report the current period, charged before.
    static func reportsCharge(type: String, subtype: String?) -> Bool {
        switch type {
        case "SUBSCRIBED", "DID_RENEW", "ONE_TIME_CHARGE": true
        case "DID_CHANGE_RENEWAL_PREF", "OFFER_REDEEMED": subtype != nil && subtype != "DOWNGRADE"
        default: false
        }
    }

    /// Invariant 7 (for the apps that had a notification URL from their start, as the
    /// campaign's has): each purchased transaction of theirs (not a restored copy, nor a payment
    /// that only changed a subscription's renewal) has one charge notification, and each
    /// notification's transaction has a history (it was committed with it).
    static func checkOutbox(_ ledger: Ledger, byID: [UInt64: PaymentTransaction]) throws -> [InvariantViolation] {
        var notifying: Set<Int64> = []
        for app in try ledger.apps() {
            let id = try ledger.forApp(app.bundleID).appID()
            if try ledger.settings(ofApp: id).notificationURL != nil { notifying.insert(id) }
        }
        guard !notifying.isEmpty else { return [] }
        var charges: [UInt64: Int] = [:]
        var violations: [InvariantViolation] = []
        var after: Int64 = 0
        while case let page = try ledger.notifications(after: after), let last = page.last {
            after = last.sequence
            for notification in page {
                guard let id = notification.transactionID else { continue }
                if reportsCharge(type: notification.type, subtype: notification.subtype) {
                    charges[id, default: 0] += 1
                }
                if byID[id] == nil, try ledger.events(of: id).isEmpty {
                    violations.append(
                        InvariantViolation(
                            invariant: 7, message: "notification \(notification.uuid) reports \(id), never committed"))
                }
            }
        }
        let renewalChanges = try ledger.renewalChanges(among: Array(byID.values))
        for transaction in byID.values.sorted(by: { $0.id < $1.id })
        where notifying.contains(transaction.appID) && transaction.state == .purchased
            && !renewalChanges.contains(transaction.id) && charges[transaction.id] != 1
        {
            violations.append(
                InvariantViolation(
                    invariant: 7,
                    message:
                        "purchased \(transaction.id) has \(charges[transaction.id] ?? 0) charge notifications, not 1"))
        }
        return violations
    }

    /// Invariant 1: every acknowledgement is shown by the ledger, or with `lossAllowed` only a
    /// suffix of them is missing.
    static func checkAcknowledged(
        _ acknowledged: [Acknowledgement], byID: [UInt64: PaymentTransaction], lossAllowed: Bool
    ) -> [InvariantViolation] {
        var violations: [InvariantViolation] = []
        var missing: [Int] = []
        for (index, acknowledgement) in acknowledged.enumerated() {
            let shown = acknowledgement.isShown(by: byID[acknowledgement.transactionID])
            if !shown {
                missing.append(index)
                if !lossAllowed {
                    violations.append(
                        InvariantViolation(
                            invariant: 1,
                            message:
                                "acknowledged \(acknowledgement.kind.rawValue) of \(acknowledgement.transactionID) "
                                + "(\(acknowledgement.state.rawValue)\(acknowledgement.finished ? ", finished" : "")) is lost"
                        ))
                }
                continue
            }
            guard lossAllowed else { continue }
            // Lost before it, and not one of the same burst (whose commits may come in any order)?
            let lostBefore = missing.first { other in
                acknowledged[other].burst == nil || acknowledged[other].burst != acknowledgement.burst
            }
            if let lost = lostBefore, !acknowledgedBefore(acknowledged, index, isShownIn: byID, from: lost) {
                violations.append(
                    InvariantViolation(
                        invariant: 1,
                        message: "acknowledgement \(index) survived but \(lost), acknowledged before it, is lost"))
                missing.removeAll()  // report one reordering, not every later entry
            }
        }
        return violations
    }

    /// Whether entry `index` would be shown even with every entry from `missing` on lost: it
    /// is about a transaction whose state it acknowledged was already acknowledged before.
    private static func acknowledgedBefore(
        _ acknowledged: [Acknowledgement], _ index: Int, isShownIn byID: [UInt64: PaymentTransaction], from missing: Int
    ) -> Bool {
        let entry = acknowledged[index]
        return acknowledged[..<missing].contains {
            $0.transactionID == entry.transactionID && $0.state == entry.state
                && $0.finished == entry.finished && $0.revoked == entry.revoked
        }
    }
}

/// Records what a launch delivers.
final class LaunchObserver: PaymentTransactionObserver {
    private let received = Mutex<[PaymentTransaction]>([])

    var delivered: [PaymentTransaction] { received.withLock { $0 } }

    func paymentQueue(_ queue: PaymentQueue, updatedTransactions transactions: [PaymentTransaction]) async {
        received.withLock { $0 += transactions }
    }
}
