import Foundation
import SimulatedStore

/// Get Transaction History (v1 and v2) and Get Refund History (v2): a customer's transactions
/// as the App Store's server lists them (`ServerHistoryQuery`), at most 20 a page, each page
/// ending with a `revision` that asks for the next one.
extension AppStoreServerAPI {
    enum HistoryKind {
        /// Version 1 leaves out the consumables the app finished (not refunded).
        case transactionsV1
        case transactionsV2
        /// Only refunded transactions, oldest first, without filters.
        case refunds
    }

    /// The most transactions a page holds, as Apple's.
    static let historyPageSize = 20

    func history(
        _ idText: String, query: QueryParameters, kind: HistoryKind, settings: StoreSettings
    ) throws -> APIResponse {
        let customer = try customerStore(idText)
        var history = kind == .refunds ? refundQuery() : try filters(query)
        history.excludingFinishedConsumables = kind == .transactionsV1
        history.after = try Revision.position(try query.one("revision", or: .invalidRevision))
        history.limit = Self.historyPageSize
        let page = try customer.serverHistory(history)
        let revision = Revision.token(page.last ?? history.after ?? Revision.start(descending: history.descending))
        let signed = try store.serverSignedTransactions(page.transactions).map(\.compactSerialization)
        // Get Refund History's body names neither the app nor the environment.
        let named = kind == .refunds ? nil : settings
        return try Self.ok(
            ResponseBody.History(
                revision: revision, hasMore: page.hasMore, appAppleId: named?.appAppleID, bundleId: named?.bundleID,
                environment: named?.environment.rawValue, signedTransactions: signed))
    }

    private func refundQuery() -> ServerHistoryQuery {
        var query = ServerHistoryQuery()
        query.revoked = true
        return query
    }

    /// Get Transaction History's filters, each refused with Apple's error when it does not read.
    private func filters(_ query: QueryParameters) throws -> ServerHistoryQuery {
        var history = ServerHistoryQuery()
        history.startDate = try Self.date(query.one("startDate", or: .invalidStartDate), or: .invalidStartDate)
        history.endDate = try Self.date(query.one("endDate", or: .invalidEndDate), or: .invalidEndDate)
        if let start = history.startDate, let end = history.endDate, start > end {
            throw APIError.startDateAfterEndDate
        }
        history.productIDs = try query.all("productId").map { id in
            guard (1...255).contains(id.utf8.count) else { throw APIError.invalidProductID }
            return id
        }
        history.productTypes = try query.all("productType").map { name in
            guard let type = Self.productTypes[name] else { throw APIError.invalidProductType }
            return type
        }
        history.subscriptionGroupIDs = try query.all("subscriptionGroupIdentifier").map { id in
            guard (1...255).contains(id.utf8.count) else { throw APIError.invalidSubscriptionGroupIdentifier }
            return id
        }
        switch try query.one("sort", or: .invalidSort) {
        case nil, "ASCENDING": history.descending = false
        case "DESCENDING": history.descending = true
        default: throw APIError.invalidSort
        }
        // Apple's Python client writes Python's `True` and `False`.
        switch try query.one("revoked", or: .invalidRevoked)?.lowercased() {
        case nil: history.revoked = nil
        case "true": history.revoked = true
        case "false": history.revoked = false
        default: throw APIError.invalidRevoked
        }
        switch try query.one("inAppOwnershipType", or: .invalidInAppOwnershipType) {
        case nil: history.familyShared = nil
        case "PURCHASED": history.familyShared = false
        case "FAMILY_SHARED": history.familyShared = true
        default: throw APIError.invalidInAppOwnershipType
        }
        return history
    }

    /// Apple's names of the product types.
    static let productTypes: [String: ProductType] = [
        "AUTO_RENEWABLE": .autoRenewable, "NON_RENEWABLE": .nonRenewable, "CONSUMABLE": .consumable,
        "NON_CONSUMABLE": .nonConsumable,
    ]

    /// A date as the API takes it: milliseconds since 1970, not negative.
    private static func date(_ text: String?, or error: APIError) throws -> Date? {
        guard let text else { return nil }
        guard (1...15).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            let milliseconds = Int64(text)
        else { throw error }
        return Date(timeIntervalSince1970: Double(milliseconds) / 1_000)
    }
}

/// A history page's `revision`: where the next page starts. Opaque to clients; here when the
/// last transaction was modified (its last event's sequence) and its id, `<sequence>.<id>`.
enum Revision {
    static func token(_ position: ServerHistoryQuery.Position) -> String {
        "\(position.modified).\(position.id)"
    }

    /// Where a list with no revision starts.
    static func start(descending: Bool) -> ServerHistoryQuery.Position {
        descending ? .init(modified: .max, id: UInt64(Int64.max)) : .init(modified: -1, id: 0)
    }

    /// The position a revision names; `nil` without one.
    /// - Throws: `APIError.invalidRevision` for a revision this server did not make.
    static func position(_ token: String?) throws -> ServerHistoryQuery.Position? {
        guard let token else { return nil }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, token.utf8.count <= 40, let date = Int64(parts[0]), let id = UInt64(parts[1]),
            id <= UInt64(Int64.max)
        else { throw APIError.invalidRevision }
        return .init(modified: date, id: id)
    }
}
