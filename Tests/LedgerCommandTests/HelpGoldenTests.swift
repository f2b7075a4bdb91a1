import ArgumentParser
import Foundation
import LedgerCommand
import LedgerLab
import LedgerTestSupport
import LedgerTesting
import Testing

/// Every command's help text, as `ledger help COMMAND` (and `ledger-lab help COMMAND`) prints
/// it, against a reviewed copy in HelpGoldens/ (one file per command path). After changing a help text on purpose, run the
/// tests with `UPDATE_HELP_GOLDENS=1` and review the diff.
@Suite struct HelpGoldenTests {
    static let folder = Repository.root + "/Tests/LedgerCommandTests/HelpGoldens"

    /// Every command path of the tool: [], ["products"], ["products", "import"], ...
    static func commandPaths(
        _ command: any ParsableCommand.Type = LedgerRootCommand.self, prefix: [String] = []
    ) -> [[String]] {
        [prefix]
            + command.configuration.subcommands.flatMap { sub in
                commandPaths(sub, prefix: prefix + [sub._commandName])
            }
    }

    /// About sixty processes, one after another: run on a thread of their own.
    @Test func everyCommandsHelpMatchesItsGolden() async throws {
        let commands =
            Self.commandPaths().map { (LedgerProcess.Program.ledger, $0) }
            + Self.commandPaths(LabRootCommand.self).map { (LedgerProcess.Program.lab, $0) }
        let helps = try await onItsOwnThread {
            try commands.map { program, path in
                (
                    program, path,
                    try LedgerProcess.run(["help"] + path, environment: ["COLUMNS": "100"], program: program)
                )
            }
        }
        let update = ProcessInfo.processInfo.environment["UPDATE_HELP_GOLDENS"] == "1"
        var expectedFiles: Set<String> = []
        for (program, path, result) in helps {
            let name = ([program.rawValue] + path).joined(separator: "-") + ".txt"
            expectedFiles.insert(name)
            #expect(result.status == 0, "\(name): \(result.stderr)")
            #expect(!result.stdout.contains("\\\n"), "\(name): a literal backslash at a line's end")
            let golden = Self.folder + "/" + name
            if update {
                try write(result.stdout, to: golden)
                continue
            }
            let stored = try? String(contentsOfFile: golden, encoding: .utf8)
            #expect(stored == result.stdout, "\(name) differs: run with UPDATE_HELP_GOLDENS=1 and review")
        }
        let present = Set(try FileManager.default.contentsOfDirectory(atPath: Self.folder))
        #expect(present == expectedFiles, "goldens without a command: \(present.subtracting(expectedFiles))")
    }
}
