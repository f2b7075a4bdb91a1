import Foundation

/// Product identifiers an app keeps in its bundle or on its server (seed "Loading in-app
/// product identifiers"), read from a property list or JSON file of any name.
///
/// Accepted shapes: an array of strings; a dictionary with a `Products` array and optional
/// `Subscriptions` groups (`[{Group, Products}]`); a dictionary whose keys are the identifiers
/// (their values are ignored, as apps keep emoji or titles there).
package struct ProductIdentifierList: Sendable, Hashable {
    /// One entry of the file's `Subscriptions` array: a subscription group and its products.
    package struct SubscriptionGroup: Sendable, Hashable {
        /// The group's name: the entry's `Group` value.
        package var name: String
        /// In order of service level: the first is the highest.
        package var productIDs: [String]
    }

    /// Every identifier of the file, in file order, each once.
    package var productIDs: [String]
    /// The file's `Subscriptions` groups, in file order; empty for the other shapes. Their
    /// identifiers are in `productIDs` too.
    package var subscriptionGroups: [SubscriptionGroup]

    /// Reads the property list or JSON file at `path`, whatever its name.
    /// - Throws: `CatalogError`: the file is missing, unreadable or malformed, has none of the
    ///   accepted shapes (`notAnIdentifierList`), or holds an empty identifier or one with control
    ///   characters (`invalidValue`).
    package init(contentsOf path: String) throws {
        try self.init(parsing: try CatalogFile(path: path))
    }

    init(parsing file: CatalogFile) throws {
        let root = file.rootValue
        var ids: [String] = []
        var groups: [SubscriptionGroup] = []
        if root.isArray {
            ids = try Self.strings(root)
        } else if root.isDictionary {
            let members = try root.members()
            if try root.has("Products") || root.has("Subscriptions") {
                ids = try root.optionalMember("Products").map(Self.strings) ?? []
                for group in try root.optionalMember("Subscriptions")?.array() ?? [] {
                    let name = try group.member("Group", expected: "the subscription group's name").string()
                    let members = try Self.strings(
                        try group.member("Products", expected: "an array of product identifiers"))
                    groups.append(SubscriptionGroup(name: name, productIDs: members))
                    ids += members
                }
            } else if !members.isEmpty, members.allSatisfy(\.value.isString) {
                ids = Set(members.map(\.name)).sorted()
            } else {
                throw CatalogError.notAnIdentifierList(path: file.path)
            }
        } else {
            throw CatalogError.notAnIdentifierList(path: file.path)
        }
        var seen = Set<String>()
        productIDs = ids.filter { seen.insert($0).inserted }
        subscriptionGroups = groups
    }

    private static func strings(_ value: CatalogValue) throws -> [String] {
        try value.array().map { element in
            let id = try element.string()
            guard !id.isEmpty else { throw element.invalid("a non-empty product identifier") }
            try ProductIdentifier.check(id, in: element)
            return id
        }
    }
}

/// What a product identifier may hold.
enum ProductIdentifier {
    /// Refuses an identifier with control characters (a NUL would cut it short in C code and
    /// make two products one; a newline or an escape sequence would garble a terminal).
    /// Refuses, too, what would make one identifier two: spaces at either end (invisible in
    /// a list) and a spelling that is not Unicode NFC (`é` as `e` and a combining accent is
    /// another string of bytes to SQLite, the same string to Swift).
    static func check(_ id: String, in value: CatalogValue) throws {
        let shown = "\"\(TerminalText.escaped(String(id.prefix(64))))\""
        func refuse(_ expected: String, _ found: String) -> CatalogError {
            .invalidValue(path: value.file, keyPath: value.keyPath, expected: expected, found: found)
        }
        if let bad = id.unicodeScalars.first(where: { $0.properties.generalCategory == .control }) {
            throw refuse(
                "a product identifier without control characters", "\(shown) (U+\(String(format: "%04X", bad.value)))")
        }
        if let first = id.unicodeScalars.first, let last = id.unicodeScalars.last,
            first.properties.isWhitespace || last.properties.isWhitespace
        {
            throw refuse("a product identifier without spaces at either end", shown)
        }
        guard id.unicodeScalars.elementsEqual(id.precomposedStringWithCanonicalMapping.unicodeScalars) else {
            throw refuse("a product identifier in Unicode NFC (composed characters, as Xcode writes them)", shown)
        }
    }
}
