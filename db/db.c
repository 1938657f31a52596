/*
 * db.c: opening and closing the database, the read-connection pool, the
 * group-commit writer thread over SQLite (lite.h), and the helpers every
 * db/ file uses (ids, time, arrays).
 *
 * Opening (db_open), in this order:
 *   Step 1: take the lock on PATH.lock (file.c): a second server on the
 *           same database stops here, before it reads or removes anything;
 *   Step 2: by mode: an existing database must be there and hold a schema;
 *           a new one is created 0600 (and a fresh one replaces whatever
 *           was there); nothing else ever creates a database;
 *   Step 3: the writer's connection (WAL, synchronous=FULL), the integrity
 *           check, the migrations; then the checkpointer and the writer.
 *
 * Writer state machine (one thread, writer_main):
 *   idle --(db__write queues an op)--> batch: take every queued op,
 *   BEGIN IMMEDIATE, each op in its own SAVEPOINT (rolled back alone if it
 *   fails, or if a statement the engine sent without waiting for its reply
 *   failed: db__flush at the op's end, PostgreSQL's pipeline), COMMIT (WAL, synchronous=FULL: the commit is on disk), check
 *   that the path still names the file written, then mark every op of the
 *   batch done and wake its caller --> idle. An op that succeeded and has
 *   a committed fn (db__write_then: submissions, whose workloads go to
 *   db_on_submitted()'s hook) is told first, on this thread, so whoever
 *   waits for new rows hears of them as the commit returns.
 *   Ops next to each other in the batch that have the same group
 *   (db__write_group: submissions) run as one call of it in one savepoint
 *   (op_group): on PostgreSQL a set-based statement for all of them, on
 *   SQLite their statements one op after the other without a savepoint
 *   each; each op is still told its own answer; if the group fails as a
 *   whole, it is rolled back and each op runs alone, so a bad one fails
 *   alone. A group last in its batch sends its RELEASE with the COMMIT
 *   (its statements were answered already): one round trip less.
 *   db_close() sets `stopping`; the writer drains what is queued and exits.
 *   An op may run in turns: its fn is called again, each call in a
 *   savepoint of its own, while it returns DB__MORE.
 *   When other ops wait for the transaction (after it in the batch or
 *   queued since), the op yields after a turn: the queued ops
 *   join the batch, the batch commits, and the op goes back to the head of
 *   the queue to go on in the next transaction. So the writes queued
 *   behind a long op wait for one turn and the commit, not for the whole
 *   op, and a commit happens between turns only when someone waits for it.
 *
 * Health: a batch whose writes fail for a reason of the file system (disk
 * full, read-only, locked by another process, file removed) records that
 * reason; db_health() reports it and each failing write returns its code.
 * While a reason other than a removed file is on record, the idle writer
 * tries a one-row write every HEALTH_PROBE_MS, so the record clears by
 * itself once the cause is gone (space freed, lock released), whether or
 * not anyone writes. On PostgreSQL the idle writer also asks the server
 * for a row every HEALTH_PROBE_MS while all is well, so a server gone
 * away is on record (DB_EUNAVAIL) before anyone writes. A removed or replaced file is final: the data went
 * with the file, so writes stay refused until a restart.
 *
 * Invariants:
 *   1. An op is marked done only after the COMMIT that holds it returned,
 *      so a caller never acknowledges an uncommitted change.
 *   2. Ops queued while a batch commits wait for the next batch: their
 *      fsync is shared with everything queued beside them (group commit).
 *      A turned op is marked done after the commit of its last turn; its
 *      earlier turns may be on disk before (it says which states between
 *      its turns are valid: db/snapshot.c).
 *   3. Read connections are query_only and each call is one read
 *      transaction, so a reader sees one consistent snapshot.
 *   4. Checkpoints never run inside a commit: the writer's connection has
 *      wal_autocheckpoint off, and a checkpointer thread with its own
 *      connection copies the WAL into the database (PASSIVE, so it never
 *      blocks the writer) every CKPT_COMMITS commits or every second.
 *   5. The WAL stays bounded: SQLite reuses it from the start only when a
 *      checkpoint has caught up and no reader is behind. Under a steady
 *      stream of commits the checkpointer never catches up with the last
 *      one, so once it has copied all it saw of a WAL past
 *      CKPT_RESET_PAGES, the writer, before its next batch, copies the
 *      frames of the few commits since (wal_catch_up: a few ms, once per
 *      32 MiB written), and that batch starts the WAL over. Readers can
 *      still put the reset off; past CKPT_FORCE_PAGES the checkpointer
 *      waits for them (RESTART, which holds writers for that wait). A log
 *      reset after growing past WAL_KEEP_BYTES is cut back to it on disk,
 *      inside the next commit, so WAL_KEEP_BYTES is above what a steady
 *      load reaches: cutting 90 MiB cost that commit, and the submissions
 *      in it, 15 ms of CPU every few seconds.
 *   6. A batch's callers are woken after the writer lets go of db->mu,
 *      each on its op's own semaphore, and never take db->mu again: a
 *      caller woken under the mutex would run only to sleep on it (half of
 *      the woken did, at 10,000 submissions a second).
 */
#include "lite.h"
#include "pq.h"
#include "thread_role.h"
#include "clock.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#define DB_READERS 16
#define BUSY_MS 5000            /* a lock held by another process: wait this long */
#define HEALTH_PROBE_MS 1000
#define FULL_CLEAR_BYTES (1 << 20) /* a full disk counts as freed past this */
#define GROUP_MAX 256           /* ops in one call of a group */
#define CKPT_COMMITS 64
#define CKPT_RESET_PAGES 8192   /* past this WAL size (32 MiB of 4 KiB pages), the writer checkpoints */
#define CKPT_FORCE_PAGES 32768  /* past this (128 MiB), wait for readers (RESTART) */
#define WAL_KEEP_BYTES "67108864" /* a reset log is cut back to this size (journal_size_limit) */

struct db__op {
    db__fn fn;
    db__group_fn group;        /* its form for a run of such ops; NULL: none */
    void *arg;
    int rc;
    int64_t fence;             /* the caller's leader epoch to check first; 0: none */
    int parked;                /* yielded after a turn: goes on in the next batch */
    db__committed_fn committed; /* told once its commit returned; NULL: none */
    sem_t woken;               /* its caller waits here: posted once, after db->mu is released */
    struct db__op *next;
};

