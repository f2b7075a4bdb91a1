import Foundation
import LedgerTestSupport
import LedgerTesting
import Testing

/// The shell examples of the README and the guides (docs/*.md), run as a reader would run them,
/// so that no claim about the tool goes stale. Each document runs in a fresh empty folder (a
/// document that imports `Products.storekit` writes it with `ledger products sample`, as a
/// reader would) with `ledger` first on PATH, its ```sh blocks in
/// order, each with `bash -e -o pipefail`: the folder and its `ledger.sqlite` carry over from
/// block to block. `<!-- shell: skip -->` before a block leaves it out (it needs `swift`, a
/// build or tools beyond the shell); `<!-- shell: exits N -->` expects it to end with status N.
@Suite struct DocumentationShellTests {
    struct Block: CustomStringConvertible {
        let line: Int
        let script: String
        let expectedStatus: Int32?  // nil: not run
        var description: String { "line \(line)" }
    }

    /// The documents whose shell examples are run: the README and every guide.
    static let documents: [String] = {
        let guides = (try? FileManager.default.contentsOfDirectory(atPath: Repository.root + "/docs")) ?? []
        return ["README.md"] + guides.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }()

    /// The ```sh blocks of a document, with what each is expected to do.
    static func blocks(of text: String) throws -> [Block] {
        let pattern = try NSRegularExpression(
            pattern: #"(?:<!-- shell: ([^>]*?) -->\n)?```sh\n(.*?)```"#, options: [.dotMatchesLineSeparators])
        let ns = text as NSString
        return try pattern.matches(in: text, range: NSRange(location: 0, length: ns.length)).map { match in
            let marker = match.range(at: 1).location == NSNotFound ? nil : ns.substring(with: match.range(at: 1))
            let line = ns.substring(to: match.range.location).filter { $0 == "\n" }.count + 1
            let expected: Int32?
            switch marker {
            case nil: expected = 0
            case "skip": expected = nil
            case let marker? where marker.hasPrefix("exits "):
                guard let status = Int32(marker.dropFirst("exits ".count)) else {
                    throw ShellError(description: "line \(line): bad marker \(marker)")
                }
                expected = status
            case let marker?: throw ShellError(description: "line \(line): unknown marker <!-- shell: \(marker) -->")
            }
            return Block(line: line, script: ns.substring(with: match.range(at: 2)), expectedStatus: expected)
        }
    }

    struct ShellError: Error, CustomStringConvertible {
        let description: String
    }

    @Test(arguments: documents)
    func theShellExamplesRunAsWritten(_ document: String) async throws {
        let text = try String(contentsOfFile: Repository.root + "/" + document, encoding: .utf8)
        let blocks = try Self.blocks(of: text)
        try await withTemporaryDirectory { directory in
            for block in blocks {
                guard let expected = block.expectedStatus else { continue }
                let result = try Self.run(block.script, in: directory)
                #expect(
                    result.status == expected,
                    "\(document):\(block.line) exited \(result.status), not \(expected): \(result.output)")
            }
        }
    }

    @Test func everyShellBlockIsRunOrSaysWhyNot() throws {
        var run = 0
        for document in Self.documents {
            let text = try String(contentsOfFile: Repository.root + "/" + document, encoding: .utf8)
            let blocks = try Self.blocks(of: text)
            run += blocks.filter { $0.expectedStatus != nil }.count
            // Only ```sh is run: a ```bash or ```shell block would silently escape the test.
            for fence in ["```bash\n", "```shell\n", "```console\n"] {
                #expect(
                    !text.contains(fence),
                    "\(document) has a \(fence.dropLast()) block: write ```sh (run) or ```text (a synopsis)")
            }
        }
        #expect(run >= 10, "only \(run) shell blocks are run")
    }

    /// Runs `script` with bash in `directory`, `ledger` first on PATH and no LEDGER_DATABASE.
    static func run(_ script: String, in directory: String) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-e", "-o", "pipefail", "-c", script]
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        var environment = ProcessInfo.processInfo.environment
        environment["LEDGER_DATABASE"] = nil
        let tools = (LedgerProcess.executable as NSString).deletingLastPathComponent
        environment["PATH"] = tools + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data.suffix(4_000), as: UTF8.self))
    }
}

/// What the documentation says stays true, and stays inside the repository.
@Suite struct DocumentationClaimTests {
    /// The repository's own text files: sources, tests, docs, tools, CI.
    static func textFiles() throws -> [String] {
        let root = Repository.root
        var files = ["README.md", "CHANGELOG.md", "Package.swift", ".ci/run"]
        for folder in ["Sources", "Tests", "docs", "tools"] {
            guard let walker = FileManager.default.enumerator(atPath: root + "/" + folder) else { continue }
            while let path = walker.nextObject() as? String {
                let full = root + "/" + folder + "/" + path
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue
                else { continue }
                if [".swift", ".md", ".c", ".h", ".py", ".tsv", ""].contains(where: {
                    path.hasSuffix($0) && ($0 != "" || !path.contains("."))
                }) {
                    files.append(folder + "/" + path)
                }
            }
        }
        return files
    }

