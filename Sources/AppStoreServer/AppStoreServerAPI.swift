public import Foundation
import Logging
public import SimulatedStore
import Synchronization

/// One request to the App Store Server API, as the HTTP server hands it over.
public struct APIRequest: Sendable {
    /// The HTTP method: `GET`, `POST`, `PUT`.
    public var method: String
    /// The path, without the query: `/inApps/v1/transactions/42`.
    public var path: String
    /// The `Authorization` header: `Bearer <JWT>`.
    public var authorization: String?
    /// The query, after `?`, as sent (percent-encoded); `nil` without one.
    public var query: String?
    /// The body (empty for `GET`).
    public var body: Data

    /// A request of `method` to `path` (with its `query`), carrying `authorization` and `body`.
    public init(method: String, path: String, query: String? = nil, authorization: String?, body: Data = Data()) {
        self.method = method
        self.path = path
        self.query = query
        self.authorization = authorization
        self.body = body
    }
}

/// An answer of the App Store Server API: a status and, for JSON answers, the body (sent with
/// `Content-Type: application/json`, exactly: Apple's Python client reads error codes only then).
public struct APIResponse: Sendable, Equatable {
    /// The HTTP status: 200, 400, 401, 404, 405, 413 or 500.
    public var status: Int
    /// The JSON body; `nil` for an answer without one.
    public var json: Data?
}

/// The App Store Server API over a ledger, as the App Store answers it (Apple's paths, JSON
/// bodies, error codes and statuses), without HTTP: `AppStoreHTTPServer` puts it on a port.
///
/// Every request needs a bearer token signed with one of the ledger's API keys
/// (`Ledger.addAPIKey`; `BearerToken` says what is checked). The endpoints it answers:
/// - `GET /inApps/v1/transactions/{transactionId}` (Get Transaction Info): the transaction
///   signed as the store signs (`Ledger.signedTransaction`), for any purchased or restored
///   transaction of the ledger; `TransactionIdNotFoundError` for the others.
/// - `GET /inApps/v1/transactions/appTransactions/{transactionId}` (Get App Transaction Info):
///   the app transaction signed as the store signs it (`Ledger.signedAppTransaction`), for the
///   app transaction's id or any purchased or restored transaction's; `TransactionIdNotFoundError`
///   for another id.
/// - `GET /inApps/v2/history/{transactionId}` (Get Transaction History, and `v1`, which
///   leaves out finished consumables): the purchased transactions (`ServerHistoryQuery`), 20 a
///   page, with Apple's filters (`startDate`, `endDate`, `productId`, `productType`, `sort`,
///   `subscriptionGroupIdentifier`, `inAppOwnershipType`, `revoked`) and `revision`.
/// - `GET /inApps/v2/refund/lookup/{transactionId}` (Get Refund History): the refunded ones.
/// - `GET /inApps/v1/subscriptions/{transactionId}` (Get All Subscription Statuses): each group
///   bought, with its latest transaction and renewal info and Apple's status code (1 active, 2
///   expired, 3 billing retry, 4 grace period, 5 revoked), filtered by `status`.
///
/// - `POST /inApps/v1/notifications/test` (Request a Test Notification), `GET
///   /inApps/v1/notifications/test/{testNotificationToken}` (Get Test Notification Status) and
///   `POST /inApps/v1/notifications/history` (Get Notification History, 20 a page with
///   `paginationToken`): the ledger's outbox of Server Notifications V2 (`NotificationSender`).
/// - `GET /inApps/v1/lookup/{orderId}` (Look Up Order ID, `OrderID`), `PUT
///   /inApps/v1|v2/transactions/consumption/{transactionId}` (Send Consumption Information,
///   kept with the transaction), `PUT /inApps/v1/transactions/{originalTransactionId}/appAccountToken`
///   (Set App Account Token, which the chain is signed with from then on) and `POST
///   /inApps/v1/transactions/{transactionId}/finish` (Finish Transaction: the device stops getting it).
/// - `PUT /inApps/v1/subscriptions/extend/{originalTransactionId}` (Extend a Subscription
///   Renewal Date), `POST /inApps/v1/subscriptions/extend/mass` (for all active subscribers)
///   and `GET /inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}` (its status).
///
/// Any other path is answered 404 without a body, a known path with another method 405.
/// Reading never changes the ledger; a refused request changes nothing.
public struct AppStoreServerAPI: Sendable {
    /// The ledger whose store this API serves: the requests that change the store go to it.
    public let ledger: Ledger
    /// What this request's endpoint reads (and changes): `ledger`, or, for a `GET`, one of the
    /// read-only connections `readers` holds; across every customer (an endpoint about one
    /// customer acts for the one its transaction names, `customerStore(_:)`).
    private(set) var store: Ledger
    /// Read-only connections to the ledger's file that answer `GET` requests in parallel (SQLite
    /// in WAL mode reads beside the writer); `nil`: `ledger` answers everything.
    private var readers: ReaderPool?
    /// Real time, for the tokens' expiry (tests inject theirs).
    let now: @Sendable () -> Date
    /// The tokens verified already (`BearerToken.check`).
    private let verifiedTokens = VerifiedTokens()

