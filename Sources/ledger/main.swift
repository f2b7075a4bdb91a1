import LedgerCommand

await LedgerCLI.main()
