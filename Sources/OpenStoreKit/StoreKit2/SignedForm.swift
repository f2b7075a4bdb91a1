import Foundation
import StoreLedger
import Synchronization

/// The JWS a transaction or renewal info came in: what `VerificationResult.jwsRepresentation`
/// and its parts give. Two values of the same row are equal whatever their signatures (ECDSA
/// signs with a random nonce, so signing the same payload twice gives two signatures).
struct SignedForm: Hashable, Sendable {
    /// `nil` when the store could not sign (its ledger could not be read).
    let jws: JWS?

    static func == (lhs: SignedForm, rhs: SignedForm) -> Bool { true }
    func hash(into hasher: inout Hasher) {}

    var compactSerialization: String { jws?.compactSerialization ?? "" }
    var header: Data { jws?.header ?? Data() }
    var payload: Data { jws?.payload ?? Data() }
    var signature: Data { jws?.signature ?? Data() }
    /// The bytes the signature signs: the first two parts of the compact serialization.
    var signedData: Data { Data((jws?.signingInput ?? "").utf8) }

    /// The environment a payload names (`.xcode` when it names none).
    static func environment(_ name: String?) -> AppStore.Environment {
        name.map(AppStore.Environment.init(rawValue:)) ?? .xcode
    }
}

/// Signs what a store hands out and checks it as StoreKit does, against the ledger's own root.
package final class StoreSigner: Sendable {
    private let ledger: Ledger?
    /// The chains checked against the ledger's root certificate, read once: a ledger's
    /// identity never changes, so each value's verification checks its dates only (and its
    /// signature, unless the ledger's key made it: `JWS.signatureMatches`).
    private let chains = Mutex<VerifiedChains?>(nil)

    init(ledger: Ledger?) {
        self.ledger = ledger
    }

    private func verifiedChains() -> VerifiedChains? {
        chains.withLock { chains in
            if chains == nil, let root = try? ledger?.signingCertificates().root { chains = VerifiedChains(root: root) }
            return chains
        }
    }

    /// How many values this signer signed: what tests count to see that nobody pays for a
    /// signature nobody asked for.
    package var signatureCount: Int { signatures.load(ordering: .relaxed) }
    private let signatures = Atomic(0)

    /// `row` signed, with the payload it was signed from, or `nil` when it cannot be (the
    /// ledger failed to read).
    func sign(_ row: PaymentTransaction) -> (jws: JWS, payload: TransactionPayload)? {
        signatures.add(1, ordering: .relaxed)
        return try? ledger?.signedTransactionsWithPayloads([row]).first
    }

    /// `status`'s renewal info signed, with its payload, or `nil` when it cannot be.
    func sign(_ status: SubscriptionStatus) -> (jws: JWS, payload: RenewalInfoPayload)? {
        signatures.add(1, ordering: .relaxed)
        return try? ledger?.signedRenewalInfoWithPayload(status)
    }

    /// `value` with StoreKit's verdict on `jws`: verified when its signature (known when the
    /// ledger's key made it) and chain check against the ledger's root certificate.
    func verify<Value>(_ value: Value, signedAs jws: JWS?) -> VerificationResult<Value> {
        guard let jws, let chains = verifiedChains() else {
            return .unverified(value, .invalidEncoding)
        }
        do {
            try jws.verify(with: chains)
            return .verified(value)
        } catch {
            return .unverified(value, VerificationResult<Value>.VerificationError(rawValue: error.kind.rawValue)!)
        }
    }
}
