public import Foundation
public import StoreLedger
import Synchronization

/// One change a workload was told was done (returned from the ledger, so committed). A crash
/// campaign checks that the reopened ledger still holds every one of them.
public struct Acknowledgement: Codable, Sendable, Hashable {
    /// The ledger call that acknowledged the change; the raw value is what a log file stores.
    public enum Kind: String, Codable, Sendable {
        /// `purchase`: a payment added to the queue; `approve`, `decline`: an Ask to Buy answer;
        /// `finish`: a transaction finished; `restore`: a transaction a restore returned; `renewal`:
        /// a renewal made at launch or by moving the store clock; `refund`: a refunded transaction;
        /// `resolve`: a purchase that replaced an interrupted one.
        case purchase, approve, decline, finish, restore, renewal, refund, resolve
    }

    /// Which call acknowledged the change.
    public var kind: Kind
    /// The id of the transaction the ledger returned.
    public var transactionID: UInt64
    /// What the transaction is (so that a lost one whose id was reused is not taken for it).
    public var productID: String
    /// The transaction's quantity when it was acknowledged; the ledger must still show it.
    public var quantity: Int
    /// The transaction's purchase date when it was acknowledged; checked only when it was then
    /// charged (neither `purchasing` nor `deferred`), since a deferred one's date changes at approval.
    public var purchaseDate: Date
    /// The transaction's state when it was acknowledged.
    public var state: TransactionState
    /// Whether the transaction was finished: if so, the ledger must still show it finished.
    public var finished: Bool
    /// Whether the transaction was refunded or revoked (had a `revocationDate`): if so, it must stay so.
    public var revoked: Bool
    /// The key of the payment that created the transaction, `nil` when it had none; the ledger must show the same.
    public var idempotencyKey: String?
    /// Acknowledgements of operations that ran at the same time share a burst number: their
    /// commits may come in any order among themselves.
    public var burst: Int?

    /// Records `transaction` as the ledger returned it from a `kind` call; `burst` numbers a group of
    /// concurrent operations (`nil` for an operation that ran alone).
    public init(kind: Kind, transaction: PaymentTransaction, burst: Int? = nil) {
        self.burst = burst
        self.kind = kind
        transactionID = transaction.id
        productID = transaction.productID
        quantity = transaction.quantity
        purchaseDate = transaction.purchaseDate
        state = transaction.state
        finished = transaction.isFinished
        revoked = transaction.revocationDate != nil
        idempotencyKey = transaction.idempotencyKey
    }

    /// Whether `transaction` (what the ledger holds now under the acknowledged id) still shows
    /// this acknowledgement: the same transaction (product, quantity, purchase date, key) in the
    /// same state or a legal later one, finished and refunded if it was.
    public func isShown(by transaction: PaymentTransaction?) -> Bool {
        // A purchase's dates are set when it is charged: a deferred one's change at approval.
        let charged = state != .purchasing && state != .deferred
        guard let transaction, transaction.productID == productID, transaction.quantity == quantity,
            !charged || transaction.purchaseDate == purchaseDate, transaction.idempotencyKey == idempotencyKey
        else { return false }
        let stateHolds = transaction.state == state || state.canMove(to: transaction.state)
        return stateHolds && (!finished || transaction.isFinished) && (!revoked || transaction.revocationDate != nil)
    }
}

/// Where a workload records its acknowledgements, in order: in memory, and optionally as JSON
/// lines in a file, each synced before the workload goes on (so that a killed process leaves
/// a record of exactly what it acknowledged).
public final class AcknowledgementLog: Sendable {
    /// Each acknowledgement with how many operations the fault VFS's trace held when it was
    /// recorded: a crash state rebuilt after that many holds it (`CrashStateExploration`).
    private let entries = Mutex<[(acknowledgement: Acknowledgement, stamp: Int64)]>([])
    private let descriptor: Int32?

    /// An in-memory log.
    public init() {
        descriptor = nil
    }

    /// A log that also appends to `path` (created owner-only when missing).
    public init(appendingTo path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        descriptor = fd
    }

    deinit {
        if let descriptor { close(descriptor) }
    }

    /// Every acknowledgement recorded so far, in the order recorded.
    public var acknowledgements: [Acknowledgement] { entries.withLock { $0.map(\.acknowledgement) } }

    /// Every acknowledgement with its trace stamp, in the order recorded.
    var stampedAcknowledgements: [(acknowledgement: Acknowledgement, stamp: Int64)] {
        entries.withLock { $0 }
    }

    /// Appends `acknowledgement`: in memory and, for a file log, as one JSON line synced (`fsync`)
    /// before returning. Errors writing the file are ignored.
    public func record(_ acknowledgement: Acknowledgement) {
        entries.withLock { $0.append((acknowledgement, FaultInjection.traceLength)) }
        guard let descriptor else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var line = (try? encoder.encode(acknowledgement)) ?? Data()
        line.append(0x0A)
        line.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 { break }
                offset += written
            }
        }
        fsync(descriptor)
    }

    /// Records each of `transactions`, in order, as acknowledged by a `kind` call (with no burst).
    public func record(_ kind: Acknowledgement.Kind, _ transactions: [PaymentTransaction]) {
        for transaction in transactions { record(Acknowledgement(kind: kind, transaction: transaction)) }
    }

    /// The acknowledgements in a log file; a last line cut short by a kill was never
    /// acknowledged and is ignored.
    public static func read(from path: String) throws -> [Acknowledgement] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let decoder = JSONDecoder()
        var lines = data.split(separator: 0x0A, omittingEmptySubsequences: false)
        if data.last != 0x0A { lines.removeLast() }  // the line being written when it stopped
        return try lines.filter { !$0.isEmpty }.map { try decoder.decode(Acknowledgement.self, from: Data($0)) }
    }
}
