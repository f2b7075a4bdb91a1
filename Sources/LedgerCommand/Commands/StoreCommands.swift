public import ArgumentParser
import Foundation
import StoreLedger
import StoreTesting

extension StoreControl: ExpressibleByArgument {}

/// `ledger store`: the simulated store's settings and test controls.
struct StoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Show and change the simulated store's settings; clear, delete and resolve transactions.",
        subcommands: [Show.self, Set.self, Import.self, Clear.self, Delete.self, Resolve.self])

    /// The settings as `store show` prints them.
    struct SettingsView: Encodable {
        let storefront: String
        let currencyCode: String
        let locale: String
        let canMakePayments: Bool
        let askToBuy: Bool
        let interruptedPurchases: Bool
        let failTransactions: TransactionError?
        let timeRate: String
        let billingRetryOnRenewal: Bool
        let billingGracePeriod: Bool
        let bundleID: String
        let environment: String
        /// The app's Apple ID; `nil` until set.
        let appAppleID: Int64?
        /// The version of the app installed, which the app transaction names.
        let appVersion: String
        let invalidSignatures: Bool
        /// Where Server Notifications V2 go; `nil` while none is set.
        let notificationURL: String?
        /// The identifier of the key promotional offers must be signed with; `nil` without one.
        let subscriptionOffersKeyID: String?
        let now: Date

        init(_ settings: StoreSettings, offersKeyID: String?, now: Date) {
            storefront = settings.storefront.countryCode
            currencyCode = settings.storefront.currencyCode
            locale = settings.locale
            canMakePayments = settings.canMakePayments
            askToBuy = settings.askToBuyEnabled
            interruptedPurchases = settings.interruptedPurchasesEnabled
            failTransactions = settings.failTransactionsError.map { TransactionError(code: $0) }
            timeRate = settings.timeRate.name
            billingRetryOnRenewal = settings.billingRetryOnRenewal
            billingGracePeriod = settings.billingGracePeriodEnabled
            bundleID = settings.bundleID
            environment = settings.environment.rawValue
            appAppleID = settings.appAppleID
            appVersion = settings.appVersion
            invalidSignatures = settings.invalidSignaturesEnabled
            notificationURL = settings.notificationURL?.absoluteString
            subscriptionOffersKeyID = offersKeyID
            self.now = now
        }

        var text: String {
            """
            storefront:            \(storefront) (\(currencyCode))
            locale:                \(locale)
            canMakePayments:       \(canMakePayments)
            askToBuy:              \(askToBuy)
            interruptedPurchases:  \(interruptedPurchases)
            failTransactions:      \(failTransactions.map { "\($0.code.name) (\($0.code.rawValue))" } ?? "off")
            timeRate:              \(timeRate)
            billingRetryOnRenewal: \(billingRetryOnRenewal)
            billingGracePeriod:    \(billingGracePeriod)
            bundleID:              \(bundleID)
            environment:           \(environment)
            appAppleID:            \(appAppleID.map(String.init) ?? "none")
            appVersion:            \(appVersion)
            invalidSignatures:     \(invalidSignatures)
            notificationURL:       \(notificationURL ?? "none")
            offersKey:             \(subscriptionOffersKeyID ?? "none (a .storekit file's subscriptionOffersKeyPair)")
            clock:                 \(InternetDate.string(from: now))
            """
        }
    }

    static func emitSettings(_ options: GlobalOptions, _ ledger: Ledger) throws {
        let view = SettingsView(
            try StoreSettings(ledger: ledger), offersKeyID: try ledger.subscriptionOffersKey()?.id,
            now: try ledger.storeDate())
        try options.output.emit(view) { view.text }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the store's settings and clock.")

        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try StoreCommand.emitSettings(options, try options.openLedgerForReading())
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change one setting of the store.",
            discussion: """
                storefront FRA | locale fr_FR | canMakePayments true|false | askToBuy true|false |
                interruptedPurchases true|false | failTransactions off|CODE (paymentNotAllowed, 4, ...) |
                timeRate NAME (realTime, oneSecondIsOneDay, monthlyRenewalEveryThirtySeconds, oneRenewalEveryTwoSeconds, ...) |
                billingRetryOnRenewal true|false | billingGracePeriod true|false |
                bundleID com.example.app (what signed transactions and promotional offer signatures name) |
                environment Xcode|Sandbox|Production (what signed transactions name) |
                appAppleID N|none (the app's Apple ID, which Production needs) |
                appVersion 1.0 (the app version installed, which the app transaction names) | invalidSignatures true|false |
                notificationURL URL|none (where ledger serve sends Server Notifications V2)
                """)

        @OptionGroup var options: GlobalOptions

        @Argument(help: "The setting: \(StoreControl.allCases.map(\.rawValue).joined(separator: ", ")).")
        var key: StoreControl

        @Argument(help: "Its new value.")
        var value: String

        func run() async throws {
            _ = try key.apply(value, to: StoreSettings())  // a bad value changes nothing, opens nothing
            let session = StoreTestSession(ledger: try options.openLedger())
            try session.set(key, to: value)
            try StoreCommand.emitSettings(options, session.ledger)
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Apply the settings of a StoreKit configuration file (storefront, locale, Ask to Buy, failing, time rate).",
            discussion:
                "`ledger products import` takes only the products (and seeds the storefront); this takes the test switches too."
        )

        @OptionGroup var options: GlobalOptions

        @Argument(help: "A .storekit file.")
        var file: String

        func run() async throws {
            let configuration = try StoreKitConfiguration(contentsOf: file)
            let session = StoreTestSession(ledger: try options.openLedger())
            try session.applySettings(of: configuration)
            try StoreCommand.emitSettings(options, session.ledger)
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Delete every transaction, unfinished ones included; histories stay, closed by a deleted event. Ids are not reused."
        )

        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let deleted = try await StoreTestSession(ledger: try options.openLedger()).clearTransactions()
            try options.output.emit(["deleted": deleted]) { "deleted \(deleted) transaction(s)" }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete one transaction; its history stays, closed by a deleted event.")

        @OptionGroup var options: GlobalOptions

        @Argument(help: "The transaction id.")
        var id: UInt64

        func run() async throws {
            try await StoreTestSession(ledger: try options.openLedger()).deleteTransaction(id)
            try options.output.emit(["deleted": id]) { "deleted transaction #\(id)" }
        }
    }

    struct Resolve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Resolve the issue of an interrupted purchase, or a subscription's billing issue.",
            discussion: """
                An interrupted (failed) purchase: once it is finished too, a new purchased transaction for \
                the same product arrives. A transaction of an auto-renewable subscription whose group is in \
                billing retry (or its grace period): the billing issue is resolved, and the group renews now, \
                or, within a grace period, from the end of its last period; the renewal is printed.
                """
        )

        @OptionGroup var options: GlobalOptions

        @Argument(help: "The id of the interrupted (failed) transaction, or of a transaction of the subscription.")
        var id: UInt64

        func run() async throws {
            let ledger = try options.openLedger()
            let replacement = try await StoreTestSession(ledger: ledger).resolveIssueForTransaction(id)
            // No replacement: it waits for the app's finish, or it was made and then deleted.
            let deletedReplacement =
                replacement == nil
                ? try ledger.interruptedPurchases().first { $0.transactionID == id }?.replacementID : nil
            try options.output.emit(Resolved(resolved: id, replacement: replacement)) {
                if let replacement { return "resolved #\(id); its new purchase: " + describe(replacement) }
                if let deletedReplacement {
                    return
                        "resolved #\(id) already; its new purchase #\(deletedReplacement) was deleted, and none is made again"
                }
                return "resolved #\(id); the new purchase arrives when the app finishes #\(id)"
            }
        }

        struct Resolved: Encodable {
            let resolved: UInt64
            let replacement: PaymentTransaction?

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(resolved, forKey: .resolved)
                try container.encode(replacement, forKey: .replacement)
            }

            enum CodingKeys: String, CodingKey { case resolved, replacement }
        }
    }
}

