import ArgumentParser
import Foundation
import StoreLedger

struct PurchaseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "purchase",
        abstract: "Buy a product: prints the transaction after the simulated store processed it.",
        discussion: """
            A failed or cancelled purchase is a normal result (exit 0): look at its state and error. \
            --error-code alone implies --outcome fail. The same --idempotency-key returns the existing \
            transaction and creates nothing.
            """)

    enum Outcome: String, ExpressibleByArgument, CaseIterable {
        case success, cancel, fail, deferred, interrupted
    }

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The product identifier.")
    var productID: String

    @Option(help: "How many (1...10).")
    var quantity = 1

    @Option(help: "The app account token, a UUID.")
    var account: String?

    @Option(name: .customLong("idempotency-key"), help: "A key that makes retrying this purchase safe.")
    var idempotencyKey: String?

    @Option(help: "What the simulated store does: success, cancel, fail, deferred (Ask to Buy) or interrupted (default: the store's settings).")
    var outcome: Outcome?

    @Option(name: .customLong("error-code"), help: "The SKError code of a failure, by name or number (default unknown).")
    var errorCode: String?

    func validate() throws {
        if errorCode != nil, let outcome, outcome != .fail {
            throw ValidationError("--error-code goes with --outcome fail, not \(outcome.rawValue)")
        }
    }

    func run() async throws {
        try await reportingFailures {
            let payment = Payment(
                productID: productID, quantity: quantity, appAccountToken: try parseAccount(account),
                idempotencyKey: idempotencyKey, simulatedOutcome: try simulatedOutcome())
            let transaction = try await options.openQueue().add(payment)
            try options.output.emit(transaction) { describe(transaction) }
        }
    }

    private func simulatedOutcome() throws -> SimulatedOutcome? {
        var code = StoreErrorCode.unknown
        if let errorCode {
            guard let parsed = StoreErrorCode(nameOrRawValue: errorCode) else {
                throw InputError(description: "unknown error code \"\(errorCode)\": use an SKError code name "
                    + "(paymentCancelled, paymentNotAllowed, ...) or number (0...\(StoreErrorCode.allCases.count - 1))")
            }
            code = parsed
        }
        switch outcome ?? (errorCode == nil ? nil : .fail) {
        case nil: return nil
        case .success: return .success
        case .cancel: return .userCancelled
        case .deferred: return .deferred
        case .interrupted: return .interrupted
        case .fail: return .failed(code)
        }
    }
}

/// Parses `--account`: an app account token must be a UUID.
func parseAccount(_ text: String?) throws -> UUID? {
    guard let text else { return nil }
    guard let uuid = UUID(uuidString: text) else {
        throw InputError(description: "invalid account \"\(text)\": an app account token must be a UUID such as 6F9619FF-8B86-D011-B42D-00C04FC964FF")
    }
    return uuid
}