struct db {
    char *path;
    int pg;                    /* PostgreSQL (path is a URI): no files, no checkpointer */
    char where[192];           /* the store for messages (a URI without its password) */
    int lock_fd;               /* holds PATH.lock for the life of the handle */
    struct db__file_id file;   /* the file opened */
    char describe[128];        /* journal mode, synchronous, schema, as read back */
    struct db__conn wconn;
    pthread_t writer;
    int writer_started;
    pthread_mutex_t mu;
    pthread_cond_t work;       /* an op was queued, or stopping */
    struct db__op *head, *tail;
    int stopping;
    int64_t commits, writes;
    db_submitted_fn on_submitted; /* under mu: db_on_submitted() */
    void *on_submitted_arg;
    uint64_t data_gen;         /* moves after each batch and db_data_changed() (atomic) */
    int health;                /* DB_OK, or the code of the last failed batch */
    char health_msg[512];

    struct db__conn cconn;     /* the checkpointer's */
    pthread_t ckpt;
    int ckpt_started;
    pthread_cond_t ckpt_cv;    /* CKPT_COMMITS commits since the last one, or stopping */
    int since_ckpt;
    int reset_due;             /* the WAL passed CKPT_RESET_PAGES: the writer's own checkpoint next */

    pthread_mutex_t rmu;
    pthread_cond_t rfree;
    struct db__conn readers[DB_READERS];
    int r_open;                /* readers opened so far */
    int r_busy[DB_READERS];
};

/* ---- helpers ---- */

/* A write that failed with the catch-all DB_EIO, refined by what the
 * connection says went wrong last (a full disk shows up as a failed step
 * as often as a failed COMMIT). */
static int conn_rc(struct db__conn *c, int rc)
{
    int why;

    if (rc != DB_EIO || c->pq)
        return rc; /* pq.c's codes are final */
    why = db__rc(sqlite3_extended_errcode(c->h));
    return why == DB_OK || why == DB_ECONFLICT || why == DB_EINVAL ? rc : why;
}

int db_exclusive(struct db *db)
{
    return !db->pg; /* SQLite: db_open() holds PATH.lock for the life of the handle */
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
    case DB_EBUSY: return "the database is locked by another process";
    case DB_EFULL: return "no space left for the database";
    case DB_EREADONLY: return "the database is read-only";
    case DB_EGONE: return "the database file was removed or replaced";
    case DB_ELIMIT: return "too many pending workloads";
    case DB_EFENCED: return "this replica no longer leads: its decision was not written";
    case DB_EUNAVAIL: return "the database cannot be opened or reached";
    default: return "unknown error";
    }
}

/* Random bytes for ids, RANDOM_POOL at a time from getrandom() per thread
 * (one system call per 32 ids, not one per id). A forked child starts with
 * an empty pool, so it never hands out the bytes its parent will. */
#define RANDOM_POOL 512
static __thread unsigned char random_pool[RANDOM_POOL];
static __thread size_t random_left;
static pthread_once_t random_once = PTHREAD_ONCE_INIT;

static void random_forked(void)
{
    random_left = 0; /* the child's one thread: the one that forked */
}

static void random_at_fork(void)
{
    pthread_atfork(NULL, NULL, random_forked);
}

static void random_bytes(unsigned char *out, size_t n)
{
    pthread_once(&random_once, random_at_fork);
    if (random_left < n) {
        size_t got = 0;

        while (got < RANDOM_POOL) {
            ssize_t r = getrandom(random_pool + got, RANDOM_POOL - got, 0);
            if (r > 0)
                got += (size_t)r;
            else if (errno != EINTR)
                abort(); /* no randomness: ids could repeat; refuse to go on */
        }
        random_left = RANDOM_POOL;
    }
    memcpy(out, random_pool + RANDOM_POOL - random_left, n);
    memset(random_pool + RANDOM_POOL - random_left, 0, n); /* used once */
    random_left -= n;
}

/* RFC 9562 version 7: 48 bits of milliseconds, then 74 random bits. Ids
 * made later sort later, so the index on them grows at its end instead of
 * dirtying a random page per insert (a durable commit writes every page
 * it dirtied). */
void db__uuid(char out[DB_ID_LEN])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char b[16];
    int64_t ms = db__now_ms();
    int i, o = 0;

    random_bytes(b, sizeof(b));
    for (i = 0; i < 6; i++)
        b[i] = (unsigned char)((uint64_t)ms >> (8 * (5 - i)));
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x70);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    for (i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[o++] = '-';
        out[o++] = hex[b[i] >> 4];
        out[o++] = hex[b[i] & 15];
    }
    out[o] = 0;
}

/* Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    int64_t era, yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* "Z", "", or an offset "+hh[:mm]" / "-hhmm" (' ' for '+') in minutes east. */
static int zone_minutes(const char *s, int *east)
{
    int sign, h = 0, m = 0;

    *east = 0;
    if (*s == 0 || ((*s == 'Z' || *s == 'z') && s[1] == 0))
        return 0;
    if (*s != '+' && *s != '-' && *s != ' ')
        return -1;
    sign = *s++ == '-' ? -1 : 1;
    if (s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9')
        return -1;
    h = (s[0] - '0') * 10 + (s[1] - '0');
    s += 2;
    if (*s == ':')
        s++;
    if (*s) {
        if (s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' || s[2])
            return -1;
        m = (s[0] - '0') * 10 + (s[1] - '0');
    }
    if (h > 23 || m > 59)
        return -1;
    *east = sign * (h * 60 + m);
    return 0;
}

int db_time_parse(const char *s, int64_t *ms)
{
    int y, mo, d, h = 0, mi = 0, sec = 0, n = 0, frac = 0, east = 0;

    if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3 || mo < 1 || mo > 12 || d < 1 ||
        d > 31)
        return DB_EINVAL;
    s += n;
    if (*s == 'T' || *s == 't' || *s == ' ') {
        if (sscanf(s + 1, "%2d:%2d:%2d%n", &h, &mi, &sec, &n) != 3 || h > 23 || mi > 59 ||
            sec > 60)
            return DB_EINVAL;
        s += n + 1;
        if (*s == '.') {
            int digits = 0;
            for (s++; *s >= '0' && *s <= '9'; s++, digits++)
                if (digits < 3)
                    frac = frac * 10 + (*s - '0');
            if (digits == 0)
                return DB_EINVAL;
            for (; digits < 3; digits++)
                frac *= 10;
        }
        if (zone_minutes(s, &east) != 0)
            return DB_EINVAL;
    } else if (*s) {
        return DB_EINVAL;
    }
    *ms = ((days_from_civil(y, mo, d) * 24 + h) * 60 + mi - east) * 60000LL + sec * 1000LL +
          frac;
    return DB_OK;
}

void db_uuid_new(char out[DB_ID_LEN])
{
    db__uuid(out);
}

int64_t db__now_ms(void)
{
    return clock_now_ms();
}

int64_t db__mono_us(void)
{
    return clock_mono_us();
}

int64_t db__thread_cpu_us(void)
{
    struct timespec t;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
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

void db__text_add(struct db__text *t, const char *s, size_t n)
{
    size_t cap;
    char *p;

    if (t->failed)
        return;
    if (t->n + n + 1 > t->cap) {
        for (cap = t->cap ? t->cap : 256; cap < t->n + n + 1; cap *= 2)
            ;
        if (!(p = realloc(t->s, cap))) {
            t->failed = 1;
            return;
        }
        t->s = p;
        t->cap = cap;
    }
    memcpy(t->s + t->n, s, n);
    t->n += n;
    t->s[t->n] = 0;
}

/* ",N" (no comma first in a row: lead 0) */
void db__json_int(struct db__text *b, int lead, int64_t v)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof(tmp), "%s%lld", lead ? "," : "", (long long)v);

    db__text_add(b, tmp, (size_t)n);
}

/* ,"text" as a JSON string (NULL: ""); bytes from 0x80 pass through */
void db__json_str(struct db__text *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    char e[8];

    db__text_add(b, ",\"", 2);
    for (; *p; p++) {
        size_t run = 0;
        while (p[run] >= 0x20 && p[run] != '"' && p[run] != '\\')
            run++;
        db__text_add(b, (const char *)p, run);
        p += run;
        if (!*p)
            break;
        snprintf(e, sizeof(e), "\\u%04x", *p);
        db__text_add(b, e, 6);
    }
    db__text_add(b, "\"", 1);
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

/* SQLite's own allocation statistics take a mutex of the whole library
 * around every allocation it makes, which all reader threads shared;
 * nothing here reads them. Set before SQLite's first use in the process
 * (a later call is refused by SQLite, harmlessly). */
static void lite_config(void)
{
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

/* Opens a connection to an existing file (file.c creates new ones, so
 * SQLite never creates a database here): readers query_only; the writer (and the
 * checkpointer) in WAL with synchronous=FULL, and temp_store=MEMORY: the
 * savepoint around each op keeps the pages it changes in a sub-journal,
 * which with temporary files on disk was a file created, written and
 * unlinked in most batches (a quarter of the batch's pwrite calls and
 * 10% of the writer's CPU per submission); in memory it holds only what
 * one batch changed. */
static int conn_open(struct db__conn *c, const char *path, int readonly)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    int flags = readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
    int rc, src;

    memset(c, 0, sizeof(*c));
    if (db__pq_uri(path))
        return db__pq_open(path, readonly, &c->pq);
    pthread_once(&once, lite_config);
    src = sqlite3_open_v2(path, &c->h, flags | SQLITE_OPEN_NOMUTEX, NULL);
    if (src != SQLITE_OK) {
        fprintf(stderr, "allotd: db: cannot open %s: %s\n", path,
                c->h ? sqlite3_errmsg(c->h) : "out of memory");
        return db__rc(src) == DB_OK ? DB_EIO : db__rc(src);
    }
    sqlite3_extended_result_codes(c->h, 1);
    sqlite3_busy_timeout(c->h, BUSY_MS);
    rc = db__exec(c, readonly ? "PRAGMA foreign_keys=ON; PRAGMA query_only=ON;"
                              : "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                                " PRAGMA journal_size_limit=" WAL_KEEP_BYTES ";"
                                " PRAGMA foreign_keys=ON; PRAGMA temp_store=MEMORY;");
    return rc;
}

static void conn_close(struct db__conn *c)
{
    db__page_memo_free(c->page_memo);
    c->page_memo = NULL;
    db__stmts_free(c);
    if (c->h)
        sqlite3_close(c->h);
    c->h = NULL;
    db__pq_close(c->pq);
    c->pq = NULL;
}

/* ---- the integrity check at start (Step 3) ----
 * What one PRAGMA quick_check checks, split over two connections that run
 * at once before the writer's connection writes anything (one whole check
 * took 0.37-0.74 s of a restart with 50,000 workloads, most of it
 * evaluating the CHECK constraints of workloads). Both are opened to write
 * and made query_only: SQLite leaves out the CHECK constraints of a schema
 * it reads through a read-only connection, whose quick_check then passes
 * rows that break them.
 *   - a thread of its own: quick_check(workloads), that table (the most
 *     rows and the most CHECK constraints) and its indexes, constraints
 *     evaluated;
 *   - the opening thread: quick_check with the CHECK constraints not
 *     evaluated (ignore_check_constraints, on that connection only): every
 *     page of every b-tree, the freelist, every NOT NULL; then
 *     quick_check(T), constraints evaluated, of every other table whose
 *     schema has one.
 * The first problem either finds refuses the start, as a whole check's
 * did. */

#define CHECK_ALONE "workloads"   /* the table the thread checks */
static const char CHECK_TABLE[] = "SELECT * FROM pragma_quick_check(?1)";

struct check_part {
    const char *path;
    int rc;
    char first[256];   /* the first problem found, or why the check could not run */
};

/* Runs one quick_check statement (`arg`, a table's name, bound to ?1 when
 * not NULL): DB_OK when it answers "ok", else DB_EIO with its first row
 * (or SQLite's message) in part->first. */
static int quick_check_run(struct db__conn *c, const char *sql, const char *arg,
                           struct check_part *part)
{
    sqlite3_stmt *st = NULL;
    const char *text;
    char *nl = part->first;
    int rc = DB_EIO, src = sqlite3_prepare_v2(c->h, sql, -1, &st, NULL);

    if (src == SQLITE_OK && arg)
        src = sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
    if (src == SQLITE_OK)
        src = sqlite3_step(st);
    text = src == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    if (text && strcmp(text, "ok") == 0)
        rc = DB_OK;
    else
        snprintf(part->first, sizeof(part->first), "%s",
                 text ? text : sqlite3_errmsg(c->h));
    while ((nl = strchr(nl, '\n')) != NULL)
        *nl = ' ';   /* one line in the log: a row may list several problems */
    sqlite3_finalize(st);
    return rc;
}

/* A connection of the check: see above. */
static int check_conn_open(struct db__conn *c, const char *path)
{
    int rc = conn_open(c, path, 0);

    return rc == DB_OK ? db__exec(c, "PRAGMA query_only=ON") : rc;
}

/* Whether the schema holds table `name` (0 when it cannot be read: the
 * check that follows says why). */
static int table_exists(struct db__conn *c, const char *name)
{
    sqlite3_stmt *st = NULL;
    int yes = sqlite3_prepare_v2(c->h, "SELECT 1 FROM sqlite_schema WHERE type = 'table'"
                                       " AND name = ?1", -1, &st, NULL) == SQLITE_OK &&
              sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC) == SQLITE_OK &&
              sqlite3_step(st) == SQLITE_ROW;

    sqlite3_finalize(st);
    return yes;
}

