import Foundation
import LedgerTestSupport
import LedgerTesting
import OpenStoreKit
import OpenStoreKitTest

/// The products of `v3.0-garden-shop.storekit`.
enum Shop {
    static let seeds = "com.example.fixtures.garden.seeds"
    static let greenhouse = "com.example.fixtures.garden.greenhouse"
    static let season = "com.example.fixtures.garden.season"
    static let monthly = "com.example.fixtures.garden.pro.monthly"
    static let yearly = "com.example.fixtures.garden.pro.yearly"
    static let all = [seeds, greenhouse, season, monthly, yearly]
    static let groupID = "70000100"
    static let file = URL(fileURLWithPath: Repository.fixture("v3.0-garden-shop.storekit"))

    /// Runs `body` with a new session of the shop that only this task's StoreKit calls reach,
    /// so that tests run in parallel.
    static func withSession(
        isolation: isolated (any Actor)? = #isolation, _ body: (SKTestSession) async throws -> Void
    ) async throws {
        let session = try SKTestSession(contentsOf: file, scope: .taskLocal)
        try await session.withTaskLocalStore { try await body(session) }
    }
}

/// Fetches the shop's products with StoreKit 1's request, as an app does.
@MainActor
func fetchShopProducts(_ session: SKTestSession) async throws -> [String: SKProduct] {
    let fetcher = ProductFetcher()
    fetcher.fetch(Shop.all + ["com.example.unknown"])
    await session.waitUntilIdle()
    while !fetcher.finished && fetcher.failure == nil { await Task.yield() }
    return Dictionary(uniqueKeysWithValues: fetcher.products.map { ($0.productIdentifier, $0) })
}

extension Shop {
    /// Runs `body` with a new session of the shop bound to the whole process, as StoreKitTest
    /// binds it: what detached tasks (a `Transaction.updates` listener) reach. One such test
    /// runs at a time.
    static func withProcessSession(
        isolation: isolated (any Actor)? = #isolation, _ body: (SKTestSession) async throws -> Void
    ) async throws {
        await SerialGate.processStore.acquire()
        do {
            try await body(try SKTestSession(contentsOf: file))
            await SerialGate.processStore.release()
        } catch {
            await SerialGate.processStore.release()
            throw error
        }
    }
}

/// The sample catalog of `LedgerTesting` (family-shareable products, offer codes) as a shop.
enum SampleShop {
    /// The sample catalog as a `.storekit` file, written once for the test process.
    static let file: URL = {
        let path = directory?.path ?? FileManager.default.temporaryDirectory.path
        return URL(fileURLWithPath: (try? SampleCatalog.write(in: path)) ?? path)
    }()

    /// Where `file` is: removed when the test process exits, as the sessions' own directories are.
    private static let directory = try? TemporaryDirectory.make(prefix: "SampleShop-", removedAtExit: true)

    /// A session of the sample catalog that only this task's StoreKit calls reach.
    static func withSession(
        isolation: isolated (any Actor)? = #isolation, _ body: (SKTestSession) async throws -> Void
    ) async throws {
        let session = try SKTestSession(contentsOf: file, scope: .taskLocal)
        try await session.withTaskLocalStore { try await body(session) }
    }
}
