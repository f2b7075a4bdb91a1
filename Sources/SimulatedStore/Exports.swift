// The store's rules extend the engine's `Ledger` and speak the model's values: whoever imports
// the store has all three.
@_exported public import LedgerEngine
@_exported public import LedgerModel
@_exported public import LedgerSigning
