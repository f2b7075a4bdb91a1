public import Foundation

/// A request to buy a product (`SKPayment`).
public struct Payment: Sendable, Hashable {
    /// The identifier of the product to buy; adding a payment for a product the catalog does not
    /// have fails with `UnknownProductError`.
    public var productID: String
    /// 1...10.
    public var quantity: Int
    /// Ties the purchase to one of the app's accounts; restores can be scoped by it.
    public var appAccountToken: UUID?
    /// StoreKit 1's account string, kept as given (it scopes restores); see
    /// `init(productID:quantity:applicationUsername:...)`.
    public var applicationUsername: String?
    /// Adding a payment whose key the ledger already holds returns the existing transaction.
    public var idempotencyKey: String?
    /// What the simulated store does with this payment; `nil` lets the store's settings decide.
    public var simulatedOutcome: SimulatedOutcome?
    /// A promotional offer to redeem (`SKPayment.paymentDiscount`): the store checks it when
    /// the payment is added and refuses the payment with `PromotionalOfferError` otherwise.
    public var discount: PaymentDiscount?
    /// A test purchase dated in the past (StoreKitTest's `purchaseDate(_:renewalBehavior:)`);
    /// `nil`: dated when the store charges it. The date may not be after the store's time; a
    /// back-dated auto-renewable subscription must be its group's first purchase, and renews
    /// from then up to the store's time (the renewals are made as a clock move makes them) or,
    /// with `renews` false, has its first period only.
    public var backdating: BackdatedPurchase?
    /// The app's server's say on the introductory offer (StoreKit's
    /// `introductoryOfferEligibility(compactJWS:)`): a compact JWS signed with the subscription
    /// offers key whose `allowIntroductoryOffer` gives the offer, or withholds it, whatever the
    /// customer's history; checked when the payment is added (`PromotionalOfferError`).
    public var introductoryOfferEligibility: String?
    /// The reference name of an offer code to redeem (StoreKitTest's
    /// `codeOffer(referenceName:)`, the code redemption sheet): the store checks that the
    /// product has it and that it is for the customer (new to the subscription group, lapsed,
    /// or subscribed now) when the payment is added, and refuses the payment with
    /// `PromotionalOfferError` otherwise. Not with `discount`.
    public var codeOffer: String?
    /// The identifier of a win-back offer to redeem (StoreKit's `winBackOffer(_:)`): the store
    /// checks that the product has it and that the customer may redeem it now (churned, and
    /// the offer's rules hold) when the payment is added, and refuses the payment with
    /// `PromotionalOfferError` otherwise. Not with another offer.
    public var winBackOffer: String?

    /// StoreKit 2's form: a payment tied, when `appAccountToken` is given, to one of the app's
    /// accounts, with no `applicationUsername`. The product and `quantity` are checked when the
    /// payment is added to the queue.
    public init(
        productID: String, quantity: Int = 1, appAccountToken: UUID? = nil, idempotencyKey: String? = nil,
        simulatedOutcome: SimulatedOutcome? = nil
    ) {
        self.productID = productID
        self.quantity = quantity
        self.appAccountToken = appAccountToken
        self.idempotencyKey = idempotencyKey
        self.simulatedOutcome = simulatedOutcome
    }

    /// StoreKit 1's form: `applicationUsername` is any opaque string, kept as given; it is
    /// also the app account token when it parses as a UUID, as StoreKit does.
    public init(
        productID: String, quantity: Int = 1, applicationUsername: String?, idempotencyKey: String? = nil,
        simulatedOutcome: SimulatedOutcome? = nil
    ) {
        self.init(
            productID: productID, quantity: quantity,
            appAccountToken: applicationUsername.flatMap(UUID.init(uuidString:)),
            idempotencyKey: idempotencyKey, simulatedOutcome: simulatedOutcome)
        self.applicationUsername = applicationUsername
    }
}

extension Payment {
    /// The payment as the ledger takes it.
    package var newPayment: NewPayment {
        var payment = NewPayment(
            productID: productID, quantity: quantity, appAccountToken: appAccountToken,
            applicationUsername: applicationUsername, idempotencyKey: idempotencyKey,
            simulatedOutcome: simulatedOutcome, discount: discount)
        payment.backdating = backdating
        payment.introductoryOfferEligibility = introductoryOfferEligibility
        payment.codeOffer = codeOffer
        payment.winBackOffer = winBackOffer
        return payment
    }
}
