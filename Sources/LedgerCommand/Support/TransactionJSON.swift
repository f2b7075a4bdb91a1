import Foundation
package import StoreLedger

/// A transaction written as JSON by hand, in the very bytes `Output.encoder` writes for it
/// (sorted keys, pretty-printed, nested at `depth`): `ledger list --json` of a large ledger
/// then costs what its text costs (JSONEncoder took eight times as long). A test compares the
/// two over every kind of transaction and seeded random strings.
package enum TransactionJSON {
    /// Appends `transaction` as a JSON object whose lines after the first are indented for
    /// `depth` levels of two spaces (the first line's indentation is the caller's).
    package static func append(_ t: PaymentTransaction, depth: Int, to out: inout String) {
        let inner = String(repeating: "  ", count: depth + 1)
        var first = true
        func key(_ name: String) {
            out += first ? "{\n" : ",\n"
            first = false
            out += inner + "\"" + name + "\" : "
        }
        func string(_ name: String, _ value: String?) {
            key(name)
            if let value { appendString(value, to: &out) } else { out += "null" }
        }
        func number(_ name: String, _ value: (some BinaryInteger)?) {
            key(name)
            out += value.map { String($0) } ?? "null"
        }
        func date(_ name: String, _ value: Date?) {
            string(name, value.map(InternetDate.string(from:)))
        }
        func bool(_ name: String, _ value: Bool) {
            key(name)
            out += value ? "true" : "false"
        }
        string("appAccountToken", t.appAccountToken?.uuidString)
        string("applicationUsername", t.applicationUsername)
        date("createdAt", t.createdAt)
        number("deliveryCount", t.deliveryCount)
        string("environment", t.environment)
        key("error")
        if let error = t.error {
            let nested = inner + "  "
            out += "{\n" + nested + "\"code\" : \(error.code.rawValue),\n" + nested + "\"message\" : "
            appendString(error.message, to: &out)
            out += ",\n" + nested + "\"name\" : "
            appendString(error.code.name, to: &out)
            out += "\n" + inner + "}"
        } else {
            out += "null"
        }
        date("expirationDate", t.expirationDate)
        date("finishedAt", t.finishedAt)
        number("id", t.id)
        string("idempotencyKey", t.idempotencyKey)
        bool("isFinished", t.isFinished)
        bool("isUpgraded", t.isUpgraded)
        date("lastDeliveredAt", t.lastDeliveredAt)
        key("offer")
        if let offer = t.offer {
            // Rare, and nested deeper: JSONEncoder's own output, indented to its depth.
            let encoded = (try? Output.encoder.encode(offer)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
            out += encoded.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\n" + inner)
        } else {
            out += "null"
        }
        number("originalID", t.originalID)
        date("originalPurchaseDate", t.originalPurchaseDate)
        string("productID", t.productID)
        string("productType", t.productType.rawValue)
        date("purchaseDate", t.purchaseDate)
        number("quantity", t.quantity)
        string("reason", t.reason.rawValue)
        number("restoredFromID", t.restoredFromID)
        date("revocationDate", t.revocationDate)
        number("revocationReason", t.revocationReason)
        string("state", t.state.rawValue)
        string("storefront", t.storefront)
        string("subscriptionGroupID", t.subscriptionGroupID)
        date("updatedAt", t.updatedAt)
        out += "\n" + String(repeating: "  ", count: depth) + "}"
    }

    /// A JSON string literal as JSONEncoder writes it (with `.withoutEscapingSlashes`): quotes,
    /// backslashes and control characters escaped, everything else as it is.
    package static func appendString(_ value: String, to out: inout String) {
        out += "\""
        guard value.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
            out += value  // nearly always: nothing to escape
            out += "\""
            return
        }
        var plainStart = value.unicodeScalars.startIndex
        var index = plainStart
        let scalars = value.unicodeScalars
        while index < scalars.endIndex {
            let scalar = scalars[index]
            let escape: String? = switch scalar {
            case "\"": "\\\""
            case "\\": "\\\\"
            case "\n": "\\n"
            case "\r": "\\r"
            case "\t": "\\t"
            case "\u{08}": "\\b"
            case "\u{0C}": "\\f"
            case _ where scalar.value < 0x20: "\\u00" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
            default: nil
            }
            if let escape {
                out.unicodeScalars += scalars[plainStart..<index]
                out += escape
                plainStart = scalars.index(after: index)
            }
            index = scalars.index(after: index)
        }
        out.unicodeScalars += scalars[plainStart..<scalars.endIndex]
        out += "\""
    }
}