/* The thread's part: CHECK_ALONE with its constraints (a database made a
 * moment ago has no table yet: the migrations come after the check). */
static void check_alone(struct check_part *part)
{
    struct db__conn c;

    part->rc = check_conn_open(&c, part->path);
    if (part->rc != DB_OK)
        snprintf(part->first, sizeof(part->first), "cannot open it to check it");
    else if (table_exists(&c, CHECK_ALONE))
        part->rc = quick_check_run(&c, CHECK_TABLE, CHECK_ALONE, part);
    conn_close(&c);
}

static void *check_alone_main(void *arg)
{
    thread_role_name("allot-check");
    check_alone(arg);
    return NULL;
}

/* This thread's part: the structure, then the other tables' constraints. */
static int check_rest(struct db__conn *c, struct check_part *part)
{
    static const char tables[] =
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND name != '" CHECK_ALONE "'"
        " AND sql LIKE '%CHECK%' ORDER BY name";
    sqlite3_stmt *st = NULL;
    int rc = db__exec(c, "PRAGMA ignore_check_constraints=ON");

    if (rc == DB_OK)
        rc = quick_check_run(c, "PRAGMA quick_check", NULL, part);
    if (rc == DB_OK)
        rc = db__exec(c, "PRAGMA ignore_check_constraints=OFF");
    if (rc == DB_OK && sqlite3_prepare_v2(c->h, tables, -1, &st, NULL) != SQLITE_OK) {
        snprintf(part->first, sizeof(part->first), "%s", sqlite3_errmsg(c->h));
        rc = DB_EIO;
    }
    while (rc == DB_OK && sqlite3_step(st) == SQLITE_ROW)
        rc = quick_check_run(c, CHECK_TABLE, (const char *)sqlite3_column_text(st, 0), part);
    sqlite3_finalize(st);
    return rc;
}

static int check_integrity(struct db *db)
{
    struct check_part alone = {db->path, DB_EIO, ""}, rest = {db->path, DB_EIO, ""};
    struct db__conn c;
    pthread_t th;
    int started = pthread_create(&th, NULL, check_alone_main, &alone) == 0;

    rest.rc = check_conn_open(&c, db->path);
    if (rest.rc == DB_OK)
        rest.rc = check_rest(&c, &rest);
    conn_close(&c);
    if (started)
        pthread_join(th, NULL);
    else
        check_alone(&alone);   /* no thread to be had: one after the other */
    if (rest.rc != DB_OK || alone.rc != DB_OK)
        fprintf(stderr, "allotd: db: integrity check of %s failed (%s); refusing to start\n",
                db->path, rest.rc != DB_OK ? rest.first : alone.first);
    return rest.rc != DB_OK ? rest.rc : alone.rc;
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
    struct db__stmt *st = db__prep(c, sql, &rc);

    if (!st)
        return rc;
    return db__done(st, db__step_done(st));
}

/* ---- health ---- */

static int storage_failure(int rc)
{
    return rc == DB_EFULL || rc == DB_EBUSY || rc == DB_EREADONLY || rc == DB_EGONE ||
           rc == DB_EIO || rc == DB_EUNAVAIL;
}

/* The message for people that goes with a failure code; under db->mu. */
static void health_message(struct db *db, int rc, char *out, size_t len)
{
    switch (db->pg && rc != DB_EUNAVAIL ? DB_EIO : rc) {
    case DB_EUNAVAIL:
        snprintf(out, len, "the %.120s cannot be reached (%.60s): requests that need the"
                 " database are refused until it is back; allotd reconnects by itself",
                 db->where, db__pq_error(db->wconn.pq));
        break;
    case DB_EFULL:
        snprintf(out, len, "no space left on the disk holding the database %s: writes are"
                 " refused until space is freed (reads work)", db->path);
        break;
    case DB_EBUSY:
        snprintf(out, len, "the database %s is locked by another process (a sqlite3 shell or"
                 " a backup tool holding a write lock?): writes fail until it lets go",
                 db->path);
        break;
    case DB_EREADONLY:
        snprintf(out, len, "the database %s is read-only (file mode, or a read-only file"
                 " system): writes are refused", db->path);
        break;
    case DB_EGONE:
        snprintf(out, len, "the database file %s was removed or replaced while allotd was"
                 " running: writes are refused; stop allotd, then put the database back (from a"
                 " backup) or start over with allotd --init", db->path);
        break;
    default:
        if (db->pg)
            snprintf(out, len, "writes to the %s fail (%s): %s", db->where, db_strerror(rc),
                     db__pq_error(db->wconn.pq));
        else
            snprintf(out, len, "writes to the database %s fail: %s", db->path,
                     sqlite3_errmsg(db->wconn.h));
        break;
    }
}

