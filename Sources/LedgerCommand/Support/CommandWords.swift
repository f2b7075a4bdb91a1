import ArgumentParser

/// The words of a `ledger` command line, read before argument-parser sees them: what people
/// type that argument-parser alone would refuse or misreport.
package struct CommandWords {
    /// The options every command takes (`GlobalOptions`), with whether each takes a value.
    package static let globalOptions: [String: Bool] = [
        "--database": true, "--json": false, "--durability": true, "--wait": true, "--customer": true, "--app": true,
        "--device": true,
    ]

    let words: [String]

    /// Whether `--json` asks for JSON (before `--`, where words stop being options).
    var wantsJSON: Bool {
        words.prefix { $0 != "--" }.contains("--json")
    }

    /// The words with the global options written before the command moved after it, so that
    /// `ledger --database x list` means `ledger list --database x` (argument-parser reads a
    /// subcommand's options only after its name). Anything else is left as it is.
    func globalOptionsAfterCommand(root: any ParsableCommand.Type) -> [String] {
        let (leading, rest) = leadingGlobalOptions()
        guard !leading.isEmpty, !rest.isEmpty else { return words }
        let path = Self.commandPath(of: rest, root: root).count
        return Array(rest.prefix(path)) + leading + rest.dropFirst(path)
    }

    /// A word that argument-parser would read as short options run together (`-dash.start`
    /// as `-d -a -s -h ...`, whose `-h` prints the help and exits 0): `ledger` has no short
    /// option but `-h`, so such a word is a mistake, or a value that needs `--` before it.
    /// Negative numbers (`-1`, `-5s`) are left to the command.
    var runTogetherShortOptions: String? {
        words.prefix { $0 != "--" }.first { word in
            word.count > 2 && word.hasPrefix("-") && !word.hasPrefix("--")
                && !(word.dropFirst().first?.isNumber ?? false)
        }
    }

    /// The words after the global options they start with (`help list` in `--json help list`).
    var afterLeadingGlobalOptions: [String] { leadingGlobalOptions().rest }

    /// The global options (with their values) the words start with, and the words after them.
    private func leadingGlobalOptions() -> (options: [String], rest: [String]) {
        var index = words.startIndex
        while index < words.endIndex {
            let word = words[index]
            let name = word.split(separator: "=", maxSplits: 1).first.map(String.init) ?? word
            guard let takesValue = Self.globalOptions[name] else { break }
            index = takesValue && !word.contains("=") ? min(index + 2, words.endIndex) : index + 1
        }
        return (Array(words[..<index]), Array(words[index...]))
    }

    /// The leading words that name a subcommand, each of the one before (`store set` ...).
    static func commandPath(of words: [String], root: any ParsableCommand.Type) -> [String] {
        var command = root
        var path: [String] = []
        for word in words {
            guard let next = command.configuration.subcommands.first(where: { $0._commandName == word }) else { break }
            path.append(word)
            command = next
        }
        return path
    }

    /// A word where a command was expected that names none (`ledger lsit`, `ledger store sett`),
    /// with the nearest command's name when one is close enough to be a typo.
    func unknownCommand(root: any ParsableCommand.Type) -> UnknownCommand? {
        var command: any ParsableCommand.Type = root
        for word in leadingGlobalOptions().rest {
            let subcommands = command.configuration.subcommands
            if subcommands.isEmpty || word.hasPrefix("-") || word == "help" { return nil }
            let names = subcommands.map { $0._commandName }
            guard let index = names.firstIndex(of: word) else {
                let visible = subcommands.filter { $0.configuration.shouldDisplay }.map { $0._commandName }
                return UnknownCommand(word: word, suggestion: Suggestion.nearest(to: word, among: visible + ["help"]))
            }
            command = subcommands[index]
        }
        return nil
    }
}

/// A word that names no command, and the command it was probably meant to be.
struct UnknownCommand {
    let word: String
    let suggestion: String?
}

/// "Did you mean": the candidate nearest to a mistyped word.
package enum Suggestion {
    /// The longest word compared: longer words get no suggestion (bounded work per candidate).
    static let longestWord = 128

    /// The candidate at the smallest edit distance from `word`, if that distance looks like a
    /// typo (at most a third of the word, and at most 3); ties go to the first candidate.
    package static func nearest(to word: String, among candidates: [String]) -> String? {
        guard word.count <= longestWord else { return nil }
        let typed = Array(word.lowercased())
        let allowed = min(3, max(1, typed.count / 3))
        var best: (candidate: String, distance: Int)?
        for candidate in candidates
        where abs(candidate.count - typed.count) <= allowed && candidate.count <= longestWord {
            let distance = editDistance(typed, Array(candidate.lowercased()), giveUpAbove: allowed)
            if distance <= allowed, distance < (best?.distance ?? .max) { best = (candidate, distance) }
        }
        return best?.candidate
    }

    /// Levenshtein distance where swapping two neighbours counts as one edit (`lsit`, `list`);
    /// any result above `limit` once every path costs more than it (then it stops early).
    package static func editDistance(_ a: [Character], _ b: [Character], giveUpAbove limit: Int = .max) -> Int {
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var before = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], before[j - 2] + 1)
                }
            }
            (before, previous, current) = (previous, current, before)
            // Rows never lose cost faster than a transposition gives back; two rows both over
            // the limit can only lead further over it.
            if previous.min()! > limit, before.min()! > limit { return limit + 1 }
        }
        return previous[b.count]
    }
}
