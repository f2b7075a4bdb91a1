public import Foundation
package import StoreLedger
import Synchronization

/// A purchase as StoreKit 2 shows it (`Transaction`): a snapshot of the ledger's row.
///
/// StoreKit 2 knows only processed purchases: a transaction here is purchased or restored;
/// purchasing, failed and deferred ones stay StoreKit 1's.
public struct Transaction: Identifiable, Sendable, Hashable {
    public let id: UInt64
    /// The first purchase of a subscription's chain, or the purchase a restore replays.
    public let originalID: UInt64
    /// The identifier of the product bought.
    public let productID: String
    /// The kind of the product bought.
    public let productType: Product.ProductType
    /// The subscription group of an auto-renewable subscription; `nil` for other products.
    public let subscriptionGroupID: String?
    /// The app's bundle identifier, else its process name (Linux has no bundle identifiers).
    public let appBundleID: String
    /// When the store charged this transaction (for a renewal, when it renewed).
    public let purchaseDate: Date
    /// When the original purchase (`originalID`) was made.
    public let originalPurchaseDate: Date
    /// When the subscription period this transaction pays for ends; `nil` for products without one.
    public let expirationDate: Date?
    /// How many units were bought (1...10).
    public let purchasedQuantity: Int
    /// Whether the user moved up to a higher level of the subscription group, which replaced this
    /// transaction.
    public let isUpgraded: Bool
    /// Whether the user bought the product or has it through Family Sharing: always `.purchased`,
    /// as Family Sharing is not simulated.
    public let ownershipType: OwnershipType
    /// When the store last changed the transaction.
    public let signedDate: Date
    /// When the App Store refunded or revoked the transaction; `nil` while it stands.
    public let revocationDate: Date?
    /// Why it was refunded or revoked (the reason the ledger's refund stored); `nil` while it stands.
    public let revocationReason: RevocationReason?
    /// How it was refunded or revoked: wholly, in part (a prorated refund), or from Family
    /// Sharing, as its signed payload says; `nil` while it stands.
    public let revocationType: RevocationType?
    /// `revocationType`'s string (`REFUND_FULL`, `REFUND_PRORATED` or `FAMILY_REVOKE`, as the
    /// App Store's signed payload writes it); `nil` while it stands.
    public var revocationTypeStringRepresentation: String? { revocationType?.rawValue }
    /// The app's account token given with the purchase: the `appAccountToken` option, or a StoreKit 1
    /// `applicationUsername` that is a UUID.
    public let appAccountToken: UUID?
    /// Where the transaction was made: the store's `environment` setting, `.xcode` (local
    /// testing) by default, `.sandbox` when the store signs as the sandbox does.
    public let environment: AppStore.Environment
    /// Why the transaction exists: a purchase by the user, or an automatic renewal.
    public let reason: Reason
    /// The storefront the purchase was made in (the ledger row's country code; the United States if
    /// the code is unknown).
    public let storefront: Storefront
    /// The ISO 3166-1 alpha-3 country code of `storefront`.
    public var storefrontCountryCode: String { storefront.countryCode }
    /// The subscription purchase's identifier across devices (`webOrderLineItemId` in the signed
    /// payload): the id of the purchase or renewal that began the period; `nil` for other
    /// products.
    public let webOrderLineItemID: String?
    /// What the purchase cost, in units of `currency`: the catalog's price, or the offer's,
    /// times the quantity; `nil` when the catalog has no price for the product.
    public let price: Decimal?
    /// The currency of `price`: the storefront's.
    public let currency: Locale.Currency?
    /// The app download's transaction identifier, the same for every transaction of the
    /// store (derived from the ledger's root certificate); empty when the store could not sign.
    public let appTransactionID: String
    /// The subscription offer this period was bought with.
    public let offer: Offer?
    /// The launch the transaction came from: `finish()` goes there.
    let origin: Origin
    /// The JWS the store signed the transaction in.
    let signed: SignedForm
    /// The signed payload's JSON: the transaction as the App Store signs it (the fields of
    /// `JWSTransactionDecodedPayload`); empty when the store could not sign it.
    public var jsonRepresentation: Data { signed.payload }
    /// The kind of subscription offer the transaction was bought with; `nil` for none.
    public var offerType: OfferType? { offer?.type }
    /// The identifier of the promotional offer the transaction was bought with; `nil` for an
    /// introductory offer or none.
    public var offerID: String? { offer?.id }

