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

/// One setting of the store, as `ledger store set KEY VALUE` names it.
public enum StoreControl: String, Sendable, CaseIterable {
    /// The shopper's storefront and locale, the purchase switches, the forced failure and the
    /// time rate.
    case storefront, locale, canMakePayments, askToBuy, interruptedPurchases, failTransactions, timeRate
    /// The subscription billing switches, and the app's bundle identifier.
    case billingRetryOnRenewal, billingGracePeriod, bundleID
    /// What signed transactions say and whether their signatures hold.
    case environment, invalidSignatures
    /// The app's Apple ID, which production payloads carry, and the version installed, which
    /// the app transaction names.
    case appAppleID, appVersion
    /// Where Server Notifications V2 are sent.
    case notificationURL

    /// What a value of this setting looks like, for error messages and help.
    public var expected: String {
        switch self {
        case .storefront: "an ISO 3166-1 alpha-3 storefront code such as USA, FRA or JPN"
        case .locale: "a locale identifier with a known language (and region) such as en_US or fr_FR"
        case .canMakePayments, .askToBuy, .interruptedPurchases, .billingRetryOnRenewal, .billingGracePeriod,
            .invalidSignatures:
            "true or false"
        case .failTransactions: "off, or an SKError code name or number such as paymentNotAllowed or 4"
        case .timeRate:
            "a time rate name or raw value such as realTime, oneSecondIsOneDay or monthlyRenewalEveryThirtySeconds"
        case .bundleID: "a bundle identifier of 1 to 155 letters, digits, hyphens and periods such as com.example.app"
        case .environment: "Xcode, Sandbox or Production"
        case .appAppleID: "the app's Apple ID, a positive integer such as 1234567890, or none"
        case .appVersion: "a bundle version of one to three period-separated numbers such as 1.0 or 2.3.1"
        case .notificationURL:
            "an http or https URL with a host (a DNS name, an IPv4 address or a bracketed IPv6 address) and a port from 1 to 65535, of at most \(Self.notificationURLLimit) bytes, such as http://127.0.0.1:9000/notifications, or none"
        }
    }

    /// `settings` with this setting changed to `text`.
    /// - Throws: `StoreSettingError` when `text` is not a valid value.
    public func apply(_ text: String, to settings: StoreSettings) throws -> StoreSettings {
        var settings = settings
        let invalid = StoreSettingError(control: self, value: text)
        switch self {
        case .storefront:
            guard let storefront = Storefront(countryCode: text) else { throw invalid }
            settings.storefront = storefront
        case .locale:
            guard accepts(text) else { throw invalid }
            settings.locale = text
        case .canMakePayments: settings.canMakePayments = try Self.bool(text, invalid)
        case .askToBuy: settings.askToBuyEnabled = try Self.bool(text, invalid)
        case .interruptedPurchases: settings.interruptedPurchasesEnabled = try Self.bool(text, invalid)
        case .billingRetryOnRenewal: settings.billingRetryOnRenewal = try Self.bool(text, invalid)
        case .billingGracePeriod: settings.billingGracePeriodEnabled = try Self.bool(text, invalid)
        case .invalidSignatures: settings.invalidSignaturesEnabled = try Self.bool(text, invalid)
        case .environment:
            guard let environment = SigningEnvironment(rawValue: text) else { throw invalid }
            settings.environment = environment
        case .appAppleID:
            if text.lowercased() == "none" {
                settings.appAppleID = nil
            } else {
                guard (1...19).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                    let id = Int64(text), id > 0
                else { throw invalid }
                settings.appAppleID = id
            }
        case .notificationURL:
            if text.lowercased() == "none" {
                settings.notificationURL = nil
            } else {
                do {
                    settings.notificationURL = try NotificationURL.parse(text)
                } catch {
                    throw StoreSettingError(control: self, value: text, reason: error.reason)
                }
            }
        case .failTransactions:
            if ["off", "false", "none"].contains(text.lowercased()) {
                settings.failTransactionsError = nil
            } else {
                guard let code = StoreErrorCode(nameOrRawValue: text) else { throw invalid }
                settings.failTransactionsError = code
            }
        case .timeRate:
            guard let rate = TimeRate(nameOrRawValue: text) else { throw invalid }
            settings.timeRate = rate
        case .appVersion:
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            guard text.utf8.count <= 32, (1...3).contains(parts.count),
                parts.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { (0x30...0x39).contains($0) } })
            else { throw invalid }
            settings.appVersion = text
        case .bundleID:
            guard (1...155).contains(text.utf8.count),
                text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") })
            else { throw invalid }
            settings.bundleID = text
        }
        return settings
    }

    /// The longest notification URL the store takes, in bytes.
    public static let notificationURLLimit = 2048

    /// Whether `text` is a valid value of this setting (locales only: a known ISO 639 language,
    /// then an optional script and a known region, separated by `_` or `-`, as `en_US`,
    /// `zh-Hant` or `zh_Hant_TW`; `xx` is refused).
    package func accepts(_ text: String) -> Bool {
        guard self == .locale else { return true }
        guard text.utf8.count <= 35,
            text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") })
        else { return false }
        var parts = text.split(separator: /[_-]/, omittingEmptySubsequences: false).map(String.init)
        guard let language = parts.first, (2...3).contains(language.count), language.allSatisfy(\.isLetter),
            Self.languages.contains(language.lowercased())
        else { return false }
        parts.removeFirst()
        if let script = parts.first, script.count == 4, script.allSatisfy(\.isLetter) { parts.removeFirst() }
        if let region = parts.first {
            guard Self.regions.contains(region.uppercased()) else { return false }
            parts.removeFirst()
        }
        return parts.isEmpty
    }

    private static let languages = Set(Locale.LanguageCode.isoLanguageCodes.map(\.identifier))
    private static let regions = Set(Locale.Region.isoRegions.map(\.identifier))

    private static func bool(_ text: String, _ invalid: StoreSettingError) throws -> Bool {
        switch text.lowercased() {
        case "true", "on", "yes", "1": true
        case "false", "off", "no", "0": false
        default: throw invalid
        }
    }
}

/// A value that does not fit its store setting.
public struct StoreSettingError: DescribedError, Sendable, Equatable {
    /// The setting the value was given for.
    public let control: StoreControl
    /// The text refused, as given.
    public let value: String
    /// Which rule `value` breaks, when the setting says (a notification URL does).
    public let reason: String?

    /// An error for `value`, refused by `control` (because of `reason`).
    public init(control: StoreControl, value: String, reason: String? = nil) {
        self.control = control
        self.value = value
        self.reason = reason
    }

    public var description: String {
        let why = reason.map { " (\($0))" } ?? ""
        return "invalid value \"\(value)\" for \(control.rawValue)\(why): expected \(control.expected)"
    }
}
