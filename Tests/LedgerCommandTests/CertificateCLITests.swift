import Foundation
import LedgerTestSupport
import LedgerTesting
import Testing

/// `ledger certificate export`: each ledger's own test signing identity.
@Suite struct CertificateCLITests {
    @Test func theRootIsExportedAsPEMOrDERAndStaysTheSame() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            let pem = try workspace.ledger("certificate", "export")
            #expect(pem.status == 0, "\(pem.stderr)")
            #expect(
                pem.stdout.hasPrefix("-----BEGIN CERTIFICATE-----\n")
                    && pem.stdout.hasSuffix("-----END CERTIFICATE-----\n"))
            let json = try workspace.json("certificate", "export")
            #expect(json["certificate"] as? String == pem.stdout && json["format"] as? String == "pem")
            let der = workspace.directory + "/root.der"
            let written = try workspace.json("certificate", "export", "--format", "der", "--output", der)
            #expect(written["output"] as? String == der && written["sha256"] as? String == json["sha256"] as? String)
            // The DER file is the PEM's content, and the same identity is exported every time.
            let body = pem.stdout.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
            #expect(fileBytes(der) == Data(base64Encoded: body))
            #expect(try workspace.ledger("certificate", "export").stdout == pem.stdout)
            // Another ledger has another identity.
            let other = workspace.directory + "/other.sqlite"
            #expect(try LedgerProcess.run(["init", "--database", other]).status == 0)
            #expect(try LedgerProcess.run(["certificate", "export", "--database", other]).stdout != pem.stdout)
            #expect(
                try workspace.ledger("certificate", "export", "--chain").stdout.components(
                    separatedBy: "BEGIN CERTIFICATE"
                ).count == 4)
        }
    }

    @Test func badRequestsAreRefusedAndWriteNothing() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            let der = try workspace.ledger("certificate", "export", "--format", "der")
            #expect(der.status == 64 && der.stderr.contains("--format der writes binary: give --output FILE"))
            let chain = try workspace.ledger("certificate", "export", "--chain", "--format", "der", "--output", "x.der")
            #expect(chain.status == 64 && chain.stderr.contains("--chain is PEM only"))
            let taken = workspace.directory + "/taken.pem"
            try write("keep me", to: taken)
            let refused = try workspace.ledger("certificate", "export", "--output", taken)
            #expect(
                refused.status == 1
                    && refused.stderr.contains("\(taken) exists: the certificate is never written over a file"))
            #expect(fileBytes(taken) == Data("keep me".utf8))
            let missing = try LedgerProcess.run([
                "certificate", "export", "--database", workspace.directory + "/none.sqlite",
            ])
            #expect(missing.status == 66)
            let nowhere = workspace.directory + "/no-such-folder/root.pem"
            let unwritable = try workspace.ledger("certificate", "export", "--output", nowhere)
            #expect(
                unwritable.status == 73
                    && unwritable.stderr.contains("cannot write \(nowhere): No such file or directory"))
            // Nothing half-written is left behind, under its name or a temporary one.
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: workspace.directory).sorted()
                    == ["Sample.storekit", "ledger.sqlite", "ledger.sqlite-shm", "ledger.sqlite-wal", "taken.pem"]
                    .filter {
                        FileManager.default.fileExists(atPath: workspace.directory + "/" + $0)
                    })
        }
    }

    /// The chain passes the checks Apple's App Store Server Library makes on the App Store's
    /// own chains (its `_ChainVerifier`: OpenSSL's strict X.509 verification against the given
    /// root, and Apple's marker extensions on the leaf and the intermediate), and fails them
    /// against another ledger's root or after the leaf has expired.
    @Test(
        .enabled(
            if: ApplePython.shouldRun,
            "app-store-server-library and jwcrypto are not in .build/python (.ci/run installs them)"))
    func applesServerLibraryAcceptsTheChainOnlyWithItsRootAndWhileTheLeafIsValid() async throws {
        guard let python = ApplePython.path else {
            Issue.record("STORELEDGER_PYTHON is set, but: \(ApplePython.unavailableReason)")
            return
        }
        try await CLIWorkspace.withCatalog { workspace in
            let chain = workspace.directory + "/chain.pem"
            let root = workspace.directory + "/root.der"
            let otherRoot = workspace.directory + "/other.der"
            let other = workspace.directory + "/other.sqlite"
            #expect(try workspace.ledger("certificate", "export", "--chain", "--output", chain).status == 0)
            #expect(try workspace.ledger("certificate", "export", "--format", "der", "--output", root).status == 0)
            #expect(try LedgerProcess.run(["init", "--database", other]).status == 0)
            #expect(
                try LedgerProcess.run([
                    "certificate", "export", "--database", other, "--format", "der", "--output", otherRoot,
                ]).status == 0)
            let script = """
                import base64, sys
                from cryptography import x509
                from cryptography.hazmat.primitives.serialization import Encoding
                from appstoreserverlibrary.signed_data_verifier import _ChainVerifier, VerificationException
                marker = "-----END CERTIFICATE-----"
                pems = [p + marker for p in open(sys.argv[1]).read().split(marker)[:3]]
                chain = [base64.b64encode(x509.load_pem_x509_certificate(p.encode()).public_bytes(Encoding.DER)).decode() for p in pems]
                for root_file, when in [(sys.argv[2], 1_900_000_000), (sys.argv[3], 1_900_000_000), (sys.argv[2], 4_000_000_000)]:
                    try:
                        _ChainVerifier([open(root_file, "rb").read()]).verify_chain(chain, False, when)
                        print("verified")
                    except VerificationException as e:
                        print("rejected", e.status.name)
                """
            let run = try runProcess(python, ["-c", script, chain, root, otherRoot])
            #expect(run.status == 0)
            #expect(
                run.output.split(separator: "\n") == [
                    "verified", "rejected VERIFICATION_FAILURE", "rejected VERIFICATION_FAILURE",
                ], "\(run.output)")
        }
    }
}
