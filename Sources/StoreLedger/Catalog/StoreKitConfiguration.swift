import Foundation

/// The content of an Xcode StoreKit configuration file (`*.storekit`, JSON; format versions
/// 1.0 to 6.x): product definitions and the settings of the test store.
///
/// Unknown keys are ignored. A missing required key or a value of the wrong type is a
/// `CatalogError` naming the file, the key path and what was expected.
public struct StoreKitConfiguration: Sendable {
    /// Every product the file defines: consumables and non-consumables, then non-renewing
    /// subscriptions, then each group's auto-renewable subscriptions, in file order.
    public var products: [Product]
    /// The file's `settings`: the test store's switches; nothing set when the file has none.
    package var settings: StoreKitSettings
    /// `subscriptionOffersKeyPair`: the key the test store checks promotional offer signatures
    /// with (Xcode's "Subscription Offers Key").
    package var subscriptionOffersKey: SubscriptionOffersKey?
    /// `major.minor` from the file's `version`, when it has one.
    public var formatVersion: String?

    /// Reads and checks the file at `path`.
    public init(contentsOf path: String) throws {
        try self.init(contentsOf: path, importedBefore: 0)
    }

    /// Reads and checks the file at `path`, the next of an import that has read
    /// `importedBefore` products: the import's limit is checked before this file's products
    /// are read.
    init(contentsOf path: String, importedBefore: Int) throws {
        let file = try CatalogFile(path: path)
        guard file.format == .json else {
            if (try? ProductIdentifierList(parsing: file)) != nil {
                throw CatalogError.identifierListNotDefinitions(path: path)
            }
            throw CatalogError.malformedFile(
                path: path, reason: "a StoreKit configuration file is JSON, this is a property list")
        }
        let root = file.rootValue
        guard root.isDictionary else {
            if (try? ProductIdentifierList(parsing: file)) != nil {
                throw CatalogError.identifierListNotDefinitions(path: path)
            }
            throw root.invalid("a dictionary (a StoreKit configuration)")
        }
        let knownSections = ["products", "nonRenewingSubscriptions", "subscriptionGroups"]
        guard try knownSections.contains(where: root.has) else {
            if (try? ProductIdentifierList(parsing: file)) != nil {
                throw CatalogError.identifierListNotDefinitions(path: path)
            }
            throw CatalogError.missingKey(
                path: path, keyPath: "products",
                expected: "a StoreKit configuration with products, nonRenewingSubscriptions or subscriptionGroups")
        }
        if let version = try root.optionalMember("version") {
            let major = try version.member("major", expected: "a whole number").int()
            let minor = try version.optionalMember("minor")?.int() ?? 0
            formatVersion = "\(major).\(minor)"
        }
        var count = importedBefore + (try root.optionalMember("products")?.count() ?? 0)
        count += try root.optionalMember("nonRenewingSubscriptions")?.count() ?? 0
        for group in try root.optionalMember("subscriptionGroups")?.array() ?? [] {
            count += try group.optionalMember("subscriptions")?.count() ?? 0
        }
        guard count <= ProductCatalog.maximumImport else {
            throw CatalogError.tooManyProducts(path: path, count: count)
        }
        var products: [Product] = []
        for item in try root.optionalMember("products")?.array() ?? [] {
            products.append(try Self.product(item, allowed: [.consumable, .nonConsumable]))
        }
        for item in try root.optionalMember("nonRenewingSubscriptions")?.array() ?? [] {
            products.append(try Self.product(item, allowed: [.nonRenewable]))
        }
        for group in try root.optionalMember("subscriptionGroups")?.array() ?? [] {
            let groupID = try group.member("id", expected: "a string").string()
            let groupName = try group.optionalMember("name")?.string() ?? groupID
            for item in try group.member("subscriptions", expected: "an array of subscriptions").array() {
                products.append(try Self.subscription(item, groupID: groupID, groupName: groupName))
            }
        }
        var seen: [String: Int] = [:]
        for (index, product) in products.enumerated() {
            if seen[product.id] != nil {
                throw CatalogError.invalidValue(
                    path: path, keyPath: "productID", expected: "identifiers used once per file",
                    found: "\"\(product.id)\" defined twice")
            }
            seen[product.id] = index
        }
        self.products = products
        self.settings = try StoreKitSettings(try root.optionalMember("settings"))
        if let pair = try root.optionalMember("subscriptionOffersKeyPair"), !pair.isNull {
            let idField = try pair.member("id", expected: "the key identifier")
            let keyField = try pair.member("privateKey", expected: "a base64 PKCS #8 ECDSA P-256 private key")
            let (id, privateKey) = (try idField.string(), try keyField.string())
            do {
                subscriptionOffersKey = try SubscriptionOffersKey(id: id, privateKeyBase64: privateKey)
            } catch SubscriptionOffersKeyError.invalidIdentifier {
                throw idField.invalid("a key identifier of 1 to 256 bytes")
            } catch {
                throw keyField.invalid("a base64 PKCS #8 ECDSA P-256 private key")
            }
        }
    }

