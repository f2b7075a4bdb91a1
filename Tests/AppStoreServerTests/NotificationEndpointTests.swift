import Crypto
import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

@testable import AppStoreServer

/// Request a Test Notification, Get Test Notification Status and Get Notification History:
/// pages of 20 chained by `paginationToken`, Apple's filters, every error code.
@Suite struct NotificationEndpointTests {
    let maker = TokenMaker()
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let day: Int64 = 86_400_000

    /// A ledger whose store notifies, with `purchases` consumables bought (a notification each).
    func withNotifications(
        purchases: Int, url: String? = "http://127.0.0.1:9/n",
        _ body: (AppStoreServerAPI, Ledger, String) async throws -> Void
    ) async throws {
        try await withTemporaryLedger(configuration: LedgerConfiguration(clock: .fixed(Self.now))) { ledger in
            try ledger.addAPIKey(keyID: maker.keyID, issuerID: maker.issuerID, publicKey: maker.key.publicKey)
            let session = StoreTestSession(ledger: ledger)
            try session.update { $0.bundleID = maker.bundleID }
            if let url { _ = try session.set(.notificationURL, to: url) }
            for _ in 0..<purchases {
                _ = try await session.buyProduct(Payment(productID: SampleCatalog.consumable))
            }
            let api = AppStoreServerAPI(ledger: ledger, now: { Self.now })
            try await body(api, ledger, try maker.authorization(claims: maker.claims(now: Self.now)))
        }
    }

    static func history(
        _ api: AppStoreServerAPI, token: String, _ body: [String: Any], paginationToken: String? = nil
    ) throws -> (status: Int, json: [String: Any]) {
        let response = api.respond(
            to: APIRequest(
                method: "POST", path: "/inApps/v1/notifications/history",
                query: paginationToken.map { "paginationToken=" + $0 }, authorization: token,
                body: try JSONSerialization.data(withJSONObject: body)))
        let json = try response.json.flatMap { try JSONSerialization.jsonObject(with: $0) as? [String: Any] } ?? [:]
        return (response.status, json)
    }

    static var window: [String: Any] {
        let now = now.ledgerMilliseconds
        return ["startDate": now - day, "endDate": now + day]
    }

    @Test func theHistoryComesInPagesOfTwentyChainedByTheirToken() async throws {
        try await withNotifications(purchases: 45) { api, ledger, token in
            var seen: [String] = []
            var pages: [Int] = []
            var next: String?
            repeat {
                let (status, json) = try Self.history(api, token: token, Self.window, paginationToken: next)
                try #require(status == 200)
                let items = try #require(json["notificationHistory"] as? [[String: Any]])
                pages.append(items.count)
                seen += items.compactMap { $0["signedPayload"] as? String }
                #expect(items.allSatisfy { ($0["sendAttempts"] as? [Any])?.isEmpty == true })
                next = json["hasMore"] as? Bool == true ? json["paginationToken"] as? String : nil
            } while next != nil
            #expect(pages == [20, 20, 5])
            #expect(seen == (try ledger.notifications().map(\.signedPayload)))
        }
    }

