import Foundation
import LedgerTestSupport
import Testing

/// What a client's code meets at compile time: snippets that import only OpenStoreKit are
/// type-checked with `swiftc` against the modules this test run was built with.
@Suite(.enabled(if: ClientCompiler.shared != nil, "swiftc or the built modules are not found beside the test binary"))
struct ClientCompileTests {
    @Test func theCompilerSeesOpenStoreKitAsAClientDoes() async throws {
        let compiler = try #require(ClientCompiler.shared)
        #expect(
            try await compiler.errors(
                """
                func listen() async {
                    for await intent in PurchaseIntent.intents { _ = try? await intent.product.purchase() }
                }
                """) == [])
        #expect(try await compiler.errors("let x: Int = PurchaseIntent.noSuchMember").count == 1, "an error is seen")
    }

    /// The Advanced Commerce API is refused at compile time, with the reason.
    @Test func advancedCommerceIsRefusedAtCompileTimeSayingWhy() async throws {
        let compiler = try #require(ClientCompiler.shared)
        let product = try await compiler.errors(
            """
            func buy() async throws {
                let product = try await AdvancedCommerceProduct(id: "com.example.generic")
                _ = product
            }
            """)
        #expect(product.count >= 1)
        #expect(
            product.allSatisfy {
                $0.contains(
                    "'AdvancedCommerceProduct' is unavailable: OpenStoreKit does not simulate the Advanced Commerce API"
                )
            }, "\(product)")
        let info = try await compiler.errors(
            "func read(_ transaction: Transaction) -> Bool { transaction.advancedCommerceInfo != nil }")
        #expect(info.count >= 1)
        #expect(
            info.allSatisfy { $0.contains("is unavailable: OpenStoreKit does not simulate the Advanced Commerce API") },
            "\(info)")
    }
}

/// Type-checks Swift source as a client of OpenStoreKit: `swiftc -typecheck` with this build's
/// modules (beside the test binary) and the C modules they need.
struct ClientCompiler: Sendable {
    let swiftc: String
    let build: String

    /// `nil` when `swiftc` or the built `OpenStoreKit` module is not found.
    static let shared: ClientCompiler? = {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = binary.deletingLastPathComponent()
        // On Linux the binary is `<build>/<package>PackageTests.xctest`; on a Mac, inside the bundle.
        for _ in 0..<4
        where !FileManager.default.fileExists(atPath: directory.path + "/Modules/OpenStoreKit.swiftmodule") {
            directory = directory.deletingLastPathComponent()
        }
        guard FileManager.default.fileExists(atPath: directory.path + "/Modules/OpenStoreKit.swiftmodule") else {
            return nil
        }
        guard let swiftc = swiftCompiler else { return nil }
        return ClientCompiler(swiftc: swiftc, build: directory.path)
    }()

    /// The compiler's error lines for `source`, with `import OpenStoreKit` before it (the
    /// compiler waited for on a thread of its own, holding none of Swift's cooperative threads).
    func errors(_ source: String) async throws -> [String] {
        try await onItsOwnThread { try typeCheck(source) }
    }

    private func typeCheck(_ source: String) throws -> [String] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("client-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("Client.swift")
        try Data(("import OpenStoreKit\n" + source + "\n").utf8).write(to: file)
        var arguments = ["-typecheck", "-I", build + "/Modules", file.path]
        // The C modules below OpenStoreKit's dependencies, found by their module maps.
        let maps = ["CLedgerSQLite", "CLedgerFaultVFS", "CLedgerBaseline"].map {
            "\(build)/\($0).build/module.modulemap"
        }
        let checkouts = URL(fileURLWithPath: build).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("checkouts/GRDB.swift/Sources/GRDBSQLite/module.modulemap").path
        for map in maps + [checkouts] where FileManager.default.fileExists(atPath: map) {
            arguments += ["-Xcc", "-fmodule-map-file=" + map]
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: swiftc)
        process.arguments = arguments
        let output = Pipe()
        process.standardError = output
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text.split(separator: "\n").map(String.init).filter {
            $0.contains("error:") && $0.contains("Client.swift")
        }
    }
}
