import Crypto
import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

@testable import AppStoreServer

/// The App Store Server API without HTTP: Apple's paths, bodies, codes and statuses.
@Suite struct AppStoreServerAPITests {
    let maker = TokenMaker()
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// A ledger with the sample catalog, the maker's key, and `body`'s API.
    func withAPI(_ body: (AppStoreServerAPI, Ledger, String) async throws -> Void) async throws {
        try await withTemporaryLedger { ledger in
            try ledger.addAPIKey(keyID: maker.keyID, issuerID: maker.issuerID, publicKey: maker.key.publicKey)
            try StoreTestSession(ledger: ledger).update { $0.bundleID = maker.bundleID }
            let api = AppStoreServerAPI(ledger: ledger, now: { Self.now })
            try await body(api, ledger, try maker.authorization(claims: maker.claims(now: Self.now)))
        }
    }

    static func errorCode(_ response: APIResponse) throws -> Int? {
        guard let json = response.json else { return nil }
        return (try JSONSerialization.jsonObject(with: json) as? [String: Any])?["errorCode"] as? Int
    }

    @Test func transactionInfoIsTheTransactionSignedAsTheStoreSigns() async throws {
        try await withAPI { api, ledger, token in
            let queue = try PaymentQueue(ledger: ledger)
            let bought = try await queue.add(Payment(productID: SampleCatalog.nonConsumable))
            let response = api.respond(
                to: APIRequest(method: "GET", path: "/inApps/v1/transactions/\(bought.id)", authorization: token))
            #expect(response.status == 200)
            let json = try #require(response.json)
            let body = try #require(try JSONSerialization.jsonObject(with: json) as? [String: String])
            #expect(Array(body.keys) == ["signedTransactionInfo"])
            let jws = try JWS(compactSerialization: try #require(body["signedTransactionInfo"]))
            try jws.verify(trustingRoot: try ledger.signingCertificates().root)
            let payload = try #require(try JSONSerialization.jsonObject(with: jws.payload) as? [String: Any])
            #expect(payload["transactionId"] as? String == "\(bought.id)")
            #expect(payload["bundleId"] as? String == maker.bundleID)
        }
    }

    @Test func appTransactionInfoAnswersForTheAppTransactionOrAnyKnownTransaction() async throws {
        try await withAPI { api, ledger, token in
            let queue = try PaymentQueue(ledger: ledger)
            let bought = try await queue.add(Payment(productID: SampleCatalog.nonConsumable))
            let failed = try await queue.add(
                Payment(productID: SampleCatalog.consumable, simulatedOutcome: .failed(.paymentInvalid)))
            let appTransactionID = try ledger.appTransactionID()
            func get(_ id: String) -> APIResponse {
                api.respond(
                    to: APIRequest(
                        method: "GET", path: "/inApps/v1/transactions/appTransactions/\(id)", authorization: token))
            }
            for id in ["\(bought.id)", appTransactionID] {
                let response = get(id)
                #expect(response.status == 200, "\(id)")
                let json = try #require(response.json)
                let body = try #require(try JSONSerialization.jsonObject(with: json) as? [String: String])
                #expect(Array(body.keys) == ["signedAppTransactionInfo"])
                let jws = try JWS(compactSerialization: try #require(body["signedAppTransactionInfo"]))
                try jws.verify(trustingRoot: try ledger.signingCertificates().root)
                let payload = try #require(try JSONSerialization.jsonObject(with: jws.payload) as? [String: Any])
                #expect(payload["appTransactionId"] as? String == appTransactionID)
                #expect(payload["bundleId"] as? String == maker.bundleID)
            }
            for id in ["\(failed.id)", "999", "0"] {
                let response = get(id)
                let code = try Self.errorCode(response)
                #expect(response.status == 404 && code == 4_040_010, "\(id)")
            }
            for id in ["abc", "-1", "99999999999999999999"] {
                let response = get(id)
                let code = try Self.errorCode(response)
                #expect(response.status == 400 && code == 4_000_006, "\(id)")
            }
            let post = api.respond(
                to: APIRequest(method: "POST", path: "/inApps/v1/transactions/appTransactions/1", authorization: token))
            #expect(post.status == 405)
        }
    }

    /// Seeded: the Transaction Info body written without an encoder is the encoder's, byte for
    /// byte, for compact JWSs of any length.
    @Test func theTransactionInfoBodyIsTheEncodersBytes() throws {
        var random = SplitMix64(seed: 25)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        for _ in 0..<200 {
            let parts = (0..<3).map { _ in
                String(
                    (0..<Int.random(in: 0...3_000, using: &random)).map { _ in alphabet.randomElement(using: &random)! }
                )
            }
            let body = ResponseBody.TransactionInfo(signedTransactionInfo: parts.joined(separator: "."))
            #expect(body.json == (try ResponseBody.encoded(body)))
        }
    }

    /// A row edited outside the ledger (its history does not vouch for it) is never signed: the
    /// server answers 500, and the rows the history vouches for are answered as before, whether
    /// the token was verified before or not.
    @Test(
        .enabled(if: NotificationSenderTests.hasPython, "needs python3 to edit the file behind the ledger's back"),
        arguments: [false, true])
    func anEditedRowIsNotSigned(tokenVerifiedBefore: Bool) async throws {
        try await withAPI { api, ledger, token in
            let queue = try PaymentQueue(ledger: ledger)
            let edited = try await queue.add(Payment(productID: SampleCatalog.nonConsumable))
            let untouched = try await queue.add(Payment(productID: SampleCatalog.consumable))
            if tokenVerifiedBefore {
                // The token is then known: the key, the settings and the row are read in one
                // snapshot, and the row's failure still answers after the token held.
                let first = api.respond(
                    to: APIRequest(method: "GET", path: "/inApps/v1/transactions/\(untouched.id)", authorization: token)
                )
                #expect(first.status == 200)
            }
            let editor = Process()
            editor.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            editor.arguments = [
                "-c",
                "import sqlite3; db = sqlite3.connect('\(ledger.path)'); "
                    + "db.execute(\"UPDATE transactions SET storefront = 'FRA' WHERE id = \(edited.id)\"); db.commit()",
            ]
            try editor.run()
            editor.waitUntilExit()
            #expect(editor.terminationStatus == 0)
            let refused = api.respond(
                to: APIRequest(method: "GET", path: "/inApps/v1/transactions/\(edited.id)", authorization: token))
            #expect(try refused.status == 500 && Self.errorCode(refused) == 5_000_000)
            let answered = api.respond(
                to: APIRequest(method: "GET", path: "/inApps/v1/transactions/\(untouched.id)", authorization: token))
            #expect(answered.status == 200)
        }
    }

    @Test func whatTheStoreDoesNotSignIsNotFound() async throws {
        try await withAPI { api, ledger, token in
            let queue = try PaymentQueue(ledger: ledger)
            let failed = try await queue.add(
                Payment(productID: SampleCatalog.consumable, simulatedOutcome: .failed(.paymentInvalid)))
            let deferred = try await queue.add(
                Payment(productID: SampleCatalog.consumable, simulatedOutcome: .deferred))
            for id in [failed.id, deferred.id, 999, 0, UInt64(Int64.max)] {
                let response = api.respond(
                    to: APIRequest(method: "GET", path: "/inApps/v1/transactions/\(id)", authorization: token))
                let code = try Self.errorCode(response)
                #expect(response.status == 404 && code == 4_040_010, "\(id)")
            }
        }
    }

    /// Seeded: identifiers that are not 1 to 19 decimal digits within `Int64` get Apple's
    /// `InvalidTransactionIdError`.
    @Test(arguments: 0..<4)
    func malformedIdentifiersAreInvalid(seed: UInt64) async throws {
        var random = SplitMix64(seed: 0x1D + seed)
        let alphabet = Array("0123456789abcXYZ-_.%~+é")
        try await withAPI { api, _, token in
            var ids = ["9223372036854775808", "99999999999999999999", "-1", "+1", "1.0", "%31"]
            for _ in 0..<40 {
                let length = 1 + Int(random.next() % 25)
                ids.append(String((0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }))
            }
            for id in ids {
                let valid =
                    (1...19).contains(id.count) && id.allSatisfy(\.isASCII) && id.allSatisfy(\.isNumber)
                    && Int64(id) != nil
                let response = api.respond(
                    to: APIRequest(method: "GET", path: "/inApps/v1/transactions/\(id)", authorization: token))
                if valid {
                    #expect(response.status == 404, "\(id)")
                } else {
                    let code = try Self.errorCode(response)
                    #expect(response.status == 400 && code == 4_000_006, "\(id)")
                }
            }
        }
    }

    @Test func pathsMethodsAndTokensAreCheckedInThatOrder() async throws {
        try await withAPI { api, _, token in
            let cases: [(APIRequest, Int)] = [
                (APIRequest(method: "GET", path: "/inApps/v1/transactions/1", authorization: nil), 401),
                (APIRequest(method: "GET", path: "/inApps/v1/transactions/1", authorization: "Bearer x"), 401),
                (APIRequest(method: "GET", path: "/inApps/v1/nothing", authorization: token), 404),
                (APIRequest(method: "GET", path: "/inApps/v1/transactions/1/2", authorization: token), 404),
                (APIRequest(method: "GET", path: "inApps/v1/transactions/1", authorization: token), 404),
                (APIRequest(method: "POST", path: "/inApps/v1/transactions/1", authorization: token), 405),
                (APIRequest(method: "DELETE", path: "/inApps/v1/transactions/1", authorization: nil), 405),
            ]
            for (request, status) in cases {
                let response = api.respond(to: request)
                #expect(response.status == status, "\(request.method) \(request.path)")
                #expect(response.json == nil, "\(request.method) \(request.path) has no body")
            }
        }
    }

    @Test func aRevokedKeysTokensAreRefused() async throws {
        try await withAPI { api, ledger, token in
            let request = APIRequest(method: "GET", path: "/inApps/v1/transactions/1", authorization: token)
            #expect(api.respond(to: request).status == 404)
            try ledger.revokeAPIKey(maker.keyID)
            #expect(api.respond(to: request).status == 401)
        }
    }
}