    @Test func theHistorysFiltersSelectWhatTheySay() async throws {
        try await withNotifications(purchases: 2) { api, ledger, token in
            let session = StoreTestSession(ledger: ledger)
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.nonConsumable))
            _ = try await session.refundTransaction(bought.id)
            func types(_ extra: [String: Any]) throws -> [String] {
                let (status, json) = try Self.history(api, token: token, Self.window.merging(extra) { $1 })
                #expect(status == 200, "\(extra)")
                return try (json["notificationHistory"] as? [[String: Any]] ?? []).map { item in
                    let payload = try JWS(compactSerialization: item["signedPayload"] as? String ?? "").payload
                    return (try JSONSerialization.jsonObject(with: payload) as? [String: Any])?["notificationType"]
                        as? String ?? ""
                }
            }
            let test = api.respond(
                to: APIRequest(method: "POST", path: "/inApps/v1/notifications/test", authorization: token))
            #expect(test.status == 200)
            let purchases = ["ONE_TIME_CHARGE", "ONE_TIME_CHARGE", "ONE_TIME_CHARGE", "REFUND"]
            #expect(try types([:]) == purchases + ["TEST"])
            #expect(try types(["notificationType": "REFUND"]) == ["REFUND"])
            // Any transaction of the customer's names the customer: all of theirs, not the test's.
            #expect(try types(["transactionId": String(bought.id)]) == purchases)
            #expect(try types(["transactionId": "1"]) == purchases)
            #expect(try types(["onlyFailures": true]).count == 5, "none delivered yet")
            _ = try ledger.recordAttempt(1, result: .success, httpStatus: 200)
            #expect(try types(["onlyFailures": true]).count == 4)
            let later = Self.now.ledgerMilliseconds + Self.day
            #expect(try types(["startDate": later, "endDate": later + Self.day]).isEmpty)
        }
    }

    /// Each bad request (its JSON fields; the window of `window` added when it names no date)
    /// and Apple's error code for it.
    @Test(arguments: [
        (#"{"endDate": 1800000000000}"#, 4_000_015),
        (#"{"startDate": 1799999000000}"#, 4_000_016),
        (#"{"startDate": 1800000000000, "endDate": 1800000000000}"#, 4_000_013),
        (#"{"startDate": 1784361600000, "endDate": 1800000000000}"#, 4_000_012),
        (#"{"notificationType": "NOPE"}"#, 4_000_018),
        (#"{"notificationSubtype": "NOPE"}"#, 4_000_018),
        (#"{"notificationType": "REFUND", "transactionId": "1"}"#, 4_000_019),
        (#"{"transactionId": "abc"}"#, 4_000_006),
        (#"{"startDate": "yesterday"}"#, 4_000_000),
    ])
    func aBadHistoryRequestGetsApplesError(_ fields: String, code: Int) async throws {
        try await withNotifications(purchases: 1) { api, _, token in
            let given = try #require(try JSONSerialization.jsonObject(with: Data(fields.utf8)) as? [String: Any])
            let body = fields.contains("Date") ? given : Self.window.merging(given) { $1 }
            let (status, json) = try Self.history(api, token: token, body)
            #expect(status == 400 && json["errorCode"] as? Int == code, "\(fields): \(json)")
        }
    }

    @Test func theHistorysOtherRefusals() async throws {
        try await withNotifications(purchases: 1) { api, _, token in
            let unknown = try Self.history(api, token: token, Self.window.merging(["transactionId": "999"]) { $1 })
            #expect(unknown.status == 404 && unknown.json["errorCode"] as? Int == 4_040_010)
            for bad in ["abc", "-1", String(repeating: "9", count: 20)] {
                let (status, json) = try Self.history(api, token: token, Self.window, paginationToken: bad)
                #expect(status == 400 && json["errorCode"] as? Int == 4_000_014, "\(bad)")
            }
            let malformed = api.respond(
                to: APIRequest(
                    method: "POST", path: "/inApps/v1/notifications/history", authorization: token,
                    body: Data("{".utf8)))
            #expect(malformed.status == 400)
        }
    }

    @Test func aTestNotificationIsRecordedAndItsStatusRead() async throws {
        try await withNotifications(purchases: 0) { api, ledger, token in
            let requested = api.respond(
                to: APIRequest(method: "POST", path: "/inApps/v1/notifications/test", authorization: token))
            let requestedJSON = try #require(requested.json)
            let body = try #require(try JSONSerialization.jsonObject(with: requestedJSON) as? [String: String])
            let testToken = try #require(body["testNotificationToken"])
            let test = try #require(try ledger.notifications().first)
            #expect(test.type == "TEST" && testToken.hasPrefix(test.uuid.uuidString.lowercased() + "_"))
            _ = try ledger.recordAttempt(test.sequence, result: .timedOut, httpStatus: nil)
            let status = api.respond(
                to: APIRequest(method: "GET", path: "/inApps/v1/notifications/test/" + testToken, authorization: token))
            let statusJSON = try #require(status.json)
            let read = try #require(try JSONSerialization.jsonObject(with: statusJSON) as? [String: Any])
            #expect(read["signedPayload"] as? String == test.signedPayload)
            #expect(
                (read["sendAttempts"] as? [[String: Any]])?.map { $0["sendAttemptResult"] as? String } == ["TIMED_OUT"])
            for (bad, status, code) in [
                ("nope", 400, 4_000_020), (UUID().uuidString.lowercased() + "_1", 404, 4_040_008),
            ] {
                let answer = api.respond(
                    to: APIRequest(method: "GET", path: "/inApps/v1/notifications/test/" + bad, authorization: token))
                let json = try JSONSerialization.jsonObject(with: answer.json ?? Data()) as? [String: Any]
                #expect(answer.status == status && json?["errorCode"] as? Int == code, "\(bad)")
            }
        }
    }

    @Test func aTestNotificationNeedsANotificationURL() async throws {
        try await withNotifications(purchases: 0, url: nil) { api, ledger, token in
            let answer = api.respond(
                to: APIRequest(method: "POST", path: "/inApps/v1/notifications/test", authorization: token))
            let recorded = try ledger.notifications()
            #expect(answer.status == 404 && recorded.isEmpty)
        }
    }
}
