import Foundation
/// Why a payment failed: StoreKit's `SKError.Code`, with the same raw values.
public enum StoreErrorCode: Int, Sendable, Codable, NamedCode {
    case unknown = 0
    case clientInvalid = 1
    case paymentCancelled = 2
    case paymentInvalid = 3
    case paymentNotAllowed = 4
    case storeProductNotAvailable = 5
    case cloudServicePermissionDenied = 6
    case cloudServiceNetworkConnectionFailed = 7
    case cloudServiceRevoked = 8
    case privacyAcknowledgementRequired = 9
    case unauthorizedRequestData = 10
    case invalidOfferIdentifier = 11
    case invalidSignature = 12
    case missingOfferParams = 13
    case invalidOfferPrice = 14
    case overlayCancelled = 15
    case overlayInvalidConfiguration = 16
    case overlayTimeout = 17
    case ineligibleForOffer = 18
    case unsupportedPlatform = 19
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
    public var code: StoreErrorCode
    public var message: String

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
