public import Foundation
package import StoreLedger

extension Product {
    /// How a purchase ended (`Product.PurchaseResult`).
    public enum PurchaseResult: Sendable, Hashable {
        /// Purchased: deliver the content, then `finish()` the transaction.
        case success(VerificationResult<Transaction>)
        /// The user cancelled: here a simulated cancellation, or the store's `failTransactions` switch
        /// set to `paymentCancelled`; the failed transaction is finished already.
        case userCancelled
        /// Waiting for Ask to Buy approval or for the user to resolve an issue: the outcome
        /// arrives through `Transaction.updates`.
        case pending
    }

    /// An option of a purchase (`Product.PurchaseOption`).
    public struct PurchaseOption: Hashable, Sendable {
        enum Kind: Hashable, Sendable {
            case appAccountToken(UUID)
            case quantity(Int)
            case simulatesAskToBuyInSandbox(Bool)
            case promotionalOffer(PaymentDiscount)
            case purchaseDate(BackdatedPurchase)
            case introductoryOfferEligibility(String)
            case codeOffer(String)
            case winBackOffer(String)
            case custom(key: String, value: CustomValue)
        }

        let kind: Kind

        /// Ties the purchase to one of the app's accounts.
        public static func appAccountToken(_ token: UUID) -> PurchaseOption { .init(kind: .appAccountToken(token)) }
        /// 1...10 units of a consumable.
        public static func quantity(_ quantity: Int) -> PurchaseOption { .init(kind: .quantity(quantity)) }
        /// True: the purchase is deferred as with Ask to Buy.
        public static func simulatesAskToBuyInSandbox(_ simulatesAskToBuy: Bool) -> PurchaseOption {
            .init(kind: .simulatesAskToBuyInSandbox(simulatesAskToBuy))
        }
        /// A promotional offer signed by the app's server: the store checks the signature
        /// (`signature` is the DER bytes, `timestamp` in milliseconds) against its subscription
        /// offers key, and refuses the purchase with a `Product.PurchaseError` otherwise.
        public static func promotionalOffer(
            offerID: String, keyID: String, nonce: UUID, signature: Data, timestamp: Int
        ) -> PurchaseOption {
            .promotionalOffer(
                offerID: offerID,
                signature: SubscriptionOffer.Signature(
                    keyID: keyID, nonce: nonce, timestamp: timestamp, signature: signature))
        }
        /// A promotional offer signed by the app's server (the iOS 17.4 form).
        public static func promotionalOffer(offerID: String, signature: SubscriptionOffer.Signature) -> PurchaseOption {
            .init(
                kind: .promotionalOffer(
                    PaymentDiscount(
                        offerID: offerID,
                        signature: OfferSignature(
                            keyID: signature.keyID, nonce: signature.nonce, timestamp: Int64(signature.timestamp),
                            signature: signature.signature))))
        }
        /// A promotional offer signed by the app's server in the 2025 form: a compact JWS (what
        /// Apple's `PromotionalOfferV2SignatureCreator` makes) signed with the subscription
        /// offers key, for this app, product and offer; the store refuses the purchase with a
        /// `Product.PurchaseError` otherwise. One option, in an array as StoreKit returns it.
        public static func promotionalOffer(_ offerID: String, compactJWS: String) -> [PurchaseOption] {
            [.init(kind: .promotionalOffer(PaymentDiscount(offerID: offerID, compactJWS: compactJWS)))]
        }
        /// The app's server's say on the introductory offer: a compact JWS (what Apple's
        /// `IntroductoryOfferEligibilitySignatureCreator` makes) signed with the subscription
        /// offers key, whose `allowIntroductoryOffer` gives the offer or withholds it, whatever
        /// the customer's history.
        public static func introductoryOfferEligibility(compactJWS: String) -> PurchaseOption {
            .init(kind: .introductoryOfferEligibility(compactJWS))
        }

        /// StoreKitTest's unsigned promotional offer (`promotionalOffer(id:)` in OpenStoreKitTest).
        package static func unsignedPromotionalOffer(id: String) -> PurchaseOption {
            .init(kind: .promotionalOffer(PaymentDiscount(offerID: id, signature: nil)))
        }

        /// StoreKitTest's `codeOffer(referenceName:)` (in OpenStoreKitTest).
        package static func code(referenceName: String) -> PurchaseOption {
            .init(kind: .codeOffer(referenceName))
        }

        /// A win-back offer of the product (one of `subscription.winBackOffers`): the store
        /// checks that the customer may redeem it now (`RenewalInfo.eligibleWinBackOfferIDs`)
        /// and refuses the purchase with `Product.PurchaseError.ineligibleForOffer` otherwise.
        public static func winBackOffer(_ offer: Product.SubscriptionOffer) -> PurchaseOption {
            .init(kind: .winBackOffer(offer.id ?? ""))
        }

        /// StoreKitTest's `purchaseDate(_:renewalBehavior:)` (in OpenStoreKitTest).
        package static func backdated(_ purchase: BackdatedPurchase) -> PurchaseOption {
            .init(kind: .purchaseDate(purchase))
        }

