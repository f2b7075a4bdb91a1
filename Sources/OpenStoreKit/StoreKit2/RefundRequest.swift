public import Foundation
import StoreLedger

extension Transaction {
    /// What the user did with the refund request sheet (`Transaction.RefundRequestStatus`).
    public enum RefundRequestStatus: Sendable, Hashable {
        /// The user closed the sheet without asking.
        case userCancelled
        /// The user asked for the refund: the App Store will decide it.
        case success
    }

    /// Why a refund request could not be made (`Transaction.RefundRequestError`).
    public enum RefundRequestError: Error, Sendable, Hashable, LocalizedError {
        /// A refund of the transaction was asked for already and is not decided yet.
        case duplicateRequest
        /// The request failed: the transaction is unknown, not a purchase the store took, or
        /// refunded already.
        case failed

        public var errorDescription: String? {
            switch self {
            case .duplicateRequest: "A refund of this transaction was requested already."
            case .failed: "The refund request failed."
            }
        }
    }

    /// Shows the sheet where the user asks for the refund of transaction `transactionID`. Linux
    /// has no sheet: the user answers at once as the test session says
    /// (`SKTestSession.refundRequestSheetAnswer`): by default, asks for the reason "other" (the
    /// App Store's decision comes later: `SKTestSession.approveRefundRequest(identifier:)` or
    /// `declineRefundRequest(identifier:)`, or `ledger refund-requests`), or closes the sheet
    /// (`.userCancelled`, nothing recorded). A granted refund arrives in `Transaction.updates`
    /// as a revoked transaction.
    /// - Throws: `RefundRequestError.duplicateRequest` while an earlier request waits;
    ///   `.failed` for an unknown, failed, pending or refunded transaction;
    ///   `StoreKitError.systemError` when the store's ledger cannot be written; the error a
    ///   test simulates for `.refundRequest`.
    @MainActor public static func beginRefundRequest(
        for transactionID: UInt64, in scene: UIWindowScene
    ) async throws -> RefundRequestStatus {
        let context: StoreContext
        do { context = try StoreContext.current() } catch { throw StoreKitError.systemError(error) }
        try context.failures.check(.refundRequest)
        if context.presentations.refundSheetIsClosed { return .userCancelled }
        do {
            _ = try await context.queue.perform(.requestRefund(transactionID, reason: .other))
        } catch StoreControlError.refundRequestPending {
            throw RefundRequestError.duplicateRequest
        } catch is StoreControlError, is PaymentQueueError {
            throw RefundRequestError.failed
        } catch {
            throw StoreKitError.systemError(error)
        }
        context.storeDidChange()
        return .success
    }

    /// `beginRefundRequest(for:in:)` of this transaction.
    @MainActor public func beginRefundRequest(in scene: UIWindowScene) async throws -> RefundRequestStatus {
        try await Self.beginRefundRequest(for: id, in: scene)
    }
}
