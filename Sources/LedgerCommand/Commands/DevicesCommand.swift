import ArgumentParser
import Foundation
import StoreLedger

/// `ledger devices`: a customer's devices in an app, each one install running its own queue.
struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "Add and list a customer's devices in an app: each runs its own queue, with its own device id.",
        discussion: """
            A customer has one device in each app until devices are named. With several, the commands \
            that run on one (purchase, launch, restore, finish...) take --device NAME, before or after \
            the command. The customer and app are --customer and --app, as for every command.
            """,
        subcommands: [Add.self, List.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a device of the customer in the app.")

        @OptionGroup var options: GlobalOptions

        @Argument(help: "The device's name: 1 to 64 letters, digits, '.', '_' or '-' (iphone, ipad).")
        var name: String

        func run() async throws {
            // The customer's, whatever --device names (the device being added may be the one).
            var options = options
            options.device = nil
            let ledger = try options.openLedger()
            try ledger.addDevice(name)
            let device = try ledger.forDevice(name).deviceVerificationID().uuidString
            try options.output.emit(["name": name, "deviceVerificationID": device]) {
                "added device \(TerminalText.escaped(name))  device verification id \(device)"
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the customer's devices in the app, in the order they were added.")

        @OptionGroup var options: GlobalOptions

        func run() async throws {
            var options = options
            options.device = nil
            let names = try options.openLedgerForReading().deviceNames()
            try options.output.emit(["devices": names]) {
                names.isEmpty
                    ? "no named device: the customer has one device in this app"
                    : names.map(TerminalText.escaped).joined(separator: "\n")
            }
        }
    }
}
