// See CLedgerBaseline.h. Mirrors the ledger's schema closely enough that the rows, indexes and
// commits cost the same; none of the ledger's checks or bookkeeping beyond that.

#include "CLedgerBaseline.h"

#include <sqlite3.h>
#include <stdlib.h>

struct lbase {
    sqlite3 *db;
    sqlite3_stmt *insert, *event, *update_state, *finish, *next_id;
    int64_t next;
};

static const char *schema =
    "CREATE TABLE IF NOT EXISTS transactions ("
    " id INTEGER PRIMARY KEY, original_id INTEGER NOT NULL, product_id TEXT NOT NULL, product_type TEXT NOT NULL,"
    " state TEXT NOT NULL, is_finished INTEGER NOT NULL DEFAULT 0, quantity INTEGER NOT NULL, purchase_date INTEGER NOT NULL,"
    " original_purchase_date INTEGER NOT NULL, storefront TEXT NOT NULL, environment TEXT NOT NULL, idempotency_key TEXT UNIQUE,"
    " created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, finished_at INTEGER, delivery_count INTEGER NOT NULL DEFAULT 0,"
    " last_delivered_at INTEGER, restored_from INTEGER);"
    "CREATE INDEX IF NOT EXISTS unfinished ON transactions (id) WHERE is_finished = 0;"
    "CREATE INDEX IF NOT EXISTS by_product ON transactions (product_id, id);"
    "CREATE INDEX IF NOT EXISTS by_state ON transactions (state, id);"
    "CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY AUTOINCREMENT, transaction_id INTEGER NOT NULL,"
    " kind TEXT NOT NULL, from_state TEXT, to_state TEXT NOT NULL, at INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS events_by_transaction ON events (transaction_id, seq);";

static int exec(lbase *b, const char *sql) { return sqlite3_exec(b->db, sql, NULL, NULL, NULL); }

