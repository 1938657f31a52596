/*
 * pq.c: the statement layer over PostgreSQL (libpq): sessions that
 * reconnect by themselves, the rewrite of db/'s SQL (SQLite's dialect)
 * into PostgreSQL's, statements prepared per session, and the mapping of
 * SQLSTATEs to the same DB_E* codes stmt.c gives for SQLite. stmt.c calls
 * it for a connection opened on a postgresql:// (or postgres://) URI, so
 * the table files of db/ keep one SQL text for both engines.
 *
 * The dialect is one table (rewrites[]) applied once per statement, at
 * its first prepare, outside string literals:
 *   - parameters: `?` and `?N` become `$N` (`$N::text` before IS [NOT]
 *     NULL, where nothing else would tell the server its type);
 *   - INSERT OR IGNORE -> INSERT ... ON CONFLICT DO NOTHING; INSERT OR
 *     REPLACE -> INSERT ... ON CONFLICT (key) DO UPDATE SET every other
 *     column (the key from replace_keys[]: a table missing there is
 *     refused at prepare, naming it);
 *   - two-argument max()/min() -> GREATEST()/LEAST(); instr -> strpos;
 *     json_object -> json_build_object; json_each -> allot_json_each (a
 *     function db__pq_setup() makes, rows (key, value) of an object or
 *     an array, as text); julianday() is a function made there too;
 *   - types in DDL: INTEGER PRIMARY KEY AUTOINCREMENT -> BIGINT GENERATED
 *     BY DEFAULT AS IDENTITY PRIMARY KEY, INTEGER -> BIGINT, REAL ->
 *     DOUBLE PRECISION, BLOB -> BYTEA, WITHOUT ROWID dropped;
 *   - whole statements: BEGIN IMMEDIATE (the writer's, and migrations')
 *     -> BEGIN plus the transaction-scoped advisory lock WRITE_LOCK, so
 *     write transactions run one at a time across every allotd on the
 *     database, as SQLite's write lock makes them; BEGIN (a reader's) ->
 *     BEGIN ISOLATION LEVEL REPEATABLE READ (one snapshot per read);
 *     PRAGMA user_version reads and sets allot_schema_version's row;
 *     PRAGMA foreign_key_check returns no row (PostgreSQL never stops
 *     checking foreign keys); any other PRAGMA is nothing.
 * Where a rewrite cannot say it (triggers, table rebuilds), the table file
 * carries a PostgreSQL variant of its statement (schema.c, checks.c).
 *
 * Round trips (the pipeline, libpq's pipeline mode): a statement whose
 * caller needs no rows (db__pq_step_done) inside a transaction, and a
 * reader's BEGIN, are sent without waiting for their replies; the next
 * statement that needs a reply (rows, a change count, lastval(), the
 * COMMIT, db__pq_flush at the end of each op of the writer) goes after
 * them and reads every reply in the same round trip. The submissions
 * queued together (savepoint, one statement for their workloads, events
 * and change rows, release: db/workloads.c) are two round trips, and a
 * read is one plus one per further statement. A reader's COMMIT (of a read-only snapshot)
 * is sent without waiting for its reply, which the session's next use
 * reads first.
 *
 * Values travel as text both ways; a statement is prepared with the types
 * of its first bindings (bigint, double precision, or unknown for text
 * and NULL: the server infers it), so integer and text columns compare
 * as in SQLite. Booleans come back as "t"/"f" and read as 1/0.
 *
 * Sessions (reconnect): a session whose connection broke answers
 * DB_EUNAVAIL. It reconnects only where a transaction starts (or outside
 * one), never in the middle of one, so a statement never runs outside the
 * transaction its caller began; attempts are spaced by a backoff doubling
 * from RETRY_MIN_MS to RETRY_MAX_MS. A BEGIN that finds its idle session
 * dropped (the server restarted) reconnects at once and runs again; so
 * does a reader's BEGIN sent with its first statement. Statements
 * re-prepare after a reconnect (each remembers the session generation it
 * was prepared on).
 *
 * Invariants:
 *   1. A statement's SQL is rewritten once, at its db__pq_prep; the
 *      rewritten text never changes (cached statements are per session).
 *   2. A session that lost its server never runs a statement of a
 *      transaction begun before the loss (in_tx, above).
 *   3. Every failure is a DB_E* code: constraint violations DB_ECONFLICT
 *      (unique, foreign key) or DB_EINVAL (check, not null), a lost or
 *      refused server DB_EUNAVAIL, a read-only server (a standby)
 *      DB_EREADONLY, a full disk DB_EFULL, lock conflicts DB_EBUSY,
 *      anything else DB_EIO.
 *   4. A statement sent without waiting that fails is never lost: its code
 *      is the first failure that the next waiting statement and
 *      db__pq_flush report (op_rc), and the op's later statements fail
 *      with it unsent, so the op that ran it fails as a whole and its
 *      savepoint is rolled back; no other op sees it. A COMMIT the server
 *      answers with ROLLBACK (its transaction had failed) is a failure.
 */
#include "pq.h"

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RETRY_MIN_MS 100
#define RETRY_MAX_MS 5000
#define WRITE_LOCK "7021879310432" /* pg_advisory_xact_lock key of the writers */
#define INT8OID 20
#define FLOAT8OID 701
#define TEXTOID 25
#define PIPE_MAX 256            /* statements in flight at most (their replies are small) */

/* A statement sent without waiting for its reply (the session's pipeline). */
struct pend {
    char what[120];             /* its SQL's start: for messages and for in_tx */
    struct db__pq_stmt *prep;   /* the PREPARE of this (cached) statement; NULL: a run */
    struct db__pq_stmt *begin;  /* a reader's BEGIN (cached): sent again after a reconnect */
};

