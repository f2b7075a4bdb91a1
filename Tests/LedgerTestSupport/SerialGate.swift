/// Lets one test at a time hold something the whole test process shares (the process's
/// OpenStoreKit store), across suites and test targets, which Swift Testing runs in parallel.
public actor SerialGate {
    public static let processStore = SerialGate()

    private var held = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    public func acquire() async {
        guard held else {
            held = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    public func release() {
        if waiters.isEmpty { held = false } else { waiters.removeFirst().resume() }
    }
}
