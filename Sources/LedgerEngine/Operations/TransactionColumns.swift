package import GRDB

/// The columns of `transactions`, in the table's order: the one list the row decoder
/// (`PaymentTransaction(_:)`), the hash chain's digests and the reads that feed both take their
/// columns from. `HashChainTests` compares it with the schema.
package enum TransactionColumns {
    package static let names = [
        "id", "original_id", "product_id", "product_type", "state", "is_finished", "quantity", "purchase_date",
        "original_purchase_date", "expiration_date", "revocation_date", "revocation_reason", "is_upgraded",
        "app_account_token", "error_code", "error_message", "reason", "subscription_group_id", "storefront",
        "environment", "idempotency_key", "planned_state", "planned_error_code", "planned_error_message", "created_at",
        "updated_at", "finished_at", "delivery_count", "last_delivered_at", "restored_from", "application_username",
        "offer_type", "offer_id", "offer_payment_mode", "offer_period", "offer_nonce", "customer_id",
        "app_id",
    ]

    /// Every column, from the table.
    package static let selection = "SELECT " + names.joined(separator: ", ") + " FROM transactions"

    /// The position of the column `name` in `names` (and in `selection`'s rows). Read once into
    /// `Positions`: the decoder reads many rows, by position, as looking columns up by name
    /// would be most of a read's cost.
    package static func position(_ name: String) -> Int32 {
        guard let index = names.firstIndex(of: name) else {
            preconditionFailure("transactions has no column \(name)")
        }
        return Int32(index)
    }

    /// Each column's position, by the name the decoder knows it by.
    package struct Positions {
        package let id = position("id"), originalID = position("original_id"), productID = position("product_id")
        package let productType = position("product_type"), state = position("state"),
            isFinished = position("is_finished")
        package let quantity = position("quantity"), purchaseDate = position("purchase_date")
        package let originalPurchaseDate = position("original_purchase_date"),
            expirationDate = position("expiration_date")
        package let revocationDate = position("revocation_date"), revocationReason = position("revocation_reason")
        package let isUpgraded = position("is_upgraded"), appAccountToken = position("app_account_token")
        package let errorCode = position("error_code"), errorMessage = position("error_message"),
            reason = position("reason")
        package let subscriptionGroupID = position("subscription_group_id"), storefront = position("storefront")
        package let environment = position("environment"), idempotencyKey = position("idempotency_key")
        package let plannedState = position("planned_state"), plannedErrorCode = position("planned_error_code")
        package let plannedErrorMessage = position("planned_error_message"), createdAt = position("created_at")
        package let updatedAt = position("updated_at"), finishedAt = position("finished_at")
        package let deliveryCount = position("delivery_count"), lastDeliveredAt = position("last_delivered_at")
        package let restoredFrom = position("restored_from"), applicationUsername = position("application_username")
        package let offerType = position("offer_type"), offerID = position("offer_id")
        package let offerPaymentMode = position("offer_payment_mode"), offerPeriod = position("offer_period")
        package let offerNonce = position("offer_nonce"), customerID = position("customer_id")
        package let appID = position("app_id")
    }

    package static let positions = Positions()

    // MARK: - Inserting

    /// The columns a restored copy is written with (`restoredCopy`), in the table's order; the
    /// others start at the table's defaults (not finished, not revoked, no error, never delivered).
    package static let inserted = names.filter { !startAtTheirDefault.contains($0) }

    /// The columns a restored copy leaves to the table's defaults.
    package static let startAtTheirDefault: Set = [
        "is_finished", "revocation_date", "revocation_reason", "error_code", "error_message", "finished_at",
        "delivery_count", "last_delivered_at",
    ]

    /// Inserts one row, every column given: parameter `n` is `names[n - 1]`.
    package static let insertion =
        "INSERT INTO transactions (" + names.joined(separator: ", ") + ") VALUES ("
        + Array(repeating: "?", count: names.count).joined(separator: ", ") + ")"

    /// What a restored copy takes instead of its source's column: SQL, and the values of its
    /// parameters (`now`: the store's time; `firstID`: the first copy's id). Every other
    /// inserted column is copied from the source.
    package static func restoredCopy(
        _ name: String, now: Int64, firstID: UInt64
    ) -> (sql: String, values: [DatabaseValue])? {
        switch name {
        case "id": ("? - 1 + ROW_NUMBER() OVER (ORDER BY id)", [Int64(firstID).databaseValue])
        case "state": ("'restored'", [])
        case "reason": ("'purchase'", [])
        case "purchase_date", "created_at", "updated_at": ("?", [now.databaseValue])
        case "environment": ("?", [Ledger.environment.databaseValue])
        case "restored_from": ("id", [])
        // A copy is the store's, made now: no key, no plan, no nonce of its own.
        case "idempotency_key", "planned_state", "planned_error_code", "planned_error_message", "offer_nonce":
            ("NULL", [])
        default: nil
        }
    }
}
