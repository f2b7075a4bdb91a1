public import Foundation

/// Where a download of hosted content stands (`SKDownloadState`), with StoreKit's raw values.
public enum SKDownloadState: Int, Sendable {
    /// Waiting to start.
    case waiting = 0
    /// Downloading.
    case active = 1
    /// Paused by the app.
    case paused = 2
    /// Done: the content is at `contentURL`.
    case finished = 3
    /// Failed: `error` says why.
    case failed = 4
    /// Cancelled by the app.
    case cancelled = 5
}

// swift-format-ignore: AlwaysUseLowerCamelCase
// StoreKit's own name: code written for StoreKit uses it as it is.
/// `SKDownload.timeRemaining` when the time is not known.
public let SKDownloadTimeRemainingUnknown: TimeInterval = -1

/// Hosted content of a purchase (StoreKit 1's `SKDownload`). Hosted content is not simulated:
/// no transaction has downloads (`SKPaymentTransaction.downloads` is always empty), so the
/// store never makes one; the type exists so that code handling downloads compiles unchanged.
///
/// Sendable by hand: a snapshot, its properties set by the initializer only.
open class SKDownload: NSObject, @unchecked Sendable {
    /// Where the download stands.
    open private(set) var state: SKDownloadState
    /// The identifier of the hosted content in App Store Connect.
    open private(set) var contentIdentifier: String
    /// The size of the content, in bytes.
    open private(set) var expectedContentLength: Int64
    /// The size of the content, in bytes: `expectedContentLength`, under the name StoreKit had
    /// before iOS 12 (deprecated there; code that still names it compiles unchanged).
    open var contentLength: Int64 { expectedContentLength }
    /// Where the downloaded content is, once finished.
    open private(set) var contentURL: URL?
    /// The version of the content.
    open private(set) var contentVersion: String
    /// Why the download failed.
    open private(set) var error: (any Error)?
    /// How much of the content arrived, from 0 to 1.
    open private(set) var progress: Float
    /// Seconds until the download ends, or `SKDownloadTimeRemainingUnknown`.
    open private(set) var timeRemaining: TimeInterval
    /// The transaction the content belongs to.
    open private(set) var transaction: SKPaymentTransaction

    init(transaction: SKPaymentTransaction, contentIdentifier: String, contentVersion: String) {
        self.transaction = transaction
        self.contentIdentifier = contentIdentifier
        self.contentVersion = contentVersion
        state = .waiting
        expectedContentLength = 0
        progress = 0
        timeRemaining = SKDownloadTimeRemainingUnknown
        super.init()
    }
}
