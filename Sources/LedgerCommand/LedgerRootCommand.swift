public import ArgumentParser
import Foundation
package import StoreLedger
import Synchronization

/// `ledger`: inspects and drives a StoreLedger file.
public struct LedgerRootCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "ledger",
        abstract: "Inspect and drive a StoreLedger in-app purchase ledger.",
        discussion: """
            Every command takes --database PATH (default: $LEDGER_DATABASE, else ./ledger.sqlite) \
            and --json (stdout then holds exactly one JSON document; messages go to stderr, and an \
            error is one JSON document there), before or after the command's name.
            Exit codes: 0 ok, 1 refused operation, 2 problems found by verify, 64 usage, 65 bad input data, \
            66 missing input file or ledger, 73 an output file that cannot be written, 74 unusable ledger, 75 busy (another process held the ledger \
            longer than --wait; try again).
            Start with `ledger demo`.
            """,
        version: LedgerRootCommand.version,
        subcommands: [
            InitCommand.self, InfoCommand.self, CustomersCommand.self, AppsCommand.self, DevicesCommand.self,
            ProductsCommand.self,
            PurchaseCommand.self,
            ApproveCommand.self,
            DeclineCommand.self, FinishCommand.self, LaunchCommand.self, ListCommand.self, ShowCommand.self,
            RestoreCommand.self, EntitlementsCommand.self, SubscriptionsCommand.self, RefundCommand.self,
            ReverseRefundCommand.self, RefundRequestsCommand.self, FamilySharingCommand.self,
            ClockCommand.self, StoreCommand.self, PromotionsCommand.self, VerifyCommand.self, UpgradeCommand.self,
            BackupCommand.self,
            CertificateCommand.self, ReceiptCommand.self, JWSCommand.self, AuditCommand.self, ServeCommand.self,
            TLSCommand.self,
            APIKeysCommand.self,
            NotificationsCommand.self,
            DemoCommand.self,
            HoldPurchasesCommand.self,
        ])

    public init() {}

    /// StoreLedger's version, as `ledger --version` prints it (CHANGELOG.md's latest release).
    package static let version = "0.1.0"
}

/// The `ledger` executable's entry point.
public enum LedgerCLI {
    public static func main() async {
        await main(arguments: Array(CommandLine.arguments.dropFirst()))
    }

    /// Runs `ledger arguments...`, opening every ledger with `configure` applied to the
    /// configuration the options describe (the lab arms its fault injection this way).
    package static func main(
        arguments: [String], configure: @escaping @Sendable (LedgerConfiguration) throws -> LedgerConfiguration = { $0 }
    ) async {
        GlobalOptions.configure.withLock { $0 = configure }
        let words = CommandWords(words: arguments)
        let command = words.afterLeadingGlobalOptions
        if command.isEmpty, !arguments.isEmpty {
            exitWithUsageError(
                "the options need a command after them, such as `ledger --database PATH list`", json: words.wantsJSON)
        }
        if let word = words.runTogetherShortOptions {
            exitWithUsageError(
                "unknown option \(quoted(word)): a value that starts with - goes after `--`, as in `ledger purchase -- -id`",
                json: words.wantsJSON)
        }
        if command.first == "help" {
            // `ledger [options] help TOPIC...`: help needs no options.
            if let unknown = CommandWords(words: Array(command.dropFirst())).unknownCommand(
                root: LedgerRootCommand.self)
            {
                exitWithUsageError("no command \(quoted(unknown.word))" + Self.hint(unknown), json: words.wantsJSON)
            }
            await runAsRoot(LedgerRootCommand.self, arguments: command)
        }
        if let unknown = words.unknownCommand(root: LedgerRootCommand.self) {
            exitWithUsageError("unknown command \(quoted(unknown.word))" + Self.hint(unknown), json: words.wantsJSON)
        }
        await runAsRoot(
            LedgerRootCommand.self, arguments: words.globalOptionsAfterCommand(root: LedgerRootCommand.self))
    }

    /// `(did you mean "list"? see `ledger help`)`.
    private static func hint(_ unknown: UnknownCommand) -> String {
        " (" + (unknown.suggestion.map { "did you mean \(quoted($0))? " } ?? "") + "see `ledger help`)"
    }

    private static func exitWithUsageError(_ message: String, json: Bool) -> Never {
        ErrorReport(message: message, exitCode: LedgerExitCode.usage).print(json: json)
        exit(LedgerExitCode.usage)
    }
}
