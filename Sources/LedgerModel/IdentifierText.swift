package import Foundation

/// The rule for text that names something (a key id, a request identifier, a product id, a
/// token): it never holds a NUL. SQLite's C API and the C parsers under Foundation stop at the
/// first NUL, so `KEY1\0junk` would be looked up as `KEY1` and two distinct identifiers that
/// share the part before it would collide; refused at the boundary, such text never reaches them.
extension String {
    /// Whether the text holds a NUL character (U+0000) anywhere.
    package var holdsNUL: Bool { utf8.contains(0) }
}

extension UUID {
    /// `text` as a UUID when it is exactly one (36 characters, hex digits and hyphens), nothing
    /// before or after it: Foundation's parser on Linux stops at a NUL and takes
    /// `<uuid>\0junk` as `<uuid>`.
    package init?(exactly text: String) {
        guard text.utf8.count == 36, !text.holdsNUL else { return nil }
        self.init(uuidString: text)
    }
}
