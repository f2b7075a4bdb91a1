/// An enum of numbered cases (StoreKit's error codes, time rates, revocation reasons) that
/// people may write by name (`paymentNotAllowed`, any letter case) or by number (`4`).
package protocol NamedCode: CaseIterable, RawRepresentable where RawValue == Int {}

extension NamedCode {
    /// The case name, as StoreKit spells it.
    package var name: String { String(describing: self) }

    /// Parses a case name (any letter case) or a raw value.
    package init?(nameOrRawValue text: String) {
        if let raw = Int(text), let value = Self(rawValue: raw) {
            self = value
            return
        }
        guard let value = Self.allCases.first(where: { $0.name.lowercased() == text.lowercased() }) else { return nil }
        self = value
    }
}