    /// The longest body a request may carry: 1 MiB (Apple's request bodies are a few KB).
    public static let maximumBodySize = 1 << 20

    /// The API of `ledger`'s store; tokens expire by this machine's clock.
    public init(ledger: Ledger) {
        self.init(ledger: ledger, now: { Date() })
    }

    init(ledger: Ledger, now: @escaping @Sendable () -> Date) {
        self.ledger = ledger
        self.store = ledger.acrossCustomers
        self.now = now
    }

    /// This API answering its `GET` requests through `readers`.
    func reading(through readers: ReaderPool) -> AppStoreServerAPI {
        var api = self
        api.readers = readers
        return api
    }

    /// The answer to `request`.
    public func respond(to request: APIRequest) -> APIResponse {
        answerReading(request) ?? answer(request)
    }

    /// The answer to a `GET` request through a read-only connection that no other request is
    /// using, so that answering waits for no lock and no other thread; `nil` for another method,
    /// or when every such connection is busy (`respond(to:)` answers it then).
    func answerReading(_ request: APIRequest) -> APIResponse? {
        guard request.method == "GET", let readers else { return nil }
        return readers.withFreeReader { reader in
            var serving = self
            serving.store = reader.acrossCustomers
            return serving.answer(request)
        }
    }

    private func answer(_ request: APIRequest) -> APIResponse {
        do {
            return try route(request)
        } catch let error as APIError {
            return Self.answer(error)
        } catch {
            // Not the request's fault: the ledger could not be read, or a history could not be
            // vouched for (nothing is signed then). The client gets Apple's 500; the reason goes
            // to the log.
            Self.log.error("\(request.method) \(request.path) answered 500: \(error)")
            return Self.answer(.generalInternal)
        }
    }

    /// Where the server says why it answered 500: standard error, never standard output (which
    /// `ledger serve` keeps for its one line).
    static let log = Logger(label: "ledger-serve") { StreamLogHandler.standardError(label: $0) }

    /// The endpoints, by path pattern (`{}` stands for one path segment) and method.
    private static let endpoints: [(pattern: [Substring], method: String, name: Endpoint)] = [
        (["inApps", "v1", "transactions", "{}"], "GET", .transactionInfo),
        (["inApps", "v1", "transactions", "appTransactions", "{}"], "GET", .appTransactionInfo),
        (["inApps", "v1", "history", "{}"], "GET", .history(.transactionsV1)),
        (["inApps", "v2", "history", "{}"], "GET", .history(.transactionsV2)),
        (["inApps", "v2", "refund", "lookup", "{}"], "GET", .history(.refunds)),
        (["inApps", "v1", "subscriptions", "{}"], "GET", .subscriptionStatuses),
        (["inApps", "v1", "notifications", "test"], "POST", .requestTestNotification),
        (["inApps", "v1", "notifications", "test", "{}"], "GET", .testNotificationStatus),
        (["inApps", "v1", "notifications", "history"], "POST", .notificationHistory),
        (["inApps", "v1", "lookup", "{}"], "GET", .orderLookup),
        (["inApps", "v1", "transactions", "consumption", "{}"], "PUT", .consumption(version: 1)),
        (["inApps", "v2", "transactions", "consumption", "{}"], "PUT", .consumption(version: 2)),
        (["inApps", "v1", "transactions", "{}", "appAccountToken"], "PUT", .appAccountToken),
        (["inApps", "v1", "transactions", "{}", "finish"], "POST", .finishTransaction),
        (["inApps", "v1", "subscriptions", "extend", "mass"], "POST", .massExtension),
        (["inApps", "v1", "subscriptions", "extend", "{}"], "PUT", .extendRenewalDate),
        (["inApps", "v1", "subscriptions", "extend", "mass", "{}", "{}"], "GET", .massExtensionStatus),
    ]

