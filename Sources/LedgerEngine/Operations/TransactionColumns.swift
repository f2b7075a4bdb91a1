import GRDB

/// The columns of `transactions`, in the table's order: the one list the row decoder
/// (`PaymentTransaction(_:)`), the hash chain's digests and the reads that feed both take their
/// columns from. `HashChainTests` compares it with the schema.
enum TransactionColumns {
    static let names = [
        "id", "original_id", "product_id", "product_type", "state", "is_finished", "quantity", "purchase_date",
        "original_purchase_date", "expiration_date", "revocation_date", "revocation_reason", "is_upgraded",
        "app_account_token", "error_code", "error_message", "reason", "subscription_group_id", "storefront",
        "environment", "idempotency_key", "planned_state", "planned_error_code", "planned_error_message", "created_at",
        "updated_at", "finished_at", "delivery_count", "last_delivered_at", "restored_from", "application_username",
        "offer_type", "offer_id", "offer_payment_mode", "offer_period", "offer_nonce",
    ]

    /// Every column, from the table.
    static let selection = "SELECT " + names.joined(separator: ", ") + " FROM transactions"

    /// The position of the column `name` in `names` (and in `selection`'s rows). Read once into
    /// `Positions`: the decoder reads many rows, by position, as looking columns up by name
    /// would be most of a read's cost.
    static func position(_ name: String) -> Int32 {
        guard let index = names.firstIndex(of: name) else {
            preconditionFailure("transactions has no column \(name)")
        }
        return Int32(index)
    }

    /// Each column's position, by the name the decoder knows it by.
    struct Positions {
        let id = position("id"), originalID = position("original_id"), productID = position("product_id")
        let productType = position("product_type"), state = position("state"), isFinished = position("is_finished")
        let quantity = position("quantity"), purchaseDate = position("purchase_date")
        let originalPurchaseDate = position("original_purchase_date"), expirationDate = position("expiration_date")
        let revocationDate = position("revocation_date"), revocationReason = position("revocation_reason")
        let isUpgraded = position("is_upgraded"), appAccountToken = position("app_account_token")
        let errorCode = position("error_code"), errorMessage = position("error_message"), reason = position("reason")
        let subscriptionGroupID = position("subscription_group_id"), storefront = position("storefront")
        let environment = position("environment"), idempotencyKey = position("idempotency_key")
        let plannedState = position("planned_state"), plannedErrorCode = position("planned_error_code")
        let plannedErrorMessage = position("planned_error_message"), createdAt = position("created_at")
        let updatedAt = position("updated_at"), finishedAt = position("finished_at")
        let deliveryCount = position("delivery_count"), lastDeliveredAt = position("last_delivered_at")
        let restoredFrom = position("restored_from"), applicationUsername = position("application_username")
        let offerType = position("offer_type"), offerID = position("offer_id")
        let offerPaymentMode = position("offer_payment_mode"), offerPeriod = position("offer_period")
    }

    static let positions = Positions()

    // MARK: - Inserting

    /// The columns a new row is written with, in the table's order; the others start at the
    /// table's defaults (not finished, not revoked, no error, never delivered).
    static let inserted = names.filter { !startAtTheirDefault.contains($0) }

    /// The columns a new row leaves to the table's defaults.
    static let startAtTheirDefault: Set = [
        "is_finished", "revocation_date", "revocation_reason", "error_code", "error_message", "finished_at",
        "delivery_count", "last_delivered_at",
    ]

    /// Inserts one row: parameter `n` is `inserted[n - 1]` (see `Slots`).
    static let insertion =
        "INSERT INTO transactions (" + inserted.joined(separator: ", ") + ") VALUES ("
        + Array(repeating: "?", count: inserted.count).joined(separator: ", ") + ")"

    /// The parameter number of the column `name` in `insertion`.
    static func slot(_ name: String) -> Int32 {
        guard let index = inserted.firstIndex(of: name) else {
            preconditionFailure("a new transaction is not inserted with \(name)")
        }
        return Int32(index + 1)
    }

    /// Each inserted column's parameter number, by the name the writer knows it by.
    struct Slots {
        let id = slot("id"), originalID = slot("original_id"), productID = slot("product_id")
        let productType = slot("product_type"), state = slot("state"), quantity = slot("quantity")
        let purchaseDate = slot("purchase_date"), originalPurchaseDate = slot("original_purchase_date")
        let expirationDate = slot("expiration_date"), isUpgraded = slot("is_upgraded")
        let appAccountToken = slot("app_account_token"), reason = slot("reason")
        let subscriptionGroupID = slot("subscription_group_id"), storefront = slot("storefront")
        let environment = slot("environment"), idempotencyKey = slot("idempotency_key")
        let plannedState = slot("planned_state"), plannedErrorCode = slot("planned_error_code")
        let plannedErrorMessage = slot("planned_error_message"), createdAt = slot("created_at")
        let updatedAt = slot("updated_at"), restoredFrom = slot("restored_from")
        let applicationUsername = slot("application_username"), offerType = slot("offer_type")
        let offerID = slot("offer_id"), offerPaymentMode = slot("offer_payment_mode")
        let offerPeriod = slot("offer_period"), offerNonce = slot("offer_nonce")
    }

    static let slots = Slots()

    /// What a restored copy takes instead of its source's column: SQL, and the values of its
    /// parameters (`now`: the store's time; `firstID`: the first copy's id). Every other
    /// inserted column is copied from the source.
    static func restoredCopy(_ name: String, now: Int64, firstID: UInt64) -> (sql: String, values: [DatabaseValue])? {
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
