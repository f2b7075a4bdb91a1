import Foundation
import SimulatedStore

/// A request's query string, read as Apple's clients write it: `name=value` pairs joined by
/// `&`, percent-encoded (`+` for a space), a name repeated for each value of a list
/// (`productId=a&productId=b`).
struct QueryParameters {
    /// The most pairs a query may have: Apple's filters take a handful.
    static let mostPairs = 200

    private var values: [String: [String]] = [:]

    /// - Throws: `APIError.generalBadRequest` for more than `mostPairs` pairs or a pair that
    ///   does not decode (or holds a NUL).
    init(_ query: String?) throws {
        guard let query, !query.isEmpty else { return }
        let pairs = query.split(separator: "&", omittingEmptySubsequences: true)
        guard pairs.count <= Self.mostPairs else { throw APIError.generalBadRequest }
        for pair in pairs {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.decoded(parts[0]), let value = Self.decoded(parts.count > 1 ? parts[1] : "")
            else { throw APIError.generalBadRequest }
            values[name, default: []].append(value)
        }
    }

    /// A name or value percent-decoded; `nil` when it does not decode, or decodes to text with a
    /// NUL (`%00`: a filter would match on the part before it).
    private static func decoded(_ text: Substring) -> String? {
        guard let decoded = text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding, !decoded.holdsNUL
        else { return nil }
        return decoded
    }

    /// Every value of `name`, in order.
    func all(_ name: String) -> [String] {
        values[name] ?? []
    }

    /// The value of `name`; `nil` when it is absent.
    /// - Throws: `error` when it is given more than once.
    func one(_ name: String, or error: APIError) throws -> String? {
        let given = all(name)
        guard given.count <= 1 else { throw error }
        return given.first
    }
}
