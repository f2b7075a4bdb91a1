import Foundation
import SimulatedStore

/// Get All Subscription Statuses: each subscription group the customer bought, with its latest
/// transaction and renewal info, signed, and Apple's status code.
extension AppStoreServerAPI {
    func subscriptionStatuses(_ idText: String, query: QueryParameters, settings: StoreSettings) throws -> APIResponse {
        let customer = try customerStore(idText)
        let wanted = try Set(
            query.all("status").map { text in
                guard let code = Int(text), (1...5).contains(code) else { throw APIError.invalidStatus }
                return code
            })
        // One item per group; a group the customer holds twice (their own subscription and one
        // a family member shares) lists both, as Apple's `lastTransactions` array allows.
        var groups: [ResponseBody.Group] = []
        for status in try customer.subscriptionStatuses() {
            let code = status.state.appStoreCode
            guard wanted.isEmpty || wanted.contains(code) else { continue }
            let last = ResponseBody.LastTransaction(
                status: code, originalTransactionId: String(status.transaction.originalID),
                signedTransactionInfo: try store.serverSignedTransactions([status.transaction])[0]
                    .compactSerialization,
                signedRenewalInfo: try store.signedRenewalInfoWithPayload(status, signedNow: true).jws
                    .compactSerialization)
            if groups.last?.subscriptionGroupIdentifier == status.groupID {
                groups[groups.count - 1].lastTransactions.append(last)
            } else {
                groups.append(ResponseBody.Group(subscriptionGroupIdentifier: status.groupID, lastTransactions: [last]))
            }
        }
        return try Self.ok(
            ResponseBody.Statuses(
                environment: settings.environment.rawValue, appAppleId: settings.appAppleID,
                bundleId: settings.bundleID, data: groups))
    }
}