    private enum Endpoint {
        case transactionInfo
        case appTransactionInfo
        case history(HistoryKind)
        case subscriptionStatuses
        case requestTestNotification
        case testNotificationStatus
        case notificationHistory
        case orderLookup
        case consumption(version: Int)
        case appAccountToken
        case finishTransaction
        case extendRenewalDate
        case massExtension
        case massExtensionStatus
    }

    /// The answer to a request whose body has not been read yet, when it is refused whatever its
    /// body: an unknown path (404), another method (405) or a bearer token that does not hold
    /// (401). `nil` when the body is worth reading. The HTTP server asks before it reads a body,
    /// so that a client without a valid token costs no memory for what it sends.
    /// The key is read through a free read-only connection, which waits for no lock; when every
    /// one is busy, `nil`: the body is read (1 MiB at most) and the request answered as any
    /// other, rather than wait for the writer's connection on a thread every connection shares.
    public func refusalBeforeBody(method: String, path: String, authorization: String?) -> APIResponse? {
        let request = APIRequest(method: method, path: path, authorization: authorization)
        let refusal = { (api: AppStoreServerAPI) -> APIResponse? in
            do {
                _ = try api.endpoint(of: request)
                _ = try api.authorize(request) { try api.store.apiKeyAndApp($0, bundleID: $1) }
                return nil
            } catch let error as APIError {
                return Self.answer(error)
            } catch {
                return Self.answer(.generalInternal)
            }
        }
        guard let readers else { return refusal(self) }
        let throughReader = readers.withFreeReader { reader in
            var serving = self
            serving.store = reader.acrossCustomers
            return refusal(serving)
        }
        return throughReader ?? nil
    }

    /// The endpoint `request` calls, with the path's parameters.
    /// - Throws: `APIError.notFound` or `.methodNotAllowed`.
    private func endpoint(of request: APIRequest) throws -> (name: Endpoint, parameters: [String]) {
        let segments = request.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        let matching = Self.endpoints.filter { endpoint in
            endpoint.pattern.count == segments.count
                && zip(endpoint.pattern, segments).allSatisfy { $0 == "{}" || $0 == $1 }
        }
        guard !matching.isEmpty, request.path.hasPrefix("/") else { throw APIError.notFound }
        guard let endpoint = matching.first(where: { $0.method == request.method }) else {
            throw APIError.methodNotAllowed
        }
        return (endpoint.name, zip(endpoint.pattern, segments).filter { $0.0 == "{}" }.map { String($0.1) })
    }

    private func route(_ request: APIRequest) throws -> APIResponse {
        let (endpoint, parameters) = try endpoint(of: request)
        // Get Transaction Info, the call a server makes most, reads once with a token already
        // verified: the key, the settings and the transaction in one snapshot (signed once the
        // token still holds). A token not yet verified (a forged one, say) costs the key's read
        // alone until its signature checks.
        var purchase: ServerPurchase<APIKey>?
        let known = request.authorization.map { verifiedTokens[$0] != nil } ?? false
        // Parsed once; `nil` is the one error it throws, `invalidTransactionID`, answered below.
        let id: UInt64? = if case .transactionInfo = endpoint { try? Self.transactionID(parameters[0]) } else { nil }
        let app = try authorize(request) { keyID, bundleID in
            guard let id, known else { return try store.apiKeyAndApp(keyID, bundleID: bundleID) }
            let read = try store.serverPurchase(id, bundleID: bundleID) { try store.checkedAPIKey($0, keyID) }
            purchase = read
            return (read.key, read.app)
        }
        // Every answer holds only the token's app's data.
        var serving = self
        serving.store = store.serving(app)
        return try serving.dispatch(endpoint, parameters, request, app: app, id: id, purchase: purchase)
    }

