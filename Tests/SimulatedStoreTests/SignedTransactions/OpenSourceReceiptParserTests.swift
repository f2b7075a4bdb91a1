import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

@testable import SimulatedStore

/// The receipt read by a receipt parser apps use: filom/ASN1Decoder's `PKCS7.receipt()`
/// (`PKCS7_AppleReceipt.swift`, pure Swift on Foundation), its sources taken unedited from a
/// snapshot of the repository and compiled beside a small program that prints every field it
/// reads. Skipped, with the reason, when no snapshot is on the machine.
@Suite(.enabled(if: OpenSourceReceiptParser.located.path != nil, "\(OpenSourceReceiptParser.located.reason)"))
struct OpenSourceReceiptParserTests {
    @Test(arguments: [SigningEnvironment.xcode, .sandbox, .production])
    func asn1DecoderReadsEveryFieldOfTheReceipt(_ environment: SigningEnvironment) async throws {
        let parser = try #require(await OpenSourceReceiptParser.shared.value)
        try await StoreFixture.with { store in
            var settings = try StoreSettings(ledger: store.ledger)
            (settings.environment, settings.appVersion) = (environment, "12.4.1")
            settings.appAppleID = environment == .production ? 1_234_567_890 : nil
            try store.ledger.setStoreSettings(settings.storedValues)
            let level = try await store.buy(SampleCatalog.nonConsumable)
            let monthly = try await store.buy(SampleCatalog.subscription)
            try await store.session.refundTransaction(level.id)
            let bytes = try store.ledger.appReceipt()
            let file = store.directory + "/receipt"
            try Data(bytes).write(to: URL(fileURLWithPath: file))
            let read = try await parser.read(file)
            let receipt = try ReceiptContents(bytes)
            let refunded = try #require(try store.ledger.transaction(level.id))
            let hex = { (bytes: [UInt8]?) in (bytes ?? []).map { String(format: "%02x", $0) }.joined() }
            let expected = [
                "bundle \(settings.bundleID)", "version 12.4.1", "original 1.0",
                "opaque \(hex(receipt.fields[4]))", "sha1 \(hex(receipt.fields[5]))",
                "created \(rfc3339(try store.now()))", "expires none",
                "purchase 1 \(SampleCatalog.nonConsumable) \(level.id) \(level.id) \(rfc3339(level.purchaseDate)) "
                    + "\(rfc3339(level.originalPurchaseDate)) none none \(rfc3339(try #require(refunded.revocationDate))) none",
                "purchase 1 \(SampleCatalog.subscription) \(monthly.id) \(monthly.originalID) "
                    + "\(rfc3339(monthly.purchaseDate)) \(rfc3339(monthly.originalPurchaseDate)) "
                    + "\(rfc3339(try #require(monthly.expirationDate))) none none \(monthly.id)",
            ]
            // (The parser reads the INTEGER 0 of "not in an intro offer period", 1719, as no
            // value: its decoder drops the byte. A `none` date is an empty field, as Apple writes.)
            #expect(read == expected, "\(read)")
        }
    }
}

/// filom/ASN1Decoder, built from a snapshot (`fetch github:filom/ASN1Decoder`: a git directory
/// under `.mirror/filom+ASN1Decoder/repo` beside the repository or at `/work/.mirror`, or where
/// `STORELEDGER_ASN1DECODER` names it) with a program that prints what `receipt()` reads.
struct OpenSourceReceiptParser: Sendable {
    let program: String

    static let located: (path: String?, reason: String) = {
        let environment = ProcessInfo.processInfo.environment
        let candidates =
            (environment["STORELEDGER_ASN1DECODER"].map { [$0] } ?? [])
            + [Repository.root + "/../.mirror/filom+ASN1Decoder/repo", "/work/.mirror/filom+ASN1Decoder/repo"]
        guard let path = candidates.first(where: { FileManager.default.fileExists(atPath: $0 + "/HEAD") }) else {
            return (nil, "no snapshot of filom/ASN1Decoder at \(candidates.joined(separator: ", "))")
        }
        return (path, "")
    }()

