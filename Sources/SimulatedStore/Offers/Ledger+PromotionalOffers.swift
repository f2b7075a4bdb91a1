import Foundation
import GRDB
package import LedgerModel

/// Promotional offers: their signatures checked, their nonces used once.
extension Ledger {
    /// The bundle identifier a store without a `bundleID` setting signs offers for.
    package static let defaultBundleID = StoreSettings.defaultBundleID

    /// How far a promotional offer's signature timestamp may be from the store's clock: Apple
    /// keeps a signed offer valid for 24 hours.
    package static let offerSignatureLifetime: Int64 = 24 * 3_600_000

    /// The store's subscription offers key, if it has one (imported from a StoreKit
    /// configuration file's `subscriptionOffersKeyPair`).
    /// - Throws: `SubscriptionOffersKeyError` when the stored key is damaged.
    package func subscriptionOffersKey() throws -> SubscriptionOffersKey? {
        try read { db in try Self.subscriptionOffersKey(db) }
    }

    static func subscriptionOffersKey(_ db: Database) throws -> SubscriptionOffersKey? {
        let stored = try storeWideSettings(db)
        guard let id = stored[StoreSettingKey.subscriptionOffersKeyID],
            let privateKey = stored[StoreSettingKey.subscriptionOffersPrivateKey]
        else { return nil }
        return try SubscriptionOffersKey(id: id, privateKeyBase64: privateKey)
    }

    /// Checks the promotional offer a payment redeems, in the payment's write, as the App Store
    /// does: an offer of the product, a signature by the store's key over this payment's details
    /// made within 24 hours of the store's clock with a nonce never used before (a test
    /// session's unsigned offer skips the signature), and a customer who is or was subscribed
    /// to the group and whose next renewal is not already charged at an offer. Returns the
    /// offer as the transaction records it.
    /// - Throws: `PromotionalOfferError`.
    func redeemableOffer(
        _ db: Database, _ payment: NewPayment, _ discount: PaymentDiscount, settings: StoreSettings, at now: Int64
    ) throws -> TransactionOffer {
        guard let plan = try subscriptionPlan(db, productID: payment.productID),
            let offer = plan.promotionalOffers[discount.offerID]?.offer,
            let group = try String.fetchOne(
                try db.cachedStatement(sql: "SELECT subscription_group_id FROM products WHERE id = ?"),
                arguments: [payment.productID])
        else { throw PromotionalOfferError.unknownOffer(productID: payment.productID, offerID: discount.offerID) }
        if let compact = discount.compactJWS {
            try checkSignature(
                db, try OfferJWS(compact), of: payment, offerID: discount.offerID, settings: settings, at: now)
        } else if let signature = discount.signature {
            try checkSignature(
                db, signature, of: payment, offerID: discount.offerID, bundleID: settings.bundleID, at: now)
        }
        guard try hasBought(db, of: try own(group), excluding: 0) else {
            throw PromotionalOfferError.ineligible(productID: payment.productID)
        }
        // One offer at a time: a second one would have to wait behind the first.
        if let running = try offerOfNextRenewal(db, group: group, at: now) {
            throw PromotionalOfferError.offerInProgress(
                productID: payment.productID, offer: running.id ?? "introductory")
        }
        return offer
    }

    private func checkSignature(
        _ db: Database, _ signature: OfferSignature, of payment: NewPayment, offerID: String, bundleID: String,
        at now: Int64
    ) throws {
        guard !signature.keyID.isEmpty else { throw PromotionalOfferError.missingParameters("no key identifier") }
        guard !signature.signature.isEmpty else { throw PromotionalOfferError.missingParameters("no signature") }
        let key = try offersKey(db, named: signature.keyID)
        try checkSignedAt(signature.timestamp, now: now)
        let payload = OfferSignaturePayload(
            bundleID: bundleID, keyID: signature.keyID, productID: payment.productID, offerID: offerID,
            account: payment.applicationUsername ?? payment.appAccountToken?.uuidString ?? "", nonce: signature.nonce,
            timestamp: signature.timestamp)
        guard key.isValidSignature(signature.signature, for: payload) else {
            throw PromotionalOfferError.invalidSignature(
                "it does not sign this payment's bundle id (\(payload.bundleID)), key, product, offer, account, nonce and timestamp"
            )
        }
        try checkUnused(db, nonce: signature.nonce)
    }

