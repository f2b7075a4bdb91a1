import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import Testing

@testable import OpenStoreKit
@testable import OpenStoreKitTest

@Suite struct StoreLocationTests {
    @Test func theDefaultLedgerIsNamedByTheEnvironmentElseUnderTheDataHome() async throws {
        try await withTemporaryDirectory { directory in
            #expect(
                try StoreContext.defaultLedgerPath(environment: ["OPENSTOREKIT_LEDGER": directory + "/app.ledger"])
                    == directory + "/app.ledger")
            let process = ProcessInfo.processInfo.processName
            let underXDG = try StoreContext.defaultLedgerPath(environment: [
                "XDG_DATA_HOME": directory + "/data", "HOME": "/nonexistent",
            ])
            #expect(underXDG == directory + "/data/OpenStoreKit/\(process).ledger")
            let attributes = try FileManager.default.attributesOfItem(atPath: directory + "/data/OpenStoreKit")
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o700)
            let underHome = try StoreContext.defaultLedgerPath(environment: ["HOME": directory + "/home"])
            #expect(underHome == directory + "/home/.local/share/OpenStoreKit/\(process).ledger")
        }
    }

    @Test func aTestProcessNeverReachesTheSharedDefaultLedger() async throws {
        try await withTemporaryDirectory { directory in
            let home = ["HOME": directory + "/home"]
            // `swift test` runs a test bundle: a call outside every test session's store gets a
            // temporary store, not ~/.local/share/OpenStoreKit, shared across runs.
            #expect(StoreContext.isTestProcess)
            #expect(try StoreContext.defaultStore(environment: home) == .temporary)
            #expect(try StoreContext.defaultStore(environment: home, inTestProcess: true) == .temporary)
            #expect(!FileManager.default.fileExists(atPath: directory + "/home/.local/share/OpenStoreKit"))
            // A file named explicitly is used in tests too; an app uses the data home.
            let named = ["OPENSTOREKIT_LEDGER": directory + "/app.ledger"]
            #expect(
                try StoreContext.defaultStore(environment: named, inTestProcess: true)
                    == .file(directory + "/app.ledger"))
            let app = try StoreContext.defaultStore(environment: home, inTestProcess: false)
            #expect(
                app
                    == .file(
                        directory + "/home/.local/share/OpenStoreKit/\(ProcessInfo.processInfo.processName).ledger"))
        }
    }

    @Test func aDetachedTasksStoreKitCallReachesATemporaryStore() async throws {
        let session = try SKTestSession(
            contentsOf: URL(fileURLWithPath: Repository.fixture("v3.0-garden-shop.storekit")), scope: .taskLocal)
        let escaped = try await session.withTaskLocalStore {
            // A detached task does not inherit the session's store.
            try await Task.detached { try StoreContext.current().ledger.path }.value
        }
        #expect(escaped != session.ledgerPath)
        #expect(escaped.hasPrefix(FileManager.default.temporaryDirectory.path), "\(escaped)")
        #expect(!escaped.contains("/.local/share/"))
    }

    @Test func aSessionsDirectoryGoesWithItOrAtTheProcessExit() throws {
        let fixture = URL(fileURLWithPath: Repository.fixture("v3.0-garden-shop.storekit"))
        var session: SKTestSession? = try SKTestSession(contentsOf: fixture, scope: .taskLocal)
        let directory = (session!.ledgerPath as NSString).deletingLastPathComponent
        // A session bound to the process is never released: the exit removes its directory.
        #expect(ExitCleanup.removes(directory))
        #expect(FileManager.default.fileExists(atPath: directory))
        session = nil
        #expect(!FileManager.default.fileExists(atPath: directory))
        #expect(!ExitCleanup.removes(directory), "a removed directory leaves the exit's list")
    }

    @Test func aConfigurationFileIsFoundByNameOnTheConfigurationPath() throws {
        let fixtures = (Repository.fixture("x") as NSString).deletingLastPathComponent
        let environment = ["OPENSTOREKIT_CONFIGURATION_PATH": "/nonexistent:" + fixtures]
        for name in ["v3.0-garden-shop", "v3.0-garden-shop.storekit"] {
            #expect(
                try SKTestSession.locateConfiguration(named: name, environment: environment).path
                    == fixtures + "/v3.0-garden-shop.storekit")
        }
        #expect(
            throws: SKTestSessionError.configurationFileNotFound(
                name: "Missing.storekit",
                searched: ["main bundle", "/nonexistent", fixtures, FileManager.default.currentDirectoryPath])
        ) { try SKTestSession.locateConfiguration(named: "Missing", environment: environment) }
    }

    @Test func aSessionOfAFileThatIsNotAConfigurationIsRefused() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/Broken.storekit"
            try Data("{ not json".utf8).write(to: URL(fileURLWithPath: path))
            let error = #expect(throws: (any Error).self) {
                try SKTestSession(contentsOf: URL(fileURLWithPath: path), scope: .taskLocal)
            }
            #expect(
                error?.localizedDescription.hasPrefix(path + ": malformed file: not valid JSON or property list")
                    == true, "\(String(describing: error))")
        }
    }
}
