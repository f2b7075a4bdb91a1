import OpenStoreKit
import OpenStoreKitTest
import StoreLedger
import Testing

/// StoreKit's enums are written out with Apple's names in OpenStoreKit (a client importing only
/// it must see their cases), mirroring the ledger's: the mirrors name the same cases with the
/// same raw values.
@Suite struct MirrorTests {
    /// Each raw value from -1 to 2,000 (time rates go past 1,000): the case each enum has for it, by name.
    static func cases<Mirror: RawRepresentable, Original: RawRepresentable>(
        _ mirror: Mirror.Type, _ original: Original.Type
    ) -> [(raw: Int, mirror: String?, original: String?)] where Mirror.RawValue == Int, Original.RawValue == Int {
        (-1...2_000).map { raw in
            (
                raw, Mirror(rawValue: raw).map { String(describing: $0) },
                Original(rawValue: raw).map { String(describing: $0) }
            )
        }
    }

    @Test func skErrorCodesAreTheLedgersStoreErrorCodes() {
        let cases = Self.cases(SKError.Code.self, StoreErrorCode.self)
        for (raw, mirror, original) in cases { #expect(mirror == original, "raw value \(raw)") }
        #expect(cases.filter { $0.original != nil }.count == StoreErrorCode.allCases.count)
    }

    @Test func skTestSessionTimeRatesAreTheLedgersTimeRates() {
        let cases = Self.cases(SKTestSession.TimeRate.self, TimeRate.self)
        for (raw, mirror, original) in cases { #expect(mirror == original, "raw value \(raw)") }
        #expect(cases.filter { $0.original != nil }.count == TimeRate.allCases.count)
    }
}
