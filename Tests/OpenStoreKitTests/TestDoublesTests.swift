import Foundation
import OpenStoreKit
import Testing

/// A client's own test suite builds fakes by subclassing StoreKit 1's classes (as many wrappers'
/// tests do): each has the public `init()` that a subclass calls, and the properties a fake
/// overrides. This file compiles only if they are there.
@Suite struct TestDoublesTests {
    /// Sendable by hand, as its base: it holds nothing of its own.
    final class FakeProduct: SKProduct, @unchecked Sendable {
        override var productIdentifier: String { "com.example.fake" }
        override var price: NSDecimalNumber { NSDecimalNumber(string: "1.99") }
        override var localizedTitle: String { "Fake" }
    }

    /// Sendable by hand, as its base: it holds nothing of its own.
    final class FakePayment: SKPayment, @unchecked Sendable {
        override var productIdentifier: String { "com.example.fake" }
    }

    /// Sendable by hand, as its base: it holds nothing of its own.
    final class FakeTransaction: SKPaymentTransaction, @unchecked Sendable {
        override var transactionState: SKPaymentTransactionState { .purchased }
        override var transactionIdentifier: String? { "42" }
        override var payment: SKPayment { FakePayment() }
    }

    /// Sendable by hand: what it records is read and written by one test's task only.
    final class FakeQueue: SKPaymentQueue, @unchecked Sendable {
        private(set) var added: [String] = []
        override func add(_ payment: SKPayment) { added.append(payment.productIdentifier) }
    }

    @Test func fakesSubclassStoreKitsClasses() {
        let product = FakeProduct()
        #expect(product.productIdentifier == "com.example.fake" && product.price == NSDecimalNumber(string: "1.99"))
        #expect(product.subscriptionPeriod == nil && product.discounts.isEmpty)
        let transaction = FakeTransaction()
        #expect(
            transaction.transactionState == .purchased && transaction.payment.productIdentifier == "com.example.fake")
        #expect(transaction.error == nil && transaction.original == nil)
        let queue = FakeQueue()
        queue.add(SKPayment(product: product))
        #expect(queue.added == ["com.example.fake"])
        // The bases alone: empty, as StoreKit's.
        #expect(SKProduct().productIdentifier.isEmpty && SKProduct().price == .zero)
        #expect(SKPayment().productIdentifier.isEmpty && SKPayment().quantity == 1)
        #expect(SKPaymentTransaction().transactionState == .purchasing)
        #expect(SKPaymentTransaction().transactionIdentifier == nil)
    }
}
