public import Foundation
package import GRDB
public import LedgerModel
public import LedgerSigning

/// The store's signed values: transactions, renewal info and the app transaction, signed as the App Store signs them.
extension Ledger {
    /// The transaction `id` signed as the App Store signs transactions (a JWS whose payload has
    /// the fields of `JWSTransactionDecodedPayload`), with this ledger's signing identity
    /// (`signingCertificates()`), the store's bundle identifier and environment
    /// (`StoreSettings`). A server trusting the ledger's root verifies it as it verifies the
    /// App Store's; with the store's `invalidSignaturesEnabled`, its signature does not match.
    /// - Throws: `PaymentQueueError.unknownTransaction`; `StoreControlError.notSigned` for a
    ///   transaction the App Store does not sign (purchasing, deferred or failed).
    public func signedTransaction(_ id: UInt64) throws -> JWS {
        guard let transaction = try transaction(id) else { throw PaymentQueueError.unknownTransaction(id) }
        return try signedTransactions([transaction])[0]
    }

    /// `transactions` signed (see `signedTransaction(_:)`), in their order: the identity,
    /// settings and catalog are read once for all.
    /// - Throws: `StoreControlError.notSigned` when one is purchasing, deferred or failed;
    ///   `LedgerError` (`.corrupted`) when a stored row differs from what its history recorded.
    public func signedTransactions(_ transactions: [PaymentTransaction]) throws -> [JWS] {
        try signedTransactionsWithPayloads(transactions).map(\.jws)
    }

    /// `signedTransactions(_:)` with the payload each was signed from (OpenStoreKit builds its
    /// `Transaction` from these values, not from the JSON it signed).
    package func signedTransactionsWithPayloads(
        _ transactions: [PaymentTransaction]
    ) throws -> [(jws: JWS, payload: TransactionPayload)] {
        try Self.checkSignable(transactions)
        return try read { db in try signing(db, transactions) }.signWithPayloads()
    }

    /// `signedTransactions(_:)` as an App Store Server API answer signs them: their `signedDate`
    /// is the store's time of signing.
    package func serverSignedTransactions(_ transactions: [PaymentTransaction]) throws -> [JWS] {
        try Self.checkSignable(transactions)
        return try read { db in try signing(db, transactions).signedNow(try storeNow(db)) }.sign()
    }

    /// Refuses what the App Store never signs: a transaction purchasing, deferred or failed.
    private static func checkSignable(_ transactions: [PaymentTransaction]) throws {
        for transaction in transactions where transaction.state != .purchased && transaction.state != .restored {
            throw StoreControlError.notSigned(transaction.id, state: transaction.state)
        }
    }

    /// Transaction `id` and its signed form, read in one snapshot (what the App Store
    /// Server API's Get Transaction Info answers); `nil` when this value's app has no such
    /// transaction or it is not purchased or restored (the App Store's server never saw it).
    /// - Throws: `LedgerError` (`.corrupted`) when its row differs from what its history
    ///   recorded; `AppError.appNotChosen`.
    public func signedPurchase(_ id: UInt64) throws -> (transaction: PaymentTransaction, signed: JWS)? {
        let app = try appID()
        guard let inputs = try read({ db in try purchaseSigning(db, id, inApp: app) }) else { return nil }
        return (inputs.transactions[0], try inputs.sign()[0])
    }

    /// `signedPurchase(_:)` as Get Transaction Info answers it: its `signedDate` is the store's
    /// time of signing.
    package func serverSignedPurchase(_ id: UInt64) throws -> JWS? {
        let app = try appID()
        return try read { db in try purchaseSigning(db, id, inApp: app)?.signedNow(try storeNow(db)) }?.sign()[0]
    }

    /// What Get Transaction Info needs, read in one snapshot, its settings parsed once: the API
    /// key the request names (`key` reads it) and the app's settings (for the bearer token's
    /// check), and transaction `id` ready to sign when it is purchased or restored. The caller
    /// checks the token, then signs (`ServerPurchase.sign()`): a request refused costs no
    /// signature, and what failed in the transaction's read (a row edited outside the ledger)
    /// answers only after the token held, as it would have read alone.
    /// - Throws: `LedgerError` when the key or the settings cannot be read.
    package func serverPurchase<Key>(
        _ id: UInt64, bundleID: String?, key readKey: (Database) throws -> Key?
    ) throws -> ServerPurchase<Key> {
        try read { db in
            let (key, app) = (try readKey(db), try servedApp(db, bundleID: bundleID))
            let signing = Result {
                guard let app else { return Signing?.none }
                return try purchaseSigning(
                    db, id, inApp: app.id,
                    signer: PayloadSigner(identity: try identities.identity(db), settings: app.settings)
                )?.signedNow(try storeNow(db))
            }
            return ServerPurchase(key: key, app: app, signing: signing.mapError { Self.mapError($0, path: path) })
        }
    }

