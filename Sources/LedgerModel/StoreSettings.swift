public import Foundation

/// The simulated store's settings and test controls, stored in the ledger so that the `ledger`
/// tool and the app see the same store (Xcode's `SKTestSession` properties).
public struct StoreSettings: Sendable, Hashable {
    /// The storefront the shopper buys from: it sets the currency and the default locale.
    public var storefront: Storefront
    /// The shopper's locale: picks product localizations and the language of prices.
    public var locale: String
    /// False: every payment fails with `paymentNotAllowed`.
    public var canMakePayments = true
    /// Every purchase is deferred until approved or declined.
    public var askToBuyEnabled = false
    /// Every purchase is interrupted: it fails until its issue is resolved.
    public var interruptedPurchasesEnabled = false
    /// Every purchase fails with this error; `nil` when off.
    public var failTransactionsError: StoreErrorCode?
    /// How fast subscription time passes; real time by default.
    public var timeRate = TimeRate.realTime
    /// Every renewal fails on a billing issue: the subscription enters billing retry until the
    /// issue is resolved (Xcode's `shouldEnterBillingRetryOnRenewal`).
    public var billingRetryOnRenewal = false
    /// A subscription in billing retry keeps its entitlement for a grace period (Xcode's
    /// `billingGracePeriodIsEnabled`; no effect without billing retry).
    public var billingGracePeriodEnabled = false
    /// The app's bundle identifier: promotional offer signatures sign it, and signed
    /// transactions name it (`bundleId`).
    public var bundleID = StoreSettings.defaultBundleID
    /// The environment the store's signed transactions and renewal info name: `.xcode` by
    /// default, as Xcode's StoreKit testing signs.
    public var environment = SigningEnvironment.xcode
    /// The app's Apple ID in the App Store (`appAppleId`), which Apple's verifiers require in the
    /// production environment; `nil` until set.
    public var appAppleID: Int64?
    /// The version of the app installed (its `CFBundleVersion`), which the app transaction
    /// names (`applicationVersion`); `1.0` by default.
    public var appVersion = StoreSettings.defaultAppVersion
    /// Where the store POSTs its App Store Server Notifications V2 (`ledger serve` sends them):
    /// an `http` or `https` URL; `nil` while none is set, and then no notification is recorded.
    public var notificationURL: URL?
    /// Why the notification URL the ledger holds cannot be used (a ledger of an older release
    /// took values this one refuses); `nil` when it can, or none is set. The sender records each
    /// attempt as failed with this reason, rather than sending nowhere.
    package var notificationURLProblem: String?

    /// Whether the store records notifications: it holds a notification URL, usable or not (one
    /// it cannot use is recorded, and each attempt to send it fails with the problem).
    package var notifies: Bool { notificationURL != nil || notificationURLProblem != nil }
    /// The store signs what it hands out with a signature that does not match it: verification
    /// fails with `invalidSignature` (a test of an app's handling of unverified transactions).
    public var invalidSignaturesEnabled = false

    /// Default settings for `storefront` (USA by default), in `locale` or else the storefront's
    /// default locale.
    public init(storefront: Storefront = .unitedStates, locale: String? = nil) {
        self.storefront = storefront
        self.locale = locale ?? storefront.defaultLocale
    }

    /// The bundle identifier a store without a `bundleID` setting signs for.
    public static let defaultBundleID = "com.example.app"

    /// The app version a store without an `appVersion` setting names.
    public static let defaultAppVersion = "1.0"

