public import ArgumentParser
import Foundation
public import StoreLedger

extension RevocationReason: ExpressibleByArgument {
    public init?(argument: String) {
        self.init(nameOrRawValue: argument)
    }

    /// Every reason by name, for the help and for the error a wrong one gets.
    public static var allValueStrings: [String] { allCases.map(\.name) }

    public static var allValueDescriptions: [String: String] {
        [
            RevocationReason.other.name: "any other reason (0)",
            RevocationReason.developerIssue.name: "an issue in the app (1)",
        ]
    }
}

struct RefundCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "refund",
        abstract:
            "Refund a purchased or restored transaction: sets its revocation date and reason; the state does not change."
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The transaction id.")
    var id: UInt64

    @Option(help: "Why it was refunded (StoreKit's revocation reasons; default other):")
    var reason: RevocationReason?

    func run() async throws {
        let refunded = try await StoreTestSession(ledger: try options.openLedger()).refundTransaction(
            id, reason: reason ?? .other)
        try options.output.emit(refunded) { "refunded " + describe(refunded) }
    }
}
