public import ArgumentParser
import Foundation
public import StoreLedger

/// `ledger subscriptions`: auto-renewable subscriptions' test controls.
struct SubscriptionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "subscriptions",
        abstract: "Renew, expire, and turn auto-renew on or off for auto-renewable subscriptions.",
        subcommands: [Status.self, Renew.self, Expire.self, AutoRenew.self])

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show where a subscription group stands (StoreKit 2's subscription status and renewal info).",
            discussion: """
                The renewal state (subscribed, expired, inBillingRetryPeriod, inGracePeriod, revoked), the group's \
                latest transaction, whether and when it renews and to which product (a pending downgrade or \
                crossgrade), why it expired, and billing retry or grace period. Renewals that fell due are made \
                first. Exit 0 also when the group was never bought (status null).
                """)

        @OptionGroup var options: GlobalOptions

        @Argument(help: "An auto-renewable subscription's product identifier, or a subscription group's identifier.")
        var groupOrProduct: String

        func run() async throws {
            let ledger = try options.openQueue().ledger
            let status = try ledger.subscriptionStatus(forProductOrGroup: groupOrProduct)
            try options.output.emit(StatusOutput(status: status)) {
                guard let status else { return "\(groupOrProduct): never bought" }
                return summary(status)
            }
        }

        /// `{"status": null}` when never bought: the key is always there.
        struct StatusOutput: Encodable {
            let status: SubscriptionStatus?

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(status, forKey: .status)
            }

            enum CodingKeys: String, CodingKey { case status }
        }

        private func summary(_ status: SubscriptionStatus) -> String {
            let transaction = status.transaction
            var lines = [
                "group \(status.groupID): \(status.state.rawValue)",
                "latest: " + describe(transaction),
            ]
            if let expiration = transaction.expirationDate { lines.append("expires: \(expiration.formatted(.iso8601))") }
            if status.willAutoRenew {
                let when = status.renewalDate.map { " at \($0.formatted(.iso8601))" } ?? ""
                lines.append("auto-renew: on, renews to \(status.autoRenewProductID)\(when)")
            } else {
                lines.append("auto-renew: off")
            }
            if let reason = status.expirationReason { lines.append("expiration reason: \(reason.rawValue)") }
            lines.append("billing retry: \(status.isInBillingRetry ? "yes" : "no")")
            if let grace = status.gracePeriodExpirationDate { lines.append("grace period until: \(grace.formatted(.iso8601))") }
            return lines.joined(separator: "\n")
        }
    }

    struct Renew: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Renew a subscription now: its period ends and a renewal (a new purchased transaction) starts.")

        @OptionGroup var options: GlobalOptions

        @Argument(help: "The subscription's product identifier.")
        var productID: String

        func run() async throws {
            let renewal = try await StoreTestSession(ledger: try options.openLedger()).forceRenewalOfSubscription(productID)
            try options.output.emit(["renewal": renewal]) { "renewed " + describe(renewal) }
        }
    }

    struct Expire: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Expire a subscription now and turn its auto-renew off.")

        @OptionGroup var options: GlobalOptions

        @Argument(help: "The subscription's product identifier.")
        var productID: String

        func run() async throws {
            let expired = try StoreTestSession(ledger: try options.openLedger()).expireSubscription(productID)
            try options.output.emit(["expired": expired]) { "expired " + describe(expired) }
        }
    }

    struct AutoRenew: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "auto-renew",
            abstract: "Turn auto-renew on or off for a subscription's group. Off: it expires at its expiration date.")

        enum Switch: String, ExpressibleByArgument, CaseIterable { case on, off }

        @OptionGroup var options: GlobalOptions

        @Argument(help: "The subscription's product identifier.")
        var productID: String

        @Argument(help: "on or off.")
        var state: Switch

        func run() async throws {
            let session = StoreTestSession(ledger: try options.openLedger())
            try session.setAutoRenew(state == .on, for: productID)
            try options.output.emit(AutoRenewState(productID: productID, autoRenew: state == .on)) {
                "auto-renew \(state.rawValue) for \(productID)"
            }
        }

        struct AutoRenewState: Encodable {
            let productID: String
            let autoRenew: Bool
        }
    }
}

extension RevocationReason: ExpressibleByArgument {
    public init?(argument: String) {
        self.init(nameOrRawValue: argument)
    }
}

