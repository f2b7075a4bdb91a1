public import ArgumentParser
import Foundation
public import StoreLedger

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
