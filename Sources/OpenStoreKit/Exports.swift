// `import StoreKit` makes Foundation's names visible on Apple's platforms (StoreKit's interface
// re-exports it), so purchase code uses `UUID`, `Date`, `NSObject` or `UserDefaults` with no
// `import Foundation` of its own. `import OpenStoreKit` does the same, and re-exports nothing
// else: the ledger and its engine (GRDB, `Ledger`) stay behind it.
@_exported public import Foundation
