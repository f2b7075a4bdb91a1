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

#ifdef __cplusplus
}
#endif

#endif