struct RefundCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "refund",
        abstract: "Refund a purchased or restored transaction: sets its revocation date and reason; the state does not change.")

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The transaction id.")
    var id: UInt64

    @Option(help: "other (0, the default) or developerIssue (1).")
    var reason: RevocationReason = .other

    func run() async throws {
        let refunded = try await StoreTestSession(ledger: try options.openLedger()).refundTransaction(id, reason: reason)
        try options.output.emit(refunded) { "refunded " + describe(refunded) }
    }
}

struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Restore completed purchases: one new restored transaction per non-consumable and auto-renewable purchase.",
        discussion: """
            Consumables are never restored; non-renewing subscriptions only with --include-non-renewing. \
            All restored transactions are committed together. Restoring twice restores twice, as StoreKit does. \
            Exit 0 when the restore finished (also with nothing to restore), 1 when it failed.
            """)

    @OptionGroup var options: GlobalOptions

    @Option(help: "Only this account's purchases (an app account token, a UUID).")
    var account: String?

    @Flag(name: .customLong("include-non-renewing"), help: "Also restore non-renewing subscriptions.")
    var includeNonRenewing = false

    func run() async throws {
        _ = try parseAccount(account)
        let result = try await options.openQueue().restoreCompletedTransactions(
            applicationUsername: account, includeNonRenewing: includeNonRenewing)
        var error: String?
        if case .failed(let failure) = result.outcome { error = "\(failure)" }
        let restored = try result.restored.all()
        try options.output.emit(Restored(restored: restored, outcome: result.isFinished ? "finished" : "failed", error: error)) {
            if let error { return "restore failed: \(error)" }
            return restored.isEmpty ? "restore finished: nothing to restore (0 transactions)"
                : (["restore finished: \(restored.count) transaction(s) restored"] + restored.map(describe))
                    .joined(separator: "\n")
        }
        if let error { throw CommandRefusal(description: "restore failed: \(error)") }
    }

    struct Restored: Encodable {
        let restored: [PaymentTransaction]
        let outcome: String
        let error: String?

        enum CodingKeys: String, CodingKey { case restored, outcome, error }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(restored, forKey: .restored)
            try container.encode(outcome, forKey: .outcome)
            try container.encode(error, forKey: .error)
        }
    }
}

struct EntitlementsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "entitlements",
        abstract: "What the user is entitled to now (StoreKit 2's current entitlements).",
        discussion: """
            The latest transaction of each non-consumable owned, of each auto-renewable subscription whose period \
            covers the store's time (not upgraded away), and of each non-renewing subscription. Never consumables, \
            never refunded transactions. Renewals that fell due are made first.
            """)

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        let entitlements = try options.openQueue().currentEntitlements()
        try options.output.emit(["entitlements": entitlements]) {
            entitlements.isEmpty ? "no entitlements" : entitlements.map(describe).joined(separator: "\n")
        }
    }
}

extension PromotionVisibility: ExpressibleByArgument {
    public init?(argument: String) {
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
        discussion: "A product left out of the order is hidden; an empty order (reset) goes back to the App Store Connect defaults.",
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
            let header = overridden ? "order set on this device (products left out are hidden):"
                : "App Store Connect order, with these visibility overrides:"
            return ([header] + promotions.enumerated().map { "\($0.offset + 1). \($0.element.productID)  \($0.element.visibility.rawValue)" })
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
            try PromotionsCommand.emit(options, ledger, try ProductCatalog(ledger: ledger).updatePromotionOrder(byIDs: productIDs))
        }
    }

    struct Visibility: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set one product's visibility: hidden, visible or default.")

        @OptionGroup var options: GlobalOptions

        @Argument(help: "The product identifier.")
        var productID: String

        @Argument(help: "hidden, visible or default (appStoreConnectDefault).")
        var visibility: PromotionVisibility

        func run() async throws {
            let ledger = try options.openLedger()
            try PromotionsCommand.emit(options, ledger, try ProductCatalog(ledger: ledger).updatePromotionVisibility(visibility, for: productID))
        }
    }

    struct Reset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove every override: the App Store Connect defaults apply.")

        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let ledger = try options.openLedger()
            try PromotionsCommand.emit(options, ledger, try ProductCatalog(ledger: ledger).updatePromotions([]))
        }
    }
}
