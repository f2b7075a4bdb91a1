package import Foundation

/// A change of the store that the App Store reports to the app's server with an App Store
/// Server Notification V2. `notification` is the one table from a change to Apple's
/// `notificationType` and `subtype` (docs/SERVER.md shows it).
package enum NotifiedEvent: String, Sendable, CaseIterable, Codable {
    /// The first subscription of a group bought.
    case subscribedFirstTime
    /// A subscription of a group bought again after it lapsed.
    case resubscribed
    /// An upgrade (or a crossgrade with the same period): it replaced the subscription now.
    case upgraded
    /// A downgrade (or a crossgrade with another period): it starts at the next renewal.
    case downgraded
    /// An offer code redeemed by a customer new to the subscription group.
    case offerRedeemedFirstTime
    /// A promotional offer redeemed to subscribe again after the subscription lapsed.
    case offerRedeemedToResubscribe
    /// A promotional offer redeemed with an upgrade.
    case offerRedeemedWithUpgrade
    /// A promotional offer redeemed with a downgrade.
    case offerRedeemedWithDowngrade
    /// A promotional offer redeemed for the active subscription.
    case offerRedeemedForActiveSubscription
    /// The product subscribed to bought again while a downgrade or crossgrade waited: the
    /// subscription renews to it, the change cancelled.
    case downgradeCancelled
    /// A subscription renewed.
    case renewed
    /// A subscription renewed once its billing issue was resolved.
    case renewedAfterBillingIssue
    /// Auto-renew turned on.
    case autoRenewTurnedOn
    /// Auto-renew turned off.
    case autoRenewTurnedOff
    /// A renewal failed on a billing issue: the store retries it.
    case renewalFailed
    /// A renewal failed on a billing issue: the store retries it, and the grace period keeps
    /// the subscriber's access meanwhile.
    case renewalFailedInGracePeriod
    /// The grace period ended with the billing issue unresolved.
    case gracePeriodEnded
    /// The subscription expired with auto-renew off (or expired by the store's control).
    case expiredVoluntarily
    /// The subscription expired when the billing retries were over.
    case expiredAfterBillingRetry
    /// The App Store asked the subscriber to consent to a price increase.
    case priceIncreasePending
    /// The subscriber consented to a price increase, or was told of one that needs no consent.
    case priceIncreaseAccepted
    /// The subscription expired: the subscriber did not consent to a price increase.
    case expiredAfterPriceIncrease
    /// A purchase refunded.
    case refunded
    /// The App Store reversed a purchase's refund, after a dispute the customer raised: the
    /// purchase entitles again.
    case refundReversed
    /// A purchase shared by a family member is no longer shared (the family member stopped
    /// sharing it, left the family, or was refunded).
    case familySharingRevoked
    /// A customer asked for the refund of a consumable or an auto-renewable subscription: the
    /// App Store asks the app's server for consumption information.
    case refundRequested
    /// The App Store declined a refund request.
    case refundDeclined
    /// A subscription's renewal date extended (Extend a Subscription Renewal Date, or a mass
    /// extension).
    case renewalExtended
    /// A mass extension of renewal dates done (its `summary`).
    case renewalExtensionSummary
    /// A consumable, a non-consumable or a non-renewing subscription bought.
    case oneTimeCharge
    /// A test notification asked for (Request a Test Notification).
    case test

    /// Apple's `notificationType` and `subtype` for this change: the one table.
    package var notification: (type: String, subtype: String?) {
        switch self {
        case .subscribedFirstTime: ("SUBSCRIBED", "INITIAL_BUY")
        case .resubscribed: ("SUBSCRIBED", "RESUBSCRIBE")
        case .upgraded: ("DID_CHANGE_RENEWAL_PREF", "UPGRADE")
        case .downgraded: ("DID_CHANGE_RENEWAL_PREF", "DOWNGRADE")
        case .offerRedeemedFirstTime: ("OFFER_REDEEMED", "INITIAL_BUY")
        case .offerRedeemedToResubscribe: ("OFFER_REDEEMED", "RESUBSCRIBE")
        case .offerRedeemedWithUpgrade: ("OFFER_REDEEMED", "UPGRADE")
        case .offerRedeemedWithDowngrade: ("OFFER_REDEEMED", "DOWNGRADE")
        case .offerRedeemedForActiveSubscription: ("OFFER_REDEEMED", nil)
        case .downgradeCancelled: ("DID_CHANGE_RENEWAL_PREF", nil)
        case .renewed: ("DID_RENEW", nil)
        case .renewedAfterBillingIssue: ("DID_RENEW", "BILLING_RECOVERY")
        case .autoRenewTurnedOn: ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED")
        case .autoRenewTurnedOff: ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED")
        case .renewalFailed: ("DID_FAIL_TO_RENEW", nil)
        case .renewalFailedInGracePeriod: ("DID_FAIL_TO_RENEW", "GRACE_PERIOD")
        case .gracePeriodEnded: ("GRACE_PERIOD_EXPIRED", nil)
        case .expiredVoluntarily: ("EXPIRED", "VOLUNTARY")
        case .expiredAfterBillingRetry: ("EXPIRED", "BILLING_RETRY")
        case .priceIncreasePending: ("PRICE_INCREASE", "PENDING")
        case .priceIncreaseAccepted: ("PRICE_INCREASE", "ACCEPTED")
        case .expiredAfterPriceIncrease: ("EXPIRED", "PRICE_INCREASE")
        case .refunded: ("REFUND", nil)
        case .refundReversed: ("REFUND_REVERSED", nil)
        case .familySharingRevoked: ("REVOKE", nil)
        case .refundRequested: ("CONSUMPTION_REQUEST", nil)
        case .refundDeclined: ("REFUND_DECLINED", nil)
        case .renewalExtended: ("RENEWAL_EXTENDED", nil)
        case .renewalExtensionSummary: ("RENEWAL_EXTENSION", "SUMMARY")
        case .oneTimeCharge: ("ONE_TIME_CHARGE", nil)
        case .test: ("TEST", nil)
        }
    }

    /// The change a subscription's purchase is, by how it starts (`SubscriptionStart`) and
    /// the offer it redeemed, if any (an introductory offer is not redeemed). A first purchase
    /// is `SUBSCRIBED`, unless it redeemed an offer code (promotional and win-back offers are
    /// only for a customer who subscribed before).
    package static func purchase(
        _ start: SubscriptionStart, redeeming offer: TransactionOffer.OfferType?
    ) -> NotifiedEvent {
        let redeemingOffer = offer == .promotional || offer == .code || offer == .winBack
        switch (start, redeemingOffer) {
        case (.firstTime, _): return offer == .code ? .offerRedeemedFirstTime : .subscribedFirstTime
        case (.resubscribe, false): return .resubscribed
        case (.upgrade, false): return .upgraded
        case (.downgrade, false): return .downgraded
        case (.resubscribe, true): return .offerRedeemedToResubscribe
        case (.upgrade, true): return .offerRedeemedWithUpgrade
        case (.downgrade, true): return .offerRedeemedWithDowngrade
        case (.sameProduct, _): return .offerRedeemedForActiveSubscription
        case (.keepsCurrentProduct, _): return .downgradeCancelled
        }
    }
}

