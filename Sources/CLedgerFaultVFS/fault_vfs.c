// A SQLite VFS shim for crash-recovery tests. It wraps the default VFS and keeps every write to
// a database, WAL or rollback journal file in memory until the file is synced, the way an
// operating system's page cache does. A simulated power loss then decides which unsynced
// writes reach the disk (none, a seeded random subset, all but a torn last one) and applies
// them; the files then hold exactly what a machine would find when the power comes back.
// It can also fail the Nth write or sync with an I/O error or "disk full".
//
// Unsynced writes are shared by every handle of a path (they are the page cache, not one
// connection's), and survive the handle being closed, until a sync or a power loss.

#include "CLedgerFaultVFS.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct PendingOp {
    int is_truncate;
    sqlite3_int64 offset;  // write offset, or the size a truncate sets
    int length;
    unsigned char *data;
} PendingOp;

// The unsynced writes of one file, shared by all its handles.
typedef struct Inode {
    char *path;
    int handles;
    PendingOp *ops;
    int count, capacity;
    struct Inode *next;
} Inode;

typedef struct FaultFile {
    sqlite3_file base;
    sqlite3_file *real;  // the wrapped VFS's file, allocated right after this struct
    Inode *inode;        // NULL for files that are not tracked (temporary files)
} FaultFile;

typedef struct Fault {
    int kind;
    int64_t at;  // 1-based index of the write (or sync) that fires, counted from arming
    int64_t base;
    int persistent;
    int fired;
} Fault;

static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static sqlite3_vfs *real_vfs;
static sqlite3_vfs fault_vfs;
static char fault_vfs_name[64];
static Inode *inodes;
static int powered_off;
static Fault write_fault, sync_fault;
static lfv_counters counters;
static int loss_mode = LFV_LOSE_ALL;
static uint64_t loss_state;

static const int torn_sector = 512;

// The trace (call its functions with state_lock held).
static int tracing;
static lfv_trace_op *trace_ops;
static int64_t trace_count, trace_capacity;
static char **trace_files;
static int trace_file_count, trace_file_capacity;
static int trace_current_label;
static int trace_incomplete;  // an operation could not be recorded (out of memory): the trace stopped

static int trace_file_index(const char *path, int create) {
    for (int i = 0; i < trace_file_count; i++) {
        if (strcmp(trace_files[i], path) == 0) return i;
    }
    if (!create) return -1;
    if (trace_file_count == trace_file_capacity) {
        int capacity = trace_file_capacity ? trace_file_capacity * 2 : 8;
        char **files = realloc(trace_files, sizeof(char *) * (size_t)capacity);
        if (!files) return -1;
        trace_files = files;
        trace_file_capacity = capacity;
    }
    char *copy = strdup(path);
    if (!copy) return -1;
    trace_files[trace_file_count] = copy;
    return trace_file_count++;
}

// Records an operation; a trace that cannot grow stops recording (lfv_trace_count says how far it got).
static void trace_record(int kind, const char *path, int64_t offset, const void *data, int length) {
    if (!tracing) return;
    int file = trace_file_index(path, 1);
    if (file < 0) {
        tracing = 0;
        trace_incomplete = 1;
        return;
    }
    if (trace_count == trace_capacity) {
        int64_t capacity = trace_capacity ? trace_capacity * 2 : 1024;
        lfv_trace_op *ops = realloc(trace_ops, sizeof(lfv_trace_op) * (size_t)capacity);
        if (!ops) {
            tracing = 0;
            trace_incomplete = 1;
            return;
        }
        trace_ops = ops;
        trace_capacity = capacity;
    }
    unsigned char *copy = NULL;
    if (kind == LFV_TRACE_WRITE) {
        copy = malloc((size_t)length);
        if (!copy) {
            tracing = 0;
            trace_incomplete = 1;
            return;
        }
        memcpy(copy, data, (size_t)length);
    }
    trace_ops[trace_count++] = (lfv_trace_op){kind, file, offset, length, copy, trace_current_label};
}

