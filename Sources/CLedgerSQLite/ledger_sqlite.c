// See CLedgerSQLite.h.
#include "CLedgerSQLite.h"

#include <sys/stat.h>

int ledger_sqlite_no_checkpoint_on_close(sqlite3 *db, int off) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, off ? 1 : 0, (int *)0);
}

int ledger_file_status(const char *path, long long *size) {
    struct stat info;
    if (stat(path, &info) != 0) return -1;
    if (!S_ISREG(info.st_mode)) return 1;
    *size = (long long)info.st_size;
    return 0;
}