        /// A value of a custom option, of one of the four types StoreKit takes.
        enum CustomValue: Hashable, Sendable {
            case string(String)
            case data(Data)
            case double(Double)
            case bool(Bool)
        }

        /// A key and value for the App Store; kept out of the ledger, as the store ignores them here.
        public static func custom(key: String, value: String) -> PurchaseOption {
            .init(kind: .custom(key: key, value: .string(value)))
        }

        /// A key and a `Data` value for the App Store; ignored here, as `custom(key:value:)`.
        public static func custom(key: String, value: Data) -> PurchaseOption {
            .init(kind: .custom(key: key, value: .data(value)))
        }

        /// A key and a `Double` value for the App Store; ignored here, as `custom(key:value:)`.
        public static func custom(key: String, value: Double) -> PurchaseOption {
            .init(kind: .custom(key: key, value: .double(value)))
        }

        /// A key and a `Bool` value for the App Store; ignored here, as `custom(key:value:)`.
        public static func custom(key: String, value: Bool) -> PurchaseOption {
            .init(kind: .custom(key: key, value: .bool(value)))
        }
    }

    /// Why a purchase was refused before it reached the store (`Product.PurchaseError`).
    public enum PurchaseError: Error, Hashable, Sendable, LocalizedError {
        /// The `quantity` option is outside 1...10; nothing reached the ledger.
        case invalidQuantity
        /// The store does not sell the product: it is not in the ledger's catalog, or the store failed
        /// it with `storeProductNotAvailable`.
        case productUnavailable
        /// The user may not make payments: the store's `canMakePayments` control is off.
        case purchaseNotAllowed
        /// The user may not redeem the promotional offer: not a current or lapsed subscriber of the
        /// group, or its next renewal already carries an offer.
        case ineligibleForOffer
        /// The promotional offer's identifier is not one of the product's offers in the catalog.
        case invalidOfferIdentifier
        /// The offer's price is not valid; the ledger does not check offer prices, so only a test's
        /// simulated error raises it.
        case invalidOfferPrice
        /// The promotional offer's signature does not verify: an unknown key, bytes that do not sign
        /// the purchase, a timestamp over 24 hours off, or a reused nonce.
        case invalidOfferSignature
        /// The promotional offer's signature lacks its key identifier or its signature bytes.
        case missingOfferParameters

        public var errorDescription: String? {
            switch self {
            case .invalidQuantity: "The quantity must be between 1 and 10."
            case .productUnavailable: "The product is not available in the store."
            case .purchaseNotAllowed: "The user is not allowed to make payments."
            case .ineligibleForOffer: "The user is not eligible for the offer."
            case .invalidOfferIdentifier: "The offer identifier is not valid."
            case .invalidOfferPrice: "The offer's price is not valid."
            case .invalidOfferSignature: "The offer's signature is not valid."
            case .missingOfferParameters: "The offer lacks parameters."
            }
        }
    }

    /// Buys the product. The transaction is committed to the ledger before this returns; a
    /// successful one stays unfinished until `finish()`. A current subscriber's downgrade (or
    /// crossgrade to another period, or offer for the product subscribed to) makes no
    /// transaction: it succeeds with the subscription the customer has, which renews to the
    /// change (`RenewalInfo.autoRenewPreference`); one approved after Ask to Buy arrives as the
    /// group's status in `Product.SubscriptionInfo.Status.updates`, not in `Transaction.updates`. What this returns is never emitted
    /// again by `Transaction.updates`; a pending purchase's outcome arrives there.
    ///
    /// - Throws: `Product.PurchaseError` for a quantity outside 1...10, a product the store
    ///   does not sell, payments not allowed, or a promotional offer the store refuses;
    ///   `StoreKitError` when the store fails the purchase (its failure switch) or its ledger
    ///   cannot be written; the error a test simulates for `.purchase`.
    public func purchase(options: Set<PurchaseOption> = []) async throws -> PurchaseResult {
        let context: StoreContext
        do { context = try StoreContext.current() } catch { throw StoreKitError.systemError(error) }
        try context.failures.check(.purchase)
        // Each purchase call gets its own key, so that `Transaction.updates` can tell what this
        // call returns from what happens later to the same transaction.
        let key = TransactionUpdates.purchaseKeyPrefix + UUID().uuidString
        var payment = Payment(productID: id, idempotencyKey: key)
        for option in options { option.apply(to: &payment) }
        guard (1...10).contains(payment.quantity) else { throw PurchaseError.invalidQuantity }
        context.transactionUpdates.beginPurchase(key: key)
        let transaction: PaymentTransaction
        do {
            transaction = try await context.queue.add(payment)
        } catch is UnknownProductError {
            context.transactionUpdates.endPurchase(key: key, returning: nil)
            throw PurchaseError.productUnavailable
        } catch let error as PromotionalOfferError {
            context.transactionUpdates.endPurchase(key: key, returning: nil)
            throw PurchaseError(error)
        } catch {
            context.transactionUpdates.endPurchase(key: key, returning: nil)
            throw StoreKitError.systemError(error)
        }
        // What this call returns is never emitted by `Transaction.updates`, even when its
        // notification is delivered after the call returns.
        context.transactionUpdates.endPurchase(key: key, returning: transaction)
        switch transaction.state {
        case .purchased, .restored:
            // A downgrade (or another change of the next renewal) makes no transaction: the
            // purchase returns the subscription the customer has, whose renewal info names it.
            if let changed = try? context.ledger.subscriptionChanged(by: transaction) {
                return .success(context.origin.result(changed))
            }
            return .success(context.origin.result(transaction))
        case .deferred, .purchasing:
            return .pending
        case .failed:
            return try await settleFailure(transaction, in: context)
        }
    }