static uint64_t next_random(void) {
    // SplitMix64: seeded and repeatable.
    uint64_t z = (loss_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

// MARK: - Inodes (call with state_lock held)

static Inode *find_inode(const char *path, int create) {
    for (Inode *inode = inodes; inode; inode = inode->next) {
        if (strcmp(inode->path, path) == 0) return inode;
    }
    if (!create) return NULL;
    Inode *inode = calloc(1, sizeof(Inode));
    if (!inode) return NULL;
    inode->path = strdup(path);
    if (!inode->path) {
        free(inode);
        return NULL;
    }
    inode->next = inodes;
    inodes = inode;
    return inode;
}

static void clear_ops(Inode *inode) {
    for (int i = 0; i < inode->count; i++) free(inode->ops[i].data);
    inode->count = 0;
}

static void release_inode_if_unused(Inode *inode) {
    if (inode->handles > 0 || inode->count > 0) return;
    for (Inode **link = &inodes; *link; link = &(*link)->next) {
        if (*link == inode) {
            *link = inode->next;
            free(inode->ops);
            free(inode->path);
            free(inode);
            return;
        }
    }
}

static int append_op(Inode *inode, int is_truncate, sqlite3_int64 offset, const void *data, int length) {
    if (inode->count == inode->capacity) {
        int capacity = inode->capacity ? inode->capacity * 2 : 16;
        PendingOp *ops = realloc(inode->ops, sizeof(PendingOp) * (size_t)capacity);
        if (!ops) return SQLITE_NOMEM;
        inode->ops = ops;
        inode->capacity = capacity;
    }
    PendingOp *op = &inode->ops[inode->count];
    op->is_truncate = is_truncate;
    op->offset = offset;
    op->length = length;
    op->data = NULL;
    if (!is_truncate) {
        op->data = malloc((size_t)length);
        if (!op->data) return SQLITE_NOMEM;
        memcpy(op->data, data, (size_t)length);
    }
    inode->count++;
    return SQLITE_OK;
}

// Which armed fault, if any, fires at this write or sync (index counted since arming).
static int check_fault(Fault *fault, int64_t total) {
    if (!fault->kind) return 0;
    int64_t index = total - fault->base;
    if (!fault->fired && index == fault->at) {
        fault->fired = 1;
        counters.faults++;
        return fault->kind;
    }
    if (fault->fired && fault->persistent && fault->kind != LFV_FAULT_POWER_LOSS && index > fault->at) {
        counters.faults++;
        return fault->kind;
    }
    return 0;
}

// Applies the ops a power loss keeps straight to the file, bypassing SQLite.
static void apply_to_disk(const char *path, const PendingOp *op, int length) {
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return;
    if (op->is_truncate) {
        if (ftruncate(fd, op->offset) != 0) { /* the disk keeps what it had */ }
    } else {
        ssize_t done = 0;
        while (done < length) {
            ssize_t n = pwrite(fd, op->data + done, (size_t)(length - done), op->offset + done);
            if (n <= 0) break;
            done += n;
        }
    }
    close(fd);
}

static void power_loss_locked(void) {
    for (Inode *inode = inodes; inode; inode = inode->next) {
        int last_write = -1;
        for (int i = 0; i < inode->count; i++) {
            if (!inode->ops[i].is_truncate) last_write = i;
        }
        for (int i = 0; i < inode->count; i++) {
            const PendingOp *op = &inode->ops[i];
            int keep = 0, length = op->length;
            switch (loss_mode) {
            case LFV_KEEP_ALL: keep = 1; break;
            case LFV_LOSE_RANDOM: keep = (int)(next_random() & 1); break;
            case LFV_TORN_LAST:
                keep = 1;
                if (i == last_write && length > torn_sector) length = torn_sector;
                break;
            default: keep = 0; break;
            }
            if (keep) {
                apply_to_disk(inode->path, op, length);
                counters.unsynced_writes_kept++;
            } else {
                counters.unsynced_writes_lost++;
            }
        }
        clear_ops(inode);
    }
    powered_off = 1;
    counters.power_losses++;
}

// MARK: - File methods

static int fault_close(sqlite3_file *file) {
    FaultFile *p = (FaultFile *)file;
    int rc = p->real->pMethods ? p->real->pMethods->xClose(p->real) : SQLITE_OK;
    if (p->inode) {
        pthread_mutex_lock(&state_lock);
        p->inode->handles--;
        release_inode_if_unused(p->inode);
        pthread_mutex_unlock(&state_lock);
    }
    return rc;
}

static int real_size(FaultFile *p, sqlite3_int64 *size) {
    return p->real->pMethods->xFileSize(p->real, size);
}

static int fault_read(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset) {
    FaultFile *p = (FaultFile *)file;
    if (!p->inode) return p->real->pMethods->xRead(p->real, buffer, amount, offset);
    pthread_mutex_lock(&state_lock);
    if (p->inode->count == 0) {
        pthread_mutex_unlock(&state_lock);
        return p->real->pMethods->xRead(p->real, buffer, amount, offset);
    }
    sqlite3_int64 size = 0;
    int rc = real_size(p, &size);
    if (rc != SQLITE_OK) {
        pthread_mutex_unlock(&state_lock);
        return rc;
    }
    unsigned char *out = buffer;
    memset(out, 0, (size_t)amount);
    rc = p->real->pMethods->xRead(p->real, buffer, amount, offset);
    if (rc != SQLITE_OK && rc != SQLITE_IOERR_SHORT_READ) {
        pthread_mutex_unlock(&state_lock);
        return rc;
    }
    // Replay the unsynced writes over what the disk holds, as the page cache would show.
    for (int i = 0; i < p->inode->count; i++) {
        const PendingOp *op = &p->inode->ops[i];
        if (op->is_truncate) {
            if (op->offset < offset + amount) {
                sqlite3_int64 from = op->offset > offset ? op->offset - offset : 0;
                memset(out + from, 0, (size_t)(amount - from));
            }
            size = op->offset;
        } else {
            sqlite3_int64 start = op->offset > offset ? op->offset : offset;
            sqlite3_int64 end = op->offset + op->length < offset + amount ? op->offset + op->length : offset + amount;
            if (start < end) memcpy(out + (start - offset), op->data + (start - op->offset), (size_t)(end - start));
            if (op->offset + op->length > size) size = op->offset + op->length;
        }
    }
    pthread_mutex_unlock(&state_lock);
    if (offset + amount > size) {
        sqlite3_int64 valid = size > offset ? size - offset : 0;
        memset(out + valid, 0, (size_t)(amount - valid));
        return SQLITE_IOERR_SHORT_READ;
    }
    return SQLITE_OK;
}

static int fault_write(sqlite3_file *file, const void *data, int amount, sqlite3_int64 offset) {
    FaultFile *p = (FaultFile *)file;
    pthread_mutex_lock(&state_lock);
    if (powered_off) {
        pthread_mutex_unlock(&state_lock);
        return SQLITE_IOERR_WRITE;
    }
    if (!p->inode) {
        pthread_mutex_unlock(&state_lock);
        return p->real->pMethods->xWrite(p->real, data, amount, offset);
    }
    counters.writes++;
    int rc = SQLITE_OK;
    switch (check_fault(&write_fault, counters.writes)) {
    case LFV_FAULT_POWER_LOSS: power_loss_locked(); rc = SQLITE_IOERR_WRITE; break;
    case LFV_FAULT_IO_ERROR: rc = SQLITE_IOERR_WRITE; break;
    case LFV_FAULT_DISK_FULL: rc = SQLITE_FULL; break;
    default:
        rc = append_op(p->inode, 0, offset, data, amount);
        if (rc == SQLITE_OK) trace_record(LFV_TRACE_WRITE, p->inode->path, offset, data, amount);
        break;
    }
    pthread_mutex_unlock(&state_lock);
    return rc;
}

static int fault_truncate(sqlite3_file *file, sqlite3_int64 size) {
    FaultFile *p = (FaultFile *)file;
    pthread_mutex_lock(&state_lock);
    if (powered_off) {
        pthread_mutex_unlock(&state_lock);
        return SQLITE_IOERR_TRUNCATE;
    }
    if (!p->inode) {
        pthread_mutex_unlock(&state_lock);
        return p->real->pMethods->xTruncate(p->real, size);
    }
    int rc = append_op(p->inode, 1, size, NULL, 0);
    if (rc == SQLITE_OK) trace_record(LFV_TRACE_TRUNCATE, p->inode->path, size, NULL, 0);
    pthread_mutex_unlock(&state_lock);
    return rc;
}

static int fault_sync(sqlite3_file *file, int flags) {
    FaultFile *p = (FaultFile *)file;
    pthread_mutex_lock(&state_lock);
    if (powered_off) {
        pthread_mutex_unlock(&state_lock);
        return SQLITE_IOERR_FSYNC;
    }
    if (!p->inode) {
        pthread_mutex_unlock(&state_lock);
        return p->real->pMethods->xSync(p->real, flags);
    }
    counters.syncs++;
    switch (check_fault(&sync_fault, counters.syncs)) {
    case LFV_FAULT_POWER_LOSS:
        power_loss_locked();
        pthread_mutex_unlock(&state_lock);
        return SQLITE_IOERR_FSYNC;
    case LFV_FAULT_IO_ERROR:
    case LFV_FAULT_DISK_FULL:
        // The writes stay unsynced: a later power loss may still lose them.
        pthread_mutex_unlock(&state_lock);
        return SQLITE_IOERR_FSYNC;
    default: break;
    }
    int rc = SQLITE_OK;
    for (int i = 0; i < p->inode->count && rc == SQLITE_OK; i++) {
        const PendingOp *op = &p->inode->ops[i];
        rc = op->is_truncate ? p->real->pMethods->xTruncate(p->real, op->offset)
                             : p->real->pMethods->xWrite(p->real, op->data, op->length, op->offset);
    }
    if (rc == SQLITE_OK) {
        clear_ops(p->inode);
        trace_record(LFV_TRACE_SYNC, p->inode->path, 0, NULL, 0);
    }
    pthread_mutex_unlock(&state_lock);
    return rc == SQLITE_OK ? p->real->pMethods->xSync(p->real, flags) : rc;
}

static int fault_file_size(sqlite3_file *file, sqlite3_int64 *size) {
    FaultFile *p = (FaultFile *)file;
    if (!p->inode) return real_size(p, size);
    // Under the lock: a sync on another thread must not flush between the two reads.
    pthread_mutex_lock(&state_lock);
    int rc = real_size(p, size);
    if (rc != SQLITE_OK) {
        pthread_mutex_unlock(&state_lock);
        return rc;
    }
    for (int i = 0; i < p->inode->count; i++) {
        const PendingOp *op = &p->inode->ops[i];
        if (op->is_truncate) {
            *size = op->offset;
        } else if (op->offset + op->length > *size) {
            *size = op->offset + op->length;
        }
    }
    pthread_mutex_unlock(&state_lock);
    return SQLITE_OK;
}

static int fault_lock(sqlite3_file *file, int level) {
    FaultFile *p = (FaultFile *)file;
    return p->real->pMethods->xLock(p->real, level);
}

static int fault_unlock(sqlite3_file *file, int level) {
    FaultFile *p = (FaultFile *)file;
    return p->real->pMethods->xUnlock(p->real, level);
}

static int fault_check_reserved_lock(sqlite3_file *file, int *out) {
    FaultFile *p = (FaultFile *)file;
    return p->real->pMethods->xCheckReservedLock(p->real, out);
}

static int fault_file_control(sqlite3_file *file, int op, void *arg) {
    FaultFile *p = (FaultFile *)file;
    // A size hint would let the wrapped VFS extend the file behind the page cache's back.
    if (p->inode && op == SQLITE_FCNTL_SIZE_HINT) return SQLITE_OK;
    if (op == SQLITE_FCNTL_VFSNAME) {
        *(char **)arg = sqlite3_mprintf("%s", fault_vfs_name);
        return SQLITE_OK;
    }
    return p->real->pMethods->xFileControl(p->real, op, arg);
}

static int fault_sector_size(sqlite3_file *file) {
    FaultFile *p = (FaultFile *)file;
    return p->real->pMethods->xSectorSize(p->real);
}

static int fault_device_characteristics(sqlite3_file *file) {
    FaultFile *p = (FaultFile *)file;
    return p->real->pMethods->xDeviceCharacteristics(p->real);
}

static int fault_shm_map(sqlite3_file *file, int page, int size, int extend, void volatile **out) {
    FaultFile *p = (FaultFile *)file;
    return p->real->pMethods->xShmMap(p->real, page, size, extend, out);
}

static int fault_shm_lock(sqlite3_file *file, int offset, int n, int flags) {
    FaultFile *p = (FaultFile *)file;
    return p->real->pMethods->xShmLock(p->real, offset, n, flags);
}

static void fault_shm_barrier(sqlite3_file *file) {
    FaultFile *p = (FaultFile *)file;
    p->real->pMethods->xShmBarrier(p->real);
}

static int fault_shm_unmap(sqlite3_file *file, int delete_flag) {
    FaultFile *p = (FaultFile *)file;
    return p->real->pMethods->xShmUnmap(p->real, delete_flag);
}

// Memory-mapped reads would bypass the unsynced writes: always decline, so SQLite uses xRead.
static int fault_fetch(sqlite3_file *file, sqlite3_int64 offset, int amount, void **out) {
    (void)file;
    (void)offset;
    (void)amount;
    *out = NULL;
    return SQLITE_OK;
}

static int fault_unfetch(sqlite3_file *file, sqlite3_int64 offset, void *page) {
    (void)file;
    (void)offset;
    (void)page;
    return SQLITE_OK;
}

static const sqlite3_io_methods fault_io_methods = {
    3,
    fault_close,
    fault_read,
    fault_write,
    fault_truncate,
    fault_sync,
    fault_file_size,
    fault_lock,
    fault_unlock,
    fault_check_reserved_lock,
    fault_file_control,
    fault_sector_size,
    fault_device_characteristics,
    fault_shm_map,
    fault_shm_lock,
    fault_shm_barrier,
    fault_shm_unmap,
    fault_fetch,
    fault_unfetch,
};

// MARK: - VFS methods

static int fault_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out_flags) {
    (void)vfs;
    FaultFile *p = (FaultFile *)file;
    memset(p, 0, sizeof(FaultFile));
    p->real = (sqlite3_file *)&p[1];
    int rc = real_vfs->xOpen(real_vfs, name, p->real, flags, out_flags);
    if (rc != SQLITE_OK) {
        p->base.pMethods = NULL;
        return rc;
    }
    int durable = flags & (SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_WAL | SQLITE_OPEN_MAIN_JOURNAL);
    if (name && durable) {
        pthread_mutex_lock(&state_lock);
        p->inode = find_inode(name, 1);
        if (p->inode) {
            p->inode->handles++;
            trace_record(LFV_TRACE_OPEN, name, 0, NULL, 0);
        }
        pthread_mutex_unlock(&state_lock);
        if (!p->inode) {
            p->real->pMethods->xClose(p->real);
            p->base.pMethods = NULL;
            return SQLITE_NOMEM;
        }
    }
    p->base.pMethods = &fault_io_methods;
    return SQLITE_OK;
}

static int fault_delete(sqlite3_vfs *vfs, const char *name, int sync_dir) {
    (void)vfs;
    pthread_mutex_lock(&state_lock);
    if (powered_off) {
        pthread_mutex_unlock(&state_lock);
        return SQLITE_IOERR_DELETE;
    }
    int rc = real_vfs->xDelete(real_vfs, name, sync_dir);
    Inode *inode = rc == SQLITE_OK ? find_inode(name, 0) : NULL;
    if (inode) {
        clear_ops(inode);  // the file is gone, and its page cache with it
        release_inode_if_unused(inode);
    }
    if (rc == SQLITE_OK && tracing && trace_file_index(name, 0) >= 0) trace_record(LFV_TRACE_DELETE, name, 0, NULL, 0);
    pthread_mutex_unlock(&state_lock);
    return rc;
}

static int fault_access(sqlite3_vfs *vfs, const char *name, int flags, int *out) {
    (void)vfs;
    return real_vfs->xAccess(real_vfs, name, flags, out);
}

static int fault_full_pathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    (void)vfs;
    return real_vfs->xFullPathname(real_vfs, name, size, out);
}

