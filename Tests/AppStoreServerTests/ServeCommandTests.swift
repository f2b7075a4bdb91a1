import AppStoreServer
import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
import StoreTesting
#endif

/// `ledger serve` and `ledger api-keys` as a server team runs them: a real process on a real
/// port, driven by Apple's own Python library where it is installed.
@Suite struct ServeCommandTests {
    static let issuer = "57246542-96fe-1a63-e053-0824d011072a"

    /// The start of a Python script: Apple's `client` (its base URL pointed at the server on
    /// `port`) and `verifier` (trusting the ledger's root), for the store's environment, with
    /// `APIException` and `Environment` imported.
    static func applePython(_ directory: String, port: Int, production: Bool = false) -> String {
        let environment = production ? "Environment.PRODUCTION" : "Environment.SANDBOX"
        return """
            from appstoreserverlibrary.api_client import AppStoreServerAPIClient, APIException
            from appstoreserverlibrary.models.Environment import Environment
            from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier
            key = open('\(directory)/key.p8', 'rb').read()
            client = AppStoreServerAPIClient(key, 'KEY1', '\(issuer)', 'com.example.app', \(environment))
            client._base_url = 'http://127.0.0.1:\(port)'
            root = open('\(directory)/root.cer', 'rb').read()
            verifier = SignedDataVerifier([root], False, \(environment), 'com.example.app'\(production ? ", 1234567890" : ""))
            """
    }

    /// A ledger in `directory` with the sample catalog, a purchase (unless `buying` is false:
    /// then `purchase` is 0), the store signing for Sandbox, its root certificate in `root.cer`
    /// and an API key in `key.p8`.
    static func prepare(
        _ directory: String, environment: SigningEnvironment = .sandbox, buying: Bool = true
    ) async throws -> (path: String, purchase: UInt64) {
        let ledger = try SampleCatalog.ledger(in: directory)
        try StoreTestSession(ledger: ledger).update {
            $0.environment = environment
            $0.bundleID = "com.example.app"
            $0.appAppleID = environment == .production ? 1_234_567_890 : nil
        }
        var bought: UInt64 = 0
        if buying {
            let queue = try PaymentQueue(ledger: ledger)
            bought = try await queue.add(Payment(productID: SampleCatalog.nonConsumable)).id
            try await queue.add(Payment(productID: SampleCatalog.subscription))
        }
        try Data(try ledger.signingCertificates().root).write(to: URL(fileURLWithPath: directory + "/root.cer"))
        let path = ledger.path
        try ledger.close()
        let created = try LedgerProcess.run([
            "api-keys", "create", "--key-id", "KEY1", "--issuer-id", issuer, "--output", directory + "/key.p8",
            "--database", path,
        ])
        #expect(created.status == 0, "\(created.stderr)")
        return (path, bought)
    }

    /// `prepare`, with the store's notifications sent to `receiver`; also the subscription
    /// `prepare` bought.
    static func prepareNotifying(
        _ directory: String, to receiver: NotificationCollector
    ) async throws -> (path: String, purchase: UInt64, subscription: PaymentTransaction) {
        let (path, purchase) = try await prepare(directory)
        let ledger = try Ledger.open(at: path)
        defer { try? ledger.close() }
        _ = try StoreTestSession(ledger: ledger).set(.notificationURL, to: receiver.url)
        let subscription = try #require(try ledger.allTransactions().first { $0.productType == .autoRenewable })
        return (path, purchase, subscription)
    }

    /// Apple's verifier run over what `receiver` got, in the Sandbox with the ledger's root:
    /// `each` is Python run for every notification `n` (with `verifier` at hand).
    static func verifyNotifications(
        _ python: String, _ directory: String, _ receiver: NotificationCollector, each: String
    ) throws -> (status: Int32, output: String) {
        let received = directory + "/received.txt"
        try receiver.signedPayloads.joined(separator: "\n").write(toFile: received, atomically: true, encoding: .utf8)
        let body = each.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n")
        let verify = """
            import sys
            from appstoreserverlibrary.models.Environment import Environment
            from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier
            root = open('\(directory)/root.cer', 'rb').read()
            verifier = SignedDataVerifier([root], False, Environment.SANDBOX, 'com.example.app')
            for line in open(sys.argv[1]):
                n = verifier.verify_and_decode_notification(line.strip())
            \(body)
            """
        return try runProcess(python, ["-c", verify, received])
    }

    /// A running `ledger serve --port 0` and the port its one line names.
    struct Server {
        let process: Process
        let port: Int

        /// `ledger serve` of the ledger at `path` with `options` (`https` when they hold a
        /// certificate).
        static func start(_ path: String, options: [String] = []) throws -> Server {
            let process = LedgerProcess.start(["serve", "--port", "0", "--database", path] + options)
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            try process.run()
            let line = try firstLine(of: out.fileHandleForReading, within: 60)
            let scheme = options.contains("--tls-certificate") ? "https" : "http"
            guard line.hasPrefix("listening on \(scheme)://127.0.0.1:"),
                let port = Int(line.split(separator: ":").last ?? "")
            else {
                process.terminate()
                throw LedgerProcess.LedgerProcessError(description: "serve printed \(line)")
            }
            return Server(process: process, port: port)
        }

        /// SIGTERM, then the exit status.
        func stop() -> Int32 {
            process.terminate()
            process.waitUntilExit()
            return process.terminationStatus
        }
    }

    static func firstLine(of handle: FileHandle, within seconds: Double) throws -> String {
        let deadline = Date().addingTimeInterval(seconds)
        var bytes = Data()
        while Date() < deadline {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            bytes += chunk
            if let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) {
                return String(decoding: bytes[..<newline], as: UTF8.self)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func itPrintsOneLineAnswersOnItsPortAndStopsOnSIGTERM() async throws {
        try await withTemporaryDirectory { directory in
            let (path, _) = try await Self.prepare(directory)
            let server = try Server.start(path)
            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(server.port)/inApps/v1/transactions/1")!)
            request.httpMethod = "GET"
            let (_, response) = try await URLSession.shared.data(for: request)
            #expect((response as? HTTPURLResponse)?.statusCode == 401, "no token")
            var post = request
            post.httpMethod = "POST"
            let (_, refused) = try await URLSession.shared.data(for: post)
            #expect((refused as? HTTPURLResponse)?.statusCode == 405)
            post.httpBody = Data(count: (1 << 20) + 1)
            let (_, tooLarge) = try await URLSession.shared.data(for: post)
            #expect((tooLarge as? HTTPURLResponse)?.statusCode == 413)
            #expect(server.stop() == 0)
            // Its port is free again; a second server on a port in use is refused.
            let first = try Server.start(path)
            let busy = try LedgerProcess.run(["serve", "--port", "\(first.port)", "--database", path])
            #expect(busy.status == 1 && busy.stderr.contains("cannot serve on 127.0.0.1:\(first.port)"))
            #expect(first.stop() == 0)
        }
    }

    /// `serve` says on stderr, before its line, what would surprise its user: no valid API key
    /// (every call a bare 401), or payloads for the Xcode environment (Apple's verifiers refuse
    /// them unless told); an IPv6 host is printed in brackets, as a URL needs it.
    @Test func itWarnsOfNoKeyAndOfTheXcodeEnvironmentAndBracketsIPv6() async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try SampleCatalog.ledger(in: directory)
            let path = ledger.path
            try ledger.close()
            func firstLines(_ arguments: [String]) throws -> (stdout: String, stderr: String) {
                let process = LedgerProcess.start(["serve", "--port", "0", "--database", path] + arguments)
                let (out, err) = (Pipe(), Pipe())
                process.standardOutput = out
                process.standardError = err
                try process.run()
                let line = try Self.firstLine(of: out.fileHandleForReading, within: 60)
                process.terminate()
                process.waitUntilExit()
                return (line, String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
            }
            let bare = try firstLines([])
            #expect(bare.stdout.hasPrefix("listening on http://127.0.0.1:"))
            #expect(
                bare.stderr.contains(
                    "warning: the ledger has no API key that is not revoked: every request will get 401"))
            #expect(bare.stderr.contains("warning: the store signs for the Xcode environment"))
            #expect(try LedgerProcess.run(["store", "set", "environment", "Sandbox", "--database", path]).status == 0)
            let created = try LedgerProcess.run([
                "api-keys", "create", "--key-id", "KEY1", "--issuer-id", Self.issuer, "--output", directory + "/key.p8",
                "--database", path,
            ])
            #expect(created.status == 0)
            let ready = try firstLines([])
            #expect(!ready.stderr.contains("warning"), "\(ready.stderr)")
            if Self.hasIPv6Loopback {
                let six = try firstLines(["--host", "::1"])
                #expect(six.stdout.hasPrefix("listening on http://[::1]:"), "\(six.stdout)")
            }
        }
    }

