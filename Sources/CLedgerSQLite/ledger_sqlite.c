// See CLedgerSQLite.h.
#include "CLedgerSQLite.h"

#include <string.h>
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

int ledger_file_read_prefix(const char *path, unsigned char *buffer, int count) {
    sqlite3_vfs *vfs = sqlite3_vfs_find(0);
    if (!vfs || count < 0) return -1;
    // The name as SQLite hands it to a VFS (with its empty URI parameters after it).
    sqlite3_filename name = sqlite3_create_filename(path, "", "", 0, 0);
    sqlite3_file *file = sqlite3_malloc(vfs->szOsFile);
    if (!name || !file) {
        sqlite3_free_filename(name);
        sqlite3_free(file);
        return -1;
    }
    memset(file, 0, (size_t)vfs->szOsFile);
    int flags = 0;
    int read = -1;
    if (vfs->xOpen(vfs, name, file, SQLITE_OPEN_READONLY | SQLITE_OPEN_MAIN_DB, &flags) == SQLITE_OK) {
        sqlite3_int64 size = 0;
        if (file->pMethods->xFileSize(file, &size) == SQLITE_OK) {
            int wanted = size < count ? (int)size : count;
            if (wanted == 0 || file->pMethods->xRead(file, buffer, wanted, 0) == SQLITE_OK) read = wanted;
        }
    }
    // A VFS whose xOpen failed may still have set pMethods: it must then be closed too.
    if (file->pMethods) file->pMethods->xClose(file);
    sqlite3_free(file);
    sqlite3_free_filename(name);
    return read;
}
