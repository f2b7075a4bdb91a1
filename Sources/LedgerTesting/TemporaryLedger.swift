import Foundation
public import StoreLedger

/// A fresh directory for one test, removed (with everything in it) when `body` returns.
@discardableResult
public func withTemporaryDirectory<T>(_ body: (String) async throws -> T) async throws -> T {
    let path = NSTemporaryDirectory() + "storeledger-test-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try await body(path)
}

/// A new ledger for one test, in a fresh directory: it holds the products of `catalog` (the
/// text of a StoreKit configuration file; `SampleCatalog.json` by default), is closed when `body`
/// returns, and removed with its directory.
///
/// ```swift
/// try await withTemporaryLedger { ledger in
///     let queue = try PaymentQueue(ledger: ledger)
///     let bought = try await queue.add(Payment(productID: SampleCatalog.consumable))
///     #expect(bought.state == .purchased)
/// }
/// ```
@discardableResult
public func withTemporaryLedger<T>(
    catalog: String = SampleCatalog.json, configuration: LedgerConfiguration = .init(),
    _ body: (Ledger) async throws -> T
) async throws -> T {
    try await withTemporaryDirectory { directory in
        let file = directory + "/catalog.storekit"
        try Data(catalog.utf8).write(to: URL(fileURLWithPath: file))
        let ledger = try Ledger.open(
            at: directory + "/ledger.sqlite", mode: .createIfMissing, configuration: configuration)
        defer { try? ledger.close() }
        try ProductCatalog(ledger: ledger).importConfigurations(at: [file])
        return try await body(ledger)
    }
}
