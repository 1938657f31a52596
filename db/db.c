/*
 * db.c: opening and closing the database, the read-connection pool, the
 * group-commit writer thread, and the helpers every db/ file uses.
 *
 * Writer state machine (one thread, writer_main):
 *   idle --(db__write queues an op)--> batch: take every queued op,
 *   BEGIN IMMEDIATE, each op in its own SAVEPOINT (rolled back alone if it
 *   fails), COMMIT (WAL, synchronous=FULL: the commit is on disk), then
 *   mark every op of the batch done and wake its caller --> idle.
 *   db_close() sets `stopping`; the writer drains what is queued and exits.
 *
 * Invariants:
 *   1. An op is marked done only after the COMMIT that holds it returned,
 *      so a caller never acknowledges an uncommitted change.
 *   2. Ops queued while a batch commits wait for the next batch: their
 *      fsync is shared with everything queued beside them (group commit).
 *   3. Read connections are query_only and each call is one read
 *      transaction, so a reader sees one consistent snapshot.
 *   4. Checkpoints never run inside a commit: the writer's connection has
 *      wal_autocheckpoint off, and a checkpointer thread with its own
 *      connection copies the WAL into the database (PASSIVE, so it never
 *      blocks the writer) every CKPT_COMMITS commits or every second.
 */
#include "db_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#define DB_READERS 16
#define CKPT_COMMITS 64
#define CKPT_FORCE_PAGES 50000  /* past this WAL size, wait for readers (RESTART) */

struct db__op {
    db__fn fn;
    void *arg;
    int rc;
    int done;
    pthread_cond_t cv;         /* its caller waits here: a batch wakes only its own */
    struct db__op *next;
};

struct db {
    char *path;
    struct db__conn wconn;
    pthread_t writer;
    int writer_started;
    pthread_mutex_t mu;
    pthread_cond_t work;       /* an op was queued, or stopping */
    struct db__op *head, *tail;
    int stopping;
    int64_t commits, writes;

    struct db__conn cconn;     /* the checkpointer's */
    pthread_t ckpt;
    int ckpt_started;
    pthread_cond_t ckpt_cv;    /* CKPT_COMMITS commits since the last one, or stopping */
    int since_ckpt;

    pthread_mutex_t rmu;
    pthread_cond_t rfree;
    struct db__conn readers[DB_READERS];
    int r_open;                /* readers opened so far */
    int r_busy[DB_READERS];
};

/* ---- helpers ---- */

int db__rc(int src)
{
    switch (src & 0xff) {
    case SQLITE_OK: case SQLITE_DONE: case SQLITE_ROW: return DB_OK;
    case SQLITE_CONSTRAINT: return DB_ECONFLICT;
    case SQLITE_NOMEM: return DB_ENOMEM;
    default: return DB_EIO;
    }
}

const char *db_strerror(int rc)
{
    switch (rc) {
    case DB_OK: return "ok";
    case DB_ENOTFOUND: return "not found";
    case DB_ECONFLICT: return "conflict";
    case DB_EIO: return "storage error";
    case DB_ENOMEM: return "out of memory";
    case DB_EINVAL: return "invalid request";
    case DB_ECLOSED: return "database closing";
    default: return "unknown error";
    }
}

sqlite3_stmt *db__prep(struct db__conn *c, const char *sql, int *rc)
{
    int i, src;
    sqlite3_stmt *st = NULL;

    for (i = 0; i < c->n_stmts; i++)
        if (c->stmts[i].sql == sql)
            return c->stmts[i].st;
    src = sqlite3_prepare_v3(c->h, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL);
    if (src != SQLITE_OK) {
        fprintf(stderr, "allotd: db: prepare failed: %s\n", sqlite3_errmsg(c->h));
        *rc = DB_EIO;
        return NULL;
    }
    if (c->n_stmts < DB__STMT_CACHE) {
        c->stmts[c->n_stmts].sql = sql;
        c->stmts[c->n_stmts].st = st;
        c->n_stmts++;
    } else {
        /* the cache is sized for every static statement; a full cache
         * means dynamic SQL, which callers finalize themselves */
        sqlite3_finalize(st);
        *rc = DB_EIO;
        return NULL;
    }
    return st;
}

int db__done(sqlite3_stmt *st, int rc)
{
    if (st) {
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
    }
    return rc;
}

int db__step_done(sqlite3_stmt *st)
{
    int src = sqlite3_step(st);

    if (src == SQLITE_DONE || src == SQLITE_ROW)
        return DB_OK;
    return db__rc(src);
}

