import Foundation
import LedgerTestSupport
@testable import StoreLedger
import Testing

@Suite struct StoreKitConfigurationTests {
    @Test(arguments: try Repository.fixtures(withExtension: "storekit"))
    func everyRealWorldConfigurationImports(_ path: String) async throws {
        let configuration = try StoreKitConfiguration(contentsOf: path)
        #expect(configuration.formatVersion != nil)
        for product in configuration.products {
            #expect(!product.id.isEmpty)
            #expect((product.type == .autoRenewable) == (product.subscription != nil))
        }
        try await withTemporaryDirectory { directory in
            let ledger = try Ledger.open(at: directory + "/l.sqlite", mode: .createIfMissing)
            let imported = try ProductCatalog(ledger: ledger).importConfigurations(at: [path])
            #expect(Set(try ledger.allProducts().map(\.id)) == Set(imported.productIDs))
            #expect(try ledger.allProducts() == configuration.products.sorted { $0.id < $1.id })
        }
    }

    @Test func easyPurchaseIsReadExactly() throws {
        let configuration = try StoreKitConfiguration(
            contentsOf: Repository.fixture("BJIT-RnD__EasyPurchase__EasyPurchaseDemoConfig.storekit"))
        #expect(configuration.formatVersion == "2.0")
        #expect(configuration.products.count == 12)
        let byID = Dictionary(uniqueKeysWithValues: configuration.products.map { ($0.id, $0) })
        let coins = try #require(byID["com.bjitgroup.easypurchase.consumable.tencoin"])
        #expect(coins.type == .consumable && coins.price == Decimal(string: "0.99")!)
        #expect(coins.localizations == [ProductLocalization(locale: "en_US", displayName: "10 Coins", description: "10 Coins")])
        #expect(byID["com.bjitgroup.easypurchase.nonconsumable.levelone"]?.isFamilyShareable == true)
        #expect(byID["com.bjitgroup.easypurchase.nonRenewable.thirty"]?.type == .nonRenewable)
        let yearly = try #require(byID["com.bjitgroup.easypurchase.autorenewyearly"]?.subscription)
        #expect(yearly.groupID == "21387997" && yearly.groupName == "auto-renew" && yearly.level == 3)
        #expect(yearly.period == SubscriptionPeriod(value: 1, unit: .year))
        #expect(yearly.introductoryOffer == SubscriptionOffer(
            id: nil, paymentMode: "free", period: SubscriptionPeriod(value: 1, unit: .week), periodCount: 1, price: nil))
        #expect(configuration.settings.storefront == "USA" && configuration.settings.locale == "en_US")
        #expect(configuration.settings.askToBuyEnabled == true && configuration.settings.failTransactionsEnabled == true)
        #expect(configuration.settings.storeKitError == 0)
    }

    @Test func newerFormatsWithOffersAndErrorListsAreRead() throws {
        let revenueCat = try StoreKitConfiguration(
            contentsOf: Repository.fixture("RevenueCat__purchases-ios__UnitTestsConfiguration.storekit"))
        #expect(revenueCat.formatVersion == "5.0")
        let monthly = try #require(revenueCat.products.first { $0.id == "com.revenuecat.monthly_4.99.1_week_intro" })
        #expect(monthly.subscription?.promotionalOffers.map(\.id) == [
            "com.revenuecat.monthly_4.99.1_week_intro.year_discount", "com.revenuecat.monthly_4.99.1_week_intro.pay_as_you_go",
        ])
        #expect(monthly.subscription?.promotionalOffers.first?.price == Decimal(string: "40.99")!)
        #expect(revenueCat.settings.timeRate == 0)
        let lifeLog = try StoreKitConfiguration(
            contentsOf: Repository.fixture("AsanoGenki__LifeLog__StoreKitConfiguration.storekit"))
        #expect(lifeLog.settings.enabledStoreKitErrors.isEmpty)
        #expect(lifeLog.products.first?.localization(for: "ja_JP")?.displayName == "LifeLog Premium 月額プラン")
        let taiwan = try StoreKitConfiguration(contentsOf: Repository.fixture("KoukeNeko__FinderHover__Products.storekit"))
        #expect(taiwan.settings.storefront == "TWN")
    }

    @Test func aMissingRequiredKeyNamesTheFileAndKeyPath() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/bad.storekit"
            try write(#"{"products": [{"productID": "a", "type": "Consumable", "displayPrice": "1"}, {"type": "Consumable", "displayPrice": "1"}]}"#, to: path)
            #expect(throws: CatalogError.missingKey(path: path, keyPath: "products[1].productID", expected: "a product identifier")) {
                try StoreKitConfiguration(contentsOf: path)
            }
        }
    }

    @Test func aWrongTypeNamesTheKeyPathAndWhatWasExpected() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/bad.storekit"
            try write(#"{"products": [{"productID": "a", "type": "Consumable", "displayPrice": true}]}"#, to: path)
            #expect(throws: CatalogError.invalidValue(
                path: path, keyPath: "products[0].displayPrice", expected: "a non-negative decimal price such as \"0.99\"",
                found: "a boolean")) { try StoreKitConfiguration(contentsOf: path) }
            try write(#"{"subscriptionGroups": [{"id": "g", "subscriptions": [{"productID": "s", "displayPrice": "1", "groupNumber": 1, "recurringSubscriptionPeriod": "P1Q"}]}]}"#, to: path)
            #expect(throws: CatalogError.invalidValue(
                path: path, keyPath: "subscriptionGroups[0].subscriptions[0].recurringSubscriptionPeriod",
                expected: "an ISO 8601 period such as P1W, P1M or P1Y", found: "\"P1Q\"")) { try StoreKitConfiguration(contentsOf: path) }
            try write(#"{"products": [{"productID": "a", "type": "Gadget", "displayPrice": "1"}]}"#, to: path)
            #expect(throws: CatalogError.invalidValue(
                path: path, keyPath: "products[0].type", expected: "Consumable or NonConsumable", found: "\"Gadget\"")) {
                try StoreKitConfiguration(contentsOf: path)
            }
            try write(#"{"products": [], "settings": {"_storefront": "XYZ"}}"#, to: path)
            #expect(throws: CatalogError.invalidValue(
                path: path, keyPath: "settings._storefront",
                expected: "a known ISO 3166-1 alpha-3 storefront code such as USA, FRA or JPN", found: "\"XYZ\"")) {
                try StoreKitConfiguration(contentsOf: path)
            }
        }
    }

    @Test func aTruncatedFileIsMalformed() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/cut.storekit"
            let whole = try #require(fileBytes(Repository.fixture("BJIT-RnD__EasyPurchase__EasyPurchaseDemoConfig.storekit")))
            try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: path))
            #expect {
                try StoreKitConfiguration(contentsOf: path)
            } throws: { error in
                guard case CatalogError.malformedFile(let errorPath, _) = error else { return false }
                return errorPath == path
            }
            #expect(throws: CatalogError.missingFile(path: directory + "/none.storekit")) {
                try StoreKitConfiguration(contentsOf: directory + "/none.storekit")
            }
        }
    }

    @Test func anIdentifierListIsNotProductDefinitions() throws {
        let path = Repository.fixture("BJIT-RnD__EasyPurchase__AutoRenewable.plist")
        #expect(throws: CatalogError.identifierListNotDefinitions(path: path)) { try StoreKitConfiguration(contentsOf: path) }
    }

    @Test func aBadFileAmongGoodOnesImportsNothing() async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try Ledger.open(at: directory + "/l.sqlite", mode: .createIfMissing)
            let bad = directory + "/bad.storekit"
            try write(#"{"products": [{"productID": "x"}]}"#, to: bad)
            #expect(throws: CatalogError.self) {
                try ProductCatalog(ledger: ledger).importConfigurations(at: [try SampleCatalog.write(in: directory), bad])
            }
            #expect(try ledger.allProducts().isEmpty)
            #expect(try ledger.storeSettings().isEmpty)
        }
    }
}

