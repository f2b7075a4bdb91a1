public import Foundation

/// The window scene a StoreKit sheet is shown in (UIKit's `UIWindowScene`). Linux has no
/// windows, and no UIKit: this stand-in lets code that hands a scene to StoreKit compile
/// unchanged. Make one with `UIWindowScene()`; the store records each sheet instead of showing
/// it (see `SKTestSession.reviewRequestCount` and its siblings).
public final class UIWindowScene: Sendable {
    /// A scene to pass to StoreKit's sheets.
    public init() {}
}

extension AppStore {
    /// Asks for a review of the app: recorded (`SKTestSession.reviewRequestCount`), as there is
    /// no review prompt on Linux. Like StoreKit's, it never fails; a store that cannot be opened
    /// records nothing.
    @MainActor public static func requestReview(in scene: UIWindowScene) {
        (try? StoreContext.current())?.presentations.recordReviewRequest()
    }

    /// Shows the App Store's subscription management: recorded
    /// (`SKTestSession.manageSubscriptionsRequests`, with no group), as there is no sheet on
    /// Linux; returns at once, as when the user closes it.
    /// - Throws: `StoreKitError.systemError` when the store cannot be opened; the error a test
    ///   simulates for `.manageSubscriptions`.
    @MainActor public static func showManageSubscriptions(in scene: UIWindowScene) async throws {
        try present(.manageSubscriptions) { $0.recordManageSubscriptions(group: nil) }
    }

    /// `showManageSubscriptions(in:)` for one subscription group, recorded with it.
    @MainActor public static func showManageSubscriptions(
        in scene: UIWindowScene, subscriptionGroupID: String
    )
        async throws
    {
        try present(.manageSubscriptions) { $0.recordManageSubscriptions(group: subscriptionGroupID) }
    }

    /// Shows the sheet where the user redeems an offer code: recorded
    /// (`SKTestSession.offerCodeRedeemSheetCount`), as there is no sheet on Linux; returns at
    /// once, as when the user closes it without redeeming.
    /// - Throws: `StoreKitError.systemError` when the store cannot be opened; the error a test
    ///   simulates for `.offerCodeRedeem`.
    @MainActor public static func presentOfferCodeRedeemSheet(in scene: UIWindowScene) async throws {
        try present(.offerCodeRedeem) { $0.recordOfferCodeRedeemSheet() }
    }

    /// Records a sheet in the current store, unless a test simulates an error for `api`.
    private static func present(_ api: SimulatedFailures.API, record: (Presentations) -> Void) throws {
        let context: StoreContext
        do { context = try StoreContext.current() } catch { throw StoreKitError.systemError(error) }
        try context.failures.check(api)
        record(context.presentations)
    }
}

/// Asks for a review of the app (StoreKit 1's `SKStoreReviewController`).
///
/// Sendable by hand: it has no state (its methods are class methods).
open class SKStoreReviewController: NSObject, @unchecked Sendable {
    /// Asks for a review: recorded (`SKTestSession.reviewRequestCount`), as there is no review
    /// prompt on Linux.
    open class func requestReview() {
        (try? StoreContext.current())?.presentations.recordReviewRequest()
    }

    /// `requestReview()` in a scene.
    @MainActor open class func requestReview(in windowScene: UIWindowScene) {
        requestReview()
    }
}
