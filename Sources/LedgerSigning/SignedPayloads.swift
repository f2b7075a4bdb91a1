import Crypto
package import Foundation
package import LedgerModel

/// A transaction as the App Store signs it: the fields and names of Apple's
/// `JWSTransactionDecodedPayload`, dates in milliseconds since 1970, the price in milliunits.
/// Values that do not apply are left out, as `storefrontId` is for the storefronts whose
/// number is not known (`Storefront.identifier`).
package struct TransactionPayload: Encodable {
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
    package private(set) var inAppOwnershipType = "PURCHASED"
    var signedDate: Int64
    var revocationReason: Int?
    var revocationDate: Int64?
    package private(set) var revocationType: String?
    var revocationPercentage: Int?
    var isUpgraded: Bool?
    package private(set) var webOrderLineItemId: String?
    package private(set) var appTransactionId: String?
    var offerType: Int?
    var offerIdentifier: String?
    var offerDiscountType: String?
    var offerPeriod: String?
    package private(set) var environment: String
    var storefront: String
    var storefrontId: String?
    var transactionReason: String
    package private(set) var currency: String?
    package private(set) var price: Int64?

    /// `transaction` as the store signs it now, with `settings`' bundle identifier and
    /// environment, and its price: its offer's, else `charged` (a price agreed to in a price
    /// increase), else the price `product` has in the catalog (none when the catalog no longer
    /// has it). `familyShared`: a family member bought it (`inAppOwnershipType` FAMILY_SHARED;
    /// revoked, it is `FAMILY_REVOKE`). `refundedPortion`: the part of a prorated refund, in
    /// milliunits of a percent (`REFUND_PRORATED` with `revocationPercentage`). Its `signedDate` is when the store last changed it. A subscription's
    /// `webOrderLineItemId` is its purchase's id (a restored copy shares its purchase's); a
    /// refund is a full one (`REFUND_FULL`); `appTransactionID` is the customer's.
    /// `signedAt`: when an App Store Server API answer signs it (milliseconds since 1970): its
    /// `signedDate` is then the time of signing, as Apple's answers say.
    package init(
        _ transaction: PaymentTransaction, product: Product?, settings: StoreSettings, appTransactionID: String? = nil,
        charged: Decimal? = nil, familyShared: Bool = false, refundedPortion: Int? = nil, signedAt: Int64? = nil
    ) {
        if familyShared { inAppOwnershipType = "FAMILY_SHARED" }
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
        signedDate = signedAt ?? transaction.updatedAt.ledgerMilliseconds
        revocationReason = transaction.revocationReason
        revocationDate = transaction.revocationDate?.ledgerMilliseconds
        if transaction.revocationDate != nil {
            revocationType = familyShared ? "FAMILY_REVOKE" : refundedPortion == nil ? "REFUND_FULL" : "REFUND_PRORATED"
            revocationPercentage = familyShared ? nil : refundedPortion
        }
        isUpgraded = transaction.isUpgraded ? true : nil
        if transaction.productType == .autoRenewable {
            webOrderLineItemId = String(transaction.restoredFromID ?? transaction.id)
        }
        appTransactionId = appTransactionID
        if let offer = transaction.offer {
            offerType = offer.type.appStoreNumber
            offerIdentifier = offer.id
            offerDiscountType = offer.paymentMode.appStoreName
            offerPeriod = offer.period.description
        }
        environment = settings.environment.rawValue
        let storefront = Storefront(countryCode: transaction.storefront)
        self.storefront = transaction.storefront
        storefrontId = storefront?.identifier
        transactionReason = transaction.reason == .renewal ? "RENEWAL" : "PURCHASE"
        // The whole purchase: a consumable's quantity times the price (Apple's `price`); left
        // out, as an unknown price is, when the total's milliunits do not fit in 64 bits.
        let unitPrice =
            transaction.offer == nil ? charged ?? product?.price : product?.price(paidWith: transaction.offer)
        if let unitPrice, let storefront {
            let (total, overflow) = unitPrice.milliunits.multipliedReportingOverflow(by: Int64(transaction.quantity))
            if !overflow {
                currency = storefront.currencyCode
                self.price = total
            }
        }
    }
}

