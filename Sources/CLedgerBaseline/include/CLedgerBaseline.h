// The raw-SQLite baseline of `ledger-lab bench`: the same storage work as the ledger (same
// pragmas, same rows, same number of commits and fsyncs) through SQLite's C API directly.
#ifndef CLEDGERBASELINE_H
#define CLEDGERBASELINE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lbase lbase;

/// Opens (creating) a baseline database in WAL mode with `synchronous` FULL (2) or NORMAL (1).
lbase *lbase_open(const char *path, int synchronous);
void lbase_close(lbase *base);

/// `count` purchase cycles: insert purchasing + event (commit), purchased + event (commit),
/// finished + event (commit). Returns 0 on success.
int lbase_purchase_cycles(lbase *base, int count);

/// Inserts `finished` finished purchases and `unfinished` unfinished ones, with three events
/// each, in one commit (to build large databases quickly).
int lbase_fill(lbase *base, int64_t finished, int64_t unfinished);

/// A launch: reads every unfinished row through the partial index and records one delivery of
/// each (row update + event), in one commit. Returns how many, or -1.
int64_t lbase_launch(lbase *base);

/// A restore: copies every purchased row as a new restored row with its event, in one commit.
int64_t lbase_restore(lbase *base);

/// Reads the first `limit` rows in id order, as `ledger list --limit` does. Returns how many.
int64_t lbase_list(lbase *base, int limit);

#ifdef __cplusplus
}
#endif

#endif
