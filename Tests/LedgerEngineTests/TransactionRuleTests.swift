import Foundation
import GRDB
import LedgerTestSupport
import LedgerTesting
import Testing

@testable import LedgerEngine
@testable import SimulatedStore

/// The database's rules (migration 0007's tables and triggers) against Swift's
/// `TransactionRules`: every initial insert, every state x state update, finishing and
/// refunding in every state, and every history row of every kind, tried on a scratch ledger
/// with plain SQL (no Swift check in the way), must be accepted exactly when the table says so.
@Suite struct TransactionRuleTests {
    static let states = TransactionState.allCases
    static let productTypes: [(id: String, type: ProductType)] = [
        ("consumable", .consumable), ("monthly", .autoRenewable),
    ]

    /// Runs `body` on the raw database of a new ledger.
    func withRawLedger<T>(_ body: (Database) throws -> T) async throws -> T {
        try await withLedgerResult { (ledger, directory) in
            try ledger.close()
            let database = try DatabaseQueue(path: directory + "/ledger.sqlite")
            defer { try? database.close() }
            return try database.writeWithoutTransaction { db in try body(db) }
        }
    }

    /// How the database answered a case: a refusal counts for the rules only when one of
    /// their triggers made it (not a CHECK constraint that happens to refuse the same row).
    enum Verdict: Equatable, Sendable {
        case accepted, refusedByRule, refusedOtherwise
    }

    /// What `sql` gets after `setup`, in a savepoint rolled back after.
    static func verdict(
        _ db: Database, setup: [(String, StatementArguments)], _ sql: String, _ arguments: StatementArguments = []
    ) throws -> Verdict {
        try db.execute(sql: "SAVEPOINT rule_case")
        defer { try? db.execute(sql: "ROLLBACK TO rule_case; RELEASE rule_case") }
        for (statement, values) in setup { try db.execute(sql: statement, arguments: values) }
        do {
            try db.execute(sql: sql, arguments: arguments)
            return .accepted
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            return error.extendedResultCode == .SQLITE_CONSTRAINT_TRIGGER ? .refusedByRule : .refusedOtherwise
        }
    }

    static let insertSQL = """
        INSERT INTO transactions (id, original_id, product_id, product_type, state, quantity, purchase_date,
            original_purchase_date, reason, storefront, environment, planned_state, created_at, updated_at)
        VALUES (?, ?, ?, ?, ?, 1, 0, 0, 'purchase', 'USA', 'xcode', 'purchased', 0, 0)
        """

    static func insert(
        id: Int, state: TransactionState, product: (id: String, type: ProductType) = productTypes[0]
    ) -> (String, StatementArguments) {
        (insertSQL, [id, id, product.id, product.type.rawValue, state.rawValue])
    }

    /// The statements that make row 1 in `state`, by legal steps where it is not an initial state.
    static func row(in state: TransactionState) -> [(String, StatementArguments)] {
        if TransactionRules.initialStates.contains(state) { return [insert(id: 1, state: state)] }
        return [insert(id: 1, state: .purchasing), (moveSQL, [state.rawValue, state.rawValue])]
    }

    /// Moves row 1 to a state (with an error code exactly when failed, as a CHECK requires).
    static let moveSQL =
        "UPDATE transactions SET state = ?, error_code = CASE WHEN ? = 'failed' THEN 0 END WHERE id = 1"

    @Test func theDatabaseTablesHoldTheSwiftTable() async throws {
        let (initial, transitions, finishable, revocable, kinds, subscriptionOnly) = try await withRawLedger { db in
            (
                try String.fetchAll(db, sql: "SELECT state FROM rule_initial_states"),
                try Row.fetchAll(db, sql: "SELECT from_state, to_state FROM rule_transitions").map {
                    [$0[0] as String, $0[1] as String]
                },
                try String.fetchAll(db, sql: "SELECT state FROM rule_states WHERE finishable = 1"),
                try String.fetchAll(db, sql: "SELECT state FROM rule_states WHERE revocable = 1"),
                try String.fetchAll(db, sql: "SELECT kind FROM rule_events"),
                try String.fetchAll(db, sql: "SELECT kind FROM rule_events WHERE subscription_only = 1")
            )
        }
        let initialStates = Set(initial.compactMap(TransactionState.init))
        #expect(initialStates == TransactionRules.initialStates)
        #expect(initial.count == TransactionRules.initialStates.count)
        let pairs = transitions.map {
            TransactionRules.Transition(TransactionState(rawValue: $0[0])!, TransactionState(rawValue: $0[1])!)
        }
        #expect(Set(pairs) == TransactionRules.transitions)
        #expect(pairs.count == TransactionRules.transitions.count)
        let finishableStates = Set(finishable.compactMap(TransactionState.init))
        #expect(finishableStates == TransactionRules.finishable)
        #expect(finishable.count == TransactionRules.finishable.count)
        let revocableStates = Set(revocable.compactMap(TransactionState.init))
        #expect(revocableStates == TransactionRules.revocable)
        #expect(revocable.count == TransactionRules.revocable.count)
        let eventKinds = Set(kinds.compactMap(TransactionEvent.Kind.init))
        #expect(eventKinds == Set(TransactionEvent.Kind.allCases))
        #expect(kinds.count == TransactionEvent.Kind.allCases.count)
        let subscriptionKinds = Set(subscriptionOnly.compactMap(TransactionEvent.Kind.init))
        #expect(subscriptionKinds == TransactionRules.subscriptionOnlyEvents)
        #expect(subscriptionOnly.count == TransactionRules.subscriptionOnlyEvents.count)
    }

