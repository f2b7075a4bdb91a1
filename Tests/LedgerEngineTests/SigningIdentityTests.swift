import Crypto
import Foundation
import GRDB
import LedgerTestSupport
import LedgerTesting
import SwiftASN1
import Testing
import X509

@testable import LedgerEngine
@testable import LedgerSigning
@testable import SimulatedStore

/// Every ledger's signing identity: made with the ledger (or its migration to schema 9), kept.
@Suite struct SigningIdentityTests {
    @Test func aNewLedgerHasAChainFromItsLeafToItsOwnRoot() async throws {
        try await withLedger { (ledger, _) throws in
            let certificates = try ledger.signingCertificates()
            let leaf = try Certificate(derEncoded: certificates.leaf)
            let intermediate = try Certificate(derEncoded: certificates.intermediate)
            let root = try Certificate(derEncoded: certificates.root)
            #expect(
                leaf.issuer == intermediate.subject && intermediate.issuer == root.subject
                    && root.issuer == root.subject)
            #expect(intermediate.publicKey.isValidSignature(leaf.signature, for: leaf))
            #expect(root.publicKey.isValidSignature(intermediate.signature, for: intermediate))
            #expect(root.publicKey.isValidSignature(root.signature, for: root))
            #expect(leaf.extensions[oid: SigningIdentity.leafMarker] != nil)
            #expect(intermediate.extensions[oid: SigningIdentity.intermediateMarker] != nil)
            // The key the ledger keeps is the leaf's.
            let identity = try ledger.read { db in try SigningIdentity.load(db) }
            #expect(Certificate.PublicKey(identity.privateKey.publicKey) == leaf.publicKey)
            #expect(certificates.chain == [certificates.leaf, certificates.intermediate, certificates.root])
            #expect(SigningCertificates.fingerprint(certificates.root).count == 64)
        }
    }

    @Test func theIdentityIsNeverChangedNorDeleted() async throws {
        try await withLedger { (ledger, _) throws in
            let before = try ledger.signingCertificates()
            for sql in [
                "UPDATE signing_identity SET created_at = 0", "DELETE FROM signing_identity",
                "INSERT INTO signing_identity VALUES (2, zeroblob(32), x'00', x'00', x'00', 0)",
            ] {
                #expect(throws: LedgerError.self, Comment(rawValue: sql)) {
                    try ledger.write { db in try db.execute(sql: sql) }
                }
            }
            #expect(try ledger.signingCertificates() == before)
        }
    }

    /// An identity edited behind the ledger's back (its trigger dropped) is reported as a
    /// damaged ledger, not trapped on.
    @Test func aDamagedIdentityIsReportedAsCorrupted() async throws {
        try await withLedger { (ledger, _) throws in
            try ledger.write { db in
                try db.execute(sql: "DROP TRIGGER signing_identity_is_kept")
                try db.execute(sql: "UPDATE signing_identity SET leaf_certificate = 'not a certificate'")
            }
            #expect {
                try ledger.signingCertificates()
            } throws: { error in
                (error as? LedgerError)?.code == .corrupted && (error as? LedgerError)?.path == ledger.path
            }
        }
    }

    /// A ledger written by the previous schema gets its identity when it is migrated, in the
    /// migration's own commit, and keeps it afterwards.
    @Test func aLedgerOfSchema8GetsItsIdentityWhenItIsMigrated() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/old.sqlite"
            let old = try olderLedger(at: path, migrations: Array(Migration.embedded.prefix(8)))
            try old.close()
            // A read leaves it alone; the first write (here, the open for writing) migrates it.
            #expect(throws: LedgerError.self) { try Ledger.open(at: path, access: .readOnly) }
            let ledger = try Ledger.open(at: path)
            let certificates = try ledger.signingCertificates()
            #expect(try ledger.appliedMigrations() == Ledger.knownMigrations)
            try ledger.close()
            #expect(try Ledger.open(at: path, access: .readOnly).signingCertificates() == certificates)
        }
    }

    /// The header every JWS carries is encoded once per identity, by hand: it must be the JSON
    /// object a JSON library reads as ES256 and the chain, and a JWS made from its parts must be
    /// the one its compact serialization reads back as.
    @Test func theEncodedHeaderIsTheChainAndASignedJWSReadsBackAsItself() throws {
        let identity = try SigningIdentity.make(at: Date(timeIntervalSince1970: 1_800_000_000))
        let header = try #require(try JSONSerialization.jsonObject(with: identity.jwsHeader.json) as? [String: Any])
        #expect(header.count == 2 && header["alg"] as? String == "ES256")
        #expect(
            (header["x5c"] as? [String]) == identity.certificates.chain.map { Data($0).base64EncodedString() })
        #expect(identity.jwsHeader.part == JWS.base64URL(identity.jwsHeader.json))
        let signed = try JWS.sign(payload: Data(#"{"a":"/x"}"#.utf8), with: identity)
        let read = try JWS(compactSerialization: signed.compactSerialization)
        #expect(read.header == signed.header && read.payload == signed.payload && read.signature == signed.signature)
        #expect(read.signatureMatches == nil, "read from text: checked whole")
        try read.verify(trustingRoot: identity.certificates.root)
    }

    /// A JWS this process signed is not checked again for its signature (its signer knows
    /// whether it made it to match), but everything else is: another root refuses its chain, a
    /// signature made not to match is `.invalidSignature`, and read back from its text the
    /// same JWS is checked whole, with the same verdicts.
    @Test func aJWSSignedHereSkipsOnlyItsOwnSignatureCheck() throws {
        let identity = try SigningIdentity.make(at: Date(timeIntervalSince1970: 1_800_000_000))
        let other = try SigningIdentity.make(at: Date(timeIntervalSince1970: 1_800_000_000))
        let payload = Data(#"{"signedDate":1800000000000}"#.utf8)
        let matching = try JWS.sign(payload: payload, with: identity)
        let mismatched = try JWS.sign(payload: payload, with: identity, matching: false)
        #expect(matching.signatureMatches == true && mismatched.signatureMatches == false)
        for jws in [matching, try JWS(compactSerialization: matching.compactSerialization)] {
            try jws.verify(trustingRoot: identity.certificates.root)
            #expect { try jws.verify(trustingRoot: other.certificates.root) } throws: {
                ($0 as? JWSVerificationError)?.kind == .invalidCertificateChain
            }
        }
        for jws in [mismatched, try JWS(compactSerialization: mismatched.compactSerialization)] {
            #expect { try jws.verify(trustingRoot: identity.certificates.root) } throws: {
                ($0 as? JWSVerificationError)?.kind == .invalidSignature
            }
        }
        // An identity whose key is not its leaf's (swapped in the file): what it signs is not
        // taken on trust, and its signature does not verify.
        let swapped = SigningIdentity(
            privateKey: P256.Signing.PrivateKey(), certificates: identity.certificates, createdAt: identity.createdAt)
        #expect(identity.keyIsTheLeafs && !swapped.keyIsTheLeafs)
        let forged = try JWS.sign(payload: payload, with: swapped)
        #expect(forged.signatureMatches == nil)
        #expect { try forged.verify(trustingRoot: identity.certificates.root) } throws: {
            ($0 as? JWSVerificationError)?.kind == .invalidSignature
        }
    }

    @Test func aPEMBlockHasLinesOf64Characters() throws {
        let der = [UInt8](repeating: 0xAB, count: 100)  // 136 base64 characters: 64 + 64 + 8
        let pem = SigningCertificates.pem(der)
        let lines = pem.split(separator: "\n")
        #expect(lines.first == "-----BEGIN CERTIFICATE-----" && lines.last == "-----END CERTIFICATE-----")
        #expect(lines.dropFirst().dropLast().map(\.count) == [64, 64, 8] && pem.hasSuffix("\n"))
        #expect(Data(base64Encoded: lines.dropFirst().dropLast().joined()) == Data(der))
    }
}
