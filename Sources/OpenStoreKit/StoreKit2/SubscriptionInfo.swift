public import Foundation
import StoreLedger

extension Product {
    /// What makes an auto-renewable subscription one (`Product.SubscriptionInfo`).
    public struct SubscriptionInfo: Hashable, Sendable {
        /// The identifier of the subscription group the product belongs to.
        public let subscriptionGroupID: String
        /// The length of one regular renewal period.
        public let subscriptionPeriod: Product.SubscriptionPeriod
        /// The introductory offer, if the catalog has one; `isEligibleForIntroOffer` says whether the
        /// user may still get it.
        public let introductoryOffer: Product.SubscriptionOffer?
        /// The promotional offers, redeemed with a signed `promotionalOffer` purchase option.
        public let promotionalOffers: [Product.SubscriptionOffer]
        /// The win-back offers, for churned subscribers: every one the catalog has, whatever the
        /// customer's eligibility (`RenewalInfo.eligibleWinBackOfferIDs` says which they may
        /// redeem); redeemed with the `winBackOffer(_:)` purchase option.
        public let winBackOffers: [Product.SubscriptionOffer]
        /// The level in the group: 1 is the highest service.
        public let groupLevel: Int
        /// The subscription group's name, as the catalog gives it.
        public let groupDisplayName: String

        init(_ info: StoreLedger.SubscriptionInfo, presentation: ProductPresentation) {
            subscriptionGroupID = info.groupID
            subscriptionPeriod = Product.SubscriptionPeriod(info.period)
            introductoryOffer = info.introductoryOffer.map {
                .init($0, type: .introductory, presentation: presentation)
            }
            promotionalOffers = info.promotionalOffers.map { .init($0, type: .promotional, presentation: presentation) }
            winBackOffers = info.winBackOffers.map { .init($0.offer, type: .winBack, presentation: presentation) }
            groupLevel = info.level
            groupDisplayName = info.groupName
        }

        /// Whether the user may still get the group's introductory offer: once per group, so
        /// only while nothing of the group was ever bought.
        public var isEligibleForIntroOffer: Bool {
            get async { await Self.isEligibleForIntroOffer(for: subscriptionGroupID) }
        }

        /// Whether the user may still get the introductory offer of `groupID`: only while nothing of the
        /// group was ever bought; false when the ledger cannot be read.
        public static func isEligibleForIntroOffer(for groupID: String) async -> Bool {
            guard let context = try? StoreContext.current() else { return false }
            return (try? context.ledger.isEligibleForIntroductoryOffer(group: groupID)) ?? false
        }

        /// The group's statuses: one per subscription the customer holds of it (their own, then
        /// those family members share), none when never bought. Give service for the highest
        /// level among those subscribed, as Apple advises.
        public var status: [Status] {
            get async throws { try await Self.status(for: subscriptionGroupID) }
        }

        /// - Throws: `StoreKitError.systemError` when the store's ledger cannot be read, or for
        ///   an unknown group; the error a test simulates for `.subscriptionStatus`.
        public static func status(for groupID: String) async throws -> [Status] {
            try readStatus { context in
                try context.ledger.subscriptionStatuses(forGroup: groupID).map { Status($0, origin: context.origin) }
            }
        }

        /// The status of the subscription transaction `transactionID` belongs to (the customer's
        /// own, or one a family member shares); `nil` when the store has no such transaction or
        /// it is not an auto-renewable subscription's.
        /// - Throws: `StoreKitError.systemError` when the store's ledger cannot be read; the
        ///   error a test simulates for `.subscriptionStatus`.
        public static func status(transactionID: UInt64) async throws -> Status? {
            try readStatus { context in
                guard let transaction = try context.ledger.transaction(transactionID),
                    transaction.productType == .autoRenewable, let group = transaction.subscriptionGroupID
                else { return nil }
                // The customer's own subscription, or the share whose chain the transaction is in.
                let sharedOriginal = try context.ledger.isFamilyShared(transaction) ? transaction.originalID : nil
                return try context.ledger.subscriptionStatuses(forGroup: group).first {
                    $0.sharedOriginalID == sharedOriginal
                }.map { Status($0, origin: context.origin) }
            }
        }

        /// Reads a status from the current store, with StoreKit's errors.
        private static func readStatus<Value>(_ read: (StoreContext) throws -> Value) throws -> Value {
            let context: StoreContext
            do { context = try StoreContext.current() } catch { throw StoreKitError.systemError(error) }
            try context.failures.check(.subscriptionStatus)
            do { return try read(context) } catch { throw StoreKitError.systemError(error) }
        }

