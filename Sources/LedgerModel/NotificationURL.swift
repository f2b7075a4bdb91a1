package import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The rules of a notification URL, checked whole when it is set and again before each send
/// (a ledger written by an older release may hold one these rules refuse): `http` or `https`, a
/// host that is a DNS name, an IPv4 address or a bracketed IPv6 literal, a port from 1 to 65535,
/// no user or password, no NUL or other control character, at most
/// `limit` bytes.
package enum NotificationURL {
    /// The longest notification URL the store takes, in bytes.
    package static let limit = 2048

    /// Why a text is not a notification URL, in words for an error message or an attempt's record.
    package struct Problem: Error, Sendable, Equatable {
        package let reason: String
    }

    /// `text` as a URL the sender can POST to.
    /// - Throws: `Problem`, saying which rule `text` breaks.
    package static func parse(_ text: String) throws(Problem) -> URL {
        guard text.utf8.count <= limit else {
            throw Problem(reason: "it is longer than \(limit) bytes")
        }
        guard text.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value != 0x7F }) else {
            throw Problem(reason: "it holds a space, a control character or a character that is not ASCII")
        }
        guard let parts = URLComponents(string: text), let scheme = parts.scheme?.lowercased() else {
            throw Problem(reason: "it is not a URL")
        }
        guard scheme == "http" || scheme == "https" else {
            throw Problem(reason: "its scheme is \(scheme), not http or https")
        }
        guard parts.user == nil, parts.password == nil else { throw Problem(reason: "it names a user or a password") }
        guard let host = parts.percentEncodedHost, !host.isEmpty else { throw Problem(reason: "it has no host") }
        try checkHost(host)
        if let port = parts.port, !(1...65535).contains(port) {
            throw Problem(reason: "its port \(port) is not between 1 and 65535")
        }
        guard let url = parts.url else { throw Problem(reason: "it is not a URL") }
        return url
    }

    /// A host as the sender's resolver takes it: `[IPv6]`, an IPv4 address, or a DNS name of
    /// labels of 1 to 63 letters, digits and hyphens (no hyphen first or last), 253 bytes at most.
    private static func checkHost(_ host: String) throws(Problem) {
        if host.hasPrefix("[") || host.contains(":") {
            guard host.hasPrefix("["), host.hasSuffix("]"), isAddress(String(host.dropFirst().dropLast()), AF_INET6)
            else { throw Problem(reason: "its host \(host) is not a bracketed IPv6 address") }
            return
        }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        // A trailing dot is the root: the name is fully qualified.
        let named = labels.last == "" && labels.count > 1 ? labels.dropLast() : labels[...]
        let isLabel = { (label: Substring) in
            (1...63).contains(label.utf8.count) && label.first != "-" && label.last != "-"
                && label.utf8.allSatisfy { byte in
                    (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                        || byte == 0x2D
                }
        }
        guard host.utf8.count <= 253, named.allSatisfy(isLabel) else {
            throw Problem(reason: "its host \(host) is not a DNS name, an IPv4 address or a bracketed IPv6 address")
        }
        // All digits: an IPv4 address, which must be one (999.1.1.1 is no name either).
        if let last = named.last, last.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            !isAddress(named.joined(separator: "."), AF_INET)
        {
            throw Problem(reason: "its host \(host) is not a valid IPv4 address")
        }
    }

    private static func isAddress(_ text: String, _ family: Int32) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16)
        return inet_pton(family, text, &buffer) == 1
    }
}
