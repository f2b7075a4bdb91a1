import Foundation
import LedgerModel

/// The hidden files a new ledger, a backup or an export is written to before it is linked into
/// place (`.NAME.PURPOSE-PID-RANDOM`, beside the destination), and the removal of those a
/// killed process left behind: each creation first removes, in its folder, the temporary files
/// of ours whose process is gone.
enum TemporaryFiles {
    /// What a temporary file is for, part of its name.
    enum Purpose: String, CaseIterable {
        case creating, backup, writing
    }

    /// A new name beside `path` for `purpose`, after removing the stale ones of that folder.
    /// Returns it and the folder.
    static func name(beside path: String, for purpose: Purpose) -> (path: String, directory: String) {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        removeStale(in: directory)
        let name = ".\(url.lastPathComponent).\(purpose.rawValue)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        return (directory + "/" + name, directory)
    }

    /// How many names of a folder are looked at for stale files: the work is bounded whatever
    /// the folder holds (the rest waits for a later creation).
    static let namesExamined = 10_000

    /// Removes the temporary files of ours in `directory` whose process no longer runs (a
    /// process with the same id keeps them: never removed while anyone may write them).
    static func removeStale(in directory: String) {
        guard let folder = opendir(directory) else { return }
        defer { closedir(folder) }
        var stale: [String] = []
        for _ in 0..<namesExamined {
            guard let entry = readdir(folder) else { break }
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if let pid = processID(ofTemporary: name), kill(pid, 0) != 0, errno == ESRCH { stale.append(name) }
        }
        for name in stale { unlink(directory + "/" + name) }
    }

    /// The process id in a name of ours (`.ledger.sqlite.backup-4242-123456`, with `-wal`,
    /// `-shm` or `-journal` after it for SQLite's files); `nil` for any other name.
    static func processID(ofTemporary name: String) -> pid_t? {
        guard name.hasPrefix(".") else { return nil }
        var base = Substring(name)
        for suffix in ["-wal", "-shm", "-journal"] where base.hasSuffix(suffix) { base = base.dropLast(suffix.count) }
        let parts = base.split(separator: "-")
        guard parts.count >= 3, let random = parts.last, random.allSatisfy(\.isASCII), UInt32(random) != nil,
            let pid = pid_t(parts[parts.count - 2]), pid > 0
        else { return nil }
        let head = parts.dropLast(2).joined(separator: "-")
        guard Purpose.allCases.contains(where: { head.hasSuffix("." + $0.rawValue) }) else { return nil }
        return pid
    }
}
