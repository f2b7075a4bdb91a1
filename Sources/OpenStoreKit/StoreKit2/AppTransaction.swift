public import Foundation
import StoreLedger

/// The app's own purchase, its download from the App Store (`AppTransaction`), signed as a JWS
/// by the ledger's identity.
///
/// A ledger is one customer's store on one device: the app was bought when the ledger's
/// signing identity was made, first installed at version 1.0 (as Apple's sandbox always says),
/// on iOS; `appVersion` is the store's `appVersion` setting (`ledger store set appVersion`).
public struct AppTransaction: Sendable, Hashable {
    /// The app's Apple ID: the store's `appAppleID` setting; `nil` while it is not set (as in
    /// Xcode's testing).
    public let appID: UInt64?
    /// The identifier of the app version in the App Store: `nil`, as outside production.
    public let appVersionID: UInt64?
    /// The version of the app installed: the store's `appVersion` setting (`1.0` by default).
    public let appVersion: String
    /// The app's bundle identifier: the store's `bundleID` setting.
    public let bundleID: String
    /// The environment the store signs for: its `environment` setting, `.xcode` by default.
    public let environment: AppStore.Environment
    /// The version of the app first installed: `1.0`.
    public let originalAppVersion: String
    /// When the user first got the app: when the ledger's signing identity was made.
    public let originalPurchaseDate: Date
    /// When the user pre-ordered the app: `nil`, as pre-orders are not simulated.
    public let preorderDate: Date?
    /// The SHA-384 hash that binds this value to the device (`AppStore.deviceVerificationID`).
    public let deviceVerification: Data
    /// The nonce hashed into `deviceVerification`, new each time the store signs.
    public let deviceVerificationNonce: UUID
    /// When the store signed this value, by its clock.
    public let signedDate: Date
    /// The app download's transaction identifier, the same in every transaction of the store.
    public let appTransactionID: String
    /// The platform the app was first bought on: `.iOS`.
    public let originalPlatform: AppStore.Platform
    /// The JWS the store signed this value in.
    let signed: SignedForm
    /// The signed payload's JSON: the fields of `JWSAppTransactionDecodedPayload`.
    public var jsonRepresentation: Data { signed.payload }

    /// The app transaction the store signed in `jws`, from the values it signed (`payload`).
    init(signed jws: JWS, payload: AppTransactionPayload) {
        signed = SignedForm(jws: jws)
        func date(_ milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }
        appID = payload.appAppleId.flatMap(UInt64.init(exactly:))
        appVersionID = nil
        appVersion = payload.applicationVersion
        bundleID = payload.bundleId
        environment = AppStore.Environment(rawValue: payload.receiptType)
        originalAppVersion = payload.originalApplicationVersion
        originalPurchaseDate = date(payload.originalPurchaseDate)
        preorderDate = nil
        deviceVerification = Data(base64Encoded: payload.deviceVerification) ?? Data()
        deviceVerificationNonce = UUID(uuidString: payload.deviceVerificationNonce) ?? UUID()
        signedDate = date(payload.receiptCreationDate)
        appTransactionID = payload.appTransactionId
        originalPlatform = AppStore.Platform(rawValue: payload.originalPlatform)
    }

    /// The app transaction, signed now by the store and verified as StoreKit verifies it.
    /// - Throws: `StoreKitError.systemError` when the store's ledger cannot be read; the error a
    ///   test simulates for `.appTransaction`.
    public static var shared: VerificationResult<AppTransaction> {
        get async throws { try signedNow() }
    }

    /// `shared`, fetched again from the App Store: here the store signs it anew, as `shared`
    /// does (nothing is cached that could be stale).
    /// - Throws: as `shared`.
    public static func refresh() async throws -> VerificationResult<AppTransaction> {
        try signedNow()
    }

    private static func signedNow() throws -> VerificationResult<AppTransaction> {
        let context: StoreContext
        do { context = try StoreContext.current() } catch { throw StoreKitError.systemError(error) }
        try context.failures.check(.appTransaction)
        let signed: (jws: JWS, payload: AppTransactionPayload)
        do { signed = try context.ledger.signedAppTransactionWithPayload() } catch {
            throw StoreKitError.systemError(error)
        }
        let signer = context.origin.signer
        return context.failures.verify(AppTransaction(signed: signed.jws, payload: signed.payload)) {
            signer.verify($0, signedAs: signed.jws)
        }
    }
}

extension AppStore {
    /// A platform the App Store sells on (`AppStore.Platform`).
    public struct Platform: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// iPhone and iPad.
        public static let iOS = Platform(rawValue: "iOS")
        /// The Mac.
        public static let macOS = Platform(rawValue: "macOS")
        /// Apple TV.
        public static let tvOS = Platform(rawValue: "tvOS")
        /// Apple Vision Pro.
        public static let visionOS = Platform(rawValue: "visionOS")
    }

    /// The device the store's signed values are bound to (`AppStore.deviceVerificationID`):
    /// one per device of each customer, derived from the ledger's signing identity; `nil` when
    /// the store cannot be read.
    public static var deviceVerificationID: UUID? {
        guard let context = try? StoreContext.current() else { return nil }
        return try? context.ledger.deviceVerificationID()
    }
}

extension VerificationResult where SignedType == AppTransaction {
    /// The app transaction as the store signed it, in JWS compact serialization: what a server
    /// verifies (Apple's libraries' `verifyAndDecodeAppTransaction`).
    public var jwsRepresentation: String { unsafePayloadValue.signed.compactSerialization }
    /// The JWS's header, decoded.
    public var headerData: Data { unsafePayloadValue.signed.header }
    /// The JWS's payload, decoded: the app transaction's `jsonRepresentation`.
    public var payloadData: Data { unsafePayloadValue.signed.payload }
    /// The JWS's signature, decoded.
    public var signatureData: Data { unsafePayloadValue.signed.signature }
    /// The bytes the signature signs: the header and payload parts of the JWS.
    public var signedData: Data { unsafePayloadValue.signed.signedData }
    /// When the store signed the app transaction.
    public var signedDate: Date { unsafePayloadValue.signedDate }
    /// The app transaction's `deviceVerification`.
    public var deviceVerification: Data { unsafePayloadValue.deviceVerification }
    /// The app transaction's `deviceVerificationNonce`.
    public var deviceVerificationNonce: UUID { unsafePayloadValue.deviceVerificationNonce }
}
