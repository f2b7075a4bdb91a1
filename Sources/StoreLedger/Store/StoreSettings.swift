import Foundation

/// Seeding the store's settings from the `settings` of a StoreKit configuration file.
extension StoreSettings {
    /// These settings with the test switches of a StoreKit configuration file applied.
    package func applying(_ file: StoreKitSettings) -> StoreSettings {
        var settings = self
        if let code = file.storefront, let storefront = Storefront(countryCode: code) {
            settings.storefront = storefront
            settings.locale = file.locale ?? storefront.defaultLocale
        } else if let locale = file.locale {
            settings.locale = locale
        }
        if let askToBuy = file.askToBuyEnabled { settings.askToBuyEnabled = askToBuy }
        if let retry = file.billingRetryOnRenewal { settings.billingRetryOnRenewal = retry }
        if let grace = file.billingGracePeriodEnabled { settings.billingGracePeriodEnabled = grace }
        if let fail = file.failTransactionsEnabled {
            settings.failTransactionsError = fail ? StoreErrorCode(rawValue: file.storeKitError ?? 0) ?? .unknown : nil
        }
        if let rate = file.timeRate.flatMap(TimeRate.init(rawValue:)) { settings.timeRate = rate }
        return settings
    }
}
