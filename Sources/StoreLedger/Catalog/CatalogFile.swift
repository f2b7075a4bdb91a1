import Foundation

/// A product file read into memory and parsed by its content, never by its name
/// (`products_v2.json` and `Products.plist` are read the same way).
struct CatalogFile {
    enum Format { case json, propertyList }

    let path: String
    let format: Format
    let tree: CatalogTree

    /// The largest JSON file read: far above any real one (the biggest real-world `.storekit`
    /// seen is under 100 KB; 10,000 products with 40 localizations each take 51 MB), low
    /// enough to bound memory (`CatalogTree` costs about twice the file's size).
    static let maximumSize = 64 * 1_048_576
    /// The largest property list read. Only identifier lists are property lists (10,000
    /// identifiers take under 1 MB), and Foundation's reader costs many times the file's size.
    static let maximumPropertyListSize = 4 * 1_048_576

    init(path: String) throws {
        self.path = path
        let bytes = try Self.read(path)
        let start = bytes.first {
            !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 || $0 == 0xEF || $0 == 0xBB || $0 == 0xBF)
        }
        guard let start else { throw CatalogError.malformedFile(path: path, reason: "the file is empty") }
        if start == UInt8(ascii: "<") || bytes.starts(with: Array("bplist".utf8)) {
            guard bytes.count <= Self.maximumPropertyListSize else {
                throw CatalogError.unreadableFile(
                    path: path, reason: Self.tooLarge(bytes.count, Self.maximumPropertyListSize, "property list"))
            }
            format = .propertyList
            do {
                let value = try PropertyListSerialization.propertyList(from: Data(bytes), options: [], format: nil)
                tree = try CatalogTree(propertyList: value, budget: 2 * Self.maximumPropertyListSize)
            } catch let error as CatalogTree.SyntaxError {
                throw CatalogError.malformedFile(path: path, reason: "not a valid property list (\(error))")
            } catch {
                let ns = error as NSError
                let reason = (ns.userInfo[NSDebugDescriptionErrorKey] as? String) ?? ns.localizedDescription
                throw CatalogError.malformedFile(path: path, reason: "not a valid property list (\(reason))")
            }
        } else {
            format = .json
            do {
                tree = try CatalogTree(json: bytes)
            } catch {
                throw CatalogError.malformedFile(path: path, reason: "not valid JSON or property list (\(error))")
            }
        }
    }

    /// The file's bytes: a regular file of at most `maximumSize` bytes (a FIFO, a device such
    /// as /dev/zero or a socket could block or never end).
    private static func read(_ path: String) throws -> [UInt8] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CatalogError.missingFile(path: path)
        }
        guard !isDirectory.boolValue else { throw CatalogError.unreadableFile(path: path, reason: "it is a directory") }
        // Non-blocking: opening a FIFO must not wait for a writer before fstat refuses it.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            throw CatalogError.unreadableFile(path: path, reason: String(cString: strerror(errno)))
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw CatalogError.unreadableFile(path: path, reason: "not a regular file")
        }
        guard status.st_size <= Self.maximumSize else {
            throw CatalogError.unreadableFile(
                path: path, reason: tooLarge(Int(status.st_size), maximumSize, "product file"))
        }
        // One byte more than fstat said is asked for: a file that grew or shrank is refused.
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size) + 1)
        var count = 0
        while count < bytes.count {
            let read = bytes.withUnsafeMutableBytes {
                Glibc.read(descriptor, $0.baseAddress! + count, $0.count - count)
            }
            if read < 0, errno == EINTR { continue }
            guard read >= 0 else {
                throw CatalogError.unreadableFile(path: path, reason: String(cString: strerror(errno)))
            }
            if read == 0 { break }
            count += read
        }
        guard count == status.st_size else {
            throw CatalogError.unreadableFile(
                path: path, reason: "it changed while it was read (\(status.st_size) bytes, then \(count))")
        }
        bytes.removeLast(bytes.count - count)
        return bytes
    }

    private static func tooLarge(_ size: Int, _ limit: Int, _ what: String) -> String {
        "\(size) bytes is larger than the \(limit / 1_048_576) MiB a \(what) may have"
    }

    var rootValue: CatalogValue { CatalogValue(file: path, keyPath: "", tree: tree, node: tree.root) }
}

