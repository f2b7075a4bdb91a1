import CLedgerSQLite
import Foundation
import LedgerModel

/// Looks at a ledger file's bytes before SQLite does, so that a damaged or foreign file is
/// refused without SQLite ever opening (and possibly writing to) it.
enum LedgerFile {
    /// "SLGR": written to every ledger's `PRAGMA application_id`.
    static let applicationID: Int32 = 0x534C_4752

    private static let magic = Array("SQLite format 3\0".utf8)

    /// Whether a file exists at `path`; throws when it exists but is not a usable ledger.
    ///
    /// The size, the header and the `-wal` beside it are read one after the other, while another
    /// process may checkpoint and close (grow the file, write its header, delete its `-wal`)
    /// between two of the reads: a file that looks truncated is looked at again, up to
    /// `looks` times 10 ms apart. A file truncated for real looks so every time.
    static func exists(at path: String) throws -> Bool {
        var look = 1
        while true {
            var size: Int64 = 0
            switch ledger_file_status(path, &size) {
            case 0: break
            case 1: throw LedgerError.unusable(path: path, reason: "not a regular file")
            default:
                if errno == ENOENT { return false }
                throw LedgerError.system(errno, path: path)
            }
            do {
                try checkHeader(path: path, size: size)
                return true
            } catch let error as LedgerError where error.code == .corrupted && look < looks {
                look += 1
                usleep(10_000)
            }
        }
    }

    /// How many times a file that looks truncated is looked at.
    private static let looks = 3

    private static func checkHeader(path: String, size: Int64) throws {
        if size == 0 { throw LedgerError.emptyFile(path: path) }
        // Read through SQLite's VFS, never a descriptor of our own: closing one would drop the
        // locks of this process's other connections to the file (`ledger_file_read_prefix`).
        var header = [UInt8](repeating: 0, count: 100)
        let read = ledger_file_read_prefix(path, &header, Int32(header.count))
        guard read >= 0 else {
            throw LedgerError.unusable(path: path, reason: "cannot read the file (permission denied?)")
        }
        header.removeLast(header.count - Int(read))
        guard header.count == 100, Array(header[0..<16]) == magic else {
            throw LedgerError.notADatabase(path: path, reason: "no SQLite header")
        }
        func u32(_ offset: Int) -> UInt32 {
            header[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
        }
        let rawPageSize = Int(header[16]) << 8 | Int(header[17])
        let pageSize = rawPageSize == 1 ? 65_536 : rawPageSize
        guard pageSize >= 512, pageSize & (pageSize - 1) == 0 else {
            throw LedgerError.corrupted(path: path, reason: "invalid page size \(rawPageSize)")
        }
        // With a -wal file beside it, the file's size can be anything a checkpoint left when it
        // was cut short (page 1 written before the file grew, a torn last page): the WAL still
        // holds those pages and SQLite replays it. Without one, the size must add up.
        let hasWAL = FileManager.default.fileExists(atPath: path + "-wal")
        guard hasWAL || size % Int64(pageSize) == 0 else {
            throw LedgerError.corrupted(
                path: path, reason: "truncated: \(size) bytes is not a whole number of \(pageSize)-byte pages")
        }
        // The page count in the header is valid when "version-valid-for" equals the change counter.
        let pageCount = Int64(u32(28))
        if !hasWAL, u32(92) == u32(24), pageCount > 0, size < pageCount * Int64(pageSize) {
            throw LedgerError.corrupted(
                path: path, reason: "truncated: \(size) bytes where the header promises \(pageCount * Int64(pageSize))")
        }
        let applicationID = Int32(bitPattern: u32(68))
        guard applicationID == Self.applicationID else {
            throw LedgerError.notALedger(path: path, applicationID: applicationID)
        }
        if hasWAL { try WALFile(path: path + "-wal", ledgerPath: path).check() }
    }
}