    /// The 2025 form: the JWS signed by the store's key, for this app (`bid`), product and
    /// offer, within 24 hours of the store's clock (`iat`), with an unused nonce; a
    /// `transactionId`, when given, must be the customer's (one of the ledger's transactions,
    /// or the app transaction's id).
    private func checkSignature(
        _ db: Database, _ jws: OfferJWS, of payment: NewPayment, offerID: String, settings: StoreSettings, at now: Int64
    ) throws {
        let key = try offersKey(db, named: jws.keyID)
        guard key.isValidJWSSignature(jws.signature, signingInput: jws.signingInput) else {
            throw PromotionalOfferError.invalidSignature("the offer's JWS is not signed by the store's key")
        }
        try jws.require("aud", is: "promotional-offer")
        try jws.require("bid", is: settings.bundleID)
        try jws.require("productId", is: payment.productID)
        try jws.require("offerIdentifier", is: offerID)
        try checkSignedAt(try jws.issuedAt(), now: now)
        try checkUnused(db, nonce: try jws.requiredNonce())
        if let transactionID = jws.claims["transactionId"] as? String,
            try !isCustomers(db, transactionID: transactionID)
        {
            throw PromotionalOfferError.invalidSignature(
                "the offer's JWS names transaction \(transactionID), which is not this customer's")
        }
    }

    /// The app's server's say on the introductory offer (`introductoryOfferEligibility(compactJWS:)`),
    /// checked as a promotional offer's JWS is: signed by the store's key, `aud`
    /// `introductory-offer-eligibility`, this app and product, within 24 hours of the store's
    /// clock, a nonce never used for it before, and the customer's `transactionId`. Returns
    /// `allowIntroductoryOffer` and the nonce the payment keeps.
    /// - Throws: `PromotionalOfferError`.
    func checkIntroductoryOfferEligibility(
        _ db: Database, _ compact: String, of payment: NewPayment, settings: StoreSettings, at now: Int64
    ) throws -> (allow: Bool, nonce: UUID) {
        let jws = try OfferJWS(compact)
        let key = try offersKey(db, named: jws.keyID)
        guard key.isValidJWSSignature(jws.signature, signingInput: jws.signingInput) else {
            throw PromotionalOfferError.invalidSignature("the offer's JWS is not signed by the store's key")
        }
        try jws.require("aud", is: "introductory-offer-eligibility")
        try jws.require("bid", is: settings.bundleID)
        try jws.require("productId", is: payment.productID)
        try checkSignedAt(try jws.issuedAt(), now: now)
        guard let allow = jws.claims["allowIntroductoryOffer"] as? Bool else {
            throw PromotionalOfferError.missingParameters("the offer's JWS has no allowIntroductoryOffer")
        }
        guard let transactionID = jws.claims["transactionId"] as? String else {
            throw PromotionalOfferError.missingParameters("the offer's JWS has no transactionId")
        }
        guard try isCustomers(db, transactionID: transactionID) else {
            throw PromotionalOfferError.invalidSignature(
                "the offer's JWS names transaction \(transactionID), which is not this customer's")
        }
        let nonce = try jws.requiredNonce()
        if try Bool.fetchOne(
            db, sql: "SELECT 1 FROM payment_terms WHERE introductory_offer_nonce = ?",
            arguments: [nonce.uuidString.lowercased()]) != nil
        {
            throw PromotionalOfferError.invalidSignature("its nonce was used already")
        }
        return (allow, nonce)
    }

