import Foundation
import LedgerTestSupport
import Testing

@testable import StoreLedger

/// A queue remembers what it handed out itself between two looks at other devices, at most
/// `OtherDevices.rememberedLimit` transactions: past it, it forgets them all (and its next look
/// starts from the history's end), so a queue that never looks, OpenStoreKit's, stays bounded.
@Suite struct OtherDevicesBoundTests {
    @Test func aQueueForgetsItsOwnDeliveriesPastTheBound() async throws {
        try await withLedger { ledger, _ in
            let limit = PaymentQueue.OtherDevices.rememberedLimit
            try ledger.appendSyntheticPurchases(productID: "consumable", finished: 0, unfinished: limit + 1)
            let all = try ledger.unfinishedTransactions()
            #expect(all.count == limit + 1)
            var devices = PaymentQueue.OtherDevices(heardThrough: 0)
            devices.heardHere(Array(all.prefix(limit)))
            #expect(devices.heardHere.count == limit && !devices.forgot, "at the bound: kept")
            devices.heardHere([all[limit]])
            #expect(devices.heardHere.isEmpty && devices.forgot, "past it: forgotten")
        }
    }
}