    /// Whether this machine has `::1` (some containers have no IPv6).
    static var hasIPv6Loopback: Bool {
        (try? String(contentsOfFile: "/proc/net/if_inet6", encoding: .utf8))?.contains(
            "00000000000000000000000000000001") == true
    }

    @Test func apiKeysCreateWritesAnOwnerOnlyKeyAndNeverReplacesAFile() async throws {
        try await withTemporaryDirectory { directory in
            let (path, _) = try await Self.prepare(directory)
            let key = directory + "/key.p8"
            let attributes = try FileManager.default.attributesOfItem(atPath: key)
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
            #expect(try String(contentsOfFile: key, encoding: .utf8).hasPrefix("-----BEGIN PRIVATE KEY-----"))
            let before = try Data(contentsOf: URL(fileURLWithPath: key))
            let again = try LedgerProcess.run([
                "api-keys", "create", "--key-id", "KEY2", "--issuer-id", Self.issuer, "--output", key, "--database",
                path,
            ])
            #expect(again.status == 1 && again.stderr.contains("exists"))
            #expect(try Data(contentsOf: URL(fileURLWithPath: key)) == before)
            let listed = try LedgerProcess.run(["api-keys", "list", "--json", "--database", path]).json()
            #expect((listed["keys"] as? [[String: Any]])?.map { $0["keyID"] as? String } == ["KEY1"])
            let duplicate = try LedgerProcess.run([
                "api-keys", "create", "--key-id", "KEY1", "--issuer-id", Self.issuer, "--output",
                directory + "/other.p8",
                "--database", path,
            ])
            #expect(duplicate.status == 1 && !FileManager.default.fileExists(atPath: directory + "/other.p8"))
        }
    }

