import Foundation
import GRDB

/// A transaction as the App Store signs it: the fields and names of Apple's
/// `JWSTransactionDecodedPayload`, dates in milliseconds since 1970, the price in milliunits.
/// Values that do not apply are left out; the ledger has no `storefrontId`,
/// `webOrderLineItemId` or `appTransactionId`, so those are always absent.
struct TransactionPayload: Encodable {
    var transactionId: String
    var originalTransactionId: String
    var bundleId: String
    var productId: String
    var subscriptionGroupIdentifier: String?
    var purchaseDate: Int64
    var originalPurchaseDate: Int64
    var expiresDate: Int64?
    var quantity: Int
    var type: String
    var appAccountToken: String?
    var inAppOwnershipType = "PURCHASED"
    var signedDate: Int64
    var revocationReason: Int?
    var revocationDate: Int64?
    var isUpgraded: Bool?
    var offerType: Int?
    var offerIdentifier: String?
    var offerDiscountType: String?
    var offerPeriod: String?
    var environment: String
    var storefront: String
    var transactionReason: String
    var currency: String?
    var price: Int64?

    /// `transaction` as the store signs it now, with `settings`' bundle identifier and
    /// environment, and the price `product` has in the catalog (none when the catalog no
    /// longer has it). Its `signedDate` is when the store last changed it.
    init(_ transaction: PaymentTransaction, product: Product?, settings: StoreSettings) {
        transactionId = String(transaction.id)
        originalTransactionId = String(transaction.originalID)
        bundleId = settings.bundleID
        productId = transaction.productID
        subscriptionGroupIdentifier = transaction.subscriptionGroupID
        purchaseDate = transaction.purchaseDate.ledgerMilliseconds
        originalPurchaseDate = transaction.originalPurchaseDate.ledgerMilliseconds
        expiresDate = transaction.expirationDate?.ledgerMilliseconds
        quantity = transaction.quantity
        type = transaction.productType.appStoreName
        appAccountToken = transaction.appAccountToken?.uuidString.lowercased()
        signedDate = transaction.updatedAt.ledgerMilliseconds
        revocationReason = transaction.revocationReason
        revocationDate = transaction.revocationDate?.ledgerMilliseconds
        isUpgraded = transaction.isUpgraded ? true : nil
        if let offer = transaction.offer {
            offerType = offer.type == .introductory ? 1 : 2
            offerIdentifier = offer.id
            offerDiscountType = offer.paymentMode.appStoreName
            offerPeriod = offer.period.description
        }
        environment = settings.environment.rawValue
        let storefront = Storefront(countryCode: transaction.storefront)
        self.storefront = transaction.storefront
        transactionReason = transaction.reason == .renewal ? "RENEWAL" : "PURCHASE"
        if let product, let price = product.price(paidWith: transaction.offer), let storefront {
            currency = storefront.currencyCode
            self.price = price.milliunits
        }
    }
}

/// An auto-renewable subscription's renewal info as the App Store signs it: the fields and names
/// of Apple's `JWSRenewalInfoDecodedPayload`.
struct RenewalInfoPayload: Encodable {
    var originalTransactionId: String
    var autoRenewProductId: String
    var productId: String
    var autoRenewStatus: Int
    var isInBillingRetryPeriod: Bool
    var gracePeriodExpiresDate: Int64?
    var expirationIntent: Int?
    var signedDate: Int64
    var environment: String
    var renewalDate: Int64?
    var appAccountToken: String?
    var currency: String?
    var renewalPrice: Int64?

    /// `status` as the store signs it; the renewal price is the catalog's price of the product
    /// the next renewal charges (an introductory offer still running is not taken into
    /// account). Its `signedDate` is when the store last changed the group's latest
    /// transaction, as for the transaction itself: a change of auto-renew or billing state alone
    /// does not move it.
    init(_ status: SubscriptionStatus, renewalProduct: Product?, settings: StoreSettings) {
        let latest = status.transaction
        originalTransactionId = String(latest.originalID)
        autoRenewProductId = status.autoRenewProductID
        productId = latest.productID
        autoRenewStatus = status.willAutoRenew ? 1 : 0
        isInBillingRetryPeriod = status.isInBillingRetry
        gracePeriodExpiresDate = status.gracePeriodExpirationDate?.ledgerMilliseconds
        expirationIntent = status.expirationReason.map {
            switch $0 {
            case .autoRenewDisabled: 1
            case .billingError: 2
            case .didNotConsentToPriceIncrease: 3
            case .productUnavailable: 4
            case .unknown: 5
            }
        }
        signedDate = latest.updatedAt.ledgerMilliseconds
        environment = settings.environment.rawValue
        renewalDate = latest.expirationDate?.ledgerMilliseconds
        appAccountToken = latest.appAccountToken?.uuidString.lowercased()
        if let renewalProduct, let storefront = Storefront(countryCode: latest.storefront) {
            currency = storefront.currencyCode
            renewalPrice = renewalProduct.price.milliunits
        }
    }
}