/// How a subscription payment started, by the group's rules.
package enum SubscriptionStart: Sendable, Hashable {
    /// No subscription of the group was ever bought.
    case firstTime
    /// The group's subscription had lapsed.
    case resubscribe
    /// It replaced the active subscription now (a higher level, or the same level and period).
    case upgrade
    /// It takes effect at the next renewal (a lower level, or another period).
    case downgrade
    /// The product subscribed to already (only with a promotional offer: it applies at the next
    /// renewal).
    case sameProduct
    /// The product subscribed to already, while a change to another product waited: the change
    /// is cancelled.
    case keepsCurrentProduct
}

/// The outcome of one attempt to send a notification: Apple's `sendAttemptResult` values.
package enum SendAttemptResult: String, Sendable, CaseIterable, Codable {
    /// The server answered 200 to 206.
    case success = "SUCCESS"
    /// No answer within the attempt's timeout.
    case timedOut = "TIMED_OUT"
    /// The TLS handshake failed.
    case tlsIssue = "TLS_ISSUE"
    /// The redirects went round in a circle (or too far).
    case circularRedirect = "CIRCULAR_REDIRECT"
    /// No valid HTTP answer.
    case noResponse = "NO_RESPONSE"
    /// The connection failed (refused, reset, unreachable).
    case socketIssue = "SOCKET_ISSUE"
    /// The answer's character set is not supported.
    case unsupportedCharset = "UNSUPPORTED_CHARSET"
    /// The answer was not valid HTTP.
    case invalidResponse = "INVALID_RESPONSE"
    /// The server closed the connection before it answered.
    case prematureClose = "PREMATURE_CLOSE"
    /// The server answered with another status than 200 to 206.
    case unsuccessfulHTTPResponseCode = "UNSUCCESSFUL_HTTP_RESPONSE_CODE"
    /// Anything else.
    case other = "OTHER"
}

