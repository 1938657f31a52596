/*
 * test_changes.c: the change log between replicas (db_ha.h) and its
 * reader (ctl_feed_poll) on a real SQLite file. A submission, a
 * suspension, a pool and a user each leave a row of their kind, written
 * by this process (own); rows of another replica are written beside
 * them through a second connection, committed out of seq order, and the
 * reader hands each of them over exactly once, its own never; a purge
 * removes rows by age. The leader's fair shares stored for the other
 * replicas read back as written, and a second store replaces the first.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmocka_main.h"
#include <sqlite3.h>

#include "control.h"
#include "db_ha.h"
#include "tmpdb.h"

struct fixture {
    struct tmpdb tmp;             /* first: tmpdb_teardown frees the fixture */
    sqlite3 *other;               /* another replica's connection */
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));

    /* SQLite only: the other replica is a second connection to the file */
    if (!f || tmpdb_open("changes", 0, &f->tmp) != 0)
        return -1;
    if (sqlite3_open(f->tmp.path, &f->other) != SQLITE_OK)
        return -1;
    sqlite3_busy_timeout(f->other, 5000);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;

    sqlite3_close(f->other);
    return tmpdb_teardown(state);
}

/* A row of another replica (origin 7), at seq (0: the next). */
static void foreign(struct fixture *f, int64_t seq, int kind, int64_t wl)
{
    char sql[256];

    if (seq > 0)
        snprintf(sql, sizeof(sql), "INSERT INTO changes (seq, kind, workload_seq, origin, at)"
                 " VALUES (%lld, %d, %lld, 7, 1)", (long long)seq, kind, (long long)wl);
    else
        snprintf(sql, sizeof(sql), "INSERT INTO changes (kind, workload_seq, origin, at)"
                 " VALUES (%d, %lld, 7, 1)", kind, (long long)wl);
    assert_int_equal(sqlite3_exec(f->other, sql, NULL, NULL, NULL), SQLITE_OK);
}

struct got {
    int64_t seq[32];
    int kind[32];
    int n;
};

static void collect(void *arg, const struct db_change *ch)
{
    struct got *g = arg;

    assert_false(ch->own);
    assert_true(g->n < 32);
    g->seq[g->n] = ch->seq;
    g->kind[g->n++] = ch->kind;
}

static void test_writes_leave_rows(void **state)
{
    struct fixture *f = *state;
    static const int want[] = {DB_CHANGE_ORG, DB_CHANGE_ORG, DB_CHANGE_ORG, DB_CHANGE_WORKLOAD,
                               DB_CHANGE_WORKLOAD, DB_CHANGE_PRINCIPALS};
    struct db_pool p;
    struct db_queue d, q;
    struct db_workload w;
    struct db_user u;
    struct db_change *rows = NULL;
    int n = 0, i;

    memset(&p, 0, sizeof(p));
    strcpy(p.name, "pool");
    strcpy(p.label_key, "k");
    strcpy(p.label_value, "v");
    assert_int_equal(db_pool_insert(f->tmp.db, &p), DB_OK);
    memset(&d, 0, sizeof(d));
    d.kind = DB_DEPARTMENT;
    strcpy(d.name, "dept");
    assert_int_equal(db_queue_insert(f->tmp.db, &d), DB_OK);
    memset(&q, 0, sizeof(q));
    q.kind = DB_PROJECT;
    strcpy(q.name, "proj");
    q.parent_seq = d.seq;
    assert_int_equal(db_queue_insert(f->tmp.db, &q), DB_OK);
    memset(&w, 0, sizeof(w));
    strcpy(w.name, "w");
    w.project_seq = q.seq;
    w.n_pods = w.min_pods = 1;
    w.gpu_devices = 1;
    assert_int_equal(db_workload_insert(f->tmp.db, &w), DB_OK);
    assert_int_equal(db_workload_act(f->tmp.db, w.seq, DB_WL_SUSPEND, "t", 1), DB_OK);
    memset(&u, 0, sizeof(u));
    strcpy(u.login, "someone");
    strcpy(u.name, "someone");
    strcpy(u.secret_hash, "x");
    assert_int_equal(db_user_insert(f->tmp.db, &u), DB_OK);
    assert_int_equal(db_user_touch_login(f->tmp.db, u.id, 5), DB_OK); /* no row: not a change */
    assert_int_equal(db_changes_since(f->tmp.db, 0, 100, &rows, &n), DB_OK);
    assert_int_equal(n, (int)(sizeof(want) / sizeof(want[0])));
    for (i = 0; i < n; i++) {
        assert_int_equal(rows[i].kind, want[i]);
        assert_true(rows[i].own);
        assert_int_equal(rows[i].workload_seq, want[i] == DB_CHANGE_WORKLOAD ? w.seq : 0);
    }
    free(rows);
    assert_int_equal(db_changes_purge(f->tmp.db, 0), DB_OK);
    assert_int_equal(db_changes_since(f->tmp.db, 0, 100, &rows, &n), DB_OK);
    assert_int_equal(n, 6); /* written now: not before 0 */
    free(rows);
    assert_int_equal(db_changes_purge(f->tmp.db, INT64_MAX), DB_OK);
    assert_int_equal(db_changes_since(f->tmp.db, 0, 100, &rows, &n), DB_OK);
    assert_int_equal(n, 0);
    free(rows);
}