/* Records the outcome of a batch (or a check) and says so on stderr when
 * it changes. A removed file stays on record. A full disk stays on record
 * until FULL_CLEAR_BYTES are free: a small write can succeed on a full
 * disk (it reuses room in the WAL), and the next larger one would fail
 * again. Under db->mu. */
static void health_set(struct db *db, int rc)
{
    if (!storage_failure(rc))
        rc = DB_OK;
    if (rc == db->health || db->health == DB_EGONE)
        return;
    if (rc == DB_OK && db->health == DB_EFULL) {
        int64_t left = db__free_bytes(db->path);
        if (left >= 0 && left < FULL_CLEAR_BYTES)
            return;
    }
    if (rc == DB_OK) {
        fprintf(stderr, "allotd: db: writes to %s work again\n", db->pg ? db->where : db->path);
    } else {
        health_message(db, rc, db->health_msg, sizeof(db->health_msg));
        fprintf(stderr, "allotd: db: %s\n", db->health_msg);
    }
    db->health = rc;
}

int db_health(struct db *db, char *msg, size_t len)
{
    int rc;

    pthread_mutex_lock(&db->mu);
    if (db->pg)
        ; /* no file: the writer's batches and probes keep the record */
    else if (db->health != DB_EGONE && !db__file_same(db->path, &db->file))
        health_set(db, DB_EGONE);
    else if (db->health == DB_OK && db__file_writable(db->path) != DB_OK)
        health_set(db, DB_EREADONLY); /* the writer's probe clears it once writable */
    rc = db->health;
    snprintf(msg, len, "%s", rc == DB_OK ? "" : db->health_msg);
    pthread_mutex_unlock(&db->mu);
    return rc;
}

/* ---- the writer ---- */

/* One call of op's fn in its own savepoint (the fence checked first);
 * returns fn's code (DB__MORE: a turn done, more to come). */
static int op_once(struct db *db, struct db__op *op)
{
    int failed, rc;

    if (run_fixed(&db->wconn, SQL_SAVEPOINT) != DB_OK)
        return conn_rc(&db->wconn, DB_EIO);
    rc = op->fence > 0 ? db__fence(&db->wconn, op->fence) : DB_OK;
    if (rc == DB_OK)
        rc = op->fn(&db->wconn, op->arg);
    if (rc == DB_OK || rc == DB__MORE)
        run_fixed(&db->wconn, SQL_RELEASE);
    /* a statement sent without waiting failed first: its code is the op's */
    failed = db__flush(&db->wconn);
    if (failed != DB_OK)
        rc = failed;
    if (rc != DB_OK && rc != DB__MORE) {
        rc = conn_rc(&db->wconn, rc);
        run_fixed(&db->wconn, SQL_ROLLBACK_TO);
        run_fixed(&db->wconn, SQL_RELEASE);
    }
    return rc;
}

/* The ops from op on that go together into one call of op's group: the
 * same group and the same fence, GROUP_MAX at most. */
static int group_run(struct db__op *op)
{
    struct db__op *o = op;
    int n = 0;

    if (!op->group)
        return 0;
    while (o && o->group == op->group && o->fence == op->fence && n < GROUP_MAX) {
        n++;
        o = o->next;
    }
    return n;
}

/* n ops (from op on) in one savepoint, through their group: one set of
 * statements for all of them. If the group fails as a whole (a bad row
 * among them: a constraint, a name taken), it is rolled back and each op
 * runs alone (op_once), so a bad row fails its own op only, with the code
 * it had always had. */
static void op_group(struct db *db, struct db__op *op, int n)
{
    void *args[GROUP_MAX];
    int rcs[GROUP_MAX];
    struct db__op *o;
    int i, rc, failed, last;

    for (i = 0, o = op; i < n; i++, o = o->next) {
        args[i] = o->arg;
        rcs[i] = DB_OK;
    }
    last = o == NULL; /* nothing after the group in this batch: the COMMIT is next */
    if (run_fixed(&db->wconn, SQL_SAVEPOINT) != DB_OK) {
        rc = conn_rc(&db->wconn, DB_EIO);
        for (i = 0, o = op; i < n; i++, o = o->next)
            o->rc = rc;
        return;
    }
    rc = op->fence > 0 ? db__fence(&db->wconn, op->fence) : DB_OK;
    if (rc == DB_OK)
        rc = op->group(&db->wconn, args, rcs, n);
    if (rc == DB_OK)
        run_fixed(&db->wconn, SQL_RELEASE);
    /* The group's statements were answered; only the RELEASE may still be
     * in flight. Last in the batch, it goes with the COMMIT, whose failure
     * fails every op of the batch (a round trip less a batch on PostgreSQL;
     * after it, the ops that follow need to know it went through). */
    failed = rc == DB_OK && last ? DB_OK : db__flush(&db->wconn);
    if (rc == DB_OK && failed == DB_OK) {
        for (i = 0, o = op; i < n; i++, o = o->next)
            o->rc = rcs[i];
        return;
    }
    run_fixed(&db->wconn, SQL_ROLLBACK_TO);
    run_fixed(&db->wconn, SQL_RELEASE);
    for (i = 0, o = op; i < n; i++, o = o->next)
        o->rc = op_once(db, o); /* a group's ops are done in one call */
}

/* Does any op wait for this transaction besides op? If so,
 * the ops queued meanwhile join the batch after op, and op parks. */
static int op_yields(struct db *db, struct db__op *op)
{
    struct db__op *tail = op;

    pthread_mutex_lock(&db->mu);
    while (tail->next)
        tail = tail->next;
    tail->next = db->head;
    db->head = db->tail = NULL;
    pthread_mutex_unlock(&db->mu);
    return op->next != NULL;
}

/* What a batch did to the store as a whole: DB_OK, or why none of it is
 * on disk (BEGIN or COMMIT failed, the file went away). */
