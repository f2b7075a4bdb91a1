public import Foundation

/// Runs the built `ledger` executable, as a user would.
public struct LedgerProcess {
    public struct Result: Sendable {
        public let status: Int32
        public let stdout: String
        public let stderr: String

        /// stdout parsed as one JSON object.
        public func json() throws -> [String: Any] {
            guard let object = try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any] else {
                throw LedgerProcessError(description: "stdout is not a JSON object: \(stdout)")
            }
            return object
        }
    }

    public struct LedgerProcessError: Error, CustomStringConvertible {
        public let description: String

        public init(description: String) {
            self.description = description
        }
    }

    /// The built executables the tests run.
    public enum Program: String, Sendable {
        /// The shipped tool.
        case ledger
        /// The lab: `bench`, the crash campaigns, `torture`, and `ledger ...` through the fault VFS.
        case lab = "ledger-lab"

        /// The executable built next to the test bundle.
        public var path: String {
            var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            for _ in 0..<4 {
                let candidate = directory.appendingPathComponent(rawValue).path
                if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
                directory.deleteLastPathComponent()
            }
            return Repository.root + "/.build/debug/" + rawValue
        }
    }

    /// The `ledger` built next to the test bundle.
    public static var executable: String { Program.ledger.path }

    /// Runs `ledger arguments...` (or the lab's) to completion.
    @discardableResult
    public static func run(
        _ arguments: [String], environment: [String: String] = [:], currentDirectory: String? = nil,
        program: Program = .ledger
    ) throws -> Result {
        let process = start(arguments, environment: environment, currentDirectory: currentDirectory, program: program)
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read both pipes while the process runs, so that neither fills up and blocks it.
        let stdoutData = ReadAll(out.fileHandleForReading)
        let stderrData = err.fileHandleForReading.readDataToEndOfFile()
        let stdout = stdoutData.wait()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderrData, as: UTF8.self))
    }

    /// Sends SIGKILL to a started `process` after `delay`, from a dispatch timer rather than a
    /// Swift task: tests that wait for child processes can hold every one of Swift's cooperative
    /// threads (two on a two-core machine), and a kill that waited for one of them let a dozen
    /// CPU-bound workloads run on for minutes and stall the whole test run.
    public static func kill(_ process: Process, after delay: Duration) {
        let pid = process.processIdentifier
        let milliseconds = Int(delay.components.seconds * 1_000 + delay.components.attoseconds / 1_000_000_000_000_000)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) {
            if process.isRunning { Foundation.kill(pid, SIGKILL) }
        }
    }

    /// A configured, not yet started `ledger` (or lab) process.
    public static func start(
        _ arguments: [String], environment: [String: String] = [:], currentDirectory: String? = nil,
        program: Program = .ledger
    ) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program.path)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["LEDGER_DATABASE"] = nil
        for (key, value) in environment { env[key] = value }
        process.environment = env
        if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
        process.standardInput = FileHandle.nullDevice
        return process
    }
}

/// Reads a pipe to its end on another thread.
///
/// Sendable by hand: the reading thread writes `data` before it signals `done`; the reader waits
/// for `done` before it reads.
private final class ReadAll: @unchecked Sendable {
    // Written once by the reading thread before `done` is signalled, read after: safe.
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    func wait() -> Data {
        done.wait()
        return data
    }
}

/// Runs `work`, which blocks (it waits for child processes), on a thread of its own: it then
/// holds none of Swift's cooperative threads, of which a two-core machine has two, so that the
/// other tests running in parallel go on meanwhile.
public func onItsOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
    }
}