int db__exec(struct db__conn *c, const char *sql)
{
    char *err = NULL;
    int src = sqlite3_exec(c->h, sql, NULL, NULL, &err);

    if (src != SQLITE_OK) {
        fprintf(stderr, "allotd: db: %s\n", err ? err : sqlite3_errstr(src));
        sqlite3_free(err);
        return db__rc(src) == DB_OK ? DB_EIO : db__rc(src);
    }
    return DB_OK;
}

void db__copy(char *dst, size_t size, sqlite3_stmt *st, int col)
{
    const unsigned char *s = sqlite3_column_text(st, col);
    size_t n;

    if (!s) {
        dst[0] = 0;
        return;
    }
    n = strlen((const char *)s);
    if (n >= size)
        n = size - 1;
    memcpy(dst, s, n);
    dst[n] = 0;
}

void db__bind_text(sqlite3_stmt *st, int i, const char *s)
{
    sqlite3_bind_text(st, i, s ? s : "", -1, SQLITE_TRANSIENT);
}

/* RFC 9562 version 7: 48 bits of milliseconds, then 74 random bits. Ids
 * made later sort later, so the index on them grows at its end instead of
 * dirtying a random page per insert (a durable commit writes every page
 * it dirtied). */
void db__uuid(char out[DB_ID_LEN])
{
    unsigned char b[16];
    size_t got = 0;
    int64_t ms = db__now_ms();
    int i;

    while (got < sizeof(b)) {
        ssize_t r = getrandom(b + got, sizeof(b) - got, 0);
        if (r > 0)
            got += (size_t)r;
        else if (errno != EINTR)
            abort(); /* no randomness: ids could repeat; refuse to go on */
    }
    for (i = 0; i < 6; i++)
        b[i] = (unsigned char)((uint64_t)ms >> (8 * (5 - i)));
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x70);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    snprintf(out, DB_ID_LEN,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
             b[12], b[13], b[14], b[15]);
}

int64_t db__now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int db__grow(void *arrp, int n, int *cap, size_t elem)
{
    void **arr = arrp;
    int ncap;
    void *p;

    if (n < *cap)
        return DB_OK;
    ncap = *cap ? *cap * 2 : 16;
    p = realloc(*arr, elem * (size_t)ncap);
    if (!p)
        return DB_ENOMEM;
    *arr = p;
    *cap = ncap;
    return DB_OK;
}

int db__read_list(struct db *db, db__fn fn, void *arg, void *arrp, int *n)
{
    void **arr = arrp;
    int rc;

    *arr = NULL;
    *n = 0;
    rc = db__read(db, fn, arg);
    if (rc != DB_OK) {
        free(*arr);
        *arr = NULL;
        *n = 0;
    }
    return rc;
}

/* ---- connections ---- */