    @Test func nothingCitesAFileOutsideTheRepository() throws {
        // Shipped migrations are never edited (their text is the schema's history), nor is
        // their generated copy; this file names the words it looks for. CI's machine has the
        // real-world corpus and the CLI contract check beside the clone: using them is no citation.
        let exempt: Set<String> = [
            "Sources/LedgerEngine/Schema/EmbeddedMigrations.swift",
            "Tests/LedgerCommandTests/DocumentationShellTests.swift",
        ]
        let citation = try NSRegularExpression(
            pattern: #"\bSPEC\b|SPEC\.md|ARCHITECTURE|\.\./shared/(?!fixtures/real-world|contract/)"#)
        for file in try Self.textFiles() where !exempt.contains(file) {
            let text = try String(contentsOfFile: Repository.root + "/" + file, encoding: .utf8)
            let found = citation.matches(in: text, range: NSRange(text.startIndex..., in: text))
            #expect(found.isEmpty, "\(file) cites \(found.map { (text as NSString).substring(with: $0.range) })")
        }
    }

    @Test func noCommentNamesTheRemovedLedgerBench() throws {
        // `ledger bench` became `ledger-lab bench`; the performance history and the changelog
        // quote the old name for the runs made with it.
        let exempt: Set<String> = [
            "docs/PERFORMANCE.md", "CHANGELOG.md", "Tests/LedgerCommandTests/DocumentationShellTests.swift",
        ]
        let stale = try NSRegularExpression(pattern: #"`ledger bench`|ledger bench(?![-\w])"#)
        for file in try Self.textFiles() where !exempt.contains(file) {
            let text = try String(contentsOfFile: Repository.root + "/" + file, encoding: .utf8)
            #expect(
                stale.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) == nil,
                "\(file) names `ledger bench`")
        }
    }

    @Test func theDocumentedTransactionHasEveryFieldTheToolPrints() async throws {
        let guide = try String(contentsOfFile: Repository.root + "/docs/CLI.md", encoding: .utf8)
        let blocks = guide.components(separatedBy: "```json\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        let example = try #require(
            blocks.first { $0.contains("\"originalPurchaseDate\"") }, "docs/CLI.md has no transaction example")
        let documented = try #require(try JSONSerialization.jsonObject(with: Data(example.utf8)) as? [String: Any])
        try await CLIWorkspace.withCatalog { workspace in
            let printed = try workspace.json("purchase", "com.example.level1")
            #expect(
                Set(documented.keys) == Set(printed.keys).subtracting(["replayed", "changesRenewalOf", "version"]),
                "documented but not printed: \(Set(documented.keys).subtracting(printed.keys)); printed but not documented: \(Set(printed.keys).subtracting(documented.keys))"
            )
        }
    }
}

/// The README is a front page, and the guides can be found into.
@Suite struct FrontPageTests {
    @Test func theReadmeIsAFrontPageAndEveryGuideHasAContentsList() throws {
        let readme = try String(contentsOfFile: Repository.root + "/README.md", encoding: .utf8)
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).count
        #expect(lines <= 300, "README.md has \(lines) lines: move the detail to a guide in docs/")
        for document in DocumentationShellTests.documents where document.hasPrefix("docs/") {
            let text = try String(contentsOfFile: Repository.root + "/" + document, encoding: .utf8)
            let head = text.split(separator: "\n").prefix(40)
            #expect(
                head.filter { $0.hasPrefix("- [") && $0.contains("](#") }.count >= 3,
                "\(document) has no table of contents")
            #expect(readme.contains("(" + document + ")"), "the README does not link \(document)")
        }
    }

    @Test func noDocumentTellsUsersToImportThisRepositorysTestHelpers() throws {
        // LedgerTestSupport is this repository's own test target, not a product.
        for document in DocumentationShellTests.documents {
            let text = try String(contentsOfFile: Repository.root + "/" + document, encoding: .utf8)
            #expect(!text.contains("import LedgerTestSupport"), "\(document)")
        }
    }

    @Test func noTestPrintsSkippedAndPasses() throws {
        // A test whose input is missing is skipped by a trait with its reason (`.enabled(if:)`),
        // so the runner reports it as skipped, never as passed.
        for file in try DocumentationClaimTests.textFiles() where file.hasPrefix("Tests/") && file.hasSuffix(".swift") {
            let text = try String(contentsOfFile: Repository.root + "/" + file, encoding: .utf8)
            #expect(!text.contains("print(\"" + "skipped"), "\(file) prints \"skipped\"")  // split: this file passes
        }
    }
}
