import OpenStoreKit
import Testing

/// `import OpenStoreKit` alone brings Foundation's names, as `import StoreKit` does on Apple's
/// platforms: this file imports nothing else, so it compiles only if they come with it.
@Suite struct ImportBringsFoundationTests {
    @Test func foundationsNamesComeWithOpenStoreKit() throws {
        let id = UUID()
        let data = Data(id.uuidString.utf8)
        let date = Date(timeIntervalSince1970: 0)
        let object: NSObject = NSNumber(value: 1)
        let error = NSError(domain: "test", code: 1)
        let defaults = UserDefaults.standard
        let locale = Locale(identifier: "en_US")
        let formatter = NumberFormatter()
        formatter.locale = locale
        formatter.numberStyle = .decimal
        let queue = DispatchQueue(label: "test")
        queue.sync {}
        #expect(data.count == 36 && date.timeIntervalSince1970 == 0 && object is NSNumber)
        #expect(error.code == 1 && formatter.string(from: 1_000) == "1,000")
        defaults.set(true, forKey: "ImportBringsFoundationTests")
        #expect(defaults.bool(forKey: "ImportBringsFoundationTests"))
        defaults.removeObject(forKey: "ImportBringsFoundationTests")
    }

    /// Foundation is all it re-exports: the store behind it stays out of an app's names.
    @Test func openStoreKitReExportsFoundationOnly() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/OpenStoreKit").standardized.path
        var exported: [String] = []
        let files = try FileManager.default.subpathsOfDirectory(atPath: sources).filter { $0.hasSuffix(".swift") }
        #expect(files.count > 10, "the module's sources are read")
        for file in files {
            let text = try String(contentsOfFile: sources + "/" + file, encoding: .utf8)
            for line in text.split(separator: "\n") where line.hasPrefix("@_exported") {
                exported.append(String(line.split(separator: " ").last ?? ""))
            }
        }
        #expect(exported == ["Foundation"])
    }
}