struct db__pq {
    PGconn *h;
    char *uri;
    int readonly;
    int gen;                /* bumped at every (re)connect */
    int in_tx;              /* a BEGIN ran and no COMMIT/ROLLBACK since */
    int draining;           /* a reader's COMMIT was sent; its reply not read yet */
    struct pend pend[PIPE_MAX];
    int n_pend;             /* statements sent whose replies are not read yet */
    int op_rc;              /* the first failure of a statement sent without waiting,
                             * since db__pq_flush (or the transaction's start) */
    struct db__pq_stmt *redo; /* the reader's BEGIN of a pipeline that broke with it */
    int next_name;
    int64_t changes;
    int64_t retry_at_ms, backoff_ms;
    char err[256];
};

struct db__pq_param {
    char *val;              /* NULL: SQL NULL */
    int owned;
    Oid type;
    char num[32];
};

struct db__pq_stmt {
    struct db__pq *c;
    char *sql;              /* rewritten */
    char name[16];          /* "" for a statement made for one use */
    int simple;             /* no parameters: PQexec (several statements allowed) */
    int gen;                /* session generation it was prepared on; 0 none */
    int n;
    struct db__pq_param *p;
    char *used;             /* used[i]: $i+1 appears in the SQL */
    PGresult *res;
    int row, rows;          /* row: the current one; -1 before the first step */
};

/* ---- the dialect ---- */

/* One text for another: a table and its key, a word, a statement. */
struct swap {
    const char *from, *to;
};

/* The conflict key of each table written with INSERT OR REPLACE. */
static const struct swap replace_keys[] = {
    {"write_probe", "id"},
    {"samples", "queue_seq, pool_seq, ts"},
    {"series", "kind, entity, metric, label, ts"},
    {"gpu_samples", "workload_seq, ts, idx, gpu"},
};

/* Words replaced where they stand alone (or, ending in '(', as a call). */
static const struct swap rewrites[] = {
    {"INTEGER PRIMARY KEY AUTOINCREMENT", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"},
    {"INTEGER", "BIGINT"},
    {"REAL", "DOUBLE PRECISION"},
    {"BLOB", "BYTEA"},
    {"WITHOUT ROWID", ""},
    {"instr(", "strpos("},
    {"json_object(", "json_build_object("},
    {"json_each(", "allot_json_each("},
};

/* Whole statements. */
static const struct swap statements[] = {
    {"BEGIN IMMEDIATE", "BEGIN; SELECT pg_advisory_xact_lock(" WRITE_LOCK ")"},
    {"BEGIN", "BEGIN ISOLATION LEVEL REPEATABLE READ"},
    {"PRAGMA user_version", "SELECT version FROM allot_schema_version"},
    {"PRAGMA foreign_key_check", "SELECT NULL, NULL, NULL WHERE false"},
};

static void puts_(struct db__text *o, const char *s)
{
    db__text_add(o, s, strlen(s));
}

static int word_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_';
}

/* Does `word` stand at sql[i] as a word of its own? */
static int word_at(const char *sql, size_t i, const char *word)
{
    size_t len = strlen(word);

    if (i > 0 && word_char(sql[i - 1]))
        return 0;
    if (strncmp(sql + i, word, len) != 0)
        return 0;
    return word[len - 1] == '(' || !word_char(sql[i + len]);
}

/* The end of a string literal starting at s[0] == '\''. */
static const char *literal_end(const char *s)
{
    for (s++; *s; s++)
        if (*s == '\'') {
            if (s[1] != '\'')
                return s + 1;
            s++;
        }
    return s;
}

/* Whether the call whose '(' is at s has a comma at its top level. */
static int two_args(const char *s)
{
    int depth = 0;

    for (; *s; s++) {
        if (*s == '\'') {
            s = literal_end(s) - 1;
            continue;
        }
        if (*s == '(')
            depth++;
        else if (*s == ')' && --depth == 0)
            return 0;
        else if (*s == ',' && depth == 1)
            return 1;
    }
    return 0;
}

/* INSERT OR REPLACE INTO t (cols) ...: the ON CONFLICT clause for it. */
static int replace_clause(const char *s, struct db__text *suffix)
{
    char table[64], col[64];
    const char *open, *close, *key = NULL, *c;
    size_t i, len;
    int first = 1;

    while (*s == ' ')
        s++;
    len = strcspn(s, " (");
    if (len == 0 || len >= sizeof(table))
        return -1;
    memcpy(table, s, len);
    table[len] = 0;
    for (i = 0; i < sizeof(replace_keys) / sizeof(replace_keys[0]); i++)
        if (strcmp(replace_keys[i].from, table) == 0)
            key = replace_keys[i].to;
    open = strchr(s, '(');
    close = open ? strchr(open, ')') : NULL;
    if (!key || !close) {
        fprintf(stderr, "allotd: db: INSERT OR REPLACE INTO %s: no conflict key known for"
                " PostgreSQL (db/pq.c, replace_keys)\n", table);
        return -1;
    }
    puts_(suffix, " ON CONFLICT (");
    puts_(suffix, key);
    puts_(suffix, ") DO UPDATE SET ");
    for (c = open + 1; c < close;) {
        while (*c == ' ' || *c == ',')
            c++;
        len = strcspn(c, " ,)");
        if (len == 0 || len >= sizeof(col))
            break;
        memcpy(col, c, len);
        col[len] = 0;
        c += len;
        /* a key column stays: compare as a whole word in the key list */
        {
            const char *k = strstr(key, col);
            int in_key = 0;
            while (k) {
                if ((k == key || k[-1] == ' ') && (k[len] == ',' || k[len] == 0))
                    in_key = 1;
                k = strstr(k + 1, col);
            }
            if (in_key)
                continue;
        }
        if (!first)
            puts_(suffix, ", ");
        first = 0;
        puts_(suffix, col);
        puts_(suffix, " = excluded.");
        puts_(suffix, col);
    }
    return first ? -1 : 0;
}

