import ArgumentParser
import Foundation
import StoreLedger

/// `ledger receipt`: the app receipt a StoreKit 1 app reads from `Bundle.main.appStoreReceiptURL`.
struct ReceiptCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receipt",
        abstract: "Write the app receipt of the customer's device, as the App Store writes it now.",
        discussion: """
            The receipt is a PKCS#7 (CMS) SignedData signed with the ledger's identity (verify it with \
            `openssl cms -verify -inform DER -in FILE -CAfile ROOT.pem`, the root from `ledger certificate \
            export`). Its fields are Apple's: receipt type (Xcode, ProductionSandbox or Production, from the \
            store's environment), bundle identifier, app version, original app version, an opaque value, the \
            SHA-1 over the device's identifier (its verification identifier, `ledger devices list`), the \
            creation date, and one in-app record per purchase StoreKit 2's Transaction.all shows (a consumable \
            until it is finished; at most 10,000). Base64 goes to stdout, as apps send it to their server, \
            unless --output is given: DER, in a new file (never over one; whole or not at all). --expired and \
            --volume-purchase make the sandbox's test receipts (SKReceiptRefreshRequest's properties).
            """)

    @OptionGroup var options: GlobalOptions

    @Option(help: ArgumentHelp("Write the receipt (DER) to this new file instead of stdout.", valueName: "file"))
    var output: String?

    @Flag(help: "An expired receipt (sandbox and Xcode only): its expiration date is a day before it was made.")
    var expired = false

    @Flag(help: "A Volume Purchase Program receipt (sandbox and Xcode only).")
    var volumePurchase = false

    func run() async throws {
        let ledger = try options.openLedgerForReading()
        let receipt = try ledger.appReceipt(
            properties: ReceiptProperties(isExpired: expired, isVolumePurchase: volumePurchase))
        let base64 = Data(receipt).base64EncodedString()
        guard let output else {
            try options.output.emit(Written(receipt: base64, output: nil, bytes: receipt.count)) { base64 }
            return
        }
        try writeNewOutputFile(output, holding: "the receipt") { try $0.write(contentsOf: Data(receipt)) }
        try options.output.emit(Written(receipt: nil, output: output, bytes: receipt.count)) {
            "wrote the app receipt of \(ledger.path) to \(output) (\(receipt.count) bytes, DER)"
        }
    }

    struct Written: Encodable {
        let receipt: String?
        let output: String?
        let bytes: Int
    }
}
