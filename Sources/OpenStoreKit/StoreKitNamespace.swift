/// StoreKit's module name as a namespace, so that code naming types through it
/// (`typealias Transaction = StoreKit.Transaction`, to tell it from another `Transaction`)
/// compiles unchanged: `StoreKit.Transaction` is `OpenStoreKit.Transaction`.
public enum StoreKit {
    public typealias AppStore = OpenStoreKit.AppStore
    public typealias Product = OpenStoreKit.Product
    public typealias StoreKitError = OpenStoreKit.StoreKitError
    public typealias Storefront = OpenStoreKit.Storefront
    public typealias Transaction = OpenStoreKit.Transaction
    public typealias VerificationResult = OpenStoreKit.VerificationResult
    public typealias SKError = OpenStoreKit.SKError
    public typealias SKMutablePayment = OpenStoreKit.SKMutablePayment
    public typealias SKPayment = OpenStoreKit.SKPayment
    public typealias SKPaymentDiscount = OpenStoreKit.SKPaymentDiscount
    public typealias SKPaymentQueue = OpenStoreKit.SKPaymentQueue
    public typealias SKPaymentTransaction = OpenStoreKit.SKPaymentTransaction
    public typealias SKPaymentTransactionObserver = OpenStoreKit.SKPaymentTransactionObserver
    public typealias SKPaymentTransactionState = OpenStoreKit.SKPaymentTransactionState
    public typealias SKProduct = OpenStoreKit.SKProduct
    public typealias SKProductDiscount = OpenStoreKit.SKProductDiscount
    public typealias SKProductSubscriptionPeriod = OpenStoreKit.SKProductSubscriptionPeriod
    public typealias SKProductsRequest = OpenStoreKit.SKProductsRequest
    public typealias SKProductsRequestDelegate = OpenStoreKit.SKProductsRequestDelegate
    public typealias SKProductsResponse = OpenStoreKit.SKProductsResponse
    public typealias SKRequest = OpenStoreKit.SKRequest
    public typealias SKRequestDelegate = OpenStoreKit.SKRequestDelegate
    public typealias SKStorefront = OpenStoreKit.SKStorefront
}
