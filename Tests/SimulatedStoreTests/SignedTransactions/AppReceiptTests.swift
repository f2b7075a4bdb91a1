import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

@testable import SimulatedStore

/// The app receipt (StoreKit 1's `Bundle.main.appStoreReceiptURL`), read back as an app's
/// validation code reads it: `ReceiptContents` walks it with SwiftASN1 and checks it with
/// swift-certificates, independently of the code that wrote it.
@Suite struct AppReceiptTests {
    @Test func theReceiptListsWhatAppleListsSignedAndBoundToTheDevice() async throws {
        try await StoreFixture.with { store in
            var settings = try StoreSettings(ledger: store.ledger)
            (settings.appVersion, settings.appAppleID) = ("2.3.1", 1_234_567_890)
            try store.ledger.setStoreSettings(settings.storedValues)
            let level = try await store.buy(SampleCatalog.nonConsumable)
            let eaten = try await store.buy(SampleCatalog.consumable)
            _ = try await store.queue.finish(eaten.id)
            let uneaten = try await store.buy(SampleCatalog.consumable)
            let monthly = try await store.buy(SampleCatalog.subscription)
            _ = try await store.buy(SampleCatalog.nonConsumable2, outcome: .userCancelled)
            try await store.session.refundTransaction(level.id)

            let bytes = try store.ledger.appReceipt()
            let receipt = try ReceiptContents(bytes)
            #expect(
                try await ReceiptContents.isSignedByIdentity(
                    bytes, root: store.ledger.signingCertificates().root, at: store.now()))
            #expect(try receipt.text(0) == "Xcode")
            #expect(try ReceiptContents.integer(receipt.fields[1]) == 1_234_567_890)
            #expect(try receipt.text(2) == settings.bundleID)
            #expect(try receipt.text(3) == "2.3.1")
            #expect(try receipt.text(19) == "1.0")
            #expect(receipt.fields[4]?.count == 16)
            #expect(receipt.fields[5] == receipt.expectedHash(device: try store.ledger.deviceVerificationID()))
            #expect(receipt.fields[5] != receipt.expectedHash(device: UUID()), "another device's hash differs")
            #expect(try receipt.text(12) == rfc3339(try store.now()))
            #expect(receipt.fields[21] == nil)

            // A finished consumable has left; the refunded purchase stays, with its date. (A DER
            // set is in the order of its members' encodings, not of the purchases.)
            let records = try receipt.purchases.map { try ContentsRecord($0) }.sorted {
                Int($0.transactionID ?? "") ?? 0 < Int($1.transactionID ?? "") ?? 0
            }
            #expect(records.map(\.transactionID) == [level.id, uneaten.id, monthly.id].map(String.init))
            let refunded = try #require(records.first)
            #expect(refunded.productID == SampleCatalog.nonConsumable)
            #expect(
                refunded.cancellation == rfc3339(try #require(try store.ledger.transaction(level.id)?.revocationDate)))
            #expect(refunded.quantity == 1 && refunded.expiration == "")
            let subscription = try #require(records.last)
            #expect(subscription.originalTransactionID == String(monthly.originalID))
            #expect(subscription.expiration == rfc3339(try #require(monthly.expirationDate)))
            #expect(subscription.webOrderLineItemID == Int(monthly.id))
            #expect(subscription.cancellation == "")
            #expect(records[1].webOrderLineItemID == nil)
            for record in receipt.purchases {
                #expect(try ReceiptContents.integer(record[1713]) == 0 && ReceiptContents.integer(record[1719]) == 0)
                #expect(try ReceiptContents.text(record[1704]) == rfc3339(try store.now()))
            }
        }
    }

    @Test func aSandboxReceiptTakesTheTestPropertiesAndProductionRefusesThem() async throws {
        try await StoreFixture.with { store in
            var settings = try StoreSettings(ledger: store.ledger)
            settings.environment = .sandbox
            try store.ledger.setStoreSettings(settings.storedValues)
            let plain = try ReceiptContents(store.ledger.appReceipt())
            #expect(try plain.text(0) == "ProductionSandbox")
            #expect(plain.purchases.isEmpty)
            let expired = try ReceiptContents(store.ledger.appReceipt(properties: ReceiptProperties(isExpired: true)))
            #expect(try expired.text(21) == rfc3339(try store.now() - day), "a day before it was made")
            let volume = try ReceiptContents(
                store.ledger.appReceipt(properties: ReceiptProperties(isVolumePurchase: true)))
            #expect(try volume.text(0) == "ProductionVPPSandbox")
            #expect(try volume.text(21) == rfc3339(try store.now() + 365 * day))

            settings.environment = .production
            try store.ledger.setStoreSettings(settings.storedValues)
            #expect(throws: ReceiptError.propertiesOutsideSandbox) {
                try store.ledger.appReceipt(properties: ReceiptProperties(isExpired: true))
            }
            #expect(try ReceiptContents(store.ledger.appReceipt()).text(0) == "Production")
        }
    }

    @Test func aReceiptListsAtMostItsBoundOfPurchases() async throws {
        try await StoreFixture.with { store in
            for _ in 0..<3 { try await store.buy(SampleCatalog.consumable) }
            #expect(try ReceiptContents(store.ledger.appReceipt(limit: 3)).purchases.count == 3)
            #expect(throws: ReceiptError.tooManyPurchases(limit: 2)) { try store.ledger.appReceipt(limit: 2) }
        }
    }

    /// Each receipt has its own opaque value, so its own hash, as Apple's.
    @Test func everyReceiptHasANewOpaqueValue() async throws {
        try await StoreFixture.with { store in
            let (first, second) = (
                try ReceiptContents(store.ledger.appReceipt()), try ReceiptContents(store.ledger.appReceipt())
            )
            #expect(first.fields[4] != second.fields[4] && first.fields[5] != second.fields[5])
            let device = try store.ledger.deviceVerificationID()
            #expect(first.fields[5] == first.expectedHash(device: device))
            #expect(second.fields[5] == second.expectedHash(device: device))
        }
    }
}

/// An in-app purchase record's fields, as text and numbers.
struct ContentsRecord {
    let quantity: Int?
    let productID: String?
    let transactionID: String?
    let originalTransactionID: String?
    let expiration: String?
    let cancellation: String?
    let webOrderLineItemID: Int?

    init(_ fields: [Int: [UInt8]]) throws {
        quantity = try ReceiptContents.integer(fields[1701])
        productID = try ReceiptContents.text(fields[1702])
        transactionID = try ReceiptContents.text(fields[1703])
        originalTransactionID = try ReceiptContents.text(fields[1705])
        expiration = try ReceiptContents.text(fields[1708])
        cancellation = try ReceiptContents.text(fields[1712])
        webOrderLineItemID = try ReceiptContents.integer(fields[1711])
    }
}

/// A date as receipts write it (RFC 3339 in UTC, to the second), by Foundation's formatter.
func rfc3339(_ date: Date) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.timeZone = TimeZone(secondsFromGMT: 0)
    return formatter.string(from: date)
}
