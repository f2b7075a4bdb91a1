// See CLedgerSQLite.h.
#include "CLedgerSQLite.h"

int ledger_sqlite_no_checkpoint_on_close(sqlite3 *db, int off) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, off ? 1 : 0, (int *)0);
}
