import Foundation

/// An error answer of the App Store Server API: its HTTP status and, for the errors Apple
/// describes, its JSON body `{"errorCode": ..., "errorMessage": ...}` with Apple's code and
/// message.
struct APIError: Error, Equatable {
    let status: Int
    /// Apple's error code and message; `nil` for the answers Apple sends without a body (401).
    let body: (code: Int, message: String)?

    static func == (lhs: APIError, rhs: APIError) -> Bool {
        lhs.status == rhs.status && lhs.body?.code == rhs.body?.code && lhs.body?.message == rhs.body?.message
    }

    /// The bearer token is missing or does not hold (`BearerToken.Refusal`).
    static let unauthorized = APIError(status: 401, body: nil)
    /// No endpoint has this path.
    static let notFound = APIError(status: 404, body: nil)
    /// The endpoint has this path, but not this method.
    static let methodNotAllowed = APIError(status: 405, body: nil)
    /// The body is longer than `AppStoreServerAPI.maximumBodySize`.
    static let payloadTooLarge = APIError(status: 413, body: nil)
    /// A transfer coding other than `chunked` (RFC 9112: a server answers 501 to one it does not
    /// know).
    static let notImplemented = APIError(status: 501, body: nil)
    /// Apple's `InvalidTransactionIdError`.
    static let invalidTransactionID = APIError(status: 400, body: (4_000_006, "Invalid transaction id."))
    /// Apple's `AppTransactionIdNotSupportedError`: an app transaction id given to an endpoint
    /// that takes a transaction id (Get Transaction Info). The message is ours.
    static let appTransactionIDNotSupported = APIError(
        status: 400, body: (4_000_048, "App transactions aren't supported by this endpoint."))
    /// Apple's `TransactionIdNotFoundError`.
    static let transactionIDNotFound = APIError(status: 404, body: (4_040_010, "Transaction id not found."))
    /// Apple's `GeneralBadRequestError`: a query that does not decode.
    static let generalBadRequest = APIError(status: 400, body: (4_000_000, "Bad request."))
    /// Apple's `InvalidRequestRevisionError`.
    static let invalidRevision = APIError(status: 400, body: (4_000_005, "Invalid request revision."))
    /// Apple's `InvalidStartDateError`.
    static let invalidStartDate = APIError(status: 400, body: (4_000_015, "Invalid request start date."))
    /// Apple's `InvalidEndDateError`.
    static let invalidEndDate = APIError(status: 400, body: (4_000_016, "Invalid request end date."))
    /// Apple's `StartDateAfterEndDateError`.
    static let startDateAfterEndDate = APIError(
        status: 400, body: (4_000_013, "The query start date must be before the end date."))
    /// Apple's `InvalidSortError`.
    static let invalidSort = APIError(status: 400, body: (4_000_021, "Invalid request sort."))
    /// Apple's `InvalidProductTypeError`.
    static let invalidProductType = APIError(status: 400, body: (4_000_022, "Invalid request product type."))
    /// Apple's `InvalidProductIdError`.
    static let invalidProductID = APIError(status: 400, body: (4_000_023, "Invalid request product id."))
    /// Apple's `InvalidSubscriptionGroupIdentifierError`.
    static let invalidSubscriptionGroupIdentifier = APIError(
        status: 400, body: (4_000_024, "Invalid request subscription group identifier."))
    /// Apple's `InvalidInAppOwnershipTypeError`.
    static let invalidInAppOwnershipType = APIError(
        status: 400, body: (4_000_026, "Invalid request in-app ownership type."))
    /// Apple's `InvalidRevokedError`.
    static let invalidRevoked = APIError(status: 400, body: (4_000_030, "Invalid request revoked."))
    /// Apple's `InvalidStatusError`.
    static let invalidStatus = APIError(status: 400, body: (4_000_031, "Invalid request status."))
    /// Apple's `StartDateTooFarInPastError`: Get Notification History reaches 180 days back.
    static let startDateTooFarInPast = APIError(
        status: 400,
        body: (4_000_012, "Invalid request start date. The start date cannot be more than 180 days in the past."))
    /// Apple's `InvalidPaginationTokenError`.
    static let invalidPaginationToken = APIError(status: 400, body: (4_000_014, "Invalid pagination token."))
    /// Apple's `InvalidNotificationTypeError`: a notification type or subtype Apple does not have.
    static let invalidNotificationType = APIError(status: 400, body: (4_000_018, "Invalid notification type."))
    /// Apple's `MultipleFiltersSuppliedError`: a transaction and a notification type together.
    static let multipleFiltersSupplied = APIError(
        status: 400,
        body: (4_000_019, "Invalid request. Include either the transactionId or the notificationType, but not both."))
    /// Apple's `InvalidTestNotificationTokenError`.
    static let invalidTestNotificationToken = APIError(
        status: 400, body: (4_000_020, "Invalid test notification token."))
    /// Apple's `TestNotificationNotFoundError`.
    static let testNotificationNotFound = APIError(
        status: 404, body: (4_040_008, "Test notification not found."))
    /// Apple's `ServerNotificationURLNotFoundError`: a test notification asked of a store
    /// without a notification URL.
    static let noNotificationURL = APIError(
        status: 404,
        body: (
            4_040_007,
            "No App Store Server Notification URL found for provided app. Check that a URL is configured in App Store Connect for this environment."
        ))
    /// Apple's `InvalidExtendByDaysError`.
    static let invalidExtendByDays = APIError(status: 400, body: (4_000_009, "Invalid extend by days value."))
    /// Apple's `InvalidExtendReasonCodeError`.
    static let invalidExtendReasonCode = APIError(status: 400, body: (4_000_010, "Invalid extend reason code."))
    /// Apple's `InvalidRequestIdentifierError`.
    static let invalidRequestIdentifier = APIError(status: 400, body: (4_000_011, "Invalid request identifier."))
    /// Apple's `InvalidOriginalTransactionIdError`.
    static let invalidOriginalTransactionID = APIError(
        status: 400, body: (4_000_008, "Invalid original transaction id."))
    /// Apple's `InvalidEmptyStorefrontCountryCodeListError`.
    static let emptyStorefrontList = APIError(
        status: 400,
        body: (4_000_027, "Invalid request. If provided, the list of storefront country codes must not be empty."))
    /// Apple's `InvalidStorefrontCountryCodeError`.
    static let invalidStorefrontCountryCode = APIError(
        status: 400, body: (4_000_028, "Invalid request. A storefront country code was invalid."))
    /// Apple's `SubscriptionExtensionIneligibleError`.
    static let subscriptionExtensionIneligible = APIError(
        status: 403, body: (4_030_004, "Forbidden - subscription state ineligible for extension."))
    /// Apple's `FamilySharedSubscriptionExtensionIneligibleError` (its message is ours: Apple
    /// documents the code alone).
    static let familySharedSubscriptionExtensionIneligible = APIError(
        status: 403,
        body: (4_030_007, "Forbidden - a subscription obtained through Family Sharing cannot be extended directly."))
    /// Apple's `FamilyTransactionNotSupportedError` (its message is ours: Apple documents the
    /// code alone).
    static let familyTransactionNotSupported = APIError(
        status: 400,
        body: (4_000_185, "Invalid request. Transactions obtained through Family Sharing are not supported."))
    /// Apple's `SubscriptionMaxExtensionError`.
    static let subscriptionMaxExtension = APIError(
        status: 403, body: (4_030_005, "Forbidden - subscription has reached maximum extension count."))
    /// Apple's `OriginalTransactionIdNotFoundError`.
    static let originalTransactionIDNotFound = APIError(
        status: 404, body: (4_040_005, "Original transaction id not found."))
    /// Apple's `StatusRequestNotFoundError`: no mass extension with this request identifier.
    static let statusRequestNotFound = APIError(
        status: 404,
        body: (
            4_040_009,
            "The server didn't find a subscription-renewal-date extension request for this requestIdentifier and productId combination."
        ))
    /// Apple's `InvalidAccountTenureError`.
    static let invalidAccountTenure = APIError(
        status: 400, body: (4_000_032, "Invalid request. The account tenure field is invalid."))
    /// Apple's `InvalidAppAccountTokenError` (Send Consumption Information).
    static let invalidAppAccountToken = APIError(
        status: 400,
        body: (4_000_033, "Invalid request. The app account token field must contain an empty string or a valid UUID."))
    /// Apple's `InvalidConsumptionStatusError`.
    static let invalidConsumptionStatus = APIError(
        status: 400, body: (4_000_034, "Invalid request. The consumption status field is invalid."))
    /// Apple's `InvalidCustomerConsentedError`: consumption data needs the customer's consent.
    static let invalidCustomerConsented = APIError(
        status: 400,
        body: (
            4_000_035,
            "Invalid request. The customer consented field is required and must indicate the customer consented"
        ))
    /// Apple's `InvalidDeliveryStatusError`.
    static let invalidDeliveryStatus = APIError(
        status: 400, body: (4_000_036, "Invalid request. The delivery status field is invalid."))
    /// Apple's `InvalidLifetimeDollarsPurchasedError`.
    static let invalidLifetimeDollarsPurchased = APIError(
        status: 400, body: (4_000_037, "Invalid request. The lifetime dollars purchased field is invalid."))
    /// Apple's `InvalidLifetimeDollarsRefundedError`.
    static let invalidLifetimeDollarsRefunded = APIError(
        status: 400, body: (4_000_038, "Invalid request. The lifetime dollars refunded field is invalid."))
    /// Apple's `InvalidPlatformError`.
    static let invalidPlatform = APIError(
        status: 400, body: (4_000_039, "Invalid request. The platform field is invalid."))
    /// Apple's `InvalidPlayTimeError`.
    static let invalidPlayTime = APIError(
        status: 400, body: (4_000_040, "Invalid request. The playtime field is invalid."))
    /// Apple's `InvalidSampleContentProvidedError`.
    static let invalidSampleContentProvided = APIError(
        status: 400, body: (4_000_041, "Invalid request. The sample content provided field is invalid."))
    /// Apple's `InvalidUserStatusError`.
    static let invalidUserStatus = APIError(
        status: 400, body: (4_000_042, "Invalid request. The user status field is invalid."))
    /// Apple's `InvalidTransactionTypeNotSupportedError`: version 1 of Send Consumption
    /// Information takes consumables and auto-renewable subscriptions only.
    static let transactionTypeNotSupported = APIError(
        status: 400, body: (4_000_047, "Invalid request. The transaction type is not supported by this endpoint."))
    /// Apple's `InvalidAppAccountTokenUUIDError` (Set App Account Token).
    static let invalidAppAccountTokenUUID = APIError(
        status: 400, body: (4_000_183, "Invalid request. The app account token must be a valid UUID."))
    /// Apple's `TransactionIdIsNotOriginalTransactionIdError`.
    static let transactionIDIsNotOriginal = APIError(
        status: 400, body: (4_000_187, "Invalid request. The transaction id is not an original transaction id."))
    /// Apple's `GeneralInternalError`: the ledger could not be read.
    static let generalInternal = APIError(
        status: 500, body: (5_000_000, "An unknown error occurred."))
}
