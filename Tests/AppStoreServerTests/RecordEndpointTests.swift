import Crypto
import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

@testable import AppStoreServer

/// Look Up Order ID, Send Consumption Information, Set App Account Token and the renewal-date
/// extensions: what each keeps or changes, every error code, and that a refusal changes nothing.
@Suite struct RecordEndpointTests {
    let maker = TokenMaker()
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let day: TimeInterval = 86_400

    func withServer(_ body: (AppStoreServerAPI, Ledger, StoreTestSession, String) async throws -> Void) async throws {
        try await withTemporaryLedger(configuration: LedgerConfiguration(clock: .fixed(Self.now))) { ledger in
            try ledger.addAPIKey(keyID: maker.keyID, issuerID: maker.issuerID, publicKey: maker.key.publicKey)
            let session = StoreTestSession(ledger: ledger)
            try session.update { $0.bundleID = maker.bundleID }
            _ = try session.set(.notificationURL, to: "http://127.0.0.1:9/n")
            let api = AppStoreServerAPI(ledger: ledger, now: { Self.now })
            try await body(api, ledger, session, try maker.authorization(claims: maker.claims(now: Self.now)))
        }
    }

    /// The answer to `method path` with a JSON `body`: status, and the JSON object it carries.
    static func call(
        _ api: AppStoreServerAPI, _ method: String, _ path: String, token: String, body: String? = nil
    ) throws -> (status: Int, json: [String: Any]) {
        let answer = api.respond(
            to: APIRequest(method: method, path: path, authorization: token, body: Data((body ?? "").utf8)))
        let json = try answer.json.flatMap { try JSONSerialization.jsonObject(with: $0) as? [String: Any] } ?? [:]
        return (answer.status, json)
    }

