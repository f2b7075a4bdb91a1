/// One schema migration: a file of `migrations/`, embedded in the module.
struct Migration: Sendable {
    /// The file name without `.sql`, such as `0001_initial`; recorded once applied.
    let identifier: String
    let sql: String
}
