import Foundation

/// An outside program some tests need, looked for once per test process (a test's
/// `.enabled(if:)` condition and its body read the same answer).
public protocol OutsideTool {
    /// Its path, or `nil` with the reason; `required` when the environment variable that names
    /// it is set (`.ci/run` sets it: a test must then fail rather than skip).
    static var located: (path: String?, reason: String, required: Bool) { get }
}

extension OutsideTool {
    /// The program's path, or `nil` when it is missing or unusable.
    public static var path: String? { located.path }

    /// Whether a test that needs it should run: it is there, or it is required (the test then
    /// fails with `unavailableReason` instead of being skipped).
    public static var shouldRun: Bool { located.path != nil || located.required }

    /// Why `path` is `nil`; empty when it is not.
    public static var unavailableReason: String { located.reason }
}

/// The Python that has Apple's App Store Server Library (`app-store-server-library`) and
/// `jwcrypto` (a generic JOSE library), outside verifiers for the tests: `STORELEDGER_PYTHON` (which `.ci/run` sets, so that tests
/// using it must run there), else `.build/python/bin/python3` when it exists.
public enum ApplePython: OutsideTool {
    public static let located = locate()

    /// The interpreter's path, or `nil` with the reason; `required` when `STORELEDGER_PYTHON`
    /// is set (a test must then fail rather than skip).
    public static func locate() -> (path: String?, reason: String, required: Bool) {
        let configured = ProcessInfo.processInfo.environment["STORELEDGER_PYTHON"].flatMap { $0.isEmpty ? nil : $0 }
        let path = configured ?? Repository.root + "/.build/python/bin/python3"
        guard FileManager.default.isExecutableFile(atPath: path),
            (try? runProcess(path, ["-c", "import appstoreserverlibrary.promotional_offer, jwcrypto"]).status) == 0
        else {
            return (
                nil, "no Python with app-store-server-library and jwcrypto at \(path) (`.ci/run` installs them)",
                configured != nil
            )
        }
        return (path, "", configured != nil)
    }
}

/// Runs `path` with `arguments`; returns its exit status and standard output (standard error is
/// dropped).
public func runProcess(_ path: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: output, as: UTF8.self))
}

/// The `sqlite3` shell, for the tests that tamper with a ledger as a person would.
public enum SQLiteShell: OutsideTool {
    public static let located = locateSystemProgram("sqlite3", called: "sqlite3 shell", variable: "STORELEDGER_SQLITE3")
}

/// The `openssl` command, which verifies app receipts (`openssl cms -verify`) as a server does.
public enum OpenSSLTool: OutsideTool {
    public static let located = locateSystemProgram("openssl", called: "openssl", variable: "STORELEDGER_OPENSSL")
}

/// A program `.ci/run` installs: the path the environment variable `variable` names (a test must
/// then fail rather than skip: `required`), else the first of the system's directories that has
/// `program`; `nil` with the reason when there is none.
func locateSystemProgram(
    _ program: String, called name: String, variable: String
) -> (path: String?, reason: String, required: Bool) {
    let configured = ProcessInfo.processInfo.environment[variable].flatMap { $0.isEmpty ? nil : $0 }
    let candidates = configured.map { [$0] } ?? ["/usr/bin", "/usr/local/bin", "/bin"].map { $0 + "/" + program }
    guard let path = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
        return (nil, "no \(name) at \(candidates.joined(separator: ", ")) (`.ci/run` installs it)", configured != nil)
    }
    return (path, "", configured != nil)
}

/// The Swift compiler on `PATH` (the one building this package), for tests that compile code as
/// a client of the package would; `nil` when `PATH` has none.
public let swiftCompiler: String? = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
    .map { $0 + "/swiftc" }.first { FileManager.default.isExecutableFile(atPath: $0) }
