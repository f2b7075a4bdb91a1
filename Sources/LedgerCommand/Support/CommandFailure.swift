package import ArgumentParser
import Foundation
import StoreLedger
import StoreTesting

/// Exit codes of `ledger`, from sysexits(3) where one fits.
package enum LedgerExitCode {
    package static let refused: Int32 = 1
    /// `ledger verify` found problems.
    package static let problemsFound: Int32 = 2
    package static let usage: Int32 = 64
    package static let dataError: Int32 = 65
    package static let noInput: Int32 = 66
    /// A file the command writes elsewhere (a backup, an export) cannot be created (EX_CANTCREAT).
    package static let cannotCreate: Int32 = 73
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

/// Parses `arguments` as `root`'s command line and runs the command, then exits: the one place
/// where `ledger` (and the lab) turn an error into a message on stderr and an exit code. The
/// ledgers a command opened are closed before the process exits, whatever happened.
package func runAsRoot(_ root: any ParsableCommand.Type, arguments: [String]) async -> Never {
    let json = CommandWords(words: arguments).wantsJSON
    let parsed: any ParsableCommand
    do {
        parsed = try root.parseAsRoot(arguments)
    } catch {
        exitReporting(error, root: root, json: json)  // usage errors, help and --version
    }
    do {
        if var command = parsed as? any AsyncParsableCommand {
            try await command.run()
        } else {
            var command = parsed
            try command.run()
        }
        if let failure = OpenLedgers.closeAll() { throw failure }
    } catch {
        let report = reported(error)  // before closing: a hint may read the ledger
        _ = OpenLedgers.closeAll()
        exitReporting(report, root: root, json: json)
    }
    root.exit()
}

/// Exits for `error`: argument-parser prints its own errors, help and version, except a usage
/// error under `--json`, which is reported as the JSON error document like any other.
private func exitReporting(_ error: any Error, root: any ParsableCommand.Type, json: Bool) -> Never {
    switch error {
    case let report as ErrorReport:
        report.print(json: json)
        Foundation.exit(report.exitCode)
    case is ExitCode:
        root.exit(withError: error)  // a command's own exit code (verify's 2), already explained
    default:
        let code = root.exitCode(for: error).rawValue
        guard code != 0 else { root.exit(withError: error) }  // help and --version
        if json {
            ErrorReport(message: cut(root.message(for: error), after: 1_000), exitCode: code).print(json: true)
        } else {
            // Argument-parser's words, with what they quote bounded and escaped, as ours are.
            Output.message(
                root.fullMessage(for: error).split(separator: "\n", omittingEmptySubsequences: false)
                    .map { cut(String($0), after: 1_000) }.joined(separator: "\n"))
        }
        Foundation.exit(code)
    }
}

/// An error as `ledger` reports it: a message, and the exit code that classifies it.
struct ErrorReport: Error {
    let message: String
    let exitCode: Int32

    /// The stable name of each exit code, the `code` of the JSON error document.
    static let codeNames: [Int32: String] = [
        LedgerExitCode.refused: "refused", LedgerExitCode.usage: "usage", LedgerExitCode.dataError: "badInput",
        LedgerExitCode.noInput: "missingInput", LedgerExitCode.cannotCreate: "cannotWrite",
        LedgerExitCode.unusableLedger: "unusableLedger",
        LedgerExitCode.busy: "busy",
    ]

    /// Prints the report on stderr: `error: MESSAGE`, or with `--json` one line holding
    /// `{"error": {"code", "exitCode", "message"}, "version": 1}` (stdout stays empty).
    func print(json: Bool) {
        guard json else { return Output.message("error: " + message) }
        let document = Document(
            error: Body(code: Self.codeNames[exitCode] ?? "failed", exitCode: exitCode, message: message),
            version: Output.jsonVersion)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let text = (try? encoder.encode(document)).map { String(decoding: $0, as: UTF8.self) } ?? #"{"error":{}}"#
        Output.message(text)
    }

    private struct Document: Encodable {
        let error: Body
        let version: Int
    }

    private struct Body: Encodable {
        let code: String
        let exitCode: Int32
        let message: String
    }
}

/// What the process exits with for `error`: argument-parser's own errors as they are; any
/// other error becomes an `ErrorReport` (with a hint of `ledger`'s where one helps).
private func reported(_ error: any Error) -> any Error {
    // Argument-parser's own errors (ExitCode, ValidationError, CleanExit, and the one its
    // `help` subcommand throws to print the help) are its to print and to map.
    if String(reflecting: type(of: error)).hasPrefix("ArgumentParser.") { return error }
    let (code, hint) = failure(error)
    return ErrorReport(message: cut("\(error)", after: 1_000) + (hint.map { " (\($0))" } ?? ""), exitCode: code)
}

/// Every error a command can end with: its exit code, and a hint about the `ledger` command
/// that helps, where one does (the libraries' messages never name the tool).
func failure(_ error: any Error) -> (code: Int32, hint: String?) {
    switch error {
    case LedgerError.missingLedger:
        (LedgerExitCode.noInput, "create one with `ledger init` or `ledger products import FILE.storekit`")
    case LedgerError.busy:
        (LedgerExitCode.busy, "try again, or wait longer with --wait SECONDS")
    case LedgerError.destinationExists:
        (LedgerExitCode.refused, nil)
    case LedgerError.cannotWrite:
        (LedgerExitCode.cannotCreate, nil)
    case LedgerError.olderSchema:
        (
            LedgerExitCode.unusableLedger,
            "`ledger upgrade` upgrades it after checking it; any command that writes does too"
        )
    case let error as LedgerError where error.unvouchedEvents != nil:
        (
            LedgerExitCode.unusableLedger,
            error.unvouchedEvents.map {
                "if they are the ledger's own: `ledger upgrade --vouch-for-events \($0.lowerBound)-\($0.upperBound)`"
            }
        )
    case is LedgerError:
        (LedgerExitCode.unusableLedger, nil)
    case CustomerError.customerNotChosen:
        (LedgerExitCode.usage, "with --customer NAME, before or after the command")
    case CustomerError.unknownCustomer:
        (LedgerExitCode.usage, "add one with `ledger customers add NAME`")
    case CustomerError.invalidName:
        (LedgerExitCode.dataError, nil)
    case AppError.appNotChosen:
        (LedgerExitCode.usage, "with --app BUNDLE_ID, before or after the command")
    case AppError.unknownApp:
        (LedgerExitCode.usage, "add one with `ledger apps add BUNDLE_ID`")
    case AppError.invalidBundleID:
        (LedgerExitCode.dataError, nil)
    case CustomerError.deviceNotChosen:
        (LedgerExitCode.usage, "with --device NAME, before or after the command")
    case CustomerError.unknownDevice:
        (LedgerExitCode.usage, nil)
    case let unknown as UnknownProductError:
        (
            LedgerExitCode.refused,
            OpenLedgers.nearestProduct(to: unknown.productIdentifier).map { "did you mean \(quoted($0))?" }
                ?? "import it with `ledger products import`"
        )
    case CatalogError.identifierListNotDefinitions:
        (LedgerExitCode.dataError, "to buy these identifiers, request them with `ledger products request --ids-file`")
    case CatalogError.missingFile, CatalogError.unreadableFile:
        (LedgerExitCode.noInput, nil)
    case APIKeyError.invalidIdentifier, APIKeyError.invalidPublicKey:
        (LedgerExitCode.dataError, nil)
    case is CatalogError, is InputError, is StoreSettingError:
        (LedgerExitCode.dataError, nil)
    case PaymentQueueError.invalidQuantity, PaymentQueueError.invalidIdempotencyKey,
        PaymentQueueError.emptyProductIdentifier, PaymentQueueError.invalidApplicationUsername:
        (LedgerExitCode.dataError, nil)
    default:
        (LedgerExitCode.refused, nil)
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
