public import Foundation

/// A request to buy a product (StoreKit 1's `SKPayment`): immutable; `SKMutablePayment` is
/// the one to change.
///
/// Sendable by hand: its properties are set by the initializer only; an `open` class cannot be
/// checked by the compiler.
open class SKPayment: NSObject, NSCopying, NSMutableCopying, @unchecked Sendable {
    // Stored here, changed only through `SKMutablePayment`'s setters before the payment is
    // added: StoreKit's own payments are used the same way.
    fileprivate var _productIdentifier: String
    fileprivate var _quantity: Int = 1
    fileprivate var _applicationUsername: String?
    fileprivate var _requestData: Data?
    fileprivate var _simulatesAskToBuyInSandbox = false
    fileprivate var _paymentDiscount: SKPaymentDiscount?

    /// A payment for one unit of `product`.
    public convenience init(product: SKProduct) {
        self.init(productIdentifier: product.productIdentifier)
    }

    init(productIdentifier: String) {
        _productIdentifier = productIdentifier
        super.init()
    }

    /// An empty payment (no product): what a test double that subclasses `SKPayment` starts
    /// from, overriding what it needs; `SKMutablePayment()` is one whose fields can be set.
    public override init() {
        _productIdentifier = ""
        super.init()
    }

    /// The identifier of the product to buy, as the ledger's catalog knows it.
    open var productIdentifier: String { _productIdentifier }
    /// 1...10; StoreKit fails the payment outside that range.
    open var quantity: Int { _quantity }
    /// An opaque account string of the app (a hash of the user's account, say): any string.
    /// It scopes restores; a UUID also becomes the transaction's app account token.
    open var applicationUsername: String? { _applicationUsername }
    /// Kept with the payment; StoreKit reserves it, so it must stay `nil`.
    open var requestData: Data? { _requestData }
    /// True: the simulated store defers the purchase as Ask to Buy does.
    open var simulatesAskToBuyInSandbox: Bool { _simulatesAskToBuyInSandbox }
    /// The signed promotional offer to apply, if any: the queue checks it against the store's
    /// subscription offers key before storing anything.
    open var paymentDiscount: SKPaymentDiscount? { _paymentDiscount }

    open func copy(with zone: NSZone? = nil) -> Any {
        copy(into: SKPayment(productIdentifier: _productIdentifier))
    }

    open func mutableCopy(with zone: NSZone? = nil) -> Any {
        copy(into: SKMutablePayment(productIdentifier: _productIdentifier))
    }

    private func copy<P: SKPayment>(into payment: P) -> P {
        payment._quantity = _quantity
        payment._applicationUsername = _applicationUsername
        payment._requestData = _requestData
        payment._simulatesAskToBuyInSandbox = _simulatesAskToBuyInSandbox
        payment._paymentDiscount = _paymentDiscount
        return payment
    }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? SKPayment else { return false }
        return other._productIdentifier == _productIdentifier && other._quantity == _quantity
            && other._applicationUsername == _applicationUsername && other._requestData == _requestData
            && other._simulatesAskToBuyInSandbox == _simulatesAskToBuyInSandbox
    }

    open override var hash: Int {
        var hasher = Hasher()
        hasher.combine(_productIdentifier)
        hasher.combine(_quantity)
        hasher.combine(_applicationUsername)
        return hasher.finalize()
    }
}

/// A payment whose fields can be set (StoreKit 1's `SKMutablePayment`).
///
/// Sendable by hand, as StoreKit's: an app sets its fields before it adds the payment, never from
/// two threads at once; the queue adds a copy.
open class SKMutablePayment: SKPayment, @unchecked Sendable {
    /// The identifier of the product to buy; it must name a product of the ledger's catalog when
    /// the payment is added.
    open override var productIdentifier: String {
        get { _productIdentifier }
        set { _productIdentifier = newValue }
    }

    open override var quantity: Int {
        get { _quantity }
        set { _quantity = newValue }
    }

    open override var applicationUsername: String? {
        get { _applicationUsername }
        set { _applicationUsername = newValue }
    }

    open override var requestData: Data? {
        get { _requestData }
        set { _requestData = newValue }
    }

    open override var simulatesAskToBuyInSandbox: Bool {
        get { _simulatesAskToBuyInSandbox }
        set { _simulatesAskToBuyInSandbox = newValue }
    }

    /// The signed promotional offer to apply, or `nil` to pay the regular price.
    open override var paymentDiscount: SKPaymentDiscount? {
        get { _paymentDiscount }
        set { _paymentDiscount = newValue }
    }
}

/// A signed promotional offer to apply to a payment (StoreKit 1's `SKPaymentDiscount`).
///
/// Sendable by hand: its properties are set by the initializer only; an `open` class cannot be
/// checked by the compiler.
open class SKPaymentDiscount: NSObject, @unchecked Sendable {
    /// The identifier of the subscription's promotional offer to redeem.
    public let identifier: String
    /// The identifier of the subscription offers key the app's server signed with.
    public let keyIdentifier: String
    /// The one-time value the server signed; the store accepts each nonce once.
    public let nonce: UUID
    /// The signature as base64 text; text that is not base64 fails the payment with `invalidSignature`.
    public let signature: String
    /// When the server signed, in milliseconds since 1970; the store refuses one more than 24 hours
    /// from its clock.
    public let timestamp: NSNumber

    /// A promotional offer with the server's signature and the values it signed.
    public init(identifier: String, keyIdentifier: String, nonce: UUID, signature: String, timestamp: NSNumber) {
        self.identifier = identifier
        self.keyIdentifier = keyIdentifier
        self.nonce = nonce
        self.signature = signature
        self.timestamp = timestamp
        super.init()
    }
}
