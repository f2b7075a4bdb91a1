/// StoreKit's module name as a namespace, so that code naming types through it
/// (`typealias Transaction = StoreKit.Transaction`, to tell it from another `Transaction`)
/// compiles unchanged: `StoreKit.Transaction` is `OpenStoreKit.Transaction`.
public enum StoreKit {
    /// StoreKit 2's `AppStore` (`OpenStoreKit.AppStore`): whether payments are allowed, and `sync()` with the ledger's store.
    public typealias AppStore = OpenStoreKit.AppStore
    /// StoreKit 2's `Product` (`OpenStoreKit.Product`): a product of the ledger's catalog, localized and priced for the store.
    public typealias Product = OpenStoreKit.Product
    /// StoreKit 2's general error type (`OpenStoreKit.StoreKitError`).
    public typealias StoreKitError = OpenStoreKit.StoreKitError
    /// StoreKit 2's `Storefront` (`OpenStoreKit.Storefront`): the store's country and currency, from the ledger's settings.
    public typealias Storefront = OpenStoreKit.Storefront
    /// StoreKit 2's `Transaction` (`OpenStoreKit.Transaction`), for code that must tell it from another module's `Transaction`.
    public typealias Transaction = OpenStoreKit.Transaction
    /// StoreKit 2's `VerificationResult` (`OpenStoreKit.VerificationResult`): a value together with the outcome of its verification.
    public typealias VerificationResult = OpenStoreKit.VerificationResult
    /// StoreKit 1's error (`OpenStoreKit.SKError`), with `SKError.Code`'s raw values.
    public typealias SKError = OpenStoreKit.SKError
    /// StoreKit 1's payment request whose fields can be set (`OpenStoreKit.SKMutablePayment`).
    public typealias SKMutablePayment = OpenStoreKit.SKMutablePayment
    /// StoreKit 1's immutable payment request (`OpenStoreKit.SKPayment`).
    public typealias SKPayment = OpenStoreKit.SKPayment
    /// StoreKit 1's signed promotional offer attached to a payment (`OpenStoreKit.SKPaymentDiscount`).
    public typealias SKPaymentDiscount = OpenStoreKit.SKPaymentDiscount
    /// StoreKit 1's payment queue (`OpenStoreKit.SKPaymentQueue`), working on the store's ledger.
    public typealias SKPaymentQueue = OpenStoreKit.SKPaymentQueue
    /// StoreKit 1's queue transaction (`OpenStoreKit.SKPaymentTransaction`): a snapshot of a ledger row.
    public typealias SKPaymentTransaction = OpenStoreKit.SKPaymentTransaction
    /// StoreKit 1's protocol for hearing the payment queue's changes (`OpenStoreKit.SKPaymentTransactionObserver`).
    public typealias SKPaymentTransactionObserver = OpenStoreKit.SKPaymentTransactionObserver
    /// StoreKit 1's transaction states (`OpenStoreKit.SKPaymentTransactionState`).
    public typealias SKPaymentTransactionState = OpenStoreKit.SKPaymentTransactionState
    /// StoreKit 1's product, as a products request returns it (`OpenStoreKit.SKProduct`).
    public typealias SKProduct = OpenStoreKit.SKProduct
    /// StoreKit 1's introductory or promotional subscription offer (`OpenStoreKit.SKProductDiscount`).
    public typealias SKProductDiscount = OpenStoreKit.SKProductDiscount
    /// StoreKit 1's subscription period (`OpenStoreKit.SKProductSubscriptionPeriod`).
    public typealias SKProductSubscriptionPeriod = OpenStoreKit.SKProductSubscriptionPeriod
    /// StoreKit 1's request for products by identifier (`OpenStoreKit.SKProductsRequest`).
    public typealias SKProductsRequest = OpenStoreKit.SKProductsRequest
    /// StoreKit 1's protocol for receiving a products request's answer (`OpenStoreKit.SKProductsRequestDelegate`).
    public typealias SKProductsRequestDelegate = OpenStoreKit.SKProductsRequestDelegate
    /// StoreKit 1's answer to a products request (`OpenStoreKit.SKProductsResponse`).
    public typealias SKProductsResponse = OpenStoreKit.SKProductsResponse
    /// StoreKit 1's base class of store requests (`OpenStoreKit.SKRequest`).
    public typealias SKRequest = OpenStoreKit.SKRequest
    /// StoreKit 1's protocol for hearing the end of any request (`OpenStoreKit.SKRequestDelegate`).
    public typealias SKRequestDelegate = OpenStoreKit.SKRequestDelegate
    /// StoreKit 1's storefront (`OpenStoreKit.SKStorefront`).
    public typealias SKStorefront = OpenStoreKit.SKStorefront
}
