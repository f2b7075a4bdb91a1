import ArgumentParser
import Foundation
import StoreLedger

/// The tour for a newcomer: buy, crash before finishing, relaunch and see the purchases come
/// back, finish, relaunch and see nothing come back, then a failed and an Ask to Buy purchase.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "A narrated tour of StoreLedger on a fresh demo ledger (./ledger-demo.sqlite).",
        discussion: "Replaces an earlier demo ledger, never any other file.")

    @Option(name: .long, help: "The demo ledger file.")
    var database = "ledger-demo.sqlite"

    static let demoMarker = "demo"

    func run() async throws {
        try await reportingFailures {
            try prepareFreshLedger()
            try await tour()
        }
    }

    /// Removes an earlier demo ledger (recognised by its marker setting); refuses anything else.
    private func prepareFreshLedger() throws {
        guard try Ledger.exists(at: database) else { return }
        let existing = try Ledger.open(at: database)
        let isDemo = try existing.storeSettings()[Self.demoMarker] == "true"
        try existing.close()
        guard isDemo else {
            throw InputError(description: "\(database) is a ledger that `ledger demo` did not make; "
                + "refusing to replace it (pass --database with another path)")
        }
        for suffix in ["", "-wal", "-shm"] { unlink(database + suffix) }
    }

    private func tour() async throws {
        let ledgerCommand = "ledger --database \(database)"
        step("1. A fresh ledger and a sample catalog")
        let catalogFile = try writeSampleCatalog()
        defer { unlink(catalogFile) }
        let ledger = try Ledger.open(at: database, mode: .createIfMissing)
        try ledger.setStoreSettings([Self.demoMarker: "true"])
        let imported = try ProductCatalog(ledger: ledger).importConfigurations(at: [catalogFile])
        say("Created \(database) (owner-only) and imported \(imported.productIDs.count) products from a StoreKit configuration file.")
        let response = try ProductCatalog(ledger: ledger).products(for: [
            "com.example.level1", "com.example.level2", "com.example.rocket_car", "com.example.pro.monthly", "com.example.unknown",
        ])
        for product in response.products {
            say("  \(product.id)  \(product.type.rawValue)  \(try ProductCatalog(ledger: ledger).displayPrice(of: product))")
        }
        say("  invalid identifiers: \(response.invalidProductIdentifiers.joined(separator: ", "))")
        try ledger.close()

        step("2. The app buys two products, then is killed before it finishes them")
        let acknowledged = try runAndKillChild(buying: ["com.example.level1", "com.example.rocket_car"])
        say("A child `ledger` process bought them; each purchase was committed before it was acknowledged:")
        for id in acknowledged { say("  acknowledged transaction #\(id)") }
        say("Then the child was killed with SIGKILL before finishing them (a crash).")

        step("3. Relaunch: the unfinished transactions are delivered again")
        var queue = try PaymentQueue(path: database)
        var observer = RecordingObserver(finishing: false)
        try await queue.add(observer)
        for transaction in observer.delivered { say("  delivered " + describe(transaction)) }
        say("The app delivers the content (idempotently, keyed on the transaction id), then finishes them.")
        try await queue.finish(observer.delivered.map(\.id))

        step("4. Relaunch again: nothing comes back")
        queue = try PaymentQueue(path: database)
        observer = RecordingObserver(finishing: false)
        try await queue.add(observer)
        say(observer.delivered.isEmpty ? "  nothing delivered: every transaction is finished"
            : "  unexpected: \(observer.delivered.count) delivered")

        step("5. A failed purchase and an Ask to Buy purchase")
        let failed = try await queue.add(Payment(productID: "com.example.level2", simulatedOutcome: .failed(.paymentNotAllowed)))
        say("  " + describe(failed))
        say("  A failed transaction must be finished too; a cancelled one (paymentCancelled) needs no alert.")
        try await queue.finish(failed)
        let deferred = try await queue.add(Payment(productID: "com.example.level2", simulatedOutcome: .deferred))
        say("  " + describe(deferred))
        say("  Deferred (Ask to Buy): it cannot be finished; it waits for approval.")
        let approved = try await queue.approve(deferred.id)
        say("  approved: " + describe(approved) + "  (the app now delivers and finishes it)")
        try await queue.finish(approved)

        step("What next")
        say("Inspect the ledger this demo left behind:")
        say("  \(ledgerCommand) info")
        say("  \(ledgerCommand) list")
        say("  \(ledgerCommand) show \(acknowledged.first ?? 1)")
        say("  \(ledgerCommand) purchase com.example.rocket_car --quantity 2")
        say("  \(ledgerCommand) launch --finish")
        say("Add --json to any command for one JSON document on stdout.")
    }

    /// Starts `ledger hold-purchases`, waits for its acknowledgements, and kills it.
    private func runAndKillChild(buying products: [String]) throws -> [UInt64] {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: try currentExecutable())
        child.arguments = ["hold-purchases", "--database", database] + products
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

    private func writeSampleCatalog() throws -> String {
        let path = NSTemporaryDirectory() + "storeledger-demo-\(getpid()).storekit"
        try Data(Self.sampleCatalog.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    private func step(_ title: String) { print("\n== \(title)") }
    private func say(_ text: String) { print(text) }

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