@Suite struct ProductIdentifierListTests {
    @Test func realWorldPropertyListsLoad() throws {
        let autoRenewable = try ProductIdentifierList(contentsOf: Repository.fixture("BJIT-RnD__EasyPurchase__AutoRenewable.plist"))
        #expect(autoRenewable.productIDs == [
            "com.bjitgroup.easypurchase.autorenewweekly", "com.bjitgroup.easypurchase.autorenewmonthly",
            "com.bjitgroup.easypurchase.autorenewyearly",
        ])
        let storeHelper = try ProductIdentifierList(contentsOf: Repository.fixture("russell-archer__StoreHelper__Products.plist"))
        #expect(storeHelper.productIDs.count == 8 && storeHelper.subscriptionGroups.isEmpty)
        let sample = try ProductIdentifierList(contentsOf: Repository.fixture("russell-archer__StoreHelper__SampleProducts.plist"))
        #expect(sample.productIDs.count == 11)
        #expect(sample.subscriptionGroups.map(\.name) == ["vip", "standard"])
        #expect(sample.subscriptionGroups[1].productIDs == ["com.rarcher.green", "com.rarcher.amber", "com.rarcher.red"])
        let keyed = try ProductIdentifierList(contentsOf: Repository.fixture("CofficLab__Cisum_SwiftUI__Products.plist"))
        #expect(keyed.productIDs.count == 15 && keyed.productIDs.contains("nonconsumable.racecar"))
    }

    @Test func jsonListsLoadWhateverTheFileName() async throws {
        try await withTemporaryDirectory { directory in
            for name in ["products_v2.json", "ids.txt", "Products"] {
                let path = directory + "/" + name
                try write(#"["com.example.level1", "com.example.level2", "com.example.rocket_car", "com.example.level1"]"#, to: path)
                #expect(try ProductIdentifierList(contentsOf: path).productIDs == [
                    "com.example.level1", "com.example.level2", "com.example.rocket_car",
                ])
            }
            let dictionary = directory + "/products_v3.json"
            try write(#"{"Products": ["a"], "Subscriptions": [{"Group": "g", "Products": ["b", "c"]}]}"#, to: dictionary)
            #expect(try ProductIdentifierList(contentsOf: dictionary).productIDs == ["a", "b", "c"])
        }
    }

    @Test func aNonStringIdentifierNamesItsPosition() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ids.json"
            try write(#"{"Products": ["a", 7]}"#, to: path)
            #expect(throws: CatalogError.invalidValue(path: path, keyPath: "Products[1]", expected: "a string", found: "a number")) {
                try ProductIdentifierList(contentsOf: path)
            }
            try write(#"42"#, to: path)
            #expect(throws: CatalogError.notAnIdentifierList(path: path)) { try ProductIdentifierList(contentsOf: path) }
            try write(#"<plist><array><string>a</string>"#, to: path)
            #expect(throws: CatalogError.self) { try ProductIdentifierList(contentsOf: path) }
        }
    }
}

