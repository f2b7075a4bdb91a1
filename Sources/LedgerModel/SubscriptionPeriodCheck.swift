import Foundation

/// The subscription rules `verify` checks, transaction by transaction in id order: every
/// expiration follows its purchase date; every renewal starts where the previous period of
/// its chain ended (never inside it; a period an upgrade replaced, or refunded, ended then) and lasts one whole period of its product, by the
/// calendar or at one of the store's time rates (or of its offer: one period, or all of a free
/// or pay-up-front promotional offer's periods).
package struct SubscriptionPeriodCheck {
    let periods: [String: SubscriptionPeriod]
    /// The periods of a free or pay-up-front promotional offer or offer code, by `offerKey`.
    let offerPeriodCounts: [String: Int]
    /// The period of each chain (by original id) that began last, of those seen so far.
    private var chainLatest: [UInt64: (start: Date, end: Date)] = [:]

    package init(periods: [String: SubscriptionPeriod], offerPeriodCounts: [String: Int] = [:]) {
        self.periods = periods
        self.offerPeriodCounts = offerPeriodCounts
    }

    package static func offerKey(_ productID: String, _ type: TransactionOffer.OfferType, _ offerID: String) -> String {
        "\(productID)\u{0}\(type.rawValue)\u{0}\(offerID)"
    }

    /// What is wrong with `transaction`'s period, in words (nothing when it holds).
    package mutating func problems(_ transaction: PaymentTransaction, _ history: [TransactionEvent]) -> [String] {
        // A restored copy keeps its purchase's expiration but is dated by the restore.
        guard let expiration = transaction.expirationDate, transaction.state == .purchased else { return [] }
        var problems: [String] = []
        let start = transaction.purchaseDate
        if expiration < start {
            problems.append("expires at \(Self.format(expiration)), before its purchase date \(Self.format(start))")
        }
        let moved = history.contains { $0.kind == .expirationChanged }
        if transaction.reason == .renewal {
            // A gap is allowed (`store delete` removes a period); an overlap never is. The chain
            // is the group's: a period seen before may begin after this renewal (an Ask to Buy
            // approved later, in the transaction made when it was asked), and then it is not the
            // one before it.
            if let previous = chainLatest[transaction.originalID], previous.start <= start,
                case let previousEnd = previous.end, start < previousEnd
            {
                problems.append(
                    "renewal starts at \(Self.format(start)), inside the previous period of its chain (until \(Self.format(previousEnd)))"
                )
            }
            // A renewal at an offer lasts its offer's period (a free or pay-up-front
            // promotional offer: all of its periods).
            let offerPeriods = transaction.offer.flatMap { offer in
                offer.id.flatMap { offerPeriodCounts[Self.offerKey(transaction.productID, offer.type, $0)] }
            }
            if !moved, let period = transaction.offer?.period ?? periods[transaction.productID],
                !PeriodCalendar.isEnd(of: period, from: start.ledgerMilliseconds, at: expiration.ledgerMilliseconds),
                !(offerPeriods.map {
                    PeriodCalendar.isEnd(
                        of: period, count: $0, from: start.ledgerMilliseconds, at: expiration.ledgerMilliseconds)
                } ?? false)
            {
                problems.append(
                    "renewal period \(Self.format(start)) to \(Self.format(expiration)) is not one \(period) period of its \(transaction.offer == nil ? "product" : "offer")"
                )
            }
        }
        // A period replaced by an upgrade, or refunded, ended then, whatever its expiration says:
        // the group's chain goes on from the upgrade, or from a purchase after the refund.
        if expiration > start, !transaction.isUpgraded, transaction.revocationDate == nil,
            chainLatest[transaction.originalID].map({ $0.start <= start }) ?? true
        {
            chainLatest[transaction.originalID] = (start, expiration)
        }
        return problems
    }

    private static func format(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
