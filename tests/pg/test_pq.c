/*
 * test_pq.c: db/'s statement layer on PostgreSQL (db/pq.c), on the
 * throwaway server run_pg.sh starts (its URI in PG_URI): SQLite's
 * dialect as db/ writes it runs there (parameters ? and ?N mixed, INSERT
 * OR IGNORE / OR REPLACE, two-argument max/min, json_each over arrays and
 * objects, booleans read as integers, PRAGMA user_version), constraint
 * failures come back as the same DB_E* codes as on SQLite and undo only
 * their own write, and a session the server dropped answers DB_EUNAVAIL
 * and then reconnects by itself. Statements whose rows a write does not
 * need go without waiting for their replies (the pipeline): a failure
 * among them is the code of the write that ran them, undoes that write
 * only (other writes in the same group commit stay), and shows at the
 * statement of the write that waits next; a reader whose session the
 * server dropped begins its read again on a new one; a statement past
 * the statement timeout is cancelled.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "db_int.h"

static const char *uri;

static int setup(void **state)
{
    struct db *db = NULL;

    if (db_open(uri, DB_OPEN_FRESH, &db) != DB_OK)
        return -1;
    *state = db;
    return 0;
}

static int teardown(void **state)
{
    db_close(*state);
    return 0;
}

static int exec_fn(struct db__conn *c, void *arg)
{
    return db__exec(c, arg);
}

/* One statement, its parameters as text ("" binds NULL), its first row's
 * first column as int64 into *out (NULL: none wanted). */
struct one {
    const char *sql;
    const char *p[4];
    int64_t out;
    char text[64];
    int rows;
};

static int one_fn(struct db__conn *c, void *arg)
{
    struct one *o = arg;
    struct db__stmt *st = NULL;
    int rc = db__prep_once(c, o->sql, &st), i, src;

    if (rc != DB_OK)
        return rc;
    for (i = 0; i < 4 && o->p[i]; i++) {
        char *end;
        long long v = strtoll(o->p[i], &end, 10);
        if (!o->p[i][0])
            db__bind_null(st, i + 1);
        else if (*end == 0)
            db__bind_int64(st, i + 1, v);
        else
            db__bind_text(st, i + 1, o->p[i]);
    }
    o->rows = 0;
    while ((src = db__step(st)) == DB__ROW) {
        if (o->rows++ == 0) {
            o->out = db__col_int64(st, 0);
            db__copy(o->text, sizeof(o->text), st, 0);
        }
    }
    db__finalize(st);
    return src == DB__DONE ? DB_OK : src;
}

static int64_t ask(struct db *db, const char *sql, const char *p1, const char *p2)
{
    struct one o = {sql, {p1, p2, NULL, NULL}, -99, "", 0};

    assert_int_equal(db__read(db, one_fn, &o), DB_OK);
    return o.out;
}

static int write1(struct db *db, const char *sql, const char *p1, const char *p2)
{
    struct one o = {sql, {p1, p2, NULL, NULL}, 0, "", 0};

    return db__write(db, one_fn, &o);
}

