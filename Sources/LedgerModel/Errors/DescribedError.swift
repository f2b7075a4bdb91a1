public import Foundation

/// An error whose `description` is the message it prints, also as `localizedDescription`
/// (`LocalizedError`), so that `"\(error)"` and `error.localizedDescription` say the same.
public protocol DescribedError: LocalizedError, CustomStringConvertible {}

extension DescribedError {
    public var errorDescription: String? { description }
}