    /// `row` as a store hands it out, signed as `signed` (`nil` when the store could not sign):
    /// what the signature adds (price, currency, ownership, ...) is read from the payload value
    /// it was signed from, never parsed back from its JSON.
    package init(_ row: PaymentTransaction, origin: Origin, signed: (jws: JWS, payload: TransactionPayload)?) {
        self.origin = origin
        self.signed = SignedForm(jws: signed?.jws)
        id = row.id
        originalID = row.originalID
        productID = row.productID
        productType = Product.ProductType(row.productType)
        subscriptionGroupID = row.subscriptionGroupID
        appBundleID = Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
        purchaseDate = row.purchaseDate
        originalPurchaseDate = row.originalPurchaseDate
        expirationDate = row.expirationDate
        purchasedQuantity = row.quantity
        isUpgraded = row.isUpgraded
        signedDate = row.updatedAt
        revocationDate = row.revocationDate
        revocationReason = row.revocationReason.map(RevocationReason.init(rawValue:))
        appAccountToken = row.appAccountToken
        let payload = signed?.payload
        environment = SignedForm.environment(payload?.environment)
        price = payload?.price.map { Decimal($0) / 1000 }
        currency = payload?.currency.map { Locale.Currency($0) }
        appTransactionID = payload?.appTransactionId ?? ""
        webOrderLineItemID = payload?.webOrderLineItemId
        ownershipType = payload.map { OwnershipType(rawValue: $0.inAppOwnershipType) } ?? .purchased
        revocationType = payload?.revocationType.map(RevocationType.init(rawValue:))
        reason = row.reason == .renewal ? .renewal : .purchase
        storefront = Storefront(StoreLedger.Storefront(countryCode: row.storefront) ?? .unitedStates)
        offer = row.offer.map(Offer.init)
    }

    /// Finishes the transaction in the store it came from: it leaves the unfinished ones for
    /// good. Finishing twice does nothing more; a failure is reported on standard error
    /// (StoreKit's `finish()` cannot throw).
    public func finish() async {
        do {
            guard let queue = origin.queue else { throw StoreKitError.unknown }
            try await queue.finish(id)
        } catch {
            FileHandle.standardError.write(
                Data("OpenStoreKit: finishing transaction \(id) failed: \(error.localizedDescription)\n".utf8))
        }
    }

    // MARK: - Sequences

    /// Transactions made outside a `purchase()` call: renewals, Ask to Buy approvals, refunds
    /// and revocations, interrupted purchases once resolved, purchases of other processes seen
    /// by this one's store. The first sequence of a launch starts with the unfinished
    /// transactions (StoreKit delivers them once after launch). What a
    /// `purchase()` call returned is never emitted again here.
    public static var updates: Transactions { Transactions(.updates) }
    /// Every purchased or restored transaction, oldest first; finished consumables excluded.
    /// (Apple documents no order; read the dates rather than the position.)
    public static var all: Transactions { Transactions(.all(nil)) }
    /// `all`'s transactions of `productID`.
    public static func all(for productID: String) -> Transactions { Transactions(.all(productID)) }
    /// The unfinished transactions, oldest first.
    public static var unfinished: Transactions { Transactions(.unfinished) }
    /// The latest transaction of each product the user is entitled to now.
    public static var currentEntitlements: Transactions { Transactions(.currentEntitlements(nil)) }

