import ArgumentParser
import Foundation
import StoreLedger

/// `ledger apps`: the store's apps, each a bundle identifier with its own settings, products,
/// transactions and notifications.
struct AppsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps",
        abstract: "Add and list the store's apps: each has its own products, settings and notifications.",
        discussion: """
            A new store has one app, com.example.app (its bundle identifier is the bundleID setting). \
            With several, the commands that act in one take --app BUNDLE_ID (before or after the \
            command), `store set` and `products import` included; `ledger serve` answers each app's \
            server by its token's bundle.
            """,
        subcommands: [Add.self, List.self])

    /// An app as the subcommands print it.
    struct AppView: Encodable {
        let bundleID: String
        let environment: String
        /// The app's Apple ID; `null` until set.
        let appAppleID: Int64?

        init(_ app: App) {
            (bundleID, environment, appAppleID) = (app.bundleID, app.environment.rawValue, app.appAppleID)
        }

        enum CodingKeys: String, CodingKey { case bundleID, environment, appAppleID }

        /// Every field, absent ones as `null`, so that a JSON reader sees one shape.
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(bundleID, forKey: .bundleID)
            try container.encode(environment, forKey: .environment)
            try container.encode(appAppleID, forKey: .appAppleID)
        }

        var line: String {
            TerminalText.escaped(bundleID) + "  environment " + environment
                + (appAppleID.map { "  appAppleID \($0)" } ?? "")
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add an app (the store file is created when there is none).",
            discussion: """
                Its other settings (appVersion, notificationURL, ...) are set with \
                `ledger store set KEY VALUE --app BUNDLE_ID`, its products imported with \
                `ledger products import FILE --app BUNDLE_ID`.
                """)

        @OptionGroup var options: GlobalOptions

        @Argument(help: "The bundle identifier: 1 to 155 letters, digits, hyphens and periods.")
        var bundleID: String

        @Option(help: "The app's Apple ID (appAppleId), which Production needs: a positive integer.")
        var appAppleID: Int64?

        @Option(help: "Xcode (default), Sandbox or Production: what its signed values name.")
        var environment: SigningEnvironment = .xcode

        func validate() throws {
            if let appAppleID, appAppleID <= 0 { throw ValidationError("--app-apple-id takes a positive integer") }
        }

        func run() async throws {
            // The store's, whatever --app names (the app being added may be the one).
            var options = options
            options.app = nil
            let added = try options.openLedger(mode: .createIfMissing).addApp(
                App(bundleID: bundleID, environment: environment, appAppleID: appAppleID))
            try options.output.emit(AppView(added)) { "added app " + AppView(added).line }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the apps in the order they were added (at most \(App.maximumCount)).")

        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let page = try options.openLedgerForReading().apps().map(AppView.init)
            try options.output.emit(["apps": page]) { page.map(\.line).joined(separator: "\n") }
        }
    }
}