static void test_feed_out_of_order(void **state)
{
    struct fixture *f = *state;
    struct ctl_feed *feed = ctl_feed_new();
    struct got g;
    struct db_pool p;
    int64_t last;

    memset(&g, 0, sizeof(g));
    foreign(f, 0, DB_CHANGE_WORKLOAD, 1); /* before the feed starts: in the state loaded */
    assert_int_equal(ctl_feed_poll(feed, f->tmp.db, 1000, collect, &g), 0);
    assert_int_equal(g.n, 0);
    assert_int_equal(db_changes_last(f->tmp.db, &last), DB_OK);
    memset(&p, 0, sizeof(p));
    strcpy(p.name, "mine");
    strcpy(p.label_key, "k");
    strcpy(p.label_value, "v");
    assert_int_equal(db_pool_insert(f->tmp.db, &p), DB_OK); /* own: last + 1, never handed over */
    foreign(f, last + 3, DB_CHANGE_ORG, 0);            /* last + 2 still committing */
    assert_int_equal(ctl_feed_poll(feed, f->tmp.db, 2000, collect, &g), 0);
    assert_int_equal(g.n, 1);
    assert_int_equal(g.seq[0], last + 3);
    foreign(f, last + 2, DB_CHANGE_WORKLOAD, 9);       /* commits late */
    foreign(f, last + 4, DB_CHANGE_PRINCIPALS, 0);
    assert_int_equal(ctl_feed_poll(feed, f->tmp.db, 3000, collect, &g), 0);
    assert_int_equal(g.n, 3);
    assert_int_equal(g.seq[1], last + 4);
    assert_int_equal(g.seq[2], last + 2);
    assert_int_equal(g.kind[2], DB_CHANGE_WORKLOAD);
    assert_int_equal(ctl_feed_poll(feed, f->tmp.db, 4000, collect, &g), 0);
    assert_int_equal(g.n, 3); /* each once */
    ctl_feed_free(feed);
}

static void test_shares_round_trip(void **state)
{
    struct fixture *f = *state;
    struct db_share s[2], *got = NULL;
    int n = 0, i, k;

    memset(s, 0, sizeof(s));
    for (i = 0; i < 2; i++) {
        s[i].queue_seq = 10 + i;
        s[i].pool_seq = 1;
        s[i].kind = i;
        snprintf(s[i].queue, sizeof(s[i].queue), "q%d", i);
        strcpy(s[i].pool, "default");
        for (k = 0; k < 3; k++) {
            s[i].deserved[k] = 1000 * (i + 1) + k;
            s[i].fair[k] = 2000 * (i + 1) + k;
            s[i].allocated[k] = 3000 * (i + 1) + k;
            s[i].requested[k] = -1 - k;
        }
    }
    assert_int_equal(db_shares_put(f->tmp.db, s, 2), DB_OK);
    assert_int_equal(db_shares_get(f->tmp.db, &got, &n), DB_OK);
    assert_int_equal(n, 2);
    assert_memory_equal(got, s, sizeof(s));
    free(got);
    assert_int_equal(db_shares_put(f->tmp.db, &s[1], 1), DB_OK);
    assert_int_equal(db_shares_get(f->tmp.db, &got, &n), DB_OK);
    assert_int_equal(n, 1);
    assert_memory_equal(got, &s[1], sizeof(s[1]));
    free(got);
}

RUN_TESTS(
    cmocka_unit_test_setup_teardown(test_writes_leave_rows, setup, teardown),
    cmocka_unit_test_setup_teardown(test_feed_out_of_order, setup, teardown),
    cmocka_unit_test_setup_teardown(test_shares_round_trip, setup, teardown)
)
