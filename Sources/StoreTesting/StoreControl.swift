import Foundation
public import StoreLedger

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
            "an http or https URL with a host (a DNS name, an IPv4 address or a bracketed IPv6 address) and a port from 1 to 65535, of at most \(NotificationURL.limit) bytes, such as http://127.0.0.1:9000/notifications, or none"
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
            guard LocaleIdentifier.isValid(text) else { throw invalid }
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
