// The storage engine's API speaks the model's values and signs with `LedgerSigning`: whoever
// imports the engine has both.
@_exported public import LedgerModel
@_exported public import LedgerSigning
