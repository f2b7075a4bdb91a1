import Foundation
import GRDB
package import LedgerEngine
import LedgerModel
import LedgerSigning

/// What a sandbox test asks an app receipt to be (`SKReceiptRefreshRequest`'s
/// `receiptProperties`): Volume Purchase Program states Apple lets the sandbox simulate.
package struct ReceiptProperties: Sendable, Equatable {
    /// The receipt has expired (its expiration date, field 21, is a day before it was made).
    package var isExpired = false
    /// The receipt is a Volume Purchase Program one (`ProductionVPPSandbox`), valid a year.
    package var isVolumePurchase = false

    package init(isExpired: Bool = false, isVolumePurchase: Bool = false) {
        self.isExpired = isExpired
        self.isVolumePurchase = isVolumePurchase
    }
}

/// Why an app receipt could not be made.
package enum ReceiptError: DescribedError, Equatable, Sendable {
    /// The customer has more purchases in the app than a receipt lists.
    case tooManyPurchases(limit: Int)
    /// Receipt properties were asked of a production store: Apple takes them in the sandbox only.
    case propertiesOutsideSandbox

    package var description: String {
        switch self {
        case .tooManyPurchases(let limit):
            "the customer has more than \(limit) purchases in the app: more than an app receipt lists here"
        case .propertiesOutsideSandbox:
            "receipt properties are for the sandbox and Xcode only (Apple: in production, pass nil)"
        }
    }
}

extension Ledger {
    /// This value's customer's app receipt on its device, as the App Store writes it now,
    /// signed with the ledger's identity (`AppReceipt`): its transactions are those StoreKit 2's
    /// `Transaction.all` shows (purchased or restored; a consumable until it is finished;
    /// not a payment that only changed a renewal), as Apple's receipts keep consumables
    /// only until they are finished and everything else for good. The hash is over the device's
    /// verification identifier (StoreKit's `AppStore.deviceVerificationID`, the receipt's
    /// `identifierForVendor`) and a new opaque value.
    /// `limit`: at most this many purchase records (`AppReceipt.maximumPurchases`; tests use
    /// fewer).
    /// - Throws: `ReceiptError`; `CustomerError` when the value names no customer or device.
    package func appReceipt(
        properties: ReceiptProperties = ReceiptProperties(), limit: Int = AppReceipt.maximumPurchases
    ) throws -> [UInt8] {
        try signedAppReceipt(properties: properties, limit: limit).bytes
    }

    /// `appReceipt(properties:limit:)`, with how many purchase records it lists.
    package func signedAppReceipt(
        properties: ReceiptProperties = ReceiptProperties(), limit: Int = AppReceipt.maximumPurchases
    ) throws -> (bytes: [UInt8], purchases: Int) {
        let (owner, device) = (try owner(), try deviceID())
        let (receipt, identity) = try read { db in
            let signer = try signer(db)
            let settings = signer.settings
            guard settings.environment != .production || properties == ReceiptProperties() else {
                throw ReceiptError.propertiesOutsideSandbox
            }
            let now = Date(ledgerMilliseconds: try storeNow(db))
            let app = AppTransactionPayload(
                settings: settings, identity: signer.identity, customer: owner.customer, app: owner.app,
                device: device, nonce: UUID(), now: now)
            let rows = try PaymentTransaction.fetchAll(
                db,
                sql: """
                    WHERE \(Owner.condition) AND state IN ('purchased', 'restored')
                      AND NOT (product_type = 'consumable' AND is_finished = 1) AND \(Self.notARenewalChange)
                    ORDER BY id LIMIT ?
                    """, arguments: owner.arguments + [limit + 1])
            guard rows.count <= limit else { throw ReceiptError.tooManyPurchases(limit: limit) }
            let receipt = AppReceipt(
                receiptType: Self.receiptType(settings.environment, volumePurchase: properties.isVolumePurchase),
                appItemID: app.appAppleId ?? 0, bundleID: app.bundleId, appVersion: app.applicationVersion,
                opaqueValue: (0..<16).map { _ in UInt8.random(in: .min ... .max) },
                deviceIdentifier: signer.identity.deviceVerificationID(ofCustomer: owner.customer, device: device),
                creationDate: now, originalAppVersion: app.originalApplicationVersion,
                originalPurchaseDate: Date(ledgerMilliseconds: app.originalPurchaseDate),
                expirationDate: properties.isExpired
                    ? now.addingTimeInterval(-86_400)
                    : properties.isVolumePurchase ? now.addingTimeInterval(365 * 86_400) : nil,
                purchases: rows.map(AppReceipt.Purchase.init))
            return (receipt, signer.identity)
        }
        return (try receipt.signed(by: identity), receipt.purchases.count)
    }

    /// The receipt type (field 0) of a store's environment, as Apple's receipts name it.
    private static func receiptType(_ environment: SigningEnvironment, volumePurchase: Bool) -> String {
        switch environment {
        case .xcode: "Xcode"
        case .sandbox: volumePurchase ? "ProductionVPPSandbox" : "ProductionSandbox"
        case .production: "Production"
        }
    }
}
