import Crypto
package import Foundation
package import GRDB
import LedgerModel
package import LedgerSigning
import SwiftASN1
import Synchronization
import X509

/// The signed end of the hash chain: an event's number and link, signed with the ledger's
/// signing key (ECDSA P-256 over SHA-256, raw r || s) as `message(seq:hash:)` encodes them.
/// Whoever rewrites the links after an edit, or cuts events off the end, must sign again.
package struct ChainHead: Sendable, Hashable {
    /// The number of the last event signed.
    package var sequence: Int64
    /// That event's link.
    package var hash: [UInt8]
    /// The leaf key's signature of `message(sequence:hash:)`, 64 bytes (r || s).
    package var signature: [UInt8]
    /// When it was signed, by the store's clock.
    package var signedAt: Date

    /// What is signed: the text `StoreLedger chain head 1`, the number and the link, encoded
    /// as the chain encodes values (docs/HASH-CHAIN.md).
    package static func message(sequence: Int64, hash: [UInt8]) -> [UInt8] {
        var encoding = ChainEncoding()
        encoding.text("StoreLedger chain head 1")
        encoding.integer(sequence)
        encoding.blob(hash)
        return encoding.bytes
    }

    /// Whether `signature` is the signature of this head by the key of `certificates`' leaf,
    /// and the leaf is certified by the intermediate and the intermediate by the root (as
    /// `JWS.verify(trustingRoot:)` checks them; the ledger keeps no key but the leaf's).
    package func isSigned(by certificates: SigningCertificates) -> Bool {
        guard let leaf = try? Certificate(derEncoded: certificates.leaf),
            let intermediate = try? Certificate(derEncoded: certificates.intermediate),
            let root = try? Certificate(derEncoded: certificates.root),
            let key = try? JWS.signingKey(leaf: leaf, intermediate: intermediate, root: root),
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
        else { return false }
        return key.isValidSignature(signature, for: Self.message(sequence: sequence, hash: hash))
    }

    /// The head signed with `key`.
    static func signing(
        sequence: Int64, hash: [UInt8], at date: Date, with key: P256.Signing.PrivateKey
    ) throws -> ChainHead {
        let signature = try key.signature(for: message(sequence: sequence, hash: hash))
        return ChainHead(sequence: sequence, hash: hash, signature: Array(signature.rawRepresentation), signedAt: date)
    }

    /// The stored head; `nil` when none was signed (an empty history).
    package static func load(_ db: Database) throws -> ChainHead? {
        guard let row = try Row.fetchOne(db, sql: "SELECT seq, hash, signature, signed_at FROM chain_head WHERE id = 1")
        else { return nil }
        guard case .int64(let seq) = (row[0] as DatabaseValue).storage,
            case .blob(let hash) = (row[1] as DatabaseValue).storage,
            case .blob(let signature) = (row[2] as DatabaseValue).storage,
            case .int64(let signedAt) = (row[3] as DatabaseValue).storage
        else { throw DamagedRow(reason: "the chain head's row has a value of the wrong type") }
        return ChainHead(
            sequence: seq, hash: [UInt8](hash), signature: [UInt8](signature),
            signedAt: Date(ledgerMilliseconds: signedAt))
    }

    package func save(_ db: Database) throws {
        try db.run(
            sql: "INSERT OR REPLACE INTO chain_head (id, seq, hash, signature, signed_at) VALUES (1, ?, ?, ?, ?)",
            arguments: [sequence, Data(hash), Data(signature), signedAt.ledgerMilliseconds])
    }
}

/// Signs the chain's head inside the write transactions of one `Ledger`, so that the head and
/// the events it covers commit together. A signature costs about half a purchase cycle's
/// instructions (docs/PERFORMANCE.md), and a cycle commits three times, so a commit signs only when
/// `interval` has passed since this ledger value last signed (the first commit always does),
/// and `close()` signs what is left: the events between are chained, not yet signed.
package final class HeadSigner: Sendable {
    package let interval: Duration
    /// The heads are dated by the store's time at this clock (`Ledger.storeNow`).
    private let clock: LedgerClock
    private let identities: IdentityCache
    private let state = Mutex<State>(State())

    private struct State {
        package var lastSigned: ContinuousClock.Instant?
        /// Whether a commit went without signing since the last signature: `close()` signs then.
        package var mayHaveUnsigned = false
    }

    package init(interval: Duration, clock: LedgerClock, identities: IdentityCache) {
        self.interval = interval
        self.clock = clock
        self.identities = identities
    }

    /// Signs the head when the interval has passed; cheap otherwise (a clock read).
    package func signIfDue(_ db: Database) throws {
        let now = ContinuousClock.now
        let due = state.withLock { state in
            let due = state.lastSigned.map { now - $0 >= interval } ?? true
            if !due { state.mayHaveUnsigned = true }
            return due
        }
        if due { try sign(db, at: now) }
    }

    /// Whether commits went without signing since the last signature (`close()` signs then).
    package var mayHaveUnsignedEvents: Bool { state.withLock { $0.mayHaveUnsigned } }

    /// Forgets the last signature, made in a transaction that was then rolled back.
    package func rolledBack() {
        state.withLock { $0.lastSigned = nil }
    }

    /// Signs the last event unless the stored head already names it, once every event after
    /// the stored head is authenticated (`HashChain.firstUnauthenticated`): an event appended
    /// without the key is never signed over. `checkingTail` false: migrations, which sign the
    /// history they find (events before schema 11 carry no MAC).
    /// - Throws: `DamagedRow` for an event after the head that is not authenticated.
    package func sign(_ db: Database, at now: ContinuousClock.Instant = .now, checkingTail: Bool = true) throws {
        // Dated by the store's clock, as everything the ledger records.
        let end = try HashChain.end(db)
        let signed = try Int64.fetchOne(db.cachedStatement(sql: "SELECT seq FROM chain_head WHERE id = 1"))
        guard end.seq > 0, signed != end.seq else {
            state.withLock { $0.mayHaveUnsigned = false }
            return
        }
        if checkingTail,
            let forged = try HashChain.firstUnauthenticated(db, after: signed ?? 0, key: try identities.eventKey(db))
        {
            throw DamagedRow(
                reason: "event \(forged) follows the signed head without the ledger's authentication "
                    + "(it was appended without the ledger's key; verify reports it): no head is signed over it, nothing is written"
            )
        }
        let key = try identities.identity(db).privateKey
        try ChainHead.signing(
            sequence: end.seq, hash: end.hash, at: Date(ledgerMilliseconds: try Ledger.storeNow(db, clock: clock)),
            with: key
        ).save(db)
        state.withLock { state in
            state.lastSigned = now
            state.mayHaveUnsigned = false
        }
    }
}
