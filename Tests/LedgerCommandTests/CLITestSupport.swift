import Foundation
import LedgerTestSupport
import LedgerTesting

/// A temporary folder with a ledger path and the sample catalog file, for one CLI test.
struct CLIWorkspace {
    let directory: String
    var database: String { directory + "/ledger.sqlite" }
    var catalog: String { directory + "/Sample.storekit" }

    /// `ledger ARGS --database <this workspace's ledger>`.
    @discardableResult
    func ledger(_ arguments: String..., environment: [String: String] = [:]) throws -> LedgerProcess.Result {
        try ledger(arguments: arguments, environment: environment)
    }

    @discardableResult
    func ledger(arguments: [String], environment: [String: String] = [:]) throws -> LedgerProcess.Result {
        try LedgerProcess.run(
            arguments + ["--database", database], environment: environment, currentDirectory: directory)
    }

    /// `ledger ARGS --json --database ...`, expecting exit 0 and one JSON object.
    func json(_ arguments: String...) throws -> [String: Any] {
        try json(arguments: arguments)
    }

    func json(arguments: [String]) throws -> [String: Any] {
        let result = try LedgerProcess.run(arguments + ["--json", "--database", database], currentDirectory: directory)
        guard result.status == 0 else {
            throw LedgerProcess.LedgerProcessError(description: "exit \(result.status): \(result.stderr)")
        }
        return try result.json()
    }

    /// A workspace whose ledger holds the sample catalog.
    static func withCatalog(_ body: (CLIWorkspace) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            let workspace = CLIWorkspace(directory: directory)
            _ = try SampleCatalog.write(in: directory)
            let result = try workspace.ledger("products", "import", workspace.catalog)
            guard result.status == 0 else { throw LedgerProcess.LedgerProcessError(description: result.stderr) }
            try await body(workspace)
        }
    }

    static func empty(_ body: (CLIWorkspace) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in try await body(CLIWorkspace(directory: directory)) }
    }
}