static void *fault_dl_open(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return real_vfs->xDlOpen(real_vfs, name);
}

static void fault_dl_error(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    real_vfs->xDlError(real_vfs, size, out);
}

static void (*fault_dl_sym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    (void)vfs;
    return real_vfs->xDlSym(real_vfs, handle, symbol);
}

static void fault_dl_close(sqlite3_vfs *vfs, void *handle) {
    (void)vfs;
    real_vfs->xDlClose(real_vfs, handle);
}

static int fault_randomness(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return real_vfs->xRandomness(real_vfs, size, out);
}

static int fault_sleep(sqlite3_vfs *vfs, int microseconds) {
    (void)vfs;
    return real_vfs->xSleep(real_vfs, microseconds);
}

static int fault_current_time(sqlite3_vfs *vfs, double *out) {
    (void)vfs;
    return real_vfs->xCurrentTime(real_vfs, out);
}

static int fault_get_last_error(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return real_vfs->xGetLastError ? real_vfs->xGetLastError(real_vfs, size, out) : 0;
}

static int fault_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *out) {
    (void)vfs;
    return real_vfs->xCurrentTimeInt64(real_vfs, out);
}

// MARK: - Public API

int lfv_register(const char *name, int make_default) {
    pthread_mutex_lock(&state_lock);
    if (!real_vfs) {
        sqlite3_vfs *base = sqlite3_vfs_find(NULL);
        if (!base) {
            pthread_mutex_unlock(&state_lock);
            return SQLITE_ERROR;
        }
        real_vfs = base;
        strncpy(fault_vfs_name, name, sizeof(fault_vfs_name) - 1);
        fault_vfs.iVersion = 2;
        fault_vfs.szOsFile = (int)sizeof(FaultFile) + base->szOsFile;
        fault_vfs.mxPathname = base->mxPathname;
        fault_vfs.zName = fault_vfs_name;
        fault_vfs.xOpen = fault_open;
        fault_vfs.xDelete = fault_delete;
        fault_vfs.xAccess = fault_access;
        fault_vfs.xFullPathname = fault_full_pathname;
        fault_vfs.xDlOpen = fault_dl_open;
        fault_vfs.xDlError = fault_dl_error;
        fault_vfs.xDlSym = fault_dl_sym;
        fault_vfs.xDlClose = fault_dl_close;
        fault_vfs.xRandomness = fault_randomness;
        fault_vfs.xSleep = fault_sleep;
        fault_vfs.xCurrentTime = fault_current_time;
        fault_vfs.xGetLastError = fault_get_last_error;
        fault_vfs.xCurrentTimeInt64 = fault_current_time_int64;
    }
    pthread_mutex_unlock(&state_lock);
    return sqlite3_vfs_register(&fault_vfs, make_default);
}

