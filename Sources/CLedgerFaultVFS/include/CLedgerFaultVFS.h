// A SQLite VFS shim that wraps the default "unix" VFS to simulate power losses and inject
// I/O errors, for crash-recovery tests. See LedgerTesting/FaultInjection.swift for the Swift API.
#ifndef CLEDGERFAULTVFS_H
#define CLEDGERFAULTVFS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What a power loss keeps of the writes that were not synced yet.
typedef enum {
    LFV_LOSE_ALL = 0,      ///< every unsynced write is lost
    LFV_LOSE_RANDOM = 1,   ///< a seeded random subset of them is lost
    LFV_TORN_LAST = 2,     ///< all are kept but the last, of which only the first sector survives
    LFV_KEEP_ALL = 3,      ///< nothing is lost (what a killed process leaves)
} lfv_loss_mode;

/// What an armed fault does when its write or sync comes.
typedef enum {
    LFV_FAULT_POWER_LOSS = 1,  ///< the machine loses power just before that write or sync
    LFV_FAULT_IO_ERROR = 2,    ///< that write or sync fails with SQLITE_IOERR_WRITE / _FSYNC
    LFV_FAULT_DISK_FULL = 3,   ///< that write fails with SQLITE_FULL
} lfv_fault_kind;

typedef struct {
    int64_t writes;            ///< writes seen since the last lfv_reset
    int64_t syncs;
    int64_t faults;            ///< armed faults that fired
    int64_t power_losses;
    int64_t unsynced_writes_lost;
    int64_t unsynced_writes_kept;
} lfv_counters;

/// Registers the VFS under `name`, wrapping the current default VFS; `make_default` non-zero
/// makes every connection opened afterwards use it. Returns a SQLite result code.
int lfv_register(const char *name, int make_default);

/// Clears counters, armed faults and the "powered off" state (not the unsynced writes).
void lfv_reset(void);

/// Arms a fault at the `nth` write (or sync) counted from now, 1-based. `persistent` non-zero:
/// an I/O error repeats for every later write (or sync) too.
void lfv_arm_at_write(int kind, int64_t nth, int persistent);
void lfv_arm_at_sync(int kind, int64_t nth, int persistent);
void lfv_disarm(void);

/// How the next power loss treats unsynced writes; `seed` drives LFV_LOSE_RANDOM.
void lfv_set_loss_mode(int mode, uint64_t seed);

/// Loses power now. Afterwards every write, sync, truncate and delete fails, so that the
/// connections open at the time can be closed without touching the files.
void lfv_power_loss(void);

/// Non-zero while the power is off.
int lfv_is_powered_off(void);

/// Powers the machine back on, once the old connections are closed: a fresh open sees exactly
/// what the files held when the power went.
void lfv_power_on(void);

lfv_counters lfv_get_counters(void);

// MARK: - The trace: every change to the files, in order, to rebuild any crash state afterwards

/// What a recorded operation did to its file.
typedef enum {
    LFV_TRACE_OPEN = 0,      ///< the file was opened (created empty when it did not exist)
    LFV_TRACE_WRITE = 1,     ///< bytes written, unsynced until the file's next sync
    LFV_TRACE_TRUNCATE = 2,  ///< the file's size set, unsynced until its next sync
    LFV_TRACE_SYNC = 3,      ///< the file's unsynced writes and truncates reached the disk
    LFV_TRACE_DELETE = 4,    ///< the file was removed, with its unsynced writes
} lfv_trace_kind;

/// One recorded operation. `data` stays valid until `lfv_trace_clear`.
typedef struct {
    int kind;
    int file;                   ///< index of the file's path (`lfv_trace_file`)
    int64_t offset;             ///< a write's offset, or the size a truncate sets
    int length;                 ///< a write's length
    const unsigned char *data;  ///< a write's bytes
    int label;                  ///< the label in force when it was recorded (`lfv_trace_label`)
} lfv_trace_op;

/// Clears any earlier trace and starts recording every open, write, truncate and sync of a
/// database, WAL or journal file, and the deletion of such a file the trace has seen. Returns
/// SQLITE_MISUSE, changing nothing (an earlier trace stays), when unsynced writes are pending:
/// the trace could not rebuild them.
int lfv_trace_start(void);

/// Non-zero when an operation could not be recorded (memory ran out): recording stopped there,
/// and the trace does not hold the whole run.
int lfv_trace_incomplete(void);

/// Stops recording; the trace stays readable until `lfv_trace_clear`.
void lfv_trace_stop(void);

/// Frees the trace.
void lfv_trace_clear(void);

/// How many operations the trace holds (while recording: so far).
int64_t lfv_trace_count(void);

/// Copies operation `index` (0-based) to `out`; returns 0 when there is no such operation.
int lfv_trace_get(int64_t index, lfv_trace_op *out);

/// How many files the trace names, and the path of file `index` (NULL for no such file).
int lfv_trace_file_count(void);
const char *lfv_trace_file(int index);

/// Labels the operations recorded from now on (what the code under test is doing).
void lfv_trace_label(int label);

#ifdef __cplusplus
}
#endif

#endif