    private static let typeNames: [String: ProductType] = [
        "Consumable": .consumable, "NonConsumable": .nonConsumable,
        "NonRenewingSubscription": .nonRenewable, "RecurringSubscription": .autoRenewable,
    ]

    private static func productType(_ item: CatalogValue, allowed: Set<ProductType>) throws -> ProductType {
        let field = try item.member("type", expected: "a product type")
        let names = typeNames.filter { allowed.contains($0.value) }.keys.sorted()
        guard let type = typeNames[try field.string()], allowed.contains(type) else {
            throw CatalogError.invalidValue(
                path: field.file, keyPath: field.keyPath, expected: names.joined(separator: " or "),
                found: "\"\(try field.string())\"")
        }
        return type
    }

    private static func product(_ item: CatalogValue, allowed: Set<ProductType>) throws -> Product {
        try product(item, type: try productType(item, allowed: allowed))
    }

    private static func product(_ item: CatalogValue, type: ProductType) throws -> Product {
        let id = try identifier(item)
        return Product(
            id: id,
            type: type,
            referenceName: try item.optionalMember("referenceName")?.string() ?? id,
            localizations: try localizations(item),
            price: try item.member("displayPrice", expected: "a decimal price such as \"0.99\"").price(),
            isFamilyShareable: try item.optionalMember("familyShareable")?.bool() ?? false)
    }

    private static func subscription(_ item: CatalogValue, groupID: String, groupName: String) throws -> Product {
        if try item.optionalMember("type") != nil {
            _ = try productType(item, allowed: [.autoRenewable])
        }
        var product = try product(item, type: .autoRenewable)
        let levelField = try item.member("groupNumber", expected: "the level in the group (1 is the highest)")
        let level = try levelField.int()
        guard level >= 1 else { throw levelField.invalid("a level of 1 or more") }
        var introductory = try item.optionalMember("introductoryOffer").map { try offer($0) }
        if introductory == nil, let first = try item.optionalMember("introductoryOffers")?.array().first {
            introductory = try offer(first)
        }
        product.subscription = SubscriptionInfo(
            groupID: try item.optionalMember("subscriptionGroupID")?.string() ?? groupID,
            groupName: groupName,
            level: level,
            period: try period(
                try item.member("recurringSubscriptionPeriod", expected: "an ISO 8601 period such as P1M"),
                among: SubscriptionPeriod.appStoreSubscriptionPeriods),
            introductoryOffer: introductory,
            promotionalOffers: try offers(item, "adHocOffers", identifiedBy: \.id, offer),
            codeOffers: try offers(item, "codeOffers", identifiedBy: \.referenceName, codeOffer),
            winBackOffers: try offers(item, "winbackOffers", identifiedBy: \.offerID, winBackOffer))
        return product
    }

    /// The most offers of one kind a subscription has: App Store Connect's bound of 10 active
    /// promotional offers per subscription, applied to offer codes and win-back offers too.
    static let maximumOffers = 10

    /// The offers of `key`, at most `maximumOffers`, none with another's identifier (which the
    /// store could not tell apart when a payment names one).
    private static func offers<Offer>(
        _ item: CatalogValue, _ key: String, identifiedBy id: (Offer) -> String?,
        _ parse: (CatalogValue) throws -> Offer
    ) throws -> [Offer] {
        guard let field = try item.optionalMember(key) else { return [] }
        let entries = try field.array()
        guard entries.count <= maximumOffers else {
            throw field.invalid("at most \(maximumOffers) offers", found: "\(entries.count) offers")
        }
        var seen = Set<String>()
        return try entries.map { entry in
            let offer = try parse(entry)
            if let name = id(offer), !seen.insert(name).inserted {
                throw entry.invalid("an identifier no other offer of the list has", found: CatalogValue.quoted(name))
            }
            return offer
        }
    }

