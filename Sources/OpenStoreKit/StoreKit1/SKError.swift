public import Foundation
package import StoreLedger

// swift-format-ignore: AlwaysUseLowerCamelCase
// StoreKit's own name: code written for StoreKit uses it as it is.
/// The domain of StoreKit 1's errors, as `NSError` reports it.
public let SKErrorDomain = "SKErrorDomain"

/// StoreKit 1's error: a `code` with StoreKit's raw values and a message. It is what a failed
/// `SKPaymentTransaction.error` holds, so `transaction.error as? SKError` and
/// `(error as NSError).code` work as on Apple platforms.
public struct SKError: Error, Hashable, Sendable, LocalizedError, CustomNSError {
    /// StoreKit's `SKError.Code`, with the same names and raw values. (Its own type, not the
    /// ledger's `StoreErrorCode`, so that a client importing only this module sees its cases.)
    public enum Code: Int, Sendable, Hashable {
        /// An error of no known cause; also what a failure of the store's ledger itself reports.
        case unknown = 0
        /// The client may not make the request; the store raises it only when its `failTransactions` switch is set to this code.
        case clientInvalid = 1
        /// The user cancelled the payment: here a simulated cancellation or a declined Ask to Buy request.
        case paymentCancelled = 2
        /// A payment parameter the store does not accept: here a quantity outside 1...10, or an
        /// application username the ledger refuses.
        case paymentInvalid = 3
        /// The user or device may not make payments: every payment fails so while the store's
        /// `canMakePayments` control is off.
        case paymentNotAllowed = 4
        /// The product is not for sale in the current storefront: here an empty identifier or one
        /// missing from the ledger's catalog.
        case storeProductNotAvailable = 5
        /// The user did not allow access to cloud service information; the store raises it only when its `failTransactions` switch is set to this code.
        case cloudServicePermissionDenied = 6
        /// The device could not connect to the network; the store raises it only when its `failTransactions` switch is set to this code.
        case cloudServiceNetworkConnectionFailed = 7
        /// The user revoked permission to use the cloud service; the store raises it only when its `failTransactions` switch is set to this code.
        case cloudServiceRevoked = 8
        /// The user has not yet accepted Apple's privacy policy; the store raises it only when its `failTransactions` switch is set to this code.
        case privacyAcknowledgementRequired = 9
        /// The app set `requestData` without the entitlement to do so; the store raises it only when its `failTransactions` switch is set to this code.
        case unauthorizedRequestData = 10
        /// The promotional offer's identifier is not one of the product's offers in the ledger's catalog.
        case invalidOfferIdentifier = 11
        /// The promotional offer's signature does not verify: an unknown key, bytes that do not sign
        /// the payment, a timestamp over 24 hours off, a reused nonce, or text that is not base64.
        case invalidSignature = 12
        /// The promotional offer lacks its key identifier or its signature bytes.
        case missingOfferParams = 13
        /// The offer's price is not valid in the storefront; the ledger does not check offer prices, so
        /// the store raises it only when its `failTransactions` switch is set to this code.
        case invalidOfferPrice = 14
        /// The user dismissed an App Store overlay; overlays are not simulated, so the store raises it only when its `failTransactions` switch is set to this code.
        case overlayCancelled = 15
        /// An App Store overlay's configuration is invalid; the store raises it only when its `failTransactions` switch is set to this code.
        case overlayInvalidConfiguration = 16
        /// An App Store overlay did not load in time; the store raises it only when its `failTransactions` switch is set to this code.
        case overlayTimeout = 17
        /// The user may not redeem the offer: here not a current or lapsed subscriber of the group, or
        /// the group's next renewal already carries an offer.
        case ineligibleForOffer = 18
        /// The current platform does not support the request; the store raises it only when its `failTransactions` switch is set to this code.
        case unsupportedPlatform = 19
        /// An App Store overlay was presented from a scene not in the foreground; the store raises it only when its `failTransactions` switch is set to this code.
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

    /// Which StoreKit error this is; its raw value is also `errorCode`.
    public let code: Code
    /// The message `localizedDescription` returns.
    public let message: String

    /// An error with `code`: its message is `userInfo[NSLocalizedDescriptionKey]` when that is a
    /// string, else the ledger's default message for the code.
    public init(_ code: Code, userInfo: [String: Any] = [:]) {
        self.code = code
        self.message = (userInfo[NSLocalizedDescriptionKey] as? String) ?? code.storeErrorCode.defaultMessage
    }

