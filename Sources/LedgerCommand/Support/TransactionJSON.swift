import Foundation
package import StoreLedger

/// A transaction written as JSON by hand, in the very bytes `Output.encoder` writes for it
/// (sorted keys, pretty-printed, nested at `depth`): `ledger list --json` of a large ledger
/// then costs about what its text costs (JSONEncoder took eight times as long). A test compares
/// the two over every kind of transaction and seeded random strings.
package enum TransactionJSON {
    /// Appends `transaction` as a JSON object whose lines after the first are indented for
    /// `depth` levels of two spaces (the first line's indentation is the caller's); with
    /// `customer` and `app`, its owner's name and its app's bundle identifier as the fields
    /// `customer` and `app` (`ledger list`'s).
    package static func append(
        _ t: PaymentTransaction, customer: String? = nil, app: String? = nil, depth: Int, to out: inout [UInt8]
    ) {
        var object = ObjectWriter<PaymentTransaction.CodingKeys>(depth: depth, out: out)
        out = []  // the writer holds the buffer meanwhile: no copy
        if let app { object.string(named: "app", app) }
        object.string(.appAccountToken, t.appAccountToken?.uuidString)
        object.string(.applicationUsername, t.applicationUsername)
        object.date(.createdAt, t.createdAt)
        if let customer { object.string(named: "customer", customer) }
        object.number(.deliveryCount, t.deliveryCount)
        object.string(.environment, t.environment)
        object.key(.error)
        if let error = t.error {
            var nested = ObjectWriter<ErrorKey>(depth: depth + 1, out: object.out)
            object.out = []
            nested.number(.code, error.code.rawValue)
            nested.string(.message, error.message)
            nested.string(.name, error.code.name)
            object.out = nested.close()
        } else {
            object.out += "null".utf8
        }
        object.date(.expirationDate, t.expirationDate)
        object.date(.finishedAt, t.finishedAt)
        object.number(.id, t.id)
        object.string(.idempotencyKey, t.idempotencyKey)
        object.bool(.isFinished, t.isFinished)
        object.bool(.isUpgraded, t.isUpgraded)
        object.date(.lastDeliveredAt, t.lastDeliveredAt)
        object.key(.offer)
        if let offer = t.offer {
            // Rare, and nested deeper: JSONEncoder's own output, indented to its depth.
            let encoded = (try? Output.encoder.encode(offer)).map { Array($0) } ?? Array("null".utf8)
            for byte in encoded {
                object.out.append(byte)
                if byte == UInt8(ascii: "\n") { object.indent(depth + 1) }
            }
        } else {
            object.out += "null".utf8
        }
        object.number(.originalID, t.originalID)
        object.date(.originalPurchaseDate, t.originalPurchaseDate)
        object.string(.productID, t.productID)
        object.string(.productType, t.productType.rawValue)
        object.date(.purchaseDate, t.purchaseDate)
        object.number(.quantity, t.quantity)
        object.string(.reason, t.reason.rawValue)
        object.number(.restoredFromID, t.restoredFromID)
        object.date(.revocationDate, t.revocationDate)
        object.number(.revocationReason, t.revocationReason)
        object.string(.state, t.state.rawValue)
        object.string(.storefront, t.storefront)
        object.string(.subscriptionGroupID, t.subscriptionGroupID)
        object.date(.updatedAt, t.updatedAt)
        out = object.close()
    }

    /// A JSON string literal as JSONEncoder writes it (with `.withoutEscapingSlashes`): quotes,
    /// backslashes and control characters escaped, everything else as it is.
    package static func appendString(_ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        guard value.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
            out += value.utf8  // nearly always: nothing to escape, one copy
            return out.append(UInt8(ascii: "\""))
        }
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += #"\""#.utf8
            case UInt8(ascii: "\\"): out += #"\\"#.utf8
            case 0x0A: out += #"\n"#.utf8
            case 0x0D: out += #"\r"#.utf8
            case 0x09: out += #"\t"#.utf8
            case 0x08: out += #"\b"#.utf8
            case 0x0C: out += #"\f"#.utf8
            case ..<0x20:
                out += #"\u00"#.utf8
                out.append(hexDigit(byte >> 4))
                out.append(hexDigit(byte & 0xF))
            default: out.append(byte)  // UTF-8 bytes of other characters pass as they are
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Indentation, copied a slice at a time.
    private static let spaces = [UInt8](repeating: UInt8(ascii: " "), count: 64)

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    /// The keys of a transaction's error, as `TransactionError` encodes them.
    private enum ErrorKey: String, CodingKey { case code, message, name }

    /// One JSON object's keys and values, written in the order given (sorted by the caller).
    private struct ObjectWriter<Key: CodingKey> {
        let depth: Int
        var out: [UInt8]
        private var isEmpty = true

        init(depth: Int, out: [UInt8]) {
            self.depth = depth
            self.out = out
        }

        mutating func key(_ name: Key) {
            key(named: name.stringValue)
        }

        /// A key the object's type does not have (`customer`), in its sorted place.
        mutating func key(named name: String) {
            out += (isEmpty ? "{\n" : ",\n").utf8
            isEmpty = false
            indent(depth + 1)
            out.append(UInt8(ascii: "\""))
            out += name.utf8
            out += "\" : ".utf8
        }

        mutating func indent(_ levels: Int) {
            out += TransactionJSON.spaces.prefix(2 * levels)
        }

        mutating func string(_ name: Key, _ value: String?) {
            string(named: name.stringValue, value)
        }

        mutating func string(named name: String, _ value: String?) {
            key(named: name)
            if let value { TransactionJSON.appendString(value, to: &out) } else { out += "null".utf8 }
        }

        mutating func number(_ name: Key, _ value: (some BinaryInteger)?) {
            key(name)
            guard let value else {
                out += "null".utf8
                return
            }
            if let small = Int64(exactly: value) { Digits.append(small, to: &out) } else { out += String(value).utf8 }
        }

        mutating func date(_ name: Key, _ value: Date?) {
            key(name)
            guard let value else {
                out += "null".utf8
                return
            }
            out.append(UInt8(ascii: "\""))
            InternetDate.append(value, to: &out)
            out.append(UInt8(ascii: "\""))
        }

        mutating func bool(_ name: Key, _ value: Bool) {
            key(name)
            out += (value ? "true" : "false").utf8
        }

        /// The buffer with the object closed.
        mutating func close() -> [UInt8] {
            out.append(UInt8(ascii: "\n"))
            indent(depth)
            out.append(UInt8(ascii: "}"))
            return out
        }
    }
}

/// Decimal digits written into a byte buffer, without making a String for each number.
enum Digits {
    /// `value` in decimal, padded with zeros to at least `width` digits.
    static func append(_ value: Int64, width: Int = 1, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        let start = out.count
        repeat {  // least significant first, then reversed in place
            out.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        while out.count - start < width { out.append(UInt8(ascii: "0")) }
        out[start...].reverse()
    }
}
