public import LedgerTesting

/// The tests' seeded generator: `LedgerTesting`'s SplitMix64, so that a failing seed replays
/// exactly, with a pick among items.
public typealias SplitMix = SplitMix64

extension SplitMix64 {
    /// One of `items`, drawn from the generator.
    public mutating func pick<T>(_ items: [T]) -> T {
        items[Int(next() % UInt64(items.count))]
    }
}
