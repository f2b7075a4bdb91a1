import Foundation
import SimulatedStore

/// Look Up Order ID, Send Consumption Information (versions 1 and 2) and Set App Account
/// Token: what the team's server reads by order, and tells the App Store about a transaction.
extension AppStoreServerAPI {
    /// Look Up Order ID: the order's transaction, signed, with status 0; status 1 and no
    /// transaction for an order id the store never gave (Apple answers 200 either way).
    func orderLookup(_ orderID: String) throws -> APIResponse {
        guard let transaction = try store.transaction(forOrder: orderID) else {
            return try Self.ok(ResponseBody.OrderLookup(status: 1, signedTransactions: []))
        }
        let signed = try store.serverSignedTransactions([transaction]).map(\.compactSerialization)
        return try Self.ok(ResponseBody.OrderLookup(status: 0, signedTransactions: signed))
    }

    /// Version 1's body (`ConsumptionRequestV1`): numbers for each value.
    struct ConsumptionV1: Decodable {
        var customerConsented: Bool?
        var consumptionStatus: Int?
        var platform: Int?
        var sampleContentProvided: Bool?
        var deliveryStatus: Int?
        var appAccountToken: String?
        var accountTenure: Int?
        var playTime: Int?
        var lifetimeDollarsRefunded: Int?
        var lifetimeDollarsPurchased: Int?
        var userStatus: Int?
        var refundPreference: Int?
    }

    /// Version 2's body (`ConsumptionRequest`).
    struct ConsumptionV2: Decodable {
        var customerConsented: Bool?
        var sampleContentProvided: Bool?
        var deliveryStatus: String?
        var consumptionPercentage: Int?
        var refundPreference: String?
    }

    /// Send Consumption Information: the body checked field by field with Apple's codes, then
    /// kept with the transaction (`Ledger.recordConsumption`, shown by `ledger show`); 202 and
    /// no body. Version 1 takes consumables and auto-renewable subscriptions, version 2 any
    /// purchase.
    func consumption(_ idText: String, body: Data, version: Int) throws -> APIResponse {
        let transaction = try serverTransaction(try Self.transactionID(idText))
        if version == 1 {
            guard let request = try? JSONDecoder().decode(ConsumptionV1.self, from: body) else {
                throw APIError.generalBadRequest
            }
            try Self.check(request)
            guard transaction.productType == .consumable || transaction.productType == .autoRenewable else {
                throw APIError.transactionTypeNotSupported
            }
        } else {
            guard let request = try? JSONDecoder().decode(ConsumptionV2.self, from: body) else {
                throw APIError.generalBadRequest
            }
            try Self.check(request)
        }
        guard body.count <= Ledger.consumptionBodyLimit else { throw APIError.generalBadRequest }
        try store.recordConsumption(String(decoding: body, as: UTF8.self), version: version, for: transaction.id)
        return APIResponse(status: 202, json: nil)
    }

    private static func check(_ request: ConsumptionV1) throws {
        func within(_ value: Int?, _ range: ClosedRange<Int>, or error: APIError) throws {
            guard let value, range.contains(value) else { throw error }
        }
        guard request.customerConsented == true else { throw APIError.invalidCustomerConsented }
        try within(request.consumptionStatus, 0...3, or: .invalidConsumptionStatus)
        try within(request.platform, 0...2, or: .invalidPlatform)
        guard request.sampleContentProvided != nil else { throw APIError.invalidSampleContentProvided }
        try within(request.deliveryStatus, 0...5, or: .invalidDeliveryStatus)
        guard let token = request.appAccountToken, token.isEmpty || UUID(exactly: token) != nil else {
            throw APIError.invalidAppAccountToken
        }
        try within(request.accountTenure, 0...7, or: .invalidAccountTenure)
        try within(request.playTime, 0...7, or: .invalidPlayTime)
        try within(request.lifetimeDollarsRefunded, 0...7, or: .invalidLifetimeDollarsRefunded)
        try within(request.lifetimeDollarsPurchased, 0...7, or: .invalidLifetimeDollarsPurchased)
        try within(request.userStatus, 0...4, or: .invalidUserStatus)
        if let preference = request.refundPreference, !(0...3).contains(preference) {
            throw APIError.generalBadRequest
        }
    }

    private static func check(_ request: ConsumptionV2) throws {
        guard request.customerConsented == true else { throw APIError.invalidCustomerConsented }
        guard request.sampleContentProvided != nil else { throw APIError.invalidSampleContentProvided }
        let deliveries = [
            "DELIVERED", "UNDELIVERED_QUALITY_ISSUE", "UNDELIVERED_WRONG_ITEM", "UNDELIVERED_SERVER_OUTAGE",
            "UNDELIVERED_OTHER",
        ]
        guard let delivery = request.deliveryStatus, deliveries.contains(delivery) else {
            throw APIError.invalidDeliveryStatus
        }
        if let share = request.consumptionPercentage, !(0...100_000).contains(share) {
            throw APIError.generalBadRequest
        }
        if let preference = request.refundPreference, !["DECLINE", "GRANT_FULL", "GRANT_PRORATED"].contains(preference)
        {
            throw APIError.generalBadRequest
        }
    }

    /// Finish Transaction (API 1.20): the app's server finished processing the transaction, as
    /// the app's `Transaction.finish()` would, so its devices stop getting it at launch; 200 and
    /// no body, again for one finished already. A transaction the server never saw (purchasing,
    /// deferred, failed) is not found, as Get Transaction Info says.
    func finishTransaction(_ idText: String) throws -> APIResponse {
        let transaction = try serverTransaction(try Self.transactionID(idText))
        _ = try store.finish([transaction.id])
        return APIResponse(status: 200, json: nil)
    }

    /// Set App Account Token's body (`UpdateAppAccountTokenRequest`).
    struct AppAccountTokenRequest: Decodable {
        var appAccountToken: String?
    }

    /// Set App Account Token: the original transaction's chain is signed with the token from now
    /// on (an empty string clears it); 200 and no body.
    func setAppAccountToken(_ idText: String, body: Data) throws -> APIResponse {
        let original = try serverTransaction(try Self.transactionID(idText))
        guard let request = try? JSONDecoder().decode(AppAccountTokenRequest.self, from: body),
            let text = request.appAccountToken
        else { throw APIError.generalBadRequest }
        let token = UUID(exactly: text)
        guard text.isEmpty || token != nil else { throw APIError.invalidAppAccountTokenUUID }
        guard original.originalID == original.id else { throw APIError.transactionIDIsNotOriginal }
        do {
            try store.setAppAccountToken(token, originalTransactionID: original.id)
        } catch ServerRecordError.familyShared {
            throw APIError.familyTransactionNotSupported
        }
        return APIResponse(status: 200, json: nil)
    }
}