    /// The StoreKit error an `NSError` is (Apple's `init(_nsError:)`, which bridging uses and
    /// test doubles call): its code (`.unknown` for one StoreKit does not have) and its message
    /// (`userInfo[NSLocalizedDescriptionKey]`, else the code's). Apple expects an error of
    /// `SKErrorDomain`; this one takes the code of any, as `(error as NSError).code` reads it.
    public init(_nsError error: NSError) {
        self.init(Code(rawValue: error.code) ?? .unknown, userInfo: error.userInfo)
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

    /// `Code.unknown` (an error of no known cause), so that `catch SKError.unknown` matches by code.
    public static var unknown: Code { .unknown }
    /// `Code.clientInvalid` (the client may not make the request), so that `catch SKError.clientInvalid` matches by code.
    public static var clientInvalid: Code { .clientInvalid }
    /// `Code.paymentCancelled` (the user cancelled the payment), so that `catch SKError.paymentCancelled` matches by code.
    public static var paymentCancelled: Code { .paymentCancelled }
    /// `Code.paymentInvalid` (a payment parameter the store does not accept), so that `catch SKError.paymentInvalid` matches by code.
    public static var paymentInvalid: Code { .paymentInvalid }
    /// `Code.paymentNotAllowed` (payments are not allowed), so that `catch SKError.paymentNotAllowed` matches by code.
    public static var paymentNotAllowed: Code { .paymentNotAllowed }
    /// `Code.storeProductNotAvailable` (the product is not for sale), so that `catch SKError.storeProductNotAvailable` matches by code.
    public static var storeProductNotAvailable: Code { .storeProductNotAvailable }
    /// `Code.cloudServicePermissionDenied` (no permission for cloud service information), so that `catch SKError.cloudServicePermissionDenied` matches by code.
    public static var cloudServicePermissionDenied: Code { .cloudServicePermissionDenied }
    /// `Code.cloudServiceNetworkConnectionFailed` (no network connection), so that `catch SKError.cloudServiceNetworkConnectionFailed` matches by code.
    public static var cloudServiceNetworkConnectionFailed: Code { .cloudServiceNetworkConnectionFailed }
    /// `Code.cloudServiceRevoked` (cloud service permission revoked), so that `catch SKError.cloudServiceRevoked` matches by code.
    public static var cloudServiceRevoked: Code { .cloudServiceRevoked }
    /// `Code.privacyAcknowledgementRequired` (the privacy policy is not accepted yet), so that `catch SKError.privacyAcknowledgementRequired` matches by code.
    public static var privacyAcknowledgementRequired: Code { .privacyAcknowledgementRequired }
    /// `Code.unauthorizedRequestData` (`requestData` set without the entitlement), so that `catch SKError.unauthorizedRequestData` matches by code.
    public static var unauthorizedRequestData: Code { .unauthorizedRequestData }
    /// `Code.invalidOfferIdentifier` (an unknown promotional offer), so that `catch SKError.invalidOfferIdentifier` matches by code.
    public static var invalidOfferIdentifier: Code { .invalidOfferIdentifier }
    /// `Code.invalidSignature` (a promotional offer signature that does not verify), so that `catch SKError.invalidSignature` matches by code.
    public static var invalidSignature: Code { .invalidSignature }
    /// `Code.missingOfferParams` (a promotional offer missing its signature parameters), so that `catch SKError.missingOfferParams` matches by code.
    public static var missingOfferParams: Code { .missingOfferParams }
    /// `Code.invalidOfferPrice` (an offer price that is not valid), so that `catch SKError.invalidOfferPrice` matches by code.
    public static var invalidOfferPrice: Code { .invalidOfferPrice }
    /// `Code.ineligibleForOffer` (the user may not redeem the offer), so that `catch SKError.ineligibleForOffer` matches by code.
    public static var ineligibleForOffer: Code { .ineligibleForOffer }
    /// `Code.unsupportedPlatform` (the platform does not support the request), so that `catch SKError.unsupportedPlatform` matches by code.
    public static var unsupportedPlatform: Code { .unsupportedPlatform }
}

extension SKError.Code {
    /// `catch SKError.paymentCancelled` and `case SKError.paymentCancelled` match by code.
    public static func ~= (code: SKError.Code, error: any Error) -> Bool {
        (error as? SKError)?.code == code
    }
}
