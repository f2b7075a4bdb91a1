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
    /// Apple's `InvalidTransactionIdError`.
    static let invalidTransactionID = APIError(status: 400, body: (4_000_006, "Invalid transaction id."))
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
    /// A test notification asked of a store without a notification URL: Apple's
    /// `GeneralBadRequestError`, as App Store Connect has nowhere to send it.
    static let noNotificationURL = APIError(
        status: 400, body: (4_000_000, "Bad request. The app has no App Store Server Notifications URL."))
    /// Apple's `GeneralInternalError`: the ledger could not be read.
    static let generalInternal = APIError(
        status: 500, body: (5_000_000, "An unknown error occurred."))
}