/// An auto-renewable subscription's renewal info as the App Store signs it: the fields and names
/// of Apple's `JWSRenewalInfoDecodedPayload`.
package struct RenewalInfoPayload: Encodable {
    var originalTransactionId: String
    var autoRenewProductId: String
    var productId: String
    var autoRenewStatus: Int
    var isInBillingRetryPeriod: Bool
    var gracePeriodExpiresDate: Int64?
    var expirationIntent: Int?
    var signedDate: Int64
    package private(set) var environment: String
    var renewalDate: Int64?
    var appAccountToken: String?
    package private(set) var currency: String?
    package private(set) var renewalPrice: Int64?
    package private(set) var priceIncreaseStatus: Int?
    var offerType: Int?
    var offerIdentifier: String?
    var offerDiscountType: String?
    var offerPeriod: String?
    package private(set) var recentSubscriptionStartDate: Int64?
    package private(set) var appTransactionId: String?
    var eligibleWinBackOfferIds: [String]?

    /// `status` as the store signs it; the renewal price is `status.renewalPrice` (what the next
    /// renewal charges, its offer's price when one applies); `priceIncreaseStatus` is
    /// there while a price increase waits: 0 until the subscriber agrees (declined too: they did
    /// not consent), 1 once agreed or when it needs no consent. Its `signedDate` is when the store last changed the group's latest
    /// transaction, as for the transaction itself: a change of auto-renew or billing state alone
    /// does not move it.
    /// `recentStart` is when the subscriber's run of periods without a gap of more than 60
    /// days began (Apple's `recentSubscriptionStartDate`).
    /// `signedAt`: as for a transaction (an App Store Server API answer's time of signing).
    package init(
        _ status: SubscriptionStatus, settings: StoreSettings, recentStart: Date? = nil,
        appTransactionID: String? = nil, signedAt: Int64? = nil
    ) {
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
        signedDate = signedAt ?? latest.updatedAt.ledgerMilliseconds
        environment = settings.environment.rawValue
        renewalDate = latest.expirationDate?.ledgerMilliseconds
        appAccountToken = latest.appAccountToken?.uuidString.lowercased()
        if let price = status.renewalPrice, let storefront = Storefront(countryCode: latest.storefront) {
            currency = storefront.currencyCode
            renewalPrice = price.milliunits
        }
        priceIncreaseStatus = status.priceIncrease.map { $0.status == .agreed ? 1 : 0 }
        if let offer = status.renewalOffer {
            offerType = offer.type.appStoreNumber
            offerIdentifier = offer.id
            offerDiscountType = offer.paymentMode.appStoreName
            offerPeriod = offer.period.description
        }
        recentSubscriptionStartDate = recentStart?.ledgerMilliseconds
        appTransactionId = appTransactionID
        eligibleWinBackOfferIds = status.eligibleWinBackOfferIDs.isEmpty ? nil : status.eligibleWinBackOfferIDs
    }
}

/// The app's purchase as the App Store signs it (StoreKit's `AppTransaction`): the fields and
/// names of Apple's `JWSAppTransactionDecodedPayload`.
package struct AppTransactionPayload: Encodable {
    package private(set) var receiptType: String
    package private(set) var appAppleId: Int64?
    package private(set) var bundleId: String
    package private(set) var applicationVersion: String
    package private(set) var receiptCreationDate: Int64
    package private(set) var originalPurchaseDate: Int64
    package private(set) var originalApplicationVersion: String
    package private(set) var deviceVerification: String
    package private(set) var deviceVerificationNonce: String
    package private(set) var appTransactionId: String
    package private(set) var originalPlatform: String

    /// The store's one app download, signed `now`: bought when the ledger's identity was made,
    /// first installed at version 1.0 (as Apple's sandbox always says), on iOS; bound to the
    /// identity's device by `nonce` (SHA-384 of the lowercased nonce then device id, as StoreKit
    /// computes `deviceVerification`).
    package init(
        settings: StoreSettings, identity: SigningIdentity, customer: Int64, app: Int64 = 1, device: Int64? = nil,
        nonce: UUID, now: Date
    ) {
        receiptType = settings.environment.rawValue
        appAppleId = settings.appAppleID
        bundleId = settings.bundleID
        applicationVersion = settings.appVersion
        receiptCreationDate = now.ledgerMilliseconds
        originalPurchaseDate = identity.createdAt.ledgerMilliseconds
        originalApplicationVersion = "1.0"
        deviceVerificationNonce = nonce.uuidString.lowercased()
        let verified =
            deviceVerificationNonce
            + identity.deviceVerificationID(ofCustomer: customer, device: device).uuidString.lowercased()
        deviceVerification = Data(SHA384.hash(data: Data(verified.utf8))).base64EncodedString()
        appTransactionId = identity.appTransactionID(ofCustomer: customer, app: app)
        originalPlatform = "iOS"
    }
}

