package import Foundation
package import GRDB
import LedgerModel

/// A transaction about to be inserted: every way a transaction enters the ledger (a payment,
/// a renewal, a restore, the replacement of an interrupted purchase) goes through
/// `TransactionWriter.insert`.
package struct NewTransactionRow {
    package var productID: String
    package var productType: ProductType
    package var subscriptionGroupID: String?
    package var state: TransactionState
    package var quantity = 1
    package var purchaseDate: Int64
    /// `nil`: the new transaction starts its own chain (originalID = id, same date).
    package var original: (id: UInt64, purchaseDate: Int64)?
    package var expirationDate: Int64?
    package var appAccountToken: UUID?
    package var applicationUsername: String?
    package var idempotencyKey: String?
    package var reason: PaymentTransaction.Reason = .purchase
    package var storefront = "USA"
    package var planned: (state: TransactionState, error: TransactionError?)?
    package var restoredFrom: UInt64?
    package var offer: TransactionOffer?
    /// The nonce of the promotional offer's signature the payment redeemed (used once).
    package var offerNonce: UUID?
    package var isUpgraded = false
    package var createdAt: Int64
    /// The customer who owns it.
    package var customerID: Int64
    /// The app it is made in: its product's.
    package var appID: Int64

    /// A row of `owner`'s for `productID` as the catalog of `owner`'s app defines it.
    /// - Throws: `UnknownProductError` when that catalog does not have it (another app's
    ///   product is unknown to this one's, as the App Store has no product of that id for it).
    package init(
        _ db: Database, productID: String, owner: Owner, state: TransactionState, at now: Int64
    ) throws {
        let lookup = try FastStatement(db, Self.productLookup)
        lookup.bind(1, productID)
        guard
            let product = try lookup.first({
                (ProductType(rawValue: $0.string(0)) ?? .consumable, $0.optionalString(1), $0.int64(2))
            })
        else { throw UnknownProductError(productIdentifier: productID) }
        guard product.2 == owner.app else { throw UnknownProductError(productIdentifier: productID) }
        self.productID = productID
        self.customerID = owner.customer
        (self.productType, self.subscriptionGroupID, self.appID) = product
        self.state = state
        self.purchaseDate = now
        self.createdAt = now
    }

    private static let productLookup = LedgerSQL(
        "SELECT type, subscription_group_id, app_id FROM products WHERE id = ?")

    /// A row that copies `source`'s product, quantity, account, storefront and customer.
    package init(copying source: PaymentTransaction, state: TransactionState, at now: Int64) {
        productID = source.productID
        customerID = source.customerID
        appID = source.appID
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
    /// The row's value in every column (`TransactionColumns.names`' order) as transaction `id`:
    /// the writer inserts them all (none left to the table's defaults), and makes the row's
    /// image from them (`RowImage`).
    func columnValues(id: UInt64) -> [ColumnValue] {
        let original = self.original ?? (id, purchaseDate)
        var values = [ColumnValue](repeating: .integer(nil), count: TransactionColumns.names.count)
        func set(_ column: Int32, _ value: ColumnValue) { values[Int(column)] = value }
        let c = TransactionColumns.positions
        set(c.id, .integer(Int64(id)))
        set(c.originalID, .integer(Int64(original.id)))
        set(c.productID, .text(productID))
        set(c.productType, .text(productType.rawValue))
        set(c.state, .text(state.rawValue))
        set(c.isFinished, .flag(false))
        set(c.quantity, .integer(Int64(quantity)))
        set(c.purchaseDate, .integer(purchaseDate))
        set(c.originalPurchaseDate, .integer(original.purchaseDate))
        set(c.expirationDate, .integer(expirationDate))
        set(c.isUpgraded, .flag(isUpgraded))
        set(c.appAccountToken, .text(appAccountToken?.uuidString))
        set(c.reason, .text(reason.rawValue))
        set(c.subscriptionGroupID, .text(subscriptionGroupID))
        set(c.storefront, .text(storefront))
        set(c.environment, .text(Ledger.environment))
        set(c.idempotencyKey, .text(idempotencyKey))
        set(c.plannedState, .text(planned?.state.rawValue))
        set(c.plannedErrorCode, .integer((planned?.error?.code.rawValue).map(Int64.init)))
        set(c.plannedErrorMessage, .text(planned?.error?.message))
        set(c.createdAt, .integer(createdAt))
        set(c.updatedAt, .integer(createdAt))
        set(c.deliveryCount, .integer(0))
        set(c.restoredFrom, .integer(restoredFrom.map(Int64.init)))
        set(c.applicationUsername, .text(applicationUsername))
        set(c.offerType, .text(offer?.type.rawValue))
        set(c.offerID, .text(offer?.id))
        set(c.offerPaymentMode, .text(offer?.paymentMode.rawValue))
        set(c.offerPeriod, .text(offer?.period.description))
        set(c.offerNonce, .text(offerNonce?.uuidString.lowercased()))
        set(c.customerID, .integer(customerID))
        set(c.appID, .integer(appID))
        return values
    }

    /// The transaction as `insert` stores it, without reading it back.
    package func transaction(id: UInt64) -> PaymentTransaction {
        let original = self.original ?? (id, purchaseDate)
        return PaymentTransaction(
            id: id, originalID: original.id, productID: productID, productType: productType, state: state,
            isFinished: false,
            quantity: quantity, purchaseDate: Date(ledgerMilliseconds: purchaseDate),
            originalPurchaseDate: Date(ledgerMilliseconds: original.purchaseDate),
            expirationDate: expirationDate.map(Date.init(ledgerMilliseconds:)), revocationDate: nil,
            revocationReason: nil,
            isUpgraded: isUpgraded, appAccountToken: appAccountToken, applicationUsername: applicationUsername,
            error: nil, reason: reason,
            subscriptionGroupID: subscriptionGroupID, offer: offer, storefront: storefront,
            environment: Ledger.environment,
            idempotencyKey: idempotencyKey, restoredFromID: restoredFrom,
            createdAt: Date(ledgerMilliseconds: createdAt),
            updatedAt: Date(ledgerMilliseconds: createdAt), finishedAt: nil, deliveryCount: 0, lastDeliveredAt: nil,
            customerID: customerID, appID: appID)
    }
}

extension Ledger {
    /// The environment recorded on every transaction: StoreKit's name for local testing.
    package static let environment = "xcode"
}