    /// The transactions that entitle the user to `productID` now: at most one here, the latest.
    public static func currentEntitlements(for productID: String) -> Transactions {
        Transactions(.currentEntitlements(productID))
    }

    /// The transaction that entitles the user to `productID` now, or `nil`.
    public static func currentEntitlement(for productID: String) async -> VerificationResult<Transaction>? {
        var entitlements = currentEntitlements(for: productID).makeAsyncIterator()
        return await entitlements.next()
    }

    /// The status of the subscription this transaction belongs to (the customer's own, or the
    /// one a family member shares); `nil` for other products or when the ledger cannot be read.
    public var subscriptionStatus: Product.SubscriptionInfo.Status? {
        get async {
            guard subscriptionGroupID != nil else { return nil }
            return try? await Product.SubscriptionInfo.status(transactionID: id)
        }
    }

    /// The latest purchased or restored transaction of `productID` (revoked ones included).
    public static func latest(for productID: String) async -> VerificationResult<Transaction>? {
        guard let context = try? StoreContext.current(),
            let row = try? context.ledger.latestTransaction(for: productID)
        else { return nil }
        return context.origin.result(row)
    }

    // MARK: - Nested types

    /// A subscription offer applied to a transaction (`Transaction.Offer`).
    public struct Offer: Hashable, Sendable {
        /// How the offer is paid (`Transaction.Offer.PaymentMode`).
        public struct PaymentMode: RawRepresentable, Hashable, Sendable {
            public let rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }
            /// Nothing was charged for the offer's periods.
            public static let freeTrial = PaymentMode(rawValue: "FREE_TRIAL")
            /// The offer's price was charged every period.
            public static let payAsYouGo = PaymentMode(rawValue: "PAY_AS_YOU_GO")
            /// The offer's price was charged once, for all its periods.
            public static let payUpFront = PaymentMode(rawValue: "PAY_UP_FRONT")
        }

        /// The kind of offer: introductory, promotional, an offer code or a win-back offer.
        public let type: OfferType
        /// The promotional or win-back offer's identifier, or the offer code's reference name;
        /// `nil` for an introductory offer.
        public let id: String?
        /// How the offer was paid.
        public let paymentMode: PaymentMode?
        /// The length of one period of the offer.
        public let period: Product.SubscriptionPeriod?

        init(_ offer: TransactionOffer) {
            type =
                switch offer.type {
                case .introductory: .introductory
                case .promotional: .promotional
                case .code: .code
                case .winBack: .winBack
                }
            id = offer.id
            paymentMode =
                switch offer.paymentMode {
                case .freeTrial: .freeTrial
                case .payAsYouGo: .payAsYouGo
                case .payUpFront: .payUpFront
                }
            period = Product.SubscriptionPeriod(offer.period)
        }
    }

    /// The kind of offer (`Transaction.OfferType`), with StoreKit's raw values.
    public struct OfferType: RawRepresentable, Hashable, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// The subscription group's introductory offer.
        public static let introductory = OfferType(rawValue: 1)
        /// A promotional offer redeemed with a signature from the app's server.
        public static let promotional = OfferType(rawValue: 2)
        /// An offer code, redeemed by its reference name (`codeOffer(referenceName:)`).
        public static let code = OfferType(rawValue: 3)
        /// A win-back offer, redeemed by a churned subscriber (`winBackOffer(_:)`).
        public static let winBack = OfferType(rawValue: 4)
    }

    /// How the user owns the product (`Transaction.OwnershipType`), with StoreKit's raw values.
    public struct OwnershipType: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The user bought it: every transaction but a family member's shared purchase.
        public static let purchased = OwnershipType(rawValue: "PURCHASED")
        /// A family member bought it and shares it (`SKTestSession.shareFamilyPurchase(productIdentifier:)`).
        public static let familyShared = OwnershipType(rawValue: "FAMILY_SHARED")
    }

    /// How a transaction was revoked (`Transaction.RevocationType`), with the App Store's
    /// strings as raw values.
    public struct RevocationType: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Refunded wholly.
        public static let fullRefund = RevocationType(rawValue: "REFUND_FULL")
        /// Refunded in part, for the part consumed (the ledger's prorated refund).
        public static let proratedRefund = RevocationType(rawValue: "REFUND_PRORATED")
        /// Revoked from Family Sharing: the purchaser's refund, or the sharing ended.
        public static let familyRevocation = RevocationType(rawValue: "FAMILY_REVOKE")
    }

    /// Why the App Store refunded a transaction (`Transaction.RevocationReason`), with StoreKit's raw
    /// values, as the ledger's refund stores them.
    public struct RevocationReason: RawRepresentable, Hashable, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// Refunded because of a problem in the app (raw value 1).
        public static let developerIssue = RevocationReason(rawValue: 1)
        /// Refunded for any other reason (raw value 0).
        public static let other = RevocationReason(rawValue: 0)

        /// The reason in words, in English (the store has no localizations).
        public var localizedDescription: String {
            switch self {
            case .developerIssue: "The purchase was refunded because of an issue with the app."
            case .other: "The purchase was refunded for another reason."
            default: "The purchase was refunded (reason \(rawValue))."
            }
        }
    }

    /// Why a transaction exists (`Transaction.Reason`).
    public struct Reason: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The user bought the product.
        public static let purchase = Reason(rawValue: "PURCHASE")
        /// The store renewed an auto-renewable subscription by itself.
        public static let renewal = Reason(rawValue: "RENEWAL")
    }
}