static int conn_open(struct db__conn *c, const char *path, int readonly)
{
    int flags = readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    int rc;

    memset(c, 0, sizeof(*c));
    if (sqlite3_open_v2(path, &c->h, flags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        fprintf(stderr, "allotd: db: cannot open %s: %s\n", path,
                c->h ? sqlite3_errmsg(c->h) : "out of memory");
        return DB_EIO;
    }
    sqlite3_busy_timeout(c->h, 10000);
    rc = db__exec(c, readonly ? "PRAGMA foreign_keys=ON; PRAGMA query_only=ON;"
                              : "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                                " PRAGMA foreign_keys=ON;");
    return rc;
}

static void conn_close(struct db__conn *c)
{
    int i;

    for (i = 0; i < c->n_stmts; i++)
        sqlite3_finalize(c->stmts[i].st);
    c->n_stmts = 0;
    if (c->h)
        sqlite3_close(c->h);
    c->h = NULL;
}

static int check_integrity(struct db__conn *c)
{
    sqlite3_stmt *st = NULL;
    int rc = DB_EIO;

    if (sqlite3_prepare_v2(c->h, "PRAGMA quick_check", -1, &st, NULL) != SQLITE_OK)
        goto out;
    if (sqlite3_step(st) == SQLITE_ROW &&
        strcmp((const char *)sqlite3_column_text(st, 0), "ok") == 0)
        rc = DB_OK;
    else
        fprintf(stderr, "allotd: db: integrity check failed; refusing to start\n");
out:
    sqlite3_finalize(st);
    return rc;
}

/* Runs one of the fixed transaction-control statements below through the
 * connection's statement cache (no parse per call). */
static const char SQL_BEGIN[] = "BEGIN";
static const char SQL_BEGIN_IMMEDIATE[] = "BEGIN IMMEDIATE";
static const char SQL_COMMIT[] = "COMMIT";
static const char SQL_ROLLBACK[] = "ROLLBACK";
static const char SQL_SAVEPOINT[] = "SAVEPOINT op";
static const char SQL_ROLLBACK_TO[] = "ROLLBACK TO op";
static const char SQL_RELEASE[] = "RELEASE op";

static int run_fixed(struct db__conn *c, const char *sql)
{
    int rc = DB_OK;
    sqlite3_stmt *st = db__prep(c, sql, &rc);

    if (!st)
        return rc;
    return db__done(st, db__step_done(st));
}

/* ---- the writer ---- */

static void run_batch(struct db *db, struct db__op *batch)
{
    struct db__op *op, *next;
    int rc, n = 0;

    rc = run_fixed(&db->wconn, SQL_BEGIN_IMMEDIATE);
    for (op = batch; op; op = op->next) {
        n++;
        if (rc != DB_OK) {
            op->rc = rc;
            continue;
        }
        if (run_fixed(&db->wconn, SQL_SAVEPOINT) != DB_OK) {
            op->rc = DB_EIO;
            continue;
        }
        op->rc = op->fn(&db->wconn, op->arg);
        if (op->rc != DB_OK)
            run_fixed(&db->wconn, SQL_ROLLBACK_TO);
        run_fixed(&db->wconn, SQL_RELEASE);
    }
    if (rc == DB_OK && run_fixed(&db->wconn, SQL_COMMIT) != DB_OK) {
        run_fixed(&db->wconn, SQL_ROLLBACK);
        for (op = batch; op; op = op->next)
            op->rc = DB_EIO;
    }
    pthread_mutex_lock(&db->mu);
    db->commits++;
    db->writes += n;
    if (++db->since_ckpt >= CKPT_COMMITS)
        pthread_cond_signal(&db->ckpt_cv);
    for (op = batch; op; op = next) {
        next = op->next; /* op lives on its caller's stack: read it first */
        op->done = 1;
        pthread_cond_signal(&op->cv);
    }
    pthread_mutex_unlock(&db->mu);
}

static void *writer_main(void *arg)
{
    struct db *db = arg;
    struct db__op *batch;

    for (;;) {
        pthread_mutex_lock(&db->mu);
        while (!db->head && !db->stopping)
            pthread_cond_wait(&db->work, &db->mu);
        batch = db->head;
        db->head = db->tail = NULL;
        pthread_mutex_unlock(&db->mu);
        if (!batch)
            break; /* stopping and drained */
        run_batch(db, batch);
    }
    return NULL;
}

static void *ckpt_main(void *arg)
{
    struct db *db = arg;
    struct timespec until;
    int stop = 0, n_log = 0, n_done = 0;

    while (!stop) {
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 1;
        pthread_mutex_lock(&db->mu);
        while (db->since_ckpt < CKPT_COMMITS && !db->stopping)
            if (pthread_cond_timedwait(&db->ckpt_cv, &db->mu, &until) != 0)
                break;
        stop = db->stopping;
        db->since_ckpt = 0;
        pthread_mutex_unlock(&db->mu);
        sqlite3_wal_checkpoint_v2(db->cconn.h, NULL,
                                  n_log > CKPT_FORCE_PAGES ? SQLITE_CHECKPOINT_RESTART
                                                           : SQLITE_CHECKPOINT_PASSIVE,
                                  &n_log, &n_done);
    }
    return NULL;
}

int db__write(struct db *db, db__fn fn, void *arg)
{
    struct db__op op;
    int rc;

    op.fn = fn;
    op.arg = arg;
    op.rc = DB_OK;
    op.done = 0;
    op.next = NULL;
    pthread_cond_init(&op.cv, NULL);
    pthread_mutex_lock(&db->mu);
    if (db->stopping) {
        pthread_mutex_unlock(&db->mu);
        pthread_cond_destroy(&op.cv);
        return DB_ECLOSED;
    }
    if (db->tail)
        db->tail->next = &op;
    else
        db->head = &op;
    db->tail = &op;
    pthread_cond_signal(&db->work);
    while (!op.done)
        pthread_cond_wait(&op.cv, &db->mu);
    rc = op.rc;
    pthread_mutex_unlock(&db->mu);
    pthread_cond_destroy(&op.cv);
    return rc;
}

void db_writer_stats(struct db *db, int64_t *commits, int64_t *writes)
{
    pthread_mutex_lock(&db->mu);
    *commits = db->commits;
    *writes = db->writes;
    pthread_mutex_unlock(&db->mu);
}

/* ---- readers ---- */

static int reader_acquire(struct db *db, int *slot)
{
    int i, rc = DB_OK;

    pthread_mutex_lock(&db->rmu);
    for (;;) {
        for (i = 0; i < db->r_open; i++)
            if (!db->r_busy[i])
                goto found;
        if (db->r_open < DB_READERS) {
            i = db->r_open;
            rc = conn_open(&db->readers[i], db->path, 1);
            if (rc != DB_OK) {
                conn_close(&db->readers[i]);
                goto out;
            }
            db->r_open++;
            goto found;
        }
        pthread_cond_wait(&db->rfree, &db->rmu);
    }
found:
    db->r_busy[i] = 1;
    *slot = i;
out:
    pthread_mutex_unlock(&db->rmu);
    return rc;
}

static void reader_release(struct db *db, int slot)
{
    pthread_mutex_lock(&db->rmu);
    db->r_busy[slot] = 0;
    pthread_cond_signal(&db->rfree);
    pthread_mutex_unlock(&db->rmu);
}

int db__read(struct db *db, db__fn fn, void *arg)
{
    int slot, rc;
    struct db__conn *c;

    rc = reader_acquire(db, &slot);
    if (rc != DB_OK)
        return rc;
    c = &db->readers[slot];
    rc = run_fixed(c, SQL_BEGIN);
    if (rc == DB_OK) {
        rc = fn(c, arg);
        run_fixed(c, SQL_COMMIT);
    }
    reader_release(db, slot);
    return rc;
}

/* ---- open and close ---- */

int db_open(const char *path, struct db **out)
{
    struct db *db;
    int rc;

    *out = NULL;
    db = calloc(1, sizeof(*db));
    if (!db)
        return DB_ENOMEM;
    db->path = strdup(path);
    pthread_mutex_init(&db->mu, NULL);
    pthread_cond_init(&db->work, NULL);
    pthread_mutex_init(&db->rmu, NULL);
    pthread_cond_init(&db->ckpt_cv, NULL);
    pthread_cond_init(&db->rfree, NULL);
    if (!db->path) {
        rc = DB_ENOMEM;
        goto out_close;
    }
    rc = conn_open(&db->wconn, path, 0);
    if (rc != DB_OK)
        goto out_close;
    rc = check_integrity(&db->wconn);
    if (rc != DB_OK)
        goto out_close;
    rc = db__migrate(&db->wconn);
    if (rc == DB_OK)
        rc = db__exec(&db->wconn, "PRAGMA wal_autocheckpoint=0");
    if (rc == DB_OK)
        rc = conn_open(&db->cconn, path, 0);
    if (rc != DB_OK)
        goto out_close;
    if (pthread_create(&db->ckpt, NULL, ckpt_main, db) != 0) {
        rc = DB_EIO;
        goto out_close;
    }
    db->ckpt_started = 1;
    if (pthread_create(&db->writer, NULL, writer_main, db) != 0) {
        rc = DB_EIO;
        goto out_close;
    }
    db->writer_started = 1;
    *out = db;
    return DB_OK;
out_close:
    db_close(db);
    return rc;
}

void db_close(struct db *db)
{
    int i;

    if (!db)
        return;
    if (db->writer_started) {
        pthread_mutex_lock(&db->mu);
        db->stopping = 1;
        pthread_cond_signal(&db->work);
        pthread_mutex_unlock(&db->mu);
        pthread_join(db->writer, NULL);
    }
    if (db->ckpt_started) {
        pthread_mutex_lock(&db->mu);
        db->stopping = 1;
        pthread_cond_signal(&db->ckpt_cv);
        pthread_mutex_unlock(&db->mu);
        pthread_join(db->ckpt, NULL);
    }
    conn_close(&db->cconn);
    for (i = 0; i < db->r_open; i++)
        conn_close(&db->readers[i]);
    conn_close(&db->wconn);
    pthread_cond_destroy(&db->rfree);
    pthread_cond_destroy(&db->ckpt_cv);
    pthread_mutex_destroy(&db->rmu);
    pthread_cond_destroy(&db->work);
    pthread_mutex_destroy(&db->mu);
    free(db->path);
    free(db);
}
