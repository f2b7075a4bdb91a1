import Foundation

/// A subscription's offers as the `offers` column of the products table stores them (JSON):
/// written by the catalog, read by the store's rules and by `verify`.
package struct ProductOffersColumn: Codable, Sendable {
    package var introductory: SubscriptionOffer?
    package var promotional: [SubscriptionOffer]
    /// Absent in a column written before offer codes, and when there are none.
    package var codes: [CodeOffer]?
    /// Absent in a column written before win-back offers, and when there are none.
    package var winBacks: [WinBackOffer]?

    package init(
        introductory: SubscriptionOffer?, promotional: [SubscriptionOffer], codes: [CodeOffer]?,
        winBacks: [WinBackOffer]?
    ) {
        (self.introductory, self.promotional, self.codes, self.winBacks) = (introductory, promotional, codes, winBacks)
    }

    /// The offers stored in a column; `nil` for a column that is not such JSON.
    package init?(json: String) {
        // Most subscriptions have none: no decoder for them.
        if json == Self.none {
            self.init(introductory: nil, promotional: [], codes: nil, winBacks: nil)
            return
        }
        guard let column = try? JSONDecoder().decode(Self.self, from: Data(json.utf8)) else { return nil }
        self = column
    }

    /// What the catalog stores for a subscription without offers.
    package static let none = #"{"promotional":[]}"#
}