extension Transaction {
    /// An asynchronous sequence of transactions (`Transaction.Transactions`). Sequences of
    /// the ledger's history read it a page at a time.
    public struct Transactions: AsyncSequence, Sendable {
        public typealias Element = VerificationResult<Transaction>
        public typealias Failure = Never

        enum Source: Sendable {
            case updates, unfinished
            case all(String?)
            case currentEntitlements(String?)
        }

        let source: Source

        init(_ source: Source) {
            self.source = source
        }

        public func makeAsyncIterator() -> AsyncIterator {
            guard let context = try? StoreContext.current() else { return AsyncIterator(.finished, origin: Origin()) }
            let origin = context.origin
            switch source {
            case .updates:
                return AsyncIterator(.live(context.transactionUpdates.listen().makeAsyncIterator()), origin: origin)
            case .all(let productID):
                return AsyncIterator(
                    .pages(HistoryPages(ledger: context.ledger, unfinishedOnly: false, productID: productID)),
                    origin: origin)
            case .unfinished:
                return AsyncIterator(.pages(HistoryPages(ledger: context.ledger, unfinishedOnly: true)), origin: origin)
            case .currentEntitlements(let productID):
                let rows = (try? context.ledger.currentEntitlements()) ?? []
                return AsyncIterator(
                    .rows(rows.filter { productID == nil || $0.productID == productID }[...]), origin: origin)
            }
        }

        public struct AsyncIterator: AsyncIteratorProtocol {
            /// What the iterator yields: a transaction with its verification result.
            public typealias Element = VerificationResult<Transaction>
            public typealias Failure = Never

            enum State {
                case live(AsyncStream<VerificationResult<Transaction>>.Iterator)
                case pages(HistoryPages)
                case rows(ArraySlice<PaymentTransaction>)
                case finished
            }

            var state: State
            let origin: Origin

            init(_ state: State, origin: Origin) {
                self.state = state
                self.origin = origin
            }

            public mutating func next() async -> VerificationResult<Transaction>? {
                switch state {
                case .live(var iterator):
                    let next = await iterator.next()
                    state = .live(iterator)
                    return next
                case .pages(var pages):
                    let next = pages.next()
                    state = .pages(pages)
                    return next.map(origin.result)
                case .rows(var rows):
                    guard let next = rows.popFirst() else { return nil }
                    state = .rows(rows)
                    return origin.result(next)
                case .finished:
                    return nil
                }
            }
        }
    }
}

