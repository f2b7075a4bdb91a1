public import Crypto
public import Foundation
import GRDB
public import LedgerEngine
import LedgerModel
import SimulatedStore
import Synchronization

/// A key of the App Store Server API, as App Store Connect issues them: the ledger keeps its
/// public half, and `ledger serve` accepts the bearer tokens signed with its private half.
public struct APIKey: Sendable, Hashable {
    /// The key's identifier: the `kid` of the tokens it signs.
    public let keyID: String
    /// The issuer (the App Store Connect team's issuer id): the `iss` of the tokens.
    public let issuerID: String
    /// The key's public half.
    public let publicKey: P256.Signing.PublicKey
    /// When it was added, by the store's clock.
    public let createdAt: Date
    /// When it was revoked, by the store's clock; `nil` while it is valid.
    public let revokedAt: Date?

    /// A key as the ledger stores it (`Ledger.addAPIKey` makes them; tests make their own).
    public init(keyID: String, issuerID: String, publicKey: P256.Signing.PublicKey, createdAt: Date, revokedAt: Date?) {
        self.keyID = keyID
        self.issuerID = issuerID
        self.publicKey = publicKey
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }

    /// Two keys are equal when every field is, the public key compared by its bytes.
    public static func == (lhs: APIKey, rhs: APIKey) -> Bool {
        lhs.keyID == rhs.keyID && lhs.issuerID == rhs.issuerID && lhs.createdAt == rhs.createdAt
            && lhs.revokedAt == rhs.revokedAt && lhs.publicKey.x963Representation == rhs.publicKey.x963Representation
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(keyID)
    }

    /// Checks an identifier as the ledger stores it: 1 to 64 bytes of printable ASCII.
    /// - Throws: `APIKeyError.invalidIdentifier`.
    public static func checkIdentifier(_ id: String) throws {
        guard (1...64).contains(id.utf8.count), id.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw APIKeyError.invalidIdentifier(id)
        }
    }
}

/// The App Store Server API's keys: added, listed and revoked; a bearer token is checked against them.
extension Ledger {
    /// Adds an API key's public half, valid from now.
    /// - Throws: `APIKeyError.invalidIdentifier`, `.duplicateKeyID`; `LedgerError`.
    @discardableResult
    public func addAPIKey(
        keyID: String, issuerID: String, publicKey: P256.Signing.PublicKey
    ) throws -> APIKey {
        try APIKey.checkIdentifier(keyID)
        try APIKey.checkIdentifier(issuerID)
        return try write { db in
            if try storedAPIKey(db, keyID) != nil { throw APIKeyError.duplicateKeyID(keyID) }
            try records(db).write(.apiKeys, key: keyID) {
                try db.run(
                    sql: "INSERT INTO api_keys (key_id, issuer_id, public_key, created_at) VALUES (?, ?, ?, ?)",
                    arguments: [keyID, issuerID, publicKey.x963Representation, try storeNow(db)])
            }
            return try storedAPIKey(db, keyID)!
        }
    }

    /// Every API key, valid and revoked, by identifier.
    public func apiKeys() throws -> [APIKey] {
        try read { db in
            try Row.fetchAll(db, sql: Self.apiKeySelection + " ORDER BY key_id").map(storedAPIKey)
        }
    }

    /// The API key `keyID`, valid or revoked; `nil` when the ledger has none.
    package func apiKey(_ keyID: String) throws -> APIKey? {
        try read { db in try storedAPIKey(db, keyID) }
    }

    /// The API key `keyID` names (`nil` when the ledger has none) and the app of bundle
    /// `bundleID` with its settings (`nil` when the store has none), read in one snapshot: what
    /// checking a request's bearer token needs (the token's `bid` names the app it is for).
    func apiKeyAndApp(_ keyID: String, bundleID: String?) throws -> (key: APIKey?, app: ServedApp?) {
        try read { db in (try checkedAPIKey(db, keyID), try servedApp(db, bundleID: bundleID)) }
    }

    /// The API key `keyID` names, inside a read (`nil` when the ledger has none), the keys'
    /// table checked.
    func checkedAPIKey(_ db: Database, _ keyID: String) throws -> APIKey? {
        // An access decision: the keys' table is read whole (a few rows) and must check, its
        // seal included, so that no key edited, swapped or put back is accepted. Only another
        // connection's commit can change it behind this one's back: it is read again after one
        // (`PRAGMA data_version` changes), not for every request.
        let version = try Int64.fetchOne(db.cachedStatement(sql: "PRAGMA data_version"))
        if version == nil || shared.apiKeysCheckedAt.withLock({ $0 }) != version {
            try records(db).checkWhole(.apiKeys)
            shared.apiKeysCheckedAt.withLock { $0 = version }
        }
        return try storedAPIKey(db, keyID)
    }
}

/// Revoking API keys.
extension Ledger {
    /// Revokes an API key from now: tokens it signs are refused from then on. It stays in the
    /// ledger, revoked, and its identifier is never given to another key.
    /// - Throws: `APIKeyError.unknownKeyID`, `.alreadyRevoked`.
    @discardableResult
    public func revokeAPIKey(_ keyID: String) throws -> APIKey {
        try write { db in
            guard let key = try storedAPIKey(db, keyID) else { throw APIKeyError.unknownKeyID(keyID) }
            guard key.revokedAt == nil else { throw APIKeyError.alreadyRevoked(keyID) }
            try records(db).write(.apiKeys, key: keyID) {
                try db.run(
                    sql: "UPDATE api_keys SET revoked_at = ? WHERE key_id = ?", arguments: [try storeNow(db), keyID])
            }
            return try storedAPIKey(db, keyID)!
        }
    }

    /// Public keys read from their stored bytes, by those bytes: a server reads its key for
    /// every request, and checking that the bytes are a point of the curve was a tenth of an
    /// answer's work.
    private static let parsedPublicKeys = BoundedCache<Data, P256.Signing.PublicKey>(capacity: 64)

    private static let apiKeySelection = "SELECT key_id, issuer_id, public_key, created_at, revoked_at FROM api_keys"

    private func storedAPIKey(_ db: Database, _ keyID: String) throws -> APIKey? {
        try Row.fetchOne(
            try db.cachedStatement(sql: Self.apiKeySelection + " WHERE key_id = ?"), arguments: [keyID]
        ).map(storedAPIKey)
    }

    /// The key `bytes` (X9.63) hold; `nil` when they are not a P-256 point.
    private static func publicKey(_ bytes: Data) -> P256.Signing.PublicKey? {
        if let known = parsedPublicKeys[bytes] { return known }
        let parsed = try? P256.Signing.PublicKey(x963Representation: bytes)
        if let parsed { parsedPublicKeys[bytes] = parsed }
        return parsed
    }

    private func storedAPIKey(_ row: Row) throws -> APIKey {
        let keyID: String = row["key_id"]
        guard let key = Self.publicKey(row["public_key"]) else {
            throw LedgerError.corrupted(path: path, reason: "the API key \(keyID)'s public key is not a P-256 point")
        }
        return APIKey(
            keyID: keyID, issuerID: row["issuer_id"], publicKey: key,
            createdAt: Date(ledgerMilliseconds: row["created_at"]),
            revokedAt: (row["revoked_at"] as Int64?).map(Date.init(ledgerMilliseconds:)))
    }
}
