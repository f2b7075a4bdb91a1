import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import Testing

// What the README's examples call without defining: an app's own functions.
func unlockContent(for productID: String, transactionID: UInt64) async {}
func showError(_ error: TransactionError?) {}

@Suite struct ReadmeExamplesTests {
    /// ReadmeExamples.swift (compiled with the tests) holds exactly the README's examples.
    @Test func readmeExamplesAreCurrent() throws {
        #expect(try checkGeneratedFile(tool: "readme-examples") == 0, "run tools/readme-examples")
    }
}
