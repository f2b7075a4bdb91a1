import ArgumentParser
import Foundation
import StoreLedger

struct PurchaseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "purchase",
        abstract: "Buy a product: prints the transaction after the simulated store processed it.",
        discussion: """
            A failed or cancelled purchase is a normal result (exit 0): look at its state and error. \
            --error-code alone implies --outcome fail. The same --idempotency-key returns the existing \
            transaction and creates nothing. --promotional-offer redeems an offer of a subscription: \
            unsigned, as StoreKitTest's promotionalOffer(id:), or signed by a server with the four \
            --offer-* options (checked against the store's subscription offers key); an offer the \
            store refuses is an error (exit 1) and records nothing. --offer-code redeems an offer code of \
            the subscription by its reference name (the store checks it is for the customer: new to the \
            group, lapsed, or subscribed now), as the code redemption sheet or StoreKitTest's \
            codeOffer(referenceName:) does. --win-back-offer redeems a win-back offer of the subscription by \
            its identifier (the store checks the subscription churned and the offer's rules hold), as \
            StoreKit's winBackOffer(_:) does.
            """)

    enum Outcome: String, ExpressibleByArgument, CaseIterable {
        case success, cancel, fail, deferred, interrupted
    }

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The product identifier.")
    var productID: String

    // A number may be negative: `--quantity -1` is its value (refused as a quantity, exit 65),
    // not a missing one.
    @Option(parsing: .unconditional, help: "How many (1...10).")
    var quantity = 1

    @Option(help: "The app account token, a UUID.")
    var account: String?

    @Option(name: .customLong("idempotency-key"), help: "A key that makes retrying this purchase safe.")
    var idempotencyKey: String?

    @Option(
        help:
            "What the simulated store does: success, cancel, fail, deferred (Ask to Buy) or interrupted (default: the store's settings)."
    )
    var outcome: Outcome?

    @Option(
        name: .customLong("error-code"), help: "The SKError code of a failure, by name or number (default unknown).")
    var errorCode: String?

    @Option(
        name: .customLong("promotional-offer"),
        help: "The identifier of a promotional offer of the subscription to redeem.")
    var promotionalOffer: String?

    @Option(name: .customLong("offer-key-id"), help: "The identifier of the key that signed the offer.")
    var offerKeyID: String?

    @Option(name: .customLong("offer-nonce"), help: "The signed nonce, a UUID.")
    var offerNonce: String?

    @Option(
        name: .customLong("offer-timestamp"), parsing: .unconditional,
        help: "When the offer was signed, in milliseconds since 1970.")
    var offerTimestamp: Int64?

    @Option(name: .customLong("offer-signature"), help: "The offer's signature: base64 of its DER encoding.")
    var offerSignature: String?

    @Option(
        name: .customLong("offer-jws"),
        help: "The offer's signature in its 2025 form: a compact JWS signed with the subscription offers key.")
    var offerJWS: String?

    @Option(
        name: .customLong("offer-code"), help: "The reference name of an offer code of the subscription to redeem.")
    var offerCode: String?

    @Option(
        name: .customLong("win-back-offer"), help: "The identifier of a win-back offer of the subscription to redeem.")
    var winBackOffer: String?

    @Option(
        name: .customLong("introductory-offer-eligibility"),
        help: "A compact JWS from your server giving or withholding the introductory offer.")
    var introductoryOfferEligibility: String?

    @Option(
        name: .customLong("purchase-date"),
        help: "Date the purchase in the past (ISO 8601): a subscription renews from then up to now.")
    var purchaseDate: String?

    @Flag(
        name: .customLong("cancel-immediately"),
        help: "With --purchase-date: a subscription has its first period only.")
    var cancelImmediately = false

    func validate() throws {
        if errorCode != nil, let outcome, outcome != .fail {
            throw ValidationError("--error-code goes with --outcome fail, not \(outcome.rawValue)")
        }
        let signed = [offerKeyID, offerNonce, offerTimestamp.map(String.init), offerSignature].filter { $0 != nil }
            .count
        if offerJWS != nil, promotionalOffer == nil {
            throw ValidationError("--offer-jws goes with --promotional-offer")
        }
        if offerJWS != nil, signed > 0 {
            throw ValidationError(
                "--offer-jws replaces --offer-key-id, --offer-nonce, --offer-timestamp and --offer-signature")
        }
        if signed > 0, promotionalOffer == nil {
            throw ValidationError(
                "--offer-key-id, --offer-nonce, --offer-timestamp and --offer-signature go with --promotional-offer")
        }
        if cancelImmediately, purchaseDate == nil {
            throw ValidationError("--cancel-immediately goes with --purchase-date")
        }
        if signed > 0, signed < 4 {
            throw ValidationError(
                "a signed offer needs all of --offer-key-id, --offer-nonce, --offer-timestamp and --offer-signature")
        }
    }

    func run() async throws {
        var payment = Payment(
            productID: productID, quantity: quantity, appAccountToken: try parseAccount(account),
            idempotencyKey: idempotencyKey, simulatedOutcome: try simulatedOutcome())
        payment.discount = try discount()
        payment.introductoryOfferEligibility = introductoryOfferEligibility
        payment.codeOffer = offerCode
        payment.winBackOffer = winBackOffer
        payment.backdating = try purchaseDate.map {
            BackdatedPurchase(date: try StoreTime.date($0), renews: !cancelImmediately)
        }
        let queue = try options.openQueue()
        let added = try await queue.addReportingReplay(payment)
        let changed = try queue.ledger.subscriptionChanged(by: added.transaction)
        try options.output.emit(
            Purchased(transaction: added.transaction, replayed: added.replayed, changesRenewalOf: changed?.id)
        ) {
            describe(added.transaction)
                + (changed.map {
                    "\nchanges the next renewal of #\($0.id) (\($0.productID)): no transaction of the App Store, "
                        + "nothing charged now"
                } ?? "")
                + (added.replayed
                    ? "\nreplayed: the idempotency key names this earlier transaction; nothing was bought again" : "")
        }
        // A back-dated subscription's renewals up to now, as a clock move makes them (the
        // purchase is committed and printed whatever happens to them).
        if payment.backdating != nil, added.transaction.productType == .autoRenewable {
            do {
                try await queue.renewDueSubscriptions()
            } catch {
                Output.message("warning: the renewals up to now were not made (the next launch makes them): \(error)")
            }
        }
    }

    /// The transaction's fields, whether the idempotency key replayed an earlier purchase, and
    /// the subscription period whose next renewal the payment only changed (a downgrade), if any.
    struct Purchased: Encodable {
        let transaction: PaymentTransaction
        let replayed: Bool
        let changesRenewalOf: UInt64?

        private enum Key: String, CodingKey { case replayed, changesRenewalOf }

        func encode(to encoder: any Encoder) throws {
            try transaction.encode(to: encoder)
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(replayed, forKey: .replayed)
            try container.encode(changesRenewalOf, forKey: .changesRenewalOf)
        }
    }

    /// The promotional offer of `--promotional-offer` and its signature, if any.
    private func discount() throws -> PaymentDiscount? {
        guard let promotionalOffer else { return nil }
        if let offerJWS { return PaymentDiscount(offerID: promotionalOffer, compactJWS: offerJWS) }
        guard let offerKeyID, let offerNonce, let offerTimestamp, let offerSignature else {
            return PaymentDiscount(offerID: promotionalOffer, signature: nil)
        }
        guard let nonce = UUID(uuidString: offerNonce) else {
            throw InputError(description: "invalid --offer-nonce \"\(offerNonce)\": it must be a UUID")
        }
        guard let signature = Data(base64Encoded: offerSignature) else {
            throw InputError(
                description: "invalid --offer-signature: it must be base64 (of the signature's DER encoding)")
        }
        return PaymentDiscount(
            offerID: promotionalOffer,
            signature: OfferSignature(keyID: offerKeyID, nonce: nonce, timestamp: offerTimestamp, signature: signature))
    }

    private func simulatedOutcome() throws -> SimulatedOutcome? {
        var code = StoreErrorCode.unknown
        if let errorCode {
            guard let parsed = StoreErrorCode(nameOrRawValue: errorCode) else {
                throw InputError(
                    description: "unknown error code \"\(errorCode)\": use an SKError code name "
                        + "(paymentCancelled, paymentNotAllowed, ...) or number (0...\(StoreErrorCode.allCases.count - 1))"
                )
            }
            code = parsed
        }
        switch outcome ?? (errorCode == nil ? nil : .fail) {
        case nil: return nil
        case .success: return .success
        case .cancel: return .userCancelled
        case .deferred: return .deferred
        case .interrupted: return .interrupted
        case .fail: return .failed(code)
        }
    }
}

/// Parses `--account`: an app account token must be a UUID.
func parseAccount(_ text: String?) throws -> UUID? {
    guard let text else { return nil }
    guard let uuid = UUID(uuidString: text) else {
        throw InputError(
            description:
                "invalid account \"\(text)\": an app account token must be a UUID such as 6F9619FF-8B86-D011-B42D-00C04FC964FF"
        )
    }
    return uuid
}
