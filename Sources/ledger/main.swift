import AppStoreServer
import LedgerCommand

if CommandLine.arguments.dropFirst().first == "serve" {
    AppStoreHTTPServer.runTasksOnEventLoops()
}
await LedgerCLI.main()
