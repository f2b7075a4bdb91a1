import ArgumentParser
import Foundation
import StoreLedger

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