static void test_dialect(void **state)
{
    struct db *db = *state;
    struct one o = {"SELECT value FROM json_each(?) ORDER BY key", {"[\"b\",\"a\"]"}, 0, "", 0};

    assert_int_equal(db__write(db, exec_fn, "CREATE TABLE t (id INTEGER PRIMARY KEY"
                                            " AUTOINCREMENT, name TEXT NOT NULL UNIQUE,"
                                            " n INTEGER NOT NULL CHECK (n >= 0), r REAL)"),
                     DB_OK);
    /* ?N and ? mixed: ? is one more than the largest number before it */
    assert_int_equal(write1(db, "INSERT INTO t (name, n) VALUES (?2 || ?1, coalesce(?, 0))", "a", "b"),
                     DB_OK);
    assert_int_equal(write1(db, "INSERT INTO t (name, n) VALUES (?, ?)", "a", "0"), DB_OK);
    assert_int_equal(ask(db, "SELECT count(*) FROM t WHERE name = ?", "ba", NULL), 1);
    assert_int_equal(write1(db, "INSERT OR IGNORE INTO t (name, n) VALUES (?, ?)", "a", "5"),
                     DB_OK);
    assert_int_equal(ask(db, "SELECT n FROM t WHERE name = ?", "a", NULL), 0);
    assert_int_equal(ask(db, "SELECT max(3, ?) + min(?, 1)", "7", "-2"), 5);
    assert_int_equal(ask(db, "SELECT max(n) FROM t", NULL, NULL), 0);
    assert_int_equal(ask(db, "SELECT count(*) > 0 FROM t", NULL, NULL), 1);
    assert_int_equal(ask(db, "SELECT count(*) = 0 FROM t", NULL, NULL), 0);
    assert_int_equal(ask(db, "SELECT instr('abc', 'c')", NULL, NULL), 3);
    assert_int_equal(ask(db, "SELECT count(*) FROM json_each(?) WHERE CAST(value AS INTEGER)"
                             " > 1", "[1,2,3]", NULL), 2);
    assert_int_equal(ask(db, "SELECT count(*) FROM json_each(?) WHERE key = 'k' AND"
                             " value = ?", "{\"k\":\"v\"}", "v"), 1);
    assert_int_equal(db__read(db, one_fn, &o), DB_OK);
    assert_string_equal(o.text, "b"); /* array keys are the positions, in order */
    assert_int_equal(ask(db, "SELECT ?1 IS NULL OR ?1 = ''", "", NULL), 1);
    /* INSERT OR REPLACE, on a table pq.c knows the key of */
    assert_int_equal(write1(db, "INSERT OR REPLACE INTO write_probe (id, at) VALUES (1, ?)",
                            "42", NULL), DB_OK);
    assert_int_equal(write1(db, "INSERT OR REPLACE INTO write_probe (id, at) VALUES (1, ?)",
                            "43", NULL), DB_OK);
    assert_int_equal(ask(db, "SELECT at FROM write_probe", NULL, NULL), 43);
    assert_int_equal(ask(db, "PRAGMA user_version", NULL, NULL), db_schema_version());
}

static void test_errors(void **state)
{
    struct db *db = *state;

    assert_int_equal(db__write(db, exec_fn, "CREATE TABLE t (id INTEGER PRIMARY KEY"
                                            " AUTOINCREMENT, name TEXT NOT NULL UNIQUE,"
                                            " n INTEGER NOT NULL CHECK (n >= 0))"),
                     DB_OK);
    assert_int_equal(write1(db, "INSERT INTO t (name, n) VALUES (?, ?)", "a", "1"), DB_OK);
    assert_int_equal(write1(db, "INSERT INTO t (name, n) VALUES (?, ?)", "a", "2"),
                     DB_ECONFLICT);
    assert_int_equal(write1(db, "INSERT INTO t (name, n) VALUES (?, ?)", "b", "-1"),
                     DB_EINVAL);
    assert_int_equal(write1(db, "INSERT INTO t (name, n) VALUES (?, ?)", "", "1"), DB_EINVAL);
    /* a failed write undid only itself; the next one in the writer works */
    assert_int_equal(write1(db, "INSERT INTO t (name, n) VALUES (?, ?)", "c", "3"), DB_OK);
    assert_int_equal(ask(db, "SELECT count(*) FROM t", NULL, NULL), 2);
    assert_int_equal(ask(db, "SELECT sum(n) FROM t", NULL, NULL), 4);
}

static int terminate_fn(struct db__conn *c, void *arg)
{
    (void)arg;
    /* every other session of this database, the writer's among them */
    return db__exec(c, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                       " WHERE datname = current_database() AND pid != pg_backend_pid()");
}

static void test_reconnect(void **state)
{
    struct db *db = *state;
    const struct timespec tenth = {0, 100 * 1000 * 1000};
    char msg[512];
    int rc, i;

    assert_int_equal(write1(db, "INSERT OR REPLACE INTO write_probe (id, at) VALUES (1, ?)",
                            "1", NULL), DB_OK);
    assert_int_equal(db__read(db, terminate_fn, NULL), DB_OK);
    /* the writer's session is gone: its next batch reconnects at BEGIN
     * (at once, or after the backoff of a failed first try) */
    for (i = 0; i < 100; i++) {
        rc = write1(db, "INSERT OR REPLACE INTO write_probe (id, at) VALUES (1, ?)", "2", NULL);
        if (rc == DB_OK)
            break;
        assert_int_equal(rc, DB_EUNAVAIL);
        nanosleep(&tenth, NULL);
    }
    assert_int_equal(rc, DB_OK);
    assert_int_equal(ask(db, "SELECT at FROM write_probe", NULL, NULL), 2);
    for (i = 0; i < 50 && db_health(db, msg, sizeof(msg)) != DB_OK; i++)
        nanosleep(&tenth, NULL);
    assert_int_equal(db_health(db, msg, sizeof(msg)), DB_OK);
}

