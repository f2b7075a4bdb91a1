import Foundation

extension FaultInjection {
    /// Runs `body` with the fault VFS to itself: any other caller of `exclusively` in the process
    /// (another test, a campaign) waits until it returns, without holding a thread. The faults
    /// start reset (nothing armed, the power on, counters at zero, loss mode `.loseAll`) and end
    /// with the power on and nothing armed.
    ///
    /// Within `body`, and in child tasks and `Task { }`s started there, calling `exclusively`
    /// again does not wait: they share the holder's turn, so they must end before `body` does.
    /// A detached task started in `body` is another caller: if `body` waits for it while it
    /// calls `exclusively`, neither ever ends.
    public static func exclusively<T>(_ body: () async throws -> T) async rethrows -> T {
        if holdsGate { return try await body() }
        await FaultGate.shared.acquire()
        do {
            let value = try await $holdsGate.withValue(true) {
                reset()
                setLossMode(.loseAll)
                defer {
                    powerOn()
                    disarm()
                }
                return try await body()
            }
            await FaultGate.shared.release()
            return value
        } catch {
            await FaultGate.shared.release()
            throw error
        }
    }

    @TaskLocal private static var holdsGate = false
}

/// One holder at a time, the others waiting in line (in the order they came).
private actor FaultGate {
    static let shared = FaultGate()

    private var held = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func acquire() async {
        guard held else {
            held = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    func release() {
        if waiters.isEmpty { held = false } else { waiters.removeFirst().resume() }
    }
}

#if canImport(Testing)
public import Testing

/// `@Test(.faultInjection)`, or `@Suite(.faultInjection)` for each test of a suite: every such
/// test runs with the fault VFS to itself (`FaultInjection.exclusively`) and starts with the
/// faults reset, so tests that arm faults need not be serialized by hand, whatever suite or
/// target they are in.
public struct FaultInjectionTrait: TestTrait, SuiteTrait, TestScoping {
    /// On a suite, the trait applies to each of its tests.
    public var isRecursive: Bool { true }

    /// A scope for each test (each case of a parameterized one), never one around a whole
    /// suite: the tests of a suite take turns.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> FaultInjectionTrait? {
        testCase == nil ? nil : self
    }

    /// Runs the test with the fault VFS to itself.
    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await FaultInjection.exclusively { try await function() }
    }
}

/// The `.faultInjection` trait, for `@Test` and `@Suite`.
extension Trait where Self == FaultInjectionTrait {
    /// The fault VFS to this test (or to each test of this suite) alone while it runs.
    public static var faultInjection: Self { FaultInjectionTrait() }
}
#endif
