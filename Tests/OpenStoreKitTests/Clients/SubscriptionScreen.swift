import Foundation

// A subscription settings screen's model, written the way apps use StoreKit 2's newer API
// (our own code): it watches the subscription status, shows what the next renewal costs,
// and opens the App Store's sheets. Only the import differs from the Apple-platform build.
#if canImport(StoreKit)
import StoreKit
#else
import OpenStoreKit
#endif

@MainActor
final class SubscriptionScreen {
    /// The states `Status.updates` reported, in order.
    private(set) var reportedStates: [Product.SubscriptionInfo.RenewalState] = []
    /// "Renews at 3.99 USD", or why it does not.
    private(set) var renewalLine = ""
    private var watcher: Task<Void, Never>?
    /// App Store messages held until the screen can show them (an app delays them rather
    /// than interrupt what the user does).
    private(set) var heldMessages: [Message] = []
    private var messageListener: Task<Void, Never>?

    /// Starts watching the status, as a screen does when it appears.
    func appear() {
        watcher = Task { [weak self] in
            for await status in Product.SubscriptionInfo.Status.updates {
                self?.show(status)
            }
        }
    }

    func disappear() {
        watcher?.cancel()
    }

    private func show(_ status: Product.SubscriptionInfo.Status) {
        reportedStates.append(status.state)
        guard case .verified(let info) = status.renewalInfo else {
            renewalLine = "unverified"
            return
        }
        if info.willAutoRenew, info.priceIncreaseStatus == .pending, let price = info.renewalPrice {
            renewalLine = "Agree to the new price (\(price)) to keep your subscription"
        } else if info.willAutoRenew, let price = info.renewalPrice, let currency = info.currency {
            renewalLine = "Renews at \(price) \(currency.identifier)"
        } else {
            renewalLine = "Does not renew"
        }
    }

    /// Listens for App Store messages from launch on, holding them for `showHeldMessages`.
    func holdMessages() {
        messageListener = Task { [weak self] in
            for await message in Message.messages {
                self?.heldMessages.append(message)
            }
        }
    }

    /// Shows the held messages, now that nothing would be interrupted.
    func showHeldMessages(in scene: UIWindowScene) {
        for message in heldMessages {
            try? message.display(in: scene)
        }
        heldMessages = []
    }

    /// How long a plan lasts, as a plan picker says it: "every 1 month (per month)".
    func periodLine(for product: Product) -> String? {
        guard let period = product.subscription?.subscriptionPeriod else { return nil }
        let length = period.formatted(product.subscriptionPeriodFormatStyle)
        return "every \(length) (per \(period.unit.formatted(product.subscriptionPeriodUnitFormatStyle)))"
    }

    /// The offer a "Come back" banner shows a churned subscriber: the best win-back offer of
    /// `product` they may redeem now, if any.
    func comeBackOffer(for product: Product) async -> Product.SubscriptionOffer? {
        guard let subscription = product.subscription,
            let status = try? await subscription.status.first,
            case .verified(let info) = status.renewalInfo,
            let best = info.eligibleWinBackOfferIDs.first
        else { return nil }
        return subscription.winBackOffers.first { $0.id == best }
    }

    /// The banner's button: subscribes again at the offer. Returns whether it did.
    func comeBack(to product: Product, with offer: Product.SubscriptionOffer) async -> Bool {
        guard case .success(.verified(let transaction))? = try? await product.purchase(options: [.winBackOffer(offer)])
        else { return false }
        await transaction.finish()
        return true
    }

    /// Every group's state now, as a screen reads it on appearing.
    func currentStates() async -> [String: Product.SubscriptionInfo.RenewalState] {
        var states: [String: Product.SubscriptionInfo.RenewalState] = [:]
        for await (groupID, statuses) in Product.SubscriptionInfo.Status.all {
            states[groupID] = statuses.first?.state
        }
        return states
    }

    /// The "Manage" button.
    func manage(groupID: String, in scene: UIWindowScene) async -> Bool {
        do {
            try await AppStore.showManageSubscriptions(in: scene, subscriptionGroupID: groupID)
            return true
        } catch {
            return false
        }
    }

    /// Asks for a review once the subscription renewed at least once: its current period began
    /// a week or more after the run of periods began.
    func askForReviewIfLoyal(in scene: UIWindowScene) async {
        guard let status = try? await Product.SubscriptionInfo.status(for: "70000100").first,
            case .verified(let info) = status.renewalInfo, case .verified(let period) = status.transaction,
            period.purchaseDate.timeIntervalSince(info.recentSubscriptionStartDate) >= 7 * 86_400
        else { return }
        AppStore.requestReview(in: scene)
    }
}