/// `ledger clock`: the store's time.
struct ClockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clock",
        abstract: "Show or move the store's clock; moving it makes the subscription renewals that fall due.",
        subcommands: [Show.self, Advance.self, SetDate.self])

    struct Moved: Encodable {
        let now: Date
        let renewed: [PaymentTransaction]
    }

    static func emitMoved(_ options: GlobalOptions, now: Date, renewed: [PaymentTransaction]) throws {
        try options.output.emit(Moved(now: now, renewed: renewed)) {
            (["store clock: \(InternetDate.string(from: now))"]
                + renewed.map { "renewed " + describe($0) }).joined(separator: "\n")
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the store's time and time rate.")

        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let ledger = try options.openLedgerForReading()
            let now = try ledger.storeDate()
            let rate = try ledger.storeWideSettings().timeRate
            try options.output.emit(
                Shown(now: now, offsetSeconds: now.timeIntervalSinceNow.rounded(), timeRate: rate.name)
            ) {
                "store clock: \(InternetDate.string(from: now)) (time rate \(rate.name))"
            }
        }

        struct Shown: Encodable {
            let now: Date
            let offsetSeconds: Double
            let timeRate: String
        }
    }

    struct Advance: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move the store's clock forward: 30d, 1h30m, 45s, 2w, or ISO 8601 (P1M, P1Y, PT1H).")

        @OptionGroup var options: GlobalOptions

        // Every word is taken as the duration, so that "-1d" reaches the duration parser and
        // gets its own error rather than "unknown option".
        @Argument(parsing: .allUnrecognized, help: "How far.")
        var duration: [String]

        func validate() throws {
            guard duration.count == 1 else { throw ValidationError("give exactly one duration, such as 30d or P1M") }
        }

        func run() async throws {
            _ = try StoreTime.date(after: duration[0], from: Date())  // a bad duration opens nothing
            let session = StoreTestSession(ledger: try options.openLedger())
            let now = try session.ledger.storeDate()
            let interval = try StoreTime.date(after: duration[0], from: now).timeIntervalSince(now)
            let renewed = try await session.advanceClock(by: interval)
            try ClockCommand.emitMoved(options, now: try session.ledger.storeDate(), renewed: renewed)
        }
    }

    struct SetDate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Set the store's clock to a later date (ISO 8601: 2027-01-31 or 2027-01-31T12:00:00Z).")

        @OptionGroup var options: GlobalOptions

        @Argument(help: "The date.")
        var date: String

        func run() async throws {
            let target = try StoreTime.date(date)
            let session = StoreTestSession(ledger: try options.openLedger())
            let renewed = try await session.setClock(to: target)
            try ClockCommand.emitMoved(options, now: try session.ledger.storeDate(), renewed: renewed)
        }
    }
}
