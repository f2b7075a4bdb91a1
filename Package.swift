// swift-tools-version: 6.1
// StoreLedger 0.1.0, licensed under the Apache License, Version 2.0 (see LICENSE).
import PackageDescription

/// Swift 7's import rules now, in every Swift target: an import is internal unless it says
/// `public` (no public API can expose GRDB's types), a member is visible only where its module is
/// imported (a client with the same rule never sees GRDB's extension members), and existential
/// types are spelled `any`.
let upcomingFeatures: [SwiftSetting] = [
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "StoreLedger",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "StoreLedger", targets: ["StoreLedger"]),
        .library(name: "LedgerEngine", targets: ["LedgerEngine"]),
        .library(name: "StoreTesting", targets: ["StoreTesting"]),
        .library(name: "LedgerTesting", targets: ["LedgerTesting"]),
        .library(name: "OpenStoreKit", targets: ["OpenStoreKit"]),
        .library(name: "OpenStoreKitTest", targets: ["OpenStoreKitTest"]),
        .library(name: "AppStoreServer", targets: ["AppStoreServer"]),
        .executable(name: "ledger", targets: ["ledger"]),
        .executable(name: "ledger-lab", targets: ["ledger-lab"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // ECDSA P-256 for promotional offer signatures (never hand-rolled crypto).
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        // X.509 certificates for the ledger's signing identity (never hand-rolled ASN.1).
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        // The App Store Server API's HTTP server (`ledger serve`).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // Server Notifications V2 POSTed to the team's server (`ledger serve`).
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // TLS for `ledger serve` and for notifications to `https` URLs (AsyncHTTPClient's too).
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // The event loops Hummingbird and AsyncHTTPClient run on, which `ledger serve` makes
        // Swift's executor.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // HTTP request parts as Hummingbird's pipeline carries them (`ledger serve`'s body deadline).
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // `swift package generate-documentation` (the DocC catalogs in Sources/*/*.docc).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // The values and their rules: transactions, products, states, periods, storefronts, the
        // store's settings and the errors they are refused with. No storage.
        .target(name: "LedgerModel", dependencies: [.product(name: "Crypto", package: "swift-crypto")]),
        // Signing as the App Store signs: the test identity's certificates, JWS, the payloads of
        // signed transactions and renewal info. No storage.
        .target(
            name: "LedgerSigning",
            dependencies: [
                "LedgerModel",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        // The storage engine any ledger needs: the file, the schema and its migrations, the
        // connections, the commit group, the writer, the rows and their queries, the hash chain
        // and the signing of its heads. It knows no rule of the App Store.
        .target(
            name: "LedgerEngine",
            dependencies: [
                "LedgerModel",
                "LedgerSigning",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API, for the few statements the ledger runs most (FastStatement).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                "CLedgerSQLite",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        // The SQLite calls Swift cannot make (variadic ones).
        .target(name: "CLedgerSQLite", linkerSettings: [.linkedLibrary("sqlite3")]),
        // The simulated App Store's rules on a ledger, a folder per feature: payments and
        // restores, the catalog, subscriptions, offers, refunds, Family Sharing, the server's
        // records and notifications, the store's controls, signed transactions.
        .target(
            name: "SimulatedStore",
            dependencies: [
                "LedgerEngine", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .target(name: "StoreLedger", dependencies: ["SimulatedStore"]),
        // The store's test controls (`StoreTestSession`), imported by tests beside StoreLedger as
        // StoreKitTest is beside StoreKit, so that an app's front door holds none of them.
        .target(name: "StoreTesting", dependencies: ["StoreLedger"]),
        // StoreKit 1 and 2 (and StoreKitTest) with Apple's names, on a ledger: app code runs
        // with only its import changed.
        .target(name: "OpenStoreKit", dependencies: ["StoreLedger"]),
        .target(name: "OpenStoreKitTest", dependencies: ["OpenStoreKit", "StoreLedger", "StoreTesting"]),
        // The App Store's server side over a ledger: the App Store Server API on a real port
        // (Hummingbird), its bearer tokens checked against the ledger's API keys.
        .target(
            name: "AppStoreServer",
            dependencies: [
                "SimulatedStore", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                // HTTPS (`ledger serve --tls-certificate`) over swift-nio-ssl, and the test
                // authority's certificates (`ledger tls create`).
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Logging", package: "swift-log"), .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                // The API keys' table (`APIKeys.swift`).
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // The C part of the fault-injecting SQLite VFS (SQLite's VFS API is C).
        .target(name: "CLedgerFaultVFS", linkerSettings: [.linkedLibrary("sqlite3")]),
        // The raw-SQLite baseline `ledger-lab bench` compares the ledger with.
        .target(name: "CLedgerBaseline", linkerSettings: [.linkedLibrary("sqlite3")]),
        // Testing for this project and its users: crash campaigns against any purchase code
        // (fault injection, the checker of the ledger's crash invariants, a seeded workload), and
        // test helpers (temporary ledgers, a sample catalog, a collecting observer).
        .target(
            name: "LedgerTesting", dependencies: ["StoreLedger", "SimulatedStore", "StoreTesting", "CLedgerFaultVFS"]),
        .target(
            name: "LedgerCommand",
            dependencies: [
                "StoreLedger", "StoreTesting", "AppStoreServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(name: "ledger", dependencies: ["LedgerCommand", "AppStoreServer"]),
        // The laboratory, kept out of the shipped `ledger`: `ledger-lab bench` (against the C
        // baseline), the crash campaigns, and `ledger` commands through the fault VFS.
        .target(
            name: "LedgerLab",
            dependencies: [
                "LedgerCommand", "LedgerTesting", "CLedgerBaseline", "AppStoreServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "GRDB", package: "GRDB.swift"),
                // The server rows of `bench`: a constant-body server, bearer tokens.
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .executableTarget(name: "ledger-lab", dependencies: ["LedgerLab"]),
        // Purchase cycles with a synchronous `main`, for instruction counts under callgrind.
        .executableTarget(name: "ledger-cycles", dependencies: ["StoreLedger", "CLedgerBaseline"]),
        // Helpers shared by the test targets: temporary ledgers, fixtures, running `ledger`.
        .target(
            name: "LedgerTestSupport",
            dependencies: [
                "StoreLedger", "SimulatedStore", "StoreTesting", "LedgerTesting",
                // Reading app receipts as an app does (`ReceiptContents`).
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/LedgerTestSupport"),
        .testTarget(
            name: "LedgerEngineTests",
            dependencies: [
                "LedgerEngine", "SimulatedStore", "LedgerSigning", "LedgerTestSupport", "LedgerTesting",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"), .product(name: "Crypto", package: "swift-crypto"),
            ]),
        .testTarget(
            name: "AppStoreServerTests",
            dependencies: [
                "AppStoreServer", "StoreLedger", "StoreTesting", "LedgerTestSupport", "LedgerTesting", "LedgerLab",
                "ledger",
                // A StoreKit 1 app that sends its receipt to the server (ReceiptScenarioTests).
                "OpenStoreKit", "OpenStoreKitTest",
                .product(name: "Crypto", package: "swift-crypto"),
                // Receivers and clients that misbehave on purpose (HostileReceiver, raw sockets).
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                // HTTPS clients of the server, and the test authority's certificates checked.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"), .product(name: "NIOHTTP1", package: "swift-nio"),
            ]),
        .testTarget(
            name: "StoreLedgerTests",
            dependencies: ["StoreLedger", "SimulatedStore", "StoreTesting", "LedgerTestSupport", "LedgerTesting"]),
        // The store's rules, a folder per feature as in Sources/SimulatedStore.
        .testTarget(
            name: "SimulatedStoreTests",
            dependencies: [
                "StoreLedger", "SimulatedStore", "StoreTesting", "LedgerEngine", "LedgerTestSupport", "LedgerTesting",
                .product(name: "Crypto", package: "swift-crypto"),
            ]),
        .testTarget(
            name: "LedgerCommandTests",
            dependencies: [
                "LedgerTestSupport", "LedgerTesting", "StoreTesting", "LedgerCommand", "LedgerLab", "ledger",
                "ledger-lab",
            ],
            exclude: ["HelpGoldens"]),
        // StoreKit client code compiled against OpenStoreKit with only its import changed, in
        // Swift 6 mode here and in Swift 5 mode below (the client code is shared by a symlink).
        .testTarget(
            name: "OpenStoreKitTests",
            dependencies: ["OpenStoreKit", "OpenStoreKitTest", "StoreTesting", "LedgerTestSupport", "LedgerTesting"]),
        .testTarget(
            name: "OpenStoreKitSwift5Tests",
            dependencies: ["OpenStoreKit", "OpenStoreKitTest", "LedgerTestSupport", "LedgerTesting"],
            swiftSettings: [.swiftLanguageMode(.v5)]),
        .testTarget(
            name: "CrashRecoveryTests",
            dependencies: [
                "StoreLedger", "StoreTesting", "AppStoreServer", "LedgerTesting", "LedgerTestSupport", "ledger",
                "ledger-lab",
            ]),
    ],
    swiftLanguageModes: [.v6]
)

for target in package.targets where !target.name.hasPrefix("C") {
    if target.name.hasPrefix("OpenStoreKit") && target.type == .test {
        // StoreKit client code as its authors wrote it (`Error`, not `any Error`), checked for
        // the one rule a client may turn on that our modules must survive: it sees every member
        // it uses with only `import OpenStoreKit`.
        target.swiftSettings = (target.swiftSettings ?? []) + [.enableUpcomingFeature("MemberImportVisibility")]
    } else {
        target.swiftSettings = (target.swiftSettings ?? []) + upcomingFeatures
    }
}