    private func dispatch(
        _ endpoint: Endpoint, _ parameters: [String], _ request: APIRequest, app: ServedApp, id: UInt64?,
        purchase: ServerPurchase<APIKey>?
    ) throws -> APIResponse {
        let settings = app.settings
        // A key given twice: which value it means is the reader's choice, so it is refused.
        if !request.body.isEmpty, JSONText.repeatedKey(in: [UInt8](request.body)) != nil {
            throw APIError.generalBadRequest
        }
        let query = try QueryParameters(request.query)
        switch endpoint {
        case .transactionInfo:
            guard let id else { throw APIError.invalidTransactionID }
            return try transactionInfo(id, read: purchase)
        case .appTransactionInfo:
            return try appTransactionInfo(parameters[0])
        case .history(let kind):
            return try history(parameters[0], query: query, kind: kind, settings: settings)
        case .subscriptionStatuses:
            return try subscriptionStatuses(parameters[0], query: query, settings: settings)
        case .requestTestNotification:
            return try requestTestNotification()
        case .testNotificationStatus:
            return try testNotificationStatus(parameters[0])
        case .notificationHistory:
            return try notificationHistory(request.body, query: query)
        case .orderLookup:
            return try orderLookup(parameters[0])
        case .consumption(let version):
            return try consumption(parameters[0], body: request.body, version: version)
        case .appAccountToken:
            return try setAppAccountToken(parameters[0], body: request.body)
        case .finishTransaction:
            return try finishTransaction(parameters[0])
        case .extendRenewalDate:
            return try extendRenewalDate(parameters[0], body: request.body)
        case .massExtension:
            return try massExtendRenewalDates(request.body)
        case .massExtensionStatus:
            return try massExtensionStatus(productID: parameters[0], requestIdentifier: parameters[1])
        }
    }

    /// Checks the request's bearer token; returns the app its bundle (`bid`) names, with its
    /// settings, read with the key in one snapshot (once for the request: what the answers
    /// name) by `reading` (the key and app alone, or more for an endpoint that reads more). A
    /// token for a bundle the store has no app of is refused (401), as a token for another
    /// team's app.
    private func authorize(
        _ request: APIRequest, reading: (_ keyID: String, _ bundleID: String?) throws -> (key: APIKey?, app: ServedApp?)
    ) throws -> ServedApp {
        var app: ServedApp?
        do {
            _ = try BearerToken.check(request.authorization, now: now(), verified: verifiedTokens) { keyID, bid in
                let read = try reading(keyID, bid)
                app = read.app
                return (read.key, read.app != nil)
            }
        } catch .keysUnreadable {
            throw APIError.generalInternal
        } catch {
            throw APIError.unauthorized
        }
        guard let app else { throw APIError.generalInternal }
        return app
    }

    // MARK: - Endpoints

    /// Get Transaction Info, from what the token's check read with the key (`read`), or read
    /// now when the token was not verified before.
    private func transactionInfo(_ id: UInt64, read: ServerPurchase<APIKey>?) throws -> APIResponse {
        let signed = try read.map { try $0.sign() } ?? store.serverSignedPurchase(id)
        guard let signed else {
            // A customer's app transaction id is no transaction: Apple refuses it here (this
            // endpoint takes a transaction id, not `anyTransactionId`).
            if try store.forCustomer(withAppTransactionID: String(id)) != nil {
                throw APIError.appTransactionIDNotSupported
            }
            throw APIError.transactionIDNotFound
        }
        let body = ResponseBody.TransactionInfo(signedTransactionInfo: signed.compactSerialization)
        return APIResponse(status: 200, json: body.json)
    }

