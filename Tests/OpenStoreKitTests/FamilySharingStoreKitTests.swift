import Foundation
import enum LedgerModel.StoreControlError
import LedgerTesting
import OpenStoreKit
import OpenStoreKitTest
import Testing

/// Family Sharing through StoreKit: a shared purchase arrives owned `.familyShared`, and the end
/// of the sharing reaches StoreKit 1's revocation callback and StoreKit 2's updates.
@Suite struct FamilySharingStoreKitTests {
    static let shareable = SampleCatalog.nonConsumable2

    /// The sample catalog (whose second level is family-shareable) as a `.storekit` file, written
    /// once for the test process.
    static let file: URL = {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "FamilySharingStoreKitTests-\(ProcessInfo.processInfo.processIdentifier)")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return URL(fileURLWithPath: (try? SampleCatalog.write(in: directory.path)) ?? directory.path)
    }()

    /// A session of the sample catalog that only this task's StoreKit calls reach.
    static func withSession(
        isolation: isolated (any Actor)? = #isolation, _ body: (SKTestSession) async throws -> Void
    ) async throws {
        let session = try SKTestSession(contentsOf: file, scope: .taskLocal)
        try await session.withTaskLocalStore { try await body(session) }
    }

    @MainActor @Test func aSharedPurchaseArrivesFamilySharedAndItsRevocationReachesBothAPIs() async throws {
        try await Self.withSession { session in
            let observer = StoreObserver()
            SKPaymentQueue.default().add(observer)
            var updates = Transaction.updates.makeAsyncIterator()
            try session.shareFamilyPurchase(productIdentifier: Self.shareable)
            let shared = try #require(await updates.next()?.payloadValue)
            #expect(shared.productID == Self.shareable && shared.ownershipType == .familyShared)
            #expect(await Transaction.currentEntitlement(for: Self.shareable) != nil)
            try await waitFor(session) { observer.delivered[Self.shareable] == 1 }

            try session.revokeFamilySharing(identifier: UInt(shared.id))
            let revoked = try #require(await updates.next()?.payloadValue)
            #expect(revoked.id == shared.id && revoked.revocationDate != nil)
            try await waitFor(session) { observer.revokedProducts == [Self.shareable] }
            #expect(await Transaction.currentEntitlement(for: Self.shareable) == nil)
        }
    }

    @Test func whatCannotBeSharedThrows() async throws {
        try await Self.withSession { session in
            #expect(throws: StoreControlError.notFamilyShareable(SampleCatalog.nonConsumable)) {
                try session.shareFamilyPurchase(productIdentifier: SampleCatalog.nonConsumable)
            }
            let own = try await session.buyProduct(identifier: SampleCatalog.nonConsumable)
            #expect(own.ownershipType == .purchased)
            #expect(throws: StoreControlError.notFamilyShared(own.id)) {
                try session.revokeFamilySharing(identifier: UInt(own.id))
            }
        }
    }
}