/* One write of a batch: rows (a name each, in one op, db__step_done),
 * then a count read back in the same op; what db__write returned. */
struct many {
    struct db *db;
    const char *names[4];
    int64_t n;                    /* each row's n (a CHECK refuses < 0) */
    int64_t seen;                 /* count(*) read in the op after the rows */
    int64_t changed;              /* db__changes() after the last row */
    int rc;
};

static int many_fn(struct db__conn *c, void *arg)
{
    static const char ins[] = "INSERT INTO t (name, n) VALUES (?, ?)";
    static const char count[] = "SELECT count(*) FROM t";
    struct many *m = arg;
    int i, rc = DB_OK;
    struct db__stmt *st;

    for (i = 0; i < 4 && m->names[i] && rc == DB_OK; i++) {
        st = db__prep(c, ins, &rc);
        if (!st)
            return rc;
        db__bind_text(st, 1, m->names[i]);
        db__bind_int64(st, 2, m->n);
        rc = db__done(st, db__step_done(st));
    }
    if (rc != DB_OK)
        return rc;
    m->changed = db__changes(c);
    st = db__prep(c, count, &rc);
    if (!st)
        return rc;
    rc = db__step(st);
    if (rc == DB__ROW)
        m->seen = db__col_int64(st, 0);
    return db__done(st, rc == DB__ROW ? DB_OK : rc);
}

static void *many_thread(void *arg)
{
    struct many *m = arg;

    m->rc = db__write(m->db, many_fn, m);
    return NULL;
}

static void test_pipeline(void **state)
{
    struct db *db = *state;
    /* written at once from eight threads, so most share a group commit */
    struct many w[] = {
        {db, {"a1", "a2", "a3"}, 1, 0, 0, DB_OK},
        {db, {"b1", "a2", "b3"}, 1, 0, 0, DB_ECONFLICT}, /* a2 again (or first: then a's) */
        {db, {"c1", "c2"}, 1, 0, 0, DB_OK},
        {db, {"d1", "d2", "d3"}, -1, 0, 0, DB_EINVAL},
        {db, {"e1"}, 1, 0, 0, DB_OK},
        {db, {"f1", "f2", "f3", "f1"}, 1, 0, 0, DB_ECONFLICT},
        {db, {"g1", "g2", "g3", "g4"}, 1, 0, 0, DB_OK},
        {db, {"h1"}, 1, 0, 0, DB_OK},
    };
    enum { N = sizeof(w) / sizeof(w[0]) };
    pthread_t th[N];
    int i, a_ok, b_ok;

    assert_int_equal(db__write(db, exec_fn, "CREATE TABLE t (id INTEGER PRIMARY KEY"
                                            " AUTOINCREMENT, name TEXT NOT NULL UNIQUE,"
                                            " n INTEGER NOT NULL CHECK (n >= 0))"),
                     DB_OK);
    for (i = 0; i < N; i++)
        assert_int_equal(pthread_create(&th[i], NULL, many_thread, &w[i]), 0);
    for (i = 0; i < N; i++)
        pthread_join(th[i], NULL);
    /* a and b both write a2: exactly one of them stands, whole */
    a_ok = w[0].rc == DB_OK;
    b_ok = w[1].rc == DB_OK;
    assert_int_equal(a_ok + b_ok, 1);
    assert_int_equal(a_ok ? w[1].rc : w[0].rc, DB_ECONFLICT);
    assert_int_equal(w[2].rc, DB_OK);
    assert_int_equal(w[3].rc, DB_EINVAL);
    assert_int_equal(w[4].rc, DB_OK);
    assert_int_equal(w[5].rc, DB_ECONFLICT);
    assert_int_equal(w[6].rc, DB_OK);
    assert_int_equal(w[7].rc, DB_OK);
    assert_int_equal(w[6].changed, 1);
    assert_true(w[6].seen >= 4); /* its own rows, read back in its op */
    /* the failed writes left nothing; the others everything */
    assert_int_equal(ask(db, "SELECT count(*) FROM t", NULL, NULL), 3 + 2 + 1 + 4 + 1);
    assert_int_equal(ask(db, "SELECT count(*) FROM t WHERE name IN ('b1', 'b3', 'a1', 'a3')",
                         NULL, NULL), 2);
    assert_int_equal(ask(db, "SELECT count(*) FROM t WHERE name LIKE 'd%' OR name LIKE 'f%'",
                         NULL, NULL), 0);
}

