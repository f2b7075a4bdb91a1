// The SQLite calls Swift cannot make itself: sqlite3_db_config is variadic.
#ifndef CLEDGERSQLITE_H
#define CLEDGERSQLITE_H

#include <sqlite3.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Whether closing `db` may checkpoint the WAL into the database file (SQLite does it when the
/// last connection closes). `off` non-zero: it may not. Returns SQLite's result code.
int ledger_sqlite_no_checkpoint_on_close(sqlite3 *db, int off);

/// What is at `path`, for the ledger's checks before SQLite opens a file: 0, a regular file
/// (its size in `*size`); 1, something that is not a regular file; -1, nothing readable there
/// (`errno` says why: ENOENT when nothing is there). A C function because Swift, with
/// MemberImportVisibility, finds `struct stat` in whichever of several Linux modules it likes.
int ledger_file_status(const char *path, long long *size);

#ifdef __cplusplus
}
#endif

#endif
