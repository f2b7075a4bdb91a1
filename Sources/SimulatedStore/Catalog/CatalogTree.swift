import Foundation

/// A parsed product file as one flat array of nodes over the file's bytes.
///
/// Why not Foundation's `JSONSerialization`: on Linux its tree of boxed values costs about 26
/// times the file's size (a 51 MB file of 10,000 products took 1.3 GB). Here each value is one
/// 16-byte node, and strings and numbers stay bytes until they are read, so a file costs about
/// twice its size while it is read (see PERFORMANCE.md).
///
/// The JSON reader is strict (RFC 8259): UTF-8 only (a leading byte order mark is skipped), no
/// trailing commas, comments or control characters in strings, no lone surrogate escapes, and
/// at most `maximumDepth` nested arrays and objects. A key given twice in one object is refused
/// (`CatalogTree(json:)` throws): readers disagree on which of the two it means.
package struct CatalogTree {
    package enum Kind: UInt8 { case null, boolean, number, string, array, object, other }

    /// One value. For a string, number or `other`, its text is `bytes[start..<start + length]`
    /// (a string's without its quotes, still escaped when `flag` is set); `flag` is a boolean's
    /// value. `end` is the index of the node after this value and everything inside it.
    package struct Node {
        package var kind: Kind
        package var flag: Bool
        package var start: UInt32
        package var length: UInt32
        package var end: UInt32
    }

    /// Arrays and objects nested deeper than this are refused (the reader keeps its own stack,
    /// so depth cannot overflow the thread's; the limit bounds that stack).
    package static let maximumDepth = 512

    private(set) var bytes: [UInt8]
    private(set) var nodes: [Node] = []

    /// The root value's node.
    package let root = 0

    // MARK: - Reading a node

    package func kind(_ node: Int) -> Kind { nodes[node].kind }

    package func boolean(_ node: Int) -> Bool { nodes[node].flag }

    /// A string's value, a number's text or an `other` value's type name.
    package func text(_ node: Int) -> String {
        let value = nodes[node]
        let range = Int(value.start)..<Int(value.start + value.length)
        guard value.kind == .string, value.flag else {
            return String(decoding: bytes[range], as: UTF8.self)
        }
        return Self.unescape(bytes[range])
    }

    /// The nodes of an array's elements, in order.
    package func elements(_ node: Int) -> [Int] {
        var elements: [Int] = []
        var child = node + 1
        while child < Int(nodes[node].end) {
            elements.append(child)
            child = Int(nodes[child].end)
        }
        return elements
    }

    /// An object's members in file order: the key's node, then the value's.
    package func members(_ node: Int) -> [(key: Int, value: Int)] {
        var members: [(key: Int, value: Int)] = []
        var key = node + 1
        while key < Int(nodes[node].end) {
            members.append((key, key + 1))
            key = Int(nodes[key + 1].end)
        }
        return members
    }

    /// The value of an object's member `name`, its last when the key is given twice.
    package func member(_ name: String, of node: Int) -> Int? {
        var found: Int?
        var key = node + 1
        while key < Int(nodes[node].end) {
            if isKey(key, named: name) { found = key + 1 }
            key = Int(nodes[key + 1].end)
        }
        return found
    }

    /// Byte for byte, escaped or not (`String`'s `==` would equate canonically equivalent
    /// spellings, which are two keys to JSON).
    private func isKey(_ key: Int, named name: String) -> Bool {
        let node = nodes[key]
        guard !node.flag else { return text(key).utf8.elementsEqual(name.utf8) }
        return bytes[Int(node.start)..<Int(node.start + node.length)].elementsEqual(name.utf8)
    }

    // MARK: - Building from a property list

    /// The tree of a value read by `PropertyListSerialization`: its strings and numbers are
    /// written out as bytes (unescaped), dates and data as `other` nodes named by their type.
    /// A binary property list may name one object many times, each a copy here: the tree may
    /// hold at most `budget` nodes and bytes, and `maximumDepth` levels.
    /// - Throws: `SyntaxError` past either limit.
    package init(propertyList value: Any, budget: Int) throws {
        bytes = []
        try append(propertyList: value, depth: 0, budget: budget)
    }

    private mutating func append(propertyList value: Any, depth: Int, budget: Int) throws {
        guard nodes.count + bytes.count < budget else {
            throw SyntaxError(description: "the property list holds more than \(budget) values and bytes")
        }
        let index = nodes.count
        if let string = value as? String {
            appendText(.string, string)
        } else if type(of: value) == Bool.self, let bool = value as? Bool {
            nodes.append(Node(kind: .boolean, flag: bool, start: 0, length: 0, end: 0))
        } else if let number = value as? NSNumber {
            appendText(.number, number.stringValue)
        } else if value is [Any] || value is [String: Any] {
            guard depth < Self.maximumDepth else {
                throw SyntaxError(description: "arrays and dictionaries nested more than \(Self.maximumDepth) deep")
            }
            if let array = value as? [Any] {
                nodes.append(Node(kind: .array, flag: false, start: 0, length: 0, end: 0))
                for element in array { try append(propertyList: element, depth: depth + 1, budget: budget) }
            } else if let dictionary = value as? [String: Any] {
                nodes.append(Node(kind: .object, flag: false, start: 0, length: 0, end: 0))
                for key in dictionary.keys.sorted() {
                    appendText(.string, key)
                    nodes[nodes.count - 1].end = UInt32(nodes.count)
                    try append(propertyList: dictionary[key]!, depth: depth + 1, budget: budget)
                }
            }
        } else {
            appendText(.other, "\(type(of: value))")
        }
        nodes[index].end = UInt32(nodes.count)
    }

    private mutating func appendText(_ kind: Kind, _ text: String) {
        let start = UInt32(bytes.count)
        bytes.append(contentsOf: text.utf8)
        nodes.append(Node(kind: kind, flag: false, start: start, length: UInt32(bytes.count) - start, end: 0))
    }

    // MARK: - Reading JSON

    /// Why a file is not JSON: what was found, and where (line and column, from 1).
    package struct SyntaxError: Error, CustomStringConvertible {
        package let description: String
    }

    /// Parses `bytes` (at most 4 GiB: node offsets are 32-bit) as one JSON value.
    /// - Throws: `SyntaxError`.
    package init(json bytes: [UInt8]) throws {
        precondition(bytes.count < Int(UInt32.max), "product files are limited far below 4 GiB")
        self.bytes = bytes
        var reader = JSONReader(bytes: bytes)
        nodes = try reader.read()
        if let key = firstRepeatedKey() {
            throw SyntaxError(description: "the key \"\(key)\" is given twice in one object")
        }
    }

    /// The first key given twice in one object, decoded (`"a"` and `"\u0061"` are one key);
    /// `nil` when none is. One pass over the nodes.
    private func firstRepeatedKey() -> String? {
        for node in nodes.indices where nodes[node].kind == .object {
            var seen = Set<String>()
            for (key, _) in members(node) where !seen.insert(text(key)).inserted {
                return String(text(key).prefix(64))
            }
        }
        return nil
    }

    /// The first key given twice in one object of the JSON text `bytes`; `nil` when there is
    /// none, or `bytes` is not JSON.
    fileprivate static func repeatedKey(inJSON bytes: [UInt8]) -> String? {
        guard bytes.count < Int(UInt32.max) else { return nil }
        var reader = JSONReader(bytes: bytes)
        guard let nodes = try? reader.read() else { return nil }
        return CatalogTree(nodes: nodes, bytes: bytes).firstRepeatedKey()
    }

    private init(nodes: [Node], bytes: [UInt8]) {
        self.nodes = nodes
        self.bytes = bytes
    }

    fileprivate static func unescape(_ escaped: ArraySlice<UInt8>) -> String {
        var scalars = String.UnicodeScalarView()
        var utf8: [UInt8] = []
        var index = escaped.startIndex
        func flush() {
            scalars.append(contentsOf: String(decoding: utf8, as: UTF8.self).unicodeScalars)
            utf8.removeAll(keepingCapacity: true)
        }
        while index < escaped.endIndex {
            let byte = escaped[index]
            guard byte == UInt8(ascii: "\\") else {
                utf8.append(byte)
                index += 1
                continue
            }
            flush()
            let code = escaped[index + 1]
            index += 2
            switch code {
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"):
                // The reader checked the escapes: a high surrogate is followed by a low one.
                var value = JSONReader.hexValue(escaped, at: index)
                index += 4
                if (0xD800...0xDBFF).contains(value) {
                    let low = JSONReader.hexValue(escaped, at: index + 2)
                    value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
                    index += 6
                }
                scalars.append(Unicode.Scalar(value)!)
            default: scalars.append(Unicode.Scalar(code))  // \" \\ \/
            }
        }
        flush()
        return String(scalars)
    }
}

