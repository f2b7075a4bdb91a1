// `import StoreLedger` is all an app imports: the storage engine (`Ledger`), the simulated App
// Store's rules on it (`SimulatedStore`), the values it holds (`LedgerModel`: transactions,
// products, settings) and its signatures (`LedgerSigning`: JWS, the certificates) come along.
@_exported import LedgerEngine
@_exported import LedgerModel
@_exported import LedgerSigning
@_exported import SimulatedStore
