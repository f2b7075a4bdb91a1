import Foundation
import LedgerTestSupport
import LedgerTesting
import Testing

/// `ledger jws`: transactions and renewal info signed as the App Store signs them, checked by
/// verifiers nobody here wrote.
@Suite struct JWSCLITests {
    @Test func theJWSIsPrintedAloneOrWithItsDecodedParts() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            #expect(try workspace.ledger("purchase", SampleCatalog.subscription).status == 0)
            let compact = try workspace.ledger("jws", "1")
            #expect(compact.status == 0, "\(compact.stderr)")
            #expect(compact.stdout.split(separator: ".").count == 3 && compact.stdout.hasSuffix("\n"))
            let json = try workspace.json("jws", "1")
            let payload = try #require(json["payload"] as? [String: Any])
            let header = try #require(json["header"] as? [String: Any])
            #expect((json["jws"] as? String)?.split(separator: ".").count == 3)
            #expect(header["alg"] as? String == "ES256" && (header["x5c"] as? [String])?.count == 3)
            #expect(
                payload["transactionId"] as? String == "1"
                    && payload["productId"] as? String == SampleCatalog.subscription)
            #expect(
                payload["type"] as? String == "Auto-Renewable Subscription"
                    && payload["environment"] as? String == "Xcode")
            let renewal = try workspace.json("jws", "--renewal", SampleCatalog.subscription)
            let renewalPayload = try #require(renewal["payload"] as? [String: Any])
            #expect(
                renewalPayload["originalTransactionId"] as? String == "1"
                    && renewalPayload["autoRenewStatus"] as? Int == 1)
            // The store's settings name the app and the environment.
            #expect(try workspace.ledger("store", "set", "bundleID", "com.example.shop").status == 0)
            let sandbox = try workspace.json("store", "set", "environment", "Sandbox")
            #expect(sandbox["environment"] as? String == "Sandbox" && sandbox["invalidSignatures"] as? Bool == false)
            let resigned = try #require(try workspace.json("jws", "1")["payload"] as? [String: Any])
            #expect(
                resigned["bundleId"] as? String == "com.example.shop" && resigned["environment"] as? String == "Sandbox"
            )
        }
    }

    @Test func badRequestsAreRefusedWithTheirReason() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            #expect(try workspace.ledger("purchase", SampleCatalog.nonConsumable, "--outcome", "deferred").status == 0)
            let neither = try workspace.ledger("jws")
            #expect(
                neither.status == 64
                    && neither.stderr.contains("give a transaction id, --renewal PRODUCT_ID, or --app-transaction"))
            #expect(try workspace.ledger("jws", "1", "--renewal", SampleCatalog.subscription).status == 64)
            #expect(try workspace.ledger("jws", "1", "--app-transaction").status == 64)
            for bad in ["", "1..2", "1.2.3.4", "v1", "1.0 ", String(repeating: "1", count: 33)] {
                let refused = try workspace.ledger("store", "set", "appVersion", bad)
                #expect(refused.status == 65 && refused.stderr.contains("for appVersion: expected"), "\(bad)")
            }
            #expect(try workspace.json("store", "show")["appVersion"] as? String == "1.0", "a refusal changes nothing")
            let deferred = try workspace.ledger("jws", "1")
            #expect(
                deferred.status == 1
                    && deferred.stderr.contains(
                        "transaction 1 is deferred: only purchased and restored transactions are signed")
            )
            let unknown = try workspace.ledger("jws", "7")
            #expect(unknown.status == 1 && unknown.stderr.contains("unknown transaction 7"))
            let never = try workspace.ledger("jws", "--renewal", SampleCatalog.subscription)
            #expect(never.status == 1 && never.stderr.contains("its subscription group was never bought"))
            let notSubscription = try workspace.ledger("jws", "--renewal", SampleCatalog.nonConsumable)
            #expect(
                notSubscription.status == 1 && notSubscription.stderr.contains("is not an auto-renewable subscription"))
            let environment = try workspace.ledger("store", "set", "environment", "Staging")
            #expect(
                environment.status == 65
                    && environment.stderr.contains(
                        "invalid value \"Staging\" for environment: expected Xcode, Sandbox or Production")
            )
            for bad in ["0", "12a", "99999999999999999999", " 1"] {
                let refused = try workspace.ledger("store", "set", "appAppleID", bad)
                #expect(refused.status == 65 && refused.stderr.contains("for appAppleID: expected"), "\(bad)")
            }
            #expect(try workspace.ledger("store", "set", "environment", "Production").status == 0)
            #expect(try workspace.ledger("store", "set", "appAppleID", "1234567890").status == 0)
            let shown = try workspace.json("store", "show")
            #expect(shown["environment"] as? String == "Production" && shown["appAppleID"] as? Int == 1_234_567_890)
            #expect(try workspace.ledger("store", "set", "appAppleID", "none").status == 0)
            #expect(try workspace.json("store", "show")["appAppleID"] == nil)
        }
    }

    /// Apple's App Store Server Library verifies what `ledger jws` prints as a server does in the
    /// Sandbox environment (signature and chain checked against the exported root, online checks
    /// off, the chain's dates checked at `signedDate`), and rejects a tampered payload, another
    /// ledger's root, an expired leaf, the store's invalid signatures, and another app's bundle
    /// identifier. jwcrypto, a generic JOSE library, checks the signature with the leaf's key.
    @Test(
        .enabled(
            if: ApplePython.shouldRun,
            "app-store-server-library and jwcrypto are not in .build/python (.ci/run installs them)"))
    func applesServerLibraryAndAGenericJOSELibraryVerifyTheSignedTransactions() async throws {
        guard let python = ApplePython.path else {
            Issue.record("STORELEDGER_PYTHON is set, but: \(ApplePython.unavailableReason)")
            return
        }
        try await CLIWorkspace.withCatalog { workspace in
            let directory = workspace.directory
            func save(_ text: String, _ name: String) throws { try write(text, to: directory + "/" + name) }
            #expect(try workspace.ledger("store", "set", "environment", "Sandbox").status == 0)
            #expect(
                try workspace.ledger(
                    "purchase", SampleCatalog.subscription, "--account", "7e3fb20b-4cdb-47cc-936d-99d65f608138"
                ).status == 0)
            #expect(try workspace.ledger("purchase", SampleCatalog.consumable).status == 0)
            try save(try workspace.ledger("jws", "1").stdout, "subscription.jws")
            try save(try workspace.ledger("jws", "2").stdout, "consumable.jws")
            try save(try workspace.ledger("jws", "--renewal", SampleCatalog.subscription).stdout, "renewal.jws")
            #expect(try workspace.ledger("store", "set", "appVersion", "2.3.1").status == 0)
            try save(try workspace.ledger("jws", "--app-transaction").stdout, "app.jws")
            #expect(
                try workspace.ledger("certificate", "export", "--format", "der", "--output", directory + "/root.der")
                    .status == 0)
            let other = directory + "/other.sqlite"
            #expect(try LedgerProcess.run(["init", "--database", other]).status == 0)
            #expect(
                try LedgerProcess.run([
                    "certificate", "export", "--database", other, "--format", "der", "--output",
                    directory + "/other.der",
                ]).status == 0)
            #expect(try workspace.ledger("store", "set", "invalidSignatures", "true").status == 0)
            try save(try workspace.ledger("jws", "2").stdout, "invalid.jws")
            #expect(try workspace.ledger("store", "set", "invalidSignatures", "false").status == 0)
            // Signed more than 20 years after the ledger made its leaf.
            #expect(try workspace.ledger("clock", "advance", "P21Y").status == 0)
            let late = try #require(try workspace.json("purchase", SampleCatalog.nonConsumable)["id"] as? Int)
            try save(try workspace.ledger("jws", String(late)).stdout, "late.jws")

            let script = """
                import base64, json, os, sys
                from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier, VerificationException
                from appstoreserverlibrary.models.Environment import Environment
                from jwcrypto import jwk, jws
                from cryptography import x509
                from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
                folder = sys.argv[1]
                read = lambda name: open(os.path.join(folder, name)).read().strip()
                def verifier(root="root.der", bundle="com.example.app"):
                    return SignedDataVerifier([open(os.path.join(folder, root), "rb").read()], False, Environment.SANDBOX, bundle)
                def attempt(name, call):
                    try:
                        print(name, "verified", call())
                    except VerificationException as e:
                        print(name, "rejected", e.status.name)
                t = verifier().verify_and_decode_signed_transaction(read("subscription.jws"))
                print("subscription", t.transactionId, t.productId, t.type.name, t.environment.name, t.appAccountToken, t.price, t.currency)
                r = verifier().verify_and_decode_renewal_info(read("renewal.jws"))
                print("renewal", r.originalTransactionId, r.autoRenewStatus.name, r.renewalPrice)
                c = verifier().verify_and_decode_signed_transaction(read("consumable.jws"))
                print("consumable", c.transactionId, c.type.name, c.transactionReason.name)
                head, body, signature = read("consumable.jws").split(".")
                claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
                claims["quantity"] = 10
                forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
                attempt("tampered", lambda: verifier().verify_and_decode_signed_transaction(".".join([head, forged, signature])).quantity)
                attempt("other-root", lambda: verifier(root="other.der").verify_and_decode_signed_transaction(read("consumable.jws")).transactionId)
                attempt("invalid", lambda: verifier().verify_and_decode_signed_transaction(read("invalid.jws")).transactionId)
                attempt("late", lambda: verifier().verify_and_decode_signed_transaction(read("late.jws")).transactionId)
                attempt("other-app", lambda: verifier(bundle="com.example.other").verify_and_decode_signed_transaction(read("consumable.jws")).transactionId)
                a = verifier().verify_and_decode_app_transaction(read("app.jws"))
                print("app", a.receiptType.name, a.bundleId, a.applicationVersion, a.originalApplicationVersion, a.originalPlatform.name, a.appTransactionId == t.appTransactionId)
                attempt("other-app-transaction", lambda: verifier(bundle="com.example.other").verify_and_decode_app_transaction(read("app.jws")).bundleId)
                # jwcrypto: the signature checked with the key of the leaf the header names.
                for name in ["consumable.jws", "invalid.jws"]:
                    token = jws.JWS()
                    token.deserialize(read(name))
                    leaf = x509.load_der_x509_certificate(base64.b64decode(token.jose_header["x5c"][0]))
                    key = jwk.JWK.from_pem(leaf.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo))
                    try:
                        token.verify(key, alg="ES256")
                        print("jwcrypto", name, "verified", json.loads(token.payload)["transactionId"])
                    except jws.InvalidJWSSignature:
                        print("jwcrypto", name, "rejected")
                """
            let run = try runProcess(python, ["-c", script, directory])
            #expect(run.status == 0, "\(run.output)")
            #expect(
                run.output.split(separator: "\n") == [
                    "subscription 1 \(SampleCatalog.subscription) AUTO_RENEWABLE_SUBSCRIPTION SANDBOX 7e3fb20b-4cdb-47cc-936d-99d65f608138 4990 USD",
                    "renewal 1 ON 4990",
                    "consumable 2 CONSUMABLE PURCHASE",
                    "tampered rejected VERIFICATION_FAILURE",
                    "other-root rejected VERIFICATION_FAILURE",
                    "invalid rejected VERIFICATION_FAILURE",
                    "late rejected VERIFICATION_FAILURE",
                    "other-app rejected INVALID_APP_IDENTIFIER",
                    "app SANDBOX com.example.app 2.3.1 1.0 IOS True",
                    "other-app-transaction rejected INVALID_APP_IDENTIFIER",
                    "jwcrypto consumable.jws verified 2",
                    "jwcrypto invalid.jws rejected",
                ], "\(run.output)")
        }
    }
}