    /// An entry of `winbackOffers`: an offer (its `offerID` is required), its eligibility rules
    /// and priority. Xcode's own names for the rules are not published: the ledger reads App
    /// Store Connect's (`customerEligibilityPaidSubscriptionDurationInMonths`,
    /// `customerEligibilityTimeSinceLastSubscribedInMonths` with `minimum` and `maximum`,
    /// `customerEligibilityWaitBetweenOffersInMonths`, `priority` `HIGH` or `NORMAL`), each
    /// optional (`WinBackOffer.Eligibility`'s defaults: any churned customer).
    private static func winBackOffer(_ item: CatalogValue) throws -> WinBackOffer {
        let idField = try item.member("offerID", expected: "the win-back offer's identifier")
        let id = try idField.string()
        guard !id.isEmpty, id.utf8.count <= 255 else {
            throw idField.invalid("an offer identifier of 1 to 255 bytes", found: CatalogValue.quoted(id))
        }
        let limit = WinBackOffer.Eligibility.maximumMonths
        func monthCount(_ field: CatalogValue, from lowest: Int = 0) throws -> Int {
            let count = try field.int()
            guard (lowest...limit).contains(count) else {
                throw field.invalid("a number of months from \(lowest) to \(limit)", found: String(count))
            }
            return count
        }
        var eligibility = WinBackOffer.Eligibility()
        if let field = try item.optionalMember("customerEligibilityPaidSubscriptionDurationInMonths") {
            eligibility.paidMonths = try monthCount(field)
        }
        if let field = try item.optionalMember("customerEligibilityTimeSinceLastSubscribedInMonths") {
            let minimum = try monthCount(try field.member("minimum", expected: "a number of months"))
            let maximumField = try field.member("maximum", expected: "a number of months")
            let maximum = try monthCount(maximumField)
            guard minimum <= maximum else {
                throw maximumField.invalid("a maximum no lower than the minimum", found: String(maximum))
            }
            eligibility.monthsSinceLapse = minimum...maximum
        }
        if let field = try item.optionalMember("customerEligibilityWaitBetweenOffersInMonths") {
            eligibility.waitMonths = try monthCount(field, from: 1)
        }
        var priority = WinBackOffer.Priority.normal
        if let field = try item.optionalMember("priority") {
            let name = try field.string()
            guard let named = WinBackOffer.Priority(rawValue: name) else {
                throw field.invalid("HIGH or NORMAL", found: CatalogValue.quoted(name))
            }
            priority = named
        }
        let offer = try offer(item)
        return WinBackOffer(
            offerID: id, paymentMode: offer.paymentMode, period: offer.period, periodCount: offer.periodCount,
            price: offer.price, eligibility: eligibility, priority: priority)
    }

    /// An entry of `codeOffers`: an offer (its `referenceName` is its identifier) and its
    /// `eligibility` (`new`, `expired`, `existing`; all of them when the file gives none).
    private static func codeOffer(_ item: CatalogValue) throws -> CodeOffer {
        let nameField = try item.member("referenceName", expected: "the offer code's reference name")
        let name = try nameField.string()
        guard !name.isEmpty, name.utf8.count <= 255 else {
            throw nameField.invalid("a reference name of 1 to 255 bytes")
        }
        var eligibility = Set(CodeOffer.Customer.allCases)
        if let field = try item.optionalMember("eligibility") {
            eligibility = Set(
                try field.array().map { entry in
                    guard let customer = CodeOffer.Customer(rawValue: try entry.string()) else {
                        throw entry.invalid("new, expired or existing")
                    }
                    return customer
                })
        }
        let offer = try offer(item)
        return CodeOffer(
            referenceName: name, paymentMode: offer.paymentMode, period: offer.period, periodCount: offer.periodCount,
            price: offer.price, eligibility: eligibility)
    }

    private static func identifier(_ item: CatalogValue) throws -> String {
        let field = try item.member("productID", expected: "a product identifier")
        let id = try field.string()
        guard !id.isEmpty else {
            throw CatalogError.invalidValue(
                path: field.file, keyPath: field.keyPath, expected: "a non-empty product identifier",
                found: "an empty string")
        }
        try ProductIdentifier.check(id, in: field)
        return id
    }

    private static func localizations(_ item: CatalogValue) throws -> [ProductLocalization] {
        try (item.optionalMember("localizations")?.array() ?? []).map { entry in
            ProductLocalization(
                locale: try entry.member("locale", expected: "a locale such as en_US").string(),
                displayName: try entry.optionalMember("displayName")?.string() ?? "",
                description: try entry.optionalMember("description")?.string() ?? "")
        }
    }

    /// A period of `allowed`, the lengths the App Store has for it.
    private static func period(_ field: CatalogValue, among allowed: [SubscriptionPeriod]) throws -> SubscriptionPeriod
    {
        guard let period = SubscriptionPeriod(iso8601: try field.string()), allowed.contains(period) else {
            throw CatalogError.invalidValue(
                path: field.file, keyPath: field.keyPath,
                expected: "one of the App Store's periods here: " + allowed.map(\.description).joined(separator: ", "),
                found: "\"\(try field.string())\"")
        }
        return period
    }

