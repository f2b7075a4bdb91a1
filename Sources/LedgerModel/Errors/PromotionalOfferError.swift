import Foundation

/// Why the store refuses a payment's promotional offer, offer code or win-back offer. Nothing was recorded;
/// `code` is the `SKError` code StoreKit fails such a payment with.
public enum PromotionalOfferError: DescribedError, Sendable, Equatable {
    /// The product is not an auto-renewable subscription with a promotional offer of this id.
    case unknownOffer(productID: String, offerID: String)
    /// The signature (of a promotional offer, or of the JWS that gives or withholds the
    /// introductory offer) lacks a key identifier or signature bytes.
    case missingParameters(String)
    /// The signature does not check: unknown key, bytes that do not sign the payment's details,
    /// a timestamp more than 24 hours away from the store's clock, or a nonce used before.
    case invalidSignature(String)
    /// Promotional offers are for current and lapsed subscribers of the group.
    case ineligible(productID: String)
    /// The group's next renewal is already charged at an offer (`offer`: its identifier, or
    /// `introductory`): one offer at a time.
    case offerInProgress(productID: String, offer: String)
    /// The product is not an auto-renewable subscription with an offer code of this reference
    /// name.
    case unknownCode(productID: String, referenceName: String)
    /// The offer code is not for customers where this one stands with the subscription group.
    case codeIneligible(productID: String, referenceName: String, customer: CodeOffer.Customer)
    /// A payment redeems one offer: a promotional offer, an offer code or a win-back offer.
    case twoOffers(productID: String)
    /// The product is not an auto-renewable subscription with a win-back offer of this id.
    case unknownWinBackOffer(productID: String, offerID: String)
    /// The customer may not redeem the win-back offer now: `why` says which rule refuses it.
    case winBackIneligible(productID: String, offerID: String, why: String)

    /// The `SKError` code of this refusal.
    public var code: StoreErrorCode {
        switch self {
        case .unknownOffer, .unknownCode, .twoOffers, .unknownWinBackOffer: .invalidOfferIdentifier
        case .missingParameters: .missingOfferParams
        case .invalidSignature: .invalidSignature
        case .ineligible, .offerInProgress, .codeIneligible, .winBackIneligible: .ineligibleForOffer
        }
    }

    public var description: String {
        switch self {
        case .unknownOffer(let productID, let offerID):
            "\"\(offerID)\" is not a promotional offer of \(productID)"
        // One wording for each signed value a payment carries: a promotional offer's signature,
        // and the JWS giving or withholding the introductory offer.
        case .missingParameters(let what):
            "the offer's signature is incomplete: \(what)"
        case .invalidSignature(let why):
            "the offer's signature is not valid: \(why)"
        case .ineligible(let productID):
            "not eligible for a promotional offer of \(productID): promotional offers are for current and lapsed subscribers of its subscription group"
        case .unknownCode(let productID, let name):
            "\"\(name)\" is not an offer code of \(productID)"
        case .codeIneligible(let productID, let name, let customer):
            "not eligible for the offer code \"\(name)\" of \(productID): it is not for \(customer.rawValue) subscribers of its subscription group"
        case .twoOffers(let productID):
            "a payment of \(productID) redeems one offer: a promotional offer, an offer code or a win-back offer"
        case .unknownWinBackOffer(let productID, let offerID):
            "\"\(offerID)\" is not a win-back offer of \(productID)"
        case .winBackIneligible(let productID, let offerID, let why):
            "not eligible for the win-back offer \"\(offerID)\" of \(productID): \(why)"
        case .offerInProgress(let productID, let offer):
            "not eligible for a promotional offer of \(productID) now: the subscription's next renewal is already charged at the offer \(offer); redeem another once it has run"
        }
    }
}