        /// A subscription's state (`Product.SubscriptionInfo.RenewalState`), with StoreKit's raw values.
        public struct RenewalState: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
            public let rawValue: Int
            public init(rawValue: Int) { self.rawValue = rawValue }
            /// The subscription is active and entitles the user.
            public static let subscribed = RenewalState(rawValue: 1)
            /// The subscription ended; `RenewalInfo.expirationReason` says why.
            public static let expired = RenewalState(rawValue: 2)
            /// A renewal failed on a billing issue and the store keeps retrying; no entitlement meanwhile.
            public static let inBillingRetryPeriod = RenewalState(rawValue: 3)
            /// A renewal failed on a billing issue, but the user keeps access for a grace period while the
            /// store retries.
            public static let inGracePeriod = RenewalState(rawValue: 4)
            /// The purchase was refunded or revoked; no entitlement.
            public static let revoked = RenewalState(rawValue: 5)

            init(_ state: SubscriptionStatus.RenewalState) {
                self =
                    switch state {
                    case .subscribed: .subscribed
                    case .expired: .expired
                    case .inBillingRetryPeriod: .inBillingRetryPeriod
                    case .inGracePeriod: .inGracePeriod
                    case .revoked: .revoked
                    }
            }

            public var description: String {
                switch self {
                case .subscribed: "subscribed"
                case .expired: "expired"
                case .inBillingRetryPeriod: "inBillingRetryPeriod"
                case .inGracePeriod: "inGracePeriod"
                case .revoked: "revoked"
                default: "RenewalState(\(rawValue))"
                }
            }
        }

        /// A subscription group's status (`Product.SubscriptionInfo.Status`).
        public struct Status: Hashable, Sendable {
            /// The group's renewal state now.
            public let state: RenewalState
            /// The latest transaction of the group.
            public let transaction: VerificationResult<Transaction>
            /// How the subscription renews, verified like the transaction.
            public let renewalInfo: VerificationResult<RenewalInfo>

            init(_ status: SubscriptionStatus, origin: Transaction.Origin) {
                state = RenewalState(status.state)
                transaction = origin.result(status.transaction)
                renewalInfo = origin.result(status)
            }

            /// A group's status each time it changes from now on: a renewal, an expiry, billing
            /// retry or its grace period beginning or ending, a refund, auto-renew turned off or
            /// on, a pending change of product. A sequence starts with the next change (read
            /// `status(for:)` for the current one); changes made by other processes are seen
            /// within a second.
            public static var updates: Statuses { Statuses() }

            /// The statuses of every subscription group the user ever bought, one element per
            /// group (in the order of their identifiers) with a status per subscription held,
            /// then the sequence ends; it ends at
            /// once when the store's ledger cannot be read or a test simulates an error for
            /// `.subscriptionStatus`.
            public static var all: AsyncStream<(groupID: String, statuses: [Status])> {
                let statuses: [(groupID: String, statuses: [Status])]
                if let context = try? StoreContext.current(), (try? context.failures.check(.subscriptionStatus)) != nil,
                    let rows = try? context.ledger.subscriptionStatuses()
                {
                    statuses = Dictionary(grouping: rows, by: \.groupID).sorted { $0.key < $1.key }.map { group in
                        (group.key, group.value.map { Status($0, origin: context.origin) })
                    }
                } else {
                    statuses = []
                }
                return AsyncStream { continuation in
                    for status in statuses { continuation.yield(status) }
                    continuation.finish()
                }
            }

            /// An asynchronous sequence of subscription statuses (`Status.Statuses`): those
            /// of `Status.updates`.
            public struct Statuses: AsyncSequence, Sendable {
                public typealias Element = Status
                public typealias Failure = Never

                public func makeAsyncIterator() -> AsyncStream<Status>.Iterator {
                    guard let context = try? StoreContext.current() else {
                        return AsyncStream<Status> { $0.finish() }.makeAsyncIterator()
                    }
                    return context.subscriptionStatusUpdates.listen().makeAsyncIterator()
                }
            }
        }

        /// How the subscription renews (`Product.SubscriptionInfo.RenewalInfo`).
        public struct RenewalInfo: Hashable, Sendable {
            /// Why a subscription expired (`RenewalInfo.ExpirationReason`), with StoreKit's raw values.
            public struct ExpirationReason: RawRepresentable, Hashable, Sendable {
                public let rawValue: Int
                public init(rawValue: Int) { self.rawValue = rawValue }
                /// The user turned auto-renewal off.
                public static let autoRenewDisabled = ExpirationReason(rawValue: 1)
                /// A renewal could not be charged and billing retry did not succeed.
                public static let billingError = ExpirationReason(rawValue: 2)
                /// The user did not accept a price increase.
                public static let didNotConsentToPriceIncrease = ExpirationReason(rawValue: 3)
                /// The product was no longer for sale when it was due to renew.
                public static let productUnavailable = ExpirationReason(rawValue: 4)
                /// Any other reason.
                public static let unknown = ExpirationReason(rawValue: 5)
            }

