import Foundation
/// Why the store refuses a payment's promotional offer. Nothing was recorded; `code` is the
/// `SKError` code StoreKit fails such a payment with.
public enum PromotionalOfferError: DescribedError, Sendable, Equatable {
    /// The product is not an auto-renewable subscription with a promotional offer of this id.
    case unknownOffer(productID: String, offerID: String)
    /// The signature lacks a key identifier or signature bytes.
    case missingParameters(String)
    /// The signature does not check: unknown key, bytes that do not sign the payment's details,
    /// a timestamp more than 24 hours away from the store's clock, or a nonce used before.
    case invalidSignature(String)
    /// Promotional offers are for current and lapsed subscribers of the group.
    case ineligible(productID: String)
    /// The group's next renewal is already charged at an offer (`offer`: its identifier, or
    /// `introductory`): one offer at a time.
    case offerInProgress(productID: String, offer: String)

    /// The `SKError` code of this refusal.
    public var code: StoreErrorCode {
        switch self {
        case .unknownOffer: .invalidOfferIdentifier
        case .missingParameters: .missingOfferParams
        case .invalidSignature: .invalidSignature
        case .ineligible, .offerInProgress: .ineligibleForOffer
        }
    }

    public var description: String {
        switch self {
        case .unknownOffer(let productID, let offerID):
            "\"\(offerID)\" is not a promotional offer of \(productID)"
        case .missingParameters(let what):
            "the promotional offer's signature is incomplete: \(what)"
        case .invalidSignature(let why):
            "the promotional offer's signature is not valid: \(why)"
        case .ineligible(let productID):
            "not eligible for a promotional offer of \(productID): promotional offers are for current and lapsed subscribers of its subscription group"
        case .offerInProgress(let productID, let offer):
            "not eligible for a promotional offer of \(productID) now: the subscription's next renewal is already charged at the offer \(offer); redeem another once it has run"
        }
    }
}
