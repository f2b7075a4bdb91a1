import Foundation
import GRDB

/// A transaction about to be inserted: every way a transaction enters the ledger (a payment,
/// a renewal, a restore, the replacement of an interrupted purchase) goes through `insert`.
struct NewTransactionRow {
    var productID: String
    var productType: ProductType
    var subscriptionGroupID: String?
    var state: TransactionState
    var quantity = 1
    var purchaseDate: Int64
    /// `nil`: the new transaction starts its own chain (originalID = id, same date).
    var original: (id: UInt64, purchaseDate: Int64)?
    var expirationDate: Int64?
    var appAccountToken: UUID?
    var applicationUsername: String?
    var idempotencyKey: String?
    var reason: PaymentTransaction.Reason = .purchase
    var storefront = "USA"
    var planned: (state: TransactionState, error: TransactionError?)?
    var restoredFrom: UInt64?
    var offer: TransactionOffer?
    /// The nonce of the promotional offer's signature the payment redeemed (used once).
    var offerNonce: UUID?
    var isUpgraded = false
    var createdAt: Int64

    /// A row for `productID` as the catalog defines it.
    /// - Throws: `PaymentQueueError.unknownProduct` when the catalog does not have it.
    init(_ db: Database, productID: String, state: TransactionState, at now: Int64) throws {
        let lookup = try FastStatement(db, "SELECT type, subscription_group_id FROM products WHERE id = ?")
        lookup.bind(1, productID)
        guard let product = try lookup.first({ (ProductType(rawValue: $0.string(0)) ?? .consumable, $0.optionalString(1)) })
        else { throw PaymentQueueError.unknownProduct(productID) }
        self.productID = productID
        (self.productType, self.subscriptionGroupID) = product
        self.state = state
        self.purchaseDate = now
        self.createdAt = now
    }

    /// A row that copies `source`'s product, quantity, account and storefront.
    init(copying source: PaymentTransaction, state: TransactionState, at now: Int64) {
        productID = source.productID
        productType = source.productType
        subscriptionGroupID = source.subscriptionGroupID
        self.state = state
        quantity = source.quantity
        purchaseDate = now
        appAccountToken = source.appAccountToken
        applicationUsername = source.applicationUsername
        offer = source.offer
        storefront = source.storefront
        createdAt = now
    }
}

extension NewTransactionRow {
    /// The transaction as `insert` stores it, without reading it back.
    func transaction(id: UInt64) -> PaymentTransaction {
        let original = self.original ?? (id, purchaseDate)
        return PaymentTransaction(
            id: id, originalID: original.id, productID: productID, productType: productType, state: state, isFinished: false,
            quantity: quantity, purchaseDate: Date(ledgerMilliseconds: purchaseDate),
            originalPurchaseDate: Date(ledgerMilliseconds: original.purchaseDate),
            expirationDate: expirationDate.map(Date.init(ledgerMilliseconds:)), revocationDate: nil, revocationReason: nil,
            isUpgraded: isUpgraded, appAccountToken: appAccountToken, applicationUsername: applicationUsername, error: nil, reason: reason,
            subscriptionGroupID: subscriptionGroupID, offer: offer, storefront: storefront, environment: Ledger.environment,
            idempotencyKey: idempotencyKey, restoredFromID: restoredFrom, createdAt: Date(ledgerMilliseconds: createdAt),
            updatedAt: Date(ledgerMilliseconds: createdAt), finishedAt: nil, deliveryCount: 0, lastDeliveredAt: nil)
    }
}

extension Ledger {
    /// Inserts a new transaction with a fresh id and its `created` event; returns the id.
    func insert(_ db: Database, _ row: NewTransactionRow) throws -> UInt64 {
        try insert(db, row, id: try nextTransactionID(db))
    }