@Suite struct ProductsRequestTests {
    @Test func everyRequestedIdentifierLandsInExactlyOneList() async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try SampleCatalog.ledger(in: directory)
            let requested = [SampleCatalog.nonConsumable, "com.example.unknown", SampleCatalog.consumable, "", SampleCatalog.nonConsumable]
            let response = try ProductCatalog(ledger: ledger).products(for: requested)
            #expect(response.products.map(\.id) == [SampleCatalog.nonConsumable, SampleCatalog.consumable])
            #expect(response.invalidProductIdentifiers == ["com.example.unknown", ""])
            #expect(Set(response.products.map(\.id)).isDisjoint(with: response.invalidProductIdentifiers))
            #expect(Set(response.products.map(\.id)).union(response.invalidProductIdentifiers) == Set(requested))
        }
    }
}

@Suite struct PriceFormattingTests {
    /// ICU separates the number and the currency sign with (narrow) no-break spaces.
    func plain(_ text: String) -> String {
        text.replacingOccurrences(of: "\u{202F}", with: " ").replacingOccurrences(of: "\u{00A0}", with: " ")
    }

    @Test func pricesUseTheStorefrontsCurrency() throws {
        let price = Decimal(string: "1.99")!
        #expect(PriceFormatter.string(for: price, storefront: .unitedStates, locale: "en_US") == "$1.99")
        let france = try #require(Storefront(countryCode: "FRA"))
        #expect(plain(PriceFormatter.string(for: price, storefront: france, locale: "fr_FR")) == "1,99 €")
        // A US-English shopper on the French storefront still sees euros (with the region's separators).
        #expect(PriceFormatter.string(for: price, storefront: france, locale: "en_US") == "€1,99")
    }

    @Test func wholeNumberCurrenciesShowNoDecimals() throws {
        let japan = try #require(Storefront(countryCode: "jpn"))
        #expect(japan.currencyCode == "JPY")
        let yen = PriceFormatter.string(for: 600, storefront: japan, locale: "ja_JP")
        #expect(yen.hasSuffix("600") && !yen.contains("."), "\(yen)")
        #expect(yen.contains("¥") || yen.contains("￥"))
        let taiwan = try #require(Storefront(countryCode: "TWN"))
        #expect(taiwan.currencyCode == "TWD")
        #expect(PriceFormatter.string(for: 99, storefront: taiwan, locale: "zh_TW") == "$99")
        let china = try #require(Storefront(countryCode: "CHN"))
        #expect(!PriceFormatter.string(for: 6, storefront: china, locale: "zh_CN").contains("."))
    }

    @Test func unknownStorefrontsAreRejected() {
        #expect(Storefront(countryCode: "XYZ") == nil)
        #expect(Storefront(countryCode: "FR") == nil)
    }

    @Test func theCatalogFormatsWithTheLedgersStorefront() async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try SampleCatalog.ledger(in: directory)
            let catalog = ProductCatalog(ledger: ledger)
            let level1 = try #require(try catalog.products(for: [SampleCatalog.nonConsumable]).products.first)
            #expect(try catalog.displayPrice(of: level1) == "$0.99")
            try ledger.setStoreSettings(["storefront": "FRA", "locale": "fr_FR"])
            #expect(plain(try catalog.displayPrice(of: level1)) == "0,99 €")
            #expect(level1.localization(for: "fr_FR")?.displayName == "Niveau 1")
        }
    }
}
