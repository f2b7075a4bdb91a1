import ArgumentParser
import Foundation
import StoreLedger
import StoreTesting
import Synchronization

/// The tour for a newcomer: buy, crash before finishing, relaunch and see the purchases come
/// back, finish, relaunch and see nothing come back, then a failed and an Ask to Buy purchase.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "A narrated tour of StoreLedger on a fresh demo ledger (./ledger-demo.sqlite).",
        discussion: """
            Replaces an earlier demo ledger, never any other file. --database names another demo file \
            ($LEDGER_DATABASE is not used: the demo never touches your ledger). With --json the story goes \
            to stderr and stdout holds a summary.
            """)

    @OptionGroup var options: GlobalOptions

    static let demoMarker = "demo"

    var database: String { options.database ?? "ledger-demo.sqlite" }

    func run() async throws {
        try prepareFreshLedger()
        let summary = try await tour()
        try options.output.emit(summary) { "" }
    }

    /// What the tour did, for `--json`.
    struct Summary: Encodable {
        let database: String
        let acknowledgedBeforeCrash: [UInt64]
        let redeliveredAtRelaunch: [UInt64]
        let renewals: [UInt64]
        let restored: [UInt64]
        let refunded: UInt64
        let entitlements: [String]
    }

    /// Removes an earlier demo ledger (recognised by its marker setting); refuses anything else.
    private func prepareFreshLedger() throws {
        guard try Ledger.exists(at: database) else { return }
        let existing = try Ledger.open(at: database, access: .readOnly)
        let isDemo = try existing.storeSettings()[Self.demoMarker] == "true"
        try existing.close()
        guard isDemo else {
            throw CommandRefusal(
                description: "\(database) is a ledger that `ledger demo` did not make; "
                    + "refusing to replace it (pass --database with another path)")
        }
        for suffix in ["", "-wal", "-shm"] { unlink(database + suffix) }
    }

    private func tour() async throws -> Summary {
        let configuration = LedgerConfiguration(durability: options.durability)
        step("1. A fresh ledger and a sample catalog")
        let catalogFile = try writeSampleCatalog()
        defer { try? FileManager.default.removeItem(atPath: (catalogFile as NSString).deletingLastPathComponent) }
        let ledger = try Ledger.open(at: database, mode: .createIfMissing, configuration: configuration)
        try ledger.setStoreSettings([Self.demoMarker: "true"])
        let catalog = ProductCatalog(ledger: ledger)
        let imported = try catalog.importConfigurations(at: [catalogFile])
        say(
            "Created \(database) (owner-only) and imported \(imported.productIDs.count) products from a StoreKit configuration file."
        )
        let response = try catalog.products(for: [
            "com.example.level1", "com.example.level2", "com.example.rocket_car", "com.example.pro.monthly",
            "com.example.unknown",
        ])
        for product in response.products {
            say("  \(product.id)  \(product.type.rawValue)  \(try catalog.displayPrice(of: product))")
        }
        say("  invalid identifiers: \(response.invalidProductIdentifiers.joined(separator: ", "))")
        try ledger.close()
        say("")
        say("The app in this tour is a transaction observer, registered with the payment queue at every launch:")
        for line in Self.observerSketch { say("  " + line) }
        say("Each transaction line below ends with how often it was delivered to observers (`delivered 2x`):")
        say("the ledger counts every hand-over, so a transaction delivered many times and never finished shows.")

        step("2. The app buys two products, then is killed before it finishes them")
        let acknowledged = try runAndKillChild(buying: ["com.example.level1", "com.example.rocket_car"])
        say("A child `ledger` process bought them; each purchase was committed before it was acknowledged:")
        for id in acknowledged { say("  acknowledged transaction #\(id)") }
        say("Then the child was killed with SIGKILL before finishing them (a crash).")

        step("3. Relaunch: the unfinished transactions are delivered again")
        var queue = try PaymentQueue(path: database, configuration: configuration)
        var observer = RecordingObserver(finishing: false)
        try await queue.add(observer)
        let redelivered = observer.delivered
        for transaction in redelivered { say("  delivered " + describe(transaction)) }
        say("The app delivers the content (idempotently, keyed on the transaction id), then finishes them.")
        try await queue.finish(redelivered.map(\.id))

        step("4. Relaunch again: nothing comes back")
        queue = try PaymentQueue(path: database, configuration: configuration)
        observer = RecordingObserver(finishing: true)
        try await queue.add(observer)
        say(
            observer.delivered.isEmpty
                ? "  nothing delivered: every transaction is finished"
                : "  unexpected: \(observer.delivered.count) delivered")

        step("5. A failed purchase and an Ask to Buy purchase")
        let failed = try await queue.add(
            Payment(productID: "com.example.level2", simulatedOutcome: .failed(.paymentNotAllowed)))
        await queue.waitUntilNotified()
        say("  " + describe(try stored(failed.id, in: queue)))
        say("  Delivered 2x: the observer was told when it was purchasing and again when it failed. It finished")
        say("  the failed transaction (an app shows the error, unless the user cancelled), so it left the queue.")
        let deferred = try await queue.add(Payment(productID: "com.example.level2", simulatedOutcome: .deferred))
        await queue.waitUntilNotified()
        say("  " + describe(try stored(deferred.id, in: queue)))
        say("  Deferred (Ask to Buy): it cannot be finished; it waits for a parent's approval.")
        _ = try await queue.approve(deferred.id)
        await queue.waitUntilNotified()
        say("  " + describe(try stored(deferred.id, in: queue)))
        say("  Approved: the observer got it a third time, now purchased, and finished it.")

        step("6. A subscription under a fast clock")
        let session = StoreTestSession(queue: queue)
        try session.update { $0.timeRate = .monthlyRenewalEveryThirtySeconds }
        let subscription = try await queue.add(Payment(productID: "com.example.pro.monthly"))
        say("Time rate monthlyRenewalEveryThirtySeconds: a month lasts 30 seconds.")
        say("  " + describe(subscription) + "  expires \(format(subscription.expirationDate))")
        let renewals = try await session.advanceClock(by: 65)
        say(
            "The store clock moves 65 seconds: \(renewals.count) renewals arrive, each a new transaction of the same chain:"
        )
        for renewal in renewals { say("  " + describe(renewal) + "  expires \(format(renewal.expirationDate))") }
        say("  entitlements: \(try queue.currentEntitlements().map(\.productID).joined(separator: ", "))")
        try await session.setAutoRenew(false, for: "com.example.pro.monthly")
        try await session.advanceClock(by: 40)
        say("Auto-renew off, 40 more seconds: the subscription expired.")
        say("  entitlements: \(try queue.currentEntitlements().map(\.productID).joined(separator: ", "))")

        step("7. Reinstall and restore")
        say("The app is deleted and reinstalled: its own records are gone, but the store (this ledger, which")
        say("plays Apple's record of the account) keeps the purchases. The reinstalled app restores them:")
        queue = try PaymentQueue(path: database, configuration: configuration)
        observer = RecordingObserver(finishing: true)
        try await queue.add(observer)
        let restore = await queue.restoreCompletedTransactions()
        let restored = try restore.restored.all()
        for transaction in restored {
            say("  restored #\(transaction.id) \(transaction.productID)  (original #\(transaction.originalID))")
        }
        say(
            "  restore \(restore.isFinished ? "finished" : "failed"): \(restore.restored.count) restored; the consumable rocket car is not restorable."
        )

        step("8. A refund")
        let refunded = try await StoreTestSession(queue: queue).refundTransaction(acknowledged[0])
        say(
            "  refunded #\(refunded.id) \(refunded.productID): its state stays \(refunded.state.rawValue), its revocation date is set."
        )
        let entitlements = try queue.currentEntitlements()
        say(
            "  entitlements now: \(entitlements.isEmpty ? "none" : entitlements.map(\.productID).joined(separator: ", "))"
        )

        step("What next")
        say("Inspect the ledger this demo left behind:")
        for command in [
            "info", "list", "show \(acknowledged[0])", "entitlements", "purchase com.example.rocket_car --quantity 2",
            "launch --finish", "restore", "clock advance 30s", "store show",
        ] {
            say("  ledger \(command) --database \(database)")
        }
        say("Add --json to any command for one JSON document on stdout.")
        return Summary(
            database: database, acknowledgedBeforeCrash: acknowledged, redeliveredAtRelaunch: redelivered.map(\.id),
            renewals: renewals.map(\.id), restored: restored.map(\.id), refunded: refunded.id,
            entitlements: entitlements.map(\.productID))
    }

    /// The transaction as the ledger holds it now (after the observer acted on it).
    private func stored(_ id: UInt64, in queue: PaymentQueue) throws -> PaymentTransaction {
        guard let transaction = try queue.ledger.transaction(id) else { throw PaymentQueueError.unknownTransaction(id) }
        return transaction
    }

    /// The observer the tour registers (`RecordingObserver`), as an app would write it.
    static let observerSketch = [
        "final class StoreObserver: PaymentTransactionObserver {",
        "    func paymentQueue(_ queue: PaymentQueue, updatedTransactions transactions: [PaymentTransaction]) async {",
        "        for transaction in transactions where transaction.state.canBeFinished {",
        "            // deliver the content (idempotently, keyed on transaction.id), then:",
        "            _ = try? await queue.finish(transaction)",
        "        }",
        "    }",
        "}",
    ]

    private func format(_ date: Date?) -> String {
        date.map(InternetDate.string(from:)) ?? "never"
    }

    /// Starts `ledger hold-purchases`, waits for its acknowledgements, and kills it.
    private func runAndKillChild(buying products: [String]) throws -> [UInt64] {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: try currentExecutable())
        child.arguments =
            ["hold-purchases", "--database", database, "--durability", options.durability.rawValue] + products
        let pipe = Pipe()
        child.standardOutput = pipe
        try child.run()
        var acknowledged: [UInt64] = []
        var buffer = Data()
        readLoop: while true {
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            buffer += chunk
            while let newline = buffer.firstIndex(of: 0x0A) {
                let line = buffer[buffer.startIndex..<newline]
                buffer = Data(buffer[buffer.index(after: newline)...])
                guard let fields = try? JSONSerialization.jsonObject(with: line) as? [String: String] else { continue }
                if fields["op"] == "holding" { break readLoop }
                if let id = fields["id"].flatMap(UInt64.init) { acknowledged.append(id) }
            }
        }
        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        guard acknowledged.count == products.count else {
            throw InputError(description: "the demo's child process stopped early (exit \(child.terminationStatus))")
        }
        return acknowledged
    }

    private func currentExecutable() throws -> String {
        try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    }

    /// Writes the sample catalog in a new private temporary folder (never a predictable path).
    private func writeSampleCatalog() throws -> String {
        var template = Array((NSTemporaryDirectory() + "storeledger-demo-XXXXXX").utf8CString)
        guard let folder = mkdtemp(&template) else {
            throw CommandRefusal(description: "cannot create a temporary folder: \(String(cString: strerror(errno)))")
        }
        let path = String(cString: folder) + "/Sample.storekit"
        try Data(Self.sampleCatalog.utf8).write(to: URL(fileURLWithPath: path), options: .withoutOverwriting)
        return path
    }

    /// The story goes to stdout, or to stderr when stdout holds the JSON summary.
    private func step(_ title: String) { say("\n== \(title)") }

    private func say(_ text: String) {
        if options.json { Output.message(text) } else { print(text) }
    }

    /// The seed's products (`com.example.level1`, `level2`, `rocket_car`) and a subscription.
    static let sampleCatalog = """
        {
          "products": [
            {"productID": "com.example.level1", "type": "NonConsumable", "displayPrice": "0.99", "referenceName": "Level 1",
             "familyShareable": false, "localizations": [{"locale": "en_US", "displayName": "Level 1", "description": "Unlock level 1"}]},
            {"productID": "com.example.level2", "type": "NonConsumable", "displayPrice": "1.99", "referenceName": "Level 2",
             "familyShareable": false, "localizations": [{"locale": "en_US", "displayName": "Level 2", "description": "Unlock level 2"}]},
            {"productID": "com.example.rocket_car", "type": "Consumable", "displayPrice": "2.99", "referenceName": "Rocket car",
             "familyShareable": false, "localizations": [{"locale": "en_US", "displayName": "Rocket Car", "description": "A fast car"}]}
          ],
          "subscriptionGroups": [
            {"id": "pro", "name": "Pro", "subscriptions": [
              {"productID": "com.example.pro.monthly", "type": "RecurringSubscription", "displayPrice": "4.99",
               "groupNumber": 1, "recurringSubscriptionPeriod": "P1M", "referenceName": "Pro monthly",
               "familyShareable": true, "localizations": [{"locale": "en_US", "displayName": "Pro", "description": "Everything, monthly"}]}
            ]}
          ],
          "settings": {"_storefront": "USA", "_locale": "en_US"},
          "version": {"major": 4, "minor": 0}
        }
        """
}

/// The tour's observer: records what it is given and, like an app, may finish it after
/// delivery (the tour's ledger is small: it keeps everything).
private final class RecordingObserver: PaymentTransactionObserver {
    private let finishing: Bool
    private let state = Mutex<[PaymentTransaction]>([])

    init(finishing: Bool) {
        self.finishing = finishing
    }

    var delivered: [PaymentTransaction] { state.withLock { $0 } }

    func paymentQueue(_ queue: PaymentQueue, updatedTransactions transactions: [PaymentTransaction]) async {
        state.withLock { $0 += transactions }
        guard finishing else { return }
        _ = try? await queue.finish(transactions.filter { $0.state.canBeFinished && !$0.isFinished }.map(\.id))
    }
}