/// A value inside a product file, with the key path that leads to it, for precise errors.
struct CatalogValue {
    let file: String
    let keyPath: String
    let tree: CatalogTree
    let node: Int

    private var kind: CatalogTree.Kind { tree.kind(node) }

    private func child(_ key: String, _ node: Int) -> CatalogValue {
        CatalogValue(file: file, keyPath: keyPath.isEmpty ? key : "\(keyPath).\(key)", tree: tree, node: node)
    }

    var description: String {
        switch kind {
        case .null: "null"
        case .string: "a string"
        case .boolean: "a boolean"
        case .number: "a number"
        case .array: "an array"
        case .object: "a dictionary"
        case .other: tree.text(node)
        }
    }

    func invalid(_ expected: String) -> CatalogError {
        invalid(expected, found: description)
    }

    /// A refusal of this value that says what was found (`quoted(_:)` for a text).
    func invalid(_ expected: String, found: String) -> CatalogError {
        .invalidValue(path: file, keyPath: keyPath.isEmpty ? "(top level)" : keyPath, expected: expected, found: found)
    }

    /// A text as a refusal shows it: quoted, escaped for a terminal, at most 64 characters.
    static func quoted(_ text: String) -> String {
        "\"\(TerminalText.escaped(String(text.prefix(64))))\""
    }

    var isNull: Bool { kind == .null }
    var isArray: Bool { kind == .array }
    var isDictionary: Bool { kind == .object }
    var isString: Bool { kind == .string }

    /// A dictionary's members, in file order.
    func members() throws -> [(name: String, value: CatalogValue)] {
        guard isDictionary else { throw invalid("a dictionary") }
        return tree.members(node).map { member in
            let name = tree.text(member.key)
            return (name, child(name, member.value))
        }
    }

    /// Whether a dictionary has the member `key` (null or not).
    func has(_ key: String) throws -> Bool {
        guard isDictionary else { throw invalid("a dictionary") }
        return tree.member(key, of: node) != nil
    }

    func array() throws -> [CatalogValue] {
        guard isArray else { throw invalid("an array") }
        return tree.elements(node).enumerated().map {
            CatalogValue(file: file, keyPath: "\(keyPath)[\($0.offset)]", tree: tree, node: $0.element)
        }
    }

    /// The number of an array's elements, without a value for each.
    func count() throws -> Int {
        guard isArray else { throw invalid("an array") }
        return tree.elements(node).count
    }

    func string() throws -> String {
        guard isString else { throw invalid("a string") }
        return tree.text(node)
    }

    /// A member that must be present (and not null).
    func member(_ key: String, expected: String) throws -> CatalogValue {
        guard let value = try optionalMember(key) else {
            throw CatalogError.missingKey(
                path: file, keyPath: keyPath.isEmpty ? key : "\(keyPath).\(key)", expected: expected)
        }
        return value
    }

    /// A member that may be absent or null.
    func optionalMember(_ key: String) throws -> CatalogValue? {
        guard isDictionary else { throw invalid("a dictionary") }
        guard let value = tree.member(key, of: node), tree.kind(value) != .null else { return nil }
        return child(key, value)
    }

    func bool() throws -> Bool {
        guard kind == .boolean else { throw invalid("a boolean") }
        return tree.boolean(node)
    }

    /// A whole number: `12`, or `12.0` (a fraction of zeros). Read from its text, never through
    /// a `Double` (which would take `4503599627370496.5` for a whole number).
    func int() throws -> Int {
        if kind == .number {
            let text = tree.text(node)
            let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
            if let whole = Int(parts[0]), parts.count == 1 || parts[1].allSatisfy({ $0 == "0" }) { return whole }
        }
        throw invalid("a whole number")
    }

    /// A price written as a string (`"0.99"`) or, in some files, as a JSON number, that the
    /// ledger keeps exactly (`DecimalText.isExactPrice`): a number's text is read as written,
    /// never through a `Double`.
    func price() throws -> Decimal {
        let text: String? =
            switch kind {
            case .string, .number: tree.text(node)
            default: nil
            }
        guard let text, DecimalText.isExactPrice(text), let price = DecimalText.parse(text) else {
            throw invalid("a non-negative decimal price such as \"0.99\", of at most 18 digits, 15 before the point")
        }
        return price
    }
}
