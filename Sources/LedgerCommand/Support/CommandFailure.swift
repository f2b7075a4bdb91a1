import ArgumentParser
import StoreLedger

/// Exit codes of `ledger`, from sysexits(3) where one fits.
package enum LedgerExitCode {
    package static let refused: Int32 = 1
    /// `ledger verify` found problems.
    package static let problemsFound: Int32 = 2
    package static let usage: Int32 = 64
    package static let dataError: Int32 = 65
    package static let noInput: Int32 = 66
    package static let unusableLedger: Int32 = 74
    /// Another process held the ledger longer than `--wait` (EX_TEMPFAIL: try again).
    package static let busy: Int32 = 75
}

/// A bad value the user typed (a malformed UUID, say): exit 65.
package struct InputError: Error, CustomStringConvertible {
    package let description: String

    package init(description: String) {
        self.description = description
    }
}

/// An operation the tool refuses (replacing a ledger the demo did not make, say): exit 1.
struct CommandRefusal: Error, CustomStringConvertible {
    let description: String
}

/// Runs a command's body, turning every error into a message on stderr and its exit code. The
/// ledgers it opened are closed before it returns, whatever happened.
package func reportingFailures(_ body: () async throws -> Void) async throws {
    let failure: (any Error)?
    do {
        try await body()
        failure = OpenLedgers.closeAll()
    } catch {
        _ = OpenLedgers.closeAll()
        failure = error
    }
    if let failure { throw reported(failure) }
}

/// What the command throws for `error`: argument-parser's own errors as they are; any other
/// error is printed on stderr (with a hint where one helps) and becomes its exit code.
private func reported(_ error: any Error) -> any Error {
    switch error {
    case is ExitCode, is ValidationError:
        return error
    case LedgerError.missingLedger(let path):
        Output.message("error: no ledger at \(path) (create one with `ledger init` or `ledger products import FILE.storekit`)")
    case LedgerError.busy:
        Output.message("error: \(error); try again, or wait longer with --wait SECONDS")
    default:
        Output.message("error: " + cut("\(error)", after: 1_000))
    }
    return ExitCode(exitCode(for: error))
}

func exitCode(for error: any Error) -> Int32 {
    switch error {
    case LedgerError.missingLedger:
        LedgerExitCode.noInput
    case LedgerError.busy:
        LedgerExitCode.busy
    case LedgerError.destinationExists:
        LedgerExitCode.refused
    case is LedgerError:
        LedgerExitCode.unusableLedger
    case CatalogError.missingFile, CatalogError.unreadableFile:
        LedgerExitCode.noInput
    case is CatalogError, is InputError, is StoreSettingError:
        LedgerExitCode.dataError
    case PaymentQueueError.invalidQuantity, PaymentQueueError.invalidIdempotencyKey,
         PaymentQueueError.emptyProductIdentifier, PaymentQueueError.invalidApplicationUsername:
        LedgerExitCode.dataError
    default:
        LedgerExitCode.refused
    }
}

/// `text` made safe to print: control characters escaped, and cut after `limit` characters
/// (a message can quote an argument or a file's value of any size), saying how long it was.
func cut(_ text: String, after limit: Int, quoting: Bool = false) -> String {
    let quote = quoting ? "\"" : ""
    let head = quote + TerminalText.escaped(String(text.prefix(limit))) + quote
    return text.count > limit ? head + "... (\(text.utf8.count) bytes)" : head
}

/// `text` in quotes for a message: its first 64 characters, control characters escaped.
func quoted(_ text: String) -> String {
    cut(text, after: 64, quoting: true)
}