    /// Where the program is built: removed when the test process exits.
    private static let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("asn1decoder-\(ProcessInfo.processInfo.processIdentifier)").path

    /// The program, built once per test process (on a thread of its own: a compiler that holds
    /// one of Swift's cooperative threads for seconds stalls the tests running beside it); `nil`
    /// when the snapshot or `swiftc` is missing.
    static let shared = Task<OpenSourceReceiptParser?, Never> { try? await onItsOwnThread { try build() } }

    /// Each line the program prints for the receipt file at `path`.
    func read(_ path: String) async throws -> [String] {
        let program = program
        let result = try await onItsOwnThread { try runProcess(program, [path]) }
        guard result.status == 0 else { throw ReceiptReadFailure(output: result.output) }
        // Only the program's lines: the library prints notes of its own ("unsupported tag: ...")
        // when it tries bytes that are no ASN.1 (an opaque value, a hash) as ASN.1.
        let fields = ["bundle", "version", "original", "opaque", "sha1", "created", "expires", "purchase"]
        return result.output.split(separator: "\n").map(String.init).filter { line in
            fields.contains(String(line.prefix { $0 != " " }))
        }
    }

    struct ReceiptReadFailure: Error {
        let output: String
    }

    private static func build() throws -> OpenSourceReceiptParser? {
        guard let repository = located.path, let swiftc = swiftCompiler else { return nil }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: OpenSourceReceiptParser.directory) }
        // The library's sources as they are in the snapshot.
        let archive = try runProcess(
            "/bin/sh", ["-c", "git --git-dir='\(repository)' archive HEAD ASN1Decoder | tar -x -C '\(directory)'"])
        guard archive.status == 0 else { throw ReceiptReadFailure(output: archive.output) }
        let sources = try FileManager.default.contentsOfDirectory(atPath: directory + "/ASN1Decoder")
            .filter { $0.hasSuffix(".swift") }.map { directory + "/ASN1Decoder/" + $0 }
        try Data(Self.main.utf8).write(to: URL(fileURLWithPath: directory + "/main.swift"))
        let program = directory + "/receipt-fields"
        let built = try runProcess(swiftc, sources + [directory + "/main.swift", "-o", program])
        guard built.status == 0 else { throw ReceiptReadFailure(output: built.output) }
        return OpenSourceReceiptParser(program: program)
    }

    /// Prints every field `PKCS7.receipt()` reads, one line for the app and one per purchase.
    static let main = #"""
        import Foundation
        let data = try Data(contentsOf: URL(fileURLWithPath: CommandLine.arguments[1]))
        guard let receipt = try PKCS7(data: data).receipt() else { print("no receipt"); exit(1) }
        func date(_ date: Date?) -> String {
            guard let date else { return "none" }
            let formatter = ISO8601DateFormatter()
            formatter.timeZone = TimeZone(secondsFromGMT: 0)
            return formatter.string(from: date)
        }
        func hex(_ data: Data?) -> String { (data ?? Data()).map { String(format: "%02x", $0) }.joined() }
        func text(_ value: Any?) -> String { value.map { "\($0)" } ?? "none" }
        print("bundle", text(receipt.bundleIdentifier))
        print("version", text(receipt.bundleVersion))
        print("original", text(receipt.originalApplicationVersion))
        print("opaque", hex(receipt.opaqueValue))
        print("sha1", hex(receipt.sha1))
        print("created", date(receipt.receiptCreationDate))
        print("expires", date(receipt.receiptExpirationDate))
        for purchase in (receipt.inAppPurchases ?? []).sorted(by: { ($0.transactionId ?? "") < ($1.transactionId ?? "") }) {
            print(
                "purchase", text(purchase.quantity), text(purchase.productId), text(purchase.transactionId),
                text(purchase.originalTransactionId), date(purchase.purchaseDate), date(purchase.originalPurchaseDate),
                date(purchase.expiresDate), text(purchase.isInIntroOfferPeriod), date(purchase.cancellationDate),
                text(purchase.webOrderLineItemId))
        }
        """#
}
