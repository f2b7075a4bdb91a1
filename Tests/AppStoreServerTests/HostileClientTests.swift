import Crypto
import Foundation
import LedgerLab
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import Testing

@testable import AppStoreServer

#if canImport(FoundationNetworking)
import FoundationNetworking
import StoreTesting
#endif

/// `ledger serve`'s server under clients that misbehave, over real sockets: a body is never read
/// for a request refused whatever its body, idle and slow connections are closed, connections
/// are bounded, and other clients are answered meanwhile; identifiers with a NUL are refused.
@Suite(.serialized) struct HostileClientTests {
    let maker = TokenMaker()

    /// A served ledger of the sample catalog with the maker's key, at `limits`; `body` gets the
    /// port and a valid `Authorization` header.
    func withServer(
        limits: AppStoreHTTPServer.Limits = Self.shortLimits, _ body: (Ledger, Int, String) async throws -> Void
    ) async throws {
        try await withTemporaryLedger { ledger in
            try ledger.addAPIKey(keyID: maker.keyID, issuerID: maker.issuerID, publicKey: maker.key.publicKey)
            try StoreTestSession(ledger: ledger).update { $0.bundleID = maker.bundleID }
            let (ports, bound) = AsyncStream<Int>.makeStream()
            let server = AppStoreHTTPServer(ledger: ledger, port: 0, sendsNotifications: false, limits: limits)
            let serving = Task { try await server.run { _, port in bound.yield(port) } }
            var iterator = ports.makeAsyncIterator()
            let port = try #require(await iterator.next())
            do {
                try await body(ledger, port, try maker.authorization(claims: maker.claims(now: Date())))
            } catch {
                serving.cancel()
                _ = try? await serving.value
                throw error
            }
            serving.cancel()
            _ = try? await serving.value
        }
    }

    static var shortLimits: AppStoreHTTPServer.Limits {
        var limits = AppStoreHTTPServer.Limits()
        limits.idleTimeout = .seconds(1)
        limits.bodyTimeout = .milliseconds(1_500)
        return limits
    }

    /// A real client's request: the status and the body.
    static func send(
        _ method: String, _ path: String, port: Int, authorization: String?, body: String? = nil
    ) async throws -> (status: Int, json: [String: Any]) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        request.timeoutInterval = 10
        if let authorization { request.setValue(authorization, forHTTPHeaderField: "Authorization") }
        if let body { request.httpBody = Data(body.utf8) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let json = (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, json)
    }

    // MARK: - Memory and connections

    /// The token is checked before the body is read: a client without one that announces 1 MiB
    /// and sends none of it gets its 401 at once (it used to wait for the whole body first).
    @Test func aRequestWithoutAValidTokenIsRefusedBeforeItsBody() async throws {
        var limits = Self.shortLimits
        limits.bodyTimeout = .seconds(30)
        limits.idleTimeout = .seconds(30)
        try await withServer(limits: limits) { _, port, _ in
            for authorization in ["", "Authorization: Bearer not.a.token\r\n"] {
                let client = try RawClient(port: port)
                try client.send(
                    "POST /inApps/v1/notifications/history HTTP/1.1\r\nHost: x\r\n\(authorization)"
                        + "Content-Type: application/json\r\nContent-Length: 1048576\r\n\r\n")
                // Waiting for the body would take its 30 s timeout: an answer within half of it
                // came before the body (under the suite's parallel load an answer has taken 5.2 s).
                let started = ContinuousClock.now
                let answer = await client.received(upTo: 12, within: .seconds(15))
                #expect(answer.hasPrefix("HTTP/1.1 401"), "\(answer)")
                #expect(ContinuousClock.now - started < .seconds(15))
            }
        }
    }

