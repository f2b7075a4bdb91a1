import ArgumentParser
import StoreLedger

/// Exit codes of `ledger`, from sysexits(3) where one fits.
enum LedgerExitCode {
    static let refused: Int32 = 1
    /// `ledger verify` found problems.
    static let problemsFound: Int32 = 2
    static let usage: Int32 = 64
    static let dataError: Int32 = 65
    static let noInput: Int32 = 66
    static let unusableLedger: Int32 = 74
    /// Another process held the ledger longer than `--wait` (EX_TEMPFAIL: try again).
    static let busy: Int32 = 75
}

/// A bad value the user typed (a malformed UUID, say): exit 65.
struct InputError: Error, CustomStringConvertible {
    let description: String
}

/// An operation the tool refuses (replacing a ledger the demo did not make, say): exit 1.
struct CommandRefusal: Error, CustomStringConvertible {
    let description: String
}

/// Runs a command's body, turning every error into a message on stderr and its exit code. The
/// ledgers it opened are closed before it returns, whatever happened.
func reportingFailures(_ body: () async throws -> Void) async throws {
    do {
        try await body()
        if let error = OpenLedgers.closeAll() { throw error }
    } catch let exit as ExitCode {
        _ = OpenLedgers.closeAll()
        throw exit
    } catch let error as ValidationError {
        _ = OpenLedgers.closeAll()
        throw error
    } catch LedgerError.missingLedger(let path) {
        _ = OpenLedgers.closeAll()
        Output.message("error: no ledger at \(path) (create one with `ledger init` or `ledger products import FILE.storekit`)")
        throw ExitCode(LedgerExitCode.noInput)
    } catch LedgerError.busy(let path) {
        _ = OpenLedgers.closeAll()
        Output.message("error: \(LedgerError.busy(path: path)); try again, or wait longer with --wait SECONDS")
        throw ExitCode(LedgerExitCode.busy)
    } catch {
        _ = OpenLedgers.closeAll()
        Output.message("error: " + bounded("\(error)"))
        throw ExitCode(exitCode(for: error))
    }
}

func exitCode(for error: any Error) -> Int32 {
    switch error {
    case LedgerError.missingLedger:
        LedgerExitCode.noInput
    case LedgerError.busy:
        LedgerExitCode.busy
    case is LedgerError:
        LedgerExitCode.unusableLedger
    case CatalogError.missingFile, CatalogError.unreadableFile:
        LedgerExitCode.noInput
    case is CatalogError, is InputError, is StoreSettingError, StoreControlError.invalidApplicationUsername:
        LedgerExitCode.dataError
    case PaymentQueueError.invalidQuantity, PaymentQueueError.invalidIdempotencyKey,
         PaymentQueueError.emptyProductIdentifier:
        LedgerExitCode.dataError
    default:
        LedgerExitCode.refused
    }
}

/// An error message as printed: control characters escaped, and cut after 1,000 characters
/// (a message can quote an argument or a file's value of any size).
func bounded(_ message: String) -> String {
    let limit = 1_000
    let escaped = TerminalText.escaped(message.count > limit ? String(message.prefix(limit)) : message)
    return message.count > limit ? escaped + "... (message cut: \(message.utf8.count) bytes)" : escaped
}