    /// Get App Transaction Info: the app transaction of the customer `text` names, by its own
    /// id or any transaction of theirs the server knows.
    private func appTransactionInfo(_ text: String) throws -> APIResponse {
        try Self.ok(
            ResponseBody.AppTransactionInfo(
                signedAppTransactionInfo: try customerStore(text).signedAppTransaction().compactSerialization))
    }

    /// The store acting for the customer a request names by Apple's `anyTransactionId` (API
    /// 1.20: "any originalTransactionId, transactionId or appTransactionId that belongs to the
    /// customer of your app"): the owner of a transaction the App Store's server knows, or the
    /// customer whose app transaction id it is. Get Transaction History, Get Refund History, Get
    /// All Subscription Statuses and Get App Transaction Info take one.
    /// - Throws: `APIError.invalidTransactionID`, `.transactionIDNotFound`.
    func customerStore(_ text: String) throws -> Ledger {
        let id = try Self.transactionID(text)
        do {
            return try store.forOwner(of: try serverTransaction(id))
        } catch let error as APIError where error == .transactionIDNotFound {
            // An app transaction id, looked for only when no transaction has the id (the
            // common request names a transaction: one read, not two).
            guard let customer = try store.forCustomer(withAppTransactionID: String(id)) else { throw error }
            return customer
        }
    }

    /// A transaction identifier as Apple writes them: decimal digits, at most 19 (`Int64`).
    static func transactionID(_ text: String) throws -> UInt64 {
        guard (1...19).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            let id = Int64(text)
        else { throw APIError.invalidTransactionID }
        return UInt64(id)
    }

    /// The transaction a request names, when the App Store's server knows it: purchased or
    /// restored (a payment that failed, waits or is still purchasing never reached it, and one
    /// that only changed a subscription's next renewal was no transaction).
    /// - Throws: `APIError.transactionIDNotFound` otherwise.
    @discardableResult
    func serverTransaction(_ id: UInt64) throws -> PaymentTransaction {
        guard let transaction = try store.transaction(id),
            transaction.state == .purchased || transaction.state == .restored,
            try store.renewalChanges(among: [transaction]).isEmpty
        else { throw APIError.transactionIDNotFound }
        return transaction
    }

    // MARK: - Bodies

    /// A 200 answer with `body`.
    static func ok(_ body: some Encodable) throws -> APIResponse {
        APIResponse(status: 200, json: try ResponseBody.encoded(body))
    }

    private static func errorBody(_ body: (code: Int, message: String)) -> Data {
        (try? ResponseBody.encoded(ResponseBody.Error(errorCode: body.code, errorMessage: body.message))) ?? Data()
    }

    static func answer(_ error: APIError) -> APIResponse {
        APIResponse(status: error.status, json: error.body.map(errorBody))
    }
}

/// Read-only connections to one ledger file, each lent to one request at a time.
final class ReaderPool: Sendable {
    private let ledgers: [Ledger]
    private let free: Mutex<[Ledger]>

    /// `count` read-only connections to `ledger`'s file, with its configuration (its clock).
    init(of ledger: Ledger, count: Int) throws {
        var opened: [Ledger] = []
        do {
            for _ in 0..<max(1, count) {
                opened.append(try Ledger.open(at: ledger.path, access: .readOnly, configuration: ledger.configuration))
            }
        } catch {
            for reader in opened { try? reader.close() }
            throw error
        }
        ledgers = opened
        free = Mutex(opened)
    }

    /// `body`'s result with a connection no one else uses meanwhile; `nil` when all are lent.
    func withFreeReader<Result>(_ body: (Ledger) -> Result) -> Result? {
        guard let reader = free.withLock({ $0.popLast() }) else { return nil }
        defer { free.withLock { $0.append(reader) } }
        return body(reader)
    }

    func close() {
        for reader in ledgers { try? reader.close() }
    }
}
