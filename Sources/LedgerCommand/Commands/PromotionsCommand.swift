import ArgumentParser
import Foundation
import StoreLedger

extension PromotionVisibility: ExpressibleByArgument {
    package init?(argument: String) {
        switch argument.lowercased() {
        case "default", "appstoreconnectdefault": self = .appStoreConnectDefault
        case "visible": self = .visible
        case "hidden": self = .hidden
        default: return nil
        }
    }
}

/// `ledger promotions`: per-device order and visibility of promoted in-app purchases.
struct PromotionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "promotions",
        abstract: "Override the order and visibility of promoted products on this device (Product.PromotionInfo).",
        discussion:
            "A product left out of the order is hidden; an empty order (reset) goes back to the App Store Connect defaults.",
        subcommands: [List.self, Order.self, Visibility.self, Reset.self])

    struct Promotions: Encodable {
        let promotions: [PromotionInfo]
        /// False: the App Store Connect order applies and `promotions` overrides visibility only.
        let orderOverridden: Bool
    }

    static func emit(_ options: GlobalOptions, _ ledger: Ledger, _ promotions: [PromotionInfo]) throws {
        let overridden = try ledger.isPromotionOrderOverridden()
        try options.output.emit(Promotions(promotions: promotions, orderOverridden: overridden)) {
            if promotions.isEmpty { return "no overrides: the App Store Connect defaults apply" }
            let header =
                overridden
                ? "order set on this device (products left out are hidden):"
                : "App Store Connect order, with these visibility overrides:"
            return
                ([header]
                + promotions.enumerated().map {
                    "\($0.offset + 1). \($0.element.productID)  \($0.element.visibility.rawValue)"
                })
                .joined(separator: "\n")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The current order, with each product's visibility.")

        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let ledger = try options.openLedgerForReading()
            try PromotionsCommand.emit(options, ledger, try ledger.promotionOrder())
        }
    }

    struct Order: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set the order by product identifiers (products left out are hidden; none resets).")

        @OptionGroup var options: GlobalOptions

        @Argument(help: "Product identifiers, in order.")
        var productIDs: [String] = []

        func run() async throws {
            let ledger = try options.openLedger()
            try PromotionsCommand.emit(
                options, ledger, try ProductCatalog(ledger: ledger).updatePromotionOrder(byIDs: productIDs))
        }
    }

    struct Visibility: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set one product's visibility: hidden, visible or default.")

        @OptionGroup var options: GlobalOptions

        @Argument(help: "The product identifier.")
        var productID: String

        @Argument(help: "hidden, visible or default (appStoreConnectDefault).")
        var visibility: PromotionVisibility

        func run() async throws {
            let ledger = try options.openLedger()
            try PromotionsCommand.emit(
                options, ledger,
                try ProductCatalog(ledger: ledger).updatePromotionVisibility(visibility, for: productID))
        }
    }

    struct Reset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove every override: the App Store Connect defaults apply.")

        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let ledger = try options.openLedger()
            try PromotionsCommand.emit(options, ledger, try ProductCatalog(ledger: ledger).updatePromotions([]))
        }
    }
}
