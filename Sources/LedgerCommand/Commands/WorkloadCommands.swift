import ArgumentParser
import Foundation
import StoreLedger

/// Buys products like an app, prints each acknowledged transaction, then waits to be killed
/// before finishing anything: the "crash before finish" of `ledger demo`.
struct HoldPurchasesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hold-purchases",
        abstract: "Buy products, print each acknowledged transaction, then wait (to be killed) without finishing.",
        shouldDisplay: false)

    @OptionGroup var options: GlobalOptions

    @Argument(help: "Product identifiers to buy.")
    var productIDs: [String]

    func run() async throws {
        let queue = try options.openQueue()
        for productID in productIDs {
            let transaction = try await queue.add(Payment(productID: productID))
            line(["op": "purchase", "id": "\(transaction.id)", "state": transaction.state.rawValue])
        }
        line(["op": "holding"])
        while true { try await Task.sleep(for: .seconds(3600)) }
    }

    /// One JSON object on stdout, written at once (no buffering) so the parent reads it now.
    private func line(_ fields: [String: String]) {
        var data = (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])) ?? Data()
        data.append(0x0A)
        FileHandle.standardOutput.write(data)
    }
}