/* PRAGMA user_version=N, or any other PRAGMA (nothing on PostgreSQL). */
static int pragma(const char *sql, struct db__text *o)
{
    long v;
    char tail;

    if (strncmp(sql, "PRAGMA", 6) != 0)
        return 0;
    if (sscanf(sql, "PRAGMA user_version=%ld%c", &v, &tail) == 1) {
        char set[96];
        snprintf(set, sizeof(set), "UPDATE allot_schema_version SET version = %ld", v);
        puts_(o, set);
    }
    return 1; /* empty: nothing to run */
}

/* SQLite's SQL as PostgreSQL's; *n_params the highest $N. NULL if it
 * cannot be said (the reason on stderr) or out of memory. */
static char *rewrite(const char *sql, int *n_params, char *used, int n_used)
{
    struct db__text o = {0}, suffix = {0};
    const char *s = sql;
    size_t i;

    *n_params = 0;
    for (i = 0; i < sizeof(statements) / sizeof(statements[0]); i++)
        if (strcmp(sql, statements[i].from) == 0) {
            puts_(&o, statements[i].to);
            return o.failed ? NULL : o.s ? o.s : strdup("");
        }
    if (pragma(sql, &o))
        return o.failed ? NULL : o.s ? o.s : strdup("");
    while (*s) {
        const char *word = NULL, *to = NULL;
        if (*s == '\'') {
            const char *e = literal_end(s);
            db__text_add(&o, s, (size_t)(e - s));
            s = e;
            continue;
        }
        if (*s == '?') {
            char num[16];
            int k;
            s++;
            if (*s >= '0' && *s <= '9')
                k = (int)strtol(s, (char **)&s, 10);
            else /* SQLite: one more than the largest number so far */
                k = *n_params + 1;
            if (k > *n_params)
                *n_params = k;
            if (used && k >= 1 && k <= n_used)
                used[k - 1] = 1;
            /* `?N IS NULL` alone gives the server no type for it */
            snprintf(num, sizeof(num), strncmp(s, " IS NULL", 8) == 0 ||
                                           strncmp(s, " IS NOT NULL", 12) == 0
                                       ? "$%d::text" : "$%d", k);
            puts_(&o, num);
            continue;
        }
        if (*s == ';') {
            db__text_add(&o, suffix.s ? suffix.s : "", suffix.n);
            suffix.n = 0;
            db__text_add(&o, s++, 1);
            continue;
        }
        if (word_at(sql, (size_t)(s - sql), "INSERT OR IGNORE INTO")) {
            puts_(&suffix, " ON CONFLICT DO NOTHING");
            word = "INSERT OR IGNORE INTO";
            to = "INSERT INTO";
        } else if (word_at(sql, (size_t)(s - sql), "INSERT OR REPLACE INTO")) {
            if (replace_clause(s + strlen("INSERT OR REPLACE INTO"), &suffix) != 0) {
                free(o.s);
                free(suffix.s);
                return NULL;
            }
            word = "INSERT OR REPLACE INTO";
            to = "INSERT INTO";
        } else if ((word_at(sql, (size_t)(s - sql), "max(") ||
                    word_at(sql, (size_t)(s - sql), "min(")) && two_args(s + 3)) {
            word = s[1] == 'a' ? "max(" : "min(";
            to = s[1] == 'a' ? "GREATEST(" : "LEAST(";
        } else {
            for (i = 0; i < sizeof(rewrites) / sizeof(rewrites[0]); i++)
                if (word_at(sql, (size_t)(s - sql), rewrites[i].from)) {
                    word = rewrites[i].from;
                    to = rewrites[i].to;
                    break;
                }
        }
        if (word) {
            puts_(&o, to);
            s += strlen(word);
            continue;
        }
        db__text_add(&o, s++, 1);
    }
    db__text_add(&o, suffix.s ? suffix.s : "", suffix.n);
    free(suffix.s);
    if (o.failed || suffix.failed) {
        free(o.s);
        return NULL;
    }
    return o.s ? o.s : strdup("");
}

/* ---- errors ---- */

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int sqlstate_rc(const char *state)
{
    static const struct {
        const char *prefix;
        int rc;
    } map[] = {
        {"23514", DB_EINVAL},  {"23502", DB_EINVAL},    {"23", DB_ECONFLICT},
        {"22", DB_EINVAL},     {"08", DB_EUNAVAIL},     {"57P", DB_EUNAVAIL},
        {"53100", DB_EFULL},   {"53200", DB_ENOMEM},    {"53", DB_EUNAVAIL},
        {"25006", DB_EREADONLY}, {"40", DB_EBUSY},      {"55P03", DB_EBUSY},
    };
    size_t i;

    if (!state) /* libpq's own: the connection broke */
        return DB_EUNAVAIL;
    for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (strncmp(state, map[i].prefix, strlen(map[i].prefix)) == 0)
            return map[i].rc;
    return DB_EIO;
}

/* The code of a failed result; says it on stderr unless it is a
 * constraint the caller expects. */
static int result_rc(struct db__pq *c, PGresult *res, const char *sql)
{
    int rc;

    if (PQstatus(c->h) == CONNECTION_BAD) {
        snprintf(c->err, sizeof(c->err), "%s", PQerrorMessage(c->h));
        c->err[strcspn(c->err, "\n")] = 0;
        return DB_EUNAVAIL;
    }
    rc = sqlstate_rc(res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL);
    snprintf(c->err, sizeof(c->err), "%s", res ? PQresultErrorMessage(res) : PQerrorMessage(c->h));
    c->err[strcspn(c->err, "\n")] = 0;
    if (rc != DB_ECONFLICT && rc != DB_EINVAL)
        fprintf(stderr, "allotd: db: %s (in: %.300s)\n", c->err, sql);
    return rc;
}