    /// StoreKit 2 shows no failed transactions: the failed one is finished at once (which also
    /// lets an interrupted purchase's replacement arrive once its issue is resolved), and the
    /// failure becomes the call's result.
    private func settleFailure(
        _ transaction: PaymentTransaction, in context: StoreContext
    ) async throws -> PurchaseResult {
        let error = transaction.error ?? TransactionError(code: .unknown)
        let interrupted = try? context.ledger.isInterruptedPurchase(transaction.id)
        do {
            try await context.queue.finish(transaction.id)
        } catch {
            throw StoreKitError.systemError(error)
        }
        if interrupted == true { return .pending }
        switch FailedPurchase(error.code) {
        case .userCancelled: return .userCancelled
        case .purchaseError(let purchaseError): throw purchaseError
        case .storeKitError(let storeKitError): throw storeKitError
        case .systemError: throw StoreKitError.systemError(error)
        }
    }
}

/// What StoreKit 2 makes of a purchase the store failed with a StoreKit 1 error code (the
/// `SKError.Code` of `SKTestSession.failureError`, or of `ledger purchase --outcome fail
/// --error-code CODE`): the result `.userCancelled`, or the error `Product.purchase` throws.
///
/// Apple documents both sets of errors but no table between them: each row follows what the
/// two documentations say the error means. A test holds every row.
enum FailedPurchase: Equatable {
    case userCancelled
    case purchaseError(Product.PurchaseError)
    case storeKitError(StoreKitError)
    /// `StoreKitError.systemError` carrying the store's error (SKOverlay's errors, which no
    /// purchase has in StoreKit 2).
    case systemError

    init(_ code: StoreErrorCode) {
        self =
            switch code {
            case .unknown: .storeKitError(.unknown)
            case .paymentCancelled, .overlayCancelled: .userCancelled
            // The person, or this client, may not buy: until they accept the privacy policy too.
            case .paymentNotAllowed, .clientInvalid, .privacyAcknowledgementRequired:
                .purchaseError(.purchaseNotAllowed)
            // A payment the App Store does not recognize: in StoreKit 2, a product it does not sell.
            case .storeProductNotAvailable, .paymentInvalid: .purchaseError(.productUnavailable)
            case .cloudServiceNetworkConnectionFailed: .storeKitError(.networkError(URLError(.notConnectedToInternet)))
            // The app or the account lacks the right (an entitlement, a revoked service).
            case .cloudServicePermissionDenied, .cloudServiceRevoked, .unauthorizedRequestData:
                .storeKitError(.notEntitled)
            case .invalidOfferIdentifier: .purchaseError(.invalidOfferIdentifier)
            case .invalidSignature: .purchaseError(.invalidOfferSignature)
            case .missingOfferParams: .purchaseError(.missingOfferParameters)
            case .invalidOfferPrice: .purchaseError(.invalidOfferPrice)
            case .ineligibleForOffer: .purchaseError(.ineligibleForOffer)
            case .unsupportedPlatform: .storeKitError(.unsupported)
            case .overlayInvalidConfiguration, .overlayTimeout, .overlayPresentedInBackgroundScene: .systemError
            }
    }
}

extension Product.PurchaseError {
    /// StoreKit 2's error for a promotional offer the store refused.
    init(_ refusal: PromotionalOfferError) {
        self =
            switch refusal {
            case .unknownOffer, .unknownCode, .twoOffers, .unknownWinBackOffer: .invalidOfferIdentifier
            case .missingParameters: .missingOfferParameters
            case .invalidSignature: .invalidOfferSignature
            case .ineligible, .offerInProgress, .codeIneligible, .winBackIneligible: .ineligibleForOffer
            }
    }
}

extension Product.PurchaseOption {
    /// Sets what this option asks for on `payment`: the one place a purchase option becomes
    /// part of the payment the store takes, whoever buys (`Product.purchase(options:)`, a test
    /// session's `buyProduct(identifier:options:)`).
    package func apply(to payment: inout Payment) {
        switch kind {
        case .appAccountToken(let token): payment.appAccountToken = token
        case .quantity(let quantity): payment.quantity = quantity
        case .simulatesAskToBuyInSandbox(let deferred): if deferred { payment.simulatedOutcome = .deferred }
        case .promotionalOffer(let discount): payment.discount = discount
        case .purchaseDate(let purchase): payment.backdating = purchase
        case .introductoryOfferEligibility(let jws): payment.introductoryOfferEligibility = jws
        case .codeOffer(let name): payment.codeOffer = name
        case .winBackOffer(let id): payment.winBackOffer = id
        case .custom: break
        }
    }
}
