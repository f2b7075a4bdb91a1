/// The order id of a purchase: what the App Store's receipt email shows the customer, and what
/// Look Up Order ID takes. Every charged transaction (a purchase or a renewal, not a restored
/// copy) has one, derived from its id: `M` and base-36 digits of the id scrambled by a fixed
/// odd multiplier (a bijection of 64-bit integers), so that consecutive purchases do not read
/// as a counter, and an order id leads back to its transaction without a table.
public enum OrderID {
    /// The order id of transaction `id`.
    public static func of(_ id: UInt64) -> String {
        "M" + String(id &* multiplier, radix: 36, uppercase: true)
    }

    /// The transaction an order id names; `nil` for text that is not an order id as `of`
    /// spells them.
    public static func transactionID(of orderID: String) -> UInt64? {
        guard orderID.utf8.count <= 14, orderID.first == "M",
            let scrambled = UInt64(orderID.dropFirst(), radix: 36)
        else { return nil }
        let id = scrambled &* inverse
        return of(id) == orderID ? id : nil
    }

    /// Odd, so invertible modulo 2^64.
    private static let multiplier: UInt64 = 0x9E37_79B9_7F4A_7C15
    /// Its inverse modulo 2^64, by Newton's iteration (each step doubles the correct low bits).
    private static let inverse: UInt64 = {
        var x = multiplier
        for _ in 0..<6 { x = x &* (2 &- multiplier &* x) }
        return x
    }()
}
