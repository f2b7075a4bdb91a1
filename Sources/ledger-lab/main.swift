import AppStoreServer
import LedgerLab

// The HTTP ceiling is served as `ledger serve` serves.
if CommandLine.arguments.dropFirst().first == "constant-server" {
    AppStoreHTTPServer.runTasksOnEventLoops()
}
await LabRootCommand.run()