extension Ledger {
    /// The transaction `id` signed as the App Store signs transactions (a JWS whose payload has
    /// the fields of `JWSTransactionDecodedPayload`), with this ledger's signing identity
    /// (`signingCertificates()`), the store's bundle identifier and environment
    /// (`StoreSettings`). A server trusting the ledger's root verifies it as it verifies the
    /// App Store's; with the store's `invalidSignaturesEnabled`, its signature does not match.
    /// - Throws: `PaymentQueueError.unknownTransaction`; `StoreControlError.notSigned` for a
    ///   transaction the App Store does not sign (purchasing, deferred or failed).
    public func signedTransaction(_ id: UInt64) throws -> JWS {
        guard let transaction = try transaction(id) else { throw PaymentQueueError.unknownTransaction(id) }
        return try signedTransactions([transaction])[0]
    }

    /// `transactions` signed (see `signedTransaction(_:)`), in their order: the identity,
    /// settings and catalog are read once for all.
    /// - Throws: `StoreControlError.notSigned` when one is purchasing, deferred or failed;
    ///   `LedgerError` (`.corrupted`) when a stored row differs from what its history recorded.
    public func signedTransactions(_ transactions: [PaymentTransaction]) throws -> [JWS] {
        for transaction in transactions where transaction.state != .purchased && transaction.state != .restored {
            throw StoreControlError.notSigned(transaction.id, state: transaction.state)
        }
        // Never sign a row edited outside the ledger: the signature would vouch for the edit.
        try read { db in
            for transaction in transactions { try HashChain.vouch(db, id: transaction.id) }
        }
        let signer = try signer()
        let products = try catalog(Set(transactions.map(\.productID)))
        return try transactions.map { transaction in
            try signer.sign(TransactionPayload(transaction, product: products[transaction.productID], settings: signer.settings))
        }
    }

    /// The renewal info of the subscription group of `productID` (an auto-renewable
    /// subscription) as it stands now, signed as the App Store signs it (a JWS whose
    /// payload has the fields of `JWSRenewalInfoDecodedPayload`); `nil` when the group was never
    /// bought.
    /// - Throws: `UnknownProductError`; `StoreControlError.notAutoRenewable`.
    public func signedRenewalInfo(forProduct productID: String) throws -> JWS? {
        guard let status = try subscriptionStatus(forProduct: productID) else { return nil }
        return try signedRenewalInfo(status)
    }

    /// `status` signed as its group's renewal info.
    public func signedRenewalInfo(_ status: SubscriptionStatus) throws -> JWS {
        let signer = try signer()
        let product = try catalog([status.autoRenewProductID])[status.autoRenewProductID]
        return try signer.sign(RenewalInfoPayload(status, renewalProduct: product, settings: signer.settings))
    }

    private func signer() throws -> PayloadSigner {
        try read { db in PayloadSigner(identity: try identities.identity(db), settings: try StoreSettings(db)) }
    }

    private func catalog(_ ids: Set<String>) throws -> [String: Product] {
        Dictionary(try products(withIDs: ids.sorted()).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    }
}

/// Signs payloads with a ledger's identity, as its store settings say.
private struct PayloadSigner {
    let identity: SigningIdentity
    let settings: StoreSettings

    func sign(_ payload: some Encodable) throws -> JWS {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try JWS.sign(payload: try encoder.encode(payload), with: identity, matching: !settings.invalidSignaturesEnabled)
    }
}

extension ProductType {
    /// The App Store's name of the type (the payload's `type`).
    var appStoreName: String {
        switch self {
        case .consumable: "Consumable"
        case .nonConsumable: "Non-Consumable"
        case .autoRenewable: "Auto-Renewable Subscription"
        case .nonRenewable: "Non-Renewing Subscription"
        }
    }
}

extension TransactionOffer.PaymentMode {
    /// The App Store's name of the payment mode (the payload's `offerDiscountType`).
    var appStoreName: String {
        switch self {
        case .freeTrial: "FREE_TRIAL"
        case .payAsYouGo: "PAY_AS_YOU_GO"
        case .payUpFront: "PAY_UP_FRONT"
        }
    }
}

extension Product {
    /// What one unit cost: the offer's price for a period bought with one (0 for a free trial),
    /// else the product's; `nil` when the catalog no longer has the offer.
    func price(paidWith offer: TransactionOffer?) -> Decimal? {
        guard let offer else { return price }
        let offers = offer.type == .introductory
            ? [subscription?.introductoryOffer].compactMap { $0 }
            : (subscription?.promotionalOffers ?? []).filter { $0.id == offer.id }
        return offers.first.map { $0.price ?? 0 }
    }
}

extension Decimal {
    /// The amount in thousandths, rounded to the nearest (the App Store's milliunits).
    package var milliunits: Int64 {
        var scaled = self * 1000
        var rounded = Decimal()
        NSDecimalRound(&rounded, &scaled, 0, .plain)
        return NSDecimalNumber(decimal: rounded).int64Value
    }
}
