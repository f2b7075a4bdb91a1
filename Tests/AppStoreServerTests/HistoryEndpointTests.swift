import Crypto
import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

@testable import AppStoreServer

/// Get Transaction History and Get Refund History: pages of 20 chained by `revision`, Apple's
/// filters, Apple's errors, against the transactions listed directly from the ledger.
@Suite struct HistoryEndpointTests {
    let maker = TokenMaker()
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// Walks every page of `path` with `query`; returns the transaction ids in order and the
    /// pages' sizes.
    static func walk(
        _ api: AppStoreServerAPI, _ path: String, query: String, token: String
    ) throws -> (ids: [UInt64], pages: [Int]) {
        var ids: [UInt64] = []
        var pages: [Int] = []
        var revision: String?
        for _ in 0..<200 {
            let full = [query.isEmpty ? nil : query, revision.map { "revision=" + $0 }].compactMap { $0 }
                .joined(separator: "&")
            let response = api.respond(to: APIRequest(method: "GET", path: path, query: full, authorization: token))
            guard response.status == 200, let json = response.json,
                let body = try JSONSerialization.jsonObject(with: json) as? [String: Any],
                let signed = body["signedTransactions"] as? [String], let hasMore = body["hasMore"] as? Bool
            else { throw APIFailure(status: response.status, path: path + "?" + full) }
            pages.append(signed.count)
            ids += try signed.map { jws in
                let payload = try JSONSerialization.jsonObject(with: try JWS(compactSerialization: jws).payload)
                return UInt64((payload as? [String: Any])?["transactionId"] as? String ?? "") ?? 0
            }
            revision = body["revision"] as? String
            if !hasMore { return (ids, pages) }
        }
        throw APIFailure(status: 0, path: "more than 200 pages")
    }

    struct APIFailure: Error {
        let status: Int
        let path: String
    }

    /// A ledger with a seeded history: purchases of every product type, renewals, refunds and
    /// finished consumables.
    func withHistory(seed: UInt64, _ body: (AppStoreServerAPI, Ledger, String) async throws -> Void) async throws {
        try await withTemporaryLedger(configuration: LedgerConfiguration(clock: .fixed(Self.now))) { ledger in
            try ledger.addAPIKey(keyID: maker.keyID, issuerID: maker.issuerID, publicKey: maker.key.publicKey)
            let queue = try PaymentQueue(ledger: ledger)
            let session = StoreTestSession(queue: queue)
            try session.update { $0.bundleID = maker.bundleID }
            var random = SplitMix64(seed: seed)
            let products = [
                SampleCatalog.consumable, SampleCatalog.nonConsumable, SampleCatalog.nonRenewing,
                SampleCatalog.subscription,
            ]
            for _ in 0..<(30 + Int(random.next() % 30)) {
                switch random.next() % 6 {
                case 0, 1, 2:
                    try await session.buyProduct(Payment(productID: products[Int(random.next() % 4)]))
                case 3:
                    try await session.advanceClock(by: Double(1 + random.next() % 40) * 86_400)
                case 4:
                    let refundable = try ledger.allTransactions().filter {
                        $0.state == .purchased && $0.revocationDate == nil
                    }
                    if !refundable.isEmpty {
                        try await session.refundTransaction(
                            refundable[Int(random.next() % UInt64(refundable.count))].id)
                    }
                default:
                    let open = try ledger.allTransactions().filter { !$0.isFinished && $0.state == .purchased }
                    if !open.isEmpty { try await queue.finish(open[Int(random.next() % UInt64(open.count))].id) }
                }
            }
            let api = AppStoreServerAPI(ledger: ledger, now: { Self.now })
            try await body(api, ledger, try maker.authorization(claims: maker.claims(now: Self.now)))
        }
    }

