/*
 * test_loginguard.c: what slows password guessing (api/loginguard.c):
 * the wait a login name earns by failing from a client, as a table of
 * failures and waits on a fixed clock; a success clears it; names do not
 * share waits, and neither do clients (test_wait_is_per_name_and_client:
 * guesses from one address never lock a name out for the others); the
 * server's budget of failed sign-ins (test_global_failure_budget); the
 * secret-check slots; a NULL guard limits nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <cmocka.h>

#include "cmocka_main.h"

#include "api.h"

#define T0 INT64_C(1800000000000)

/* After the n-th failure in a row (all at T0): the wait, in seconds. */
static const struct { int failures, wait_s; } waits[] = {
    {1, 0}, {4, 0}, {5, 0},       /* API_LG_FREE_FAILURES cost nothing */
    {6, 1}, {7, 2}, {8, 4}, {9, 8}, {10, 16}, {11, 32},
    {12, 60}, {20, 60}, {200, 60}, /* API_LG_MAX_WAIT_S */
};

static void test_waits(void **state)
{
    struct api_loginguard *g;
    size_t i;
    int n;

    (void)state;
    for (i = 0; i < sizeof(waits) / sizeof(waits[0]); i++) {
        g = api_loginguard_new(2);
        assert_non_null(g);
        for (n = 0; n < waits[i].failures; n++)
            api_loginguard_result(g, "admin", "10.0.0.1", 0, T0);
        if (api_loginguard_wait_s(g, "admin", "10.0.0.1", T0) != waits[i].wait_s)
            fail_msg("%d failures: wait %d s, want %d s", waits[i].failures,
                     api_loginguard_wait_s(g, "admin", "10.0.0.1", T0), waits[i].wait_s);
        api_loginguard_free(g);
    }
}

static void test_wait_ends_and_success_clears(void **state)
{
    struct api_loginguard *g = api_loginguard_new(2);
    int n;

    (void)state;
    for (n = 0; n < 8; n++)
        api_loginguard_result(g, "admin", "10.0.0.1", 0, T0);
    assert_int_equal(api_loginguard_wait_s(g, "admin", "10.0.0.1", T0 + 1), 4); /* rounded up */
    assert_int_equal(api_loginguard_wait_s(g, "admin", "10.0.0.1", T0 + 3001), 1);
    assert_int_equal(api_loginguard_wait_s(g, "admin", "10.0.0.1", T0 + 4000), 0);
    /* other names, known or not, wait for nothing */
    assert_int_equal(api_loginguard_wait_s(g, "alice", "10.0.0.1", T0), 0);
    assert_int_equal(api_loginguard_wait_s(g, "no-such-user", "10.0.0.1", T0), 0);
    /* the next failure after the wait doubles it; a success clears all */
    api_loginguard_result(g, "admin", "10.0.0.1", 0, T0 + 4000);
    assert_int_equal(api_loginguard_wait_s(g, "admin", "10.0.0.1", T0 + 4000), 8);
    api_loginguard_result(g, "admin", "10.0.0.1", 1, T0 + 12000);
    assert_int_equal(api_loginguard_wait_s(g, "admin", "10.0.0.1", T0 + 12000), 0);
    for (n = 0; n < 5; n++)
        api_loginguard_result(g, "admin", "10.0.0.1", 0, T0 + 12000);
    assert_int_equal(api_loginguard_wait_s(g, "admin", "10.0.0.1", T0 + 12000), 0);
    api_loginguard_free(g);
}

/* Many names: the table stays bounded and a busy name keeps its wait. */
static void test_many_names(void **state)
{
    struct api_loginguard *g = api_loginguard_new(1);
    char name[32];
    int i, n;

    (void)state;
    for (n = 0; n < 6; n++)
        api_loginguard_result(g, "admin", "10.0.0.1", 0, T0 + 10);
    for (i = 0; i < 100000; i++) {
        snprintf(name, sizeof(name), "guess-%d", i);
        api_loginguard_result(g, name, "10.0.0.1", 0, T0 + i % 10);
    }
    assert_int_equal(api_loginguard_wait_s(g, "admin", "10.0.0.1", T0 + 10), 1);
    api_loginguard_free(g);
}

