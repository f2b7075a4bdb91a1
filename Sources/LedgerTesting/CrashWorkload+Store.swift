import Foundation
import SimulatedStore
import StoreLedger

/// The store's own writes, drawn by a workload of a store of customers beside the app's: a
/// family member's purchase (shared with the family in its commit) and a member leaving,
/// what the App Store Server API writes (Finish Transaction, Set App Account Token, Extend a
/// Subscription Renewal Date, and for All Active Subscribers, in batches), and the records of
/// a round of the notification sender. Each is what `ledger serve` does, without HTTP: the
/// crash guarantees are the file's, whoever writes it.
extension CrashWorkload {
    /// How many rolls of 100 more a store of customers draws for its own writes.
    static let storeOperations: UInt64 = 25

    private static let familyProducts = ["workload.family.pass", "workload.family.monthly"]
    private static let subscriptions = ["workload.monthly", "workload.weekly", "workload.family.monthly"]

    /// The name of store operation `roll` (0 to `storeOperations` - 1), for the trace.
    static func storeOperationLabel(_ roll: UInt64) -> String {
        switch roll {
        case 0..<5: "family purchase"
        case 5: "a member leaves the family"
        case 6..<11: "server: Finish Transaction"
        case 11..<14: "server: Set App Account Token"
        case 14..<18: "server: Extend a Subscription Renewal Date"
        case 18..<20: "server: extension for All Active Subscribers"
        default: "notification sender's round"
        }
    }

    /// Runs store operation `roll`; `family` are the family's devices. Refusals the store makes
    /// of a well-formed request (a subscription that cannot be extended, a member who left
    /// already, a shared purchase's token) end the operation, not the run.
    func storeOperation(
        _ roll: UInt64, _ random: inout SplitMix64, ledger: Ledger, family: [PaymentQueue], log: AcknowledgementLog
    ) async throws {
        let server = ledger.acrossCustomers
        switch roll {
        case 0..<5:
            let queue = family[Int(random.next() % UInt64(family.count))]
            let product = Self.familyProducts[Int(random.next() % UInt64(Self.familyProducts.count))]
            log.record(Acknowledgement(kind: .purchase, transaction: try await queue.add(Payment(productID: product))))
        case 5:
            do {
                log.record(.refund, try ledger.leaveFamily("dave"))
            } catch CustomerError.noFamily { return }
        case 6..<11:
            guard let id = pick(&random, try serverTransactions(server).filter { !$0.isFinished }) else { return }
            log.record(.finish, try await server.finish([id]).transactions)
        case 11..<14:
            let originals = try serverTransactions(server).filter { $0.originalID == $0.id }
            guard let id = pick(&random, originals) else { return }
            do {
                try server.setAppAccountToken(Self.uuid(&random), originalTransactionID: id)
            } catch ServerRecordError.familyShared { return }
        case 14..<18:
            let originals = try serverTransactions(server).filter {
                $0.originalID == $0.id && Self.subscriptions.contains($0.productID)
            }
            guard let id = pick(&random, originals) else { return }
            do {
                _ = try server.extendRenewalDate(
                    originalTransactionID: id, days: 1 + Int(random.next() % 90), reason: Int(random.next() % 4),
                    requestIdentifier: Self.uuid(&random).uuidString)
            } catch is RenewalExtensionError { return }
        case 18..<20:
            let product = Self.subscriptions[Int(random.next() % UInt64(Self.subscriptions.count))]
            do {
                _ = try server.extendRenewalDatesForActiveSubscribers(
                    productID: product, days: 1 + Int(random.next() % 90), reason: Int(random.next() % 4),
                    requestIdentifier: Self.uuid(&random).uuidString, batches: 1)
            } catch is RenewalExtensionError { return }
            // The sender's next rounds run the other batches (a store of five customers has one).
            var rounds = 0
            while rounds < 10, try server.continueMassRenewalExtension() { rounds += 1 }
        default:
            // A round of the sender: the due notifications sent, some not answered in time, and
            // the attempts recorded in one commit that does not wait for the disk.
            let due = try server.dueNotifications(limit: 16)
            let outcomes = due.map { notification in
                let answered = random.next() % 4 != 0
                return NotificationAttemptOutcome(
                    notification: notification, result: answered ? .success : .timedOut,
                    httpStatus: answered ? 200 : nil)
            }
            if !outcomes.isEmpty { _ = try server.recordAttempts(outcomes) }
        }
    }

    /// The purchases the server can act on (what its endpoints find): purchased, of every customer.
    private func serverTransactions(_ server: Ledger) throws -> [PaymentTransaction] {
        try server.transactions(matching: TransactionFilter(state: .purchased, limit: 200))
    }

    /// A UUID drawn from the workload's sequence, so that a replay makes the same requests.
    private static func uuid(_ random: inout SplitMix64) -> UUID {
        let (high, low) = (random.next(), random.next())
        let bytes = withUnsafeBytes(of: (high, low)) { Array($0) }
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }
}
