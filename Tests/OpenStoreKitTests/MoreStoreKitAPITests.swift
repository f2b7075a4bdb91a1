import Foundation
import LedgerTesting
import OpenStoreKitTest
import Testing

@testable import OpenStoreKit

/// Apple's signatures that real client code calls, each as StoreKit has it: custom purchase
/// options of every value type, an offer's payment mode in words, an `SKError` made from an
/// `NSError`, a download's length under its old name, and how a transaction was revoked.
@Suite struct MoreStoreKitAPITests {
    /// Custom options of the four types StoreKit takes are accepted and ignored, as the App Store
    /// they are for is not here; each is its own option.
    @Test func customPurchaseOptionsOfEveryTypeAreAcceptedAndIgnored() async throws {
        try await SampleShop.withSession { _ in
            let product = try #require(try await Product.products(for: [SampleCatalog.nonConsumable]).first)
            let options: Set<Product.PurchaseOption> = [
                .custom(key: "text", value: "a"), .custom(key: "data", value: Data([1, 2])),
                .custom(key: "number", value: 1.5), .custom(key: "flag", value: true),
                .custom(key: "flag", value: false),
            ]
            #expect(options.count == 5)
            guard case .success(let verification) = try await product.purchase(options: options) else {
                Issue.record("the purchase did not succeed")
                return
            }
            #expect(try verification.payloadValue.productID == SampleCatalog.nonConsumable)
        }
    }

    @Test func anOffersPaymentModeInWords() {
        typealias Mode = Product.SubscriptionOffer.PaymentMode
        #expect(Mode.freeTrial.localizedDescription == "Free Trial")
        #expect(Mode.payAsYouGo.localizedDescription == "Pay As You Go")
        #expect(Mode.payUpFront.localizedDescription == "Pay Up Front")
        #expect(Mode(rawValue: "Other").localizedDescription == "Other")
    }

    /// `SKError(_nsError:)`, as bridging and test doubles make one: the code and the message of
    /// the `NSError`; a code StoreKit does not have is `.unknown`.
    @Test func anSKErrorMadeFromAnNSError() {
        let cancelled = SKError(
            _nsError: NSError(domain: SKErrorDomain, code: 2, userInfo: [NSLocalizedDescriptionKey: "Cancelled."]))
        #expect(cancelled.code == .paymentCancelled && cancelled.localizedDescription == "Cancelled.")
        #expect((cancelled as NSError).code == 2 && (cancelled as NSError).domain == SKErrorDomain)
        let other = SKError(_nsError: NSError(domain: SKErrorDomain, code: 999))
        #expect(other.code == .unknown)
    }

    /// `SKRequest.delegate` is the base class's (`SKRequestDelegate`): a delegate that only hears
    /// the end of a request hears the end of a products request; one cancelled hears nothing.
    @MainActor @Test func aRequestsDelegateIsTheBaseClasss() async throws {
        try await SampleShop.withSession { session in
            let watcher = EndWatcher()
            let request: SKRequest = SKProductsRequest(productIdentifiers: [SampleCatalog.nonConsumable])
            request.delegate = watcher
            #expect(request.delegate === watcher)
            request.start()
            try await waitFor(session) { watcher.finished == 1 }
            let cancelled = SKProductsRequest(productIdentifiers: [SampleCatalog.nonConsumable])
            let silent = EndWatcher()
            cancelled.delegate = silent
            cancelled.cancel()
            cancelled.start()
            let control = EndWatcher()
            let after = SKProductsRequest(productIdentifiers: [SampleCatalog.nonConsumable])
            after.delegate = control
            after.start()
            // A request started after the cancelled one has ended: the cancelled one would have too.
            try await waitFor(session) { control.finished == 1 }
            #expect(silent.finished == 0, "a cancelled request's delegate hears nothing")
        }
    }

    /// `SKDownload.contentLength`, StoreKit's name before `expectedContentLength`, is the same.
    @Test func aDownloadsLengthUnderItsOldName() async throws {
        try await SampleShop.withSession { session in
            _ = try await session.buyProduct(identifier: SampleCatalog.nonConsumable)
            let transaction = try #require(SKPaymentQueue.default().transactions.first)
            let download = SKDownload(transaction: transaction, contentIdentifier: "content", contentVersion: "1")
            #expect(download.contentLength == download.expectedContentLength)
        }
    }
}

/// A request delegate that only hears ends (`SKRequestDelegate`, not a products delegate).
final class EndWatcher: NSObject, SKRequestDelegate {
    private(set) var finished = 0

    func requestDidFinish(_ request: SKRequest) { finished += 1 }
}