/* One client's guesses at admin do not make admin wait for another. */
static void test_wait_is_per_name_and_client(void **state)
{
    struct api_loginguard *g = api_loginguard_new(2);
    int n;

    (void)state;
    for (n = 0; n < 8; n++)
        api_loginguard_result(g, "admin", "10.0.0.1", 0, T0);
    assert_int_equal(api_loginguard_wait_s(g, "admin", "10.0.0.1", T0), 4);
    assert_int_equal(api_loginguard_wait_s(g, "admin", "10.0.0.2", T0), 0);
    /* the right password from the other client signs in and leaves the
     * guesser's wait as it was */
    api_loginguard_result(g, "admin", "10.0.0.2", 1, T0);
    assert_int_equal(api_loginguard_wait_s(g, "admin", "10.0.0.1", T0), 4);
    api_loginguard_free(g);
}

/* Failures spread over names and addresses: once the server's budget is
 * spent, a client that has failed waits; one that has not still goes, and
 * the budget comes back at API_LG_GLOBAL_PER_S a second. */
static void test_global_failure_budget(void **state)
{
    struct api_loginguard *g = api_loginguard_new(2);
    char name[32], addr[32];
    int i;

    (void)state;
    for (i = 0; i < API_LG_GLOBAL_BURST; i++) {
        snprintf(name, sizeof(name), "guess-%d", i);
        snprintf(addr, sizeof(addr), "10.1.0.%d", i % 8);
        assert_int_equal(api_loginguard_wait_s(g, name, addr, T0), 0);
        api_loginguard_result(g, name, addr, 0, T0);
    }
    /* spent: every guessing address waits, for a name it never tried too */
    assert_int_equal(api_loginguard_wait_s(g, "fresh-name", "10.1.0.3", T0), 1);
    assert_int_equal(api_loginguard_wait_s(g, "admin", "10.1.0.0", T0), 1);
    /* a client that has not failed still has its secret checked */
    assert_int_equal(api_loginguard_wait_s(g, "admin", "10.9.9.9", T0), 0);
    /* one failure's worth comes back in 1000 / API_LG_GLOBAL_PER_S ms */
    assert_int_equal(api_loginguard_wait_s(g, "fresh-name", "10.1.0.3",
                                           T0 + 1000 / API_LG_GLOBAL_PER_S), 0);
    /* a client that signs in is clean again */
    api_loginguard_result(g, "guess-1", "10.1.0.1", 1, T0);
    assert_int_equal(api_loginguard_wait_s(g, "other", "10.1.0.1", T0), 0);
    /* ... and a failure that came long ago is forgotten */
    assert_int_equal(api_loginguard_wait_s(g, "other", "10.1.0.2",
                                           T0 + API_LG_MAX_WAIT_S * 1000LL), 0);
    api_loginguard_free(g);
}

static void test_hash_slots(void **state)
{
    struct api_loginguard *g = api_loginguard_new(2);
    struct timespec a, b;

    (void)state;
    assert_int_equal(api_loginguard_hash_begin(g), 0);
    assert_int_equal(api_loginguard_hash_begin(g), 0);
    clock_gettime(CLOCK_MONOTONIC, &a);
    assert_int_equal(api_loginguard_hash_begin(g), -1);  /* after waiting up to 5 s */
    clock_gettime(CLOCK_MONOTONIC, &b);
    assert_true(b.tv_sec - a.tv_sec >= 1);
    api_loginguard_hash_end(g);
    assert_int_equal(api_loginguard_hash_begin(g), 0);
    api_loginguard_hash_end(g);
    api_loginguard_hash_end(g);
    api_loginguard_free(g);
}

static void test_null_guard(void **state)
{
    (void)state;
    api_loginguard_result(NULL, "admin", "10.0.0.1", 0, T0);
    assert_int_equal(api_loginguard_wait_s(NULL, "admin", "10.0.0.1", T0), 0);
    assert_int_equal(api_loginguard_hash_begin(NULL), 0);
    api_loginguard_hash_end(NULL);
    api_loginguard_free(NULL);
}

RUN_TESTS(
    cmocka_unit_test(test_waits),
    cmocka_unit_test(test_wait_ends_and_success_clears),
    cmocka_unit_test(test_many_names),
    cmocka_unit_test(test_wait_is_per_name_and_client),
    cmocka_unit_test(test_global_failure_budget),
    cmocka_unit_test(test_hash_slots),
    cmocka_unit_test(test_null_guard)
)
