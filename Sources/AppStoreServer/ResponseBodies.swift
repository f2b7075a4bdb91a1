import Foundation

/// The JSON bodies of the App Store Server API's answers, with Apple's field names. Encoded by
/// `JSONEncoder`, sorted, slashes unescaped: Foundation's `JSONSerialization` spent most of an
/// answer's time on the long JWS strings.
enum ResponseBody {
    /// Get Transaction Info's `TransactionInfoResponse`.
    struct TransactionInfo: Encodable {
        let signedTransactionInfo: String
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
        let lastTransactions: [LastTransaction]
    }

    /// A `LastTransactionsItem`.
    struct LastTransaction: Encodable {
        let status: Int
        let originalTransactionId: String
        let signedTransactionInfo: String
        let signedRenewalInfo: String
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
