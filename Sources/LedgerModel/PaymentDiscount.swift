public import Foundation

/// A promotional offer a payment redeems (StoreKit 1's `SKPaymentDiscount`, StoreKit 2's
/// `Product.PurchaseOption.promotionalOffer`): the offer, and the signature the app's server
/// made for it.
public struct PaymentDiscount: Sendable, Hashable {
    /// The offer's identifier (`offerID` of one of the product's promotional offers).
    public var offerID: String
    /// `nil`: redeemed without a signature, as StoreKitTest's `promotionalOffer(id:)` does in a
    /// test session (and `ledger purchase --promotional-offer`). An app's payments carry one.
    public var signature: OfferSignature?
    /// The 2025 form of the signature (StoreKit's `promotionalOffer(_:compactJWS:)`): a compact
    /// JWS the app's server signed with the subscription offers key, as Apple's
    /// `PromotionalOfferV2SignatureCreator` makes it; when set, `signature` is not used.
    public var compactJWS: String?

    /// An offer to redeem, with the signature the app's server made (`nil` in a test session).
    public init(offerID: String, signature: OfferSignature?) {
        self.offerID = offerID
        self.signature = signature
    }

    /// An offer to redeem with a JWS the app's server signed (`promotionalOffer(_:compactJWS:)`).
    public init(offerID: String, compactJWS: String) {
        self.offerID = offerID
        self.compactJWS = compactJWS
    }
}

/// The signature of a promotional offer, made by the app's server with the subscription offers
/// key (see `SubscriptionOffersKey`).
public struct OfferSignature: Sendable, Hashable {
    /// The identifier of the key that signed.
    public var keyID: String
    /// A one-time value: the store accepts each nonce once.
    public var nonce: UUID
    /// When the server signed, in milliseconds since 1970: the signature is good for 24 hours.
    public var timestamp: Int64
    /// The ECDSA P-256 SHA-256 signature, DER-encoded.
    public var signature: Data

    /// A signature, with the key, nonce and timestamp the server signed with.
    public init(keyID: String, nonce: UUID, timestamp: Int64, signature: Data) {
        self.keyID = keyID
        self.nonce = nonce
        self.timestamp = timestamp
        self.signature = signature
    }
}