/// Signs payloads with a ledger's identity, as its store settings say.
package struct PayloadSigner {
    package let identity: SigningIdentity
    package let settings: StoreSettings

    package init(identity: SigningIdentity, settings: StoreSettings) {
        self.identity = identity
        self.settings = settings
    }

    package func sign(_ payload: some Encodable) throws -> JWS {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try JWS.sign(
            payload: try encoder.encode(payload), with: identity, matching: !settings.invalidSignaturesEnabled)
    }

    /// `sign(_:)` of a transaction, whose JSON is written directly (`TransactionPayload.json`):
    /// the App Store Server API signs one for nearly every answer.
    package func sign(_ payload: TransactionPayload) throws -> JWS {
        try JWS.sign(payload: payload.json, with: identity, matching: !settings.invalidSignaturesEnabled)
    }
}

extension TransactionPayload {
    /// The payload as `JSONEncoder` writes it (sorted keys, slashes unescaped, absent values
    /// left out), written directly: `JSONEncoder` was a tenth of a Get Transaction Info answer.
    /// A test compares the two over seeded random transactions.
    package var json: Data {
        var out = JSONObjectWriter()
        out.string("appAccountToken", appAccountToken)
        out.string("appTransactionId", appTransactionId)
        out.string("bundleId", bundleId)
        out.string("currency", currency)
        out.string("environment", environment)
        out.number("expiresDate", expiresDate)
        out.string("inAppOwnershipType", inAppOwnershipType)
        out.bool("isUpgraded", isUpgraded)
        out.string("offerDiscountType", offerDiscountType)
        out.string("offerIdentifier", offerIdentifier)
        out.string("offerPeriod", offerPeriod)
        out.number("offerType", offerType.map(Int64.init))
        out.number("originalPurchaseDate", originalPurchaseDate)
        out.string("originalTransactionId", originalTransactionId)
        out.number("price", price)
        out.string("productId", productId)
        out.number("purchaseDate", purchaseDate)
        out.number("quantity", Int64(quantity))
        out.number("revocationDate", revocationDate)
        out.number("revocationPercentage", revocationPercentage.map(Int64.init))
        out.number("revocationReason", revocationReason.map(Int64.init))
        out.string("revocationType", revocationType)
        out.number("signedDate", signedDate)
        out.string("storefront", storefront)
        out.string("storefrontId", storefrontId)
        out.string("subscriptionGroupIdentifier", subscriptionGroupIdentifier)
        out.string("transactionId", transactionId)
        out.string("transactionReason", transactionReason)
        out.string("type", type)
        out.string("webOrderLineItemId", webOrderLineItemId)
        return out.close()
    }
}

/// A flat JSON object written field by field, in the order given (the caller sorts the keys),
/// absent values left out; strings escaped as `JSONEncoder` escapes them with
/// `.withoutEscapingSlashes`.
struct JSONObjectWriter {
    private var bytes: [UInt8] = [UInt8(ascii: "{")]

    mutating func string(_ key: String, _ value: String?) {
        guard let value else { return }
        self.key(key)
        Self.append(value, to: &bytes)
    }

    mutating func number(_ key: String, _ value: Int64?) {
        guard let value else { return }
        self.key(key)
        bytes += String(value).utf8
    }

    mutating func bool(_ key: String, _ value: Bool?) {
        guard let value else { return }
        self.key(key)
        bytes += (value ? "true" : "false").utf8
    }

    func close() -> Data {
        Data(bytes + [UInt8(ascii: "}")])
    }