/* ---- sessions ---- */

int db__pq_uri(const char *path)
{
    return strncmp(path, "postgresql://", 13) == 0 || strncmp(path, "postgres://", 11) == 0;
}

void db__pq_where(const char *uri, char *out, size_t len)
{
    PQconninfoOption *opts = PQconninfoParse(uri, NULL), *o;
    const char *db = "?", *host = "the default socket";

    for (o = opts; o && o->keyword; o++) {
        if (strcmp(o->keyword, "dbname") == 0 && o->val)
            db = o->val;
        else if (strcmp(o->keyword, "host") == 0 && o->val)
            host = o->val;
    }
    snprintf(out, len, "PostgreSQL database %s on %s", db, host);
    PQconninfoFree(opts);
}

static int statement_timeout_ms = DB_STATEMENT_TIMEOUT_MS;

void db__pq_set_timeout(int ms)
{
    __atomic_store_n(&statement_timeout_ms, ms, __ATOMIC_RELAXED);
}

int db__pq_timeout(struct db__pq *c, int on)
{
    char sql[64];

    snprintf(sql, sizeof(sql), "SET statement_timeout = %d",
             on ? __atomic_load_n(&statement_timeout_ms, __ATOMIC_RELAXED) : 0);
    return db__pq_exec(c, sql);
}

/* Session settings: durability as the promise needs it, a reader's
 * session read-only, a transaction left idle for 2 s (its process paused
 * or cut off) ended by the server, so that the locks it holds (the
 * writers' advisory lock, the leader lease's row) pass on within the
 * replicas' failover time (docs/ha.md), and a statement running longer
 * than statement_timeout_ms cancelled, which bounds the same wait for a
 * statement that hangs. */
static int session_setup(struct db__pq *c)
{
    char sql[256];
    PGresult *res;
    int ok;

    snprintf(sql, sizeof(sql), "%sSET synchronous_commit = on;"
             " SET idle_in_transaction_session_timeout = 2000; SET statement_timeout = %d",
             c->readonly ? "SET default_transaction_read_only = on; " : "",
             __atomic_load_n(&statement_timeout_ms, __ATOMIC_RELAXED));
    res = PQexec(c->h, sql);
    ok = PQresultStatus(res) == PGRES_COMMAND_OK;

    PQclear(res);
    return ok ? DB_OK : DB_EUNAVAIL;
}

/* The server's notices (NOTICE: relation ... already exists, skipping)
 * say nothing allotd's operator needs. */
