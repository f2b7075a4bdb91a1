import ArgumentParser

/// `ledger`: inspects and drives a StoreLedger file.
public struct LedgerRootCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "ledger",
        abstract: "Inspect and drive a StoreLedger in-app purchase ledger.",
        discussion: """
            Every command takes --database PATH (default: $LEDGER_DATABASE, else ./ledger.sqlite) \
            and --json (stdout then holds exactly one JSON document; messages go to stderr).
            Exit codes: 0 ok, 1 refused operation, 2 problems found by verify, 64 usage, 65 bad input data, \
            66 missing input file or ledger, 74 unusable ledger.
            Start with `ledger demo`.
            """,
        subcommands: [
            InitCommand.self, InfoCommand.self, ProductsCommand.self, PurchaseCommand.self, ApproveCommand.self,
            DeclineCommand.self, FinishCommand.self, LaunchCommand.self, ListCommand.self, ShowCommand.self,
            RestoreCommand.self, EntitlementsCommand.self, SubscriptionsCommand.self, RefundCommand.self,
            ClockCommand.self, StoreCommand.self, PromotionsCommand.self, VerifyCommand.self, BenchCommand.self, DemoCommand.self,
            HoldPurchasesCommand.self, TortureCommand.self, CrashCampaignCommand.self, CrashRunCommand.self,
            BenchMemoryProbeCommand.self,
        ])

    public init() {}
}

/// The `ledger` executable's entry point.
public enum LedgerCLI {
    public static func main() async {
        await run(LedgerRootCommand.self)
    }

    // In a generic context the compiler picks `AsyncParsableCommand.main()`; called on the
    // concrete type from top-level code it picks the synchronous one, which refuses to run.
    private static func run<Command: AsyncParsableCommand>(_: Command.Type) async {
        await Command.main()
    }
}
