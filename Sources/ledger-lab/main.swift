import LedgerLab

await LabRootCommand.run()
