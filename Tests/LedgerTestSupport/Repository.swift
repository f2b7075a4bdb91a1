public import Foundation

/// The repository's folders, found from this source file.
public enum Repository {
    public static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// `Tests/Fixtures`: the project's own fixtures (StoreKit configuration files of every format
    /// version, product identifier lists), written for these tests. See its README.md.
    public static let fixtures = root + "/Tests/Fixtures"

    /// The path of one of the project's own fixtures.
    public static func fixture(_ name: String) -> String {
        fixtures + "/" + name
    }

    /// The names (not paths) of the project's own fixtures with this extension, sorted.
    public static func fixtureNames(withExtension ext: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: fixtures).filter { $0.hasSuffix("." + ext) }.sorted()
    }

    /// `../shared/fixtures/real-world`, beside the project's root: files copied unchanged from
    /// other projects. The folder exists only beside CI; tests over it are optional.
    public static let realWorldFixtures = URL(fileURLWithPath: root)
        .deletingLastPathComponent().appendingPathComponent("shared/fixtures/real-world").path

    public static func realWorldFixture(_ name: String) -> String {
        realWorldFixtures + "/" + name
    }

    /// The paths of the real-world files with this extension, sorted; `nil` when the folder is absent.
    public static func realWorldCorpus(withExtension ext: String) -> [String]? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: realWorldFixtures) else { return nil }
        return names.filter { $0.hasSuffix("." + ext) }.sorted().map(realWorldFixture)
    }

    /// Whether `realWorldFixtures` is there (a folder that can be listed, so that
    /// `realWorldCorpus(withExtension:)` is not `nil`): the condition of the tests over it.
    public static let realWorldCorpusIsPresent =
        (try? FileManager.default.contentsOfDirectory(atPath: realWorldFixtures)) != nil
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
public func runPython(_ script: String, arguments: [String] = []) throws -> Int32 {
    let python = Process()
    python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    python.arguments = ["python3", "-c", script] + arguments
    try python.run()
    python.waitUntilExit()
    return python.terminationStatus
}

/// Runs one of the repository's `tools/` scripts with `--check`; returns its exit status.
public func checkGeneratedFile(tool: String) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", Repository.root + "/tools/" + tool, "--check"]
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
}
