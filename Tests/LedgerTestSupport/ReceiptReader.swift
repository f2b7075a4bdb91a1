import Crypto
public import Foundation
import SwiftASN1
@_spi(CMS) @_spi(FixedExpiryValidationTime) import X509

/// Reads an app receipt as an app's own validation code does: the PKCS#7 container walked with
/// SwiftASN1 (not with the code that wrote it), its signature checked against a root
/// certificate, its hash recomputed from a device identifier.
public struct ReceiptContents: Sendable {
    /// The app's fields by type, as their value octets (the first of each; 17 is in `purchases`).
    public let fields: [Int: [UInt8]]
    /// Each in-app purchase record's fields by type.
    public let purchases: [[Int: [UInt8]]]
    /// The signed content, as it is.
    public let payload: [UInt8]

    /// Reads `receipt` (PKCS#7 `SignedData` with its content attached, in DER or, as Xcode
    /// writes it, BER).
    public init(_ receipt: [UInt8]) throws {
        let contentInfo = try Self.children(of: BER.parse(receipt))
        guard contentInfo.count == 2,
            try ASN1ObjectIdentifier(derEncoded: contentInfo[0]) == [1, 2, 840, 113549, 1, 7, 2]
        else { throw ReceiptReadError("not a PKCS#7 SignedData") }
        let signedData = try Self.children(of: try Self.only(Self.children(of: contentInfo[1])))
        // version, digestAlgorithms, encapContentInfo { eContentType, [0] { OCTET STRING } }, ...
        let encapsulated = try Self.children(of: signedData[2])
        guard encapsulated.count == 2 else { throw ReceiptReadError("the content is not attached") }
        payload = try Array(ASN1OctetString(berEncoded: try Self.only(Self.children(of: encapsulated[1]))).bytes)
        let attributes = try Self.attributes(payload)
        var fields: [Int: [UInt8]] = [:]
        var purchases: [[Int: [UInt8]]] = []
        for (type, value) in attributes {
            if type == 17 {
                purchases.append(Dictionary(try Self.attributes(value), uniquingKeysWith: { first, _ in first }))
            } else if fields[type] == nil {
                fields[type] = value
            }
        }
        self.fields = fields
        self.purchases = purchases
    }

    /// A field's value as text (a UTF8String or an IA5String); `nil` when absent.
    public static func text(_ value: [UInt8]?) throws -> String? {
        guard let value else { return nil }
        let node = try DER.parse(value)
        guard node.identifier == .utf8String || node.identifier == .ia5String, case .primitive(let bytes) = node.content
        else { throw ReceiptReadError("a value is not text") }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A field's value as an integer; `nil` when absent.
    public static func integer(_ value: [UInt8]?) throws -> Int? {
        try value.map { try Int(derEncoded: DER.parse($0)) }
    }

    /// The app field `type` as text.
    public func text(_ type: Int) throws -> String? { try Self.text(fields[type]) }

    /// The SHA-1 an app computes to check the receipt is its device's: of `device`'s 16 bytes,
    /// the opaque value (field 4), then field 2's value octets.
    public func expectedHash(device: UUID) -> [UInt8] {
        var digest = Insecure.SHA1()
        digest.update(data: withUnsafeBytes(of: device.uuid) { [UInt8]($0) })
        digest.update(data: fields[4] ?? [])
        digest.update(data: fields[2] ?? [])
        return [UInt8](digest.finalize())
    }

    /// Whether `receipt`'s signature is valid and its signer chains to `root` (DER), the
    /// certificates valid at `time` (the receipt's creation: a store's clock may run ahead).
    public static func isSignedByIdentity(_ receipt: [UInt8], root: [UInt8], at time: Date) async throws -> Bool {
        let result = await CMS.isValidAttachedSignature(
            signatureBytes: try withPrimitiveContent(receipt),
            trustRoots: CertificateStore([try Certificate(derEncoded: root)])
        ) { RFC5280Policy(fixedExpiryValidationTime: time) }
        if case .success = result { return true }
        return false
    }

    /// `receipt` with its content in one primitive OCTET STRING: swift-certificates reads no
    /// other form, and Xcode writes the content in a constructed one (the signature, over the
    /// content's octets, holds in both).
    private static func withPrimitiveContent(_ receipt: [UInt8]) throws -> [UInt8] {
        let explicit = ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)
        let contentInfo = try children(of: BER.parse(receipt))
        let signedData = try children(of: try only(children(of: contentInfo[1])))
        let encapsulated = try children(of: signedData[2])
        let content = try ASN1OctetString(berEncoded: try only(children(of: encapsulated[1])))
        var coder = DER.Serializer()
        try coder.appendConstructedNode(identifier: .sequence) { coder in
            coder.serialize(contentInfo[0])
            try coder.appendConstructedNode(identifier: explicit) { coder in
                try coder.appendConstructedNode(identifier: .sequence) { coder in
                    coder.serialize(signedData[0])
                    coder.serialize(signedData[1])
                    try coder.appendConstructedNode(identifier: .sequence) { coder in
                        coder.serialize(encapsulated[0])
                        try coder.appendConstructedNode(identifier: explicit) { coder in try coder.serialize(content) }
                    }
                    for node in signedData.dropFirst(3) { coder.serialize(node) }
                }
            }
        }
        return coder.serializedBytes
    }

    private static func attributes(_ set: [UInt8]) throws -> [(Int, [UInt8])] {
        let node = try DER.parse(set)
        guard node.identifier == .set else { throw ReceiptReadError("the payload is not a SET") }
        return try children(of: node).map { attribute in
            let parts = try children(of: attribute)
            guard parts.count == 3, try Int(derEncoded: parts[1]) == 1 else {
                throw ReceiptReadError("an attribute is not SEQUENCE { type, 1, value }")
            }
            return (try Int(derEncoded: parts[0]), Array(try ASN1OctetString(derEncoded: parts[2]).bytes))
        }
    }

    private static func children(of node: ASN1Node) throws -> [ASN1Node] {
        guard case .constructed(let nodes) = node.content else { throw ReceiptReadError("expected a constructed node") }
        return Array(nodes)
    }

    private static func only(_ nodes: [ASN1Node]) throws -> ASN1Node {
        guard nodes.count == 1 else { throw ReceiptReadError("expected one node") }
        return nodes[0]
    }
}

/// A receipt that does not read as one.
public struct ReceiptReadError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
