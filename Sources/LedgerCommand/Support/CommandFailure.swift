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
}

/// A bad value the user typed (a malformed UUID, say): exit 65.
struct InputError: Error, CustomStringConvertible {
    let description: String
}

/// An operation the tool refuses (replacing a ledger the demo did not make, say): exit 1.
struct CommandRefusal: Error, CustomStringConvertible {
    let description: String
}

/// Runs a command's body, turning every error into a message on stderr and its exit code.
func reportingFailures(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let exit as ExitCode {
        throw exit
    } catch let error as ValidationError {
        throw error
    } catch LedgerError.missingLedger(let path) {
        Output.message("error: no ledger at \(path) (create one with `ledger init` or `ledger products import FILE.storekit`)")
        throw ExitCode(LedgerExitCode.noInput)
    } catch {
        Output.message("error: \(error)")
        throw ExitCode(exitCode(for: error))
    }
}

func exitCode(for error: any Error) -> Int32 {
    switch error {
    case LedgerError.missingLedger:
        LedgerExitCode.noInput
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
