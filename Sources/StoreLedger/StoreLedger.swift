// `import StoreLedger` is enough for an app: the stored value types come along.
@_exported import LedgerStore
