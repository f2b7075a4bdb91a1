import Foundation
import LedgerTestSupport
import LedgerTesting
import Testing

@testable import StoreLedger

@Suite struct StoreKitConfigurationTests {
    /// The format version and the number of products of each of the project's own StoreKit
    /// configuration files (Tests/Fixtures; its README.md says what each covers).
    static let fixtureContents: [String: (version: String, products: Int)] = [
        "v1.0-tip-jar.storekit": ("1.0", 2),
        "v1.2-subscriptions-only.storekit": ("1.2", 2),
        "v2.0-every-product-type.storekit": ("2.0", 10),
        "v3.0-garden-shop.storekit": ("3.0", 5),
        "v3.0-japan.storekit": ("3.0", 4),
        "v4.0-taiwan.storekit": ("4.0", 2),
        "v5.0-offers.storekit": ("5.0", 7),
        "v6.0-france.storekit": ("6.0", 6),
    ]

    @Test(arguments: try Repository.fixtureNames(withExtension: "storekit"))
    func everyFixtureConfigurationImports(_ name: String) async throws {
        let expected = try #require(
            Self.fixtureContents[name], "\(name): add its version and product count to fixtureContents")
        let path = Repository.fixture(name)
        let configuration = try StoreKitConfiguration(contentsOf: path)
        #expect(configuration.formatVersion == expected.version)
        #expect(configuration.products.count == expected.products)
        for product in configuration.products {
            #expect(!product.id.isEmpty)
            #expect((product.type == .autoRenewable) == (product.subscription != nil))
        }
        try await withTemporaryDirectory { directory in
            let ledger = try Ledger.open(at: directory + "/l.sqlite", mode: .createIfMissing)
            let imported = try ProductCatalog(ledger: ledger).importConfigurations(at: [path])
            #expect(imported.productIDs.count == expected.products)
            #expect(Set(try ledger.allProducts().map(\.id)) == Set(imported.productIDs))
            #expect(try ledger.allProducts() == configuration.products.sorted { $0.id < $1.id })
        }
    }

    @Test func everyFixtureFileIsListedWithItsContents() throws {
        #expect(Set(try Repository.fixtureNames(withExtension: "storekit")) == Set(Self.fixtureContents.keys))
    }

    /// The real-world corpus (files of other projects, present only beside CI): every
    /// configuration file imports, every property list is a product identifier list.
    @Test(
        .enabled(
            if: Repository.realWorldCorpusIsPresent,
            "../shared/fixtures/real-world is absent (it exists only beside CI)"))
    func theRealWorldCorpusImportsWhenPresent() async throws {
        let configurations = try #require(Repository.realWorldCorpus(withExtension: "storekit"))
        let lists = try #require(Repository.realWorldCorpus(withExtension: "plist"))
        #expect(!configurations.isEmpty && !lists.isEmpty)
        try await withTemporaryDirectory { directory in
            for (index, path) in configurations.enumerated() {
                let configuration = try StoreKitConfiguration(contentsOf: path)
                #expect(configuration.formatVersion != nil, "\(path)")
                for product in configuration.products {
                    #expect(!product.id.isEmpty, "\(path)")
                    #expect((product.type == .autoRenewable) == (product.subscription != nil), "\(path)")
                }
                let ledger = try Ledger.open(at: directory + "/\(index).sqlite", mode: .createIfMissing)
                let imported = try ProductCatalog(ledger: ledger).importConfigurations(at: [path])
                #expect(Set(try ledger.allProducts().map(\.id)) == Set(imported.productIDs), "\(path)")
                #expect(try ledger.allProducts() == configuration.products.sorted { $0.id < $1.id }, "\(path)")
            }
        }
        for path in lists {
            #expect(try ProductIdentifierList(contentsOf: path).productIDs.isEmpty == false, "\(path)")
            #expect(throws: CatalogError.identifierListNotDefinitions(path: path)) {
                try StoreKitConfiguration(contentsOf: path)
            }
        }
    }

    @Test func everyProductTypeIsReadExactly() throws {
        let configuration = try StoreKitConfiguration(
            contentsOf: Repository.fixture("v2.0-every-product-type.storekit"))
        #expect(configuration.formatVersion == "2.0")
        #expect(configuration.products.count == 10)
        let byID = Dictionary(uniqueKeysWithValues: configuration.products.map { ($0.id, $0) })
        let gems = try #require(byID["com.example.fixtures.arcade.gems.50"])
        #expect(gems.type == .consumable && gems.price == Decimal(string: "0.99")!)
        #expect(gems.referenceName == "Gems 50")
        #expect(
            gems.localizations == [
                ProductLocalization(locale: "en_US", displayName: "50 Gems", description: "A pouch of 50 gems")
            ])
        #expect(byID["com.example.fixtures.arcade.world.space"]?.type == .nonConsumable)
        #expect(byID["com.example.fixtures.arcade.world.space"]?.isFamilyShareable == true)
        #expect(byID["com.example.fixtures.arcade.noads"]?.isFamilyShareable == false)
        #expect(byID["com.example.fixtures.arcade.pass.month"]?.type == .nonRenewable)
        let weekly = try #require(byID["com.example.fixtures.arcade.club.weekly"]?.subscription)
        #expect(
            weekly.level == 1 && weekly.period == SubscriptionPeriod(value: 1, unit: .week)
                && weekly.introductoryOffer == nil)
        let yearly = try #require(byID["com.example.fixtures.arcade.club.yearly"]?.subscription)
        #expect(yearly.groupID == "20000400" && yearly.groupName == "arcade-club" && yearly.level == 3)
        #expect(yearly.period == SubscriptionPeriod(value: 1, unit: .year))
        #expect(
            yearly.introductoryOffer
                == SubscriptionOffer(
                    id: nil, paymentMode: .freeTrial, period: SubscriptionPeriod(value: 1, unit: .week), periodCount: 1,
                    price: nil))
        #expect(yearly.promotionalOffers.isEmpty)
        #expect(configuration.settings.storefront == "USA" && configuration.settings.locale == "en_US")
        #expect(
            configuration.settings.askToBuyEnabled == true && configuration.settings.failTransactionsEnabled == true)
        #expect(configuration.settings.storeKitError == 0)
    }

    @Test func aMinimalVersionOneFileTakesTheDefaults() throws {
        let tipJar = try StoreKitConfiguration(contentsOf: Repository.fixture("v1.0-tip-jar.storekit"))
        #expect(tipJar.formatVersion == "1.0")
        #expect(tipJar.settings == StoreKitSettings())
        let supporter = try #require(tipJar.products.first(where: { $0.id == "com.example.fixtures.tipjar.supporter" }))
        #expect(supporter.referenceName == supporter.id && supporter.localizations.isEmpty)
        #expect(supporter.price == Decimal(5) && !supporter.isFamilyShareable, "a price written as a JSON number")
        let reader = try StoreKitConfiguration(contentsOf: Repository.fixture("v1.2-subscriptions-only.storekit"))
        #expect(reader.formatVersion == "1.2" && reader.settings.timeRate == 6)
        #expect(
            reader.products.allSatisfy { $0.subscription?.level == 1 && $0.subscription?.groupName == "Reader Premium" }
        )
    }

    @Test func newerFormatsWithOffersAndErrorListsAreRead() throws {
        let offers = try StoreKitConfiguration(contentsOf: Repository.fixture("v5.0-offers.storekit"))
        #expect(offers.formatVersion == "5.0")
        let monthly = try #require(
            offers.products.first(where: { $0.id == "com.example.fixtures.studio.plus.monthly" })?.subscription)
        #expect(
            monthly.promotionalOffers.map(\.id) == [
                "com.example.fixtures.studio.plus.monthly.year_discount",
                "com.example.fixtures.studio.plus.monthly.pay_as_you_go",
            ])
        #expect(monthly.promotionalOffers.first?.price == Decimal(string: "39.99")!)
        #expect(
            monthly.promotionalOffers.last
                == SubscriptionOffer(
                    id: "com.example.fixtures.studio.plus.monthly.pay_as_you_go", paymentMode: .payAsYouGo,
                    period: SubscriptionPeriod(value: 1, unit: .month), periodCount: 3, price: Decimal(string: "2.99")!)
        )
        #expect(
            monthly.introductoryOffer
                == SubscriptionOffer(
                    id: nil, paymentMode: .freeTrial, period: SubscriptionPeriod(value: 1, unit: .week), periodCount: 1,
                    price: nil))
        let lite = try #require(
            offers.products.first(where: { $0.id == "com.example.fixtures.studio.lite.monthly" })?.subscription)
        #expect(lite.level == 2 && lite.introductoryOffer == nil && lite.promotionalOffers.isEmpty)
        #expect(
            Set(offers.products.compactMap { $0.subscription?.groupName }) == Set(["Studio Plus", "Studio Family"]))
        #expect(offers.settings.timeRate == 0 && offers.settings.enabledStoreKitErrors.isEmpty)

        let japan = try StoreKitConfiguration(contentsOf: Repository.fixture("v3.0-japan.storekit"))
        #expect(japan.formatVersion == "3.0")
        #expect(japan.settings.enabledStoreKitErrors.isEmpty)
        #expect(japan.settings.storefront == "JPN" && japan.settings.locale == "ja_JP")
        let premium = try #require(
            japan.products.first(where: { $0.id == "com.example.fixtures.kanji.premium.monthly" }))
        #expect(premium.localization(for: "ja_JP")?.displayName == "漢字プレミアム 月額プラン")
        #expect(premium.localization(for: "en_US")?.displayName == "Kanji Premium Monthly")
        #expect(premium.subscription?.groupName == "プレミアム会員")
        let yearly = try #require(
            japan.products.first(where: { $0.id == "com.example.fixtures.kanji.premium.yearly" })?.subscription)
        #expect(
            yearly.introductoryOffer
                == SubscriptionOffer(
                    id: nil, paymentMode: .payUpFront, period: SubscriptionPeriod(value: 3, unit: .month),
                    periodCount: 1, price: Decimal(1000)))
        #expect(japan.products.first(where: { $0.id == "com.example.fixtures.kanji.hints" })?.price == Decimal(120))

        let taiwan = try StoreKitConfiguration(contentsOf: Repository.fixture("v4.0-taiwan.storekit"))
        #expect(taiwan.settings.storefront == "TWN")
        let unlock = try #require(taiwan.products.first(where: { $0.id == "com.example.fixtures.hovernotes.unlock" }))
        #expect(unlock.localization(for: "zh_Hant")?.displayName == "Hover Notes 完整版")
        #expect(unlock.localization(for: "ja_JP")?.displayName == "Hover Notes フルバージョン")

        let france = try StoreKitConfiguration(contentsOf: Repository.fixture("v6.0-france.storekit"))
        #expect(france.formatVersion == "6.0")
        #expect(
            france.settings.storefront == "FRA" && france.settings.locale == "fr_FR" && france.settings.timeRate == 1002
        )
        #expect(france.settings.enabledStoreKitErrors == ["Purchase"] && france.settings.failTransactionsEnabled == nil)
        let mensuel = try #require(
            france.products.first(where: { $0.id == "com.example.fixtures.atelier.premium.mensuel" })?.subscription)
        #expect(
            mensuel.introductoryOffer
                == SubscriptionOffer(
                    id: nil, paymentMode: .payAsYouGo, period: SubscriptionPeriod(value: 1, unit: .month),
                    periodCount: 3,
                    price: Decimal(string: "0.99")!), "the newer introductoryOffers array")
        #expect(mensuel.promotionalOffers.map(\.id) == ["com.example.fixtures.atelier.premium.mensuel.fidelite"])
        let credits = try #require(france.products.first(where: { $0.id == "com.example.fixtures.atelier.credits" }))
        #expect(credits.localization(for: "fr_FR")?.displayName == "Crédits supplémentaires")
        #expect(credits.localization(for: "fr_FR")?.description.hasSuffix("🎨") == true)
        #expect(credits.localization(for: "zh_Hans")?.displayName == "额外积分")
    }

    @Test func aMissingRequiredKeyNamesTheFileAndKeyPath() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/bad.storekit"
            try write(
                #"{"products": [{"productID": "a", "type": "Consumable", "displayPrice": "1"}, {"type": "Consumable", "displayPrice": "1"}]}"#,
                to: path)
            #expect(
                throws: CatalogError.missingKey(
                    path: path, keyPath: "products[1].productID", expected: "a product identifier")
            ) {
                try StoreKitConfiguration(contentsOf: path)
            }
        }
    }

    @Test func aWrongTypeNamesTheKeyPathAndWhatWasExpected() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/bad.storekit"
            try write(#"{"products": [{"productID": "a", "type": "Consumable", "displayPrice": true}]}"#, to: path)
            #expect(
                throws: CatalogError.invalidValue(
                    path: path, keyPath: "products[0].displayPrice",
                    expected:
                        "a non-negative decimal price such as \"0.99\", of at most 18 digits, 15 before the point",
                    found: "a boolean")
            ) { try StoreKitConfiguration(contentsOf: path) }
            try write(
                #"{"subscriptionGroups": [{"id": "g", "subscriptions": [{"productID": "s", "displayPrice": "1", "groupNumber": 1, "recurringSubscriptionPeriod": "P1Q"}]}]}"#,
                to: path)
            #expect(
                throws: CatalogError.invalidValue(
                    path: path, keyPath: "subscriptionGroups[0].subscriptions[0].recurringSubscriptionPeriod",
                    expected: "one of the App Store's periods here: P1W, P1M, P2M, P3M, P6M, P1Y", found: "\"P1Q\"")
            ) { try StoreKitConfiguration(contentsOf: path) }
            try write(#"{"products": [{"productID": "a", "type": "Gadget", "displayPrice": "1"}]}"#, to: path)
            #expect(
                throws: CatalogError.invalidValue(
                    path: path, keyPath: "products[0].type", expected: "Consumable or NonConsumable",
                    found: "\"Gadget\"")
            ) {
                try StoreKitConfiguration(contentsOf: path)
            }
            try write(#"{"products": [], "settings": {"_storefront": "XYZ"}}"#, to: path)
            #expect(
                throws: CatalogError.invalidValue(
                    path: path, keyPath: "settings._storefront",
                    expected: "a known ISO 3166-1 alpha-3 storefront code such as USA, FRA or JPN", found: "\"XYZ\"")
            ) {
                try StoreKitConfiguration(contentsOf: path)
            }
        }
    }

    @Test func aTruncatedFileIsMalformed() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/cut.storekit"
            let whole = try #require(fileBytes(Repository.fixture("v2.0-every-product-type.storekit")))
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

    @Test(arguments: [
        "ids-array.plist", "ids-products.plist", "ids-groups.plist", "ids-keyed.plist",
        "products_v2.json", "product_groups.json",
    ])
    func anIdentifierListIsNotProductDefinitions(_ name: String) throws {
        let path = Repository.fixture(name)
        #expect(throws: CatalogError.identifierListNotDefinitions(path: path)) {
            try StoreKitConfiguration(contentsOf: path)
        }
    }

    @Test func aBadFileAmongGoodOnesImportsNothing() async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try Ledger.open(at: directory + "/l.sqlite", mode: .createIfMissing)
            let bad = directory + "/bad.storekit"
            try write(#"{"products": [{"productID": "x"}]}"#, to: bad)
            #expect(throws: CatalogError.self) {
                try ProductCatalog(ledger: ledger).importConfigurations(at: [
                    try SampleCatalog.write(in: directory), bad,
                ])
            }
            #expect(try ledger.allProducts().isEmpty)
            // Nothing seeded: the app's bundle identifier is all a new store holds.
            #expect(try ledger.storeSettings() == ["bundleID": StoreSettings.defaultBundleID])
        }
    }
}

