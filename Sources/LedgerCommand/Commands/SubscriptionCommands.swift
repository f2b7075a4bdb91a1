import ArgumentParser
import Foundation
import StoreLedger
import StoreTesting

/// `ledger subscriptions`: auto-renewable subscriptions' test controls.
struct SubscriptionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "subscriptions",
        abstract: "Renew, expire, and turn auto-renew on or off for auto-renewable subscriptions.",
        subcommands: [Status.self, Renew.self, Expire.self, AutoRenew.self, PriceIncreaseCommand.self])

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show where a subscription group stands (StoreKit 2's subscription status and renewal info).",
            discussion: """
                The renewal state (subscribed, expired, inBillingRetryPeriod, inGracePeriod, revoked), the group's \
                latest transaction, whether and when it renews and to which product (a pending downgrade or \
                crossgrade), why it expired, and billing retry or grace period. It only reads: renewals that fell \
                due since the last app command or clock move are made by the next one (`ledger launch`), not \
                here. A group the customer holds twice (their own subscription and one a family member shares) \
                shows both, the customer's own first; `status` in JSON is the first, `statuses` all. Exit 0 also \
                when the group was never bought (status null).
                """)

        @OptionGroup var options: GlobalOptions

        @Argument(
            help: "An auto-renewable subscription's product identifier, or a subscription group's identifier or name.")
        var groupOrProduct: String

        func run() async throws {
            let ledger = try options.openLedgerForReading()
            let statuses = try ledger.subscriptionStatuses(
                forGroup: try SubscriptionChoice(groupOrProduct, in: ledger).groupID)
            try options.output.emit(StatusOutput(statuses: statuses)) {
                guard !statuses.isEmpty else { return "\(groupOrProduct): never bought" }
                return statuses.map(summary).joined(separator: "\n\n")
            }
        }

        /// `{"status": null, "statuses": []}` when never bought: the keys are always there.
        struct StatusOutput: Encodable {
            let statuses: [SubscriptionStatus]

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(statuses.first, forKey: .status)
                try container.encode(statuses, forKey: .statuses)
            }

            enum CodingKeys: String, CodingKey { case status, statuses }
        }

        private func summary(_ status: SubscriptionStatus) -> String {
            let transaction = status.transaction
            var lines = [
                "group \(status.groupID): \(status.state.rawValue)",
                "latest: " + describe(transaction),
            ]
            if status.isFamilyShared { lines.insert("shared by a family member (FAMILY_SHARED)", at: 1) }
            if let expiration = transaction.expirationDate {
                lines.append("expires: \(expiration.formatted(.iso8601))")
            }
            if status.willAutoRenew {
                let when = status.renewalDate.map { " at \($0.formatted(.iso8601))" } ?? ""
                lines.append("auto-renew: on, renews to \(status.autoRenewProductID)\(when)")
            } else {
                lines.append("auto-renew: off")
            }
            if let reason = status.expirationReason { lines.append("expiration reason: \(reason.rawValue)") }
            if let price = status.renewalPrice { lines.append("renewal price: \(DecimalText.format(price))") }
            if let increase = status.priceIncrease {
                lines.append(
                    "price increase: \(increase.status.rawValue), to \(DecimalText.format(increase.price))"
                        + (increase.needsConsent ? "" : " (no consent needed)"))
            }
            lines.append("billing retry: \(status.isInBillingRetry ? "yes" : "no")")
            if let grace = status.gracePeriodExpirationDate {
                lines.append("grace period until: \(grace.formatted(.iso8601))")
            }
            if !status.eligibleWinBackOfferIDs.isEmpty {
                lines.append("win-back offers open: " + status.eligibleWinBackOfferIDs.joined(separator: ", "))
            }
            return lines.joined(separator: "\n")
        }
    }

    struct Renew: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Renew a subscription now: its period ends and a renewal (a new purchased transaction) starts.",
            discussion: """
                When the store fails renewals (store set billingRetryOnRenewal true), this renewal fails as every \
                renewal does: the period ends now, the subscription enters billing retry (a grace period when \
                enabled), DID_FAIL_TO_RENEW is notified, and the period that ended is printed as failedRenewal.
                """)

        @OptionGroup var options: GlobalOptions

        @Argument(help: "The subscription's product identifier, or its group's identifier or name.")
        var subscription: String

        func run() async throws {
            let ledger = try options.openLedger()
            let productID = try SubscriptionChoice(subscription, in: ledger).productID(in: ledger)
            let renewal = try await StoreTestSession(ledger: ledger).forceRenewalOfSubscription(productID)
            if try ledger.hasBillingIssue(productID) {
                try options.output.emit(["failedRenewal": renewal]) {
                    "renewal failed (billing retry): " + describe(renewal)
                }
            } else {
                try options.output.emit(["renewal": renewal]) { "renewed " + describe(renewal) }
            }
        }
    }

    struct Expire: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Expire a subscription now and turn its auto-renew off.")

        @OptionGroup var options: GlobalOptions

        @Argument(help: "The subscription's product identifier, or its group's identifier or name.")
        var subscription: String

        func run() async throws {
            let ledger = try options.openLedger()
            let productID = try SubscriptionChoice(subscription, in: ledger).productID(in: ledger)
            let expired = try await StoreTestSession(ledger: ledger).expireSubscription(productID)
            try options.output.emit(["expired": expired]) { "expired " + describe(expired) }
        }
    }

    struct AutoRenew: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "auto-renew",
            abstract: "Turn auto-renew on or off for a subscription's group. Off: it expires at its expiration date.")

        enum Switch: String, ExpressibleByArgument, CaseIterable { case on, off }

        @OptionGroup var options: GlobalOptions

        @Argument(help: "The subscription's product identifier, or its group's identifier or name.")
        var subscription: String

        @Argument(help: "on or off.")
        var state: Switch

        func run() async throws {
            let ledger = try options.openLedger()
            let productID = try SubscriptionChoice(subscription, in: ledger).productID(in: ledger)
            try await StoreTestSession(ledger: ledger).setAutoRenew(state == .on, for: productID)
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

/// `ledger subscriptions price-increase`: the App Store raises a subscriber's renewal price.
struct PriceIncreaseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "price-increase",
        abstract: "Raise the price a subscription renews at, and answer for the subscriber.",
        discussion: """
            An increase applies from the subscription's next renewal. One that needs the subscriber's consent (the \
            default) waits for `consent` or `decline`; a subscriber who has not consented when the period ends does \
            not renew: the subscription expires, reason didNotConsentToPriceIncrease. `decline` also turns \
            auto-renew off. With a notification URL, the store notifies PRICE_INCREASE (PENDING, ACCEPTED) and \
            EXPIRED (PRICE_INCREASE).
            """,
        subcommands: [Request.self, Consent.self, Decline.self])

    struct Request: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The App Store raises the price of a renewing subscription, from its next renewal.")

        @OptionGroup var options: GlobalOptions

        @Argument(help: "The subscription's product identifier, or its group's identifier or name.")
        var subscription: String

        @Option(help: "The new price of one period (default: the catalog's price of the product it renews to).")
        var price: String?

        @Flag(help: "An increase that needs no consent: agreed at once (PRICE_INCREASE ACCEPTED).")
        var withoutConsent = false

        func run() async throws {
            let ledger = try options.openLedger()
            let productID = try SubscriptionChoice(subscription, in: ledger).productID(in: ledger)
            let newPrice = try price.map { text in
                guard DecimalText.isExactPrice(text), let price = DecimalText.parse(text) else {
                    throw CommandRefusal(
                        description: "--price \(quoted(text)) is not a price: a non-negative decimal such as \"0.99\", "
                            + "of at most 18 digits, 15 before the point")
                }
                return price
            }
            try await StoreTestSession(ledger: ledger).requestPriceIncrease(
                for: productID, price: newPrice, needsConsent: !withoutConsent)
            try PriceIncreaseCommand.show(ledger, productID, options: options, verb: "requested")
        }
    }

    struct Consent: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The subscriber consents to the waiting price increase: the next renewal charges it.")

        @OptionGroup var options: GlobalOptions

        @Argument(help: "The subscription's product identifier, or its group's identifier or name.")
        var subscription: String

        func run() async throws {
            try await PriceIncreaseCommand.answer(subscription, agree: true, options: options)
        }
    }

    struct Decline: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The subscriber declines the waiting price increase: auto-renew turns off, and the "
                + "subscription expires at the end of its period.")

        @OptionGroup var options: GlobalOptions

        @Argument(help: "The subscription's product identifier, or its group's identifier or name.")
        var subscription: String

        func run() async throws {
            try await PriceIncreaseCommand.answer(subscription, agree: false, options: options)
        }
    }

    private static func answer(_ subscription: String, agree: Bool, options: GlobalOptions) async throws {
        let ledger = try options.openLedger()
        let productID = try SubscriptionChoice(subscription, in: ledger).productID(in: ledger)
        try await StoreTestSession(ledger: ledger).answerPriceIncrease(for: productID, agree: agree)
        try show(ledger, productID, options: options, verb: agree ? "consented to" : "declined")
    }

    /// Prints the group's increase as it stands after the change.
    private static func show(_ ledger: Ledger, _ productID: String, options: GlobalOptions, verb: String) throws {
        let increase = try ledger.priceIncrease(forProduct: productID)
        try options.output.emit(["priceIncrease": increase]) {
            guard let increase else { return "\(verb) the price increase of \(productID)" }
            return "\(verb) the price increase of \(increase.productID) to \(DecimalText.format(increase.price)): "
                + increase.status.rawValue
        }
    }
}

