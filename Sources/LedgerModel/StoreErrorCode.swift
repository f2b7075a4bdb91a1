import Foundation

/// Why a payment failed: StoreKit's `SKError.Code`, with the same raw values.
public enum StoreErrorCode: Int, Sendable, Codable, NamedCode {
    /// An unknown or unexpected error.
    case unknown = 0
    /// The client is not allowed to issue the request.
    case clientInvalid = 1
    /// The user cancelled the payment.
    case paymentCancelled = 2
    /// The purchase identifier was invalid.
    case paymentInvalid = 3
    /// This device is not allowed to make payments (`canMakePayments` is off).
    case paymentNotAllowed = 4
    /// The product is not available in the current storefront.
    case storeProductNotAvailable = 5
    /// The user has not allowed access to cloud service information.
    case cloudServicePermissionDenied = 6
    /// The device could not connect to the network.
    case cloudServiceNetworkConnectionFailed = 7
    /// The user revoked permission to use the cloud service.
    case cloudServiceRevoked = 8
    /// The user has not yet acknowledged Apple's privacy policy.
    case privacyAcknowledgementRequired = 9
    /// The app asked for request data it has no entitlement for.
    case unauthorizedRequestData = 10
    /// The promotional offer's identifier is not one of the product's offers.
    case invalidOfferIdentifier = 11
    /// The promotional offer's signature does not check out.
    case invalidSignature = 12
    /// The promotional offer lacks some of its parameters.
    case missingOfferParams = 13
    /// The promotional offer's price is not valid.
    case invalidOfferPrice = 14
    /// The user dismissed the App Store overlay.
    case overlayCancelled = 15
    /// The App Store overlay's configuration is not valid.
    case overlayInvalidConfiguration = 16
    /// The App Store overlay did not load in time.
    case overlayTimeout = 17
    /// The user is not eligible for the subscription offer.
    case ineligibleForOffer = 18
    /// The request is not supported on this platform.
    case unsupportedPlatform = 19
    /// The App Store overlay was presented in a scene that is not in the foreground.
    case overlayPresentedInBackgroundScene = 20

    /// The message a failed transaction carries when nobody gave a more specific one.
    public var defaultMessage: String {
        switch self {
        case .unknown: "An unknown error occurred."
        case .clientInvalid: "The client is not allowed to issue the request."
        case .paymentCancelled: "The user cancelled the payment."
        case .paymentInvalid: "The purchase identifier was invalid."
        case .paymentNotAllowed: "This device is not allowed to make the payment."
        case .storeProductNotAvailable: "The product is not available in the current storefront."
        default: "The store failed the payment (\(name))."
        }
    }
}

/// The error carried by a failed transaction: an `SKError`-style code and a message. It is an
/// `Error` whose `localizedDescription` is the message.
public struct TransactionError: DescribedError, Sendable, Hashable, Codable {
    /// Why the payment failed, as an `SKError` code.
    public var code: StoreErrorCode
    /// What the user is told: the message given, else the code's `defaultMessage`.
    public var message: String

    /// An error with `code`, and `message` or else the code's default message.
    public init(code: StoreErrorCode, message: String? = nil) {
        self.code = code
        self.message = message ?? code.defaultMessage
    }

    public var description: String { message }

    enum CodingKeys: String, CodingKey { case code, name, message }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(code.rawValue, forKey: .code)
        try container.encode(code.name, forKey: .name)
        try container.encode(message, forKey: .message)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let raw = try container.decode(Int.self, forKey: .code)
        guard let code = StoreErrorCode(rawValue: raw) else {
            throw DecodingError.dataCorruptedError(
                forKey: .code, in: container, debugDescription: "unknown store error code \(raw)")
        }
        self.init(code: code, message: try container.decode(String.self, forKey: .message))
    }
}