static void no_notices(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

static int connect_now(struct db__pq *c)
{
    const char *const keys[] = {"connect_timeout", "application_name", "dbname", NULL};
    const char *vals[] = {"5", "allotd", c->uri, NULL};

    if (c->h)
        PQfinish(c->h);
    c->h = PQconnectdbParams(keys, vals, 1);
    c->in_tx = 0;
    c->n_pend = 0; /* went with the old connection */
    c->gen++;
    if (c->h)
        PQsetNoticeProcessor(c->h, no_notices, NULL);
    if (!c->h || PQstatus(c->h) != CONNECTION_OK || session_setup(c) != DB_OK) {
        snprintf(c->err, sizeof(c->err), "%s", c->h ? PQerrorMessage(c->h) : "out of memory");
        c->err[strcspn(c->err, "\n")] = 0;
        return DB_EUNAVAIL;
    }
    return DB_OK;
}

/* Whether the session can run a statement now; reconnects (with backoff)
 * when the statement may start a transaction. Invariant 2. */
static int session_ready(struct db__pq *c, int starts_tx)
{
    int64_t now;
    PGresult *res;

    if (c->draining) {
        while ((res = PQgetResult(c->h)) != NULL)
            PQclear(res);
        c->draining = 0;
    }
    if (c->h && PQstatus(c->h) == CONNECTION_OK)
        return DB_OK;
    if (c->in_tx && !starts_tx)
        return DB_EUNAVAIL;
    now = now_ms();
    if (now < c->retry_at_ms)
        return DB_EUNAVAIL;
    if (connect_now(c) == DB_OK) {
        fprintf(stderr, "allotd: db: reconnected to the PostgreSQL server\n");
        c->backoff_ms = 0;
        return DB_OK;
    }
    c->backoff_ms = c->backoff_ms ? c->backoff_ms * 2 : RETRY_MIN_MS;
    if (c->backoff_ms > RETRY_MAX_MS)
        c->backoff_ms = RETRY_MAX_MS;
    c->retry_at_ms = now + c->backoff_ms;
    return DB_EUNAVAIL;
}

int db__pq_open(const char *uri, int readonly, struct db__pq **out)
{
    struct db__pq *c = calloc(1, sizeof(*c));
    int rc;

    *out = c;
    if (!c || !(c->uri = strdup(uri)))
        return DB_ENOMEM;
    c->readonly = readonly;
    rc = connect_now(c);
    if (rc != DB_OK) {
        char where[256];
        db__pq_where(uri, where, sizeof(where));
        fprintf(stderr, "allotd: db: cannot connect to the %s: %s\n", where, c->err);
    }
    return rc;
}

void db__pq_close(struct db__pq *c)
{
    if (!c)
        return;
    if (c->h)
        PQfinish(c->h);
    free(c->uri);
    free(c);
}

const char *db__pq_error(struct db__pq *c)
{
    return c->err[0] ? c->err : "no error";
}

static void show(struct db__pq *c, const char *what, char *out, size_t len)
{
    char sql[64];
    PGresult *res;

    snprintf(sql, sizeof(sql), "SHOW %s", what);
    res = PQexec(c->h, sql);
    snprintf(out, len, "%s", PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1
                                  ? PQgetvalue(res, 0, 0) : "?");
    PQclear(res);
}

void db__pq_describe(struct db__pq *c, char *out, size_t len)
{
    char version[32], sync[16], fsync[16];

    show(c, "server_version", version, sizeof(version));
    show(c, "synchronous_commit", sync, sizeof(sync));
    show(c, "fsync", fsync, sizeof(fsync));
    snprintf(out, len, "PostgreSQL %s, synchronous_commit=%s, fsync=%s", version, sync, fsync);
}

int db__pq_setup(struct db__pq *c, int fresh)
{
    static const char setup[] =
        "BEGIN; SELECT pg_advisory_xact_lock(" WRITE_LOCK ");"
        "CREATE TABLE IF NOT EXISTS allot_schema_version (version BIGINT NOT NULL);"
        "INSERT INTO allot_schema_version SELECT 0"
        " WHERE NOT EXISTS (SELECT 1 FROM allot_schema_version);"
        /* SQLite's json_each over a JSON object or array, values as text */
        "CREATE OR REPLACE FUNCTION allot_json_each(j text)"
        " RETURNS TABLE (key text, value text) LANGUAGE sql IMMUTABLE AS $$"
        " SELECT e.key, e.value FROM json_each_text(CASE WHEN json_typeof(j::json) = 'object'"
        " THEN j::json ELSE '{}'::json END) e"
        " UNION ALL SELECT (a.o - 1)::text, a.v FROM json_array_elements_text(CASE WHEN"
        " json_typeof(j::json) = 'array' THEN j::json ELSE '[]'::json END)"
        " WITH ORDINALITY AS a (v, o) $$;"
        /* SQLite's julianday() of a time (the database's clock: 'now' is
         * the statement's start, as in SQLite) */
        "CREATE OR REPLACE FUNCTION julianday(t text) RETURNS double precision"
        " LANGUAGE sql STABLE AS $$ SELECT extract(epoch FROM CASE WHEN t = 'now'"
        " THEN statement_timestamp() ELSE t::timestamptz END)::double precision / 86400.0"
        " + 2440587.5 $$;"
        "COMMIT";
    int rc = DB_OK;

    if (fresh)
        rc = db__pq_exec(c, "DROP SCHEMA public CASCADE; CREATE SCHEMA public");
    return rc == DB_OK ? db__pq_exec(c, setup) : rc;
}

/* ---- statements ---- */

static int starts_tx(const char *sql)
{
    return strncmp(sql, "BEGIN", 5) == 0;
}

static int ends_tx(const char *sql)
{
    return strncmp(sql, "COMMIT", 6) == 0 || strcmp(sql, "ROLLBACK") == 0;
}

/* Transaction control, which an earlier failure does not stop. */
static int controls_tx(const char *sql)
{
    return starts_tx(sql) || strncmp(sql, "COMMIT", 6) == 0 || strncmp(sql, "ROLLBACK", 8) == 0 ||
           strncmp(sql, "SAVEPOINT", 9) == 0 || strncmp(sql, "RELEASE", 7) == 0;
}

/* Keeps in_tx and the change count in step with what ran. */
static void ran(struct db__pq *c, const char *sql, PGresult *res)
{
    const char *tag = PQcmdStatus(res);

    if (starts_tx(sql)) {
        c->in_tx = 1;
        c->op_rc = DB_OK;
    } else if (ends_tx(sql)) {
        c->in_tx = 0;
        c->op_rc = DB_OK;
    }
    if (tag && (strncmp(tag, "INSERT", 6) == 0 || strncmp(tag, "UPDATE", 6) == 0 ||
                strncmp(tag, "DELETE", 6) == 0))
        c->changes = strtoll(PQcmdTuples(res), NULL, 10);
}

/* ---- the pipeline ----
 * A statement whose caller needs no rows (db__pq_step_done) inside a
 * transaction, and a reader's BEGIN, are sent without waiting for their
 * replies; the next statement that needs its reply (rows, a count, the
 * COMMIT, db__pq_flush) goes after them and reads every reply in one
 * round trip. A failure among them is the code of the statement that
 * waits, and stays on the session (op_rc) until db__pq_flush hands it
 * over: the statements the same write runs after it fail with it unsent
 * (the server refuses them until ROLLBACK TO anyway). */

static int pipe_send_failed(struct db__pq *c, const char *sql);

static void pipe_note(struct db__pq *c, const char *sql, struct db__pq_stmt *prep,
                      struct db__pq_stmt *begin)
{
    struct pend *e = &c->pend[c->n_pend++];

    snprintf(e->what, sizeof(e->what), "%s", sql);
    e->prep = prep;
    e->begin = begin;
}

/* Sends st (and its PREPARE, the first time on this session) into the
 * pipeline; noted as pending unless its reply is the caller's (kept). */
static int pipe_send(struct db__pq_stmt *st, int kept)
{
    struct db__pq *c = st->c;
    const char *vals[st->n > 0 ? st->n : 1];
    Oid types[st->n > 0 ? st->n : 1];
    int i, ok;

    if (PQpipelineStatus(c->h) == PQ_PIPELINE_OFF && !PQenterPipelineMode(c->h))
        return pipe_send_failed(c, st->sql);
    for (i = 0; i < st->n; i++) {
        vals[i] = st->p[i].val;
        types[i] = st->used[i] ? st->p[i].type : TEXTOID;
    }
    if (st->name[0] && !st->simple && st->gen != c->gen) {
        if (!PQsendPrepare(c->h, st->name, st->sql, st->n, types))
            return pipe_send_failed(c, st->sql);
        st->gen = c->gen; /* a failed PREPARE clears it (pipe_sync) */
        pipe_note(c, st->sql, st, NULL);
    }
    if (st->name[0] && !st->simple)
        ok = PQsendQueryPrepared(c->h, st->name, st->n, vals, NULL, NULL, 0);
    else
        ok = PQsendQueryParams(c->h, st->sql, st->n, st->n ? types : NULL, st->n ? vals : NULL,
                               NULL, NULL, 0);
    if (!ok)
        return pipe_send_failed(c, st->sql);
    if (!kept)
        pipe_note(c, st->sql, NULL, c->readonly && starts_tx(st->sql) && st->name[0] ? st : NULL);
    return DB_OK;
}

/* Reads the replies of one statement: its first result to *keep (when
 * keep), the others cleared. 0 when none came (the connection broke). */
static int pipe_one(struct db__pq *c, PGresult **keep, const char *what, int *rc)
{
    PGresult *res;
    int got = 0;

    while ((res = PQgetResult(c->h)) != NULL) {
        ExecStatusType s = PQresultStatus(res);
        int r = DB_OK;

        if (s == PGRES_PIPELINE_ABORTED)
            r = DB_EIO; /* after an earlier failure, which *rc holds */
        else if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK && s != PGRES_EMPTY_QUERY)
            r = keep ? DB_OK : result_rc(c, res, what); /* the caller reads its own */
        else if (!keep)
            ran(c, what, res);
        if (r != DB_OK && *rc == DB_OK)
            *rc = r;
        if (keep && !got)
            *keep = res;
        else
            PQclear(res);
        got = 1;
    }
    return got;
}

