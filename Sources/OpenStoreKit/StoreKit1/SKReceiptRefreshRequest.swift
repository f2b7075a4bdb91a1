public import Foundation
import StoreLedger
import Synchronization

// swift-format-ignore: AlwaysUseLowerCamelCase
// StoreKit's own names: code written for StoreKit uses them as they are.
/// The key of `SKReceiptRefreshRequest`'s properties asking for an expired receipt (a Boolean
/// `NSNumber`; the sandbox and Xcode only).
public let SKReceiptPropertyIsExpired = "expired"
// swift-format-ignore: AlwaysUseLowerCamelCase
/// The key asking for a revoked receipt: not simulated (the request fails saying so).
public let SKReceiptPropertyIsRevoked = "revoked"
// swift-format-ignore: AlwaysUseLowerCamelCase
/// The key asking for a Volume Purchase Program receipt (a Boolean `NSNumber`; the sandbox and
/// Xcode only).
public let SKReceiptPropertyIsVolumePurchase = "vpp"

/// Asks the App Store for a new app receipt (StoreKit 1's `SKReceiptRefreshRequest`): `start()`
/// writes the device's receipt at `Bundle.main.openStoreKitReceiptURL`, then the delegate hears
/// `requestDidFinish(_:)`, or `request(_:didFailWithError:)` with an `SKError` saying why.
///
/// Sendable by hand: its properties are set by the initializer only; an `open` class cannot be
/// checked by the compiler.
open class SKReceiptRefreshRequest: SKRequest, @unchecked Sendable {
    /// The properties the new receipt is to have in the sandbox (`SKReceiptPropertyIsExpired`,
    /// `SKReceiptPropertyIsVolumePurchase`); `nil` in production, as Apple asks.
    public let receiptProperties: [String: Any]?

    /// A request for a receipt with `properties` (`nil`: an ordinary one).
    public init(receiptProperties properties: [String: Any]?) {
        receiptProperties = properties
        super.init()
    }

    /// A request for an ordinary receipt.
    public override convenience init() {
        self.init(receiptProperties: nil)
    }

    override func run(in context: Result<StoreContext, any Error>) async {
        let outcome = Result { () throws -> Void in
            let properties = try Self.properties(receiptProperties)
            try AppReceiptFile(ledger: try context.get().ledger).write(properties)
        }
        await MainActor.run { [self] in
            guard !isCancelled, let delegate else { return }
            switch outcome {
            case .success: delegate.requestDidFinish(self)
            case .failure(let error as SKError): delegate.request(self, didFailWithError: error)
            case .failure(let error): delegate.request(self, didFailWithError: SKError(ledgerFailure: error))
            }
        }
    }

    /// The store's receipt properties for StoreKit's dictionary.
    /// - Throws: `SKError` for `SKReceiptPropertyIsRevoked`, which is not simulated.
    private static func properties(_ dictionary: [String: Any]?) throws -> ReceiptProperties {
        func flag(_ key: String) -> Bool {
            (dictionary?[key] as? NSNumber)?.boolValue ?? (dictionary?[key] as? Bool) ?? false
        }
        guard !flag(SKReceiptPropertyIsRevoked) else {
            throw SKError(
                .unknown,
                userInfo: [
                    NSLocalizedDescriptionKey:
                        "SKReceiptPropertyIsRevoked is not simulated: OpenStoreKit's receipts have no revoked state"
                ])
        }
        return ReceiptProperties(
            isExpired: flag(SKReceiptPropertyIsExpired), isVolumePurchase: flag(SKReceiptPropertyIsVolumePurchase))
    }
}

/// The app receipt's place, where StoreKit's `appStoreReceiptURL` says it is.
extension Bundle {
    /// Where the app receipt of the store StoreKit calls reach is, for this device: OpenStoreKit's
    /// `Bundle.main.appStoreReceiptURL`, which Foundation on Linux always answers `nil` and no
    /// module can change; replace that one name in the app's code. Reading it brings the file up
    /// to date (the store's receipt now, with the properties of the last refresh request), as a
    /// device updates its receipt after each transaction. In the sandbox and Xcode the file is
    /// absent until the customer has a purchase in it or the app refreshes it, as on a device;
    /// a production store always has it. `nil` when the store's ledger cannot be opened or read.
    public var openStoreKitReceiptURL: URL? {
        guard let file = try? AppReceiptFile(ledger: StoreContext.current().ledger) else { return nil }
        try? file.update()
        return file.url
    }
}

/// The file of a device's app receipt: `<ledger>.receipts/<bundle id>/<device id>/receipt`,
/// beside the store's ledger, so that every app and device of a store has its own.
struct AppReceiptFile {
    let ledger: Ledger
    let url: URL
    /// Whether the store is a production one, whose receipt is always there.
    private let isProduction: Bool

    /// The receipt file of `ledger`'s app and device.
    /// - Throws: `LedgerError` when the store's settings cannot be read; `CustomerError` when the
    ///   ledger names no device.
    init(ledger: Ledger) throws {
        let settings = try StoreSettings(ledger: ledger)
        let device = try ledger.deviceVerificationID()
        self.ledger = ledger
        url = URL(fileURLWithPath: "\(ledger.path).receipts/\(settings.bundleID)/\(device.uuidString)/receipt")
        isProduction = settings.environment == .production
    }

    /// The properties of the last refresh request of each receipt file, so that bringing it up
    /// to date keeps them.
    private static let refreshed = Mutex<[String: ReceiptProperties]>([:])

    /// Writes the store's receipt now with `properties` (a refresh request).
    func write(_ properties: ReceiptProperties) throws {
        try save(try ledger.signedAppReceipt(properties: properties).bytes)
        Self.refreshed.withLock { $0[url.path] = properties == ReceiptProperties() ? nil : properties }
    }

    /// Rewrites the receipt when there is one, or when there should be: a production store, or
    /// a customer with a purchase in it.
    func update() throws {
        let properties = Self.refreshed.withLock { $0[url.path] } ?? ReceiptProperties()
        let exists = FileManager.default.fileExists(atPath: url.path)
        let signed = try ledger.signedAppReceipt(properties: properties)
        guard exists || isProduction || signed.purchases > 0 else { return }
        try save(signed.bytes)
    }

    /// Writes `bytes` whole or not at all (a reader never sees half a receipt).
    private func save(_ bytes: [UInt8]) throws {
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        try Data(bytes).write(to: url, options: .atomic)
    }
}