    private static func offer(_ item: CatalogValue) throws -> SubscriptionOffer {
        var count = 1
        if let field = try item.optionalMember("numberOfPeriods") {
            count = try field.int()
            guard (1...SubscriptionOffer.maximumPeriodCount).contains(count) else {
                throw field.invalid("a number of periods from 1 to \(SubscriptionOffer.maximumPeriodCount)")
            }
        }
        let modeField = try item.member("paymentMode", expected: "free, payAsYouGo or payUpFront")
        let mode = try modeField.string()
        guard let paymentMode = TransactionOffer.PaymentMode(configurationName: mode) else {
            throw modeField.invalid("free, payAsYouGo or payUpFront", found: CatalogValue.quoted(mode))
        }
        return SubscriptionOffer(
            id: try item.optionalMember("offerID")?.string(),
            paymentMode: paymentMode,
            period: try period(
                try item.member("subscriptionPeriod", expected: "an ISO 8601 period such as P1M"),
                among: SubscriptionPeriod.appStoreOfferPeriods),
            periodCount: count,
            price: try item.optionalMember("displayPrice")?.price())
    }
}

/// The `settings` of a StoreKit configuration file: they seed the simulated store's controls.
package struct StoreKitSettings: Sendable, Hashable, Codable {
    /// `_storefront`: ISO 3166-1 alpha-3.
    package var storefront: String?
    /// `_locale`, such as `en_US`.
    package var locale: String?
    /// `_timeRate`: Xcode's subscription time rate setting (0 is real time).
    package var timeRate: Int?
    /// `_askToBuyEnabled`: every purchase waits for Ask to Buy approval; `nil` when the file does
    /// not set it.
    package var askToBuyEnabled: Bool?
    /// `_renewalBillingIssuesEnabled`: renewals fail on a billing issue (billing retry).
    package var billingRetryOnRenewal: Bool?
    /// `_billingGracePeriodEnabled`.
    package var billingGracePeriodEnabled: Bool?
    /// `_failTransactionsEnabled`: every purchase fails with `storeKitError` (`unknown` when that
    /// is missing or not a known code); `nil` when the file does not set it.
    package var failTransactionsEnabled: Bool?
    /// `_storeKitError`: the error Xcode fails transactions with, when failing is enabled.
    package var storeKitError: Int?
    /// The names of the entries of `_storeKitErrors` that are enabled.
    package var enabledStoreKitErrors: [String]

    /// Settings that set nothing: every switch `nil` and no enabled errors, as for a file without
    /// `settings`.
    package init() {
        enabledStoreKitErrors = []
    }

    init(_ value: CatalogValue?) throws {
        self.init()
        guard let value else { return }
        _ = try value.members()
        if let field = try value.optionalMember("_storefront") {
            let code = try field.string()
            guard Storefront(countryCode: code) != nil else {
                throw CatalogError.invalidValue(
                    path: field.file, keyPath: field.keyPath,
                    expected: "a known ISO 3166-1 alpha-3 storefront code such as USA, FRA or JPN", found: "\"\(code)\""
                )
            }
            storefront = code.uppercased()
        }
        if let field = try value.optionalMember("_locale") {
            let text = try field.string()
            guard LocaleIdentifier.isValid(text) else { throw field.invalid("a locale identifier such as en_US") }
            locale = text
        }
        if let field = try value.optionalMember("_timeRate") {
            // Xcode's rates only, as `store set timeRate` takes them: another number is no rate.
            let raw = try field.int()
            guard TimeRate(rawValue: raw) != nil else {
                throw field.invalid(
                    "one of Xcode's time rates: "
                        + TimeRate.allCases.map { String($0.rawValue) }.joined(separator: ", "))
            }
            timeRate = raw
        }
        askToBuyEnabled = try value.optionalMember("_askToBuyEnabled")?.bool()
        billingRetryOnRenewal = try value.optionalMember("_renewalBillingIssuesEnabled")?.bool()
        billingGracePeriodEnabled = try value.optionalMember("_billingGracePeriodEnabled")?.bool()
        failTransactionsEnabled = try value.optionalMember("_failTransactionsEnabled")?.bool()
        storeKitError = try value.optionalMember("_storeKitError")?.int()
        for entry in try value.optionalMember("_storeKitErrors")?.array() ?? []
        where try entry.optionalMember("enabled")?.bool() == true {
            enabledStoreKitErrors.append(try entry.member("name", expected: "the error's name").string())
        }
    }
}
