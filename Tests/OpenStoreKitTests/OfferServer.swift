import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger

/// Stands in for the app's server: signs the shop's promotional offers with the subscription
/// offers key of its StoreKit configuration file, as a server signs with its App Store Connect
/// key. `signWithAppleLibrary` has Apple's own server library sign instead.
enum OfferServer {
    static func key() throws -> SubscriptionOffersKey {
        guard let key = try StoreKitConfiguration(contentsOf: Shop.file.path).subscriptionOffersKey else {
            throw CommandFailure("the shop fixture has no subscriptionOffersKeyPair")
        }
        return key
    }

    static func sign(
        productID: String, offerID: String, account: String = "", nonce: UUID = UUID(), at date: Date = Date(),
        signedProductID: String? = nil
    ) throws -> SignedOffer {
        let key = try key()
        let timestamp = Int64((date.timeIntervalSince1970 * 1000).rounded())
        let payload = OfferSignaturePayload(
            bundleID: Ledger.defaultBundleID, keyID: key.id, productID: signedProductID ?? productID, offerID: offerID,
            account: account, nonce: nonce, timestamp: timestamp)
        return SignedOffer(
            offerID: offerID, keyID: key.id, nonce: nonce, timestamp: Int(timestamp),
            signature: try key.signature(for: payload).base64EncodedString())
    }

    /// Signs with Apple's `PromotionalOfferSignatureCreator`, given the key in PEM.
    static func signWithAppleLibrary(
        python: String, productID: String, offerID: String, account: String = ""
    ) throws -> SignedOffer {
        let key = try key()
        let nonce = UUID()
        let timestamp = Int((Date().timeIntervalSince1970 * 1000).rounded())
        let script = """
            import sys, uuid
            from appstoreserverlibrary.promotional_offer import PromotionalOfferSignatureCreator
            pem, key_id, bundle_id, product, offer, account, nonce, timestamp = sys.argv[1:]
            creator = PromotionalOfferSignatureCreator(pem.encode(), key_id, bundle_id)
            print(creator.create_signature(product, offer, account, uuid.UUID(nonce), int(timestamp)))
            """
        let run = try runProcess(
            python,
            [
                "-c", script, key.privateKeyPEM, key.id, Ledger.defaultBundleID, productID, offerID, account,
                nonce.uuidString.lowercased(), String(timestamp),
            ])
        guard run.status == 0 else { throw CommandFailure("Apple's library failed to sign: \(run.output)") }
        return SignedOffer(
            offerID: offerID, keyID: key.id, nonce: nonce, timestamp: timestamp,
            signature: run.output.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}

extension OfferServer {
    /// Signs with Apple's `PromotionalOfferV2SignatureCreator` (the 2025 form, a compact JWS),
    /// naming the customer's transaction `transactionID`.
    static func signJWSWithAppleLibrary(
        python: String, productID: String, offerID: String, transactionID: String
    ) throws -> String {
        try signJWS(
            python: python, creator: "PromotionalOfferV2SignatureCreator",
            call: "create_signature(\(quoted(productID)), \(quoted(offerID)), \(quoted(transactionID)))")
    }

    /// Signs with Apple's `IntroductoryOfferEligibilitySignatureCreator`: the server's say on
    /// the introductory offer of `productID` for the customer of `transactionID`.
    static func signEligibilityWithAppleLibrary(
        python: String, productID: String, allow: Bool, transactionID: String
    ) throws -> String {
        try signJWS(
            python: python, creator: "IntroductoryOfferEligibilitySignatureCreator",
            call: "create_signature(\(quoted(productID)), \(allow ? "True" : "False"), \(quoted(transactionID)))")
    }

    /// Runs one of Apple's JWS signature creators with the shop's key (in PEM), the issuer
    /// `issuer-1` and the store's bundle id, and returns what its `call` prints.
    private static func signJWS(python: String, creator: String, call: String) throws -> String {
        let key = try key()
        let script = """
            import sys
            from appstoreserverlibrary.jws_signature_creator import \(creator)
            pem, key_id, bundle_id = sys.argv[1:]
            print(\(creator)(pem.encode(), key_id, 'issuer-1', bundle_id).\(call))
            """
        let run = try runProcess(python, ["-c", script, key.privateKeyPEM, key.id, Ledger.defaultBundleID])
        guard run.status == 0 else { throw CommandFailure("Apple's library failed to sign: \(run.output)") }
        return run.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `text` as a Python string literal (identifiers and digits here: no quote to escape).
    private static func quoted(_ text: String) -> String { "'" + text + "'" }
}

struct CommandFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
