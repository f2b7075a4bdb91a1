import Crypto
package import Foundation
package import LedgerModel
import SwiftASN1
@_spi(CMS) import X509

/// The app receipt StoreKit 1 apps read from `Bundle.main.appStoreReceiptURL`: a PKCS#7
/// `SignedData` whose content is a DER `SET OF ReceiptAttribute`, each
/// `SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }`, the value's octets being
/// the DER encoding of the field (a UTF8String, an IA5String date, an INTEGER, or a nested set
/// for an in-app purchase), except the opaque value and the hash, which are raw bytes. Field
/// numbers and encodings are those of Apple's "Receipt Fields" (the archived Receipt Validation
/// Programming Guide); field 0, the receipt type, is undocumented but in every receipt Apple and
/// Xcode write.
package struct AppReceipt: Sendable, Equatable {
    /// At most this many in-app purchase records: a receipt is read whole by the app and sent
    /// whole to its server, so it is bounded (a record is about 200 bytes).
    package static let maximumPurchases = 10_000

    /// `Production`, `ProductionSandbox` or `Xcode` (field 0).
    package var receiptType: String
    /// The app's Apple ID (field 1; 0 outside production, as Apple's sandbox writes).
    package var appItemID: Int64
    package var bundleID: String
    package var appVersion: String
    /// Random bytes of this receipt (field 4), hashed with the device's identifier.
    package var opaqueValue: [UInt8]
    /// The identifier of the device the receipt is for (`identifierForVendor`, here the
    /// device's verification identifier): only its hash is written (field 5).
    package var deviceIdentifier: UUID
    package var creationDate: Date
    package var originalAppVersion: String
    package var originalPurchaseDate: Date
    /// The receipt's expiration (field 21): Volume Purchase Program receipts only.
    package var expirationDate: Date?
    package var purchases: [Purchase]

    /// One in-app purchase record (field 17).
    package struct Purchase: Sendable, Equatable {
        package var quantity: Int
        package var productID: String
        package var transactionID: String
        package var originalTransactionID: String
        package var purchaseDate: Date
        package var originalPurchaseDate: Date
        /// A subscription's (field 1708, written empty otherwise, as Apple does).
        package var expirationDate: Date?
        /// A refund's or a revocation's (field 1712, written empty otherwise).
        package var cancellationDate: Date?
        package var webOrderLineItemID: Int64?
        package var isTrialPeriod: Bool
        package var isInIntroOfferPeriod: Bool
        package var promotionalOfferID: String?

        package init(
            quantity: Int, productID: String, transactionID: String, originalTransactionID: String,
            purchaseDate: Date, originalPurchaseDate: Date, expirationDate: Date? = nil,
            cancellationDate: Date? = nil, webOrderLineItemID: Int64? = nil, isTrialPeriod: Bool = false,
            isInIntroOfferPeriod: Bool = false, promotionalOfferID: String? = nil
        ) {
            self.quantity = quantity
            self.productID = productID
            self.transactionID = transactionID
            self.originalTransactionID = originalTransactionID
            self.purchaseDate = purchaseDate
            self.originalPurchaseDate = originalPurchaseDate
            self.expirationDate = expirationDate
            self.cancellationDate = cancellationDate
            self.webOrderLineItemID = webOrderLineItemID
            self.isTrialPeriod = isTrialPeriod
            self.isInIntroOfferPeriod = isInIntroOfferPeriod
            self.promotionalOfferID = promotionalOfferID
        }
    }

    package init(
        receiptType: String, appItemID: Int64, bundleID: String, appVersion: String, opaqueValue: [UInt8],
        deviceIdentifier: UUID, creationDate: Date, originalAppVersion: String, originalPurchaseDate: Date,
        expirationDate: Date? = nil, purchases: [Purchase]
    ) {
        self.receiptType = receiptType
        self.appItemID = appItemID
        self.bundleID = bundleID
        self.appVersion = appVersion
        self.opaqueValue = opaqueValue
        self.deviceIdentifier = deviceIdentifier
        self.creationDate = creationDate
        self.originalAppVersion = originalAppVersion
        self.originalPurchaseDate = originalPurchaseDate
        self.expirationDate = expirationDate
        self.purchases = purchases
    }

    /// The receipt signed with `identity`: a PKCS#7 `SignedData` with the payload attached,
    /// signed by the identity's leaf key (ECDSA P-256 with SHA-256, no signed attributes, as
    /// Apple's receipts carry none) and carrying the leaf and intermediate certificates, so that
    /// `openssl cms -verify` checks it against the identity's root. Laid out as each writer of
    /// receipts lays it out: the App Store's (`Production`, `ProductionSandbox`) in DER, its
    /// fields a DER-sorted set; Xcode's with the content in a constructed OCTET STRING holding one
    /// primitive OCTET STRING (BER), its fields in the order of their numbers. Receipt parsers
    /// written against real receipts rely on those layouts (one takes an `Xcode` receipt for
    /// Xcode's nesting).
    package func signed(by identity: SigningIdentity) throws -> [UInt8] {
        let xcode = receiptType == "Xcode"
        let signed = try CMS.sign(
            try payload(sorted: !xcode), signatureAlgorithm: .ecdsaWithSHA256,
            additionalIntermediateCertificates: [try Certificate(derEncoded: identity.certificates.intermediate)],
            certificate: try Certificate(derEncoded: identity.certificates.leaf),
            privateKey: Certificate.PrivateKey(identity.privateKey), detached: false)
        return xcode ? try Self.nestingContent(signed) : signed
    }

    /// `signed`, its content's OCTET STRING wrapped in a constructed one, as Xcode writes it (the
    /// signature, over the content's octets, holds: BER gives both forms the same octets).
    static func nestingContent(_ signed: [UInt8]) throws -> [UInt8] {
        func children(_ node: ASN1Node) throws -> [ASN1Node] {
            guard case .constructed(let nodes) = node.content else {
                throw ASN1Error.invalidASN1Object(reason: "a CMS node is not constructed")
            }
            return Array(nodes)
        }
        let explicit = ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)
        let contentInfo = try children(try DER.parse(signed))
        let signedData = try children(try children(contentInfo[1])[0])
        let encapsulated = try children(signedData[2])
        let content = try children(encapsulated[1])[0]
        var coder = DER.Serializer()
        coder.appendConstructedNode(identifier: .sequence) { coder in
            coder.serialize(contentInfo[0])
            coder.appendConstructedNode(identifier: explicit) { coder in
                coder.appendConstructedNode(identifier: .sequence) { coder in
                    coder.serialize(signedData[0])
                    coder.serialize(signedData[1])
                    coder.appendConstructedNode(identifier: .sequence) { coder in
                        coder.serialize(encapsulated[0])
                        coder.appendConstructedNode(identifier: explicit) { coder in
                            coder.appendConstructedNode(identifier: .octetString) { coder in
                                coder.serialize(content)
                            }
                        }
                    }
                    for node in signedData.dropFirst(3) { coder.serialize(node) }
                }
            }
        }
        return coder.serializedBytes
    }

    /// The SHA-1 the app checks (field 5): of the device identifier's 16 bytes, the opaque
    /// value, then the bundle identifier field's value (its DER UTF8String, tag and length
    /// included), in that order, as Apple documents.
    package var hash: [UInt8] {
        get throws {
            let uuid = deviceIdentifier.uuid
            let device = withUnsafeBytes(of: uuid) { [UInt8]($0) }
            var digest = Insecure.SHA1()
            digest.update(data: device)
            digest.update(data: opaqueValue)
            digest.update(data: try Self.der(ASN1UTF8String(bundleID)))
            return [UInt8](digest.finalize())
        }
    }

    /// The signed content: the set of the receipt's fields, `sorted` as DER orders a set (the App
    /// Store's receipts), else in the order of their numbers (Xcode's).
    package func payload(sorted: Bool = true) throws -> [UInt8] {
        var fields: [Field] = [
            Field(0, try Self.der(ASN1UTF8String(receiptType))),
            Field(1, try Self.der(appItemID)),
            Field(2, try Self.der(ASN1UTF8String(bundleID))),
            Field(3, try Self.der(ASN1UTF8String(appVersion))),
            Field(4, opaqueValue),
            Field(5, try hash),
            Field(12, try Self.date(creationDate)),
            Field(18, try Self.date(originalPurchaseDate)),
            Field(19, try Self.der(ASN1UTF8String(originalAppVersion))),
        ]
        if let expirationDate { fields.append(Field(21, try Self.date(expirationDate))) }
        for purchase in purchases { fields.append(Field(17, try Self.set(purchase.fields(), sorted: sorted))) }
        return try Self.set(fields, sorted: sorted)
    }

    /// A field: its type, version 1 (as every receipt has), and the octets of its value.
    struct Field: DERSerializable {
        let type: Int
        let value: [UInt8]

        init(_ type: Int, _ value: [UInt8]) {
            self.type = type
            self.value = value
        }

        func serialize(into coder: inout DER.Serializer) throws {
            try coder.appendConstructedNode(identifier: .sequence) { coder in
                try coder.serialize(type)
                try coder.serialize(1)
                try coder.serialize(ASN1OctetString(contentBytes: value[...]))
            }
        }
    }

    static func der(_ value: some DERSerializable) throws -> [UInt8] {
        var coder = DER.Serializer()
        try coder.serialize(value)
        return coder.serializedBytes
    }

    /// A date as receipts write it: an IA5String of RFC 3339 in UTC, to the second
    /// (`2026-11-29T12:00:00Z`); an empty one for none.
    static func date(_ date: Date?) throws -> [UInt8] {
        guard let date else { return try der(ASN1IA5String(contentBytes: [])) }
        return try der(ASN1IA5String(contentBytes: ArraySlice(date.ISO8601Format().utf8)))
    }

    /// The `SET OF` the fields: `sorted` by their encoding, as DER orders a set, else in the order of
    /// their numbers.
    static func set(_ fields: [Field], sorted: Bool) throws -> [UInt8] {
        var coder = DER.Serializer()
        if sorted {
            try coder.serializeSetOf(fields)
        } else {
            try coder.appendConstructedNode(identifier: .set) { coder in
                for field in fields.sorted(by: { $0.type < $1.type }) { try coder.serialize(field) }
            }
        }
        return coder.serializedBytes
    }
}

