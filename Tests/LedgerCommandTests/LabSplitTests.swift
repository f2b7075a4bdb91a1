import Foundation
import LedgerTestSupport
import LedgerTesting
import Testing

/// The lab (benchmark, C baseline, crash campaigns, fault VFS) lives in `ledger-lab`; the shipped
/// `ledger` has none of it.
@Suite struct LabSplitTests {
    /// Names only the lab's code carries: the crash-testing module, its fault injection, the C
    /// baseline's entry point. The lab's executable has them, so the check can fail.
    @Test func theShippedToolLinksNothingOfTheLab() throws {
        let markers = ["LedgerTesting", "FaultInjection", "lbase_open"]
        let ledger = try Data(contentsOf: URL(fileURLWithPath: LedgerProcess.Program.ledger.path))
        let lab = try Data(contentsOf: URL(fileURLWithPath: LedgerProcess.Program.lab.path))
        for marker in markers {
            #expect(ledger.range(of: Data(marker.utf8)) == nil, "`ledger` contains \(marker)")
            #expect(lab.range(of: Data(marker.utf8)) != nil, "`ledger-lab` lacks \(marker)")
        }
    }

    @Test func theShippedToolIgnoresAFaultSetting() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            let result = try workspace.ledger(
                "purchase", SampleCatalog.consumable, environment: ["STORELEDGER_FAULT": "disk-full@write:1"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect((try workspace.json("list")["transactions"] as? [Any])?.count == 1)
        }
    }

    @Test func theLabRefusesABadFaultSettingAndChangesNothing() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            for (setting, message) in [
                ("bogus", #"invalid STORELEDGER_FAULT "bogus": use KIND@write:N or KIND@sync:N"#),
                ("flood@write:1", #"invalid STORELEDGER_FAULT kind "flood": power, io, io-persistent or disk-full"#),
                ("io@write:0", #"invalid STORELEDGER_FAULT "io@write:0""#),
            ] {
                let result = try LedgerProcess.run(
                    ["ledger", "purchase", SampleCatalog.consumable, "--database", workspace.database],
                    environment: ["STORELEDGER_FAULT": setting], program: .lab)
                #expect(result.status == 64, "\(setting): \(result.stderr)")
                #expect(result.stderr.contains(message), "\(result.stderr)")
            }
            #expect((try workspace.json("list")["transactions"] as? [Any])?.isEmpty == true)
        }
    }
}