lbase *lbase_open(const char *path, int synchronous) {
    lbase *b = calloc(1, sizeof(lbase));
    if (!b) return NULL;
    if (sqlite3_open(path, &b->db) != SQLITE_OK) goto fail;
    exec(b, "PRAGMA journal_mode = WAL");
    exec(b, synchronous >= 2 ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL");
    exec(b, "PRAGMA foreign_keys = ON");
    sqlite3_busy_timeout(b->db, 10000);
    if (exec(b, schema) != SQLITE_OK) goto fail;
    if (sqlite3_prepare_v2(b->db,
            "INSERT INTO transactions (id, original_id, product_id, product_type, state, quantity, purchase_date,"
            " original_purchase_date, storefront, environment, created_at, updated_at, is_finished, finished_at, restored_from)"
            " VALUES (?1, ?1, ?2, 'consumable', ?3, 1, ?4, ?4, 'USA', 'xcode', ?4, ?4, ?5, ?6, ?7)", -1, &b->insert, NULL) ||
        sqlite3_prepare_v2(b->db, "INSERT INTO events (transaction_id, kind, from_state, to_state, at) VALUES (?, ?, ?, ?, ?)",
            -1, &b->event, NULL) ||
        sqlite3_prepare_v2(b->db, "UPDATE transactions SET state = ?, updated_at = ? WHERE id = ?", -1, &b->update_state, NULL) ||
        sqlite3_prepare_v2(b->db, "UPDATE transactions SET is_finished = 1, finished_at = ?, updated_at = ? WHERE id = ?", -1,
            &b->finish, NULL) ||
        sqlite3_prepare_v2(b->db, "SELECT COALESCE(MAX(id), 0) FROM transactions", -1, &b->next_id, NULL))
        goto fail;
    sqlite3_step(b->next_id);
    b->next = sqlite3_column_int64(b->next_id, 0);
    sqlite3_reset(b->next_id);
    return b;
fail:
    lbase_close(b);
    return NULL;
}

void lbase_close(lbase *b) {
    if (!b) return;
    sqlite3_finalize(b->insert);
    sqlite3_finalize(b->event);
    sqlite3_finalize(b->update_state);
    sqlite3_finalize(b->finish);
    sqlite3_finalize(b->next_id);
    sqlite3_close(b->db);
    free(b);
}

static int step(sqlite3_stmt *s) {
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    return rc == SQLITE_DONE ? 0 : rc;
}

static int insert_row(lbase *b, int64_t id, const char *state, int64_t now, int finished, int64_t restored_from) {
    sqlite3_bind_int64(b->insert, 1, id);
    sqlite3_bind_text(b->insert, 2, "bench.product", -1, SQLITE_STATIC);
    sqlite3_bind_text(b->insert, 3, state, -1, SQLITE_STATIC);
    sqlite3_bind_int64(b->insert, 4, now);
    sqlite3_bind_int(b->insert, 5, finished);
    if (finished) sqlite3_bind_int64(b->insert, 6, now); else sqlite3_bind_null(b->insert, 6);
    if (restored_from) sqlite3_bind_int64(b->insert, 7, restored_from); else sqlite3_bind_null(b->insert, 7);
    return step(b->insert);
}

static int event(lbase *b, int64_t id, const char *kind, const char *from, const char *to, int64_t now) {
    sqlite3_bind_int64(b->event, 1, id);
    sqlite3_bind_text(b->event, 2, kind, -1, SQLITE_STATIC);
    if (from) sqlite3_bind_text(b->event, 3, from, -1, SQLITE_STATIC); else sqlite3_bind_null(b->event, 3);
    sqlite3_bind_text(b->event, 4, to, -1, SQLITE_STATIC);
    sqlite3_bind_int64(b->event, 5, now);
    return step(b->event);
}

int lbase_purchase_cycles(lbase *b, int count) {
    for (int i = 0; i < count; i++) {
        int64_t id = ++b->next, now = 1800000000000LL + id;
        if (exec(b, "BEGIN IMMEDIATE") || insert_row(b, id, "purchasing", now, 0, 0) ||
            event(b, id, "created", NULL, "purchasing", now) || exec(b, "COMMIT"))
            return 1;
        sqlite3_bind_text(b->update_state, 1, "purchased", -1, SQLITE_STATIC);
        sqlite3_bind_int64(b->update_state, 2, now);
        sqlite3_bind_int64(b->update_state, 3, id);
        if (exec(b, "BEGIN IMMEDIATE") || step(b->update_state) ||
            event(b, id, "stateChanged", "purchasing", "purchased", now) || exec(b, "COMMIT"))
            return 1;
        sqlite3_bind_int64(b->finish, 1, now);
        sqlite3_bind_int64(b->finish, 2, now);
        sqlite3_bind_int64(b->finish, 3, id);
        if (exec(b, "BEGIN IMMEDIATE") || step(b->finish) ||
            event(b, id, "finished", "purchased", "purchased", now) || exec(b, "COMMIT"))
            return 1;
    }
    return 0;
}

int lbase_fill(lbase *b, int64_t finished, int64_t unfinished) {
    if (exec(b, "BEGIN IMMEDIATE")) return 1;
    for (int64_t i = 0; i < finished + unfinished; i++) {
        int64_t id = ++b->next, now = 1800000000000LL + id;
        int done = i < finished;
        if (insert_row(b, id, "purchased", now, done, 0) || event(b, id, "created", NULL, "purchasing", now) ||
            event(b, id, "stateChanged", "purchasing", "purchased", now) ||
            (done && event(b, id, "finished", "purchased", "purchased", now)))
            return 1;
    }
    return exec(b, "COMMIT");
}

int64_t lbase_launch(lbase *b) {
    sqlite3_stmt *select = NULL, *deliver = NULL;
    int64_t count = 0;
    if (exec(b, "BEGIN IMMEDIATE")) return -1;
    sqlite3_prepare_v2(b->db, "SELECT id, state FROM transactions WHERE is_finished = 0 ORDER BY id", -1, &select, NULL);
    sqlite3_prepare_v2(b->db, "UPDATE transactions SET delivery_count = delivery_count + 1, last_delivered_at = ? WHERE id = ?",
        -1, &deliver, NULL);
    while (sqlite3_step(select) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(select, 0);
        sqlite3_bind_int64(deliver, 1, id);
        sqlite3_bind_int64(deliver, 2, id);
        if (step(deliver) || event(b, id, "delivered", "purchased", "purchased", id)) { count = -1; break; }
        count++;
    }
    sqlite3_finalize(select);
    sqlite3_finalize(deliver);
    if (count < 0) { exec(b, "ROLLBACK"); return -1; }
    return exec(b, "COMMIT") ? -1 : count;
}

int64_t lbase_restore(lbase *b) {
    sqlite3_stmt *select = NULL;
    int64_t count = 0;
    if (exec(b, "BEGIN IMMEDIATE")) return -1;
    sqlite3_prepare_v2(b->db, "SELECT id FROM transactions WHERE state = 'purchased' AND restored_from IS NULL ORDER BY id",
        -1, &select, NULL);
    while (sqlite3_step(select) == SQLITE_ROW) {
        int64_t source = sqlite3_column_int64(select, 0), id = ++b->next;
        if (insert_row(b, id, "restored", id, 0, source) || event(b, id, "created", NULL, "restored", id)) { count = -1; break; }
        count++;
    }
    sqlite3_finalize(select);
    if (count < 0) { exec(b, "ROLLBACK"); return -1; }
    return exec(b, "COMMIT") ? -1 : count;
}

int64_t lbase_list(lbase *b, int limit) {
    sqlite3_stmt *select = NULL;
    int64_t count = 0;
    sqlite3_prepare_v2(b->db, "SELECT * FROM transactions ORDER BY id LIMIT ?", -1, &select, NULL);
    sqlite3_bind_int(select, 1, limit);
    while (sqlite3_step(select) == SQLITE_ROW) count++;
    sqlite3_finalize(select);
    return count;
}