void lfv_reset(void) {
    pthread_mutex_lock(&state_lock);
    memset(&counters, 0, sizeof(counters));
    memset(&write_fault, 0, sizeof(write_fault));
    memset(&sync_fault, 0, sizeof(sync_fault));
    powered_off = 0;
    pthread_mutex_unlock(&state_lock);
}

static void arm(Fault *fault, int kind, int64_t nth, int persistent, int64_t base) {
    fault->kind = kind;
    fault->at = nth;
    fault->base = base;
    fault->persistent = persistent;
    fault->fired = 0;
}

void lfv_arm_at_write(int kind, int64_t nth, int persistent) {
    pthread_mutex_lock(&state_lock);
    arm(&write_fault, kind, nth, persistent, counters.writes);
    pthread_mutex_unlock(&state_lock);
}

void lfv_arm_at_sync(int kind, int64_t nth, int persistent) {
    pthread_mutex_lock(&state_lock);
    arm(&sync_fault, kind, nth, persistent, counters.syncs);
    pthread_mutex_unlock(&state_lock);
}

void lfv_disarm(void) {
    pthread_mutex_lock(&state_lock);
    memset(&write_fault, 0, sizeof(write_fault));
    memset(&sync_fault, 0, sizeof(sync_fault));
    pthread_mutex_unlock(&state_lock);
}

