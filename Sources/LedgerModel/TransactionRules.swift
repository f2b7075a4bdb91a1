/// The rules of a transaction's life, in one table: the states it may be
/// created in, the state changes allowed, the states that may be finished or refunded, and the
/// history events that apply to subscriptions only.
///
/// `TransactionState`, the writer's checks, `verify` and the crash oracle read this table; the
/// database holds the same rows (migration 0007, tables `rule_*`), which its triggers read, so
/// that no caller can bypass them. `TransactionRuleTests` checks, case by case, that the
/// database answers as this table does.
package enum TransactionRules {
    /// A change of state: `from` -> `to`.
    package struct Transition: Hashable, Sendable {
        /// The state before the change.
        package let from: TransactionState
        /// The state after the change.
        package let to: TransactionState

        /// The change from `from` to `to`.
        package init(_ from: TransactionState, _ to: TransactionState) {
            self.from = from
            self.to = to
        }
    }

    /// The states a transaction may be created in: a payment starts `purchasing`; a renewal or
    /// a replacement purchase is `purchased`; a restore's copy is `restored`.
    package static let initialStates: Set<TransactionState> = [.purchasing, .purchased, .restored]

    /// The changes of state allowed; every other is refused (a state never changes back).
    package static let transitions: Set<Transition> = [
        Transition(.purchasing, .purchased), Transition(.purchasing, .failed), Transition(.purchasing, .deferred),
        Transition(.deferred, .purchased), Transition(.deferred, .failed),
    ]

    /// The states in which the app may finish a transaction.
    package static let finishable: Set<TransactionState> = [.purchased, .failed, .restored]

    /// The states in which a transaction may be refunded (once), and its refund reversed.
    package static let revocable: Set<TransactionState> = [.purchased, .restored]

    /// History events that only auto-renewable subscriptions have.
    package static let subscriptionOnlyEvents: Set<TransactionEvent.Kind> = [.expirationChanged, .upgraded]

    /// Whether a history row (`kind`, from `from` to `to`) is legal for a transaction of
    /// `productType`: `created` enters an initial state from nothing; `stateChanged` is a legal
    /// transition; every other event keeps the state, `finished` in a finishable state,
    /// `revoked` and `reinstated` in a revocable one, subscription events on subscriptions only.
    package static func allowsEvent(
        _ kind: TransactionEvent.Kind, from: TransactionState?, to: TransactionState, productType: ProductType
    ) -> Bool {
        if subscriptionOnlyEvents.contains(kind), productType != .autoRenewable { return false }
        switch kind {
        case .created: return from == nil && initialStates.contains(to)
        case .stateChanged: return from.map { transitions.contains(Transition($0, to)) } ?? false
        case .finished: return from == to && finishable.contains(to)
        case .revoked, .reinstated: return from == to && revocable.contains(to)
        case .delivered, .expirationChanged, .upgraded, .deleted: return from == to
        }
    }
}