/* Ends the pipeline: a Sync, every pending reply in order, then (keep) the
 * reply of the statement sent last; the session goes back to one
 * statement at a time. Returns the first failure among the pending. */
static int pipe_sync(struct db__pq *c, PGresult **keep)
{
    PGresult *res;
    int i, n = c->n_pend, rc = DB_OK, r, synced;

    c->n_pend = 0;
    c->redo = NULL;
    synced = PQpipelineSync(c->h);
    if (!synced)
        rc = result_rc(c, NULL, "(the pipeline's end)");
    for (i = 0; synced && i < n; i++) {
        r = DB_OK;
        if (!pipe_one(c, NULL, c->pend[i].what, &r))
            r = result_rc(c, NULL, c->pend[i].what);
        if (r != DB_OK && c->pend[i].prep)
            c->pend[i].prep->gen = 0; /* not prepared after all */
        if (r != DB_OK && rc == DB_OK)
            rc = r;
        if (PQstatus(c->h) == CONNECTION_BAD)
            break;
    }
    if (rc == DB_EUNAVAIL && n == 1 && c->pend[0].begin)
        c->redo = c->pend[0].begin; /* a read that had not begun: it may begin again */
    r = DB_OK;
    if (keep && synced && PQstatus(c->h) != CONNECTION_BAD && !pipe_one(c, keep, "", &r) &&
        rc == DB_OK)
        rc = result_rc(c, NULL, "(the statement)");
    if (synced && PQstatus(c->h) != CONNECTION_BAD) {
        while ((res = PQgetResult(c->h)) != NULL) { /* the Sync's */
            int sync = PQresultStatus(res) == PGRES_PIPELINE_SYNC;
            PQclear(res);
            if (sync)
                break;
        }
        PQexitPipelineMode(c->h);
    }
    if (rc != DB_OK && c->op_rc == DB_OK)
        c->op_rc = rc;
    return rc;
}

static int pipe_send_failed(struct db__pq *c, const char *sql)
{
    int rc = result_rc(c, NULL, sql);

    if (c->n_pend > 0 || PQpipelineStatus(c->h) != PQ_PIPELINE_OFF)
        pipe_sync(c, NULL);
    if (c->op_rc == DB_OK)
        c->op_rc = rc;
    return rc;
}

/* Reads every pending reply (a statement that must see the session as
 * the pending ones left it runs next). */
static int pipe_drain(struct db__pq *c)
{
    return c->n_pend > 0 ? pipe_sync(c, NULL) : DB_OK;
}

int db__pq_flush(struct db__pq *c)
{
    int rc;

    pipe_drain(c);
    rc = c->op_rc;
    c->op_rc = DB_OK;
    return rc;
}

int db__pq_exec(struct db__pq *c, const char *sql)
{
    int n, rc;
    char *pg = rewrite(sql, &n, NULL, 0);
    PGresult *res;
    ExecStatusType status;

    if (!pg)
        return DB_EIO;
    rc = session_ready(c, starts_tx(pg));
    if (rc == DB_OK)
        rc = pipe_drain(c);
    if (rc != DB_OK || !pg[0]) {
        if (!pg[0] && strncmp(sql, "COMMIT", 6) == 0)
            c->in_tx = 0;
        free(pg);
        return rc;
    }
    if (ends_tx(sql))
        c->in_tx = 0; /* whatever the outcome, the transaction is over */
    res = PQexec(c->h, pg);
    status = PQresultStatus(res);
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY) {
        ran(c, pg, res);
        rc = DB_OK;
    } else {
        rc = result_rc(c, res, pg);
    }
    PQclear(res);
    free(pg);
    return rc;
}

