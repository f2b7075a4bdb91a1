import Foundation

// StoreKit 1 client code written the way Apple's documentation and its "Offering,
// completing, and restoring in-app purchases" sample write it (our own code). It compiles
// against StoreKit on Apple platforms and against OpenStoreKit elsewhere: only the import
// differs. Both test targets compile it, one in Swift 6 mode and one in Swift 5 mode.
#if canImport(StoreKit)
import StoreKit
#else
import OpenStoreKit
#endif

/// Fetches products (`SKProductsRequest`) and keeps what the store answered.
final class ProductFetcher: NSObject, SKProductsRequestDelegate {
    private(set) var products: [SKProduct] = []
    private(set) var invalidIdentifiers: [String] = []
    private(set) var finished = false
    private(set) var failure: Error?
    private var request: SKProductsRequest?

    func fetch(_ identifiers: [String]) {
        let request = SKProductsRequest(productIdentifiers: Set(identifiers))
        request.delegate = self
        self.request = request
        request.start()
    }

    func productsRequest(_ request: SKProductsRequest, didReceive response: SKProductsResponse) {
        products = response.products
        invalidIdentifiers = response.invalidProductIdentifiers
    }

    func requestDidFinish(_ request: SKRequest) {
        finished = true
    }

    func request(_ request: SKRequest, didFailWithError error: Error) {
        failure = error
    }

    /// The product's price as the storefront shows it, the way StoreKit 1 apps format it.
    static func formattedPrice(of product: SKProduct) -> String? {
        let formatter = NumberFormatter()
        formatter.numberStyle = .currency
        formatter.locale = product.priceLocale
        return formatter.string(from: product.price)
    }
}

/// The app's transaction observer: delivers content, then finishes each transaction.
final class StoreObserver: NSObject, SKPaymentTransactionObserver {
    /// Content delivered, by product identifier (consumables add up).
    private(set) var delivered: [String: Int] = [:]
    /// Transaction identifiers whose content was delivered: a redelivery unlocks nothing twice.
    private(set) var deliveredTransactions: Set<String> = []
    private(set) var restoredProducts: [String] = []
    private(set) var pendingProducts: [String] = []
    private(set) var failures: [SKError.Code] = []
    private(set) var restoresFinished = 0
    private(set) var restoreFailures: [Error] = []
    private(set) var revokedProducts: [String] = []
    private(set) var removedCount = 0
    /// False: the observer leaves transactions unfinished (the app was killed before finishing).
    var finishesTransactions = true

    var isAuthorizedForPayments: Bool {
        SKPaymentQueue.canMakePayments()
    }

    func buy(_ product: SKProduct, quantity: Int = 1, username: String? = nil, discount: SKPaymentDiscount? = nil) {
        let payment = SKMutablePayment(product: product)
        payment.quantity = quantity
        payment.applicationUsername = username
        payment.paymentDiscount = discount
        SKPaymentQueue.default().add(payment)
    }

    func restore(username: String? = nil) {
        if let username {
            SKPaymentQueue.default().restoreCompletedTransactions(withApplicationUsername: username)
        } else {
            SKPaymentQueue.default().restoreCompletedTransactions()
        }
    }

    func paymentQueue(_ queue: SKPaymentQueue, updatedTransactions transactions: [SKPaymentTransaction]) {
        for transaction in transactions {
            switch transaction.transactionState {
            case .purchasing:
                break
            case .deferred:
                pendingProducts.append(transaction.payment.productIdentifier)
            case .purchased:
                deliverContent(for: transaction)
            case .failed:
                if let error = transaction.error as? SKError, error.code != .paymentCancelled {
                    failures.append(error.code)
                } else {
                    failures.append(.paymentCancelled)
                }
                finish(transaction, in: queue)
            case .restored:
                if let original = transaction.original {
                    restoredProducts.append(original.payment.productIdentifier)
                }
                deliverContent(for: transaction)
            @unknown default:
                break
            }
        }
    }

    private func deliverContent(for transaction: SKPaymentTransaction) {
        guard let identifier = transaction.transactionIdentifier else { return }
        if deliveredTransactions.insert(identifier).inserted {
            delivered[transaction.payment.productIdentifier, default: 0] += transaction.payment.quantity
        }
        finish(transaction, in: SKPaymentQueue.default())
    }

    private func finish(_ transaction: SKPaymentTransaction, in queue: SKPaymentQueue) {
        if finishesTransactions { queue.finishTransaction(transaction) }
    }

    func paymentQueue(_ queue: SKPaymentQueue, removedTransactions transactions: [SKPaymentTransaction]) {
        removedCount += transactions.count
    }

    func paymentQueueRestoreCompletedTransactionsFinished(_ queue: SKPaymentQueue) {
        restoresFinished += 1
    }

    func paymentQueue(_ queue: SKPaymentQueue, restoreCompletedTransactionsFailedWithError error: Error) {
        restoreFailures.append(error)
    }

    func paymentQueue(_ queue: SKPaymentQueue, didRevokeEntitlementsForProductIdentifiers productIdentifiers: [String])
    {
        revokedProducts += productIdentifiers
        for identifier in productIdentifiers { delivered[identifier] = nil }
    }
}

/// An observer in the Swift 6 style: isolated to the main actor, where StoreKit calls it.
@MainActor
final class MainActorObserver: NSObject, @preconcurrency SKPaymentTransactionObserver {
    private(set) var states: [SKPaymentTransactionState] = []

    func paymentQueue(_ queue: SKPaymentQueue, updatedTransactions transactions: [SKPaymentTransaction]) {
        states += transactions.map(\.transactionState)
    }
}