    /// A connection that sends nothing, or its head a byte at a time, is closed after the idle
    /// timeout; one whose body trickles is closed at the body's deadline, although each byte
    /// is activity.
    @Test func idleAndSlowConnectionsAreClosed() async throws {
        try await withServer { _, port, token in
            let idle = try RawClient(port: port)
            #expect(await idle.closed(within: .seconds(5)), "an idle connection is closed")

            let slowHead = try RawClient(port: port)
            let head =
                "GET /inApps/v1/transactions/1 HTTP/1.1\r\nHost: x\r\nX-Padding: " + String(repeating: "a", count: 40)
            var closed = false
            for byte in head.utf8 where !closed {
                closed = (try? slowHead.send(String(UnicodeScalar(byte)))) == nil
                try await Task.sleep(for: .milliseconds(100))
                closed = closed || slowHead.isClosed
            }
            let closedInTime = closed ? true : await slowHead.closed(within: .seconds(3))
            #expect(closedInTime, "a head sent a byte at a time is closed")

            let slowBody = try RawClient(port: port)
            try slowBody.send(
                "PUT /inApps/v1/transactions/1/appAccountToken HTTP/1.1\r\nHost: x\r\nAuthorization: \(token)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n")
            let started = ContinuousClock.now
            while !slowBody.isClosed, ContinuousClock.now - started < .seconds(10) {
                _ = try? slowBody.send(" ")
                try await Task.sleep(for: .milliseconds(300))
            }
            let elapsed = ContinuousClock.now - started
            #expect(slowBody.isClosed && elapsed < .seconds(8), "a trickling body is cut at its deadline: \(elapsed)")
        }
    }

    /// At most `maximumConnections` are open: the next waits to be accepted, and is answered as
    /// soon as one closes. Other clients are answered while hostile ones hold connections.
    @Test func connectionsAreBoundedAndOthersAreAnswered() async throws {
        var limits = AppStoreHTTPServer.Limits()
        limits.maximumConnections = 3
        limits.idleTimeout = .seconds(30)
        try await withServer(limits: limits) { ledger, port, token in
            let purchased = try await PaymentQueue(ledger: ledger).add(Payment(productID: SampleCatalog.consumable))
            let holders = try (0..<3).map { _ in try RawClient(port: port) }
            try await Task.sleep(for: .milliseconds(200))
            let waiting = try RawClient(port: port)
            try waiting.send(
                "GET /inApps/v1/transactions/\(purchased.id) HTTP/1.1\r\nHost: x\r\nAuthorization: \(token)\r\n\r\n")
            #expect(await waiting.received(upTo: 64, within: .milliseconds(800)).isEmpty, "not accepted past the bound")
            holders[0].close()
            let answer = await waiting.received(upTo: 64, within: .seconds(5))
            #expect(answer.hasPrefix("HTTP/1.1 200"), "accepted once one closed: \(answer)")
        }
        var many = AppStoreHTTPServer.Limits()
        many.idleTimeout = .seconds(30)
        try await withServer(limits: many) { ledger, port, token in
            let purchased = try await PaymentQueue(ledger: ledger).add(Payment(productID: SampleCatalog.consumable))
            let hostile = try (0..<100).map { _ in try RawClient(port: port) }
            for client in hostile { try client.send("POST /inApps/v1/notifications/history HTTP/1.1\r\nHost: x\r\n") }
            let answered = try await Self.send(
                "GET", "/inApps/v1/transactions/\(purchased.id)", port: port, authorization: token)
            #expect(answered.status == 200, "answered beside 100 half-open connections")
            for client in hostile { client.close() }
        }
    }

    /// A transfer coding the server does not know is 501, not a body too large; a client that
    /// waits for `100 Continue` before its body gets one, then its answer.
    @Test func unknownTransferCodingsAndExpectContinue() async throws {
        try await withServer { ledger, port, token in
            let coded = try RawClient(port: port)
            try coded.send(
                "POST /inApps/v1/notifications/history HTTP/1.1\r\nHost: x\r\nAuthorization: \(token)\r\n"
                    + "Transfer-Encoding: xchunked\r\n\r\n")
            let answer = await coded.received(upTo: 12, within: .seconds(5))
            #expect(answer == "HTTP/1.1 501", "\(answer)")

            let bought = try await PaymentQueue(ledger: ledger).add(Payment(productID: SampleCatalog.consumable))
            let body = #"{"appAccountToken":"\#(UUID().uuidString)"}"#
            let waiting = try RawClient(port: port)
            try waiting.send(
                "PUT /inApps/v1/transactions/\(bought.id)/appAccountToken HTTP/1.1\r\nHost: x\r\n"
                    + "Authorization: \(token)\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n"
                    + "Content-Length: \(body.utf8.count)\r\n\r\n")
            let interim = await waiting.received(upTo: 25, within: .seconds(5))
            #expect(interim == "HTTP/1.1 100 Continue\r\n\r\n", "\(interim)")
            try waiting.send(body)
            let final = await waiting.received(upTo: 12, within: .seconds(5))
            #expect(final == "HTTP/1.1 200", "\(final)")
        }
    }

