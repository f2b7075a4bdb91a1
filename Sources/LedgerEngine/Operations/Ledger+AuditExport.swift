import Foundation
import GRDB
import GRDBSQLite
import LedgerModel
import LedgerSigning

/// What `Ledger.exportAudit(to:)` wrote.
package struct AuditExport: Sendable, Hashable {
    /// The events written, all of the history.
    package var eventCount: Int
    /// The transaction rows written.
    package var transactionCount: Int
    /// The signed head written; `nil` for an empty history.
    package var head: ChainHead?
}

extension Ledger {
    /// The version of the audit export's format (docs/HASH-CHAIN.md): 3 since rows have an
    /// app (migration 26), 2 when they had a customer (migration 25).
    package static let auditFormatVersion = 3

    /// Writes the ledger's hash chain to a new file at `path`, as JSON Lines (docs/HASH-CHAIN.md):
    /// a header (format, the columns a row digest covers, the certificate chain, the genesis
    /// value), every event with its row digest and link in order, every transaction row, and
    /// the stored signed head. All from one snapshot; nothing is signed or changed: what the
    /// export holds is what the ledger holds, broken links included (`tools/verify-audit`
    /// checks it without Swift). The file appears whole or not at all, never over another.
    /// - Throws: `LedgerError.destinationExists` when `path` is taken; `LedgerError` when the
    ///   ledger cannot be read or the file written.
    @discardableResult
    package func exportAudit(to path: String) throws -> AuditExport {
        try read { db in
            let identity = try SigningIdentity.load(db)
            let head = try ChainHead.load(db)
            var export = AuditExport(eventCount: 0, transactionCount: 0, head: head)
            try NewFile.write(to: path) { handle in
                var lines = AuditLines(handle: handle)
                let certificates = identity.certificates
                try lines.write(
                    """
                    {"type":"header","format":"StoreLedger audit","version":\(Self.auditFormatVersion),\
                    "rowColumns":[\(HashChain.rowColumns.map(AuditLines.quoted).joined(separator: ","))],\
                    "certificates":{"leaf":"\(Data(certificates.leaf).base64EncodedString())",\
                    "intermediate":"\(Data(certificates.intermediate).base64EncodedString())",\
                    "root":"\(Data(certificates.root).base64EncodedString())"},\
                    "genesis":"\(Hex.string(HashChain.genesis(root: certificates.root)))"}
                    """)
                let events = try FastStatement(db, HashChain.selectEvents)
                let names = [
                    "seq", "transactionId", "kind", "fromState", "toState", "at", "detail", "rowDigest", "hash",
                ]
                try events.forEachRow { columns in
                    export.eventCount += 1
                    var line = #"{"type":"event""#
                    for (index, name) in names.enumerated() {
                        line += ",\"\(name)\":" + AuditLines.value(columns, Int32(index), hexBlob: index >= 7)
                    }
                    try lines.write(line + "}")
                }
                let rows = try FastStatement(
                    db, "SELECT " + HashChain.rowColumns.joined(separator: ", ") + " FROM transactions ORDER BY id")
                try rows.forEachRow { columns in
                    export.transactionCount += 1
                    let values = (0..<Int32(HashChain.rowColumns.count)).map {
                        AuditLines.value(columns, $0, hexBlob: false)
                    }
                    try lines.write(#"{"type":"transaction","values":["# + values.joined(separator: ",") + "]}")
                }
                if let head {
                    try lines.write(
                        """
                        {"type":"head","seq":\(head.sequence),"hash":"\(Hex.string(head.hash))",\
                        "signature":"\(Hex.string(head.signature))","signedAt":\(head.signedAt.ledgerMilliseconds)}
                        """)
                }
                try lines.flush()
            }
            return export
        }
    }
}

/// The lines of an audit export, written through a buffer.
private struct AuditLines {
    let handle: FileHandle
    private var buffer = Data()

    init(handle: FileHandle) {
        self.handle = handle
        buffer.reserveCapacity(1 << 16)
    }

    mutating func write(_ line: String) throws {
        buffer.append(contentsOf: line.utf8)
        buffer.append(0x0A)
        if buffer.count >= 1 << 16 { try flush() }
    }

    mutating func flush() throws {
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Column `index` as JSON, by its storage class (so that the verifier encodes it as the
    /// chain did): integer, text as a string, NULL as null, a real as a number; a blob as
    /// lowercase hexadecimal, a string when `hexBlob` (row digests and links), else `{"blob": hex}`.
    static func value(_ columns: FastStatement.Columns, _ index: Int32, hexBlob: Bool) -> String {
        switch sqlite3_column_type(columns.handle, index) {
        case SQLITE_INTEGER: return String(columns.int64(index))
        case SQLITE_FLOAT: return String(sqlite3_column_double(columns.handle, index))
        case SQLITE_TEXT: return quoted(columns.string(index))
        case SQLITE_BLOB:
            let hex = quoted(Hex.string(columns.blob(index)))
            return hexBlob ? hex : #"{"blob":"# + hex + "}"
        default: return "null"
        }
    }

    /// `text` as a JSON string.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
