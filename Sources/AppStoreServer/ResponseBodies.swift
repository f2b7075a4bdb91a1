import Foundation
import SimulatedStore

/// The JSON bodies of the App Store Server API's answers, with Apple's field names. Encoded by
/// `JSONEncoder`, sorted, slashes unescaped: Foundation's `JSONSerialization` spent most of an
/// answer's time on the long JWS strings.
enum ResponseBody {
    /// Get Transaction Info's `TransactionInfoResponse`.
    struct TransactionInfo: Encodable {
        let signedTransactionInfo: String

        /// The body as `encoded` writes it, without an encoder: the most asked answer, and a
        /// JWS (base64url and dots) needs no escaping.
        var json: Data {
            Data(#"{"signedTransactionInfo":""#.utf8) + Data(signedTransactionInfo.utf8) + Data(#""}"#.utf8)
        }
    }

    /// Get App Transaction Info's `AppTransactionInfoResponse`.
    struct AppTransactionInfo: Encodable {
        let signedAppTransactionInfo: String
    }

    /// Get Transaction History's `HistoryResponse`, and Get Refund History's
    /// `RefundHistoryResponse` (without `bundleId` and `environment`).
    struct History: Encodable {
        let revision: String
        let hasMore: Bool
        let appAppleId: Int64?
        let bundleId: String?
        let environment: String?
        let signedTransactions: [String]
    }

    /// Get All Subscription Statuses' `StatusResponse`.
    struct Statuses: Encodable {
        let environment: String
        let appAppleId: Int64?
        let bundleId: String
        let data: [Group]
    }

    /// A `SubscriptionGroupIdentifierItem`.
    struct Group: Encodable {
        let subscriptionGroupIdentifier: String
        var lastTransactions: [LastTransaction]
    }

    /// A `LastTransactionsItem`.
    struct LastTransaction: Encodable {
        let status: Int
        let originalTransactionId: String
        let signedTransactionInfo: String
        let signedRenewalInfo: String
    }

    /// Extend a Subscription Renewal Date's `ExtendRenewalDateResponse`.
    struct RenewalExtended: Encodable {
        let originalTransactionId: String
        let webOrderLineItemId: String
        let success: Bool
        let effectiveDate: Int64
    }

    /// Extend Subscription Renewal Dates for All Active Subscribers' `MassExtendRenewalDateResponse`.
    struct MassExtensionRequested: Encodable {
        let requestIdentifier: String
    }

    /// Get Status of Subscription Renewal Date Extensions' `MassExtendRenewalDateStatusResponse`.
    struct MassExtensionStatus: Encodable {
        let requestIdentifier: String
        let complete: Bool
        let completeDate: Int64?
        let succeededCount: Int
        let failedCount: Int
    }

    /// Look Up Order ID's `OrderLookupResponse`: status 0 valid, 1 invalid.
    struct OrderLookup: Encodable {
        let status: Int
        let signedTransactions: [String]
    }

    /// Request a Test Notification's `SendTestNotificationResponse`.
    struct TestNotificationToken: Encodable {
        let testNotificationToken: String
    }

    /// A `SendAttemptItem`.
    struct SendAttempt: Encodable {
        let attemptDate: Int64
        let sendAttemptResult: String

        init(_ attempt: ServerNotification.Attempt) {
            attemptDate = attempt.date.ledgerMilliseconds
            sendAttemptResult = attempt.result.rawValue
        }
    }

    /// Get Test Notification Status's `CheckTestNotificationResponse`.
    struct TestNotificationStatus: Encodable {
        let signedPayload: String
        let sendAttempts: [SendAttempt]
    }

    /// Get Notification History's `NotificationHistoryResponse`.
    struct NotificationHistory: Encodable {
        let paginationToken: String
        let hasMore: Bool
        let notificationHistory: [NotificationHistoryItem]
    }

    /// A `NotificationHistoryResponseItem`.
    struct NotificationHistoryItem: Encodable {
        let sendAttempts: [SendAttempt]
        let signedPayload: String
    }

    /// An error's body: `{"errorCode", "errorMessage"}`.
    struct Error: Encodable {
        let errorCode: Int
        let errorMessage: String
    }

    /// `body` as the answer's bytes.
    static func encoded(_ body: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(body)
    }
}