    /// The purchased transactions in the server's order: by when each was last modified (its
    /// last event's sequence), then by id.
    static func serverOrder(_ ledger: Ledger) throws -> [PaymentTransaction] {
        let modified = { (transaction: PaymentTransaction) in
            try ledger.events(of: transaction.id).map(\.sequence).max() ?? 0
        }
        return try ledger.allTransactions().filter { $0.state == .purchased }
            .map { (try modified($0), $0) }
            .sorted { ($0.0, $0.1.id) < ($1.0, $1.1.id) }.map(\.1)
    }

    @Test(arguments: 0..<6)
    func pagesChainedByRevisionListWhatTheFiltersSelect(seed: UInt64) async throws {
        try await withHistory(seed: 0xA11 + seed) { api, ledger, token in
            let all = try Self.serverOrder(ledger)
            let first = try #require(all.first).id
            var random = SplitMix64(seed: seed)
            for _ in 0..<12 {
                var query: [String] = []
                var expected = all
                if random.next() % 2 == 0, let pick = all.randomElement(using: &random) {
                    let start = pick.purchaseDate.ledgerMilliseconds
                    query.append("startDate=\(start)")
                    expected = expected.filter { $0.purchaseDate.ledgerMilliseconds >= start }
                }
                if random.next() % 2 == 0, let pick = all.randomElement(using: &random) {
                    let end = pick.purchaseDate.ledgerMilliseconds + 1
                    if query.isEmpty || expected.first.map({ $0.purchaseDate.ledgerMilliseconds <= end }) == true {
                        query.append("endDate=\(end)")
                        expected = expected.filter { $0.purchaseDate.ledgerMilliseconds < end }
                    }
                }
                if random.next() % 3 == 0 {
                    let types = AppStoreServerAPI.productTypes.filter { _ in random.next() % 2 == 0 }
                    for name in types.keys.sorted() { query.append("productType=\(name)") }
                    if !types.isEmpty { expected = expected.filter { Set(types.values).contains($0.productType) } }
                }
                if random.next() % 3 == 0 {
                    query.append("revoked=\(random.next() % 2 == 0)")
                    let revoked = query.last == "revoked=true"
                    expected = expected.filter { ($0.revocationDate != nil) == revoked }
                }
                if random.next() % 2 == 0 {
                    query.append("sort=DESCENDING")
                    expected.reverse()
                }
                let text = query.joined(separator: "&")
                let (ids, pages) = try Self.walk(api, "/inApps/v2/history/\(first)", query: text, token: token)
                #expect(ids == expected.map(\.id), "\(text)")
                #expect(pages.dropLast().allSatisfy { $0 == 20 } && (pages.last ?? 0) <= 20, "\(text): \(pages)")
            }
            let refunds = try Self.walk(api, "/inApps/v2/refund/lookup/\(first)", query: "", token: token)
            #expect(refunds.ids == all.filter { $0.revocationDate != nil }.map(\.id))
            let v1 = try Self.walk(api, "/inApps/v1/history/\(first)", query: "", token: token)
            #expect(
                v1.ids
                    == all.filter { !($0.productType == .consumable && $0.isFinished && $0.revocationDate == nil) }.map(
                        \.id))
        }
    }

    @Test func aRevisionAsksOnlyForWhatCameAfterIt() async throws {
        try await withHistory(seed: 7) { api, ledger, token in
            let first = try #require(try Self.serverOrder(ledger).first).id
            let path = "/inApps/v2/history/\(first)"
            let response = api.respond(to: APIRequest(method: "GET", path: path, authorization: token))
            let json = try #require(response.json)
            let body = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
            #expect(body["bundleId"] as? String == maker.bundleID && body["environment"] as? String == "Xcode")
            let revision = try #require(body["revision"] as? String)
            let before = try Self.walk(api, path, query: "revision=\(revision)", token: token).ids
            try await StoreTestSession(ledger: ledger).buyProduct(Payment(productID: SampleCatalog.consumable))
            let after = try Self.walk(api, path, query: "revision=\(revision)", token: token).ids
            #expect(after.count == before.count + 1 && after.dropLast() == before[...])
        }
    }

    /// Apple's revision sync: a server that read the history to its end and kept the last
    /// revision asks again with it and gets what was modified since, a refund and an upgrade
    /// made later included (the history is ordered by the date a transaction was last
    /// modified), and nothing else.
    @Test func aRevisionSyncSeesLaterRefundsAndUpgrades() async throws {
        try await maker.withServedLedger(now: Self.now) { api, ledger, session, token in
            for _ in 0..<25 { try await session.buyProduct(Payment(productID: SampleCatalog.consumable)) }
            let basic = try await session.buyProduct(Payment(productID: SampleCatalog.basicSubscription))
            let path = "/inApps/v2/history/\(basic.id)"
            func sync(_ revision: String?) throws -> (ids: [UInt64], revision: String) {
                var ids: [UInt64] = []
                var next = revision
                for _ in 0..<200 {
                    let query = next.map { "revision=" + $0 } ?? ""
                    let response = api.respond(
                        to: APIRequest(method: "GET", path: path, query: query, authorization: token))
                    let json = try #require(response.json)
                    let body = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
                    ids += try (body["signedTransactions"] as? [String] ?? []).map { jws in
                        let payload = try JSONSerialization.jsonObject(with: try JWS(compactSerialization: jws).payload)
                        return UInt64((payload as? [String: Any])?["transactionId"] as? String ?? "") ?? 0
                    }
                    next = try #require(body["revision"] as? String)
                    if body["hasMore"] as? Bool != true { break }
                }
                return (ids, try #require(next))
            }
            let first = try sync(nil)
            #expect(Set(first.ids) == Set(try Self.serverOrder(ledger).map(\.id)))
            #expect(try sync(first.revision).ids.isEmpty, "nothing modified since")
            // The store's clock stands still (fixed): the same millisecond as what was read.
            let consumable = try #require(try Self.serverOrder(ledger).first { $0.productType == .consumable })
            _ = try await session.refundTransaction(consumable.id)
            let pro = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))  // upgrades basic
            let since = try sync(first.revision).ids
            #expect(since == [consumable.id, basic.id, pro.id], "the refund, the upgraded period, the upgrade")
        }
    }

    @Test func badFiltersGetApplesErrors() async throws {
        try await withHistory(seed: 3) { api, ledger, token in
            let first = try #require(try Self.serverOrder(ledger).first).id
            let cases: [(String, Int)] = [
                ("revision=nonsense", 4_000_005), ("revision=1.2.3", 4_000_005), ("revision=5.-1", 4_000_005),
                ("startDate=x", 4_000_015), ("startDate=-5", 4_000_015), ("endDate=1e9", 4_000_016),
                ("startDate=20&endDate=10", 4_000_013), ("sort=UP", 4_000_021),
                ("sort=ASCENDING&sort=DESCENDING", 4_000_021),
                ("productType=GAME", 4_000_022), ("revoked=yes", 4_000_030), ("inAppOwnershipType=LENT", 4_000_026),
                ("productId=", 4_000_023), ("subscriptionGroupIdentifier=", 4_000_024), ("a=%zz", 4_000_000),
            ]
            for (query, code) in cases {
                let response = api.respond(
                    to: APIRequest(
                        method: "GET", path: "/inApps/v2/history/\(first)", query: query, authorization: token))
                let json = try #require(response.json, "\(query)")
                let body = try JSONSerialization.jsonObject(with: json) as? [String: Any]
                #expect(response.status == 400 && body?["errorCode"] as? Int == code, "\(query)")
            }
            let shared = try Self.walk(
                api, "/inApps/v2/history/\(first)", query: "inAppOwnershipType=FAMILY_SHARED", token: token)
            #expect(shared.ids.isEmpty)
            let unknown = api.respond(
                to: APIRequest(method: "GET", path: "/inApps/v2/history/999999", authorization: token))
            #expect(unknown.status == 404)
        }
    }
}