int db__pq_prep(struct db__pq *c, const char *sql, int cached, struct db__pq_stmt **out)
{
    struct db__pq_stmt *st = calloc(1, sizeof(*st));
    int n = 0;

    *out = NULL;
    if (!st)
        return DB_ENOMEM;
    st->c = c;
    st->row = -1;
    st->sql = rewrite(sql, &n, NULL, 0);
    if (!st->sql) {
        free(st);
        return DB_EIO;
    }
    st->n = n;
    /* which numbers appear: one the SQL skips is declared text (the server
     * has no other way to know its type) */
    if (n > 0 && (st->used = calloc((size_t)n, 1)) != NULL) {
        free(st->sql);
        st->sql = rewrite(sql, &n, st->used, st->n);
    }
    if (n > 0 && (!st->used || !st->sql)) {
        free(st->used);
        free(st->sql);
        free(st);
        return DB_ENOMEM;
    }
    st->simple = n == 0;
    if (cached) /* kept on the session; one-use statements run unnamed */
        snprintf(st->name, sizeof(st->name), "s%d", ++c->next_name);
    if (n > 0 && !(st->p = calloc((size_t)n, sizeof(*st->p)))) {
        free(st->used);
        free(st->sql);
        free(st);
        return DB_ENOMEM;
    }
    *out = st;
    return DB_OK;
}

void db__pq_forget(struct db__pq_stmt *st)
{
    struct db__pq *c = st->c;
    char sql[40];

    if (!st->name[0] || st->simple || session_ready(c, 0) != DB_OK || st->gen != c->gen)
        return; /* not prepared on this session: nothing there */
    snprintf(sql, sizeof(sql), "DEALLOCATE %s", st->name);
    if (c->n_pend + 1 > PIPE_MAX && pipe_sync(c, NULL) != DB_OK)
        return;
    if ((PQpipelineStatus(c->h) == PQ_PIPELINE_OFF && !PQenterPipelineMode(c->h)) ||
        !PQsendQueryParams(c->h, sql, 0, NULL, NULL, NULL, NULL, 0)) {
        pipe_send_failed(c, sql);
        return;
    }
    pipe_note(c, sql, NULL, NULL);
    st->gen = 0;
}

static void param_clear(struct db__pq_param *p)
{
    if (p->owned)
        free(p->val);
    p->val = NULL;
    p->owned = 0;
    p->type = 0;
}

void db__pq_reset(struct db__pq_stmt *st)
{
    int i;

    PQclear(st->res);
    st->res = NULL;
    st->row = -1;
    st->rows = 0;
    for (i = 0; i < st->n; i++)
        param_clear(&st->p[i]);
}

void db__pq_finalize(struct db__pq_stmt *st)
{
    if (!st)
        return;
    db__pq_reset(st); /* a named one lives as long as its session: no DEALLOCATE */
    free(st->p);
    free(st->used);
    free(st->sql);
    free(st);
}

int db__pq_params(struct db__pq_stmt *st)
{
    return st->n;
}

static struct db__pq_param *param(struct db__pq_stmt *st, int i)
{
    if (i < 1 || i > st->n)
        return NULL;
    param_clear(&st->p[i - 1]);
    return &st->p[i - 1];
}

void db__pq_bind_int64(struct db__pq_stmt *st, int i, int64_t v)
{
    struct db__pq_param *p = param(st, i);

    if (!p)
        return;
    snprintf(p->num, sizeof(p->num), "%lld", (long long)v);
    p->val = p->num;
    p->type = INT8OID;
}

void db__pq_bind_double(struct db__pq_stmt *st, int i, double v)
{
    struct db__pq_param *p = param(st, i);

    if (!p)
        return;
    snprintf(p->num, sizeof(p->num), "%.17g", v);
    p->val = p->num;
    p->type = FLOAT8OID;
}

void db__pq_bind_text(struct db__pq_stmt *st, int i, const char *s, int copy)
{
    struct db__pq_param *p = param(st, i);

    if (!p)
        return;
    if (s && copy) {
        p->val = strdup(s);
        p->owned = p->val != NULL;
    } else {
        p->val = (char *)s;
    }
}

void db__pq_bind_owned(struct db__pq_stmt *st, int i, char *s)
{
    struct db__pq_param *p = param(st, i);

    if (!p) {
        free(s);
        return;
    }
    p->val = s;
    p->owned = 1;
}

/* Prepares the statement on its session if this session has not. */
static int prepare(struct db__pq_stmt *st)
{
    Oid types[st->n > 0 ? st->n : 1];
    PGresult *res;
    int i, rc = DB_OK;

    if (st->gen == st->c->gen)
        return DB_OK;
    for (i = 0; i < st->n; i++)
        types[i] = st->used[i] ? st->p[i].type : TEXTOID;
    res = PQprepare(st->c->h, st->name, st->sql, st->n, types);
    if (PQresultStatus(res) != PGRES_COMMAND_OK)
        rc = result_rc(st->c, res, st->sql);
    else
        st->gen = st->c->gen;
    PQclear(res);
    return rc;
}

/* Whether st may go without waiting for its reply: its caller needs no
 * rows, and it runs inside a transaction (not its end), or it is a
 * reader's BEGIN (sent with the read's first statement). */
static int deferrable(struct db__pq_stmt *st)
{
    struct db__pq *c = st->c;

    if (!c->h || PQstatus(c->h) != CONNECTION_OK || strchr(st->sql, ';'))
        return 0; /* several statements: the simple protocol, outside a pipeline */
    if (starts_tx(st->sql))
        return c->readonly;
    return c->in_tx && !ends_tx(st->sql);
}