    /// Inserts a new transaction with an id the caller took from the counter (see `IDBlock`).
    func insert(_ db: Database, _ row: NewTransactionRow, id: UInt64) throws -> UInt64 {
        let original = row.original ?? (id, row.purchaseDate)
        let insert = try FastStatement(db, """
            INSERT INTO transactions (
                id, original_id, product_id, product_type, state, quantity, purchase_date, original_purchase_date,
                expiration_date, app_account_token, reason, subscription_group_id, storefront, environment,
                idempotency_key, planned_state, planned_error_code, planned_error_message, restored_from,
                is_upgraded, created_at, updated_at, application_username, offer_type, offer_id, offer_payment_mode,
                offer_period, offer_nonce)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        insert.bind(1, Int64(id))
        insert.bind(2, Int64(original.id))
        insert.bind(3, row.productID)
        insert.bind(4, row.productType.rawValue)
        insert.bind(5, row.state.rawValue)
        insert.bind(6, row.quantity)
        insert.bind(7, row.purchaseDate)
        insert.bind(8, original.purchaseDate)
        insert.bind(9, row.expirationDate)
        insert.bind(10, row.appAccountToken?.uuidString)
        insert.bind(11, row.reason.rawValue)
        insert.bind(12, row.subscriptionGroupID)
        insert.bind(13, row.storefront)
        insert.bind(14, Self.environment)
        insert.bind(15, row.idempotencyKey)
        insert.bind(16, row.planned?.state.rawValue)
        insert.bind(17, (row.planned?.error?.code.rawValue).map(Int64.init))
        insert.bind(18, row.planned?.error?.message)
        insert.bind(19, row.restoredFrom.map(Int64.init))
        insert.bind(20, row.isUpgraded)
        insert.bind(21, row.createdAt)
        insert.bind(22, row.createdAt)
        insert.bind(23, row.applicationUsername)
        insert.bind(24, row.offer?.type.rawValue)
        insert.bind(25, row.offer?.id)
        insert.bind(26, row.offer?.paymentMode.rawValue)
        insert.bind(27, row.offer?.period.description)
        insert.bind(28, row.offerNonce?.uuidString.lowercased())
        try insert.execute()
        try appendEvent(db, id: id, kind: .created, from: nil, to: row.state, at: row.createdAt)
        return id
    }

    /// The one place transaction ids are allocated: each id is after the last one issued
    /// (refused otherwise), the counter is read once and saved once per transaction.
    struct IDBlock {
        private var last: UInt64
        private let generator: TransactionIDGenerator

        init(_ db: Database, generator: TransactionIDGenerator) throws {
            last = UInt64(try FastStatement(db, "SELECT value FROM ledger_counters WHERE name = 'last_transaction_id'")
                .first { $0.int64(0) } ?? 0)
            self.generator = generator
        }

        mutating func next() throws -> UInt64 {
            let next = generator.next(after: last)
            guard next > last, next <= UInt64(Int64.max) else {
                throw PaymentQueueError.idGeneratorWentBackwards(lastIssued: last, proposed: next)
            }
            last = next
            return next
        }

        /// Takes `count` ids at once when the generator issues them one after another (as the
        /// sequential one does), for copies made in one statement: returns the first. `nil`, and
        /// nothing taken, when they would not follow each other or would pass `Int64.max`
        /// (`next()` then takes them one at a time, refusing as it does).
        mutating func contiguousRun(of count: Int) -> UInt64? {
            var probe = last
            for _ in 0..<count {
                let next = generator.next(after: probe)
                guard probe < UInt64(Int64.max), next == probe + 1 else { return nil }
                probe = next
            }
            defer { last = probe }
            return last + 1
        }

        func save(_ db: Database) throws {
            let save = try FastStatement(db, "UPDATE ledger_counters SET value = ? WHERE name = 'last_transaction_id'")
            save.bind(1, Int64(last))
            try save.execute()
        }
    }

    /// One new id (an `IDBlock` of one).
    private func nextTransactionID(_ db: Database) throws -> UInt64 {
        var ids = try IDBlock(db, generator: configuration.idGenerator)
        let next = try ids.next()
        try ids.save(db)
        return next
    }
}
