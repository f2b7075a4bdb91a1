import Foundation

/// Debian's iso-codes: the source `tools/generate-storefronts --check` compares the storefront
/// table with.
public enum ISOCodes {
    /// Its ISO 3166-1 table, the file the tool reads.
    public static let countries = "/usr/share/iso-codes/json/iso_3166-1.json"

    /// Whether it is installed (`apt-get install iso-codes`; `.ci/run` installs it).
    public static let isInstalled = FileManager.default.fileExists(atPath: countries)
}

/// Running a command as a user whom directory permissions bind, for the tests of read-only
/// folders (root ignores them).
public enum Unprivileged {
    /// What goes before the command: nothing when this process is not root; when it is,
    /// util-linux's `setpriv` as nobody; `nil` when it is root and has no `setpriv`.
    public static let commandPrefix: [String]? = {
        guard getuid() == 0 else { return [] }
        let setpriv = "/usr/bin/setpriv"
        guard FileManager.default.isExecutableFile(atPath: setpriv) else { return nil }
        return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
    }()

    /// Whether a command can be run so that directory permissions bind it.
    public static var isPossible: Bool { commandPrefix != nil }
}
