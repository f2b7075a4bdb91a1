import ArgumentParser
import Foundation
import StoreLedger
import StoreTesting

/// `ledger family-sharing`: a family member's purchase shared with the customer, and its end.
struct FamilySharingCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "family-sharing",
        abstract: "Share a family member's purchase with the customer, or stop sharing it.",
        discussion: """
            A family member's purchase of a family-shareable product (the catalog's isFamilyShareable; never a \
            consumable) reaches the customer as a purchase made outside the app, owned FAMILY_SHARED: its signed \
            inAppOwnershipType, its renewals' and its restored copies'. Stopping the sharing (the family member \
            stops sharing or leaves the family) revokes them, as a refund does, and notifies REVOKE; so does a \
            refund of a shared purchase.
            """,
        subcommands: [Share.self, Revoke.self])

    struct Share: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A family member bought a family-shareable product and shares it with the customer.")

        @OptionGroup var options: GlobalOptions

        @Argument(help: "The product identifier.")
        var productID: String

        func run() async throws {
            let ledger = try options.openLedger()
            let shared = try await StoreTestSession(ledger: ledger).shareFamilyPurchase(Payment(productID: productID))
            try options.output.emit(shared) { "shared " + describe(shared) }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The family member stops sharing a purchase: its transactions are revoked (REVOKE).")

        @OptionGroup var options: GlobalOptions

        @Argument(help: "The id of a transaction of the shared purchase.")
        var id: UInt64

        func run() async throws {
            let ledger = try options.openLedger()
            let revoked = try await StoreTestSession(ledger: ledger).revokeFamilySharing(id)
            try options.output.emit(["revoked": revoked]) {
                revoked.map { "revoked " + describe($0) }.joined(separator: "\n")
            }
        }
    }
}