static int batch_ops(struct db *db, struct db__op *batch, int *n)
{
    struct db__op *op;
    int rc = run_fixed(&db->wconn, SQL_BEGIN_IMMEDIATE);

    rc = conn_rc(&db->wconn, rc);
    for (op = batch; op; op = op->next) {
        int grouped = rc == DB_OK ? group_run(op) : 0;

        (*n)++;
        if (rc != DB_OK) {
            op->rc = rc;
            continue;
        }
        if (grouped > 0) {
            op_group(db, op, grouped);
            *n += grouped - 1;
            while (--grouped > 0)
                op = op->next;
            continue;
        }
        while ((op->rc = op_once(db, op)) == DB__MORE && !op_yields(db, op))
            ;
        if (op->rc == DB__MORE) {
            op->rc = DB_OK;
            op->parked = 1;
            (*n)--;
        }
    }
    return rc;
}

/* Invariant 5: the checkpointer has copied nearly all of a large WAL; the
 * writer copies the rest (the frames of the commits since: no new ones
 * come while it does) so that its next transaction starts the WAL over. */
static void wal_catch_up(struct db *db)
{
    int n_log = 0, n_done = 0;

    if (sqlite3_wal_checkpoint_v2(db->wconn.h, NULL, SQLITE_CHECKPOINT_PASSIVE, &n_log,
                                  &n_done) == SQLITE_BUSY) {
        pthread_mutex_lock(&db->mu);
        db->reset_due = 1; /* the checkpointer's runs: again before the next batch */
        pthread_mutex_unlock(&db->mu);
    }
}

static void run_batch(struct db *db, struct db__op *batch)
{
    struct db__op *op, *next, *woken = NULL, **woken_end = &woken;
    int rc, n = 0, worst = DB_OK, reset;

    pthread_mutex_lock(&db->mu);
    rc = db->health == DB_EGONE ? DB_EGONE : DB_OK;
    reset = db->reset_due;
    db->reset_due = 0;
    pthread_mutex_unlock(&db->mu);
    if (rc == DB_OK && !db->pg) /* made read-only while open: honoured, though the fd could write */
        rc = db__file_writable(db->path);
    if (rc == DB_OK && reset && !db->pg)
        wal_catch_up(db);
    if (rc == DB_OK)
        rc = batch_ops(db, batch, &n);
    else
        for (op = batch; op; op = op->next, n++)
            op->rc = rc;
    if (rc == DB_OK) {
        rc = conn_rc(&db->wconn, run_fixed(&db->wconn, SQL_COMMIT));
        if (rc != DB_OK)
            run_fixed(&db->wconn, SQL_ROLLBACK);
    }
    /* a commit into a file the path no longer names is lost with it */
    if (rc == DB_OK && !db->pg && !db__file_same(db->path, &db->file))
        rc = DB_EGONE;
    if (rc == DB_OK)
        db__fault_commit(); /* tests only: on disk, nobody answered yet */
    for (op = batch; op; op = op->next) {
        if (rc != DB_OK)
            op->rc = rc;
        if (worst == DB_OK && storage_failure(op->rc))
            worst = op->rc;
    }
    /* before any caller of the batch is told: a read stamped after this
     * sees the commit (db_data_generation) */
    __atomic_add_fetch(&db->data_gen, 1, __ATOMIC_ACQ_REL);
    pthread_mutex_lock(&db->mu);
    health_set(db, rc != DB_OK ? rc : worst);
    db->commits++;
    db->writes += n;
    if (++db->since_ckpt >= CKPT_COMMITS)
        pthread_cond_signal(&db->ckpt_cv);
    for (op = batch; op; op = next) {
        next = op->next; /* op lives on its caller's stack: read it first */
        if (op->parked && rc == DB_OK) { /* its next turn first, in the next batch */
            op->parked = 0;
            op->next = db->head;
            db->head = op;
            if (!db->tail)
                db->tail = op;
            continue;
        }
        if (rc == DB_OK && op->rc == DB_OK && op->committed)
            op->committed(db, op->arg); /* on disk: told before its caller runs again */
        op->next = NULL; /* woken in the order they were queued */
        *woken_end = op;
        woken_end = &op->next;
    }
    pthread_mutex_unlock(&db->mu);
    /* Invariant 6: outside db->mu, so a woken caller runs on at once */
    for (op = woken; op; op = next) {
        next = op->next; /* once posted, op may be gone */
        sem_post(&op->woken);
    }
}

/* The one-row write the idle writer tries while a failure is on record. */
static int probe_fn(struct db__conn *c, void *arg)
{
    static const char sql[] = "INSERT OR REPLACE INTO write_probe (id, at) VALUES (1, ?)";
    int rc = DB_OK;
    struct db__stmt *st = db__prep(c, sql, &rc);

    (void)arg;
    if (!st)
        return rc;
    db__bind_int64(st, 1, db__now_ms());
    return db__done(st, db__step_done(st));
}

static void probe(struct db *db)
{
    struct db__op op = {.fn = probe_fn, .rc = DB_OK};
    int rc, ping;

    pthread_mutex_lock(&db->mu);
    ping = db->pg && db->health == DB_OK;
    pthread_mutex_unlock(&db->mu);
    if (ping) { /* a server that went away says so before the next write */
        rc = db__exec(&db->wconn, "SELECT 1");
        pthread_mutex_lock(&db->mu);
        health_set(db, rc == DB_EUNAVAIL ? rc : DB_OK);
        pthread_mutex_unlock(&db->mu);
        return;
    }
    sem_init(&op.woken, 0, 0);
    run_batch(db, &op);
    sem_destroy(&op.woken);
}

/* Waits for work; with a failure on record, or on PostgreSQL, at most HEALTH_PROBE_MS.
 * Under db->mu. Returns 1 when it is time for a probe. */
static int wait_work(struct db *db)
{
    struct timespec until;

    while (!db->head && !db->stopping) {
        if ((db->health == DB_OK && !db->pg) || db->health == DB_EGONE) {
            pthread_cond_wait(&db->work, &db->mu);
            continue;
        }
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += (long)HEALTH_PROBE_MS % 1000 * 1000000L;
        until.tv_sec += HEALTH_PROBE_MS / 1000 + until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        if (pthread_cond_timedwait(&db->work, &db->mu, &until) != 0 && !db->head)
            return !db->stopping;
    }
    return 0;
}

