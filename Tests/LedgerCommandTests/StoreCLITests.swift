import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import Testing

@Suite struct StoreCLITests {
    @Test func restoreEntitlementsAndRefundFromTheCLI() async throws {
        try await CLIWorkspace.withCatalog { (workspace: CLIWorkspace) throws in
            let empty = try workspace.json("restore")
            #expect(empty["outcome"] as? String == "finished" && (empty["restored"] as? [Any])?.isEmpty == true)
            #expect(empty.keys.contains("error"))
            let bought = try #require(try workspace.json("purchase", "com.example.level1")["id"] as? Int)
            _ = try workspace.json("purchase", "com.example.rocket_car")
            let restored = try #require(try workspace.json("restore")["restored"] as? [[String: Any]])
            #expect(restored.map { $0["restoredFromID"] as? Int } == [bought])
            #expect(
                restored.first?["originalID"] as? Int == bought && restored.first?["state"] as? String == "restored")
            let entitlements = try #require(try workspace.json("entitlements")["entitlements"] as? [[String: Any]])
            #expect(entitlements.compactMap { $0["productID"] as? String } == ["com.example.level1"])

            let refunded = try workspace.json("refund", "\(bought)", "--reason", "developerIssue")
            #expect(refunded["revocationReason"] as? Int == 1 && refunded["revocationDate"] is String)
            // The refund revoked the purchase's restored copy too.
            #expect((try workspace.json("entitlements")["entitlements"] as? [Any])?.isEmpty == true)
            let restoredID = try #require(restored.first?["id"] as? Int)
            let again = try workspace.ledger("refund", "\(restoredID)")
            #expect(again.status == 1 && again.stderr.contains("already refunded"))
            let badAccount = try workspace.ledger("restore", "--account", "player-1")
            #expect(badAccount.status == 65 && badAccount.stderr.contains("UUID"))
            let badReason = try workspace.ledger("refund", "\(bought)", "--reason", "whim")
            #expect(badReason.status == 64)
        }
    }

    @Test func subscriptionStatusFromTheCLI() async throws {
        try await CLIWorkspace.withCatalog { (workspace: CLIWorkspace) throws in
            let never = try workspace.json("subscriptions", "status", "com.example.pro.monthly")
            #expect(never.keys.contains("status") && never["status"] is NSNull)
            let bought = try #require(try workspace.json("purchase", "com.example.pro.monthly")["id"] as? Int)
            let status = try #require(
                try workspace.json("subscriptions", "status", "com.example.pro.monthly")["status"] as? [String: Any])
            #expect(status["state"] as? String == "subscribed" && status["willAutoRenew"] as? Bool == true)
            #expect(
                status["autoRenewProductID"] as? String == "com.example.pro.monthly"
                    && status["isInBillingRetry"] as? Bool == false)
            #expect((status["transaction"] as? [String: Any])?["id"] as? Int == bought)
            #expect(
                status["renewalDate"] as? String == (status["transaction"] as? [String: Any])?["expirationDate"]
                    as? String)
            // The group's identifier names the same status.
            let group = try #require((status["transaction"] as? [String: Any])?["subscriptionGroupID"] as? String)
            #expect(
                (try workspace.json("subscriptions", "status", group)["status"] as? [String: Any])?["state"] as? String
                    == "subscribed")

            _ = try workspace.json("subscriptions", "expire", "com.example.pro.monthly")
            let expired = try #require(try workspace.json("subscriptions", "status", group)["status"] as? [String: Any])
            #expect(
                expired["state"] as? String == "expired"
                    && expired["expirationReason"] as? String == "autoRenewDisabled")
            #expect(expired["willAutoRenew"] as? Bool == false && expired["renewalDate"] is NSNull)
            let text = try workspace.ledger("subscriptions", "status", "com.example.pro.monthly")
            #expect(text.status == 0 && text.stdout.hasPrefix("group \(group): expired\n"), "\(text.stdout)")

            // Billing retry: the next renewal fails on a billing issue; `store resolve` renews.
            _ = try workspace.json("store", "set", "billingRetryOnRenewal", "true")
            _ = try workspace.json("store", "set", "billingGracePeriod", "true")
            #expect(try workspace.json("store", "show")["billingRetryOnRenewal"] as? Bool == true)
            let again = try #require(try workspace.json("purchase", "com.example.pro.monthly")["id"] as? Int)
            _ = try workspace.json("clock", "advance", "32d")
            let retrying = try #require(
                try workspace.json("subscriptions", "status", group)["status"] as? [String: Any])
            #expect(retrying["state"] as? String == "inGracePeriod" && retrying["isInBillingRetry"] as? Bool == true)
            #expect(retrying["gracePeriodExpirationDate"] is String)
            let resolved = try workspace.json("store", "resolve", "\(again)")
            #expect((resolved["replacement"] as? [String: Any])?["reason"] as? String == "renewal")
            #expect(
                (try workspace.json("subscriptions", "status", group)["status"] as? [String: Any])?["state"] as? String
                    == "subscribed")
            let badSwitch = try workspace.ledger("store", "set", "billingGracePeriod", "sometimes")
            #expect(
                badSwitch.status == 65
                    && badSwitch.stderr.contains(
                        "invalid value \"sometimes\" for billingGracePeriod: expected true or false")
            )

            let unknown = try workspace.ledger("subscriptions", "status", "com.example.nothing")
            #expect(unknown.status == 1)
            #expect(
                unknown.stderr.contains("no auto-renewable subscription or subscription group \"com.example.nothing\""))
            let consumable = try workspace.ledger("subscriptions", "status", "com.example.rocket_car")
            #expect(consumable.status == 1 && consumable.stderr.contains("is not an auto-renewable subscription"))
        }
    }

    @Test func aSubscriptionRenewsAndExpiresUnderAFastClock() async throws {
        try await CLIWorkspace.withCatalog { (workspace: CLIWorkspace) throws in
            _ = try workspace.json("store", "set", "timeRate", "monthlyRenewalEveryThirtySeconds")
            let bought = try workspace.json("purchase", "com.example.pro.monthly")
            let id = try #require(bought["id"] as? Int)
            let moved = try workspace.json("clock", "advance", "95s")
            let renewed = try #require(moved["renewed"] as? [[String: Any]])
            #expect(
                renewed.count == 3
                    && renewed.allSatisfy { $0["originalID"] as? Int == id && $0["reason"] as? String == "renewal" })
            _ = try workspace.json("subscriptions", "auto-renew", "com.example.pro.monthly", "off")
            #expect((try workspace.json("entitlements")["entitlements"] as? [Any])?.count == 1)
            #expect((try workspace.json("clock", "advance", "1m")["renewed"] as? [Any])?.isEmpty == true)
            #expect((try workspace.json("entitlements")["entitlements"] as? [Any])?.isEmpty == true)

            _ = try workspace.json("subscriptions", "auto-renew", "com.example.pro.monthly", "on")
            let renewal = try #require(
                try workspace.json("subscriptions", "renew", "com.example.pro.monthly")["renewal"] as? [String: Any])
            #expect(renewal["originalID"] as? Int == id)
            let expired = try #require(
                try workspace.json("subscriptions", "expire", "com.example.pro.monthly")["expired"] as? [String: Any])
            #expect(expired["id"] as? Int == renewal["id"] as? Int)
            #expect((try workspace.json("entitlements")["entitlements"] as? [Any])?.isEmpty == true)
        }
    }

    /// `subscriptions renew` when the store fails renewals: `failedRenewal` is the period that
    /// ended, the subscription is in billing retry, and no renewal was made.
    @Test func aRenewalForcedFromTheCLIFailsWhenRenewalsFail() async throws {
        try await CLIWorkspace.withCatalog { (workspace: CLIWorkspace) throws in
            let bought = try workspace.json("purchase", "com.example.pro.monthly")
            _ = try workspace.json("store", "set", "billingRetryOnRenewal", "true")
            let answer = try workspace.json("subscriptions", "renew", "com.example.pro.monthly")
            #expect(answer["renewal"] == nil)
            let failed = try #require(answer["failedRenewal"] as? [String: Any])
            #expect(failed["id"] as? Int == bought["id"] as? Int)
            let status = try workspace.json("subscriptions", "status", "com.example.pro.monthly")["status"]
            #expect(
                (status as? [String: Any])?["state"] as? String == "inBillingRetryPeriod",
                "\(String(describing: status))")
            #expect((try workspace.json("list")["transactions"] as? [Any])?.count == 1)
        }
    }

    @Test func storeSettingsAndClockFromTheCLI() async throws {
        try await CLIWorkspace.withCatalog { (workspace: CLIWorkspace) throws in
            let shown = try workspace.json("store", "show")
            #expect(
                shown["storefront"] as? String == "USA" && shown["askToBuy"] as? Bool == false
                    && shown["timeRate"] as? String == "realTime")
            _ = try workspace.json("store", "set", "askToBuy", "true")
            #expect(try workspace.json("purchase", "com.example.level1")["state"] as? String == "deferred")
            _ = try workspace.json("store", "set", "askToBuy", "false")
            _ = try workspace.json("store", "set", "failTransactions", "paymentInvalid")
            let failed = try workspace.json("purchase", "com.example.level1")
            #expect((failed["error"] as? [String: Any])?["code"] as? Int == 3)
            _ = try workspace.json("store", "set", "failTransactions", "off")
            _ = try workspace.json("store", "set", "canMakePayments", "false")
            #expect(
                (try workspace.json("purchase", "com.example.level1")["error"] as? [String: Any])?["name"] as? String
                    == "paymentNotAllowed")
            _ = try workspace.json("store", "set", "canMakePayments", "true")
            let france = try workspace.json("store", "set", "storefront", "FRA")
            #expect(france["currencyCode"] as? String == "EUR")

            let imported = try workspace.json("store", "import", Repository.fixture("v2.0-every-product-type.storekit"))
            #expect(imported["askToBuy"] as? Bool == true && imported["storefront"] as? String == "USA")

            let before = try #require(try workspace.json("clock", "show")["now"] as? String)
            let after = try #require(try workspace.json("clock", "advance", "P1M")["now"] as? String)
            #expect(after > before)
            #expect(
                (try workspace.json("clock", "set", "2099-01-01")["now"] as? String)?.hasPrefix("2099-01-01T00:00:0")
                    == true)
            let cases: [([String], Int32, String)] = [
                (["clock", "advance", "-1d"], 65, "cannot be negative"),
                (["clock", "advance", "soon"], 65, "invalid duration"),
                (["clock", "set", "2020-01-01"], 1, "only moves forward"),
                (["clock", "set", "yesterday"], 65, "invalid date"),
                (["store", "set", "colour", "blue"], 64, "colour"),
                (["store", "set", "timeRate", "warp"], 65, "invalid value \"warp\" for timeRate"),
                (["subscriptions", "renew", "com.example.level1"], 1, "not an auto-renewable subscription"),
                (
                    ["subscriptions", "expire", "com.example.nope"], 1,
                    "no auto-renewable subscription or subscription group \"com.example.nope\""
                ),
                (["subscriptions", "auto-renew", "com.example.pro.monthly", "maybe"], 64, "maybe"),
                (["refund", "999"], 1, "unknown transaction 999"),
                (["store", "delete", "999"], 1, "unknown transaction 999"),
                (["store", "resolve", "1"], 1, "not an interrupted purchase"),
            ]
            for (arguments, status, message) in cases {
                let result = try workspace.ledger(arguments)
                #expect(result.status == status, "\(arguments): \(result.stderr)")
                #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            }
        }
    }

    @Test func interruptedPurchasesClearAndDelete() async throws {
        try await CLIWorkspace.withCatalog { (workspace: CLIWorkspace) throws in
            let interrupted = try workspace.json("purchase", "com.example.level1", "--outcome", "interrupted")
            let id = try #require(interrupted["id"] as? Int)
            #expect(interrupted["state"] as? String == "failed")
            let pending = try workspace.json("store", "resolve", "\(id)")
            #expect(pending["replacement"] is NSNull)
            let finished = try workspace.json("launch", "--finish")
            #expect((finished["finished"] as? [Int])?.contains(id) == true)
            let list = try #require(try workspace.json("list")["transactions"] as? [[String: Any]])
            #expect(
                list.last?["state"] as? String == "purchased"
                    && list.last?["productID"] as? String == "com.example.level1")

            #expect(try workspace.json("store", "delete", "\(id)")["deleted"] as? Int == id)
            #expect(try workspace.json("store", "clear")["deleted"] as? Int == 1)
            #expect((try workspace.json("list")["transactions"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func promotionsFromTheCLI() async throws {
        try await CLIWorkspace.withCatalog { (workspace: CLIWorkspace) throws in
            #expect((try workspace.json("promotions", "list")["promotions"] as? [Any])?.isEmpty == true)
            let ordered = try #require(
                try workspace.json("promotions", "order", "com.example.level2", "com.example.level1")["promotions"]
                    as? [[String: String]])
            #expect(
                ordered == [
                    ["productID": "com.example.level2", "visibility": "appStoreConnectDefault"],
                    ["productID": "com.example.level1", "visibility": "appStoreConnectDefault"],
                ])
            let hidden = try #require(
                try workspace.json("promotions", "visibility", "com.example.level1", "hidden")["promotions"]
                    as? [[String: String]])
            #expect(hidden.last == ["productID": "com.example.level1", "visibility": "hidden"])
            let unknown = try workspace.ledger("promotions", "order", "com.example.nope")
            #expect(unknown.status == 1 && unknown.stderr.contains("unknown product"))
            #expect(try workspace.ledger("promotions", "visibility", "com.example.level1", "sometimes").status == 64)
            #expect((try workspace.json("promotions", "list")["promotions"] as? [Any])?.count == 2)
            #expect((try workspace.json("promotions", "reset")["promotions"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func refusedStoreCommandsChangeNothing() async throws {
        try await CLIWorkspace.withCatalog { (workspace: CLIWorkspace) async throws in
            _ = try workspace.json("store", "set", "timeRate", "oneRenewalEveryTwoSeconds")
            _ = try workspace.json("purchase", "com.example.pro.monthly")
            // a renewal falls due; only a launch or a clock move makes it
            try await Task.sleep(for: .milliseconds(2_500))
            func count() throws -> Int { (try workspace.json("list")["transactions"] as? [Any])?.count ?? -1 }
            let before = try count()
            for arguments in [
                ["clock", "advance", "-1d"], ["subscriptions", "renew", "com.example.nope"],
                ["store", "set", "timeRate", "bogus"], ["refund", "999"], ["clock", "advance", "P1000000Y"],
            ] {
                let result = try workspace.ledger(arguments)
                #expect(result.status != 0, "\(arguments)")
                #expect(try count() == before, "\(arguments) changed the ledger")
            }
        }
    }

    @Test func storeSetWritesOnlyItsSettingAndPromotionVisibilityAloneHidesNothing() async throws {
        try await CLIWorkspace.empty { (workspace: CLIWorkspace) throws in
            #expect(try workspace.ledger("init").status == 0)
            _ = try workspace.json("store", "set", "askToBuy", "false")
            _ = try workspace.ledger("products", "import", Repository.fixture("v3.0-japan.storekit"))
            #expect(
                try workspace.json("store", "show")["storefront"] as? String == "JPN",
                "the import still seeds the storefront")

            let product = "com.example.fixtures.kanji.advanced"
            let visible = try workspace.json("promotions", "visibility", product, "visible")
            #expect(visible["orderOverridden"] as? Bool == false)
            let ordered = try workspace.json("promotions", "order", product)
            #expect(ordered["orderOverridden"] as? Bool == true)
        }
    }

    @Test func finishShowsTheReplacementOfAResolvedInterruptedPurchase() async throws {
        try await CLIWorkspace.withCatalog { (workspace: CLIWorkspace) throws in
            let id = try #require(
                try workspace.json("purchase", "com.example.level1", "--outcome", "interrupted")["id"] as? Int)
            _ = try workspace.json("store", "resolve", "\(id)")
            let finished = try workspace.json("finish", "\(id)")
            let replacement = try #require((finished["replacements"] as? [[String: Any]])?.first)
            #expect(replacement["state"] as? String == "purchased")
            let again = try workspace.json("store", "resolve", "\(id)")
            #expect((again["replacement"] as? [String: Any])?["id"] as? Int == replacement["id"] as? Int)
        }
    }
}

