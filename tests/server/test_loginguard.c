/*
 * test_loginguard.c: what slows password guessing (api/loginguard.c):
 * the wait a login name earns by failing, as a table of failures and
 * waits on a fixed clock; a success clears it; names do not share waits;
 * the secret-check slots; a NULL guard limits nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <cmocka.h>

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
            api_loginguard_result(g, "admin", 0, T0);
        if (api_loginguard_wait_s(g, "admin", T0) != waits[i].wait_s)
            fail_msg("%d failures: wait %d s, want %d s", waits[i].failures,
                     api_loginguard_wait_s(g, "admin", T0), waits[i].wait_s);
        api_loginguard_free(g);
    }
}

static void test_wait_ends_and_success_clears(void **state)
{
    struct api_loginguard *g = api_loginguard_new(2);
    int n;

    (void)state;
    for (n = 0; n < 8; n++)
        api_loginguard_result(g, "admin", 0, T0);
    assert_int_equal(api_loginguard_wait_s(g, "admin", T0 + 1), 4); /* rounded up */
    assert_int_equal(api_loginguard_wait_s(g, "admin", T0 + 3001), 1);
    assert_int_equal(api_loginguard_wait_s(g, "admin", T0 + 4000), 0);
    /* other names, known or not, wait for nothing */
    assert_int_equal(api_loginguard_wait_s(g, "alice", T0), 0);
    assert_int_equal(api_loginguard_wait_s(g, "no-such-user", T0), 0);
    /* the next failure after the wait doubles it; a success clears all */
    api_loginguard_result(g, "admin", 0, T0 + 4000);
    assert_int_equal(api_loginguard_wait_s(g, "admin", T0 + 4000), 8);
    api_loginguard_result(g, "admin", 1, T0 + 12000);
    assert_int_equal(api_loginguard_wait_s(g, "admin", T0 + 12000), 0);
    for (n = 0; n < 5; n++)
        api_loginguard_result(g, "admin", 0, T0 + 12000);
    assert_int_equal(api_loginguard_wait_s(g, "admin", T0 + 12000), 0);
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
        api_loginguard_result(g, "admin", 0, T0 + 10);
    for (i = 0; i < 100000; i++) {
        snprintf(name, sizeof(name), "guess-%d", i);
        api_loginguard_result(g, name, 0, T0 + i % 10);
    }
    assert_int_equal(api_loginguard_wait_s(g, "admin", T0 + 10), 1);
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
    api_loginguard_result(NULL, "admin", 0, T0);
    assert_int_equal(api_loginguard_wait_s(NULL, "admin", T0), 0);
    assert_int_equal(api_loginguard_hash_begin(NULL), 0);
    api_loginguard_hash_end(NULL);
    api_loginguard_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_waits),
        cmocka_unit_test(test_wait_ends_and_success_clears),
        cmocka_unit_test(test_many_names),
        cmocka_unit_test(test_hash_slots),
        cmocka_unit_test(test_null_guard),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
