public import Foundation

/// An operation the ledger refuses. Nothing was changed.
public enum PaymentQueueError: DescribedError, Sendable, Equatable {
    /// The payment names no product: its product identifier is empty.
    case emptyProductIdentifier
    /// The quantity is not between 1 and 10.
    case invalidQuantity(Int)
    /// The idempotency key is not 1 to 256 characters long.
    case invalidIdempotencyKey(String)
    /// StoreKit 1's `applicationUsername` is any string ("" included) of at most 1,024 bytes of
    /// UTF-8.
    case invalidApplicationUsername(String)
    /// The idempotency key already belongs to a payment with other details.
    case idempotencyKeyReused(key: String, existingTransactionID: UInt64)
    /// No transaction has this id.
    case unknownTransaction(UInt64)
    /// The transaction is still purchasing: the store has not processed it, so it cannot be
    /// finished yet.
    case cannotFinishPurchasing(UInt64)
    /// The transaction is deferred, waiting for approval (Ask to Buy): it cannot be finished yet.
    case cannotFinishDeferred(UInt64)
    /// Approve and decline apply to deferred (Ask to Buy) transactions only.
    case notDeferred(UInt64, state: TransactionState)
    /// The id generator returned an id that is not larger than the last one issued.
    case idGeneratorWentBackwards(lastIssued: UInt64, proposed: UInt64)
    /// A back-dated purchase the store cannot make: `reason` says why.
    case invalidPurchaseDate(Date, reason: String)
    /// The quantity times the product's price is past what a signed transaction's `price`
    /// holds (milliunits in 64 bits, about 9.2 quadrillion).
    case totalPriceTooLarge(productID: String, quantity: Int)

    public var description: String {
        switch self {
        case .emptyProductIdentifier:
            "the product identifier is empty"
        case .invalidQuantity(let quantity):
            "invalid quantity \(quantity): it must be between 1 and 10"
        case .invalidIdempotencyKey(let key):
            "invalid idempotency key (\(key.utf8.count) bytes): it must be 1 to 256 bytes of UTF-8"
        case .invalidApplicationUsername(let name):
            "invalid application username (\(name.utf8.count) bytes): it must be at most 1,024 bytes of UTF-8"
        case .idempotencyKeyReused(let key, let id):
            "the idempotency key \"\(key)\" already belongs to transaction \(id), made with a different product, quantity or account"
        case .unknownTransaction(let id):
            "unknown transaction \(id)"
        case .cannotFinishPurchasing(let id):
            "cannot finish a purchasing transaction (\(id)): the store has not processed it yet"
        case .cannotFinishDeferred(let id):
            "cannot finish a deferred transaction (\(id)): it is waiting for approval (Ask to Buy)"
        case .notDeferred(let id, let state):
            "transaction \(id) is \(state.rawValue), not deferred: only a deferred (Ask to Buy) transaction can be approved or declined"
        case .idGeneratorWentBackwards(let last, let proposed):
            "the transaction id generator proposed \(proposed), which is not after the last id issued (\(last))"
        case .invalidPurchaseDate(let date, let reason):
            "cannot date a purchase \(date.formatted(.iso8601)): \(reason)"
        case .totalPriceTooLarge(let productID, let quantity):
            "\(quantity) of \(productID) cost more than a signed transaction's price can hold "
                + "(milliunits in 64 bits): buy fewer"
        }
    }
}
