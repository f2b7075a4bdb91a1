import Foundation
import LedgerModel

/// Checks a ledger's `-wal` file before SQLite sees it. SQLite takes a WAL whose header does
/// not check out for one a crash left behind: it ignores its content, then overwrites it. That
/// is right after a crash, and wrong when the file was damaged or replaced afterwards. So a
/// WAL whose header is neither valid nor all zeros (a header never written is a crash's) is
/// refused, untouched.
///
/// Damage inside the frames cannot be told from a crash cut there: SQLite keeps the commits
/// before the first bad frame. (A crash campaign showed a "the chain goes on after a bad
/// frame" rule also fires on frames SQLite rewrote in place, so it is not used.)
struct WALFile {
    let path: String
    let ledgerPath: String

    private static let headerSize = 32

    func check() throws {
        guard let handle = FileHandle(forReadingAtPath: path) else { return }
        defer { try? handle.close() }
        let header = [UInt8]((try? handle.read(upToCount: Self.headerSize)) ?? Data())
        if header.isEmpty || header.allSatisfy({ $0 == 0 }) { return }
        guard header.count == Self.headerSize else { throw damaged("its header is cut short") }
        let magic = Self.bigEndian(header, 0)
        guard magic == 0x377F_0682 || magic == 0x377F_0683 else { throw damaged("its header has no WAL signature") }
        let bigEndianChecksums = magic & 1 == 1
        let pageSize = Int(Self.bigEndian(header, 8))
        guard Self.bigEndian(header, 4) == 3_007_000, pageSize >= 512, pageSize <= 65_536,
            pageSize & (pageSize - 1) == 0
        else {
            throw damaged("its header has an unknown version or page size")
        }
        let checksum = Self.checksum(header[0..<24], bigEndian: bigEndianChecksums, from: (0, 0))
        guard checksum == (Self.bigEndian(header, 24), Self.bigEndian(header, 28)) else {
            throw damaged("its header fails its checksum")
        }
    }

    private func damaged(_ reason: String) -> LedgerError {
        .corrupted(path: ledgerPath, reason: "its -wal file is damaged: \(reason); it was left untouched")
    }

    /// SQLite's WAL checksum: over pairs of 32-bit words, in the byte order the magic names.
    private static func checksum(
        _ bytes: ArraySlice<UInt8>, bigEndian: Bool, from start: (UInt32, UInt32)
    ) -> (UInt32, UInt32) {
        var (s1, s2) = start
        var index = bytes.startIndex
        while index + 8 <= bytes.endIndex {
            let x0 = word(bytes, index, bigEndian)
            let x1 = word(bytes, index + 4, bigEndian)
            s1 = s1 &+ x0 &+ s2
            s2 = s2 &+ x1 &+ s1
            index += 8
        }
        return (s1, s2)
    }

    private static func word(_ bytes: ArraySlice<UInt8>, _ index: Int, _ bigEndian: Bool) -> UInt32 {
        let b = (UInt32(bytes[index]), UInt32(bytes[index + 1]), UInt32(bytes[index + 2]), UInt32(bytes[index + 3]))
        return bigEndian ? b.0 << 24 | b.1 << 16 | b.2 << 8 | b.3 : b.3 << 24 | b.2 << 16 | b.1 << 8 | b.0
    }

    private static func bigEndian(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }
}
