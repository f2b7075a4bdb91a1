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

/// Reads the first `count` bytes of the file at `path` into `buffer` through SQLite's default
/// VFS; returns how many it read (fewer when the file is shorter), or -1 when it cannot be read.
/// Never `open` and `close` a ledger's file otherwise while this process may have a connection
/// to it: closing any descriptor of a file drops every POSIX lock the process holds on it, and
/// another process may then take this process's connections for gone and delete the WAL they
/// still write to. SQLite's VFS keeps such a descriptor open until those locks are released.
int ledger_file_read_prefix(const char *path, unsigned char *buffer, int count);

#ifdef __cplusplus
}
#endif

#endif