    /// The settings a store holds as text (`storedValues`), with defaults (USA, en_US, payments
    /// allowed, real time, no test switch on) for what is not set.
    package init(stored: [String: String]) {
        let storefront = stored[StoreSettingKey.storefront].flatMap(Storefront.init(countryCode:)) ?? .unitedStates
        self.init(storefront: storefront, locale: stored[StoreSettingKey.locale])
        canMakePayments = stored[StoreSettingKey.canMakePayments] != "false"
        askToBuyEnabled = stored[StoreSettingKey.askToBuy] == "true"
        interruptedPurchasesEnabled = stored[StoreSettingKey.interruptedPurchases] == "true"
        failTransactionsError = stored[StoreSettingKey.failTransactions].flatMap(Int.init).flatMap(
            StoreErrorCode.init(rawValue:))
        timeRate = stored[StoreSettingKey.timeRate].flatMap(TimeRate.init(nameOrRawValue:)) ?? .realTime
        billingRetryOnRenewal = stored[StoreSettingKey.billingRetryOnRenewal] == "true"
        billingGracePeriodEnabled = stored[StoreSettingKey.billingGracePeriod] == "true"
        bundleID = stored[StoreSettingKey.bundleID] ?? Self.defaultBundleID
        environment = stored[StoreSettingKey.environment].flatMap(SigningEnvironment.init(rawValue:)) ?? .xcode
        appAppleID = stored[StoreSettingKey.appAppleID].flatMap(Int64.init).flatMap { $0 > 0 ? $0 : nil }
        appVersion = stored[StoreSettingKey.appVersion] ?? Self.defaultAppVersion
        invalidSignaturesEnabled = stored[StoreSettingKey.invalidSignatures] == "true"
        if let text = stored[StoreSettingKey.notificationURL], text != "none" {
            do {
                notificationURL = try NotificationURL.parse(text)
            } catch {
                // Quoted in part: what a hand edit left may be of any length.
                // Control characters escaped: this text reaches terminals (`notifications show`).
                let cut = text.utf8.count <= 256 ? text : String(text.prefix(256)) + "..."
                let shown = cut.unicodeScalars.map { scalar in
                    scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
                        ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
                }.joined()
                notificationURLProblem = "the notification URL \"\(shown)\" cannot be used: \(error.reason)"
            }
        }
    }

    /// The settings as the ledger stores them.
    package var storedValues: [String: String] {
        [
            StoreSettingKey.storefront: storefront.countryCode,
            StoreSettingKey.locale: locale,
            StoreSettingKey.canMakePayments: String(canMakePayments),
            StoreSettingKey.askToBuy: String(askToBuyEnabled),
            StoreSettingKey.interruptedPurchases: String(interruptedPurchasesEnabled),
            StoreSettingKey.failTransactions: failTransactionsError.map { String($0.rawValue) } ?? "off",
            StoreSettingKey.timeRate: timeRate.name,
            StoreSettingKey.billingRetryOnRenewal: String(billingRetryOnRenewal),
            StoreSettingKey.billingGracePeriod: String(billingGracePeriodEnabled),
            StoreSettingKey.bundleID: bundleID,
            StoreSettingKey.environment: environment.rawValue,
            StoreSettingKey.appAppleID: appAppleID.map(String.init) ?? "none",
            StoreSettingKey.appVersion: appVersion,
            StoreSettingKey.invalidSignatures: String(invalidSignaturesEnabled),
            StoreSettingKey.notificationURL: notificationURL?.absoluteString ?? "none",
        ]
    }

    /// What the simulated store does with a payment, by the store's switches alone: the
    /// payment's own simulated outcome when it has one, else failing, interrupted or Ask to
    /// Buy when switched on. `canMakePayments` false fails every payment.
    package func plannedOutcome(_ simulated: SimulatedOutcome?) -> PlannedOutcome {
        guard canMakePayments else { return .failed(TransactionError(code: .paymentNotAllowed)) }
        if let simulated { return simulated.plannedOutcome }
        if let code = failTransactionsError { return .failed(TransactionError(code: code)) }
        if interruptedPurchasesEnabled { return .interrupted }
        if askToBuyEnabled { return .deferred }
        return .purchased
    }
}

/// The environment the store's signed values name (the App Store's `environment` field).
public enum SigningEnvironment: String, Sendable, Hashable, CaseIterable {
    /// Xcode's StoreKit testing: Apple's server libraries skip the signature check for it.
    case xcode = "Xcode"
    /// The App Store's sandbox: a server verifies the signature and its chain, so a test
    /// trusting the ledger's root runs a server's real verification path end to end.
    case sandbox = "Sandbox"
    /// The App Store itself, as production servers see it: Apple's verifiers check it as the
    /// sandbox, and ask for the app's Apple ID (`StoreSettings.appAppleID`).
    case production = "Production"
}