    /// One case and the database's answer: accepted when the table allows it, refused by a
    /// rule's trigger when it does not.
    struct Answer: Sendable {
        let name: String
        let verdict: Verdict
        let expected: Bool

        init(name: String, verdict: Verdict, expected: Bool) {
            self.name = name
            self.verdict = verdict
            self.expected = expected
        }

        var holds: Bool { verdict == (expected ? .accepted : .refusedByRule) }
    }

    @Test func everyInsertUpdateFinishAndRefundIsAnsweredAsTheTableSays() async throws {
        let answers = try await withRawLedger { db in
            var answers: [Answer] = []
            for state in Self.states {
                let (sql, arguments) = Self.insert(id: 1, state: state)
                answers.append(
                    Answer(
                        name: "insert \(state)", verdict: try Self.verdict(db, setup: [], sql, arguments),
                        expected: TransactionRules.initialStates.contains(state)))
                for next in Self.states where next != state {
                    answers.append(
                        Answer(
                            name: "\(state) -> \(next)",
                            verdict: try Self.verdict(
                                db, setup: Self.row(in: state), Self.moveSQL, [next.rawValue, next.rawValue]),
                            expected: state.canMove(to: next)))
                }
                answers.append(
                    Answer(
                        name: "finish \(state)",
                        verdict: try Self.verdict(
                            db, setup: Self.row(in: state),
                            "UPDATE transactions SET is_finished = 1, finished_at = 0 WHERE id = 1"),
                        expected: state.canBeFinished))
                let refund = "UPDATE transactions SET revocation_date = 5, revocation_reason = 0 WHERE id = 1"
                answers.append(
                    Answer(
                        name: "refund \(state)", verdict: try Self.verdict(db, setup: Self.row(in: state), refund),
                        expected: state.canBeRevoked))
                if state.canBeRevoked {
                    let refunded = Self.row(in: state) + [(refund, StatementArguments())]
                    // A refund is set once, then only reversed whole (migration 20).
                    for (name, sql, allowed) in [
                        ("twice", "UPDATE transactions SET revocation_date = 6 WHERE id = 1", false),
                        (
                            "reversed",
                            "UPDATE transactions SET revocation_date = NULL, revocation_reason = NULL WHERE id = 1",
                            true
                        ),
                        (
                            "half reversed", "UPDATE transactions SET revocation_reason = NULL WHERE id = 1", false
                        ),
                        ("with another reason", "UPDATE transactions SET revocation_reason = 1 WHERE id = 1", false),
                    ] {
                        answers.append(
                            Answer(
                                name: "refund \(state) \(name)", verdict: try Self.verdict(db, setup: refunded, sql),
                                expected: allowed))
                    }
                    // A Family Sharing revocation (FAMILY_REVOKE) is never reversed.
                    answers.append(
                        Answer(
                            name: "refund \(state) reversed, of a family-shared purchase",
                            verdict: try Self.verdict(
                                db,
                                setup: refunded + [
                                    (
                                        "INSERT INTO family_shares (original_transaction_id, shared_at) VALUES (1, 0)",
                                        StatementArguments()
                                    )
                                ],
                                "UPDATE transactions SET revocation_date = NULL, revocation_reason = NULL WHERE id = 1"),
                            expected: false))
                    answers.append(
                        Answer(
                            name: "a reason without a refund \(state)",
                            verdict: try Self.verdict(
                                db, setup: Self.row(in: state),
                                "UPDATE transactions SET revocation_reason = 1 WHERE id = 1"),
                            expected: false))
                }
                // No transaction is created finished or refunded.
                for (name, columns, values) in [
                    ("finished", "is_finished, finished_at", "1, 0"), ("refunded", "revocation_date", "5"),
                ] {
                    let sql = Self.insertSQL
                        .replacingOccurrences(
                            of: "created_at, updated_at)", with: "created_at, updated_at, \(columns))"
                        )
                        .replacingOccurrences(of: "0, 0)", with: "0, 0, \(values))")
                    answers.append(
                        Answer(
                            name: "insert \(state) \(name)",
                            verdict: try Self.verdict(db, setup: [], sql, Self.insert(id: 1, state: state).1),
                            expected: false))
                }
            }
            return answers
        }
        // 5 inserts, 20 updates, 5 finishes, 5 refunds, 2 x 6 after a refund, 5 x 2 created done
        #expect(answers.count == 57)
        for answer in answers {
            let name = answer.name
            #expect(answer.holds, Comment(rawValue: "\(name): \(answer.verdict)"))
        }
    }

