import Foundation

extension FaultInjection {
    /// Runs `body` with the fault VFS to itself: any other caller of `exclusively` in the process
    /// (another test, a campaign) waits until it returns, without holding a thread. Within
    /// `body`, calling `exclusively` again does not wait. The faults start reset and end with the
    /// power on and nothing armed.
    public static func exclusively<T>(_ body: () async throws -> T) async rethrows -> T {
        if holdsGate { return try await body() }
        await FaultGate.shared.acquire()
        do {
            let value = try await $holdsGate.withValue(true) {
                reset()
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

/// `@Test(.faultInjection)` or `@Suite(.faultInjection)`: the test (or the whole suite) runs
/// with the fault VFS to itself (`FaultInjection.exclusively`), so tests that arm faults need
/// not be serialized by hand, whatever suite or target they are in.
public struct FaultInjectionTrait: TestTrait, SuiteTrait, TestScoping {
    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await FaultInjection.exclusively { try await function() }
    }
}

/// The `.faultInjection` trait, for `@Test` and `@Suite`.
extension Trait where Self == FaultInjectionTrait {
    /// The fault VFS to this test (or suite) alone while it runs.
    public static var faultInjection: Self { FaultInjectionTrait() }
}
#endif