            /// The id of the first purchase of the subscription's chain.
            public let originalTransactionID: UInt64
            /// The product of the group's latest transaction: the subscription the user has now.
            public let currentProductID: String
            /// Whether the subscription renews at the end of its period.
            public let willAutoRenew: Bool
            /// The product the next renewal charges.
            public let autoRenewPreference: String?
            /// Why the subscription expired; `nil` while it has not.
            public let expirationReason: ExpirationReason?
            /// Whether the store is retrying a renewal that failed on a billing issue.
            public let isInBillingRetry: Bool
            /// When the billing grace period ends; `nil` outside one.
            public let gracePeriodExpirationDate: Date?
            /// When the subscription renews next; `nil` when it will not.
            public let renewalDate: Date?
            /// Where the subscription lives: the store's `environment` setting, `.xcode` (local
            /// testing) by default.
            public let environment: AppStore.Environment
            /// When the store signed this information: here, when it last changed the group's latest
            /// transaction in the ledger.
            public let signedDate: Date
            /// Whether a price increase waits for the next renewal, and whether the user agreed
            /// to it (`SKTestSession.requestPriceIncreaseConsentForTransaction(identifier:)`).
            public let priceIncreaseStatus: PriceIncreaseStatus
            /// The offer the next renewal is charged at, while the subscription will renew: the
            /// rest of a pay-as-you-go offer, or a promotional offer or offer code redeemed
            /// while subscribed; `nil` when none.
            public let offer: Transaction.Offer?
            /// The kind of `offer` (deprecated in StoreKit for `offer`).
            public var offerType: Transaction.OfferType? { offer?.type }
            /// The identifier of `offer` (deprecated in StoreKit for `offer`).
            public var offerID: String? { offer?.id }
            /// What the next renewal charges, in units of `currency`: a price increase's price,
            /// else the price the subscriber pays already, else the catalog's price of the
            /// product it renews to; `nil` when the catalog has no price for it.
            public let renewalPrice: Decimal?
            /// The currency of `renewalPrice`: the storefront's of the latest transaction.
            public let currency: Locale.Currency?
            /// The app account token of the group's latest transaction.
            public let appAccountToken: UUID?
            /// When the run of paid periods without a gap of more than 60 days that reaches the
            /// latest one began.
            public let recentSubscriptionStartDate: Date
            /// The win-back offers the user may redeem now, best first: those of the latest
            /// period's product while the subscription is churned (expired, not renewing, not in
            /// billing retry), by each offer's rules; empty otherwise.
            public let eligibleWinBackOfferIDs: [String]
            /// The app download's transaction identifier (see `Transaction.appTransactionID`);
            /// empty when the store could not sign.
            public let appTransactionID: String
            /// The JWS the store signed this information in.
            let signed: SignedForm
            /// The signed payload's JSON: the renewal info as the App Store signs it (the fields of
            /// `JWSRenewalInfoDecodedPayload`); empty when the store could not sign it.
            public var jsonRepresentation: Data { signed.payload }

            /// `status` signed as `signed` (`nil` when the store could not sign); what the
            /// signature adds is read from the payload value, not parsed back from its JSON.
            init(_ status: SubscriptionStatus, signed: (jws: JWS, payload: RenewalInfoPayload)?) {
                self.signed = SignedForm(jws: signed?.jws)
                originalTransactionID = status.transaction.originalID
                currentProductID = status.transaction.productID
                willAutoRenew = status.willAutoRenew
                autoRenewPreference = status.autoRenewProductID
                expirationReason = status.expirationReason.map {
                    switch $0 {
                    case .autoRenewDisabled: .autoRenewDisabled
                    case .billingError: .billingError
                    case .didNotConsentToPriceIncrease: .didNotConsentToPriceIncrease
                    case .productUnavailable: .productUnavailable
                    case .unknown: .unknown
                    }
                }
                isInBillingRetry = status.isInBillingRetry
                gracePeriodExpirationDate = status.gracePeriodExpirationDate
                renewalDate = status.renewalDate
                let payload = signed?.payload
                environment = SignedForm.environment(payload?.environment)
                signedDate = status.transaction.updatedAt
                priceIncreaseStatus =
                    switch payload?.priceIncreaseStatus {
                    case 0?: .pending
                    case 1?: .agreed
                    default: .noIncreasePending
                    }
                offer = status.renewalOffer.map(Transaction.Offer.init)
                renewalPrice = payload?.renewalPrice.map { Decimal($0) / 1000 }
                currency = payload?.currency.map { Locale.Currency($0) }
                appAccountToken = status.transaction.appAccountToken
                recentSubscriptionStartDate =
                    payload?.recentSubscriptionStartDate.map(Date.init(ledgerMilliseconds:))
                    ?? status.transaction.originalPurchaseDate
                eligibleWinBackOfferIDs = status.eligibleWinBackOfferIDs
                appTransactionID = payload?.appTransactionId ?? ""
            }

            /// Whether the user agreed to a price increase (`RenewalInfo.PriceIncreaseStatus`).
            public enum PriceIncreaseStatus: Hashable, Sendable {
                /// No price increase waits for the next renewal.
                case noIncreasePending
                /// The user agreed to the coming price increase, or it needs no consent.
                case agreed
                /// The store asked the user to agree to a price increase, who has not consented
                /// (a user who declined has not consented either).
                case pending
            }
        }
    }
}