void lfv_set_loss_mode(int mode, uint64_t seed) {
    pthread_mutex_lock(&state_lock);
    loss_mode = mode;
    loss_state = seed;
    pthread_mutex_unlock(&state_lock);
}

void lfv_power_loss(void) {
    pthread_mutex_lock(&state_lock);
    if (!powered_off) power_loss_locked();
    pthread_mutex_unlock(&state_lock);
}

int lfv_is_powered_off(void) {
    pthread_mutex_lock(&state_lock);
    int off = powered_off;
    pthread_mutex_unlock(&state_lock);
    return off;
}

void lfv_power_on(void) {
    pthread_mutex_lock(&state_lock);
    powered_off = 0;
    memset(&write_fault, 0, sizeof(write_fault));
    memset(&sync_fault, 0, sizeof(sync_fault));
    pthread_mutex_unlock(&state_lock);
}

lfv_counters lfv_get_counters(void) {
    pthread_mutex_lock(&state_lock);
    lfv_counters copy = counters;
    pthread_mutex_unlock(&state_lock);
    return copy;
}

// MARK: - The trace

static void trace_clear_locked(void) {
    tracing = 0;
    trace_incomplete = 0;
    for (int64_t i = 0; i < trace_count; i++) free((void *)trace_ops[i].data);
    free(trace_ops);
    trace_ops = NULL;
    trace_count = trace_capacity = 0;
    for (int i = 0; i < trace_file_count; i++) free(trace_files[i]);
    free(trace_files);
    trace_files = NULL;
    trace_file_count = trace_file_capacity = 0;
}

