import Foundation
import LedgerModel
import LedgerSigning
import LedgerTestSupport
import LedgerTesting
import Testing

/// A transaction's payload written directly (`TransactionPayload.json`) is what `JSONEncoder`
/// writes for it, byte for byte, over seeded random transactions: every optional field present or
/// absent, strings with quotes, backslashes, control characters and non-ASCII text.
@Suite struct TransactionPayloadJSONTests {
    static func randomString(_ random: inout SplitMix64) -> String {
        let pieces = ["a", "Z", "0", "\"", "\\", "/", "\n", "\t", "\u{01}", "\u{1F}", "é", "日本", "😀", " ", "\u{7F}"]
        return (0..<Int(random.next() % 12)).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }.joined()
    }

    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func theDirectJSONIsJSONEncodersBytes(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        for _ in 0..<300 {
            func maybe<T>(_ value: T) -> T? { random.next() % 2 == 0 ? value : nil }
            let date = Date(timeIntervalSince1970: Double(random.next() % 4_000_000_000))
            let type = ProductType.allCases[Int(random.next() % UInt64(ProductType.allCases.count))]
            let transaction = PaymentTransaction(
                id: random.next() >> 1, originalID: random.next() >> 1, productID: Self.randomString(&random),
                productType: type, state: random.next() % 2 == 0 ? .purchased : .restored, isFinished: false,
                quantity: Int(random.next() % 10) + 1, purchaseDate: date, originalPurchaseDate: date,
                expirationDate: maybe(date.addingTimeInterval(86_400)), revocationDate: maybe(date),
                revocationReason: maybe(Int(random.next() % 2)), isUpgraded: random.next() % 2 == 0,
                appAccountToken: maybe(UUID()), applicationUsername: nil, error: nil,
                reason: random.next() % 2 == 0 ? .purchase : .renewal,
                subscriptionGroupID: maybe(Self.randomString(&random)),
                offer: maybe(
                    TransactionOffer(
                        type: random.next() % 2 == 0 ? .introductory : .promotional, id: maybe("offer"),
                        paymentMode: .freeTrial, period: SubscriptionPeriod(value: 1, unit: .month))),
                storefront: ["USA", "FRA", "JPN", "XXX"][Int(random.next() % 4)], environment: "Xcode",
                idempotencyKey: nil, restoredFromID: maybe(random.next() >> 1), createdAt: date, updatedAt: date,
                finishedAt: nil, deliveryCount: 0, lastDeliveredAt: nil)
            var settings = StoreSettings()
            settings.bundleID = Self.randomString(&random)
            let product = maybe(
                Product(id: transaction.productID, type: type, price: Decimal(random.next() % 10_000) / 100))
            let payload = TransactionPayload(
                transaction, product: product, settings: settings, appTransactionID: maybe(String(random.next())),
                charged: maybe(Decimal(random.next() % 100_000) / 100), familyShared: random.next() % 4 == 0,
                refundedPortion: maybe(Int(random.next() % 99_999) + 1))
            let direct = payload.json
            let encoded = try encoder.encode(payload)
            #expect(
                direct == encoded,
                "\(String(decoding: direct, as: UTF8.self))\n\(String(decoding: encoded, as: UTF8.self))")
        }
    }
}
