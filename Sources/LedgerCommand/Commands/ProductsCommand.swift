import ArgumentParser
import Foundation
import StoreLedger

struct ProductsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "products", abstract: "Import, list and request products; print a sample catalog.",
        subcommands: [Import.self, List.self, Request.self, Sample.self])

    /// A product as the CLI shows it: the stored definition plus its price for the storefront.
    struct ProductView: Encodable {
        let product: Product
        let displayPrice: String
        let currencyCode: String
        let displayName: String
        let description: String

        init(_ product: Product, settings: StoreSettings) {
            self.product = product
            displayPrice = PriceFormatter.string(
                for: product.price, storefront: settings.storefront, locale: settings.locale)
            currencyCode = settings.storefront.currencyCode
            let localization = product.localization(for: settings.locale)
            displayName = localization?.displayName ?? product.referenceName
            description = localization?.description ?? ""
        }

        enum Extra: String, CodingKey { case displayPrice, currencyCode, displayName, description }

        func encode(to encoder: any Encoder) throws {
            try product.encode(to: encoder)
            var container = encoder.container(keyedBy: Extra.self)
            try container.encode(displayPrice, forKey: .displayPrice)
            try container.encode(currencyCode, forKey: .currencyCode)
            try container.encode(displayName, forKey: .displayName)
            try container.encode(description, forKey: .description)
        }

        var line: String {
            "\(TerminalText.escaped(product.id))  \(product.type.rawValue)  \(displayPrice)  \(TerminalText.escaped(displayName))"
                + (product.subscription.map { "  group \($0.groupName) level \($0.level) \($0.period)" } ?? "")
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import products from Xcode StoreKit configuration files (.storekit).",
            discussion: """
                Every file is checked first; then all products, and the storefront and locale of the files' \
                settings, are stored in one commit. A bad file changes nothing. Creates the ledger when it is missing.
                """)

        @OptionGroup var options: GlobalOptions

        @Argument(help: "StoreKit configuration files.")
        var files: [String]

        func validate() throws {
            guard !files.isEmpty else { throw ValidationError("give at least one .storekit file") }
        }

        func run() async throws {
            // Read and check every file before the ledger is touched, so a refused import creates nothing.
            let checked = try ProductCatalog.readConfigurations(at: files)
            let ledger = try options.openLedger(mode: .createIfMissing)
            let result = try ProductCatalog(ledger: ledger).importConfigurations(checked)
            let settings = try StoreSettings(ledger: ledger)
            for warning in result.warnings { Output.message("warning: \(warning)") }
            try options.output.emit(
                ImportResult(
                    imported: result.productIDs, files: files, storefront: settings.storefront.countryCode,
                    locale: settings.locale, fileSettings: result.settings, warnings: result.warnings)
            ) {
                "imported \(result.productIDs.count) product(s) from \(files.count) file(s); storefront "
                    + "\(settings.storefront.countryCode) (\(settings.locale))"
            }
        }

        struct ImportResult: Encodable {
            let imported: [String]
            let files: [String]
            let storefront: String
            let locale: String
            let fileSettings: StoreKitSettings
            let warnings: [String]
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List every product of the ledger's catalog.")

        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let ledger = try options.openLedgerForReading()
            let settings = try StoreSettings(ledger: ledger)
            let views = try ledger.allProducts().map { ProductView($0, settings: settings) }
            try options.output.emit(["products": views]) {
                views.isEmpty
                    ? "no products (import some with `ledger products import FILE.storekit`)"
                    : views.map(\.line).joined(separator: "\n")
            }
        }
    }

    /// `ledger products sample`: the guides' catalog, to start from.
    struct Sample: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a sample StoreKit configuration file: one product of each kind.",
            discussion: """
                The catalog the guides' examples use: non-consumables com.example.level1 and \
                com.example.level2, the consumable com.example.rocket_car, the non-renewing \
                com.example.season_pass, and the subscription group pro (com.example.pro.monthly, \
                com.example.pro.yearly, com.example.basic.monthly). Save it and import it: \
                `ledger products sample > Products.storekit && ledger products import Products.storekit`. \
                It touches no ledger (the global options are taken, and have nothing to change).
                """)

        @OptionGroup var options: GlobalOptions

        func run() throws {
            print(ProductCatalog.sampleConfiguration)
        }
    }

    struct Request: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A products request: the products the store knows and the invalid identifiers.",
            discussion: """
                Identifiers come from the arguments and from --ids-file: a property list or JSON file holding an \
                array of strings, or a dictionary with a Products array (and optional Subscriptions groups). \
                Every identifier lands in exactly one of the two lists.
                """)

        @OptionGroup var options: GlobalOptions

        @Argument(help: "Product identifiers.")
        var identifiers: [String] = []

        @Option(name: .customLong("ids-file"), help: "A file of product identifiers (plist or JSON).")
        var idsFiles: [String] = []

        func validate() throws {
            guard !identifiers.isEmpty || !idsFiles.isEmpty else {
                throw ValidationError("give product identifiers, or --ids-file FILE")
            }
        }

        func run() async throws {
            var requested = identifiers
            for file in idsFiles { requested += try ProductIdentifierList(contentsOf: file).productIDs }
            let ledger = try options.openLedgerForReading()
            let settings = try StoreSettings(ledger: ledger)
            let response = try ProductCatalog(ledger: ledger).products(for: requested)
            let views = response.products.map { ProductView($0, settings: settings) }
            try options.output.emit(
                RequestResult(products: views, invalidProductIdentifiers: response.invalidProductIdentifiers)
            ) {
                (views.map(\.line) + response.invalidProductIdentifiers.map { "\($0)  invalid identifier" })
                    .joined(separator: "\n")
            }
        }

        struct RequestResult: Encodable {
            let products: [ProductView]
            let invalidProductIdentifiers: [String]
        }
    }
}
