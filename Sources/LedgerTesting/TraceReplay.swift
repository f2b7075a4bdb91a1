import CLedgerFaultVFS
import Foundation

/// The ledger's files (its database, WAL and journal) rebuilt from the fault VFS's trace, one
/// operation at a time, as the VFS keeps them: per file, what the disk holds (changed by syncs,
/// creations and deletions) and the writes and truncates not synced yet (the page cache), which
/// a power loss keeps or loses by its loss mode as `FaultInjection.powerLoss()` does. (A random
/// loss keeps a seeded random subset, as the VFS's; the same seed need not pick the same
/// subset as the VFS, which draws in another order.)
struct TraceReplay {
    /// A file as a state leaves it: its name in the run's folder, and its bytes.
    struct File: Sendable {
        var name: String
        var bytes: [UInt8]
    }

    /// The files of the ledger before the trace started, by name (the database, maybe a WAL).
    struct Snapshot {
        var files: [String: [UInt8]] = [:]

        init(of ledgerPath: String) {
            for suffix in ["", "-wal", "-journal"] {
                if let data = FileManager.default.contents(atPath: ledgerPath + suffix) {
                    files[(ledgerPath + suffix).split(separator: "/").last.map(String.init) ?? ""] = Array(data)
                }
            }
        }
    }

    private struct TracedFile {
        var name: String
        var exists: Bool
        var disk: [UInt8]
        /// The trace operations not synced yet, in order.
        var pending: [Int] = []
    }

    /// A recorded operation, its bytes copied out of the VFS's trace.
    private struct Operation {
        var kind: UInt32
        var file: Int
        var offset: Int
        var data: [UInt8]
        var label: Int
    }

    private var operations: [Operation]
    private var files: [TracedFile]
    private let names: [String]
    /// Counts the changes to what the disks hold: equal versions and equal kept writes are the same state.
    private var diskVersion = 0

    /// A copy of the trace as recorded now (it may be cleared afterwards), starting from
    /// `snapshot`; `names` are the labels' names.
    init(snapshot: Snapshot, names: [String]) {
        let count = lfv_trace_count()
        operations = (0..<count).map { index in
            var operation = lfv_trace_op()
            _ = lfv_trace_get(index, &operation)
            let data =
                operation.kind == Int32(LFV_TRACE_WRITE.rawValue)
                ? Array(UnsafeBufferPointer(start: operation.data, count: Int(operation.length))) : []
            return Operation(
                kind: UInt32(operation.kind), file: Int(operation.file), offset: Int(operation.offset), data: data,
                label: Int(operation.label))
        }
        files = (0..<lfv_trace_file_count()).map { index in
            let path = String(cString: lfv_trace_file(index))
            let name = path.split(separator: "/").last.map(String.init) ?? path
            let before = snapshot.files[name]
            return TracedFile(name: name, exists: before != nil, disk: before ?? [])
        }
        self.names = names
    }

    /// Starts the fault VFS's trace (clearing the last); `false`, with nothing recorded, when
    /// unsynced writes are pending (the trace could not rebuild them).
    static func startTrace() -> Bool { lfv_trace_start() == 0 }

    /// Stops recording; the trace stays until `clearTrace()`.
    static func stopTrace() { lfv_trace_stop() }

    /// Frees the trace (a `TraceReplay` made before holds its own copy).
    static func clearTrace() { lfv_trace_clear() }

    /// Whether an operation could not be recorded (memory ran out): the trace stopped there.
    static var traceIsIncomplete: Bool { lfv_trace_incomplete() != 0 }

    /// How many operations the trace holds.
    var count: Int { operations.count }

    /// The kind of operation `index` (`lfv_trace_kind`).
    func kind(of index: Int) -> UInt32 { operations[index].kind }

    /// What the subject was doing at operation `index`.
    func label(of index: Int) -> String {
        let label = operations[index].label
        return label < names.count ? names[label] : "label \(label)"
    }

    /// Applies operation `index`, as the VFS did.
    mutating func apply(_ index: Int) {
        let operation = operations[index]
        let file = operation.file
        switch operation.kind {
        case LFV_TRACE_OPEN.rawValue:
            if !files[file].exists {
                files[file].exists = true
                files[file].disk = []
                diskVersion += 1
            }
        case LFV_TRACE_WRITE.rawValue, LFV_TRACE_TRUNCATE.rawValue:
            files[file].pending.append(index)
        case LFV_TRACE_SYNC.rawValue:
            guard !files[file].pending.isEmpty else { return }
            for pending in files[file].pending { Self.apply(operations[pending], to: &files[file].disk, length: nil) }
            files[file].pending = []
            diskVersion += 1
        default:  // a delete: the file and its page cache are gone
            files[file].exists = false
            files[file].disk = []
            files[file].pending = []
            diskVersion += 1
        }
    }

    /// Which unsynced operations `loss` keeps, and which write of them is cut to its first sector.
    private func kept(_ loss: FaultInjection.LossMode) -> (kept: [Int], torn: Set<Int>) {
        var kept: [Int] = []
        var torn: Set<Int> = []
        var random: SplitMix64? = if case .loseRandom(let seed) = loss { SplitMix64(seed: seed) } else { nil }
        for file in files where file.exists {
            switch loss {
            case .loseAll: continue
            case .keepAll: kept += file.pending
            case .tornLastWrite:
                kept += file.pending
                let lastWrite = file.pending.last { operations[$0].kind == LFV_TRACE_WRITE.rawValue }
                if let lastWrite, operations[lastWrite].data.count > Self.tornSector { torn.insert(lastWrite) }
            case .loseRandom:
                kept += file.pending.filter { _ in random!.next() & 1 == 1 }
            }
        }
        return (kept, torn)
    }

    /// What identifies the state `loss` leaves now: two equal identities are the same files.
    func identity(_ loss: FaultInjection.LossMode) -> Int {
        let (kept, torn) = kept(loss)
        var hasher = Hasher()
        hasher.combine(diskVersion)
        hasher.combine(kept)
        hasher.combine(torn.sorted())
        return hasher.finalize()
    }

    /// The files a power loss with `loss` leaves now.
    func files(_ loss: FaultInjection.LossMode) -> [File] {
        let (kept, torn) = kept(loss)
        let keptSet = Set(kept)
        return files.filter(\.exists).map { file in
            var bytes = file.disk
            for index in file.pending where keptSet.contains(index) {
                Self.apply(operations[index], to: &bytes, length: torn.contains(index) ? Self.tornSector : nil)
            }
            return File(name: file.name, bytes: bytes)
        }
    }

    /// Writes `files` into `folder`.
    static func write(_ files: [File], into folder: String) {
        for file in files {
            _ = FileManager.default.createFile(atPath: folder + "/" + file.name, contents: Data(file.bytes))
        }
    }

    /// The fault VFS's torn write keeps its first 512-byte sector.
    private static let tornSector = 512

    private static func apply(_ operation: Operation, to bytes: inout [UInt8], length: Int?) {
        let offset = operation.offset
        if operation.kind == LFV_TRACE_TRUNCATE.rawValue {
            if offset < bytes.count {
                bytes.removeSubrange(offset...)
            } else {
                bytes += repeatElement(0, count: offset - bytes.count)
            }
            return
        }
        let count = min(operation.data.count, length ?? Int.max)
        if offset + count > bytes.count { bytes += repeatElement(0, count: offset + count - bytes.count) }
        bytes.replaceSubrange(offset..<(offset + count), with: operation.data.prefix(count))
    }
}