    /// A body with a key given twice is refused (Foundation took the first value, the catalog
    /// reader the last): nothing is changed.
    @Test func aBodyWithARepeatedKeyIsRefused() async throws {
        try await withServer { ledger, port, token in
            let bought = try await PaymentQueue(ledger: ledger).add(Payment(productID: SampleCatalog.consumable))
            let answer = try await Self.send(
                "PUT", "/inApps/v1/transactions/\(bought.id)/appAccountToken", port: port, authorization: token,
                body: #"{"appAccountToken":"\#(UUID().uuidString)","appAccountToken":""}"#)
            #expect(answer.status == 400 && answer.json["errorCode"] as? Int == 4_000_000, "\(answer)")
            #expect(try ledger.serverAppAccountToken(originalTransactionID: bought.id) == nil, "nothing set")
        }
    }

    /// A revoked key made valid again past its trigger (dropped, the row edited, put back) is
    /// not accepted: the keys' table must check, its seal included, for any key to be.
    @Test func aKeyRevivedBehindTheLedgersBackIsNotAccepted() async throws {
        try await withServer { ledger, port, token in
            let bought = try await PaymentQueue(ledger: ledger).add(Payment(productID: SampleCatalog.consumable))
            let path = "/inApps/v1/transactions/\(bought.id)"
            #expect(try await Self.send("GET", path, port: port, authorization: token).status == 200)
            try ledger.revokeAPIKey(maker.keyID)
            #expect(try await Self.send("GET", path, port: port, authorization: token).status == 401)
            let ledgerPath = ledger.path
            let status = try await onItsOwnThread {
                try runPython(
                    """
                    import sqlite3
                    db = sqlite3.connect('\(ledgerPath)', isolation_level=None)
                    trigger = db.execute("SELECT sql FROM sqlite_master WHERE name = 'api_keys_stay_revoked'").fetchone()[0]
                    db.executescript("DROP TRIGGER api_keys_stay_revoked; UPDATE api_keys SET revoked_at = NULL; " + trigger + ";")
                    db.close()
                    """)
            }
            #expect(status == 0)
            #expect(try ledger.apiKey(maker.keyID)?.revokedAt == nil, "the row says valid again")
            let revived = try await Self.send("GET", path, port: port, authorization: token)
            #expect(revived.status == 500, "\(revived)")
        }
    }

    // MARK: - NUL

    /// A NUL ends text where SQLite and Foundation's C parsers read it: an identifier holding one
    /// is refused, never taken for the part before it.
    @Test func identifiersWithANULAreRefused() async throws {
        try await withServer { ledger, port, token in
            let session = StoreTestSession(ledger: ledger)
            let subscribed = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.consumable))
            // A key id of the key's own id, a NUL, and junk.
            let forged = try maker.authorization(
                claims: maker.claims(now: Date()),
                header: ["alg": "ES256", "kid": maker.keyID + "\u{0}junk", "typ": "JWT"])
            #expect(
                try await Self.send("GET", "/inApps/v1/transactions/\(bought.id)", port: port, authorization: forged)
                    .status
                    == 401)
            // Two request identifiers that share the part before the NUL.
            for id in ["N\\u0000one", "N\\u0000two"] {
                let answer = try await Self.send(
                    "PUT", "/inApps/v1/subscriptions/extend/\(subscribed.originalID)", port: port, authorization: token,
                    body: #"{"extendByDays":3,"extendReasonCode":1,"requestIdentifier":"\#(id)"}"#)
                #expect(answer.status == 400 && answer.json["errorCode"] as? Int == 4_000_011, "\(id): \(answer)")
            }
            #expect(try ledger.renewalExtensions(originalTransactionID: subscribed.originalID).isEmpty)
            // An app account token with a NUL and junk after the UUID.
            let token36 = UUID().uuidString
            let setToken = try await Self.send(
                "PUT", "/inApps/v1/transactions/\(bought.id)/appAccountToken", port: port, authorization: token,
                body: #"{"appAccountToken":"\#(token36)\u0000junk"}"#)
            #expect(setToken.status == 400 && setToken.json["errorCode"] as? Int == 4_000_183, "\(setToken)")
            #expect(try ledger.serverAppAccountToken(originalTransactionID: bought.id) == nil, "nothing set")
            // A history filter with %00: refused, not matched on the part before it.
            let filtered = try await Self.send(
                "GET", "/inApps/v2/history/\(bought.id)?productId=\(SampleCatalog.consumable)%00junk", port: port,
                authorization: token)
            #expect(filtered.status == 400 && filtered.json["errorCode"] as? Int == 4_000_000, "\(filtered)")
        }
    }
}
