import Foundation

/// A product file read into memory and parsed by its content, never by its name
/// (`products_v2.json` and `Products.plist` are read the same way).
struct CatalogFile {
    enum Format { case json, propertyList }

    let path: String
    let format: Format
    let root: Any

    /// The largest product file read: far above any real one (the biggest real-world
    /// `.storekit` seen is under 100 KB), low enough to bound memory.
    static let maximumSize = 64 * 1_048_576

    init(path: String) throws {
        self.path = path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CatalogError.missingFile(path: path)
        }
        guard !isDirectory.boolValue else { throw CatalogError.unreadableFile(path: path, reason: "it is a directory") }
        // A FIFO, a device (/dev/zero) or a socket could block or never end: only regular files.
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw CatalogError.unreadableFile(path: path, reason: "not a regular file")
        }
        guard status.st_size <= Self.maximumSize else {
            throw CatalogError.unreadableFile(
                path: path, reason: "\(status.st_size) bytes is larger than the \(Self.maximumSize / 1_048_576) MiB a product file may have")
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw CatalogError.unreadableFile(path: path, reason: error.localizedDescription)
        }
        let start = data.first { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 || $0 == 0xEF || $0 == 0xBB || $0 == 0xBF) }
        guard let start else { throw CatalogError.malformedFile(path: path, reason: "the file is empty") }
        do {
            if start == UInt8(ascii: "<") || data.starts(with: Array("bplist".utf8)) {
                format = .propertyList
                root = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
            } else {
                format = .json
                root = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            }
        } catch {
            throw CatalogError.malformedFile(
                path: path, reason: "not valid JSON or property list (\(Self.reason(error)))")
        }
    }

    private static func reason(_ error: any Error) -> String {
        let ns = error as NSError
        return (ns.userInfo[NSDebugDescriptionErrorKey] as? String) ?? ns.localizedDescription
    }

    var rootValue: CatalogValue { CatalogValue(file: path, keyPath: "", value: root) }
}

/// A value inside a product file, with the key path that leads to it, for precise errors.
struct CatalogValue {
    let file: String
    let keyPath: String
    let value: Any

    private func child(_ key: String) -> String { keyPath.isEmpty ? key : "\(keyPath).\(key)" }

    static func describe(_ value: Any) -> String {
        switch value {
        case _ where isNullValue(value): "null"
        case is String: "a string"
        case _ where isBoolean(value): "a boolean"
        case is NSNumber: "a number"
        case is [Any]: "an array"
        case is [String: Any]: "a dictionary"
        default: "\(type(of: value))"
        }
    }

    func invalid(_ expected: String) -> CatalogError {
        .invalidValue(path: file, keyPath: keyPath.isEmpty ? "(top level)" : keyPath, expected: expected,
                      found: Self.describe(value))
    }

    var isNull: Bool { isNullValue(value) }

    func dictionary() throws -> [String: Any] {
        guard let dictionary = value as? [String: Any] else { throw invalid("a dictionary") }
        return dictionary
    }

    func array() throws -> [CatalogValue] {
        guard let array = value as? [Any] else { throw invalid("an array") }
        return array.enumerated().map { CatalogValue(file: file, keyPath: "\(keyPath)[\($0.offset)]", value: $0.element) }
    }

    func string() throws -> String {
        guard let string = value as? String else { throw invalid("a string") }
        return string
    }

    /// A member that must be present (and not null).
    func member(_ key: String, expected: String) throws -> CatalogValue {
        let dictionary = try self.dictionary()
        guard let value = dictionary[key], !isNullValue(value) else {
            throw CatalogError.missingKey(path: file, keyPath: child(key), expected: expected)
        }
        return CatalogValue(file: file, keyPath: child(key), value: value)
    }

    /// A member that may be absent or null.
    func optionalMember(_ key: String) throws -> CatalogValue? {
        guard let value = try dictionary()[key], !isNullValue(value) else { return nil }
        return CatalogValue(file: file, keyPath: child(key), value: value)
    }

    func bool() throws -> Bool {
        if isBoolean(value), let bool = value as? Bool { return bool }
        throw invalid("a boolean")
    }

    func int() throws -> Int {
        if !isBoolean(value), let number = value as? NSNumber, number.doubleValue == Double(number.intValue) {
            return number.intValue
        }
        throw invalid("a whole number")
    }

    /// A price written as a string (`"0.99"`) or, in some files, as a JSON number, that the
    /// ledger keeps exactly (`DecimalText.isExactPrice`).
    func price() throws -> Decimal {
        let text: String? = if let text = value as? String {
            text
        } else if !isBoolean(value), let number = value as? NSNumber, number.doubleValue >= 0 {
            number.stringValue
        } else {
            nil
        }
        guard let text, DecimalText.isExactPrice(text), let price = DecimalText.parse(text) else {
            throw invalid("a non-negative decimal price such as \"0.99\", of at most 18 digits, 15 before the point")
        }
        return price
    }
}

/// Whether a parsed value is a boolean: property lists give Swift `Bool`s, JSON gives
/// boolean `NSNumber`s (type code "c"), and both also convert to `Int`, so ask precisely.
private func isBoolean(_ value: Any) -> Bool {
    if type(of: value) == Bool.self { return true }
    if value is String || value is [Any] || value is [String: Any] { return false }
    guard let number = value as? NSNumber else { return false }
    return String(cString: number.objCType) == "c"
}

/// Whether a parsed value is null. Not `value is NSNull`: on Linux that cast first converts a
/// Swift array or dictionary, with everything in it, to Foundation's classes: reading a
/// 10,000-product file spent more time in those conversions than in parsing it.
private func isNullValue(_ value: Any) -> Bool {
    type(of: value) == NSNull.self
}