/* More rows in one write than the pipeline holds: sent in several runs. */
static int long_fn(struct db__conn *c, void *arg)
{
    static const char ins[] = "INSERT INTO t (name, n) VALUES (?, ?)";
    int i, rc = DB_OK;

    for (i = 0; i < *(int *)arg && rc == DB_OK; i++) {
        char name[16];
        struct db__stmt *st = db__prep(c, ins, &rc);
        if (!st)
            return rc;
        snprintf(name, sizeof(name), "r%d", i);
        db__bind_text(st, 1, name);
        /* the last one breaks the CHECK: the whole write goes */
        db__bind_int64(st, 2, i == *(int *)arg - 1 && *(int *)arg > 1000 ? -1 : i);
        rc = db__done(st, db__step_done(st));
    }
    return rc;
}

static void test_pipeline_long(void **state)
{
    struct db *db = *state;
    int n = 1000, bad = 1001;

    assert_int_equal(db__write(db, exec_fn, "CREATE TABLE t (id INTEGER PRIMARY KEY"
                                            " AUTOINCREMENT, name TEXT NOT NULL UNIQUE,"
                                            " n INTEGER NOT NULL CHECK (n >= 0))"),
                     DB_OK);
    assert_int_equal(db__write(db, long_fn, &n), DB_OK);
    assert_int_equal(ask(db, "SELECT count(*) FROM t", NULL, NULL), 1000);
    assert_int_equal(ask(db, "SELECT sum(n) FROM t", NULL, NULL), 999 * 1000 / 2);
    assert_int_equal(db__write(db, exec_fn, "DELETE FROM t"), DB_OK);
    assert_int_equal(db__write(db, long_fn, &bad), DB_EINVAL);
    assert_int_equal(ask(db, "SELECT count(*) FROM t", NULL, NULL), 0);
}

/* A reader whose session the server ended begins its read on a new one,
 * at once: its BEGIN went out with its first statement. */
static int terminated_fn(struct db__conn *c, void *arg)
{
    (void)arg;
    /* the readers' sessions, waiting (up to 10 s) until they are gone */
    return db__exec(c, "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity"
                       " WHERE datname = current_database() AND pid != pg_backend_pid()");
}

static void test_reader_reconnect(void **state)
{
    struct db *db = *state;

    assert_int_equal(ask(db, "SELECT 7", NULL, NULL), 7);
    assert_int_equal(db__write(db, terminated_fn, NULL), DB_OK);
    assert_int_equal(ask(db, "SELECT 8", NULL, NULL), 8);
}

/* A statement past --db-statement-timeout-ms is cancelled: the read and
 * the write fail, the writer goes on (sessions opened after the call). */
static int sleep_fn(struct db__conn *c, void *arg)
{
    struct one o = {"SELECT pg_sleep(60)", {NULL}, 0, "", 0};

    (void)arg;
    return one_fn(c, &o);
}

static void test_statement_timeout(void **state)
{
    struct db *db = NULL;

    (void)state;
    db_set_statement_timeout(2000); /* an INSERT never takes that long, even under load */
    assert_int_equal(db_open(uri, DB_OPEN_FRESH, &db), DB_OK);
    assert_int_equal(db__read(db, sleep_fn, NULL), DB_EIO);
    assert_int_equal(db__write(db, sleep_fn, NULL), DB_EIO);
    assert_int_equal(write1(db, "INSERT OR REPLACE INTO write_probe (id, at) VALUES (1, ?)",
                            "5", NULL), DB_OK);
    assert_int_equal(ask(db, "SELECT at FROM write_probe", NULL, NULL), 5);
    db_close(db);
    db_set_statement_timeout(DB_STATEMENT_TIMEOUT_MS);
}

/* Each test on a fresh fixture: setup before, teardown after. */
#define PQ_TEST(t) cmocka_unit_test_setup_teardown(t, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        PQ_TEST(test_dialect),
        PQ_TEST(test_errors),
        PQ_TEST(test_reconnect),
        PQ_TEST(test_pipeline),
        PQ_TEST(test_pipeline_long),
        PQ_TEST(test_reader_reconnect),
        cmocka_unit_test(test_statement_timeout),
    };

    uri = getenv("PG_URI");
    if (!uri) {
        fprintf(stderr, "test_pq: PG_URI names no database (run it with tests/pg/run_pg.sh)\n");
        return 2;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