static int execute(struct db__pq_stmt *st, int defer)
{
    struct db__pq *c = st->c;
    const char *vals[st->n > 0 ? st->n : 1];
    ExecStatusType status;
    int i, rc = session_ready(c, starts_tx(st->sql));

    if (rc != DB_OK)
        return rc;
    if (c->op_rc != DB_OK && !controls_tx(st->sql))
        return c->op_rc; /* an earlier statement of this write failed */
    if (defer) {
        if (c->n_pend + 2 > PIPE_MAX && (rc = pipe_sync(c, NULL)) != DB_OK)
            return rc;
        rc = pipe_send(st, 0);
        if (rc == DB_OK && starts_tx(st->sql)) {
            c->in_tx = 1;
            c->op_rc = DB_OK;
        }
        st->rows = 0;
        return rc;
    }
    if (c->n_pend > 0 && !strchr(st->sql, ';') && !(c->readonly && ends_tx(st->sql))) {
        /* the pending replies and this one's in one round trip */
        rc = pipe_send(st, 1);
        if (rc == DB_OK)
            rc = pipe_sync(c, &st->res);
        if (rc != DB_OK)
            return rc;
    } else if ((rc = pipe_drain(c)) != DB_OK) {
        return rc;
    } else if (c->readonly && strcmp(st->sql, "COMMIT") == 0 && PQsendQuery(c->h, st->sql)) {
        /* a read's end: nothing to wait for; the next use reads the reply */
        c->draining = 1;
        c->in_tx = 0;
        st->rows = 0;
        return DB_OK;
    } else if (st->simple) {
        st->res = PQexec(c->h, st->sql);
    } else if (!st->name[0]) {
        Oid types[st->n];
        for (i = 0; i < st->n; i++) {
            vals[i] = st->p[i].val;
            types[i] = st->used[i] ? st->p[i].type : TEXTOID;
        }
        st->res = PQexecParams(c->h, st->sql, st->n, types, vals, NULL, NULL, 0);
    } else {
        rc = prepare(st);
        if (rc != DB_OK)
            return rc;
        for (i = 0; i < st->n; i++)
            vals[i] = st->p[i].val;
        st->res = PQexecPrepared(c->h, st->name, st->n, vals, NULL, NULL, 0);
    }
    if (ends_tx(st->sql))
        c->in_tx = 0;
    status = PQresultStatus(st->res);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK && status != PGRES_EMPTY_QUERY)
        return result_rc(c, st->res, st->sql);
    if (strncmp(st->sql, "COMMIT", 6) == 0 && strcmp(PQcmdStatus(st->res), "ROLLBACK") == 0) {
        /* the server ended a transaction a failure had aborted */
        snprintf(c->err, sizeof(c->err), "the transaction was rolled back (a statement in it"
                 " failed)");
        c->op_rc = DB_OK;
        return DB_EIO;
    }
    ran(c, st->sql, st->res);
    st->rows = status == PGRES_TUPLES_OK ? PQntuples(st->res) : 0;
    return DB_OK;
}

static int step(struct db__pq_stmt *st, int defer)
{
    if (st->row < 0) {
        int rc = execute(st, defer);
        if (rc == DB_EUNAVAIL && st->c->redo) {
            /* the server dropped an idle reader's session: its read had
             * not begun, so it begins again on a new one */
            struct db__pq_stmt *begin = st->c->redo;
            PQclear(st->res);
            st->res = NULL;
            st->c->redo = NULL;
            st->c->retry_at_ms = 0;
            PQfinish(st->c->h); /* ending (57P01): its EOF may not have come yet */
            st->c->h = NULL;
            rc = execute(begin, 1);
            if (rc == DB_OK)
                rc = execute(st, defer);
        } else if (rc == DB_EUNAVAIL && starts_tx(st->sql) && !st->c->in_tx) {
            /* the server dropped an idle session (restarted, timed out):
             * a transaction that has not begun may reconnect at once */
            PQclear(st->res);
            st->res = NULL;
            st->c->retry_at_ms = 0;
            rc = execute(st, defer);
        }
        if (rc != DB_OK) {
            PQclear(st->res);
            st->res = NULL;
            return rc;
        }
    }
    st->row++;
    return st->row < st->rows ? DB__ROW : DB__DONE;
}

int db__pq_step(struct db__pq_stmt *st)
{
    return step(st, 0);
}

int db__pq_step_done(struct db__pq_stmt *st)
{
    int rc = step(st, deferrable(st));

    return rc == DB__ROW || rc == DB__DONE ? DB_OK : rc;
}

int64_t db__pq_changes(struct db__pq *c)
{
    pipe_drain(c);
    return c->changes;
}

int64_t db__pq_last_id(struct db__pq *c)
{
    static const char sql[] = "SELECT lastval()";
    PGresult *res = NULL;
    int64_t id = 0;

    if (session_ready(c, 0) != DB_OK || c->op_rc != DB_OK)
        return 0;
    if (c->n_pend == 0) {
        res = PQexec(c->h, sql);
    } else if (!PQsendQueryParams(c->h, sql, 0, NULL, NULL, NULL, NULL, 0)) {
        pipe_send_failed(c, sql);
    } else if (pipe_sync(c, &res) != DB_OK) {
        PQclear(res);
        res = NULL;
    }
    if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1)
        id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
    PQclear(res);
    return id;
}

const char *db__pq_col_text(struct db__pq_stmt *st, int col)
{
    if (!st->res || st->row < 0 || st->row >= st->rows || col >= PQnfields(st->res) ||
        PQgetisnull(st->res, st->row, col))
        return NULL;
    return PQgetvalue(st->res, st->row, col);
}

int64_t db__pq_col_int64(struct db__pq_stmt *st, int col)
{
    const char *s = db__pq_col_text(st, col);

    if (!s)
        return 0;
    if (s[0] == 't' && s[1] == 0)
        return 1;
    return strtoll(s, NULL, 10); /* numeric results ("12.0") read their integer part */
}

double db__pq_col_double(struct db__pq_stmt *st, int col)
{
    const char *s = db__pq_col_text(st, col);

    if (!s)
        return 0;
    if (s[0] == 't' && s[1] == 0)
        return 1;
    return strtod(s, NULL);
}
