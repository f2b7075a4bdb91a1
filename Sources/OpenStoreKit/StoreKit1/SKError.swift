public import Foundation
package import StoreLedger

/// The domain of StoreKit 1's errors, as `NSError` reports it.
public let SKErrorDomain = "SKErrorDomain"

/// StoreKit 1's error: a `code` with StoreKit's raw values and a message. It is what a failed
/// `SKPaymentTransaction.error` holds, so `transaction.error as? SKError` and
/// `(error as NSError).code` work as on Apple platforms.
public struct SKError: Error, Hashable, Sendable, LocalizedError, CustomNSError {
    /// StoreKit's `SKError.Code`, with the same names and raw values. (Its own type, not the
    /// ledger's `StoreErrorCode`, so that a client importing only this module sees its cases.)
    public enum Code: Int, Sendable, Hashable {
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

        /// The ledger's code with the same raw value.
        package init(_ code: StoreErrorCode) {
            self = Code(rawValue: code.rawValue) ?? .unknown
        }

        /// The ledger's code with the same raw value.
        package var storeErrorCode: StoreErrorCode {
            StoreErrorCode(rawValue: rawValue) ?? .unknown
        }
    }

    public let code: Code
    /// The message `localizedDescription` returns.
    public let message: String

    public init(_ code: Code, userInfo: [String: Any] = [:]) {
        self.code = code
        self.message = (userInfo[NSLocalizedDescriptionKey] as? String) ?? code.storeErrorCode.defaultMessage
    }

    init(_ error: TransactionError) {
        self.code = Code(error.code)
        self.message = error.message
    }

    /// A failure of the ledger under the store (it could not be opened or written).
    init(ledgerFailure: any Error) {
        self.code = .unknown
        self.message = "The store's ledger failed: \(ledgerFailure.localizedDescription)"
    }

    public var errorDescription: String? { message }
    public static var errorDomain: String { SKErrorDomain }
    public var errorCode: Int { code.rawValue }
    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: message] }

    public static var unknown: Code { .unknown }
    public static var clientInvalid: Code { .clientInvalid }
    public static var paymentCancelled: Code { .paymentCancelled }
    public static var paymentInvalid: Code { .paymentInvalid }
    public static var paymentNotAllowed: Code { .paymentNotAllowed }
    public static var storeProductNotAvailable: Code { .storeProductNotAvailable }
    public static var cloudServicePermissionDenied: Code { .cloudServicePermissionDenied }
    public static var cloudServiceNetworkConnectionFailed: Code { .cloudServiceNetworkConnectionFailed }
    public static var cloudServiceRevoked: Code { .cloudServiceRevoked }
    public static var privacyAcknowledgementRequired: Code { .privacyAcknowledgementRequired }
    public static var unauthorizedRequestData: Code { .unauthorizedRequestData }
    public static var invalidOfferIdentifier: Code { .invalidOfferIdentifier }
    public static var invalidSignature: Code { .invalidSignature }
    public static var missingOfferParams: Code { .missingOfferParams }
    public static var invalidOfferPrice: Code { .invalidOfferPrice }
    public static var ineligibleForOffer: Code { .ineligibleForOffer }
    public static var unsupportedPlatform: Code { .unsupportedPlatform }
}

extension SKError.Code {
    /// `catch SKError.paymentCancelled` and `case SKError.paymentCancelled` match by code.
    public static func ~= (code: SKError.Code, error: any Error) -> Bool {
        (error as? SKError)?.code == code
    }
}
