import Foundation
import LedgerEngine
import LedgerTestSupport
import Testing

/// docs/DESIGN.md's diagrams say what the code does: its module graph is the `import`
/// lines of Sources/, its state diagram is `TransactionRules`.
@Suite struct DesignDocumentTests {
    static let document = Repository.root + "/docs/DESIGN.md"

    /// The lines of the document's `mermaid` block that starts with `kind`.
    static func diagram(_ kind: String) throws -> [String] {
        let text = try String(contentsOfFile: document, encoding: .utf8)
        let blocks = text.components(separatedBy: "```mermaid\n").dropFirst().map {
            $0.components(separatedBy: "```")[0]
        }
        let block = try #require(blocks.first { $0.hasPrefix(kind) }, "no \(kind) diagram in docs/DESIGN.md")
        return block.split(separator: "\n").dropFirst().map { $0.trimmingCharacters(in: .whitespaces) }.filter {
            !$0.isEmpty
        }
    }

    /// "A --> B" for each module A of Sources/ that imports B, another module of Sources/.
    static func importEdges() throws -> Set<String> {
        let sources = Repository.root + "/Sources"
        let modules = Set(try FileManager.default.contentsOfDirectory(atPath: sources))
        var edges = Set<String>()
        for module in modules {
            guard let files = FileManager.default.enumerator(atPath: sources + "/" + module) else { continue }
            for case let file as String in files where file.hasSuffix(".swift") {
                for line in try String(contentsOfFile: "\(sources)/\(module)/\(file)", encoding: .utf8).split(
                    separator: "\n")
                {
                    let words = line.split(separator: " ")
                    guard let index = words.firstIndex(of: "import"), words.count == index + 1 + 1,
                        words[..<index].allSatisfy({ ["@_exported", "public", "package", "internal"].contains($0) })
                    else { continue }
                    let imported = String(words[index + 1])
                    if modules.contains(imported), imported != module { edges.insert("\(module) --> \(imported)") }
                }
            }
        }
        return edges
    }

    @Test func theModuleDiagramIsTheImportGraph() throws {
        let drawn = try Self.diagram("flowchart")
        #expect(Set(drawn) == (try Self.importEdges()))
        #expect(drawn.count == Set(drawn).count, "an arrow drawn twice")
    }

    @Test func theStateDiagramIsTransactionRules() throws {
        let drawn = Set(try Self.diagram("stateDiagram"))
        let rules = Set(TransactionRules.initialStates.map { "[*] --> \($0.rawValue)" })
            .union(TransactionRules.transitions.map { "\($0.from.rawValue) --> \($0.to.rawValue)" })
        #expect(drawn == rules)
    }

    /// No module holds more than a third of the Swift in Sources/.
    @Test func noModuleHoldsMoreThanAThirdOfTheCode() throws {
        let sources = Repository.root + "/Sources"
        var lines: [String: Int] = [:]
        for module in try FileManager.default.contentsOfDirectory(atPath: sources) {
            guard let files = FileManager.default.enumerator(atPath: sources + "/" + module) else { continue }
            for case let file as String in files where file.hasSuffix(".swift") {
                lines[module, default: 0] += try String(contentsOfFile: "\(sources)/\(module)/\(file)", encoding: .utf8)
                    .split(separator: "\n", omittingEmptySubsequences: false).count
            }
        }
        let total = lines.values.reduce(0, +)
        for (module, count) in lines {
            #expect(count * 3 <= total, "\(module): \(count) of \(total) lines")
        }
    }

    /// Every `@unchecked Sendable` says, in the comment just above it, why it is safe
    /// ("Sendable by hand: ..."): the compiler cannot check it, a reader must.
    @Test func everyUncheckedSendableSaysWhyItIsSafe() throws {
        for folder in ["Sources", "Tests"] {
            let root = Repository.root + "/" + folder
            guard let files = FileManager.default.enumerator(atPath: root) else { continue }
            for case let file as String in files where file.hasSuffix(".swift") {
                let lines = try String(contentsOfFile: root + "/" + file, encoding: .utf8).split(
                    separator: "\n", omittingEmptySubsequences: false)
                for (index, line) in lines.enumerated()
                where line.contains("@unchecked Sendable") && !line.contains("\"")
                    && !line.trimmingCharacters(in: .whitespaces).hasPrefix("//")
                {
                    let comment = lines[..<index].reversed().prefix {
                        $0.trimmingCharacters(in: .whitespaces).hasPrefix("//")
                    }
                    #expect(
                        comment.joined().contains("Sendable by hand"),
                        "\(folder)/\(file):\(index + 1) does not say why it is Sendable")
                }
            }
        }
    }
}