    /// Transaction `id` of app `app` read and vouched for in one statement, ready to sign; `nil`
    /// when the ledger has none, or it is another app's, or it is not purchased or restored, or
    /// only changed a subscription's renewal (the App Store's server never saw it).
    private func purchaseSigning(
        _ db: Database, _ id: UInt64, inApp app: Int64, signer: PayloadSigner? = nil
    ) throws -> Signing? {
        guard let transaction = try HashChain.vouchedTransaction(db, id: id), transaction.appID == app,
            transaction.state == .purchased || transaction.state == .restored,
            try !isRenewalChange(db, transaction)
        else { return nil }
        return try signing(db, vouched: [transaction], signer: signer)
    }

    /// What signing transactions needs, read in one snapshot: the transactions vouched for by
    /// their histories (never sign a row edited outside the ledger: the signature would vouch
    /// for the edit), with the app account tokens a server set; the identity and settings; the
    /// catalog's products.
    /// `signer`: the one the caller read already, if it did.
    func signing(
        _ db: Database, _ transactions: [PaymentTransaction], signer: PayloadSigner? = nil
    ) throws -> Signing {
        for transaction in transactions { try HashChain.vouch(db, id: transaction.id) }
        return try signing(db, vouched: transactions, signer: signer)
    }

    /// `signing` of transactions vouched for already (`HashChain.vouchedTransaction`). Their
    /// events after the signed head must carry the ledger's MACs (`HashChain.authenticateUnsigned`):
    /// every signer (the tool, the server's answers, the notifications) comes through here.
    func signing(
        _ db: Database, vouched transactions: [PaymentTransaction], signer: PayloadSigner? = nil
    ) throws -> Signing {
        if configuration.keepsHashChain {
            let key = try identities.eventKey(db)
            for transaction in transactions { try HashChain.authenticateUnsigned(db, of: transaction.id, key: key) }
        }
        let products = try Self.products(db, withIDs: Set(transactions.map(\.productID)).sorted())
        return Signing(
            transactions: try withServerAccountTokens(db, transactions), signer: try signer ?? self.signer(db),
            products: Dictionary(products.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first }),
            chargedPrices: try chargedPrices(db, of: transactions),
            familySharedOriginals: try familySharedOriginals(db, of: transactions),
            refundedPortions: try refundedPortions(db, of: transactions))
    }

    /// What a signer needs of a transaction it signs outside `signing` (a group's latest period,
    /// in its renewal info): its row as its history recorded it, and its events after the signed
    /// head authenticated.
    func vouchForSigning(_ db: Database, _ id: UInt64) throws {
        guard configuration.keepsHashChain else { return }
        try HashChain.vouch(db, id: id)
        try HashChain.authenticateUnsigned(db, of: id, key: try identities.eventKey(db))
    }

    /// Transactions ready to sign (`signing`), signed outside the read.
    struct Signing {
        let transactions: [PaymentTransaction]
        let signer: PayloadSigner
        let products: [String: Product]
        /// The prices charged that are not the catalog's (`Ledger.chargedPrice`), by transaction id.
        let chargedPrices: [UInt64: Decimal]
        /// The original transaction ids of the purchases a family member shared.
        let familySharedOriginals: Set<UInt64>
        /// The parts of prorated refunds, in milliunits of a percent, by transaction id.
        let refundedPortions: [UInt64: Int]
        /// When an App Store Server API answer signs them (the store's time of the read): their
        /// `signedDate`; `nil` elsewhere (then when the store last changed each).
        private(set) var signedAt: Int64?

        /// These, signed as an API answer signs them at `now` (`signedAt`).
        func signedNow(_ now: Int64) -> Signing {
            var signing = self
            signing.signedAt = now
            return signing
        }

        func sign() throws -> [JWS] { try signWithPayloads().map(\.jws) }

        /// Each transaction signed, with the payload it was signed from: what a caller needs of
        /// it is read from the value, never parsed back from the JSON just signed.
        func signWithPayloads() throws -> [(jws: JWS, payload: TransactionPayload)] {
            try transactions.map { transaction in
                let payload = TransactionPayload(
                    transaction, product: products[transaction.productID], settings: signer.settings,
                    appTransactionID: signer.identity.appTransactionID(
                        ofCustomer: transaction.customerID, app: transaction.appID),
                    charged: chargedPrices[transaction.id],
                    familyShared: familySharedOriginals.contains(transaction.originalID),
                    refundedPortion: refundedPortions[transaction.id], signedAt: signedAt)
                return (try signer.sign(payload), payload)
            }
        }
    }

    /// The renewal info of the subscription of `productID`'s group (an auto-renewable
    /// subscription; `subscriptionStatus(forProduct:)` says which, of a group held both ways) as
    /// it stands now, signed as the App Store signs it (a JWS whose
    /// payload has the fields of `JWSRenewalInfoDecodedPayload`); `nil` when the group was never
    /// bought.
    /// - Throws: `UnknownProductError`; `StoreControlError.notAutoRenewable`.
    public func signedRenewalInfo(forProduct productID: String) throws -> JWS? {
        guard let status = try subscriptionStatus(forProduct: productID) else { return nil }
        return try signedRenewalInfo(status)
    }

    /// `status` signed as its group's renewal info.
    public func signedRenewalInfo(_ status: SubscriptionStatus) throws -> JWS {
        try signedRenewalInfoWithPayload(status).jws
    }

    /// `signedRenewalInfo(_:)` with the payload it was signed from; `signedNow`: as an App Store
    /// Server API answer signs it (its `signedDate` the store's time of signing).
    package func signedRenewalInfoWithPayload(
        _ status: SubscriptionStatus, signedNow: Bool = false
    ) throws -> (jws: JWS, payload: RenewalInfoPayload) {
        let signer = try signer()
        var status = status
        let (recentStart, now) = try read { db in
            try vouchForSigning(db, status.transaction.id)
            status.transaction = try withServerAccountTokens(db, [status.transaction])[0]
            let held =
                try heldSubscription(db, of: status.transaction)
                ?? .own(status.groupID, customer: status.transaction.customerID)
            return (try recentSubscriptionStart(db, of: held), signedNow ? try storeNow(db) : nil)
        }
        let payload = RenewalInfoPayload(
            status, settings: signer.settings, recentStart: recentStart,
            appTransactionID: signer.identity.appTransactionID(
                ofCustomer: status.transaction.customerID, app: status.transaction.appID),
            signedAt: now)
        return (try signer.sign(payload), payload)
    }

    /// The app's purchase (StoreKit's `AppTransaction`) as the App Store signs it now: a JWS
    /// whose payload has the fields of `JWSAppTransactionDecodedPayload`, bound to the store's
    /// device by `nonce`.
    public func signedAppTransaction(nonce: UUID = UUID()) throws -> JWS {
        try signedAppTransactionWithPayload(nonce: nonce).jws
    }

    /// `signedAppTransaction(nonce:)` with the payload it was signed from (OpenStoreKit builds
    /// its `AppTransaction` from these values, not from the JSON it signed).
    package func signedAppTransactionWithPayload(
        nonce: UUID = UUID()
    ) throws -> (jws: JWS, payload: AppTransactionPayload) {
        let (owner, device) = (try owner(), try deviceID())
        let (payloadSigner, now): (PayloadSigner, Date) = try read { db in
            (try signer(db), Date(ledgerMilliseconds: try storeNow(db)))
        }
        let payload = AppTransactionPayload(
            settings: payloadSigner.settings, identity: payloadSigner.identity, customer: owner.customer,
            app: owner.app, device: device, nonce: nonce, now: now)
        return (try payloadSigner.sign(payload), payload)
    }

    /// The `appTransactionId` of this value's customer in its app, in every value signed for
    /// them there.
    public func appTransactionID() throws -> String {
        let owner = try owner()
        return try read { db in
            try identities.identity(db).appTransactionID(ofCustomer: owner.customer, app: owner.app)
        }
    }

    /// This store acting for the customer whose `appTransactionId` in this value's app is `id`;
    /// `nil` when no customer's is. Each customer's is derived from the signing identity: this
    /// computes them in turn, one SHA-256 per customer (a store holds at most
    /// `Customer.maximumCount`).
    package func forCustomer(withAppTransactionID id: String) throws -> Ledger? {
        let app = try appID()
        return try read { db in
            let identity = try identities.identity(db)
            let customers = try Row.fetchCursor(db, sql: "SELECT id, name FROM customers ORDER BY id")
            while let row = try customers.next() {
                let customer: Int64 = row["id"]
                if identity.appTransactionID(ofCustomer: customer, app: app) == id {
                    return withCustomerScope(.chosen(id: customer, name: row["name"]))
                }
            }
            return nil
        }
    }

    /// The device this value runs on (its customer's named device, or their one device in the
    /// app), which signed app transactions are bound to (StoreKit's
    /// `AppStore.deviceVerificationID`).
    /// - Throws: `CustomerError.deviceNotChosen`, `CustomerError.customerNotChosen`.
    public func deviceVerificationID() throws -> UUID {
        let (customer, device) = (try customerID(), try deviceID())
        return try read { db in
            try identities.identity(db).deviceVerificationID(ofCustomer: customer, device: device)
        }
    }

    private func signer() throws -> PayloadSigner {
        try read { db in try signer(db) }
    }

    /// The identity and settings that sign, as a transaction sees them.
    func signer(_ db: Database) throws -> PayloadSigner {
        PayloadSigner(identity: try identities.identity(db), settings: try settings(db))
    }
}

/// Get Transaction Info's reads (`Ledger.serverPurchase`), before the transaction is signed.
package struct ServerPurchase<Key> {
    /// The API key the bearer token names, if the ledger has it.
    package let key: Key?
    /// The app the token's bundle names, with its settings, read with the key; `nil` when the
    /// store has no app of that bundle.
    package let app: ServedApp?
    fileprivate let signing: Result<Ledger.Signing?, any Error>

    /// The transaction signed; `nil` when the ledger has no such transaction or it is not
    /// purchased or restored (the App Store's server never saw it).
    /// - Throws: what its read failed with (`LedgerError` `.corrupted` for a row that differs
    ///   from what its history recorded).
    package func sign() throws -> JWS? {
        try signing.get()?.sign()[0]
    }
}