/// The ledger's purchased and restored transactions, oldest first, read 100 at a time (a
/// payment that only changed a subscription's next renewal is none).
struct HistoryPages {
    let ledger: Ledger
    let unfinishedOnly: Bool
    /// Only this product's, when set.
    let productID: String?
    private var page: ArraySlice<PaymentTransaction> = []
    private var afterID: UInt64?
    private var exhausted = false

    init(ledger: Ledger, unfinishedOnly: Bool, productID: String? = nil) {
        self.ledger = ledger
        self.unfinishedOnly = unfinishedOnly
        self.productID = productID
    }

    mutating func next() -> PaymentTransaction? {
        while true {
            if let row = page.popFirst() {
                if Self.isShown(row) { return row }
                continue
            }
            guard !exhausted,
                let rows = try? ledger.transactions(
                    matching: TransactionFilter(
                        productID: productID, unfinishedOnly: unfinishedOnly, afterID: afterID, limit: 100))
            else { return nil }
            exhausted = rows.count < 100
            afterID = rows.last?.id ?? afterID
            // A payment that only changed a subscription's renewal is no transaction.
            let changes = (try? ledger.renewalChanges(among: rows)) ?? []
            page = rows.filter { !changes.contains($0.id) }[...]
            if rows.isEmpty { return nil }
        }
    }

    /// What StoreKit 2 shows: processed purchases, except consumables once finished.
    static func isShown(_ row: PaymentTransaction) -> Bool {
        (row.state == .purchased || row.state == .restored) && !(row.productType == .consumable && row.isFinished)
    }
}

extension Transaction {
    /// The launch (payment queue) transactions come from. Two transactions are equal only when
    /// they come from the same launch.
    package final class Origin: Hashable, Sendable {
        private let current = Mutex<(queue: PaymentQueue, signer: StoreSigner)?>(nil)
        /// The store's simulated failures: a simulated verification failure applies to what it hands out.
        let failures: SimulatedFailures

        init(failures: SimulatedFailures = SimulatedFailures()) {
            self.failures = failures
        }

        /// `row` as this store hands it out to StoreKit 2 code: signed, and verified as StoreKit
        /// verifies it (a simulated verification error wins).
        package func result(_ row: PaymentTransaction) -> VerificationResult<Transaction> {
            let signer = signer
            let signed = signer.sign(row)
            return failures.verify(Transaction(row, origin: self, signed: signed)) {
                signer.verify($0, signedAs: signed?.jws)
            }
        }

        /// `status`'s renewal info as this store hands it out, signed and verified.
        func result(_ status: SubscriptionStatus) -> VerificationResult<Product.SubscriptionInfo.RenewalInfo> {
            let signer = signer
            let signed = signer.sign(status)
            return failures.verify(Product.SubscriptionInfo.RenewalInfo(status, signed: signed)) {
                signer.verify($0, signedAs: signed?.jws)
            }
        }

        var queue: PaymentQueue? { current.withLock { $0?.queue } }
        package var signer: StoreSigner { current.withLock { $0?.signer } ?? StoreSigner(ledger: nil) }

        func attach(_ queue: PaymentQueue) {
            current.withLock { $0 = (queue, StoreSigner(ledger: queue.ledger)) }
        }

        package static func == (lhs: Origin, rhs: Origin) -> Bool { lhs === rhs }
        package func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    }
}

extension Transaction: CustomDebugStringConvertible {
    /// The transaction's signed payload, as JSON (what StoreKit's description shows), or its
    /// id and product when the store could not sign it.
    public var debugDescription: String {
        let json = String(decoding: jsonRepresentation, as: UTF8.self)
        return json.isEmpty ? "Transaction(id: \(id), productID: \(productID))" : json
    }
}