    static func payload(_ jws: Any?) throws -> [String: Any] {
        let text = try #require(jws as? String)
        return try #require(
            try JSONSerialization.jsonObject(with: try JWS(compactSerialization: text).payload) as? [String: Any])
    }

    // MARK: - Payments that are no transaction

    /// A downgrade's payment is no transaction of the App Store: every endpoint that takes a
    /// transaction id answers for it as for an id it never gave, and changes nothing.
    @Test func aPaymentThatOnlyChangedARenewalIsUnknownToEveryEndpoint() async throws {
        try await withServer { api, ledger, session, token in
            let pro = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            let downgrade = try await session.buyProduct(Payment(productID: SampleCatalog.basicSubscription))
            #expect(try ledger.subscriptionChanged(byPayment: downgrade.id)?.id == pro.id)
            let notFound = ["errorCode": 4_040_010]
            for (method, path, body) in [
                ("GET", "/inApps/v1/transactions/\(downgrade.id)", nil),
                ("GET", "/inApps/v2/history/\(downgrade.id)", nil),
                ("GET", "/inApps/v1/history/\(downgrade.id)", nil),
                ("GET", "/inApps/v2/refund/lookup/\(downgrade.id)", nil),
                ("GET", "/inApps/v1/subscriptions/\(downgrade.id)", nil),
                ("POST", "/inApps/v1/transactions/\(downgrade.id)/finish", nil),
                (
                    "PUT", "/inApps/v1/transactions/\(downgrade.id)/appAccountToken",
                    "{\"appAccountToken\":\"7e3fb20b-4cdb-47cc-936d-99d65f608138\"}"
                ),
                ("GET", "/inApps/v1/transactions/appTransactions/\(downgrade.id)", nil),
                (
                    "POST", "/inApps/v1/notifications/history",
                    "{\"startDate\":\(Self.now.ledgerMilliseconds - 1_000),\"endDate\":\(Self.now.ledgerMilliseconds + 1_000),"
                        + "\"transactionId\":\"\(downgrade.id)\"}"
                ),
            ] as [(String, String, String?)] {
                let answer = try Self.call(api, method, path, token: token, body: body)
                #expect(answer.status == 404, "\(method) \(path)")
                #expect(answer.json["errorCode"] as? Int == notFound["errorCode"], "\(method) \(path)")
            }
            #expect(try ledger.transaction(pro.id)?.appAccountToken == nil, "nothing changed")
            let order = try Self.call(api, "GET", "/inApps/v1/lookup/\(OrderID.of(downgrade.id))", token: token)
            #expect(order.status == 200 && order.json["status"] as? Int == 1)
        }
    }

    /// API 1.20's `anyTransactionId`: the customer's app transaction id names the customer for
    /// the histories, the statuses and the app transaction; Get Transaction Info refuses it
    /// (400, 4000048), and the endpoints that take a transaction do not know it (404).
    @Test func theAppTransactionIDNamesTheCustomerWhereAppleTakesAnyTransactionID() async throws {
        try await withServer { api, ledger, session, token in
            _ = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            let level = try await session.buyProduct(Payment(productID: SampleCatalog.nonConsumable))
            _ = try await session.refundTransaction(level.id)
            let app = try ledger.appTransactionID()
            let history = try Self.call(api, "GET", "/inApps/v2/history/\(app)", token: token)
            #expect(history.status == 200 && (history.json["signedTransactions"] as? [Any])?.count == 2)
            let refunds = try Self.call(api, "GET", "/inApps/v2/refund/lookup/\(app)", token: token)
            #expect(refunds.status == 200 && (refunds.json["signedTransactions"] as? [Any])?.count == 1)
            let statuses = try Self.call(api, "GET", "/inApps/v1/subscriptions/\(app)", token: token)
            #expect(statuses.status == 200 && (statuses.json["data"] as? [Any])?.count == 1)
            let info = try Self.call(api, "GET", "/inApps/v1/transactions/\(app)", token: token)
            #expect(info.status == 400 && info.json["errorCode"] as? Int == 4_000_048)
            #expect(info.json["errorMessage"] as? String == "App transactions aren't supported by this endpoint.")
            let finish = try Self.call(api, "POST", "/inApps/v1/transactions/\(app)/finish", token: token)
            #expect(finish.status == 404 && finish.json["errorCode"] as? Int == 4_040_010)
            let next = String(UInt64(app)! + 1)  // another id nobody was given
            #expect(try Self.call(api, "GET", "/inApps/v2/history/\(next)", token: token).status == 404)
        }
    }

    // MARK: - Signed dates

    /// An App Store Server API answer is signed when it is asked for: its transactions' and
    /// renewal info's `signedDate` is the store's time of signing, not of their last change (the
    /// device's copy keeps that one).
    @Test func anAnswersSignedDateIsWhenItWasSigned() async throws {
        try await withServer { api, ledger, session, token in
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            try await session.advanceClock(by: Self.day)
            let now = Self.now.addingTimeInterval(Self.day).ledgerMilliseconds
            let info = try Self.call(api, "GET", "/inApps/v1/transactions/\(bought.id)", token: token)
            #expect(try Self.payload(info.json["signedTransactionInfo"])["signedDate"] as? Int64 == now)
            let history = try Self.call(api, "GET", "/inApps/v2/history/\(bought.id)", token: token)
            for signed in history.json["signedTransactions"] as? [Any] ?? [] {
                #expect(try Self.payload(signed)["signedDate"] as? Int64 == now)
            }
            let statuses = try Self.call(api, "GET", "/inApps/v1/subscriptions/\(bought.id)", token: token)
            let group = try #require((statuses.json["data"] as? [[String: Any]])?.first)
            let last = try #require((group["lastTransactions"] as? [[String: Any]])?.first)
            #expect(try Self.payload(last["signedTransactionInfo"])["signedDate"] as? Int64 == now)
            #expect(try Self.payload(last["signedRenewalInfo"])["signedDate"] as? Int64 == now)
            // The device's copy is dated by its last change.
            let device = try ledger.signedTransactions([bought])[0]
            #expect(device.signedDate == bought.updatedAt)
        }
    }

    // MARK: - Finish Transaction

    /// The server finishes a purchase the app did not: it is finished (its event in the
    /// history), the device stops getting it at launch, and asked again it is still 200. What the
    /// server never saw is not found; an id that does not read is refused; nothing changes then.
    @Test func finishTransactionFinishesWhatTheDeviceWouldGetAtLaunch() async throws {
        try await withServer { api, ledger, session, token in
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.consumable))
            #expect(try ledger.transaction(bought.id)?.isFinished == false)
            let path = "/inApps/v1/transactions/\(bought.id)/finish"
            let done = try Self.call(api, "POST", path, token: token)
            #expect(done.status == 200 && done.json.isEmpty)
            #expect(try ledger.transaction(bought.id)?.isFinished == true)
            #expect(try ledger.events(of: bought.id).last?.kind == .finished)
            // A launch delivers the unfinished transactions: it is not among them.
            #expect(try PaymentQueue(ledger: ledger).transactions.isEmpty, "the device gets it no more")
            #expect(try Self.call(api, "POST", path, token: token).status == 200, "again: still finished")
            var declined = Payment(productID: SampleCatalog.nonConsumable)
            declined.simulatedOutcome = .failed(.paymentCancelled)
            let failed = try await PaymentQueue(ledger: ledger).add(declined)
            #expect(failed.state == .failed)
            for (path, status, code) in [
                ("/inApps/v1/transactions/\(failed.id)/finish", 404, 4_040_010),
                ("/inApps/v1/transactions/999/finish", 404, 4_040_010),
                ("/inApps/v1/transactions/abc/finish", 400, 4_000_006),
            ] {
                let answer = try Self.call(api, "POST", path, token: token)
                #expect(answer.status == status && answer.json["errorCode"] as? Int == code, "\(path)")
            }
            #expect(try ledger.transaction(failed.id)?.isFinished == false)
            #expect(try Self.call(api, "GET", path, token: token).status == 405)
            #expect(try ledger.verify() == [])
        }
    }

    // MARK: - Orders

    @Test func anOrderIDLeadsBackToItsTransactionAndNothingElse() async throws {
        var random = SplitMix64(seed: 25)
        for _ in 0..<2_000 {
            let id = random.next() >> (random.next() % 64)
            let order = OrderID.of(id)
            #expect(order.hasPrefix("M") && order.utf8.count <= 14)
            #expect(OrderID.transactionID(of: order) == id)
            #expect(OrderID.transactionID(of: order.lowercased()) == nil || order == order.lowercased())
        }
        for bad in ["", "M", "X123", "M-1", "M+1", "M0001", "M" + String(repeating: "Z", count: 14)] {
            #expect(OrderID.transactionID(of: bad) == nil, "\(bad)")
        }
    }

    @Test func lookUpOrderIDAnswersTheChargedTransaction() async throws {
        try await withServer { api, _, session, token in
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.nonConsumable))
            let found = try Self.call(api, "GET", "/inApps/v1/lookup/" + OrderID.of(bought.id), token: token)
            #expect(found.status == 200 && found.json["status"] as? Int == 0)
            let signed = try #require(found.json["signedTransactions"] as? [String])
            #expect(try signed.map { try Self.payload($0)["transactionId"] as? String } == [String(bought.id)])
            for unknown in [OrderID.of(bought.id + 1), "NOPE", "m" + OrderID.of(bought.id).dropFirst()] {
                let none = try Self.call(api, "GET", "/inApps/v1/lookup/" + unknown, token: token)
                #expect(none.status == 200 && none.json["status"] as? Int == 1, "\(unknown)")
                #expect((none.json["signedTransactions"] as? [Any])?.isEmpty == true)
            }
        }
    }

    // MARK: - Consumption information

    static let consumptionV1 = """
        {"customerConsented": true, "consumptionStatus": 1, "platform": 1, "sampleContentProvided": false,
         "deliveryStatus": 0, "appAccountToken": "", "accountTenure": 2, "playTime": 3,
         "lifetimeDollarsRefunded": 0, "lifetimeDollarsPurchased": 4, "userStatus": 1, "refundPreference": 2}
        """

    @Test func consumptionInformationIsKeptWithTheTransaction() async throws {
        try await withServer { api, ledger, session, token in
            let coins = try await session.buyProduct(Payment(productID: SampleCatalog.consumable))
            let path = "/inApps/v1/transactions/consumption/\(coins.id)"
            let sent = try Self.call(api, "PUT", path, token: token, body: Self.consumptionV1)
            #expect(sent.status == 202 && sent.json.isEmpty)
            let kept = try #require(try ledger.consumptionInformation(for: coins.id))
            #expect(kept.version == 1 && kept.json == Self.consumptionV1 && kept.date == Self.now)
            let v2 =
                #"{"customerConsented": true, "sampleContentProvided": true, "deliveryStatus": "DELIVERED", "consumptionPercentage": 25000, "refundPreference": "DECLINE"}"#
            let lifetime = try await session.buyProduct(Payment(productID: SampleCatalog.nonConsumable))
            #expect(
                try Self.call(api, "PUT", "/inApps/v2/transactions/consumption/\(lifetime.id)", token: token, body: v2)
                    .status == 202)
            #expect(try ledger.consumptionInformation(for: lifetime.id)?.version == 2)
        }
    }

    /// Each field of version 1 outside its values, and Apple's code for it.
    @Test(arguments: [
        ("customerConsented", "false", 4_000_035), ("consumptionStatus", "4", 4_000_034), ("platform", "3", 4_000_039),
        ("sampleContentProvided", "null", 4_000_041), ("deliveryStatus", "6", 4_000_036),
        ("appAccountToken", #""nope""#, 4_000_033), ("accountTenure", "8", 4_000_032), ("playTime", "-1", 4_000_040),
        ("lifetimeDollarsRefunded", "8", 4_000_038), ("lifetimeDollarsPurchased", "9", 4_000_037),
        ("userStatus", "5", 4_000_042), ("refundPreference", "4", 4_000_000), ("platform", #""iOS""#, 4_000_000),
    ])
    func aBadConsumptionFieldGetsApplesCode(_ field: String, value: String, code: Int) async throws {
        try await withServer { api, ledger, session, token in
            let coins = try await session.buyProduct(Payment(productID: SampleCatalog.consumable))
            var body = try #require(
                try JSONSerialization.jsonObject(with: Data(Self.consumptionV1.utf8)) as? [String: Any])
            body[field] = try JSONSerialization.jsonObject(with: Data(value.utf8), options: .fragmentsAllowed)
            let text = String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)
            let answer = try Self.call(
                api, "PUT", "/inApps/v1/transactions/consumption/\(coins.id)", token: token, body: text)
            #expect(answer.status == 400 && answer.json["errorCode"] as? Int == code, "\(field) = \(value)")
            #expect(try ledger.consumptionInformation(for: coins.id) == nil, "nothing kept")
        }
    }

    @Test func consumptionsOtherRefusals() async throws {
        try await withServer { api, ledger, session, token in
            let lifetime = try await session.buyProduct(Payment(productID: SampleCatalog.nonConsumable))
            let v1 = try Self.call(
                api, "PUT", "/inApps/v1/transactions/consumption/\(lifetime.id)", token: token,
                body: Self.consumptionV1)
            #expect(v1.status == 400 && v1.json["errorCode"] as? Int == 4_000_047, "version 1: not a consumable")
            let v2Path = "/inApps/v2/transactions/consumption/\(lifetime.id)"
            for (body, code) in [
                (#"{"customerConsented": true, "sampleContentProvided": true, "deliveryStatus": "LOST"}"#, 4_000_036),
                (
                    #"{"customerConsented": false, "sampleContentProvided": true, "deliveryStatus": "DELIVERED"}"#,
                    4_000_035
                ),
                (#"{"customerConsented": true, "deliveryStatus": "DELIVERED"}"#, 4_000_041),
                (
                    #"{"customerConsented": true, "sampleContentProvided": true, "deliveryStatus": "DELIVERED", "consumptionPercentage": 100001}"#,
                    4_000_000
                ),
                ("{", 4_000_000),
            ] {
                let answer = try Self.call(api, "PUT", v2Path, token: token, body: body)
                #expect(answer.status == 400 && answer.json["errorCode"] as? Int == code, "\(body)")
            }
            let unknown = try Self.call(
                api, "PUT", "/inApps/v2/transactions/consumption/999", token: token, body: Self.consumptionV1)
            #expect(unknown.status == 404 && unknown.json["errorCode"] as? Int == 4_040_010)
            #expect(try ledger.consumptionInformation(for: lifetime.id) == nil)
        }
    }

    // MARK: - App account tokens

    @Test func anAppAccountTokenSetByTheServerSignsTheWholeChain() async throws {
        try await withServer { api, ledger, session, token in
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            let renewal = try await session.forceRenewalOfSubscription(SampleCatalog.subscription)
            let account = UUID()
            let path = "/inApps/v1/transactions/\(bought.id)/appAccountToken"
            let set = try Self.call(
                api, "PUT", path, token: token, body: #"{"appAccountToken": "\#(account.uuidString)"}"#)
            #expect(set.status == 200 && set.json.isEmpty)
            for id in [bought.id, renewal.id] {
                let info = try Self.call(api, "GET", "/inApps/v1/transactions/\(id)", token: token)
                #expect(
                    try Self.payload(info.json["signedTransactionInfo"])["appAccountToken"] as? String
                        == account.uuidString.lowercased())
            }
            #expect(try ledger.transaction(bought.id)?.appAccountToken == nil, "the row keeps what the app sent")
            // The notifications made from then on carry it too.
            try await session.setAutoRenew(false, for: SampleCatalog.subscription)
            let notified = try Self.payload(try #require(try ledger.notifications().last).signedPayload)
            let data = try #require(notified["data"] as? [String: Any])
            #expect(
                try Self.payload(data["signedTransactionInfo"])["appAccountToken"] as? String
                    == account.uuidString.lowercased())
            let renewalInfo = try #require(try ledger.signedRenewalInfo(forProduct: SampleCatalog.subscription))
            #expect(
                try Self.payload(renewalInfo.compactSerialization)["appAccountToken"] as? String
                    == account.uuidString.lowercased())
            // From Swift: the same rule, with the ledger's errors.
            #expect(throws: ServerRecordError.notOriginal(renewal.id)) {
                try ledger.setAppAccountToken(nil, originalTransactionID: renewal.id)
            }
            #expect(throws: PaymentQueueError.unknownTransaction(999)) {
                try ledger.setAppAccountToken(nil, originalTransactionID: 999)
            }
            #expect(try Self.call(api, "PUT", path, token: token, body: #"{"appAccountToken": ""}"#).status == 200)
            let cleared = try Self.call(api, "GET", "/inApps/v1/transactions/\(bought.id)", token: token)
            #expect(try Self.payload(cleared.json["signedTransactionInfo"])["appAccountToken"] == nil)
            for (path, body, code) in [
                (path, #"{"appAccountToken": "nope"}"#, 4_000_183),
                ("/inApps/v1/transactions/\(renewal.id)/appAccountToken", #"{"appAccountToken": ""}"#, 4_000_187),
                (path, "[]", 4_000_000),
            ] {
                let answer = try Self.call(api, "PUT", path, token: token, body: body)
                #expect(answer.status == 400 && answer.json["errorCode"] as? Int == code, "\(body)")
            }
        }
    }

    // MARK: - Renewal extensions

    @Test func anExtensionMovesTheRenewalOnceForOneRequestIdentifier() async throws {
        try await withServer { api, ledger, session, token in
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            let end = try #require(bought.expirationDate)
            let path = "/inApps/v1/subscriptions/extend/\(bought.id)"
            let body = #"{"extendByDays": 10, "extendReasonCode": 3, "requestIdentifier": "outage-1"}"#
            let first = try Self.call(api, "PUT", path, token: token, body: body)
            #expect(first.status == 200 && first.json["success"] as? Bool == true)
            let effective = end.addingTimeInterval(10 * Self.day).ledgerMilliseconds
            #expect(first.json["effectiveDate"] as? Int64 == effective)
            #expect(first.json["webOrderLineItemId"] as? String == String(bought.id))
            let again = try Self.call(api, "PUT", path, token: token, body: body)
            #expect(again.json["effectiveDate"] as? Int64 == effective, "the same request extends once")
            #expect(try ledger.transaction(bought.id)?.expirationDate?.ledgerMilliseconds == effective)
            #expect(try ledger.notifications().filter { $0.type == "RENEWAL_EXTENDED" }.count == 1)
            // The next renewal starts at the new date.
            let renewals = try await session.advanceClock(by: 45 * Self.day)
            #expect(renewals.first?.purchaseDate.ledgerMilliseconds == effective)
            let second = #"{"extendByDays": 1, "extendReasonCode": 0, "requestIdentifier": "r2"}"#
            #expect(try Self.call(api, "PUT", path, token: token, body: second).status == 200)
            let third = #"{"extendByDays": 1, "extendReasonCode": 0, "requestIdentifier": "r3"}"#
            let refused = try Self.call(api, "PUT", path, token: token, body: third)
            #expect(refused.status == 403 && refused.json["errorCode"] as? Int == 4_030_005, "twice a year")
            #expect(try ledger.verify() == [])
        }
    }

    @Test func anExtensionsRefusalsChangeNothing() async throws {
        try await withServer { api, ledger, session, token in
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            let path = "/inApps/v1/subscriptions/extend/\(bought.id)"
            func body(days: Int = 5, reason: Int = 1, id: String = "r") -> String {
                #"{"extendByDays": \#(days), "extendReasonCode": \#(reason), "requestIdentifier": "\#(id)"}"#
            }
            for (path, body, status, code) in [
                (path, body(days: 0), 400, 4_000_009), (path, body(days: 91), 400, 4_000_009),
                (path, body(reason: 4), 400, 4_000_010), (path, body(id: ""), 400, 4_000_011),
                (path, body(id: String(repeating: "r", count: 129)), 400, 4_000_011), (path, "{", 400, 4_000_000),
                ("/inApps/v1/subscriptions/extend/x", body(), 400, 4_000_008),
                ("/inApps/v1/subscriptions/extend/999", body(), 404, 4_040_005),
            ] {
                let answer = try Self.call(api, "PUT", path, token: token, body: body)
                #expect(answer.status == status && answer.json["errorCode"] as? Int == code, "\(path) \(body)")
            }
            _ = try await session.expireSubscription(SampleCatalog.subscription)
            let expired = try Self.call(api, "PUT", path, token: token, body: body())
            #expect(expired.status == 403 && expired.json["errorCode"] as? Int == 4_030_004)
            #expect(try ledger.renewalExtensions(originalTransactionID: bought.id).isEmpty)
        }
    }

    /// What Apple refuses of a subscription the customer has through Family Sharing, and of one
    /// in a free offer period: an extension of the shared one (403, 4030007: the purchaser's is
    /// extended, not the member's), of the free one (403, 4030004, counted as failed by a mass
    /// extension), and Set App Account Token on a shared purchase (400, 4000185). Each refusal
    /// changes nothing; from Swift, the ledger's own errors.
    @Test func familySharedAndFreeOfferPeriodsAreRefusedAsAppleRefusesThem() async throws {
        try await withServer { api, ledger, session, token in
            var free = Payment(productID: SampleCatalog.subscription)
            free.codeOffer = "FREEMONTH"
            let trial = try await session.buyProduct(free)
            #expect(trial.offer?.paymentMode == .freeTrial)
            let sharedSubscription = try await session.shareFamilyPurchase(
                Payment(productID: SampleCatalog.yearlySubscription))
            let sharedLevel = try await session.shareFamilyPurchase(Payment(productID: SampleCatalog.nonConsumable2))
            func extend(_ id: UInt64, request: String) throws -> (status: Int, json: [String: Any]) {
                try Self.call(
                    api, "PUT", "/inApps/v1/subscriptions/extend/\(id)", token: token,
                    body: #"{"extendByDays": 5, "extendReasonCode": 1, "requestIdentifier": "\#(request)"}"#)
            }
            let shared = try extend(sharedSubscription.id, request: "shared")
            #expect(shared.status == 403 && shared.json["errorCode"] as? Int == 4_030_007)
            let inTrial = try extend(trial.id, request: "trial")
            #expect(inTrial.status == 403 && inTrial.json["errorCode"] as? Int == 4_030_004)
            let mass = try Self.call(
                api, "POST", "/inApps/v1/subscriptions/extend/mass", token: token,
                body: #"""
                    {"extendByDays": 3, "extendReasonCode": 1, "requestIdentifier": "m",
                     "productId": "\#(SampleCatalog.subscription)"}
                    """#)
            #expect(mass.status == 200)
            let done = try #require(try ledger.massRenewalExtension(requestIdentifier: "m"))
            #expect(done.succeededCount == 0 && done.failedCount == 1)
            for id in [sharedSubscription.id, sharedLevel.id] {
                let answer = try Self.call(
                    api, "PUT", "/inApps/v1/transactions/\(id)/appAccountToken", token: token,
                    body: #"{"appAccountToken": "\#(UUID().uuidString)"}"#)
                #expect(answer.status == 400 && answer.json["errorCode"] as? Int == 4_000_185, "\(id)")
            }
            // From Swift: the ledger's errors.
            #expect(throws: RenewalExtensionError.familyShared(sharedSubscription.id)) {
                try ledger.extendRenewalDate(
                    originalTransactionID: sharedSubscription.id, days: 5, reason: 1, requestIdentifier: "s")
            }
            #expect(throws: RenewalExtensionError.inFreeOfferPeriod(trial.id)) {
                try ledger.extendRenewalDate(
                    originalTransactionID: trial.id, days: 5, reason: 1, requestIdentifier: "t")
            }
            #expect(throws: ServerRecordError.familyShared(sharedLevel.id)) {
                try ledger.setAppAccountToken(UUID(), originalTransactionID: sharedLevel.id)
            }
            // Nothing changed: no extension, no token, the periods' ends as they were.
            #expect(try ledger.renewalExtensions(originalTransactionID: trial.id).isEmpty)
            #expect(try ledger.renewalExtensions(originalTransactionID: sharedSubscription.id).isEmpty)
            #expect(try ledger.serverAppAccountToken(originalTransactionID: sharedLevel.id) == nil)
            #expect(try ledger.serverAppAccountToken(originalTransactionID: sharedSubscription.id) == nil)
            #expect(try ledger.transaction(trial.id)?.expirationDate == trial.expirationDate)
            #expect(try ledger.transaction(sharedSubscription.id)?.expirationDate == sharedSubscription.expirationDate)
            #expect(try ledger.verify() == [])
        }
    }

    @Test func aMassExtensionIsDoneAtOnceAndSummarized() async throws {
        try await withServer { api, ledger, session, token in
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            let body = """
                {"extendByDays": 3, "extendReasonCode": 1, "requestIdentifier": "m1",
                 "productId": "\(SampleCatalog.subscription)", "storefrontCountryCodes": ["USA", "FRA"]}
                """
            let asked = try Self.call(api, "POST", "/inApps/v1/subscriptions/extend/mass", token: token, body: body)
            #expect(asked.status == 200 && asked.json["requestIdentifier"] as? String == "m1")
            let status = try Self.call(
                api, "GET", "/inApps/v1/subscriptions/extend/mass/\(SampleCatalog.subscription)/m1", token: token)
            #expect(status.json["complete"] as? Bool == true && status.json["succeededCount"] as? Int == 1)
            #expect(status.json["failedCount"] as? Int == 0)
            #expect(
                try ledger.transaction(bought.id)?.expirationDate
                    == bought.expirationDate?.addingTimeInterval(3 * Self.day))
            let summary = try #require(try ledger.notifications().last)
            #expect(summary.type == "RENEWAL_EXTENSION" && summary.subtype == "SUMMARY")
            let decoded = try Self.payload(summary.signedPayload)
            let fields = try #require(decoded["summary"] as? [String: Any])
            #expect(fields["requestIdentifier"] as? String == "m1" && fields["succeededCount"] as? Int == 1)
            #expect(fields["storefrontCountryCodes"] as? [String] == ["USA", "FRA"] && decoded["data"] == nil)
            for (body, status, code) in [
                (
                    #"{"extendByDays": 3, "extendReasonCode": 1, "requestIdentifier": "m2", "productId": "nope"}"#, 400,
                    4_000_023
                ),
                (
                    #"{"extendByDays": 3, "extendReasonCode": 1, "requestIdentifier": "m2", "productId": "\#(SampleCatalog.consumable)"}"#,
                    400, 4_000_023
                ),
                (
                    #"{"extendByDays": 3, "extendReasonCode": 1, "requestIdentifier": "m2", "productId": "\#(SampleCatalog.subscription)", "storefrontCountryCodes": []}"#,
                    400, 4_000_027
                ),
                (
                    #"{"extendByDays": 3, "extendReasonCode": 1, "requestIdentifier": "m2", "productId": "\#(SampleCatalog.subscription)", "storefrontCountryCodes": ["XX"]}"#,
                    400, 4_000_028
                ),
            ] {
                let answer = try Self.call(
                    api, "POST", "/inApps/v1/subscriptions/extend/mass", token: token, body: body)
                #expect(answer.status == status && answer.json["errorCode"] as? Int == code, "\(body)")
            }
            #expect(try ledger.massRenewalExtension(requestIdentifier: "m2") == nil)
            let missing = try Self.call(
                api, "GET", "/inApps/v1/subscriptions/extend/mass/\(SampleCatalog.subscription)/m2", token: token)
            #expect(missing.status == 404 && missing.json["errorCode"] as? Int == 4_040_009)
        }
    }
}