/// One import reads at most `ProductCatalog.maximumImport` products (App Store Connect's
/// limit for one app), and property lists at most 4 MiB: the work of one import is bounded.
@Suite struct CatalogLimitTests {
    /// A configuration file of `count` consumables named `prefix.N`.
    static func consumables(_ count: Int, prefix: String) -> String {
        let products = (0..<count).map {
            #"{"productID": "\#(prefix).\#($0)", "type": "Consumable", "displayPrice": "0.99", "localizations": []}"#
        }
        return #"{"products": ["# + products.joined(separator: ",") + "]}"
    }

    @Test func aFileOfTheLimitIsReadAndOneMoreIsRefusedBeforeItsProductsAre() async throws {
        try await withTemporaryDirectory { directory in
            let limit = directory + "/limit.storekit"
            let over = directory + "/over.storekit"
            try write(Self.consumables(ProductCatalog.maximumImport, prefix: "a"), to: limit)
            #expect(try StoreKitConfiguration(contentsOf: limit).products.count == 10_000)
            // The 10,001st product is malformed: the count is refused before any product is read.
            try write(
                String(Self.consumables(ProductCatalog.maximumImport, prefix: "a").dropLast(2))
                    + #", {"productID": 7}]}"#, to: over)
            #expect(throws: CatalogError.tooManyProducts(path: over, count: 10_001)) {
                try StoreKitConfiguration(contentsOf: over)
            }
            #expect(
                "\(CatalogError.tooManyProducts(path: over, count: 10_001))"
                    == "\(over): 10001 products in one import, more than the 10000 App Store Connect allows one app; import fewer at a time"
            )
        }
    }

    @Test func theLimitCountsEveryFileOfOneImportAndARefusedImportChangesNothing() async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try Ledger.open(at: directory + "/l.sqlite", mode: .createIfMissing)
            let first = directory + "/first.storekit"
            let second = directory + "/second.storekit"
            try write(Self.consumables(6_000, prefix: "first"), to: first)
            // The second file's 4,001st product is malformed: the count is refused before it is read.
            try write(
                String(Self.consumables(4_000, prefix: "second").dropLast(2)) + #", {"productID": 7}]}"#, to: second)
            #expect(throws: CatalogError.tooManyProducts(path: second, count: 10_001)) {
                try ProductCatalog(ledger: ledger).importConfigurations(at: [first, second])
            }
            #expect(try ledger.allProducts().isEmpty)
            // Two imports may hold more than one import may.
            try write(Self.consumables(4_001, prefix: "second"), to: second)
            try ProductCatalog(ledger: ledger).importConfigurations(at: [first])
            try ProductCatalog(ledger: ledger).importConfigurations(at: [second])
            #expect(try ledger.allProducts().count == 10_001)
        }
    }

    @Test func aPropertyListOverFourMiBIsRefusedUnread() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/big.plist"
            let body = String(repeating: "<string>com.example.product</string>\n", count: 4 * 1_048_576 / 36 + 1)
            try write("<plist version=\"1.0\"><array>\n" + body + "</array></plist>\n", to: path)
            let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
            #expect(
                throws: CatalogError.unreadableFile(
                    path: path, reason: "\(size) bytes is larger than the 4 MiB a property list may have")
            ) {
                try ProductIdentifierList(contentsOf: path)
            }
        }
    }

    /// A binary property list of `levels` arrays: each of `width` references to the next, the
    /// last's to one string. A few kilobytes that name billions of values.
    static func nestedReferences(levels: Int, width: Int) -> Data {
        var objects: [[UInt8]] = []
        for level in 0..<levels {
            let marker: [UInt8] =
                width < 15 ? [0xA0 | UInt8(width)] : [0xAF, 0x11, UInt8(width >> 8), UInt8(width & 0xFF)]
            let next = UInt16(level + 1)
            objects.append(marker + (0..<width).flatMap { _ in [UInt8(next >> 8), UInt8(next & 0xFF)] })
        }
        objects.append([0x51, UInt8(ascii: "x")])
        var file = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(file.count)
            file += object
        }
        let table = file.count
        for offset in offsets {
            file += [
                UInt8(offset >> 24 & 0xFF), UInt8(offset >> 16 & 0xFF), UInt8(offset >> 8 & 0xFF), UInt8(offset & 0xFF),
            ]
        }
        // Trailer: 6 unused bytes, offset size 4, reference size 2, object count, top object, table offset.
        file += [0, 0, 0, 0, 0, 0, 4, 2]
        for value in [objects.count, 0, table] { file += (0..<8).reversed().map { UInt8(value >> ($0 * 8) & 0xFF) } }
        return Data(file)
    }

    @Test func aPropertyListThatNamesTooManyValuesOrNestsTooDeepIsRefused() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/bomb.plist"
            try Self.nestedReferences(levels: 2, width: 3_000).write(to: URL(fileURLWithPath: path))
            #expect(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0 < 20_000)
            #expect(
                throws: CatalogError.malformedFile(
                    path: path,
                    reason: "not a valid property list (the property list holds more than 8388608 values and bytes)")
            ) {
                try ProductIdentifierList(contentsOf: path)
            }
            // Foundation refuses a binary list this deep itself; the tree's own limit stands behind it.
            try Self.nestedReferences(levels: 600, width: 1).write(to: URL(fileURLWithPath: path))
            #expect {
                try ProductIdentifierList(contentsOf: path)
            } throws: { error in
                guard case CatalogError.malformedFile(let errorPath, _) = error else { return false }
                return errorPath == path
            }
            let deep = (0..<600).reduce(["x"] as Any) { inner, _ in [inner] as Any }
            #expect(throws: CatalogTree.SyntaxError.self) { try CatalogTree(propertyList: deep, budget: 1_000_000) }
            do {
                _ = try CatalogTree(propertyList: deep, budget: 1_000_000)
            } catch {
                #expect("\(error)" == "arrays and dictionaries nested more than 512 deep")
            }
        }
    }

    /// An offer's payment mode is one of three, checked at import; stored and printed by its
    /// configuration name, read back by it (or by StoreKit's `freeTrial`).
    @Test func anOffersPaymentModeIsOneOfThree() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/modes.storekit"
            try write(
                #"{"subscriptionGroups": [{"id": "g", "subscriptions": [{"productID": "s", "type": "RecurringSubscription", "#
                    + #""displayPrice": "1", "recurringSubscriptionPeriod": "P1M", "groupNumber": 1, "localizations": [], "#
                    + #""introductoryOffer": {"paymentMode": "bogus", "subscriptionPeriod": "P1W"}}]}]}"#, to: path)
            #expect(
                throws: CatalogError.invalidValue(
                    path: path, keyPath: "subscriptionGroups[0].subscriptions[0].introductoryOffer.paymentMode",
                    expected: "free, payAsYouGo or payUpFront", found: "\"bogus\"")
            ) {
                try StoreKitConfiguration(contentsOf: path)
            }
        }
        let stored = #"{"paymentMode":"free","period":"P1W","periodCount":1}"#
        let offer = try JSONDecoder().decode(SubscriptionOffer.self, from: Data(stored.utf8))
        #expect(offer.paymentMode == .freeTrial)
        #expect(String(decoding: try JSONEncoder().encode(offer), as: UTF8.self).contains(#""paymentMode":"free""#))
        let storeKitName = #"{"paymentMode":"freeTrial","period":"P1W","periodCount":1}"#
        #expect(
            try JSONDecoder().decode(SubscriptionOffer.self, from: Data(storeKitName.utf8)).paymentMode == .freeTrial)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(
                SubscriptionOffer.self, from: Data(#"{"paymentMode":"gift","period":"P1W","periodCount":1}"#.utf8))
        }
    }

    /// A `winbackOffers` entry needs its `offerID`; its rules take whole months within 0...120
    /// (a wait of at least 1), a lapse window whose maximum is not below its minimum, and a
    /// priority of HIGH or NORMAL. Each refusal names the key path.
    @Test(arguments: [
        (#"{"paymentMode": "free", "subscriptionPeriod": "P1M"}"#, "", "the win-back offer's identifier", "nothing"),
        (
            #"{"offerID": "", "paymentMode": "free", "subscriptionPeriod": "P1M"}"#, ".offerID",
            "an offer identifier of 1 to 255 bytes", "\"\""
        ),
        (
            #"{"offerID": "w", "paymentMode": "free", "subscriptionPeriod": "P1M", "#
                + #""customerEligibilityPaidSubscriptionDurationInMonths": 121}"#,
            ".customerEligibilityPaidSubscriptionDurationInMonths", "a number of months from 0 to 120", "121"
        ),
        (
            #"{"offerID": "w", "paymentMode": "free", "subscriptionPeriod": "P1M", "#
                + #""customerEligibilityTimeSinceLastSubscribedInMonths": {"minimum": 5, "maximum": 2}}"#,
            ".customerEligibilityTimeSinceLastSubscribedInMonths.maximum", "a maximum no lower than the minimum", "2"
        ),
        (
            #"{"offerID": "w", "paymentMode": "free", "subscriptionPeriod": "P1M", "#
                + #""customerEligibilityWaitBetweenOffersInMonths": 0}"#,
            ".customerEligibilityWaitBetweenOffersInMonths", "a number of months from 1 to 120", "0"
        ),
        (
            #"{"offerID": "w", "paymentMode": "free", "subscriptionPeriod": "P1M", "priority": "LOW"}"#, ".priority",
            "HIGH or NORMAL", "\"LOW\""
        ),
    ])
    func aWinBackOfferIsReadWhole(entry: String, key: String, expected: String, found: String) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/winback.storekit"
            try write(
                #"{"subscriptionGroups": [{"id": "g", "subscriptions": [{"productID": "s", "type": "RecurringSubscription", "#
                    + #""displayPrice": "1", "recurringSubscriptionPeriod": "P1M", "groupNumber": 1, "#
                    + #""winbackOffers": ["# + entry + "]}]}]}", to: path)
            let thrown = #expect(throws: CatalogError.self) { try StoreKitConfiguration(contentsOf: path) }
            let keyPath = "subscriptionGroups[0].subscriptions[0].winbackOffers[0]" + key
            if key.isEmpty {
                #expect(
                    thrown == .missingKey(path: path, keyPath: keyPath + ".offerID", expected: expected), "\(entry)")
            } else {
                #expect(
                    thrown == .invalidValue(path: path, keyPath: keyPath, expected: expected, found: found), "\(entry)")
            }
        }
    }

    /// A file whose size is not what `fstat` said once read (here /proc's, which say 0) is
    /// refused, never read in part.
    @Test func aFileThatChangesWhileItIsReadIsRefused() {
        #expect(
            throws: CatalogError.unreadableFile(
                path: "/proc/self/status", reason: "it changed while it was read (0 bytes, then 1)")
        ) {
            try StoreKitConfiguration(contentsOf: "/proc/self/status")
        }
    }

    /// A whole number is read from its text: a fraction that a `Double` would round away is no
    /// whole number; a fraction of zeros is.
    @Test func wholeNumbersAreReadFromTheirText() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/version.storekit"
            try write(#"{"products": [], "version": {"major": 4503599627370496.5}}"#, to: path)
            #expect(
                throws: CatalogError.invalidValue(
                    path: path, keyPath: "version.major", expected: "a whole number", found: "a number")
            ) {
                try StoreKitConfiguration(contentsOf: path)
            }
            try write(#"{"products": [], "version": {"major": 3.00, "minor": 1}}"#, to: path)
            #expect(try StoreKitConfiguration(contentsOf: path).formatVersion == "3.1")
        }
    }

    /// A JSON number's text is the price, exactly: never read through a `Double`.
    @Test func aNumericPriceIsReadAsWritten() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/numbers.storekit"
            try write(
                #"{"products": [{"productID": "a", "type": "Consumable", "displayPrice": 1.10, "localizations": []}]}"#,
                to: path)
            #expect(try StoreKitConfiguration(contentsOf: path).products.first?.price == Decimal(string: "1.1"))
            try write(
                #"{"products": [{"productID": "a", "type": "Consumable", "displayPrice": 1e2, "localizations": []}]}"#,
                to: path)
            #expect(
                throws: CatalogError.invalidValue(
                    path: path, keyPath: "products[0].displayPrice",
                    expected:
                        "a non-negative decimal price such as \"0.99\", of at most 18 digits, 15 before the point",
                    found: "a number")
            ) {
                try StoreKitConfiguration(contentsOf: path)
            }
        }
    }
}

