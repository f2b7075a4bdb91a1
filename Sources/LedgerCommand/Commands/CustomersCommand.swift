import ArgumentParser
import Foundation
import StoreLedger

/// `ledger customers`: the store's customers (Apple Accounts), each with their own purchases.
struct CustomersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "customers",
        abstract: "Add and list the store's customers: each buys, restores and is entitled on their own.",
        discussion: """
            A new store has one customer, `default`. With several, the commands that act for one \
            take --customer NAME (before or after the command); `list` without it shows everyone's.
            """,
        subcommands: [Add.self, List.self, Show.self, LeaveFamily.self])

    /// A customer as the subcommands print it.
    struct CustomerView: Encodable {
        let name: String
        /// The storefront they buy from; `null`: the store's.
        let storefront: String?
        let family: String?

        init(_ customer: Customer) {
            (name, storefront, family) = (customer.name, customer.storefront?.countryCode, customer.family)
        }

        enum CodingKeys: String, CodingKey { case name, storefront, family }

        /// Every field, absent ones as `null`, so that a JSON reader sees one shape.
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(name, forKey: .name)
            try container.encode(storefront, forKey: .storefront)
            try container.encode(family, forKey: .family)
        }

        var line: String {
            TerminalText.escaped(name) + "  storefront " + (storefront ?? "the store's")
                + (family.map { "  family \(TerminalText.escaped($0))" } ?? "")
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a customer (the store file is created when there is none).")

        @OptionGroup var options: GlobalOptions

        @Argument(help: "The customer's name: 1 to 64 letters, digits, '.', '_' or '-'.")
        var name: String

        @Option(help: "The storefront they buy from: a country code (FRA, JPN...); default: the store's.")
        var storefront: String?

        @Option(help: "The family they belong to, for Family Sharing (a name, as the customer's).")
        var family: String?

        func run() async throws {
            let front = try storefront.map { code in
                guard let known = Storefront(countryCode: code) else {
                    throw InputError(
                        description: "\(cut(code, after: 80, quoting: true)) is not a storefront's country code")
                }
                return known
            }
            // The store's, whoever --customer names (the customer being added may be the one).
            var options = options
            options.customer = nil
            let added = try options.openLedger(mode: .createIfMissing).addCustomer(
                Customer(name: name, storefront: front, family: family))
            try options.output.emit(CustomerView(added)) { "added customer " + CustomerView(added).line }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the customers in the order they were added, one page at a time.",
            discussion: """
                At most \(defaultLimit) unless --limit says otherwise; for the next page, pass the \
                last name printed as --after.
                """)

        static let defaultLimit = 1_000

        @OptionGroup var options: GlobalOptions

        @Option(parsing: .unconditional, help: "At most this many customers (default \(defaultLimit), at most 100000).")
        var limit: Int = defaultLimit

        @Option(help: "Only the customers added after this one.")
        var after: String?

        func validate() throws {
            guard (1...100_000).contains(limit) else { throw ValidationError("--limit takes 1 to 100000") }
        }

        func run() async throws {
            let ledger = try options.openLedgerForReading()
            if let after, try ledger.customer(named: after) == nil {
                throw CustomerError.unknownCustomer(
                    after, choices: try ledger.customers(limit: 10).map(\.name), count: try ledger.customerCount())
            }
            let page = try ledger.customers(after: after, limit: limit).map(CustomerView.init)
            try options.output.emit(["customers": page]) {
                page.isEmpty ? "no customers" : page.map(\.line).joined(separator: "\n")
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a customer: storefront, family, app transaction id and how many transactions they own.")

        @OptionGroup var options: GlobalOptions

        @Argument(help: "The customer's name.")
        var name: String

        struct Shown: Encodable {
            let customer: CustomerView
            let appTransactionID: String
            let transactions: Int
            let unfinished: Int
        }

        func run() async throws {
            let ledger = try options.openLedgerForReading().forCustomer(name)
            guard let customer = try ledger.customer(named: name) else {
                throw CustomerError.unknownCustomer(name, choices: [], count: try ledger.customerCount())
            }
            let counts = try ledger.customerCounts()
            let shown = Shown(
                customer: CustomerView(customer), appTransactionID: try ledger.appTransactionID(),
                transactions: counts.transactions, unfinished: counts.unfinished)
            try options.output.emit(shown) {
                """
                customer \(shown.customer.line)
                app transaction id \(shown.appTransactionID)
                \(shown.transactions) transactions, \(shown.unfinished) unfinished
                """
            }
        }
    }

    struct LeaveFamily: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "leave-family",
            abstract: "A customer leaves their family: the shares on either side of them are revoked (REVOKE).",
            discussion: """
                What they held of other members' purchases, and what other members held of theirs, is \
                revoked with reason 0, in one commit; their own purchases stay theirs. Prints what was revoked.
                """)

        @OptionGroup var options: GlobalOptions

        @Argument(help: "The customer's name.")
        var name: String

        func run() async throws {
            var options = options
            options.customer = nil
            let revoked = try options.openLedger().leaveFamily(name)
            try options.output.emit(["revoked": revoked]) {
                revoked.isEmpty
                    ? "\(TerminalText.escaped(name)) left the family; nothing was shared"
                    : "\(TerminalText.escaped(name)) left the family; revoked "
                        + revoked.map { "#\($0.id) (\(TerminalText.escaped($0.productID)))" }.joined(separator: ", ")
            }
        }
    }
}
