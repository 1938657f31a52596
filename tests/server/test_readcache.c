/*
 * test_readcache.c: workloads read from memory (api/readcache.c). A read
 * repeated is answered from memory until this process writes (the write
 * shows in the very next read), until the change feed says another
 * process wrote (db_data_changed), or until the entry is older than the
 * cache's bound; a list is kept per query, the caller's projects
 * included, so another set of projects reads its own rows; a list sorted
 * by the clock's field is never kept; a NULL cache reads the database
 * every time. On a temporary SQLite file (the cache's logic is the same on
 * both engines; allotd makes one on PostgreSQL only), or with
 * ALLOT_TEST_DB_URI on PostgreSQL.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "cmocka_main.h"

#include "api.h"
#include "tmpdb.h"

struct fixture {
    struct tmpdb tmp;             /* first: tmpdb_teardown frees the fixture */
    struct db_pool pool;
    struct db_queue dept, proj;
    struct db_workload w;         /* w1, one GPU, in proj */
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));

    if (!f || tmpdb_open("rc", 1, &f->tmp) != 0 ||
        tmpdb_org(f->tmp.db, 2000, &f->pool, &f->dept, &f->proj) != DB_OK)
        return -1;
    snprintf(f->w.name, sizeof(f->w.name), "w1");
    f->w.project_seq = f->proj.seq;
    strcpy(f->w.priority_class, "train");
    f->w.n_pods = f->w.min_pods = 1;
    f->w.gpu_devices = 1;
    strcpy(f->w.created_by, "tester");
    if (db_workload_insert(f->tmp.db, &f->w) != DB_OK)
        return -1;
    *state = f;
    return 0;
}

static void counts(struct api_readcache *rc, int64_t hits, int64_t misses)
{
    int64_t h, m;

    api_readcache_stats(rc, &h, &m);
    assert_int_equal(h, hits);
    assert_int_equal(m, misses);
}

/* The desired phase of w1 as the cache answers it. */
static void read_w1(struct fixture *f, struct api_readcache *rc, const char *desired)
{
    struct db_workload w;
    struct db_pod *pods = NULL;
    int n = -1;

    assert_int_equal(api_readcache_workload(rc, f->tmp.db, f->w.id, &w, &pods, &n), DB_OK);
    assert_string_equal(w.id, f->w.id);
    assert_string_equal(w.desired_phase, desired);
    assert_int_equal(n, 0);
    free(pods);
    db_workload_clear(&w);
}

static void test_own_write_shows_in_the_next_read(void **state)
{
    struct fixture *f = *state;
    struct api_readcache *rc = api_readcache_new(f->tmp.db, 60000);

    read_w1(f, rc, "Running");
    read_w1(f, rc, "Running");
    counts(rc, 1, 1);
    assert_int_equal(db_workload_act(f->tmp.db, f->w.seq, DB_WL_SUSPEND, "t", 1), DB_OK);
    read_w1(f, rc, "Stopped");
    counts(rc, 1, 2);
    read_w1(f, rc, "Stopped");
    counts(rc, 2, 2);
    api_readcache_free(rc);
}

static void test_another_process_change_drops_what_was_read(void **state)
{
    struct fixture *f = *state;
    struct api_readcache *rc = api_readcache_new(f->tmp.db, 60000);
    struct db_workload w;

    read_w1(f, rc, "Running");
    db_data_changed(f->tmp.db);
    read_w1(f, rc, "Running");
    counts(rc, 0, 2);
    /* no such workload: an answer, never kept */
    assert_int_equal(api_readcache_workload(rc, f->tmp.db, "nope", &w, NULL, NULL),
                     DB_ENOTFOUND);
    assert_int_equal(api_readcache_workload(rc, f->tmp.db, "nope", &w, NULL, NULL),
                     DB_ENOTFOUND);
    counts(rc, 0, 4);
    api_readcache_free(rc);
}

static void test_an_entry_lives_its_bound_at_most(void **state)
{
    struct fixture *f = *state;
    /* A bound far above two reads' time on a loaded machine (CI runs three
     * tests per core against PostgreSQL), so the second read is a hit. */
    struct api_readcache *rc = api_readcache_new(f->tmp.db, 1000);
    struct timespec pause = {1, 50 * 1000 * 1000};

    read_w1(f, rc, "Running");
    read_w1(f, rc, "Running");
    counts(rc, 1, 1);
    nanosleep(&pause, NULL);
    read_w1(f, rc, "Running");
    counts(rc, 1, 2);
    api_readcache_free(rc);
}

/* How many rows the list of q answers through the cache. */
static int list_n(struct fixture *f, struct api_readcache *rc, const struct db_wl_query *q)
{
    struct api_rows rows;
    int n;

    assert_int_equal(api_readcache_list(rc, f->tmp.db, q, &rows), DB_OK);
    n = rows.n;
    if (n > 0)
        assert_string_equal(rows.w[0].name, "w1");
    api_rows_release(&rows);
    return n;
}

static void test_lists_are_kept_per_query_and_projects(void **state)
{
    struct fixture *f = *state;
    struct api_readcache *rc = api_readcache_new(f->tmp.db, 60000);
    struct db_wl_query q = {.limit = 51};
    int64_t mine = f->proj.seq, other = f->proj.seq + 1000;

    assert_int_equal(list_n(f, rc, &q), 1);
    assert_int_equal(list_n(f, rc, &q), 1);
    counts(rc, 1, 1);
    q.projects = &other;
    q.n_projects = 1;
    assert_int_equal(list_n(f, rc, &q), 0);
    assert_int_equal(list_n(f, rc, &q), 0);
    counts(rc, 2, 2);
    q.projects = &mine;
    assert_int_equal(list_n(f, rc, &q), 1);
    counts(rc, 2, 3);
    /* a write: every list read again */
    assert_int_equal(db_workload_act(f->tmp.db, f->w.seq, DB_WL_DELETE, "t", 1), DB_OK);
    assert_int_equal(list_n(f, rc, &q), 0);
    counts(rc, 2, 4);
    /* by the clock's field: never kept, never counted */
    strcpy(q.sort_by, "totalRunningTimeSeconds");
    assert_int_equal(list_n(f, rc, &q), 0);
    assert_int_equal(list_n(f, rc, &q), 0);
    counts(rc, 2, 4);
    api_readcache_free(rc);
}

static void test_no_cache_reads_the_database(void **state)
{
    struct fixture *f = *state;
    struct db_wl_query q = {.limit = 51};

    assert_null(api_readcache_new(f->tmp.db, 0));
    read_w1(f, NULL, "Running");
    assert_int_equal(db_workload_act(f->tmp.db, f->w.seq, DB_WL_SUSPEND, "t", 1), DB_OK);
    read_w1(f, NULL, "Stopped");
    assert_int_equal(list_n(f, NULL, &q), 1);
    counts(NULL, 0, 0);
}

#define CASE(t) cmocka_unit_test_setup_teardown(t, setup, tmpdb_teardown)
RUN_TESTS(
    CASE(test_own_write_shows_in_the_next_read),
    CASE(test_another_process_change_drops_what_was_read),
    CASE(test_an_entry_lives_its_bound_at_most),
    CASE(test_lists_are_kept_per_query_and_projects),
    CASE(test_no_cache_reads_the_database)
)