/// JSON text as the ledger's readers take it.
package enum JSONText {
    /// The first key given twice in one object of `bytes` (decoded, at most 64 characters);
    /// `nil` when there is none, or `bytes` is not JSON (its decoder says so then). A catalog
    /// file and a request to the App Store Server API with one are refused: readers disagree on
    /// which of the two values it means (Foundation's took the first, the catalog's the last).
    package static func repeatedKey(in bytes: [UInt8]) -> String? {
        CatalogTree.repeatedKey(inJSON: bytes)
    }
}

/// The JSON reader behind `CatalogTree(json:)`: one pass, with its own stack of open arrays
/// and objects.
private struct JSONReader {
    package let bytes: [UInt8]
    package var position = 0
    package var nodes: [CatalogTree.Node] = []

    package init(bytes: [UInt8]) {
        self.bytes = bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
    }

    private struct Open {
        package let node: Int
        package let isObject: Bool
        package var count = 0
    }

    package mutating func read() throws -> [CatalogTree.Node] {
        var stack: [Open] = []
        skipSpace()
        try readValue(&stack)
        while var open = stack.popLast() {
            skipSpace()
            let closing = UInt8(ascii: open.isObject ? "}" : "]")
            // Inside a container: its end, or a comma and the next member or element.
            if peek() == closing {
                position += 1
                nodes[open.node].end = UInt32(nodes.count)
                continue
            }
            if open.count > 0 {
                try expect(",", "a comma or \(open.isObject ? "}" : "]")")
                skipSpace()
            }
            open.count += 1
            if open.isObject {
                guard peek() == UInt8(ascii: "\"") else { throw failure(expected: "a string key") }
                try readString()
                skipSpace()
                try expect(":", "a colon after the key")
                skipSpace()
            }
            stack.append(open)
            try readValue(&stack)
        }
        skipSpace()
        guard position == bytes.count else { throw failure(expected: "the end of the file after the value") }
        return nodes
    }

    /// Reads a scalar, or opens an array or object (pushed onto `stack`).
    private mutating func readValue(_ stack: inout [Open]) throws {
        guard let byte = peek() else { throw failure(expected: "a value") }
        switch byte {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            guard stack.count < CatalogTree.maximumDepth else {
                throw CatalogTree.SyntaxError(
                    description:
                        "arrays and objects nested more than \(CatalogTree.maximumDepth) deep at \(location(position))")
            }
            position += 1
            stack.append(Open(node: nodes.count, isObject: byte == UInt8(ascii: "{")))
            nodes.append(
                .init(kind: byte == UInt8(ascii: "{") ? .object : .array, flag: false, start: 0, length: 0, end: 0))
        case UInt8(ascii: "\""):
            try readString()
        case UInt8(ascii: "t"): try readLiteral("true", .boolean, true)
        case UInt8(ascii: "f"): try readLiteral("false", .boolean, false)
        case UInt8(ascii: "n"): try readLiteral("null", .null, false)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            try readNumber()
        default:
            throw failure(expected: "a value")
        }
    }

    private mutating func readLiteral(_ word: String, _ kind: CatalogTree.Kind, _ flag: Bool) throws {
        guard bytes[position...].starts(with: word.utf8) else { throw failure(expected: "a value") }
        let start = position
        position += word.utf8.count
        appendLeaf(kind, flag: flag, start: start)
    }

    /// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
    private mutating func readNumber() throws {
        let start = position
        if peek() == UInt8(ascii: "-") { position += 1 }
        if peek() == UInt8(ascii: "0") {
            position += 1
        } else {
            guard try digits() else { throw failure(expected: "a digit") }
        }
        if peek() == UInt8(ascii: ".") {
            position += 1
            guard try digits() else { throw failure(expected: "a digit after the decimal point") }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            position += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { position += 1 }
            guard try digits() else { throw failure(expected: "a digit in the exponent") }
        }
        appendLeaf(.number, flag: false, start: start)
    }

    /// Skips digits; whether there was one.
    private mutating func digits() throws -> Bool {
        let start = position
        while let byte = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { position += 1 }
        return position > start
    }

    private mutating func readString() throws {
        position += 1  // the opening quote
        let start = position
        var escaped = false
        var ascii = true
        while true {
            guard let byte = peek() else { throw failure(expected: "the string's closing quote") }
            switch byte {
            case UInt8(ascii: "\""):
                if !ascii { try checkUTF8(from: start) }
                nodes.append(
                    .init(
                        kind: .string, flag: escaped, start: UInt32(start), length: UInt32(position - start),
                        end: UInt32(nodes.count + 1)))
                position += 1
                return
            case UInt8(ascii: "\\"):
                escaped = true
                try readEscape()
            case 0..<0x20:
                throw failure(
                    expected: "an escaped control character (U+\(String(format: "%04X", byte))) in the string")
            default:
                if byte >= 0x80 { ascii = false }
                position += 1
            }
        }
    }

    private mutating func readEscape() throws {
        let at = position
        position += 1
        guard let code = peek() else { throw failure(expected: "an escape") }
        position += 1
        switch code {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            return
        case UInt8(ascii: "u"):
            let value = try hex()
            if (0xDC00...0xDFFF).contains(value) { throw lone(at) }
            guard (0xD800...0xDBFF).contains(value) else { return }
            guard bytes[position...].starts(with: [UInt8(ascii: "\\"), UInt8(ascii: "u")]) else { throw lone(at) }
            position += 2
            guard (0xDC00...0xDFFF).contains(try hex()) else { throw lone(at) }
        default:
            position = at
            throw failure(expected: "an escape such as \\n, \\\" or \\u00E9")
        }
    }

    private func lone(_ at: Int) -> CatalogTree.SyntaxError {
        .init(description: "a \\u escape of half a surrogate pair at \(location(at))")
    }

    private mutating func hex() throws -> UInt32 {
        guard position + 4 <= bytes.count, (0..<4).allSatisfy({ Self.hexDigit(bytes[position + $0]) != nil }) else {
            throw failure(expected: "four hexadecimal digits after \\u")
        }
        defer { position += 4 }
        return Self.hexValue(bytes[...], at: position)
    }

    package static func hexValue(_ bytes: ArraySlice<UInt8>, at index: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 << 4 | UInt32(hexDigit(bytes[index + $1])!) }
    }

    private static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Refuses a string whose bytes are not UTF-8 (the standard library's decoder decides).
    private func checkUTF8(from start: Int) throws {
        var iterator = bytes[start..<position].makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid: continue
            case .emptyInput: return
            case .error:
                throw CatalogTree.SyntaxError(description: "a string that is not UTF-8 at \(location(start - 1))")
            }
        }
    }

    private mutating func appendLeaf(_ kind: CatalogTree.Kind, flag: Bool, start: Int) {
        nodes.append(
            .init(
                kind: kind, flag: flag, start: UInt32(start), length: UInt32(position - start),
                end: UInt32(nodes.count + 1)))
    }

    private func peek() -> UInt8? { position < bytes.count ? bytes[position] : nil }

    private mutating func skipSpace() {
        while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { position += 1 }
    }

    private mutating func expect(_ character: Unicode.Scalar, _ expected: String) throws {
        guard peek() == UInt8(ascii: character) else { throw failure(expected: expected) }
        position += 1
    }

    private func failure(expected: String) -> CatalogTree.SyntaxError {
        let found: String =
            if let byte = peek() {
                (0x21..<0x7F).contains(byte)
                    ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(format: "%02X", byte))"
            } else {
                "the end of the file"
            }
        return .init(description: "expected \(expected), found \(found) at \(location(position))")
    }

    /// Line and column (in bytes), from 1.
    private func location(_ offset: Int) -> String {
        var line = 1
        var lineStart = 0
        for index in 0..<min(offset, bytes.count) where bytes[index] == 0x0A {
            line += 1
            lineStart = index + 1
        }
        return "line \(line), column \(offset - lineStart + 1)"
    }
}
