import Crypto
package import Foundation
package import GRDB
import LedgerModel
public import LedgerSigning
import Synchronization

extension SigningIdentity {
    /// Stores a new identity in a ledger that has none (the migration to schema 9 does it).
    package static func create(_ db: Database, at now: Date) throws {
        let identity = try make(at: now)
        try db.execute(
            sql: """
                INSERT INTO signing_identity
                    (id, private_key, leaf_certificate, intermediate_certificate, root_certificate, created_at)
                VALUES (1, ?, ?, ?, ?, ?)
                """,
            arguments: [
                Data(identity.privateKey.rawRepresentation), Data(identity.certificates.leaf),
                Data(identity.certificates.intermediate), Data(identity.certificates.root),
                identity.createdAt.ledgerMilliseconds,
            ])
    }

    /// The ledger's identity.
    /// - Throws: `DamagedRow` when it is missing or unreadable (schema 9 always has one).
    package static func load(_ db: Database) throws -> SigningIdentity {
        guard
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT private_key, leaf_certificate, intermediate_certificate, root_certificate, created_at
                    FROM signing_identity WHERE id = 1
                    """)
        else { throw DamagedRow(reason: "the ledger has no signing identity") }
        // Read by storage class: a value of another type (a damaged file) is reported, not trapped on.
        func blob(_ index: Int) -> Data? {
            if case .blob(let data) = (row[index] as DatabaseValue).storage { data } else { nil }
        }
        guard let key = blob(0), let leaf = blob(1), let intermediate = blob(2), let root = blob(3),
            case .int64(let created) = (row[4] as DatabaseValue).storage
        else { throw DamagedRow(reason: "the signing identity's row has a value of the wrong type") }
        guard let privateKey = try? P256.Signing.PrivateKey(rawRepresentation: key) else {
            throw DamagedRow(reason: "the signing identity's private key is not a P-256 key")
        }
        return SigningIdentity(
            privateKey: privateKey,
            certificates: SigningCertificates(
                leaf: [UInt8](leaf), intermediate: [UInt8](intermediate), root: [UInt8](root)),
            createdAt: Date(ledgerMilliseconds: created))
    }
}

/// A ledger's signing identity, read at its first use (parsing the key costs as much as a
/// signature), then kept: a trigger refuses any change to it. One per `Ledger`, shared by what
/// signs for it (payloads, the hash chain's head).
package final class IdentityCache: Sendable {
    private let identity = Mutex<SigningIdentity?>(nil)
    private let eventKey = Mutex<[UInt8]?>(nil)

    package func identity(_ db: Database) throws -> SigningIdentity {
        if let known = identity.withLock({ $0 }) { return known }
        let loaded = try SigningIdentity.load(db)
        identity.withLock { $0 = loaded }
        return loaded
    }

    /// The identity's `eventKey`, derived once.
    package func eventKey(_ db: Database) throws -> [UInt8] {
        if let known = eventKey.withLock({ $0 }) { return known }
        let key = try identity(db).eventKey
        eventKey.withLock { $0 = key }
        return key
    }
}

extension Ledger {
    /// The certificate chain this ledger signs with: its root is what a server verifying the
    /// ledger's signatures trusts (`ledger certificate export`).
    /// - Throws: `LedgerError` when the ledger cannot be read.
    public func signingCertificates() throws -> SigningCertificates {
        try read { db in try identities.identity(db).certificates }
    }
}
