public import Foundation

/// A value StoreKit 2 checked (`VerificationResult`): `.verified` when its signature holds.
///
/// The store signs every transaction and renewal info it hands out with its ledger's test
/// identity (`ledger certificate export` gives the root), as Xcode's StoreKit testing signs with
/// a local certificate, and checks the signature and its chain against the ledger's root:
/// `jwsRepresentation` is the JWS a server verifies. A value is `.unverified` when that check
/// fails (the store setting `invalidSignatures` makes the store sign badly, to test an app's
/// handling of it), or when a test simulates a verification failure
/// (`SKTestSession.setSimulatedError(.verification(...), forAPI: .verification)`).
public enum VerificationResult<SignedType> {
    /// The value failed verification, with why.
    case unverified(SignedType, VerificationResult<SignedType>.VerificationError)
    /// The value's signature and certificate chain checked against the ledger's root.
    case verified(SignedType)

    /// Why a value failed verification (StoreKit's `VerificationResult.VerificationError`).
    public enum VerificationError: String, Error, Sendable, Hashable, LocalizedError {
        /// A certificate of the signing chain was revoked; only simulated here.
        case revokedCertificate
        /// The signing certificate chain does not lead to the ledger's root, or a certificate of
        /// it is not valid at the signing date.
        case invalidCertificateChain
        /// The value was made for another device; only simulated here.
        case invalidDeviceVerification
        /// The value is not a well-formed JWS, or the store could not sign it (its ledger could
        /// not be read).
        case invalidEncoding
        /// The signature does not match the value's content (the store's `invalidSignatures`
        /// setting makes it so).
        case invalidSignature
        /// The value lacks properties StoreKit needs; only simulated here.
        case missingRequiredProperties

        public var errorDescription: String? {
            switch self {
            case .revokedCertificate: "The certificate that signed the value is revoked."
            case .invalidCertificateChain: "The certificate chain of the value is invalid."
            case .invalidDeviceVerification: "The value was not made for this device."
            case .invalidEncoding: "The value is not a valid JWS."
            case .invalidSignature: "The value's signature does not match its content."
            case .missingRequiredProperties: "The value lacks properties StoreKit requires."
            }
        }

        /// The same error of another `VerificationResult` (each has its own nested type).
        init<Other>(_ error: VerificationResult<Other>.VerificationError) {
            self.init(rawValue: error.rawValue)!
        }
    }

    /// The value when it is verified.
    /// - Throws: the `VerificationError` of an unverified value.
    public var payloadValue: SignedType {
        get throws {
            switch self {
            case .verified(let value): return value
            case .unverified(_, let error): throw error
            }
        }
    }

    /// The value, verified or not.
    public var unsafePayloadValue: SignedType {
        switch self {
        case .verified(let value), .unverified(let value, _): value
        }
    }
}

extension VerificationResult where SignedType == Transaction {
    /// The transaction as the store signed it, in JWS compact serialization: what a server
    /// verifies (with the ledger's root certificate) and decodes (the fields of
    /// `JWSTransactionDecodedPayload`).
    public var jwsRepresentation: String { unsafePayloadValue.signed.compactSerialization }
    /// The JWS's header, decoded: its algorithm (ES256) and certificate chain (`x5c`).
    public var headerData: Data { unsafePayloadValue.signed.header }
    /// The JWS's payload, decoded: the transaction's `jsonRepresentation`.
    public var payloadData: Data { unsafePayloadValue.signed.payload }
    /// The JWS's signature, decoded.
    public var signatureData: Data { unsafePayloadValue.signed.signature }
    /// The bytes the signature signs: the header and payload parts of the JWS.
    public var signedData: Data { unsafePayloadValue.signed.signedData }
    /// The payload's `signedDate`: when the store last changed the transaction.
    public var signedDate: Date { unsafePayloadValue.signedDate }
}

extension VerificationResult where SignedType == Product.SubscriptionInfo.RenewalInfo {
    /// The renewal info as the store signed it, in JWS compact serialization: what a server
    /// verifies and decodes (the fields of `JWSRenewalInfoDecodedPayload`).
    public var jwsRepresentation: String { unsafePayloadValue.signed.compactSerialization }
    /// The JWS's header, decoded.
    public var headerData: Data { unsafePayloadValue.signed.header }
    /// The JWS's payload, decoded: the renewal info's `jsonRepresentation`.
    public var payloadData: Data { unsafePayloadValue.signed.payload }
    /// The JWS's signature, decoded.
    public var signatureData: Data { unsafePayloadValue.signed.signature }
    /// The bytes the signature signs: the header and payload parts of the JWS.
    public var signedData: Data { unsafePayloadValue.signed.signedData }
    /// The payload's `signedDate`: when the store last changed the group's latest transaction.
    public var signedDate: Date { unsafePayloadValue.signedDate }
}

extension VerificationResult: CustomDebugStringConvertible {
    public var debugDescription: String {
        switch self {
        case .verified(let value): "verified(\(value))"
        case .unverified(let value, let error): "unverified(\(value), \(error))"
        }
    }
}

extension VerificationResult: Sendable where SignedType: Sendable {}
extension VerificationResult: Equatable where SignedType: Equatable {}
extension VerificationResult: Hashable where SignedType: Hashable {}
