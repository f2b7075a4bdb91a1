import Foundation
import SimulatedStore

/// Request a Test Notification, Get Test Notification Status and Get Notification History: the
/// ledger's outbox of Server Notifications V2 (`Ledger.notifications`), as the App Store's
/// server shows it.
extension AppStoreServerAPI {
    /// The most notifications a page of history holds.
    static let notificationPageSize = 20
    /// How far back Get Notification History reaches, by the store's clock: 180 days, as Apple's.
    static let notificationHistoryDays = 180

    /// Request a Test Notification: a `TEST` notification recorded, sent as any other.
    func requestTestNotification() throws -> APIResponse {
        let test: ServerNotification
        do {
            test = try store.requestTestNotification()
        } catch NotificationError.noURL {
            throw APIError.noNotificationURL
        }
        return try Self.ok(ResponseBody.TestNotificationToken(testNotificationToken: Self.testToken(test)))
    }

    /// Get Test Notification Status: the test notification's payload and attempts.
    func testNotificationStatus(_ token: String) throws -> APIResponse {
        guard let uuid = Self.uuid(ofTestToken: token) else { throw APIError.invalidTestNotificationToken }
        guard let test = try store.notification(uuid), test.appID == (try store.appID()),
            test.type == NotifiedEvent.test.notification.type,
            Self.testToken(test) == token
        else { throw APIError.testNotificationNotFound }
        return try Self.ok(
            ResponseBody.TestNotificationStatus(
                signedPayload: test.signedPayload, sendAttempts: test.attempts.map(ResponseBody.SendAttempt.init)))
    }

    /// A test notification's token, as Apple spells them: its UUID, `_`, its date in milliseconds.
    static func testToken(_ test: ServerNotification) -> String {
        "\(test.uuid.uuidString.lowercased())_\(test.date.ledgerMilliseconds)"
    }

    private static func uuid(ofTestToken token: String) -> UUID? {
        let parts = token.split(separator: "_", omittingEmptySubsequences: false)
        guard token.utf8.count <= 64, parts.count == 2, parts[0].utf8.count == 36, Int64(parts[1]) != nil else {
            return nil
        }
        return UUID(exactly: String(parts[0]))
    }

    /// Get Notification History's request body (`NotificationHistoryRequest`).
    struct HistoryRequest: Decodable {
        var startDate: Int64?
        var endDate: Int64?
        var notificationType: String?
        var notificationSubtype: String?
        var transactionId: String?
        var originalTransactionId: String?
        var onlyFailures: Bool?
    }

    /// Get Notification History: the notifications of a window of the store's time, 20 a page.
    func notificationHistory(_ body: Data, query: QueryParameters) throws -> APIResponse {
        guard let request = try? JSONDecoder().decode(HistoryRequest.self, from: body) else {
            throw APIError.generalBadRequest
        }
        let now = try store.storeDate().ledgerMilliseconds
        guard let start = request.startDate else { throw APIError.invalidStartDate }
        guard let end = request.endDate else { throw APIError.invalidEndDate }
        guard start < end else { throw APIError.startDateAfterEndDate }
        guard start >= now - Int64(Self.notificationHistoryDays) * 86_400_000 else {
            throw APIError.startDateTooFarInPast
        }
        var history = NotificationHistoryQuery(
            start: Date(ledgerMilliseconds: start), end: Date(ledgerMilliseconds: end))
        let types = Set(NotifiedEvent.allCases.map(\.notification.type))
        let subtypes = Set(NotifiedEvent.allCases.compactMap(\.notification.subtype))
        if let type = request.notificationType {
            guard types.contains(type) else { throw APIError.invalidNotificationType }
            history.type = type
        }
        if let subtype = request.notificationSubtype {
            guard subtypes.contains(subtype) else { throw APIError.invalidNotificationType }
            history.subtype = subtype
        }
        if let id = request.transactionId ?? request.originalTransactionId {
            guard request.notificationType == nil else { throw APIError.multipleFiltersSupplied }
            // Any transaction of the customer's the server knows (a downgrade's payment is none).
            history.transactionID = try serverTransaction(try Self.transactionID(id)).id
        }
        history.onlyFailures = request.onlyFailures ?? false
        if let token = try query.one("paginationToken", or: .invalidPaginationToken) {
            guard (1...19).contains(token.utf8.count), token.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                let after = Int64(token)
            else { throw APIError.invalidPaginationToken }
            history.after = after
        }
        history.limit = Self.notificationPageSize + 1
        var page: [ServerNotification]
        do {
            page = try store.notificationHistory(history)
        } catch PaymentQueueError.unknownTransaction {
            throw APIError.transactionIDNotFound
        }
        let hasMore = page.count > Self.notificationPageSize
        page = Array(page.prefix(Self.notificationPageSize))
        return try Self.ok(
            ResponseBody.NotificationHistory(
                paginationToken: String(page.last?.sequence ?? history.after), hasMore: hasMore,
                notificationHistory: page.map {
                    ResponseBody.NotificationHistoryItem(
                        sendAttempts: $0.attempts.map(ResponseBody.SendAttempt.init), signedPayload: $0.signedPayload)
                }))
    }
}