    /// The store's subscription offers key, when `keyID` names it.
    private func offersKey(_ db: Database, named keyID: String) throws -> SubscriptionOffersKey {
        guard let key = try Self.subscriptionOffersKey(db) else {
            throw PromotionalOfferError.invalidSignature(
                "the store has no subscription offers key (a StoreKit configuration file's subscriptionOffersKeyPair)")
        }
        guard keyID == key.id else {
            throw PromotionalOfferError.invalidSignature("unknown key \"\(keyID)\" (the store's key is \"\(key.id)\")")
        }
        return key
    }

    /// Refuses a signature made more than 24 hours from the store's clock (`signedAt` in ms).
    private func checkSignedAt(_ signedAt: Int64, now: Int64) throws {
        guard abs(now.subtractingReportingOverflow(signedAt).partialValue) <= Self.offerSignatureLifetime else {
            throw PromotionalOfferError.invalidSignature(
                "it was signed at \(signedAt) ms, more than 24 hours from the store's clock (\(now) ms)")
        }
    }

    /// Refuses a nonce a transaction of the ledger used already.
    private func checkUnused(_ db: Database, nonce: UUID) throws {
        if let used = try Int64.fetchOne(
            try db.cachedStatement(sql: "SELECT id FROM transactions WHERE offer_nonce = ?"),
            arguments: [nonce.uuidString.lowercased()])
        {
            throw PromotionalOfferError.invalidSignature("its nonce was used already, by transaction \(used)")
        }
    }

    /// Whether `text` names one of this value's customer's transactions, or their app transaction.
    private func isCustomers(_ db: Database, transactionID text: String) throws -> Bool {
        let owner = try owner()
        if text == (try identities.identity(db).appTransactionID(ofCustomer: owner.customer, app: owner.app)) {
            return true
        }
        guard let id = UInt64(text), let stored = Int64(exactly: id) else { return false }
        return try Bool.fetchOne(
            db, sql: "SELECT 1 FROM transactions WHERE id = ? AND \(Owner.condition)",
            arguments: [stored] + owner.arguments) != nil
    }
}

/// Offer codes: which a customer may redeem now.
extension Ledger {
    /// The offer code `referenceName` of `payment`'s product, when the customer may redeem it
    /// now: the code is for customers new to the group, lapsed, or subscribed now (`existing`),
    /// and, for a subscriber, the group's next renewal is not already charged at an offer.
    /// Returns the offer as the transaction records it (type `code`, the reference name as id).
    /// - Throws: `PromotionalOfferError.unknownCode`, `.codeIneligible`, `.offerInProgress`.
    func redeemableCode(
        _ db: Database, _ payment: NewPayment, referenceName: String, at now: Int64
    ) throws -> TransactionOffer {
        guard let plan = try subscriptionPlan(db, productID: payment.productID),
            let code = plan.codeOffers[referenceName], let eligibility = plan.codeEligibility[referenceName],
            let group = try String.fetchOne(
                try db.cachedStatement(sql: "SELECT subscription_group_id FROM products WHERE id = ?"),
                arguments: [payment.productID])
        else { throw PromotionalOfferError.unknownCode(productID: payment.productID, referenceName: referenceName) }
        let customer: CodeOffer.Customer =
            try isSubscribed(db, of: try own(group), at: now)
            ? .existing : try hasBought(db, of: try own(group), excluding: 0) ? .expired : .new
        guard eligibility.contains(customer) else {
            throw PromotionalOfferError.codeIneligible(
                productID: payment.productID, referenceName: referenceName, customer: customer)
        }
        if customer == .existing, let running = try offerOfNextRenewal(db, group: group, at: now) {
            throw PromotionalOfferError.offerInProgress(
                productID: payment.productID, offer: running.id ?? "introductory")
        }
        return code.offer
    }
}
