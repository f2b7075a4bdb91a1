public import Foundation
import StoreLedger

extension Product {
    /// What makes an auto-renewable subscription one (`Product.SubscriptionInfo`).
    public struct SubscriptionInfo: Hashable, Sendable {
        public let subscriptionGroupID: String
        public let subscriptionPeriod: Product.SubscriptionPeriod
        public let introductoryOffer: Product.SubscriptionOffer?
        public let promotionalOffers: [Product.SubscriptionOffer]
        /// Win-back offers are not simulated: always empty.
        public let winBackOffers: [Product.SubscriptionOffer] = []
        /// The level in the group: 1 is the highest service.
        public let groupLevel: Int
        public let groupDisplayName: String

        init(_ info: StoreLedger.SubscriptionInfo, presentation: ProductPresentation) {
            subscriptionGroupID = info.groupID
            subscriptionPeriod = Product.SubscriptionPeriod(info.period)
            introductoryOffer = info.introductoryOffer.map { .init($0, type: .introductory, presentation: presentation) }
            promotionalOffers = info.promotionalOffers.map { .init($0, type: .promotional, presentation: presentation) }
            groupLevel = info.level
            groupDisplayName = info.groupName
        }

        /// Whether the user may still get the group's introductory offer: once per group, so
        /// only while nothing of the group was ever bought.
        public var isEligibleForIntroOffer: Bool {
            get async { await Self.isEligibleForIntroOffer(for: subscriptionGroupID) }
        }

        public static func isEligibleForIntroOffer(for groupID: String) async -> Bool {
            guard let context = try? StoreContext.current() else { return false }
            return (try? context.ledger.isEligibleForIntroductoryOffer(group: groupID)) ?? false
        }

        /// The group's status: one entry (the ledger has one account), none when never bought.
        public var status: [Status] {
            get async throws { try await Self.status(for: subscriptionGroupID) }
        }

        /// - Throws: `StoreKitError.systemError` when the store's ledger cannot be read, or for
        ///   an unknown group; the error a test simulates for `.subscriptionStatus`.
        public static func status(for groupID: String) async throws -> [Status] {
            let context: StoreContext
            do { context = try StoreContext.current() } catch { throw StoreKitError.systemError(error) }
            try context.failures.check(.subscriptionStatus)
            do {
                return try context.ledger.subscriptionStatus(forGroup: groupID).map { [Status($0, origin: context.origin)] } ?? []
            } catch {
                throw StoreKitError.systemError(error)
            }
        }

        /// A subscription's state (`Product.SubscriptionInfo.RenewalState`), with StoreKit's raw values.
        public struct RenewalState: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
            public let rawValue: Int
            public init(rawValue: Int) { self.rawValue = rawValue }
            public static let subscribed = RenewalState(rawValue: 1)
            public static let expired = RenewalState(rawValue: 2)
            public static let inBillingRetryPeriod = RenewalState(rawValue: 3)
            public static let inGracePeriod = RenewalState(rawValue: 4)
            public static let revoked = RenewalState(rawValue: 5)

            init(_ state: SubscriptionStatus.RenewalState) {
                self = switch state {
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
            public let state: RenewalState
            /// The latest transaction of the group.
            public let transaction: VerificationResult<Transaction>
            public let renewalInfo: VerificationResult<RenewalInfo>

            init(_ status: SubscriptionStatus, origin: Transaction.Origin) {
                state = RenewalState(status.state)
                transaction = origin.result(status.transaction)
                renewalInfo = origin.failures.verify(RenewalInfo(status))
            }
        }

        /// How the subscription renews (`Product.SubscriptionInfo.RenewalInfo`).
        public struct RenewalInfo: Hashable, Sendable {
            public struct ExpirationReason: RawRepresentable, Hashable, Sendable {
                public let rawValue: Int
                public init(rawValue: Int) { self.rawValue = rawValue }
                public static let autoRenewDisabled = ExpirationReason(rawValue: 1)
                public static let billingError = ExpirationReason(rawValue: 2)
                public static let didNotConsentToPriceIncrease = ExpirationReason(rawValue: 3)
                public static let productUnavailable = ExpirationReason(rawValue: 4)
                public static let unknown = ExpirationReason(rawValue: 5)
            }

            public let originalTransactionID: UInt64
            public let currentProductID: String
            public let willAutoRenew: Bool
            /// The product the next renewal charges.
            public let autoRenewPreference: String?
            public let expirationReason: ExpirationReason?
            public let isInBillingRetry: Bool
            public let gracePeriodExpirationDate: Date?
            public let renewalDate: Date?
            public let environment: AppStore.Environment
            public let signedDate: Date

            init(_ status: SubscriptionStatus) {
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
                environment = .xcode
                signedDate = status.transaction.updatedAt
            }
        }
    }
}