@Suite struct ProductIdentifierListTests {
    @Test func propertyListsLoadInEveryShape() throws {
        let array = try ProductIdentifierList(contentsOf: Repository.fixture("ids-array.plist"))
        #expect(
            array.productIDs == [
                "com.example.fixtures.arcade.club.weekly", "com.example.fixtures.arcade.club.monthly",
                "com.example.fixtures.arcade.club.yearly",
            ])
        #expect(array.subscriptionGroups.isEmpty)
        let products = try ProductIdentifierList(contentsOf: Repository.fixture("ids-products.plist"))
        #expect(products.productIDs.count == 7 && products.subscriptionGroups.isEmpty)
        #expect(products.productIDs.first == "com.example.fixtures.arcade.gems.50")
        let groups = try ProductIdentifierList(contentsOf: Repository.fixture("ids-groups.plist"))
        #expect(groups.productIDs.count == 6)
        #expect(groups.subscriptionGroups.map(\.name) == ["plus", "family"])
        #expect(
            groups.subscriptionGroups.first?.productIDs == [
                "com.example.fixtures.studio.plus.yearly", "com.example.fixtures.studio.plus.monthly",
                "com.example.fixtures.studio.lite.monthly",
            ])
        let keyed = try ProductIdentifierList(contentsOf: Repository.fixture("ids-keyed.plist"))
        #expect(keyed.productIDs.count == 6 && keyed.productIDs.contains("com.example.fixtures.hovernotes.unlock"))
        #expect(
            keyed.productIDs == keyed.productIDs.sorted(), "the keys, in order; the values (emoji, titles) are ignored")
    }

    @Test func jsonFixtureListsLoad() throws {
        let array = try ProductIdentifierList(contentsOf: Repository.fixture("products_v2.json"))
        #expect(
            array.productIDs == [
                "com.example.fixtures.kanji.advanced", "com.example.fixtures.kanji.hints",
                "com.example.fixtures.kanji.premium.monthly", "com.example.fixtures.kanji.premium.yearly",
            ], "each identifier once, in file order")
        let groups = try ProductIdentifierList(contentsOf: Repository.fixture("product_groups.json"))
        #expect(groups.productIDs.count == 6)
        #expect(groups.subscriptionGroups.map(\.name) == ["Abonnement Atelier", "Cours en ligne"])
    }

    /// The identifier lists of Tests/Fixtures name products that its configuration files define.
    @Test func theFixtureListsNameTheFixtureProducts() async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try Ledger.open(at: directory + "/l.sqlite", mode: .createIfMissing)
            let catalog = ProductCatalog(ledger: ledger)
            try catalog.importConfigurations(
                at: try Repository.fixtureNames(withExtension: "storekit").map(Repository.fixture))
            let lists =
                try Repository.fixtureNames(withExtension: "plist") + Repository.fixtureNames(withExtension: "json")
            #expect(lists.count == 6)
            for name in lists {
                let ids = try ProductIdentifierList(contentsOf: Repository.fixture(name)).productIDs
                let response = try catalog.products(for: ids)
                #expect(response.invalidProductIdentifiers.isEmpty, "\(name)")
                #expect(response.products.map(\.id) == ids, "\(name)")
            }
        }
    }

    @Test func jsonListsLoadWhateverTheFileName() async throws {
        try await withTemporaryDirectory { directory in
            for name in ["products_v2.json", "ids.txt", "Products"] {
                let path = directory + "/" + name
                try write(
                    #"["com.example.level1", "com.example.level2", "com.example.rocket_car", "com.example.level1"]"#,
                    to: path)
                #expect(
                    try ProductIdentifierList(contentsOf: path).productIDs == [
                        "com.example.level1", "com.example.level2", "com.example.rocket_car",
                    ])
            }
            let dictionary = directory + "/products_v3.json"
            try write(
                #"{"Products": ["a"], "Subscriptions": [{"Group": "g", "Products": ["b", "c"]}]}"#, to: dictionary)
            #expect(try ProductIdentifierList(contentsOf: dictionary).productIDs == ["a", "b", "c"])
        }
    }

    @Test func aNonStringIdentifierNamesItsPosition() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ids.json"
            try write(#"{"Products": ["a", 7]}"#, to: path)
            #expect(
                throws: CatalogError.invalidValue(
                    path: path, keyPath: "Products[1]", expected: "a string", found: "a number")
            ) {
                try ProductIdentifierList(contentsOf: path)
            }
            try write(#"42"#, to: path)
            #expect(throws: CatalogError.notAnIdentifierList(path: path)) {
                try ProductIdentifierList(contentsOf: path)
            }
            try write(#"<plist><array><string>a</string>"#, to: path)
            #expect(throws: CatalogError.self) { try ProductIdentifierList(contentsOf: path) }
        }
    }
}

@Suite struct ProductsRequestTests {
    @Test func everyRequestedIdentifierLandsInExactlyOneList() async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try SampleCatalog.ledger(in: directory)
            let requested = [
                SampleCatalog.nonConsumable, "com.example.unknown", SampleCatalog.consumable, "",
                SampleCatalog.nonConsumable,
            ]
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
