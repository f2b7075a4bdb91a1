public import Foundation
package import StoreLedger

/// StoreKit 1's transaction states, with StoreKit's raw values.
public enum SKPaymentTransactionState: Int, Sendable {
    /// The store took the payment and is processing it.
    case purchasing = 0
    /// The store charged the payment: deliver the content, then finish the transaction.
    case purchased = 1
    /// The payment failed (`error` says why); finish it to take it off the queue.
    case failed = 2
    /// A restore replays an earlier purchase: deliver its content again, then finish it.
    case restored = 3
    /// Waiting for an outside action such as Ask to Buy approval; a later update brings the outcome.
    case deferred = 4

    package init(_ state: TransactionState) {
        self =
            switch state {
            case .purchasing: .purchasing
            case .purchased: .purchased
            case .failed: .failed
            case .restored: .restored
            case .deferred: .deferred
            }
    }
}

/// One transaction of the payment queue (StoreKit 1's `SKPaymentTransaction`): a snapshot of
/// the ledger's row when the queue handed it over.
///
/// Sendable by hand: a snapshot, its properties set by the initializer only; an `open` class cannot
/// be checked by the compiler.
open class SKPaymentTransaction: NSObject, @unchecked Sendable {
    /// The state the ledger's row was in when the queue handed it over; a later state comes as a new
    /// snapshot.
    open private(set) var transactionState: SKPaymentTransactionState
    /// The ledger's transaction id, as text; set only for purchased and restored transactions,
    /// as StoreKit sets it.
    open private(set) var transactionIdentifier: String?
    /// When the store processed it; set only for purchased and restored transactions.
    open private(set) var transactionDate: Date?
    /// For a restored transaction: the purchase it restores.
    open private(set) var original: SKPaymentTransaction?
    /// The payment behind the transaction: rebuilt from the ledger's row (product, quantity,
    /// application username), or a copy of a payment the queue refused.
    open private(set) var payment: SKPayment
    /// For a failed transaction: why (an `SKError`).
    open private(set) var error: (any Error)?
    /// The transaction's hosted content: hosted content is not simulated, so always empty.
    open var downloads: [SKDownload] { [] }

    /// The ledger's id; `nil` for a payment the queue refused before storing anything.
    let ledgerID: UInt64?

    /// An empty transaction (purchasing, of an empty payment, with no identifier): what a test
    /// double that subclasses `SKPaymentTransaction` starts from, overriding what it needs, as
    /// with StoreKit's. Finishing one the store never made does nothing.
    public override init() {
        ledgerID = nil
        transactionState = .purchasing
        payment = SKPayment()
        super.init()
    }

    init(_ transaction: PaymentTransaction) {
        ledgerID = transaction.id
        transactionState = SKPaymentTransactionState(transaction.state)
        let payment = SKMutablePayment()
        payment.productIdentifier = transaction.productID
        payment.quantity = transaction.quantity
        payment.applicationUsername = transaction.applicationUsername
        self.payment = payment.copy() as! SKPayment
        let processed = transaction.state == .purchased || transaction.state == .restored
        transactionIdentifier = processed ? String(transaction.id) : nil
        transactionDate = processed ? transaction.purchaseDate : nil
        error = transaction.error.map(SKError.init)
        if transaction.state == .restored {
            var purchase = transaction
            purchase.id = transaction.originalID
            purchase.state = .purchased
            purchase.purchaseDate = transaction.originalPurchaseDate
            original = SKPaymentTransaction(purchase)
        }
        super.init()
    }

    /// A payment refused before anything was stored (an unknown product, a bad quantity): it
    /// fails as StoreKit fails it, and is not in the ledger.
    init(refused payment: SKPayment, error: SKError) {
        ledgerID = nil
        transactionState = .failed
        self.payment = payment.copy() as! SKPayment
        self.error = error
        super.init()
    }
}