    @Test func everyHistoryRowIsAnsweredAsTheTableSays() async throws {
        let answers = try await withRawLedger { db in
            var answers: [Answer] = []
            for (index, product) in Self.productTypes.enumerated() {
                let (sql, arguments) = Self.insert(id: index + 1, state: .purchased, product: product)
                try db.execute(sql: sql, arguments: arguments)
            }
            let event = """
                INSERT INTO transaction_events (transaction_id, kind, from_state, to_state, at, row_digest, hash)
                VALUES (?, ?, ?, ?, 0, zeroblob(32), zeroblob(32))
                """
            for (index, product) in Self.productTypes.enumerated() {
                for kind in TransactionEvent.Kind.allCases {
                    for from in [nil] + Self.states.map(Optional.some) {
                        for to in Self.states {
                            answers.append(
                                Answer(
                                    name: "\(kind) \(from?.rawValue ?? "nil") -> \(to) on \(product.type)",
                                    verdict: try Self.verdict(
                                        db, setup: [], event, [index + 1, kind.rawValue, from?.rawValue, to.rawValue]),
                                    expected: TransactionRules.allowsEvent(
                                        kind, from: from, to: to, productType: product.type)))
                        }
                    }
                }
            }
            answers.append(
                Answer(
                    name: "an unknown kind",
                    verdict: try Self.verdict(db, setup: [], event, [1, "teleported", "purchased", "purchased"]),
                    expected: false))
            return answers
        }
        // 2 product types x 9 kinds x 6 states before x 5 after, and the unknown kind
        #expect(answers.count == 541)
        for answer in answers {
            let name = answer.name
            #expect(answer.holds, Comment(rawValue: "\(name): \(answer.verdict)"))
        }
    }

    /// A ledger written by the previous schema (up to 0006) gets the rules when opened: the
    /// database then refuses a second refund.
    @Test func aLedgerOfThePreviousSchemaGetsTheRules() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/old.sqlite"
            let old = try olderLedger(at: path, migrations: Migration.embedded.filter { $0.identifier < "0007" })
            try old.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO products (id, type, reference_name, price, family_shareable) VALUES ('p', 'nonConsumable', 'p', '1', 0);
                        INSERT INTO transactions (id, original_id, product_id, product_type, state, quantity, purchase_date,
                            original_purchase_date, reason, storefront, environment, created_at, updated_at)
                        VALUES (1, 1, 'p', 'nonConsumable', 'purchased', 1, 0, 0, 'purchase', 'USA', 'xcode', 0, 0);
                        INSERT INTO transaction_events (transaction_id, kind, to_state, at) VALUES (1, 'created', 'purchased', 0);
                        UPDATE ledger_counters SET value = 1;
                        """)
            }
            #expect(try old.read { db in try db.tableExists("rule_transitions") } == false)
            try old.close()

            let ledger = try Ledger.open(at: path, configuration: LedgerConfiguration(clock: .fixed(testEpoch)))
            #expect(try ledger.appliedMigrations() == Ledger.knownMigrations)
            #expect(try ledger.perform(.refund(1, reason: 0)).transactions.map(\.id) == [1])
            try ledger.close()
            let raw = try DatabaseQueue(path: path)
            let secondRefund = try raw.writeWithoutTransaction { db in
                try Self.verdict(db, setup: [], "UPDATE transactions SET revocation_date = 9 WHERE id = 1")
            }
            try raw.close()
            #expect(secondRefund == .refusedByRule)
        }
    }
}
