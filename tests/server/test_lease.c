/*
 * test_lease.c: the leader lease and the fence (db_ha.h) on a real
 * SQLite file, or with ALLOT_TEST_DB_URI (pg/test_lease, run_pg.sh) a
 * fresh schema in a PostgreSQL database per test: acquire, renew, refuse a second holder, expire and take
 * over with the next epoch, force, release, and writes fenced by an epoch
 * that ended (taken over, or expired with nobody taking it) refused and
 * rolled back. Two replicas are two holder names on one handle; expiry is
 * real time with a short lease and a wait several times longer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmocka_main.h"

#include "db.h"
#include "db_ha.h"
#include "tmpdb.h"

#define LONG_MS 60000
#define SHORT_MS 100
#define PAST_SHORT_MS 400 /* four leases: expired whatever the load */

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    while (nanosleep(&ts, &ts) != 0)
        ;
}

struct fixture {
    struct tmpdb tmp;             /* first: tmpdb_teardown frees the fixture */
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));

    if (!f || tmpdb_open("lease", 1, &f->tmp) != 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    db_fence_set(0);
    return tmpdb_teardown(state);
}

/* One step of a replica: hold as `who` (its epoch kept in *epoch) for ttl,
 * expecting rc, then the row's holder and epoch. */
static void hold(struct db *db, const char *who, int64_t *epoch, int64_t ttl, int force,
                 int want_rc, const char *want_holder, int64_t want_epoch)
{
    struct db_lease row;

    assert_int_equal(db_lease_hold(db, who, epoch, ttl, force, &row), want_rc);
    assert_string_equal(row.holder, want_holder);
    assert_int_equal(row.epoch, want_epoch);
    if (want_rc == DB_OK) {
        assert_int_equal(*epoch, want_epoch);
        assert_true(row.expires_at > row.db_now);
        assert_true(row.expires_at <= row.db_now + ttl);
    }
}

/* A write fenced by epoch: its code, and whether the row it wrote is there. */
static int fenced_write(struct db *db, int64_t epoch, const char *pool)
{
    struct db_pool p, got;
    int rc;

    memset(&p, 0, sizeof(p));
    snprintf(p.name, sizeof(p.name), "%s", pool);
    strcpy(p.label_key, "k");
    snprintf(p.label_value, sizeof(p.label_value), "%s", pool);
    db_fence_set(epoch);
    rc = db_pool_insert(db, &p);
    db_fence_set(0);
    assert_int_equal(db_pool_by_name(db, pool, &got), rc == DB_OK ? DB_OK : DB_ENOTFOUND);
    return rc;
}

static void test_acquire_renew_conflict(void **state)
{
    struct fixture *f = *state;
    struct db_lease row, again;
    int64_t a = 0, b = 0;

    assert_int_equal(db_lease_get(f->tmp.db, &row), DB_OK);
    assert_string_equal(row.holder, "");
    assert_int_equal(row.epoch, 0);
    hold(f->tmp.db, "a", &a, LONG_MS, 0, DB_OK, "a", 1);
    assert_int_equal(db_lease_get(f->tmp.db, &row), DB_OK);
    sleep_ms(20);
    hold(f->tmp.db, "a", &a, LONG_MS, 0, DB_OK, "a", 1); /* renewed: same epoch, later expiry */
    assert_int_equal(db_lease_get(f->tmp.db, &again), DB_OK);
    assert_true(again.expires_at > row.expires_at);
    hold(f->tmp.db, "b", &b, LONG_MS, 0, DB_ECONFLICT, "a", 1);
    assert_int_equal(b, 0);
    assert_int_equal(fenced_write(f->tmp.db, 1, "p1"), DB_OK);
    assert_int_equal(db_fence_refused(), 0);
}

static void test_expire_take_over_fence(void **state)
{
    struct fixture *f = *state;
    int64_t a = 0, b = 0;

    hold(f->tmp.db, "a", &a, SHORT_MS, 0, DB_OK, "a", 1);
    sleep_ms(PAST_SHORT_MS);
    hold(f->tmp.db, "b", &b, LONG_MS, 0, DB_OK, "b", 2);
    hold(f->tmp.db, "a", &a, LONG_MS, 0, DB_ECONFLICT, "b", 2); /* a renews too late */
    assert_int_equal(fenced_write(f->tmp.db, 1, "old"), DB_EFENCED);
    assert_int_equal(db_fence_refused(), 1);
    assert_int_equal(db_fence_refused(), 0);
    assert_int_equal(fenced_write(f->tmp.db, 2, "new"), DB_OK);
}

static void test_expired_unclaimed_is_fenced(void **state)
{
    struct fixture *f = *state;
    int64_t a = 0;

    hold(f->tmp.db, "a", &a, SHORT_MS, 0, DB_OK, "a", 1);
    sleep_ms(PAST_SHORT_MS);
    assert_int_equal(fenced_write(f->tmp.db, 1, "late"), DB_EFENCED);
    hold(f->tmp.db, "a", &a, LONG_MS, 0, DB_OK, "a", 2); /* taken anew: a new epoch */
    assert_int_equal(fenced_write(f->tmp.db, 1, "stale"), DB_EFENCED);
    assert_int_equal(fenced_write(f->tmp.db, 2, "fresh"), DB_OK);
}

static void test_force_and_release(void **state)
{
    struct fixture *f = *state;
    int64_t a = 0, b = 0, c = 0;

    hold(f->tmp.db, "a", &a, LONG_MS, 0, DB_OK, "a", 1);
    hold(f->tmp.db, "b", &b, LONG_MS, 1, DB_OK, "b", 2); /* the only process: takes it at once */
    assert_int_equal(db_lease_release(f->tmp.db, "a", 1), DB_OK); /* not a's: nothing */
    hold(f->tmp.db, "c", &c, LONG_MS, 0, DB_ECONFLICT, "b", 2);
    assert_int_equal(db_lease_release(f->tmp.db, "b", 2), DB_OK);
    hold(f->tmp.db, "c", &c, LONG_MS, 0, DB_OK, "c", 3);
    assert_int_equal(fenced_write(f->tmp.db, 2, "b-after-release"), DB_EFENCED);
}

RUN_TESTS(
    cmocka_unit_test_setup_teardown(test_acquire_renew_conflict, setup, teardown),
    cmocka_unit_test_setup_teardown(test_expire_take_over_fence, setup, teardown),
    cmocka_unit_test_setup_teardown(test_expired_unclaimed_is_fenced, setup, teardown),
    cmocka_unit_test_setup_teardown(test_force_and_release, setup, teardown)
)