@Suite struct PromotionalOfferCLITests {
    static let monthly = "com.example.fixtures.garden.pro.monthly"
    static let comeback = "com.example.fixtures.garden.pro.monthly.comeback"

    /// `--promotional-offer` with the four `--offer-*` options of a signature made now.
    static func signedOfferArguments(bundleID: String = Ledger.defaultBundleID) throws -> [String] {
        let key = try #require(
            try StoreKitConfiguration(contentsOf: Repository.fixture("v3.0-garden-shop.storekit")).subscriptionOffersKey
        )
        let nonce = UUID()
        let timestamp = Int64((Date().timeIntervalSince1970 * 1000).rounded())
        let payload = OfferSignaturePayload(
            bundleID: bundleID, keyID: key.id, productID: monthly, offerID: comeback, account: "", nonce: nonce,
            timestamp: timestamp)
        return [
            "--promotional-offer", comeback, "--offer-key-id", key.id, "--offer-nonce", nonce.uuidString,
            "--offer-timestamp", String(timestamp), "--offer-signature",
            try key.signature(for: payload).base64EncodedString(),
        ]
    }

    @Test func signedAndUnsignedOffersFromTheCLI() async throws {
        try await CLIWorkspace.empty { workspace in
            _ = try workspace.json("products", "import", Repository.fixture("v3.0-garden-shop.storekit"))
            let settings = try workspace.json("store", "show")
            #expect(
                settings["subscriptionOffersKeyID"] as? String == "6A4DE501"
                    && settings["bundleID"] as? String == "com.example.app")
            let ineligible = try workspace.ledger(
                arguments: ["purchase", Self.monthly] + (try Self.signedOfferArguments()))
            #expect(
                ineligible.status == 1 && ineligible.stderr.contains("not eligible for a promotional offer"),
                "\(ineligible.stderr)")
            _ = try workspace.json("purchase", Self.monthly)
            _ = try workspace.json("subscriptions", "expire", Self.monthly)

            _ = try workspace.json("store", "set", "bundleID", "org.example.garden")
            let otherApp = try workspace.ledger(
                arguments: ["purchase", Self.monthly] + (try Self.signedOfferArguments()))
            #expect(
                otherApp.status == 1
                    && otherApp.stderr.contains("does not sign this payment's bundle id (org.example.garden)"))
            let signed = try workspace.json(
                arguments: ["purchase", Self.monthly] + (try Self.signedOfferArguments(bundleID: "org.example.garden")))
            #expect(signed["state"] as? String == "purchased")
            let offer = try #require(signed["offer"] as? [String: Any])
            #expect(offer["type"] as? String == "promotional" && offer["id"] as? String == Self.comeback)

            _ = try workspace.json("subscriptions", "expire", Self.monthly)
            let unsigned = try workspace.json("purchase", Self.monthly, "--promotional-offer", Self.comeback)
            #expect((unsigned["offer"] as? [String: Any])?["id"] as? String == Self.comeback)
            let unknown = try workspace.ledger("purchase", Self.monthly, "--promotional-offer", "nope")
            #expect(
                unknown.status == 1 && unknown.stderr.contains("\"nope\" is not a promotional offer of \(Self.monthly)")
            )

            let alone = try workspace.ledger("purchase", Self.monthly, "--offer-key-id", "K")
            #expect(alone.status == 64 && alone.stderr.contains("go with --promotional-offer"))
            let partial = try workspace.ledger(
                "purchase", Self.monthly, "--promotional-offer", Self.comeback, "--offer-key-id", "K")
            #expect(partial.status == 64 && partial.stderr.contains("needs all of"))
            var badNonce = try Self.signedOfferArguments()
            badNonce[5] = "not-a-uuid"
            let nonce = try workspace.ledger(arguments: ["purchase", Self.monthly] + badNonce)
            #expect(nonce.status == 65 && nonce.stderr.contains("invalid --offer-nonce"))
            let badBundle = try workspace.ledger("store", "set", "bundleID", "no spaces")
            #expect(badBundle.status == 65 && badBundle.stderr.contains("expected a bundle identifier"))
        }
    }

    @Test func anOfferSignedAsAJWSFromTheCLI() async throws {
        try await CLIWorkspace.empty { workspace in
            _ = try workspace.json("products", "import", Repository.fixture("v3.0-garden-shop.storekit"))
            let first = try #require(try workspace.json("purchase", Self.monthly)["id"] as? Int)
            _ = try workspace.json("subscriptions", "expire", Self.monthly)
            let key = try #require(
                try StoreKitConfiguration(contentsOf: Repository.fixture("v3.0-garden-shop.storekit"))
                    .subscriptionOffersKey)
            let jws = try key.compactJWS(claims: [
                "aud": "promotional-offer", "bid": Ledger.defaultBundleID, "iss": "issuer-1",
                "iat": Int64(Date().timeIntervalSince1970), "nonce": UUID().uuidString.lowercased(),
                "productId": Self.monthly, "offerIdentifier": Self.comeback, "transactionId": String(first),
            ])
            let signed = try workspace.json(
                "purchase", Self.monthly, "--promotional-offer", Self.comeback, "--offer-jws", jws)
            #expect((signed["offer"] as? [String: Any])?["id"] as? String == Self.comeback)
            _ = try workspace.json("subscriptions", "expire", Self.monthly)
            let reused = try workspace.ledger(
                "purchase", Self.monthly, "--promotional-offer", Self.comeback, "--offer-jws", jws)
            #expect(reused.status == 1 && reused.stderr.contains("its nonce was used already"))
            let alone = try workspace.ledger("purchase", Self.monthly, "--offer-jws", jws)
            #expect(alone.status == 64 && alone.stderr.contains("--offer-jws goes with --promotional-offer"))
            let both = try workspace.ledger(
                "purchase", Self.monthly, "--promotional-offer", Self.comeback, "--offer-jws", jws, "--offer-key-id",
                "K")
            #expect(both.status == 64 && both.stderr.contains("--offer-jws replaces"))
        }
    }
}