    private mutating func key(_ key: String) {
        if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
        Self.append(key, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }

    static func append(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes += #"\""#.utf8
            case UInt8(ascii: "\\"): bytes += #"\\"#.utf8
            case 0x0A: bytes += #"\n"#.utf8
            case 0x0D: bytes += #"\r"#.utf8
            case 0x09: bytes += #"\t"#.utf8
            case 0x08: bytes += #"\b"#.utf8
            case 0x0C: bytes += #"\f"#.utf8
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes += #"\u00"#.utf8
                bytes += [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

extension ProductType {
    /// The App Store's name of the type (the payload's `type`).
    package var appStoreName: String {
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
    package var appStoreName: String {
        switch self {
        case .freeTrial: "FREE_TRIAL"
        case .payAsYouGo: "PAY_AS_YOU_GO"
        case .payUpFront: "PAY_UP_FRONT"
        }
    }
}

extension TransactionOffer.OfferType {
    /// Apple's `offerType`: 1 introductory, 2 promotional, 3 an offer code, 4 win-back.
    var appStoreNumber: Int {
        switch self {
        case .introductory: 1
        case .promotional: 2
        case .code: 3
        case .winBack: 4
        }
    }
}

extension Product {
    /// What one unit cost: the offer's price for a period bought with one (0 for a free trial),
    /// else the product's; `nil` when the catalog no longer has the offer.
    package func price(paidWith offer: TransactionOffer?) -> Decimal? {
        guard let offer else { return price }
        let offers =
            switch offer.type {
            case .introductory: [subscription?.introductoryOffer].compactMap { $0 }
            case .promotional: (subscription?.promotionalOffers ?? []).filter { $0.id == offer.id }
            case .code: (subscription?.codeOffers ?? []).map(\.offer).filter { $0.id == offer.id }
            case .winBack: (subscription?.winBackOffers ?? []).map(\.offer).filter { $0.id == offer.id }
            }
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

/// An App Store Server Notification V2 as the App Store signs it: the fields and names of
/// Apple's `ResponseBodyV2DecodedPayload`, version 2.0.
package struct NotificationPayload: Encodable {
    var notificationType: String
    var subtype: String?
    var notificationUUID: String
    /// What it reports about a transaction (every type but `RENEWAL_EXTENSION`'s summary).
    var data: NotificationData?
    /// A mass extension's outcome (`RENEWAL_EXTENSION` / `SUMMARY`), in place of `data`.
    var summary: Summary?
    var version = "2.0"
    var signedDate: Int64

    package init(
        type: String, subtype: String?, uuid: UUID, signedDate: Int64, settings: StoreSettings,
        signedTransactionInfo: String?, signedRenewalInfo: String?, status: SubscriptionStatus.RenewalState?,
        consumptionRequestReason: String? = nil
    ) {
        notificationType = type
        self.subtype = subtype
        notificationUUID = uuid.uuidString.lowercased()
        self.signedDate = signedDate
        data = NotificationData(
            appAppleId: settings.appAppleID, bundleId: settings.bundleID, bundleVersion: settings.appVersion,
            environment: settings.environment.rawValue, signedTransactionInfo: signedTransactionInfo,
            signedRenewalInfo: signedRenewalInfo,
            status: status?.appStoreCode, consumptionRequestReason: consumptionRequestReason)
    }

    /// A summary notification: `summary`, completed with `settings`' app, in place of `data`.
    package init(
        type: String, subtype: String?, uuid: UUID, signedDate: Int64, settings: StoreSettings, summary: Summary
    ) {
        notificationType = type
        self.subtype = subtype
        notificationUUID = uuid.uuidString.lowercased()
        self.signedDate = signedDate
        var summary = summary
        summary.appAppleId = settings.appAppleID
        summary.bundleId = settings.bundleID
        summary.environment = settings.environment.rawValue
        self.summary = summary
    }

    /// Apple's `summary` object: how a mass extension of renewal dates went.
    package struct Summary: Encodable {
        var requestIdentifier: String
        var environment = ""
        var appAppleId: Int64?
        var bundleId = ""
        var productId: String
        var storefrontCountryCodes: [String]
        var failedCount: Int
        var succeededCount: Int

        package init(
            requestIdentifier: String, productID: String, storefronts: [String], failed: Int, succeeded: Int
        ) {
            self.requestIdentifier = requestIdentifier
            productId = productID
            storefrontCountryCodes = storefronts
            failedCount = failed
            succeededCount = succeeded
        }
    }

    /// Apple's `data` object of a notification.
    struct NotificationData: Encodable {
        var appAppleId: Int64?
        var bundleId: String
        /// The app's version (its `CFBundleVersion`: the store's `appVersion`).
        var bundleVersion: String
        var environment: String
        var signedTransactionInfo: String?
        var signedRenewalInfo: String?
        var status: Int?
        /// A refund request's reason (`CONSUMPTION_REQUEST` only).
        var consumptionRequestReason: String?
    }
}

extension SubscriptionStatus.RenewalState {
    /// Apple's status code of a subscription (`status`): 1 active, 2 expired, 3 in billing
    /// retry, 4 in grace period, 5 revoked.
    package var appStoreCode: Int {
        switch self {
        case .subscribed: 1
        case .expired: 2
        case .inBillingRetryPeriod: 3
        case .inGracePeriod: 4
        case .revoked: 5
        }
    }
}
