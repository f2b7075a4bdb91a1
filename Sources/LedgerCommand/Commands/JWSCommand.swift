import ArgumentParser
import Foundation
import StoreLedger

/// `ledger jws`: a transaction, a subscription's renewal info, or the app transaction, signed
/// as the App Store signs them.
struct JWSCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jws",
        abstract:
            "Print a transaction (or a subscription's renewal info, or the app transaction) signed as the App Store signs it.",
        discussion: """
            Prints the JWS (compact serialization) StoreKit 2 hands the app as jwsRepresentation: ES256, signed by \
            the ledger's test identity, its chain in the x5c header, the payload with the fields of Apple's \
            JWSTransactionDecodedPayload (or, with --renewal, JWSRenewalInfoDecodedPayload; with --app-transaction, \
            JWSAppTransactionDecodedPayload, a new device verification nonce each time). bundleId and \
            environment come from `ledger store set bundleID|environment`; a server trusting \
            `ledger certificate export` verifies it, in the Sandbox environment with its signature and chain \
            checked (unless `ledger store set invalidSignatures true`, which signs badly on purpose). --json prints {"jws", "header", "payload"}, header and payload decoded. Only purchased and \
            restored transactions are signed (exit 1 for others).
            """)

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The transaction id.")
    var id: UInt64?

    @Option(
        help: ArgumentHelp(
            "The renewal info of this auto-renewable subscription's group instead.", valueName: "product-id"))
    var renewal: String?

    @Flag(help: "The app transaction (the app's own purchase) instead.")
    var appTransaction = false

    func validate() throws {
        if [id != nil, renewal != nil, appTransaction].filter({ $0 }).count != 1 {
            throw ValidationError("give a transaction id, --renewal PRODUCT_ID, or --app-transaction")
        }
    }

    func run() async throws {
        let ledger = try options.openLedgerForReading()
        let jws: JWS
        if appTransaction {
            jws = try ledger.signedAppTransaction()
        } else if let renewal {
            guard let signed = try ledger.signedRenewalInfo(forProduct: renewal) else {
                throw CommandRefusal(
                    description: "no renewal info for \(quoted(renewal)): its subscription group was never bought")
            }
            jws = signed
        } else {
            jws = try ledger.signedTransaction(id!)
        }
        try options.output.emit(
            Signed(
                jws: jws.compactSerialization, header: try JSONValue(jws.header), payload: try JSONValue(jws.payload))
        ) { jws.compactSerialization }
    }

    struct Signed: Encodable {
        let jws: String
        let header: JSONValue
        let payload: JSONValue
    }
}
