import Foundation

/// A fresh directory for one test, removed when the test's closure returns.
@discardableResult
public func withTemporaryDirectory<T>(_ body: (String) async throws -> T) async throws -> T {
    let path = NSTemporaryDirectory() + "storeledger-test-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try await body(path)
}

/// The repository's folders, found from this source file.
public enum Repository {
    public static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// `../shared/fixtures/real-world`, beside the project's root.
    public static let realWorldFixtures = URL(fileURLWithPath: root)
        .deletingLastPathComponent().appendingPathComponent("shared/fixtures/real-world").path

    public static func fixture(_ name: String) -> String {
        realWorldFixtures + "/" + name
    }

    public static func fixtures(withExtension ext: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: realWorldFixtures)
            .filter { $0.hasSuffix("." + ext) }.sorted().map(fixture)
    }
}

/// Reads a whole file, for "the file was left untouched" checks.
public func fileBytes(_ path: String) -> Data? {
    FileManager.default.contents(atPath: path)
}

public func write(_ text: String, to path: String) throws {
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
}

/// Runs a Python script (Python's own sqlite3 module changes databases behind StoreLedger's
/// back); returns its exit status.
@discardableResult
public func runPython(_ script: String) throws -> Int32 {
    let python = Process()
    python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    python.arguments = ["python3", "-c", script]
    try python.run()
    python.waitUntilExit()
    return python.terminationStatus
}
