public import Foundation

/// A value StoreKit 2 checked (`VerificationResult`): `.verified` when its signature holds.
///
/// The ledger's transactions are not signed yet, so every value is `.verified` and there is no
/// `jwsRepresentation` (never a fake signature), unless a test simulates a verification failure
/// (`SKTestSession.setSimulatedError(.verification(...), forAPI: .verification)`): values are
/// then `.unverified` with that error.
public enum VerificationResult<SignedType> {
    /// The value failed verification, with why; here only when a test simulates a verification
    /// failure.
    case unverified(SignedType, VerificationResult<SignedType>.VerificationError)
    /// The value passed verification: every value the ledger's store hands out, unless a test
    /// simulates a failure.
    case verified(SignedType)

    /// Why a value failed verification (StoreKit's `VerificationResult.VerificationError`).
    public enum VerificationError: String, Error, Sendable, Hashable, LocalizedError {
        /// A certificate of the signing chain was revoked; only simulated here.
        case revokedCertificate
        /// The signing certificate chain does not check; only simulated here.
        case invalidCertificateChain
        /// The value was made for another device; only simulated here.
        case invalidDeviceVerification
        /// The value is not a well-formed JWS; only simulated here.
        case invalidEncoding
        /// The signature does not match the value's content; only simulated here.
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
