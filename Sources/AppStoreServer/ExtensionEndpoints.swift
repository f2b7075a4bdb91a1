import Foundation
import SimulatedStore

/// Extend a Subscription Renewal Date, Extend Subscription Renewal Dates for All Active
/// Subscribers and Get Status of Subscription Renewal Date Extensions
/// (`Ledger.extendRenewalDate`, `extendRenewalDatesForActiveSubscribers`).
extension AppStoreServerAPI {
    /// `ExtendRenewalDateRequest`, and `MassExtendRenewalDateRequest` with its product and
    /// storefronts.
    struct ExtensionRequest: Decodable {
        var extendByDays: Int?
        var extendReasonCode: Int?
        var requestIdentifier: String?
        var productId: String?
        var storefrontCountryCodes: [String]?
    }

    private static func extensionRequest(_ body: Data) throws -> (days: Int, reason: Int, id: String, ExtensionRequest)
    {
        guard let request = try? JSONDecoder().decode(ExtensionRequest.self, from: body) else {
            throw APIError.generalBadRequest
        }
        guard let days = request.extendByDays, (1...RenewalExtension.maximumDays).contains(days) else {
            throw APIError.invalidExtendByDays
        }
        guard let reason = request.extendReasonCode, (0...3).contains(reason) else {
            throw APIError.invalidExtendReasonCode
        }
        guard let id = request.requestIdentifier, RenewalExtension.isValidRequestIdentifier(id) else {
            throw APIError.invalidRequestIdentifier
        }
        return (days, reason, id, request)
    }

    /// Extend a Subscription Renewal Date: `ExtendRenewalDateResponse`.
    func extendRenewalDate(_ idText: String, body: Data) throws -> APIResponse {
        guard let originalID = try? Self.transactionID(idText) else { throw APIError.invalidOriginalTransactionID }
        let (days, reason, id, _) = try Self.extensionRequest(body)
        let done: RenewalExtension
        do {
            done = try store.extendRenewalDate(
                originalTransactionID: originalID, days: days, reason: reason, requestIdentifier: id)
        } catch let error as RenewalExtensionError {
            throw Self.apiError(error)
        }
        return try Self.ok(
            ResponseBody.RenewalExtended(
                originalTransactionId: String(done.originalTransactionID), webOrderLineItemId: String(done.periodID),
                success: true, effectiveDate: done.effectiveDate.ledgerMilliseconds))
    }

    /// Extend Subscription Renewal Dates for All Active Subscribers: recorded with its first
    /// batch of customers (a store of up to `Ledger.massExtensionBatch` customers is done at
    /// once); the sender of `ledger serve` runs the other batches; `{"requestIdentifier"}`.
    func massExtendRenewalDates(_ body: Data) throws -> APIResponse {
        let (days, reason, id, request) = try Self.extensionRequest(body)
        guard let productID = request.productId, (1...255).contains(productID.utf8.count), !productID.holdsNUL else {
            throw APIError.invalidProductID
        }
        let storefronts = request.storefrontCountryCodes ?? []
        if request.storefrontCountryCodes?.isEmpty == true { throw APIError.emptyStorefrontList }
        guard storefronts.allSatisfy({ Storefront(countryCode: $0)?.countryCode == $0 }) else {
            throw APIError.invalidStorefrontCountryCode
        }
        do {
            _ = try store.extendRenewalDatesForActiveSubscribers(
                productID: productID, days: days, reason: reason, requestIdentifier: id, storefronts: storefronts,
                batches: 1)
        } catch is UnknownProductError {
            throw APIError.invalidProductID
        } catch StoreControlError.notAutoRenewable {
            throw APIError.invalidProductID
        } catch let error as RenewalExtensionError {
            throw Self.apiError(error)
        }
        return try Self.ok(ResponseBody.MassExtensionRequested(requestIdentifier: id))
    }

    /// Get Status of Subscription Renewal Date Extensions: `complete` false, without a
    /// `completeDate`, while batches are left; the counts so far.
    func massExtensionStatus(productID: String, requestIdentifier: String) throws -> APIResponse {
        guard let made = try store.massRenewalExtension(requestIdentifier: requestIdentifier),
            made.productID == productID, try !store.products(withIDs: [productID]).isEmpty  // the token's app's
        else { throw APIError.statusRequestNotFound }
        return try Self.ok(
            ResponseBody.MassExtensionStatus(
                requestIdentifier: made.requestIdentifier, complete: made.completeDate != nil,
                completeDate: made.completeDate?.ledgerMilliseconds, succeededCount: made.succeededCount,
                failedCount: made.failedCount))
    }

    private static func apiError(_ error: RenewalExtensionError) -> APIError {
        switch error {
        case .invalidDays: .invalidExtendByDays
        case .invalidReason: .invalidExtendReasonCode
        case .invalidRequestIdentifier: .invalidRequestIdentifier
        case .unknownOriginalTransaction: .originalTransactionIDNotFound
        case .ineligible, .inFreeOfferPeriod: .subscriptionExtensionIneligible
        case .familyShared: .familySharedSubscriptionExtensionIneligible
        case .maximumReached: .subscriptionMaxExtension
        }
    }
}
