package import Foundation

/// Writes a new file whole or not at all: into a temporary file beside it, synced, then linked
/// into place (never over an existing file), and the directory synced so that the new name is
/// durable. A failure leaves nothing at `path`.
package enum NewFile {
    /// Writes what `body` writes to its handle at `path`, with `mode` (0644 by default: what
    /// the ledger exports is no secret).
    /// - Throws: `LedgerError.destinationExists` when something is at `path`; `LedgerError`
    ///   (`.cannotWrite`, with the system's reason) when it cannot be written; `body`'s errors.
    package static func write(to path: String, mode: mode_t = 0o644, _ body: (FileHandle) throws -> Void) throws {
        if FileManager.default.fileExists(atPath: path) { throw LedgerError.destinationExists(path: path) }
        let (temporary, directory) = TemporaryFiles.name(beside: path, for: .writing)
        let descriptor = Foundation.open(temporary, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw LedgerError.cannotWrite(errno, destination: path) }
        defer { unlink(temporary) }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            try body(handle)
            try handle.synchronize()
        } catch let error as LedgerError {
            throw error
        } catch let error as POSIXError {
            throw LedgerError.cannotWrite(error.code.rawValue, destination: path)
        } catch let error as CocoaError {
            throw LedgerError(.cannotWrite, path: path, reason: error.localizedDescription, underlyingError: error)
        }
        guard link(temporary, path) == 0 else {
            if errno == EEXIST { throw LedgerError.destinationExists(path: path) }
            throw LedgerError.cannotWrite(errno, destination: path)
        }
        Ledger.syncDirectory(directory)
    }
}