/// The subscription a `ledger subscriptions` argument names: an auto-renewable subscription's
/// product identifier, a subscription group's identifier, or a group's name as `products list`
/// shows it (in that order of precedence).
struct SubscriptionChoice {
    /// The product the argument named, when it named one.
    let named: String?
    let groupID: String

    init(_ argument: String, in ledger: Ledger) throws {
        let products = try ledger.allProducts()
        if let product = products.first(where: { $0.id == argument }) {
            guard product.type == .autoRenewable, let subscription = product.subscription else {
                throw StoreControlError.notAutoRenewable(argument)
            }
            (named, groupID) = (product.id, subscription.groupID)
            return
        }
        let subscriptions = products.filter { $0.type == .autoRenewable }
        let groups = subscriptions.compactMap(\.subscription)
        if groups.contains(where: { $0.groupID == argument }) {
            (named, groupID) = (nil, argument)
            return
        }
        let byName = Set(groups.filter { $0.groupName == argument }.map(\.groupID))
        guard byName.count <= 1 else {
            throw CommandRefusal(
                description: "\(quoted(argument)) names \(byName.count) subscription groups: "
                    + "give one's identifier (\(byName.sorted().joined(separator: ", ")))")
        }
        guard let group = byName.first else {
            let names = subscriptions.map(\.id) + groups.map(\.groupID) + groups.map(\.groupName)
            let hint = Suggestion.nearest(to: argument, among: Array(Set(names)).sorted()).map {
                " (did you mean \(quoted($0))?)"
            }
            throw CommandRefusal(
                description: "no auto-renewable subscription or subscription group \(quoted(argument))"
                    + (hint ?? ": `ledger products list` shows them"))
        }
        (named, groupID) = (nil, group)
    }

    /// The product to act on: the one named, else the group's latest subscription (what a
    /// control of the group acts on), else its first product.
    func productID(in ledger: Ledger) throws -> String {
        if let named { return named }
        if let latest = try ledger.subscriptionStatus(forGroup: groupID)?.transaction.productID { return latest }
        return try ledger.allProducts().first { $0.subscription?.groupID == groupID }?.id ?? groupID
    }
}