int lfv_trace_start(void) {
    // One locked section: no write can come between the check and the start.
    pthread_mutex_lock(&state_lock);
    for (Inode *inode = inodes; inode; inode = inode->next) {
        if (inode->count > 0) {
            pthread_mutex_unlock(&state_lock);
            return SQLITE_MISUSE;
        }
    }
    trace_clear_locked();
    tracing = 1;
    trace_current_label = 0;
    pthread_mutex_unlock(&state_lock);
    return SQLITE_OK;
}

void lfv_trace_stop(void) {
    pthread_mutex_lock(&state_lock);
    tracing = 0;
    pthread_mutex_unlock(&state_lock);
}

void lfv_trace_clear(void) {
    pthread_mutex_lock(&state_lock);
    trace_clear_locked();
    pthread_mutex_unlock(&state_lock);
}

int lfv_trace_incomplete(void) {
    pthread_mutex_lock(&state_lock);
    int incomplete = trace_incomplete;
    pthread_mutex_unlock(&state_lock);
    return incomplete;
}

int64_t lfv_trace_count(void) {
    pthread_mutex_lock(&state_lock);
    int64_t count = trace_count;
    pthread_mutex_unlock(&state_lock);
    return count;
}

int lfv_trace_get(int64_t index, lfv_trace_op *out) {
    pthread_mutex_lock(&state_lock);
    int found = index >= 0 && index < trace_count;
    if (found) *out = trace_ops[index];
    pthread_mutex_unlock(&state_lock);
    return found;
}

int lfv_trace_file_count(void) {
    pthread_mutex_lock(&state_lock);
    int count = trace_file_count;
    pthread_mutex_unlock(&state_lock);
    return count;
}

const char *lfv_trace_file(int index) {
    pthread_mutex_lock(&state_lock);
    const char *path = index >= 0 && index < trace_file_count ? trace_files[index] : NULL;
    pthread_mutex_unlock(&state_lock);
    return path;
}

void lfv_trace_label(int label) {
    pthread_mutex_lock(&state_lock);
    trace_current_label = label;
    pthread_mutex_unlock(&state_lock);
}