extension AppReceipt.Purchase {
    /// The record of `transaction`, as a receipt lists it: a refund's or a revocation's date is
    /// its cancellation date; an auto-renewable subscription's web order line item is its
    /// purchase's id (a restored copy shares its purchase's, as in its signed payload); a free
    /// trial is a trial period, another introductory offer an intro offer period.
    package init(_ transaction: PaymentTransaction) {
        let introductory = transaction.offer?.type == .introductory
        self.init(
            quantity: transaction.quantity, productID: transaction.productID, transactionID: String(transaction.id),
            originalTransactionID: String(transaction.originalID), purchaseDate: transaction.purchaseDate,
            originalPurchaseDate: transaction.originalPurchaseDate, expirationDate: transaction.expirationDate,
            cancellationDate: transaction.revocationDate,
            webOrderLineItemID: transaction.productType == .autoRenewable
                ? Int64(clamping: transaction.restoredFromID ?? transaction.id) : nil,
            isTrialPeriod: introductory && transaction.offer?.paymentMode == .freeTrial,
            isInIntroOfferPeriod: introductory && transaction.offer?.paymentMode != .freeTrial,
            promotionalOfferID: transaction.offer?.type == .promotional ? transaction.offer?.id : nil)
    }

    /// The record's fields (Apple's numbers: 1701 on).
    fileprivate func fields() throws -> [AppReceipt.Field] {
        typealias Field = AppReceipt.Field
        var fields = [
            Field(1701, try AppReceipt.der(quantity)),
            Field(1702, try AppReceipt.der(ASN1UTF8String(productID))),
            Field(1703, try AppReceipt.der(ASN1UTF8String(transactionID))),
            Field(1704, try AppReceipt.date(purchaseDate)),
            Field(1705, try AppReceipt.der(ASN1UTF8String(originalTransactionID))),
            Field(1706, try AppReceipt.date(originalPurchaseDate)),
            Field(1708, try AppReceipt.date(expirationDate)),
            Field(1712, try AppReceipt.date(cancellationDate)),
            Field(1713, try AppReceipt.der(isTrialPeriod ? 1 : 0)),
            Field(1719, try AppReceipt.der(isInIntroOfferPeriod ? 1 : 0)),
        ]
        if let webOrderLineItemID { fields.append(Field(1711, try AppReceipt.der(webOrderLineItemID))) }
        if let promotionalOfferID {
            fields.append(Field(1721, try AppReceipt.der(ASN1UTF8String(promotionalOfferID))))
        }
        return fields
    }
}