    /// Apple's `AppStoreServerAPIClient` (only its base URL pointed at the server) gets a
    /// transaction that Apple's `SignedDataVerifier` accepts, and Apple's error codes; the
    /// customer's app transaction id names the customer where API 1.20 takes `anyTransactionId`
    /// (the histories, the statuses) and is refused by Get Transaction Info.
    @Test(.enabled(if: ApplePython.shouldRun, "\(ApplePython.unavailableReason)"))
    func applesClientAndVerifierAcceptTheServer() async throws {
        let python = try #require(ApplePython.path, "\(ApplePython.unavailableReason)")
        try await withTemporaryDirectory { directory in
            let (path, purchase) = try await Self.prepare(directory)
            let server = try Server.start(path)
            defer { _ = server.stop() }
            let script = """
                \(Self.applePython(directory, port: server.port))
                info = client.get_transaction_info('\(purchase)')
                decoded = verifier.verify_and_decode_signed_transaction(info.signedTransactionInfo)
                print('ok', decoded.transactionId, decoded.productId)
                from appstoreserverlibrary.api_client import GetTransactionHistoryVersion
                from appstoreserverlibrary.models.TransactionHistoryRequest import TransactionHistoryRequest, Order, ProductType
                request = TransactionHistoryRequest(sort=Order.DESCENDING, productTypes=[ProductType.NON_CONSUMABLE], revoked=False)
                history = client.get_transaction_history('\(purchase)', None, request, GetTransactionHistoryVersion.V2)
                ids = [verifier.verify_and_decode_signed_transaction(s).transactionId for s in history.signedTransactions]
                print('history', history.hasMore, ids, history.environment.value, history.bundleId)
                refunds = client.get_refund_history('\(purchase)', None)
                print('refunds', refunds.hasMore, len(refunds.signedTransactions))
                statuses = client.get_all_subscription_statuses('\(purchase)')
                for group in statuses.data:
                    for last in group.lastTransactions:
                        renewal = verifier.verify_and_decode_renewal_info(last.signedRenewalInfo)
                        signed = verifier.verify_and_decode_signed_transaction(last.signedTransactionInfo)
                        print('status', group.subscriptionGroupIdentifier, last.status.value, renewal.autoRenewProductId, signed.productId)
                for bad in ['999999', 'abc']:
                    try:
                        client.get_transaction_info(bad)
                    except APIException as e:
                        print(bad, e.http_status_code, e.raw_api_error)
                app = verifier.verify_and_decode_app_transaction(client.get_app_transaction_info('\(purchase)').signedAppTransactionInfo)
                again = verifier.verify_and_decode_app_transaction(client.get_app_transaction_info(app.appTransactionId).signedAppTransactionInfo)
                print('app', app.receiptType.value, app.bundleId, app.applicationVersion, again.appTransactionId == app.appTransactionId == decoded.appTransactionId)
                for bad in ['999999', 'abc']:
                    try:
                        client.get_app_transaction_info(bad)
                    except APIException as e:
                        print('app', bad, e.http_status_code, e.raw_api_error)
                byapp = client.get_transaction_history(app.appTransactionId, None, TransactionHistoryRequest(), GetTransactionHistoryVersion.V2)
                groups = [g.subscriptionGroupIdentifier for g in client.get_all_subscription_statuses(app.appTransactionId).data]
                print('by app', len(byapp.signedTransactions), groups, len(client.get_refund_history(app.appTransactionId, None).signedTransactions))
                try:
                    client.get_transaction_info(app.appTransactionId)
                except APIException as e:
                    print('info by app', e.http_status_code, e.raw_api_error)
                """
            let result = try runProcess(python, ["-c", script])
            #expect(result.status == 0)
            #expect(
                result.output.split(separator: "\n").map(String.init) == [
                    "ok \(purchase) \(SampleCatalog.nonConsumable)",
                    "history False ['\(purchase)'] Sandbox com.example.app", "refunds False 0",
                    "status pro 1 \(SampleCatalog.subscription) \(SampleCatalog.subscription)",
                    "999999 404 4040010", "abc 400 4000006",
                    "app Sandbox com.example.app 1.0 True", "app 999999 404 4040010", "app abc 400 4000006",
                    "by app 2 ['pro'] 0", "info by app 400 4000048",
                ])
        }
    }

    /// In the production environment, Apple's verifier (which then asks for the app's Apple ID)
    /// accepts what the server signs, and the history names the app's Apple ID.
    @Test(.enabled(if: ApplePython.shouldRun, "\(ApplePython.unavailableReason)"))
    func applesProductionVerifierAcceptsTheServer() async throws {
        let python = try #require(ApplePython.path, "\(ApplePython.unavailableReason)")
        try await withTemporaryDirectory { directory in
            let (path, purchase) = try await Self.prepare(directory, environment: .production)
            let server = try Server.start(path)
            defer { _ = server.stop() }
            let script = """
                \(Self.applePython(directory, port: server.port, production: true))
                from appstoreserverlibrary.api_client import GetTransactionHistoryVersion
                from appstoreserverlibrary.models.TransactionHistoryRequest import TransactionHistoryRequest
                info = client.get_transaction_info('\(purchase)')
                decoded = verifier.verify_and_decode_signed_transaction(info.signedTransactionInfo)
                history = client.get_transaction_history(
                    '\(purchase)', None, TransactionHistoryRequest(), GetTransactionHistoryVersion.V2)
                print(decoded.environment.value, history.appAppleId, history.environment.value)
                """
            let result = try runProcess(python, ["-c", script])
            #expect(result.status == 0)
            #expect(result.output == "Production 1234567890 Production\n")
        }
    }
    /// Every notification type the ledger makes, committed while no server ran, reaches a
    /// receiver once `ledger serve` starts; Apple's `SignedDataVerifier` accepts each one (and
    /// the transaction and renewal info inside), and Apple's client requests a test
    /// notification, reads its status and pages through the notification history.
    @Test(.enabled(if: ApplePython.shouldRun, "\(ApplePython.unavailableReason)"))
    func applesVerifierAcceptsEveryNotificationTheServerSends() async throws {
        let python = try #require(ApplePython.path, "\(ApplePython.unavailableReason)")
        let receiver = try await NotificationCollector.start()
        try await withTemporaryDirectory { directory in
            let ledger = try SampleCatalog.ledger(in: directory)
            let session = StoreTestSession(ledger: ledger)
            try session.update {
                $0.environment = .sandbox
                $0.bundleID = "com.example.app"
            }
            _ = try session.set(.notificationURL, to: receiver.url)
            let day: TimeInterval = 86_400
            let lifetime = try await session.buyProduct(Payment(productID: SampleCatalog.nonConsumable))
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            _ = try await session.buyProduct(Payment(productID: SampleCatalog.basicSubscription))  // a downgrade
            try await session.setAutoRenew(false, for: SampleCatalog.subscription)
            try await session.setAutoRenew(true, for: SampleCatalog.subscription)
            _ = try await session.advanceClock(by: 32 * day)  // renews, to basic
            try session.update {
                $0.billingRetryOnRenewal = true
                $0.billingGracePeriodEnabled = true
            }
            _ = try await session.advanceClock(by: 32 * day)  // fails to renew: grace period
            _ = try await session.advanceClock(by: 20 * day)  // grace period over
            _ = try await session.advanceClock(by: 80 * day)  // retries over: expired
            _ = try await session.refundTransaction(lifetime.id)
            let committed = try ledger.notifications().count
            try Data(try ledger.signingCertificates().root).write(to: URL(fileURLWithPath: directory + "/root.cer"))
            let path = ledger.path
            try ledger.close()
            let created = try LedgerProcess.run([
                "api-keys", "create", "--key-id", "KEY1", "--issuer-id", Self.issuer, "--output",
                directory + "/key.p8", "--database", path,
            ])
            #expect(created.status == 0)
            let server = try Server.start(path)
            defer { _ = server.stop() }
            let client = """
                import sys, time
                \(Self.applePython(directory, port: server.port))
                from appstoreserverlibrary.models.NotificationHistoryRequest import NotificationHistoryRequest
                from appstoreserverlibrary.models.NotificationTypeV2 import NotificationTypeV2
                def check(signed):
                    n = verifier.verify_and_decode_notification(signed)
                    if n.data.signedTransactionInfo:
                        verifier.verify_and_decode_signed_transaction(n.data.signedTransactionInfo)
                    if n.data.signedRenewalInfo:
                        verifier.verify_and_decode_renewal_info(n.data.signedRenewalInfo)
                    return n
                if sys.argv[1] == 'test':
                    token = client.request_test_notification().testNotificationToken
                    for _ in range(100):
                        status = client.get_test_notification_status(token)
                        if status.sendAttempts: break
                        time.sleep(0.05)
                    n = check(status.signedPayload)
                    print('test', n.notificationType.value, [a.sendAttemptResult.value for a in status.sendAttempts])
                    try:
                        client.get_test_notification_status('00000000-0000-0000-0000-000000000000_1')
                    except APIException as e:
                        print('unknown', e.http_status_code, e.raw_api_error)
                else:
                    for line in open(sys.argv[2]):
                        n = check(line.strip())
                        print(n.notificationType.value, n.subtype.value if n.subtype else '-', n.data.environment.value)
                    now = int(time.time() * 1000)
                    request = NotificationHistoryRequest(startDate=now - 86400000, endDate=now + 400 * 86400000)
                    pages, token = [], None
                    while True:
                        page = client.get_notification_history(token, request)
                        pages.append(len(page.notificationHistory))
                        for item in page.notificationHistory:
                            check(item.signedPayload)
                        token = page.paginationToken
                        if not page.hasMore: break
                    print('history', pages)
                    request.notificationType = NotificationTypeV2.REFUND
                    page = client.get_notification_history(None, request)
                    print('refunds', [check(i.signedPayload).notificationType.value for i in page.notificationHistory])
                """
            let test = try runProcess(python, ["-c", client, "test"])
            #expect(test.status == 0)
            #expect(
                test.output.split(separator: "\n").map(String.init) == [
                    "test TEST ['SUCCESS']", "unknown 404 4040008",
                ])
            #expect(await receiver.wait(forCount: committed + 1, within: 10))
            let received = directory + "/received.txt"
            try receiver.signedPayloads.joined(separator: "\n").write(
                toFile: received, atomically: true, encoding: .utf8)
            let verified = try runProcess(python, ["-c", client, "verify", received])
            #expect(verified.status == 0)
            #expect(
                Set(verified.output.split(separator: "\n").map(String.init)).isSuperset(of: [
                    "ONE_TIME_CHARGE - Sandbox", "SUBSCRIBED INITIAL_BUY Sandbox",
                    "DID_CHANGE_RENEWAL_PREF DOWNGRADE Sandbox",
                    "DID_CHANGE_RENEWAL_STATUS AUTO_RENEW_DISABLED Sandbox",
                    "DID_CHANGE_RENEWAL_STATUS AUTO_RENEW_ENABLED Sandbox", "DID_RENEW - Sandbox",
                    "DID_FAIL_TO_RENEW GRACE_PERIOD Sandbox", "GRACE_PERIOD_EXPIRED - Sandbox",
                    "EXPIRED BILLING_RETRY Sandbox", "REFUND - Sandbox", "TEST - Sandbox", "history [11]",
                    "refunds ['REFUND']",
                ]), "\(verified.output)")
            #expect(receiver.signedPayloads.count == committed + 1, "each sent once")
            _ = bought
        }
        await receiver.stop()
    }
    /// Over HTTPS, as SERVER.md's recipe has it: `ledger tls create`'s certificate served,
    /// Apple's client unchanged but for the port, calling Apple's own sandbox host, which a
    /// stand-in for a hosts-file entry points at the server, with the test authority trusted
    /// (`REQUESTS_CA_BUNDLE`). Its answers verify; the TEST notification it asks for reaches an
    /// `https` receiver whose authority the server was told to trust (`--notification-ca`).
    @Test(.enabled(if: ApplePython.shouldRun, "\(ApplePython.unavailableReason)"))
    func applesClientReachesTheServerOverHTTPSAtApplesHostName() async throws {
        let python = try #require(ApplePython.path, "\(ApplePython.unavailableReason)")
        try await withTemporaryDirectory { directory in
            let (path, purchase) = try await Self.prepare(directory)
            let tls = directory + "/tls"
            _ = try Self.ledger(["tls", "create", "--directory", tls], on: path)
            let receiver = try await NotificationCollector.start(
                tls: try ServerTLS(certificateChainFile: tls + "/server.pem", privateKeyFile: tls + "/server-key.pem"))
            do {
                let ledger = try Ledger.open(at: path)
                _ = try StoreTestSession(ledger: ledger).set(.notificationURL, to: receiver.url)
                try ledger.close()
                let server = try Server.start(
                    path,
                    options: [
                        "--tls-certificate", tls + "/server.pem", "--tls-key", tls + "/server-key.pem",
                        "--notification-ca", tls + "/ca.pem",
                    ])
                defer { _ = server.stop() }
                let script = """
                    import os, socket
                    os.environ['REQUESTS_CA_BUNDLE'] = '\(tls)/ca.pem'
                    resolve = socket.getaddrinfo
                    def hosts_file(host, *rest, **named):
                        return resolve('127.0.0.1' if host == 'api.storekit-sandbox.apple.com' else host, *rest, **named)
                    socket.getaddrinfo = hosts_file
                    \(Self.applePython(directory, port: server.port))
                    client._base_url = 'https://api.storekit-sandbox.apple.com:\(server.port)'
                    info = client.get_transaction_info('\(purchase)')
                    print('ok', verifier.verify_and_decode_signed_transaction(info.signedTransactionInfo).transactionId)
                    test = client.request_test_notification()
                    print('test', len(test.testNotificationToken) > 0)
                    """
                let result = try runProcess(python, ["-c", script])
                #expect(result.status == 0)
                #expect(result.output == "ok \(purchase)\ntest True\n")
                #expect(await receiver.wait(forCount: 1, within: 10))
                let verified = try Self.verifyNotifications(
                    python, directory, receiver, each: "print(n.notificationType.value)")
                #expect(verified.output == "TEST\n")
            } catch {
                await receiver.stop()
                throw error
            }
            await receiver.stop()
        }
    }

    /// `ledger serve` killed (SIGKILL) while its POST waits for the receiver: the notification
    /// was never recorded as sent, so the next server sends it again, with the same UUID and
    /// payload, and records one delivery.
    @Test func aServerKilledDuringDeliverySendsItAgainWithTheSameUUID() async throws {
        let receiver = try await NotificationCollector.start()
        try await withTemporaryDirectory { directory in
            let ledger = try SampleCatalog.ledger(in: directory)
            _ = try StoreTestSession(ledger: ledger).set(.notificationURL, to: receiver.url)
            _ = try await StoreTestSession(ledger: ledger).buyProduct(Payment(productID: SampleCatalog.consumable))
            let path = ledger.path
            try ledger.close()
            // Killed the moment its POST arrives, long before its 5-second attempt could time
            // out (and be recorded), however loaded the machine: the receiver kills it, on its
            // own thread, or the test does if the POST came before the server's pid was known.
            receiver.answer(200, after: .seconds(30))
            // The pid is killed once, under the lock, before the process is reaped: never another
            // process that reused it.
            let firstServer = Mutex<pid_t?>(nil)
            let killFirst = { @Sendable in
                firstServer.withLock { pid in
                    if let running = pid { kill(running, SIGKILL) }
                    pid = nil
                }
            }
            receiver.whenEachArrives { _ in killFirst() }
            let first = try Server.start(path)
            firstServer.withLock { $0 = first.process.processIdentifier }
            if !receiver.arrivals.isEmpty { killFirst() }
            let arrived = await receiver.wait(forCount: 1, within: 60)
            #expect(arrived, "the POST arrived")
            killFirst()  // when it came before the pid was known, or never
            receiver.whenEachArrives(nil)
            first.process.waitUntilExit()
            receiver.answer(200)
            // The next sender (here in this process, with a timeout no load on a test machine
            // reaches) finds the notification never recorded as attempted and sends it again.
            var limits = NotificationSender.Limits()
            limits.attemptTimeout = .seconds(120)
            let resumed = try Ledger.open(at: path)
            let sender = NotificationSender(ledger: resumed, limits: limits)
            let round = try await sender.sendDue()
            try await sender.shutdown()
            try resumed.close()
            #expect(round.attempted.map(\.status) == [.delivered], "sent again")
            #expect(
                receiver.signedPayloads.count == 2 && Set(receiver.signedPayloads).count == 1, "the same notification")
            let reopened = try Ledger.open(at: path)
            let notifications = try reopened.notifications()
            #expect(notifications.map(\.status) == [.delivered])
            #expect(notifications.first?.attempts.map(\.result) == [.success], "one attempt recorded")
            #expect(try reopened.verify() == [])
            try reopened.close()
        }
        await receiver.stop()
    }
    /// Apple's client calls the endpoints that change or look up records: Look Up Order ID,
    /// Send Consumption Information (both versions), Set App Account Token, Extend a
    /// Subscription Renewal Date, the mass extension and its status; Apple's verifier accepts
    /// what they sign and the notifications they make (`RENEWAL_EXTENDED`, and the mass
    /// extension's `RENEWAL_EXTENSION` summary).
    @Test(.enabled(if: ApplePython.shouldRun, "\(ApplePython.unavailableReason)"))
    func applesClientCallsTheRecordAndExtensionEndpoints() async throws {
        let python = try #require(ApplePython.path, "\(ApplePython.unavailableReason)")
        let receiver = try await NotificationCollector.start()
        try await withTemporaryDirectory { directory in
            let (path, purchase, subscription) = try await Self.prepareNotifying(directory, to: receiver)
            let server = try Server.start(path)
            defer { _ = server.stop() }
            let script = """
                \(Self.applePython(directory, port: server.port))
                from appstoreserverlibrary.models.ConsumptionRequest import ConsumptionRequest
                from appstoreserverlibrary.models.ConsumptionRequestV1 import ConsumptionRequestV1
                from appstoreserverlibrary.models.ConsumptionStatus import ConsumptionStatus
                from appstoreserverlibrary.models.DeliveryStatus import DeliveryStatus
                from appstoreserverlibrary.models.DeliveryStatusV1 import DeliveryStatusV1
                from appstoreserverlibrary.models.Platform import Platform
                from appstoreserverlibrary.models.AccountTenure import AccountTenure
                from appstoreserverlibrary.models.PlayTime import PlayTime
                from appstoreserverlibrary.models.LifetimeDollarsRefunded import LifetimeDollarsRefunded
                from appstoreserverlibrary.models.LifetimeDollarsPurchased import LifetimeDollarsPurchased
                from appstoreserverlibrary.models.UserStatus import UserStatus
                from appstoreserverlibrary.models.ExtendRenewalDateRequest import ExtendRenewalDateRequest
                from appstoreserverlibrary.models.ExtendReasonCode import ExtendReasonCode
                from appstoreserverlibrary.models.MassExtendRenewalDateRequest import MassExtendRenewalDateRequest
                from appstoreserverlibrary.models.UpdateAppAccountTokenRequest import UpdateAppAccountTokenRequest
                order = client.look_up_order_id('\(OrderID.of(purchase))')
                print('order', order.status.value, [verifier.verify_and_decode_signed_transaction(s).transactionId for s in order.signedTransactions])
                print('no order', client.look_up_order_id('MNOPE').status.value)
                client.send_consumption_information('\(purchase)', ConsumptionRequest(
                    customerConsented=True, sampleContentProvided=False, deliveryStatus=DeliveryStatus.DELIVERED))
                client.send_consumption_data('\(subscription.id)', ConsumptionRequestV1(
                    customerConsented=True, consumptionStatus=ConsumptionStatus.NOT_CONSUMED, platform=Platform.APPLE,
                    sampleContentProvided=False, deliveryStatus=DeliveryStatusV1.DELIVERED_AND_WORKING_PROPERLY,
                    appAccountToken='', accountTenure=AccountTenure.UNDECLARED, playTime=PlayTime.UNDECLARED,
                    lifetimeDollarsRefunded=LifetimeDollarsRefunded.UNDECLARED,
                    lifetimeDollarsPurchased=LifetimeDollarsPurchased.UNDECLARED, userStatus=UserStatus.ACTIVE))
                print('consumption sent')
                token = '7e3fb20b-4cdb-47cc-936d-99d65f608138'
                client.set_app_account_token('\(subscription.id)', UpdateAppAccountTokenRequest(appAccountToken=token))
                info = client.get_transaction_info('\(subscription.id)')
                print('token', verifier.verify_and_decode_signed_transaction(info.signedTransactionInfo).appAccountToken == token)
                extended = client.extend_subscription_renewal_date('\(subscription.id)', ExtendRenewalDateRequest(
                    extendByDays=7, extendReasonCode=ExtendReasonCode.SERVICE_ISSUE_OR_OUTAGE, requestIdentifier='outage-1'))
                print('extended', extended.success, extended.originalTransactionId, extended.webOrderLineItemId)
                client.extend_renewal_date_for_all_active_subscribers(MassExtendRenewalDateRequest(
                    extendByDays=3, extendReasonCode=ExtendReasonCode.CUSTOMER_SATISFACTION, requestIdentifier='mass-1',
                    productId='\(SampleCatalog.subscription)', storefrontCountryCodes=['USA']))
                status = client.get_status_of_subscription_renewal_date_extensions('mass-1', '\(SampleCatalog.subscription)')
                print('mass', status.complete, status.succeededCount, status.failedCount)
                try:
                    client.extend_subscription_renewal_date('\(subscription.id)', ExtendRenewalDateRequest(
                        extendByDays=1, extendReasonCode=ExtendReasonCode.OTHER, requestIdentifier='third'))
                except APIException as e:
                    print('third', e.http_status_code, e.raw_api_error)
                """
            let result = try runProcess(python, ["-c", script])
            #expect(result.status == 0, "\(result.output)")
            #expect(
                result.output.split(separator: "\n").map(String.init) == [
                    "order 0 ['\(purchase)']", "no order 1", "consumption sent", "token True",
                    "extended True \(subscription.id) \(subscription.id)", "mass True 1 0", "third 403 4030005",
                ])
            #expect(await receiver.wait(forCount: 3, within: 10))
            let verified = try Self.verifyNotifications(
                python, directory, receiver,
                each: """
                    detail = n.summary.requestIdentifier if n.summary else n.data.environment.value
                    print(n.notificationType.value, n.subtype.value if n.subtype else '-', detail)
                    """)
            #expect(verified.status == 0)
            // The summary is of no transaction: it may overtake the second extension's.
            #expect(
                verified.output.split(separator: "\n").map(String.init).sorted() == [
                    "RENEWAL_EXTENDED - Sandbox", "RENEWAL_EXTENDED - Sandbox", "RENEWAL_EXTENSION SUMMARY mass-1",
                ])
        }
        await receiver.stop()
    }

    /// What Apple refuses, refused to Apple's client: a subscription in a free offer period
    /// (bought with the CLI's offer code) cannot be extended (403, 4030004) and counts as failed
    /// in a mass extension; one a family member shares cannot be extended (403, 4030007) nor get
    /// an app account token (400, 4000185). Apple's client's Finish Transaction finishes a purchase.
    @Test(.enabled(if: ApplePython.shouldRun, "\(ApplePython.unavailableReason)"))
    func applesClientIsRefusedWhatAppleRefusesOfFamilySharingAndFreePeriods() async throws {
        let python = try #require(ApplePython.path, "\(ApplePython.unavailableReason)")
        try await withTemporaryDirectory { directory in
            let (path, _) = try await Self.prepare(directory, buying: false)
            let trial = try Self.ledger(
                ["purchase", SampleCatalog.subscription, "--offer-code", "FREEMONTH", "--json"], on: path)
            let shared = try Self.ledger(
                ["family-sharing", "share", SampleCatalog.yearlySubscription, "--json"], on: path)
            func id(_ json: String) throws -> Int {
                try #require((try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])?["id"] as? Int)
            }
            let (trialID, sharedID) = (try id(trial), try id(shared))
            let server = try Server.start(path)
            defer { _ = server.stop() }
            let script = """
                \(Self.applePython(directory, port: server.port))
                from appstoreserverlibrary.models.ExtendRenewalDateRequest import ExtendRenewalDateRequest
                from appstoreserverlibrary.models.ExtendReasonCode import ExtendReasonCode
                from appstoreserverlibrary.models.MassExtendRenewalDateRequest import MassExtendRenewalDateRequest
                from appstoreserverlibrary.models.UpdateAppAccountTokenRequest import UpdateAppAccountTokenRequest
                def extend(id, request):
                    try:
                        client.extend_subscription_renewal_date(str(id), ExtendRenewalDateRequest(
                            extendByDays=5, extendReasonCode=ExtendReasonCode.OTHER, requestIdentifier=request))
                        print(request, 'extended')
                    except APIException as e:
                        print(request, e.http_status_code, e.raw_api_error)
                extend(\(trialID), 'trial')
                extend(\(sharedID), 'shared')
                client.extend_renewal_date_for_all_active_subscribers(MassExtendRenewalDateRequest(
                    extendByDays=3, extendReasonCode=ExtendReasonCode.OTHER, requestIdentifier='mass',
                    productId='\(SampleCatalog.subscription)'))
                status = client.get_status_of_subscription_renewal_date_extensions('mass', '\(SampleCatalog.subscription)')
                print('mass', status.complete, status.succeededCount, status.failedCount)
                client.finish_transaction('\(trialID)')
                print('finished', verifier.verify_and_decode_signed_transaction(client.get_transaction_info('\(trialID)').signedTransactionInfo).transactionId)
                try:
                    client.set_app_account_token('\(sharedID)', UpdateAppAccountTokenRequest(
                        appAccountToken='7e3fb20b-4cdb-47cc-936d-99d65f608138'))
                    print('token set')
                except APIException as e:
                    print('token', e.http_status_code, e.raw_api_error)
                """
            let result = try runProcess(python, ["-c", script])
            #expect(
                result.output.split(separator: "\n").map(String.init) == [
                    "trial 403 4030004", "shared 403 4030007", "mass True 0 1", "finished \(trialID)",
                    "token 400 4000185",
                ], "\(result.output)")
            #expect(result.status == 0)
            // Finish Transaction, from Apple's client: the device gets the purchase no more.
            let ledger = try Ledger.open(at: path)
            #expect(try ledger.transaction(UInt64(trialID))?.isFinished == true)
            try ledger.close()
        }
    }

    /// Apple's revision-based sync, with Apple's client: a server reads the history to its end
    /// and keeps the revision; a refund made with the CLI while `ledger serve` runs is what the
    /// same revision lists next (the history is ordered by modification); Get Notification
    /// History with any transaction of the customer's gives the customer's notifications.
    @Test(.enabled(if: ApplePython.shouldRun, "\(ApplePython.unavailableReason)"))
    func applesClientSyncsTheHistoryByRevisionAndSeesALaterRefund() async throws {
        let python = try #require(ApplePython.path, "\(ApplePython.unavailableReason)")
        let receiver = try await NotificationCollector.start()
        try await withTemporaryDirectory { directory in
            let (path, purchase, subscription) = try await Self.prepareNotifying(directory, to: receiver)
            let server = try Server.start(path)
            defer { _ = server.stop() }
            let sync = """
                \(Self.applePython(directory, port: server.port))
                import sys, time
                from appstoreserverlibrary.api_client import GetTransactionHistoryVersion
                from appstoreserverlibrary.models.TransactionHistoryRequest import TransactionHistoryRequest
                from appstoreserverlibrary.models.NotificationHistoryRequest import NotificationHistoryRequest
                revision = sys.argv[1] if sys.argv[1] != '-' else None
                ids = []
                while True:
                    page = client.get_transaction_history('\(purchase)', revision, TransactionHistoryRequest(), GetTransactionHistoryVersion.V2)
                    ids += [verifier.verify_and_decode_signed_transaction(s).transactionId for s in page.signedTransactions]
                    revision = page.revision
                    if not page.hasMore: break
                print(revision, ' '.join(ids))
                now = int(time.time() * 1000)
                request = NotificationHistoryRequest(startDate=now - 86400000, endDate=now + 400 * 86400000, transactionId='\(subscription.id)')
                items = client.get_notification_history(None, request).notificationHistory
                print(len(items))
                """
            let first = try runProcess(python, ["-c", sync, "-"])
            let firstLine = first.output.split(separator: "\n").map(String.init)
            #expect(first.status == 0 && firstLine.count == 2, "\(first.output)")
            let revision = String(firstLine.first?.split(separator: " ").first ?? "")
            #expect(
                Set(firstLine.first?.split(separator: " ").dropFirst() ?? []) == ["\(purchase)", "\(subscription.id)"])
            try Self.ledger(["refund", String(purchase)], on: path)
            let again = try runProcess(python, ["-c", sync, revision])
            let lines = again.output.split(separator: "\n").map(String.init)
            #expect(again.status == 0 && lines.count == 2, "\(again.output)")
            #expect(
                lines.first?.split(separator: " ").dropFirst().map(String.init) == ["\(purchase)"], "the refund, again")
            // The customer's notifications, whichever transaction names them: none was made
            // before the URL was set, then the refund's.
            #expect(lines.last == "1")
        }
        await receiver.stop()
    }

    /// SERVER.md's scenario, as Apple's client sees it: a subscription bought, upgraded,
    /// downgraded and cancelled back, crossgraded to another period, lapsed, bought again and
    /// refunded. One original transaction throughout: every transaction of the group in the
    /// history, and the status's last transaction, carry the first purchase's
    /// `originalTransactionId`, and an extension asked with it extends the current one. The
    /// downgrade, its cancellation and the crossgrade made no transaction: none is in the
    /// history, Get Transaction Info and Look Up Order ID know none of them, and the renewal
    /// after the crossgrade is the group's next transaction.
    @Test(.enabled(if: ApplePython.shouldRun, "\(ApplePython.unavailableReason)"))
    func applesClientSeesOneOriginalTransactionPerGroup() async throws {
        let python = try #require(ApplePython.path, "\(ApplePython.unavailableReason)")
        try await withTemporaryDirectory { directory in
            let (path, _) = try await Self.prepare(directory, buying: false)
            let day: TimeInterval = 86_400
            let ledger = try Ledger.open(at: path)
            let session = StoreTestSession(ledger: ledger)
            let first = try await session.buyProduct(Payment(productID: SampleCatalog.basicSubscription))
            try await session.advanceClock(by: day)
            let upgrade = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            let downgrade = try await session.buyProduct(Payment(productID: SampleCatalog.basicSubscription))
            let cancel = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            let crossgrade = try await session.buyProduct(Payment(productID: SampleCatalog.yearlySubscription))
            let renewed = try await session.advanceClock(by: 31 * day)
            #expect(renewed.map(\.productID) == [SampleCatalog.yearlySubscription])
            _ = try await session.expireSubscription(SampleCatalog.yearlySubscription)
            try await session.advanceClock(by: 10 * day)
            let refunded = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            _ = try await session.refundTransaction(refunded.id)
            _ = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            try ledger.close()
            let server = try Server.start(path)
            defer { _ = server.stop() }
            let script = """
                \(Self.applePython(directory, port: server.port))
                from appstoreserverlibrary.api_client import GetTransactionHistoryVersion
                from appstoreserverlibrary.models.TransactionHistoryRequest import TransactionHistoryRequest
                from appstoreserverlibrary.models.ExtendRenewalDateRequest import ExtendRenewalDateRequest
                from appstoreserverlibrary.models.ExtendReasonCode import ExtendReasonCode
                history = client.get_transaction_history('\(first.id)', None, TransactionHistoryRequest(), GetTransactionHistoryVersion.V2)
                decoded = [verifier.verify_and_decode_signed_transaction(s) for s in history.signedTransactions]
                print(len(decoded), sorted(set(t.originalTransactionId for t in decoded)))
                statuses = client.get_all_subscription_statuses('\(first.id)')
                print([verifier.verify_and_decode_signed_transaction(last.signedTransactionInfo).originalTransactionId
                       for group in statuses.data for last in group.lastTransactions])
                extended = client.extend_subscription_renewal_date('\(first.id)', ExtendRenewalDateRequest(
                    extendByDays=3, extendReasonCode=ExtendReasonCode.OTHER, requestIdentifier='one-original'))
                print(extended.success, extended.originalTransactionId)
                print(sorted(int(t.transactionId) for t in decoded))
                for payment in \([downgrade.id, cancel.id, crossgrade.id].map(String.init)):
                    try:
                        client.get_transaction_info(payment)
                    except APIException as e:
                        print('info', e.http_status_code, e.raw_api_error)
                for order in \([downgrade.id, cancel.id, crossgrade.id].map { "'\(OrderID.of($0))'" }):
                    found = client.look_up_order_id(order)
                    print('order', found.status.value, found.signedTransactions)
                """
            let result = try runProcess(python, ["-c", script])
            let lines = result.output.split(separator: "\n").map(String.init)
            #expect(result.status == 0, "\(result.output)")
            #expect(lines.count == 10, "\(result.output)")
            #expect(lines.first?.hasSuffix("['\(first.id)']") == true, "\(result.output)")
            #expect(lines.dropFirst().first == "['\(first.id)']")
            #expect(lines.dropFirst(2).first == "True \(first.id)")
            let listed = Set(
                lines.dropFirst(3).first?.dropFirst().dropLast().split(separator: ", ").map(String.init) ?? [])
            #expect(listed.isSuperset(of: [first.id, upgrade.id, renewed[0].id].map(String.init)), "\(lines)")
            #expect(listed.isDisjoint(with: [downgrade.id, cancel.id, crossgrade.id].map(String.init)), "\(lines)")
            #expect(
                Array(lines.dropFirst(4)) == Array(repeating: "info 404 4040010", count: 3)
                    + Array(repeating: "order 1 []", count: 3))
        }
    }

    /// A store of two customers, as Apple's client sees it through one `ledger serve`: each
    /// customer's history, statuses and app transaction are theirs (asked by any of their
    /// transactions, or their app transaction id), and the mass extension extends both.
    @Test(.enabled(if: ApplePython.shouldRun, "\(ApplePython.unavailableReason)"))
    func applesClientSeesEachCustomerApart() async throws {
        let python = try #require(ApplePython.path, "\(ApplePython.unavailableReason)")
        try await withTemporaryDirectory { directory in
            let (path, _) = try await Self.prepare(directory, buying: false)
            let ledger = try Ledger.open(at: path)
            try ledger.addCustomer(Customer(name: "alice"))
            try ledger.addCustomer(Customer(name: "bob"))
            let alice = try PaymentQueue(ledger: try ledger.forCustomer("alice"))
            let bob = try PaymentQueue(ledger: try ledger.forCustomer("bob"))
            let alicesLevel = try await alice.add(Payment(productID: SampleCatalog.nonConsumable))
            let alicesPro = try await alice.add(Payment(productID: SampleCatalog.subscription))
            let bobsPro = try await bob.add(Payment(productID: SampleCatalog.subscription))
            let bobsApp = try bob.ledger.appTransactionID()
            try ledger.close()
            let server = try Server.start(path)
            defer { _ = server.stop() }
            let script = """
                \(Self.applePython(directory, port: server.port))
                from appstoreserverlibrary.api_client import GetTransactionHistoryVersion
                from appstoreserverlibrary.models.TransactionHistoryRequest import TransactionHistoryRequest
                from appstoreserverlibrary.models.MassExtendRenewalDateRequest import MassExtendRenewalDateRequest
                from appstoreserverlibrary.models.ExtendReasonCode import ExtendReasonCode
                for customer in ['\(alicesLevel.id)', '\(bobsApp)']:
                    history = client.get_transaction_history(customer, None, TransactionHistoryRequest(), GetTransactionHistoryVersion.V2)
                    print(sorted(int(verifier.verify_and_decode_signed_transaction(s).transactionId) for s in history.signedTransactions))
                    statuses = client.get_all_subscription_statuses(customer)
                    print([verifier.verify_and_decode_signed_transaction(last.signedTransactionInfo).originalTransactionId
                           for group in statuses.data for last in group.lastTransactions])
                    app = client.get_app_transaction_info(customer)
                    print(verifier.verify_and_decode_app_transaction(app.signedAppTransactionInfo).appTransactionId)
                client.extend_renewal_date_for_all_active_subscribers(MassExtendRenewalDateRequest(
                    extendByDays=3, extendReasonCode=ExtendReasonCode.OTHER, requestIdentifier='both-customers',
                    productId='\(SampleCatalog.subscription)'))
                status = client.get_status_of_subscription_renewal_date_extensions('both-customers', '\(SampleCatalog.subscription)')
                print(status.succeededCount, status.failedCount)
                """
            let result = try runProcess(python, ["-c", script])
            let lines = result.output.split(separator: "\n").map(String.init)
            #expect(result.status == 0, "\(result.output)")
            #expect(lines.count == 7, "\(result.output)")
            #expect(lines.first == "[\(alicesLevel.id), \(alicesPro.id)]", "\(result.output)")
            #expect(lines.dropFirst().first == "['\(alicesPro.id)']")
            #expect(lines.dropFirst(2).first != bobsApp && lines.dropFirst(2).first?.isEmpty == false)
            #expect(lines.dropFirst(3).first == "[\(bobsPro.id)]")
            #expect(lines.dropFirst(4).first == "['\(bobsPro.id)']")
            #expect(lines.dropFirst(5).first == bobsApp)
            #expect(lines.last == "2 0")
        }
    }

    /// A store of two apps, as Apple's client sees it through one `ledger serve`: the token's
    /// bundle selects the app (a bundle the store does not have: 401), every answer holds only
    /// that app's data (the other app's transaction is not found, its history is not listed),
    /// and each app's notifications go to its own URL, signed for its bundle.
    @Test(.enabled(if: ApplePython.shouldRun, "\(ApplePython.unavailableReason)"))
    func applesClientSeesEachAppApartAndEachAppsNotificationsGoToItsURL() async throws {
        let python = try #require(ApplePython.path, "\(ApplePython.unavailableReason)")
        let first = try await NotificationCollector.start()
        let second = try await NotificationCollector.start()
        try await withTemporaryDirectory { directory in
            let (path, _) = try await Self.prepare(directory, buying: false)
            let ledger = try Ledger.open(at: path)
            try ledger.addApp(App(bundleID: "com.example.second", environment: .sandbox))
            let secondApp = try ledger.forApp("com.example.second")
            try secondApp.saveProducts([Product(id: "second.level", type: .nonConsumable, price: 1.99)])
            _ = try StoreTestSession(ledger: ledger).set(.notificationURL, to: first.url)
            _ = try StoreTestSession(ledger: secondApp).set(.notificationURL, to: second.url)
            try ledger.addCustomer(Customer(name: "alice"))
            let inFirst = try await PaymentQueue(ledger: try ledger.forCustomer("alice"))
                .add(Payment(productID: SampleCatalog.nonConsumable))
            let inSecond = try await PaymentQueue(ledger: try secondApp.forCustomer("alice"))
                .add(Payment(productID: "second.level"))
            // The first app's catalog has no product of the second's.
            await #expect(throws: UnknownProductError(productIdentifier: "second.level")) {
                try await PaymentQueue(ledger: try ledger.forCustomer("alice")).add(Payment(productID: "second.level"))
            }
            try ledger.close()
            let server = try Server.start(path)
            defer { _ = server.stop() }
            #expect(await first.wait(forCount: 1, within: 10))
            #expect(await second.wait(forCount: 1, within: 10))
            let script = """
                \(Self.applePython(directory, port: server.port))
                from appstoreserverlibrary.api_client import GetTransactionHistoryVersion
                from appstoreserverlibrary.models.TransactionHistoryRequest import TransactionHistoryRequest
                second = AppStoreServerAPIClient(key, 'KEY1', '\(Self.issuer)', 'com.example.second', Environment.SANDBOX)
                second._base_url = client._base_url
                second_verifier = SignedDataVerifier([root], False, Environment.SANDBOX, 'com.example.second')
                stranger = AppStoreServerAPIClient(key, 'KEY1', '\(Self.issuer)', 'com.example.stranger', Environment.SANDBOX)
                stranger._base_url = client._base_url
                t = second_verifier.verify_and_decode_signed_transaction(
                    second.get_transaction_info('\(inSecond.id)').signedTransactionInfo)
                print(t.bundleId, t.productId, t.transactionId)
                for api, id in [(client, '\(inSecond.id)'), (second, '\(inFirst.id)'), (stranger, '\(inFirst.id)')]:
                    try:
                        api.get_transaction_info(id)
                        print('answered')
                    except APIException as e:
                        print(e.http_status_code, e.raw_api_error)
                history = second.get_transaction_history('\(inSecond.id)', None, TransactionHistoryRequest(), GetTransactionHistoryVersion.V2)
                print([second_verifier.verify_and_decode_signed_transaction(s).productId for s in history.signedTransactions])
                """
            let result = try runProcess(python, ["-c", script])
            let lines = result.output.split(separator: "\n").map(String.init)
            #expect(result.status == 0, "\(result.output)")
            #expect(
                lines == [
                    "com.example.second second.level \(inSecond.id)", "404 4040010", "404 4040010", "401 None",
                    "['second.level']",
                ], "\(result.output)")
            // Each app's notification went to its URL, signed for its bundle.
            for (receiver, bundle, product) in [
                (first, "com.example.app", SampleCatalog.nonConsumable), (second, "com.example.second", "second.level"),
            ] {
                let received = directory + "/received-\(bundle).txt"
                try receiver.signedPayloads.joined(separator: "\n").write(
                    toFile: received, atomically: true, encoding: .utf8)
                let verify = try runProcess(
                    python,
                    [
                        "-c",
                        """
                        import sys
                        from appstoreserverlibrary.models.Environment import Environment
                        from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier
                        root = open('\(directory)/root.cer', 'rb').read()
                        verifier = SignedDataVerifier([root], False, Environment.SANDBOX, '\(bundle)')
                        for line in open(sys.argv[1]):
                            n = verifier.verify_and_decode_notification(line.strip())
                            t = verifier.verify_and_decode_signed_transaction(n.data.signedTransactionInfo)
                            print(n.notificationType.value, n.data.bundleId, t.productId)
                        """, received,
                    ])
                #expect(verify.output == "ONE_TIME_CHARGE \(bundle) \(product)\n", "\(verify.output)")
            }
        }
    }

    /// Runs `steps` (`ledger` commands on the ledger at `path`) while `ledger serve` runs on it,
    /// waits for `count` notifications at `receiver`, and returns what Apple's verifier printed
    /// for them with `each` (`verifyNotifications`), line by line.
    static func verifiedWhileServing(
        _ python: String, _ directory: String, path: String, receiver: NotificationCollector, count: Int,
        each: String, steps: () throws -> Void
    ) async throws -> [String] {
        let server = try Server.start(path)
        defer { _ = server.stop() }
        try steps()
        #expect(await receiver.wait(forCount: count, within: 10))
        let verified = try verifyNotifications(python, directory, receiver, each: each)
        #expect(verified.status == 0, "\(verified.output)")
        return verified.output.split(separator: "\n").map(String.init)
    }

    /// `ledger arguments... --database path`, expected to succeed; its standard output.
    @discardableResult
    static func ledger(_ arguments: [String], on path: String) throws -> String {
        let run = try LedgerProcess.run(arguments + ["--database", path])
        #expect(run.status == 0, "\(arguments): \(run.stderr)")
        return run.stdout
    }

    /// A refund request made with the CLI while `ledger serve` runs: Apple's verifier decodes
    /// the `CONSUMPTION_REQUEST` (with the customer's reason), the `REFUND_DECLINED` of a
    /// decline, and the `REFUND` of the grant that follows a second request.
    @Test(.enabled(if: ApplePython.shouldRun, "\(ApplePython.unavailableReason)"))
    func applesVerifierDecodesTheRefundRequestNotifications() async throws {
        let python = try #require(ApplePython.path, "\(ApplePython.unavailableReason)")
        let receiver = try await NotificationCollector.start()
        try await withTemporaryDirectory { directory in
            let (path, _, subscription) = try await Self.prepareNotifying(directory, to: receiver)
            let id = String(subscription.id)
            let lines = try await Self.verifiedWhileServing(
                python, directory, path: path, receiver: receiver, count: 4,
                each: """
                    t = verifier.verify_and_decode_signed_transaction(n.data.signedTransactionInfo)
                    reason = n.data.consumptionRequestReason.value if n.data.consumptionRequestReason else '-'
                    print(n.notificationType.value, reason, t.transactionId, t.revocationDate is not None)
                    """
            ) {
                for step in [
                    ["submit", id, "--reason", "UNSATISFIED_WITH_PURCHASE"], ["decline", id], ["submit", id],
                    ["approve", id],
                ] {
                    try Self.ledger(["refund-requests"] + step, on: path)
                }
            }
            // One original transaction's notifications are sent in commit order.
            #expect(
                lines == [
                    "CONSUMPTION_REQUEST UNSATISFIED_WITH_PURCHASE \(id) False", "REFUND_DECLINED - \(id) False",
                    "CONSUMPTION_REQUEST OTHER \(id) False", "REFUND - \(id) True",
                ])
        }
        await receiver.stop()
    }

    /// A prorated refund reversed with the CLI while `ledger serve` runs: Apple's verifier
    /// decodes REFUND with the refunded part, then REFUND_REVERSED with the transaction as it
    /// stands again (no revocation).
    @Test(.enabled(if: ApplePython.shouldRun, "\(ApplePython.unavailableReason)"))
    func applesVerifierDecodesAReversedRefund() async throws {
        let python = try #require(ApplePython.path, "\(ApplePython.unavailableReason)")
        let receiver = try await NotificationCollector.start()
        try await withTemporaryDirectory { directory in
            let (path, _, subscription) = try await Self.prepareNotifying(directory, to: receiver)
            let id = String(subscription.id)
            let lines = try await Self.verifiedWhileServing(
                python, directory, path: path, receiver: receiver, count: 2,
                each: """
                    t = verifier.verify_and_decode_signed_transaction(n.data.signedTransactionInfo)
                    print(n.rawNotificationType, t.transactionId, t.revocationDate is not None, t.rawRevocationType, t.revocationPercentage, n.data.rawStatus)
                    """
            ) {
                try Self.ledger(["refund", id, "--revocation-percentage", "25000"], on: path)
                try Self.ledger(["reverse-refund", id], on: path)
            }
            #expect(lines == ["REFUND \(id) True REFUND_PRORATED 25000 5", "REFUND_REVERSED \(id) False None None 1"])
        }
        await receiver.stop()
    }

    /// A price increase driven with the CLI while `ledger serve` runs: Apple's verifier decodes
    /// PRICE_INCREASE (PENDING, then ACCEPTED) with the renewal info's price increase status and
    /// new renewal price; then a declined one's DID_CHANGE_RENEWAL_STATUS and, once the period
    /// ends, EXPIRED / PRICE_INCREASE with expiration intent 3 ("did not consent").
    @Test(.enabled(if: ApplePython.shouldRun, "\(ApplePython.unavailableReason)"))
    func applesVerifierDecodesThePriceIncreaseNotifications() async throws {
        let python = try #require(ApplePython.path, "\(ApplePython.unavailableReason)")
        let receiver = try await NotificationCollector.start()
        try await withTemporaryDirectory { directory in
            let (path, _, subscription) = try await Self.prepareNotifying(directory, to: receiver)
            let product = subscription.productID
            let lines = try await Self.verifiedWhileServing(
                python, directory, path: path, receiver: receiver, count: 6,
                each: """
                    r = verifier.verify_and_decode_renewal_info(n.data.signedRenewalInfo)
                    subtype = n.rawSubtype if n.rawSubtype else '-'
                    print(n.rawNotificationType, subtype, r.rawPriceIncreaseStatus, r.renewalPrice, r.rawExpirationIntent)
                    """
            ) {
                for step in [
                    ["subscriptions", "price-increase", "request", product, "--price", "6.99"],
                    ["subscriptions", "price-increase", "consent", product], ["subscriptions", "renew", product],
                    ["subscriptions", "price-increase", "request", product, "--price", "8.99"],
                    ["subscriptions", "price-increase", "decline", product], ["clock", "advance", "40d"],
                ] {
                    try Self.ledger(step, on: path)
                }
            }
            #expect(
                lines == [
                    "PRICE_INCREASE PENDING 0 6990 None", "PRICE_INCREASE ACCEPTED 1 6990 None",
                    "DID_RENEW - None 6990 None", "PRICE_INCREASE PENDING 0 8990 None",
                    "DID_CHANGE_RENEWAL_STATUS AUTO_RENEW_DISABLED 0 8990 None", "EXPIRED PRICE_INCREASE 0 8990 3",
                ])
        }
        await receiver.stop()
    }

    /// A downgrade and its cancellation with the CLI while `ledger serve` runs: Apple's verifier
    /// decodes `DID_CHANGE_RENEWAL_PREF` `DOWNGRADE`, then with no subtype, each carrying the
    /// period the customer has (no transaction of the downgrade) and renewal info naming the
    /// product it renews to; the renewal is the current product's.
    @Test(.enabled(if: ApplePython.shouldRun, "\(ApplePython.unavailableReason)"))
    func applesVerifierDecodesADowngradeAndItsCancellation() async throws {
        let python = try #require(ApplePython.path, "\(ApplePython.unavailableReason)")
        let receiver = try await NotificationCollector.start()
        try await withTemporaryDirectory { directory in
            let (path, _, subscription) = try await Self.prepareNotifying(directory, to: receiver)
            let lines = try await Self.verifiedWhileServing(
                python, directory, path: path, receiver: receiver, count: 3,
                each: """
                    t = verifier.verify_and_decode_signed_transaction(n.data.signedTransactionInfo)
                    r = verifier.verify_and_decode_renewal_info(n.data.signedRenewalInfo)
                    subtype = n.rawSubtype if n.rawSubtype else '-'
                    print(n.rawNotificationType, subtype, t.transactionId, t.productId, r.autoRenewProductId)
                    """
            ) {
                try Self.ledger(["purchase", SampleCatalog.basicSubscription], on: path)
                try Self.ledger(["purchase", SampleCatalog.subscription], on: path)
                try Self.ledger(["clock", "advance", "31d"], on: path)
            }
            let (current, pro, basic) = (subscription.id, SampleCatalog.subscription, SampleCatalog.basicSubscription)
            #expect(lines.count == 3)
            #expect(
                lines.prefix(2) == [
                    "DID_CHANGE_RENEWAL_PREF DOWNGRADE \(current) \(pro) \(basic)",
                    "DID_CHANGE_RENEWAL_PREF - \(current) \(pro) \(pro)",
                ])
            #expect(lines.last?.hasPrefix("DID_RENEW - ") == true && lines.last?.hasSuffix(" \(pro) \(pro)") == true)
            #expect(lines.last?.contains(" \(current) ") == false, "the renewal is a new transaction")
        }
        await receiver.stop()
    }

    /// A family member's purchase shared, then no longer, with the CLI while `ledger serve`
    /// runs: Apple's verifier decodes ONE_TIME_CHARGE and REVOKE, each transaction owned
    /// FAMILY_SHARED, the second revoked as FAMILY_REVOKE.
    @Test(.enabled(if: ApplePython.shouldRun, "\(ApplePython.unavailableReason)"))
    func applesVerifierDecodesTheFamilySharingNotifications() async throws {
        let python = try #require(ApplePython.path, "\(ApplePython.unavailableReason)")
        let receiver = try await NotificationCollector.start()
        try await withTemporaryDirectory { directory in
            let (path, _, _) = try await Self.prepareNotifying(directory, to: receiver)
            var id = 0
            let lines = try await Self.verifiedWhileServing(
                python, directory, path: path, receiver: receiver, count: 2,
                each: """
                    t = verifier.verify_and_decode_signed_transaction(n.data.signedTransactionInfo)
                    print(n.rawNotificationType, t.transactionId, t.rawInAppOwnershipType, t.rawRevocationType)
                    """
            ) {
                let shared = try Self.ledger(
                    ["family-sharing", "share", SampleCatalog.nonConsumable2, "--json"], on: path)
                id = try #require(
                    (try JSONSerialization.jsonObject(with: Data(shared.utf8)) as? [String: Any])?["id"] as? Int)
                try Self.ledger(["family-sharing", "revoke", String(id)], on: path)
            }
            #expect(lines == ["ONE_TIME_CHARGE \(id) FAMILY_SHARED None", "REVOKE \(id) FAMILY_SHARED FAMILY_REVOKE"])
        }
        await receiver.stop()
    }

    /// An offer code redeemed with the CLI while `ledger serve` runs: Apple's verifier decodes
    /// OFFER_REDEEMED / INITIAL_BUY and a transaction whose offer is a code (offer type 3).
    @Test(.enabled(if: ApplePython.shouldRun, "\(ApplePython.unavailableReason)"))
    func applesVerifierDecodesAnOfferCodeRedemption() async throws {
        let python = try #require(ApplePython.path, "\(ApplePython.unavailableReason)")
        let receiver = try await NotificationCollector.start()
        try await withTemporaryDirectory { directory in
            // A ledger with nothing bought: the customer is new to the group.
            let ledger = try SampleCatalog.ledger(in: directory)
            let session = StoreTestSession(ledger: ledger)
            try session.update {
                $0.environment = .sandbox
                $0.bundleID = "com.example.app"
            }
            _ = try session.set(.notificationURL, to: receiver.url)
            try Data(try ledger.signingCertificates().root).write(to: URL(fileURLWithPath: directory + "/root.cer"))
            let path = ledger.path
            try ledger.close()
            let lines = try await Self.verifiedWhileServing(
                python, directory, path: path, receiver: receiver, count: 1,
                each: """
                    t = verifier.verify_and_decode_signed_transaction(n.data.signedTransactionInfo)
                    print(n.rawNotificationType, n.rawSubtype, t.rawOfferType, t.offerIdentifier, t.rawOfferDiscountType)
                    """
            ) {
                try Self.ledger(["purchase", SampleCatalog.subscription, "--offer-code", "FREEMONTH"], on: path)
            }
            #expect(lines == ["OFFER_REDEEMED INITIAL_BUY 3 FREEMONTH FREE_TRIAL"])
        }
        await receiver.stop()
    }

    /// A win-back offer with the CLI while `ledger serve` runs: Apple's verifier decodes the
    /// lapse (EXPIRED / VOLUNTARY) with the renewal info's eligible win-back offers, then
    /// OFFER_REDEEMED / RESUBSCRIBE with a transaction whose offer is win-back (offer type 4).
    @Test(.enabled(if: ApplePython.shouldRun, "\(ApplePython.unavailableReason)"))
    func applesVerifierDecodesAWinBackRedemption() async throws {
        let python = try #require(ApplePython.path, "\(ApplePython.unavailableReason)")
        let receiver = try await NotificationCollector.start()
        try await withTemporaryDirectory { directory in
            let (path, _, subscription) = try await Self.prepareNotifying(directory, to: receiver)
            let basic = SampleCatalog.basicSubscription
            let lines = try await Self.verifiedWhileServing(
                python, directory, path: path, receiver: receiver, count: 6,
                each: """
                    t = verifier.verify_and_decode_signed_transaction(n.data.signedTransactionInfo)
                    r = verifier.verify_and_decode_renewal_info(n.data.signedRenewalInfo)
                    subtype = n.rawSubtype if n.rawSubtype else '-'
                    print(n.rawNotificationType, subtype, t.productId, t.rawOfferType, t.offerIdentifier, r.eligibleWinBackOfferIds)
                    """
            ) {
                try Self.ledger(["subscriptions", "auto-renew", subscription.productID, "off"], on: path)
                try Self.ledger(["clock", "advance", "32d"], on: path)
                try Self.ledger(["purchase", basic], on: path)
                try Self.ledger(["subscriptions", "auto-renew", basic, "off"], on: path)
                try Self.ledger(["clock", "advance", "32d"], on: path)
                try Self.ledger(["purchase", basic, "--win-back-offer", "COMEBACK_FREE"], on: path)
            }
            // Each original transaction's notifications come in commit order; the chains'
            // interleave (the win-back purchase starts one of its own).
            let monthly = subscription.productID
            #expect(
                lines.sorted()
                    == [
                        "DID_CHANGE_RENEWAL_STATUS AUTO_RENEW_DISABLED \(monthly) None None None",
                        "EXPIRED VOLUNTARY \(monthly) None None None",
                        "SUBSCRIBED RESUBSCRIBE \(basic) None None None",
                        "DID_CHANGE_RENEWAL_STATUS AUTO_RENEW_DISABLED \(basic) None None None",
                        "EXPIRED VOLUNTARY \(basic) None None ['COMEBACK_FREE']",
                        "OFFER_REDEEMED RESUBSCRIBE \(basic) 4 COMEBACK_FREE None",
                    ].sorted(), "\(lines)")
        }
        await receiver.stop()
    }
}
