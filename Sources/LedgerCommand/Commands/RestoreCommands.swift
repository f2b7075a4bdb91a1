import ArgumentParser
import Foundation
import StoreLedger

struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract:
            "Restore completed purchases: one new restored transaction per non-consumable and auto-renewable purchase.",
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
        try options.output.emit(
            Restored(restored: restored, outcome: result.isFinished ? "finished" : "failed", error: error)
        ) {
            if let error { return "restore failed: \(error)" }
            return restored.isEmpty
                ? "restore finished: nothing to restore (0 transactions)"
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
        // The customer's on every device: what fell due is made first, as a launch makes it,
        // and no device is named.
        let ledger = try options.openLedger()
        _ = try ledger.recoverAtLaunch()
        let entitlements = try ledger.currentEntitlements()
        try options.output.emit(["entitlements": entitlements]) {
            entitlements.isEmpty ? "no entitlements" : entitlements.map(describe).joined(separator: "\n")
        }
    }
}