/// A notification in the ledger's outbox, with every attempt to send it.
package struct ServerNotification: Sendable, Hashable {
    /// Where a notification stands.
    package enum Status: String, Sendable, CaseIterable, Codable {
        /// Not sent yet, or to be retried at `nextAttemptDate`.
        case pending
        /// The server answered an attempt with HTTP 200 to 206.
        case delivered
        /// Every attempt (six) failed; it is not sent again.
        case failed
    }

    /// One attempt to send it.
    package struct Attempt: Sendable, Hashable {
        /// When, by the store's clock.
        package var date: Date
        /// How it went, in Apple's terms.
        package var result: SendAttemptResult
        /// The server's HTTP status, when it answered.
        package var httpStatus: Int?
        /// What happened, in words, when `result` does not say it all (a notification URL that
        /// cannot be used, a redirect not followed); at most `detailLimit` bytes.
        package var detail: String?

        /// An attempt made at `date` that ended with `result` (and the server's `httpStatus`),
        /// with its `detail`.
        package init(date: Date, result: SendAttemptResult, httpStatus: Int?, detail: String? = nil) {
            self.date = date
            self.result = result
            self.httpStatus = httpStatus
            self.detail = detail
        }

        /// The longest detail kept, in bytes.
        package static let detailLimit = 512
    }

    /// Its position in the outbox: the commit order.
    package var sequence: Int64
    /// Whether its record checks (`AuthenticatedRecords`): one changed outside the ledger is
    /// never sent (the sender records a failed attempt instead).
    package var isAuthentic = true
    /// The `notificationUUID`, the same in every attempt.
    package var uuid: UUID
    /// Apple's `notificationType`.
    package var type: String
    /// Apple's `subtype`, when it has one.
    package var subtype: String?
    /// The transaction it reports (absent for a test notification).
    package var transactionID: UInt64?
    /// The original transaction of `transactionID` (Notification History's filter).
    package var originalTransactionID: UInt64?
    /// When the change was committed, by the store's clock (the payload's `signedDate`).
    package var date: Date
    /// The JWS POSTed as `{"signedPayload": ...}`.
    package var signedPayload: String
    /// Where it stands.
    package var status: Status
    /// When the next attempt falls due by the store's clock, while pending.
    package var nextAttemptDate: Date?
    /// Every attempt to send it, oldest first.
    package var attempts: [Attempt]
    /// The app it is for (the key of its row in the store's apps), whose URL it is sent to.
    package var appID: Int64 = 1

    /// A notification with every field, as the outbox stores it.
    package init(
        sequence: Int64, uuid: UUID, type: String, subtype: String?, transactionID: UInt64?,
        originalTransactionID: UInt64?, date: Date, signedPayload: String, status: Status, nextAttemptDate: Date?,
        attempts: [Attempt], appID: Int64 = 1
    ) {
        self.sequence = sequence
        self.uuid = uuid
        self.type = type
        self.subtype = subtype
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.date = date
        self.signedPayload = signedPayload
        self.status = status
        self.nextAttemptDate = nextAttemptDate
        self.attempts = attempts
        self.appID = appID
    }

    /// How many attempts a notification gets: the first, then Apple's five retries.
    package static let attemptLimit = 6

    /// How long after the n-th failed attempt (1-based) the next is due: 1, 12, 24, 48 and 72
    /// hours (Apple's production schedule for version 2 notifications); `nil` after the sixth.
    package static func retryDelay(afterAttempt number: Int) -> TimeInterval? {
        let hours: [Double] = [1, 12, 24, 48, 72]
        guard (1...hours.count).contains(number) else { return nil }
        return hours[number - 1] * 3600
    }

    /// Whether an HTTP status counts as delivered (Apple: 200 to 206).
    package static func isSuccess(httpStatus: Int) -> Bool { (200...206).contains(httpStatus) }
}