static void *writer_main(void *arg)
{
    struct db *db = arg;
    struct db__op *batch;
    int due;

    thread_role_name("allot-writer");
    for (;;) {
        pthread_mutex_lock(&db->mu);
        due = wait_work(db);
        batch = db->head;
        db->head = db->tail = NULL;
        pthread_mutex_unlock(&db->mu);
        if (due) {
            probe(db);
            continue;
        }
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
    int stop = 0, n_log = 0, n_done = 0, src;

    thread_role_name("allot-ckpt");
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
        src = sqlite3_wal_checkpoint_v2(db->cconn.h, NULL,
                                        n_log > CKPT_FORCE_PAGES ? SQLITE_CHECKPOINT_RESTART
                                                                 : SQLITE_CHECKPOINT_PASSIVE,
                                        &n_log, &n_done);
        /* caught up with a large WAL: the writer copies what came since */
        pthread_mutex_lock(&db->mu);
        db->reset_due = src == SQLITE_OK && n_done == n_log && n_log > CKPT_RESET_PAGES;
        pthread_mutex_unlock(&db->mu);
    }
    return NULL;
}

int db__write(struct db *db, db__fn fn, void *arg)
{
    return db__write_group(db, fn, NULL, arg);
}

int db__write_group(struct db *db, db__fn fn, db__group_fn group, void *arg)
{
    return db__write_then(db, fn, group, NULL, arg);
}

int db__write_then(struct db *db, db__fn fn, db__group_fn group, db__committed_fn committed,
                   void *arg)
{
    struct db__op op;
    int rc;

    op.fn = fn;
    op.committed = committed;
    op.group = group;
    op.arg = arg;
    op.rc = DB_OK;
    op.fence = db__fence_epoch();
    op.parked = 0;
    op.next = NULL;
    sem_init(&op.woken, 0, 0);
    pthread_mutex_lock(&db->mu);
    if (db->stopping) {
        pthread_mutex_unlock(&db->mu);
        sem_destroy(&op.woken);
        return DB_ECLOSED;
    }
    if (db->tail)
        db->tail->next = &op;
    else
        db->head = &op;
    db->tail = &op;
    pthread_cond_signal(&db->work);
    pthread_mutex_unlock(&db->mu);
    while (sem_wait(&op.woken) != 0)
        ; /* EINTR: a signal's handler ran; the post is still to come */
    rc = op.rc;
    sem_destroy(&op.woken);
    db__fence_note(rc);
    return rc;
}

void db_on_submitted(struct db *db, db_submitted_fn fn, void *arg)
{
    pthread_mutex_lock(&db->mu); /* the writer calls it under mu: none runs past this */
    db->on_submitted = fn;
    db->on_submitted_arg = arg;
    pthread_mutex_unlock(&db->mu);
}

void db__submitted(struct db *db, int64_t workload_seq)
{
    if (db->on_submitted)
        db->on_submitted(db->on_submitted_arg, workload_seq);
}

void db_writer_stats(struct db *db, int64_t *commits, int64_t *writes)
{
    pthread_mutex_lock(&db->mu);
    *commits = db->commits;
    *writes = db->writes;
    pthread_mutex_unlock(&db->mu);
}

uint64_t db_data_generation(struct db *db)
{
    return __atomic_load_n(&db->data_gen, __ATOMIC_ACQUIRE);
}

