import Foundation

/// An App Store Server API key the ledger refuses to add, revoke or read. Nothing was changed.
package enum APIKeyError: DescribedError, Sendable, Equatable {
    /// The key or issuer identifier is empty, longer than 64 bytes, or holds characters other
    /// than printable ASCII (App Store Connect's are letters, digits and dashes).
    case invalidIdentifier(String)
    /// The public key is not a P-256 public key (PEM `PUBLIC KEY`, or its private key's PEM).
    case invalidPublicKey(String)
    /// The ledger has a key with this identifier already (revoked ones included: an identifier
    /// names one key forever).
    case duplicateKeyID(String)
    /// The ledger has no key with this identifier.
    case unknownKeyID(String)
    /// The key was revoked already.
    case alreadyRevoked(String)

    package var description: String {
        switch self {
        case .invalidIdentifier(let id):
            "\"\(id.prefix(80))\" is not an API key or issuer identifier: 1 to 64 printable ASCII characters"
        case .invalidPublicKey(let why):
            "not a P-256 public key: \(why)"
        case .duplicateKeyID(let id):
            "the ledger has an API key \(id) already (an identifier names one key, revoked or not)"
        case .unknownKeyID(let id):
            "the ledger has no API key \(id)"
        case .alreadyRevoked(let id):
            "the API key \(id) is revoked already"
        }
    }
}
