import Foundation
import StoreLedger

/// Writes what a command hands over to a new file at `path` (`NewFile.write`: whole or not at
/// all, never over a file). A file already there is the refusal the user reads: "`path` exists:
/// `what` is never written over a file".
func writeNewOutputFile(
    _ path: String, holding what: String, mode: mode_t = 0o644, _ body: (FileHandle) throws -> Void
) throws {
    do {
        try NewFile.write(to: path, mode: mode, body)
    } catch LedgerError.destinationExists {
        throw CommandRefusal(description: "\(path) exists: \(what) is never written over a file")
    }
}