void db_data_changed(struct db *db)
{
    __atomic_add_fetch(&db->data_gen, 1, __ATOMIC_ACQ_REL);
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
                /* the file opened at start and cannot now (made unreadable,
                 * its folder's mode changed): the storage is unavailable,
                 * a 503 the client may retry, not a failure of the data */
                if (rc == DB_EIO)
                    rc = DB_EUNAVAIL;
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

/* Says why the database could not be opened, for the failures of the
 * file itself (the lock and the create step speak for themselves). */
static void open_failed(const char *path, int rc)
{
    switch (rc) {
    case DB_EREADONLY:
        fprintf(stderr, "allotd: the database %s is read-only (file mode, immutable flag, or a"
                " read-only file system): allotd must be able to write it\n", path);
        break;
    case DB_EBUSY:
        fprintf(stderr, "allotd: the database %s is locked by another process (a sqlite3 shell"
                " or a backup tool holding a write lock?); gave up after %d s\n", path,
                BUSY_MS / 1000);
        break;
    case DB_EFULL:
        fprintf(stderr, "allotd: no space left on the disk holding the database %s\n", path);
        break;
    default:
        fprintf(stderr, "allotd: cannot open the database %s: %s\n", path, db_strerror(rc));
        break;
    }
}

/* Step 2: the file, by mode. */
static int open_file(const char *path, int mode)
{
    if (mode == DB_OPEN_EXISTING && !db__exists(path)) {
        fprintf(stderr, "allotd: there is no database at %s: create one with allotd --init"
                " (or name the existing one with --db)\n", path);
        return DB_ENOTFOUND;
    }
    if (mode == DB_OPEN_FRESH && db__remove(path) != DB_OK)
        return DB_EIO;
    if (mode != DB_OPEN_EXISTING)
        return db__create(path);
    /* before SQLite opens it: a read-only open would leave its -wal and
     * -shm with the database's read-only mode */
    return db__files_writable(path);
}

/* Step 3's checks of what was opened: writable, an allot database. */
static int opened_usable(struct db *db, int mode)
{
    int has = 0, rc;

    if (sqlite3_db_readonly(db->wconn.h, "main") == 1)
        return DB_EREADONLY;
    rc = db__has_schema(&db->wconn, &has);
    if (rc == DB_OK && !has && mode == DB_OPEN_EXISTING) {
        fprintf(stderr, "allotd: %s holds no allot database (an empty file?): create one"
                " with allotd --init\n", db->path);
        rc = DB_ENOTFOUND;
    }
    return rc;
}

/* What the writer's connection runs with, read back from SQLite. */
static void describe(struct db *db)
{
    static const char *const sync_names[] = {"OFF", "NORMAL", "FULL", "EXTRA"};
    sqlite3_stmt *st = NULL;
    char journal[16] = "?";
    int sync = -1;

    if (sqlite3_prepare_v2(db->wconn.h, "PRAGMA journal_mode", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        snprintf(journal, sizeof(journal), "%s",
                 sqlite3_column_text(st, 0) ? (const char *)sqlite3_column_text(st, 0) : "?");
    sqlite3_finalize(st);
    st = NULL;
    if (sqlite3_prepare_v2(db->wconn.h, "PRAGMA synchronous", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        sync = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    snprintf(db->describe, sizeof(db->describe), "SQLite %s, journal_mode=%s, synchronous=%s",
             sqlite3_libversion(), journal, sync >= 0 && sync < 4 ? sync_names[sync] : "?");
}

/* One write before serving: a database another process holds locked, or
 * that cannot be written, is refused at start rather than at the first
 * request. */
static int start_probe(struct db *db)
{
    int rc = conn_rc(&db->wconn, run_fixed(&db->wconn, SQL_BEGIN_IMMEDIATE));

    if (rc == DB_OK)
        rc = conn_rc(&db->wconn, probe_fn(&db->wconn, NULL));
    if (rc == DB_OK)
        rc = conn_rc(&db->wconn, run_fixed(&db->wconn, SQL_COMMIT));
    if (rc != DB_OK)
        run_fixed(&db->wconn, SQL_ROLLBACK);
    return rc;
}

static void warn_mode(const struct db *db)
{
    if (db->file.mode & 077)
        fprintf(stderr, "allotd: warning: the database %s has mode %03o: other users may read"
                " it, and it holds password hashes (chmod 600 %s)\n", db->path,
                db->file.mode, db->path);
}

/* Step 3: the writer's connection, integrity, migrations, checkpointer. */
static int open_store(struct db *db, int mode)
{
    int rc = conn_open(&db->wconn, db->path, 0);

    if (rc == DB_OK)
        rc = db__file_id(db->path, &db->file);
    if (rc == DB_OK)
        rc = opened_usable(db, mode);
    if (rc == DB_OK)
        rc = check_integrity(db);
    if (rc == DB_OK)
        rc = conn_rc(&db->wconn, db__migrate(&db->wconn));
    if (rc == DB_OK)
        rc = db__exec(&db->wconn, "PRAGMA wal_autocheckpoint=0");
    if (rc == DB_OK)
        rc = start_probe(db);
    if (rc == DB_OK)
        rc = conn_open(&db->cconn, db->path, 0);
    if (rc == DB_OK) {
        describe(db);
        warn_mode(db);
    }
    return rc;
}

/* Opening on PostgreSQL: the server holds the files and serves several
 * processes at once, so there is no lock file, no file to create and no
 * checkpointer; the database and its role exist beforehand (the operator
 * makes them), and the modes act on the schema instead of a file: an
 * existing database must hold a schema, a new one must hold none, a fresh
 * one has every table dropped first. */
static int open_pg(struct db *db, int mode)
{
    int has = 0, rc;

    db__pq_where(db->path, db->where, sizeof(db->where));
    rc = conn_open(&db->wconn, db->path, 0);
    if (rc == DB_OK) /* dropping and migrating may take long: no statement_timeout */
        rc = db__pq_timeout(db->wconn.pq, 0);
    if (rc == DB_OK)
        rc = db__pq_setup(db->wconn.pq, mode == DB_OPEN_FRESH);
    if (rc == DB_OK)
        rc = db__has_schema(&db->wconn, &has);
    if (rc == DB_OK && !has && mode == DB_OPEN_EXISTING) {
        fprintf(stderr, "allotd: the %s holds no allot database: create one with allotd"
                " --init\n", db->where);
        return DB_ENOTFOUND;
    }
    if (rc == DB_OK && has && mode == DB_OPEN_CREATE) {
        fprintf(stderr, "allotd: the %s holds an allot database already\n", db->where);
        return DB_ECONFLICT;
    }
    if (rc == DB_OK)
        rc = db__migrate(&db->wconn);
    if (rc == DB_OK) /* the writer's session as every other: with it again */
        rc = db__pq_timeout(db->wconn.pq, 1);
    if (rc == DB_OK)
        rc = start_probe(db);
    if (rc == DB_OK)
        db__pq_describe(db->wconn.pq, db->describe, sizeof(db->describe));
    if (rc != DB_OK && rc != DB_ENOTFOUND && rc != DB_ECONFLICT)
        fprintf(stderr, "allotd: cannot open the %s: %s\n", db->where, db_strerror(rc));
    return rc;
}

int db_open(const char *path, int mode, struct db **out)
{
    struct db *db;
    int rc;

    *out = NULL;
    db__fault_init();
    db = calloc(1, sizeof(*db));
    if (!db)
        return DB_ENOMEM;
    db->lock_fd = -1;
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
    if (db__pq_uri(path)) {
        db->pg = 1;
        rc = open_pg(db, mode);
        if (rc != DB_OK)
            goto out_close;
        goto start_writer;
    }
    /* Step 1 */
    rc = db__lock(path, &db->lock_fd);
    if (rc != DB_OK)
        goto out_close;
    /* Step 2 */
    rc = open_file(path, mode);
    /* Step 3 */
    if (rc == DB_OK)
        rc = open_store(db, mode);
    if (rc != DB_OK) {
        if (rc != DB_ENOTFOUND && rc != DB_ECONFLICT) /* those said why already */
            open_failed(path, rc);
        goto out_close;
    }
    if (pthread_create(&db->ckpt, NULL, ckpt_main, db) != 0) {
        rc = DB_EIO;
        goto out_close;
    }
    db->ckpt_started = 1;
start_writer:
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

void db_set_statement_timeout(int ms)
{
    db__pq_set_timeout(ms);
}

int db_is_server(const char *path)
{
    return db__pq_uri(path);
}

const char *db_name(struct db *db)
{
    return db->pg ? db->where : db->path;
}

const char *db_describe(struct db *db)
{
    return db->describe;
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
    db__unlock(db->lock_fd); /* after every connection: invariant 1 of file.c */
    pthread_cond_destroy(&db->rfree);
    pthread_cond_destroy(&db->ckpt_cv);
    pthread_mutex_destroy(&db->rmu);
    pthread_cond_destroy(&db->work);
    pthread_mutex_destroy(&db->mu);
    free(db->path);
    free(db);
}
