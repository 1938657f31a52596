/*
 * test_keytable.c: the keyed tables behind the rate limiter and the login
 * guard (api/keytable.c), and the per-key token buckets on them
 * (api/ratelimit.c): a key finds its own entry again; a new key takes a
 * zeroed entry; with every slot of a probe taken the stalest is evicted,
 * so a flood of keys never grows the table; buckets of two keys (two
 * addresses, or two users) are independent, refill with time and answer
 * how long to wait.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cmocka_main.h"

#include "api.h"

struct entry {
    struct api_kt_head head;
    int value;
};

static void test_find_and_evict(void **state)
{
    struct api_keytable t;
    struct entry *e, *first;
    char key[32];
    int fresh, i;

    (void)state;
    assert_int_equal(api_keytable_init(&t, 16, sizeof(struct entry)), 0);
    first = api_keytable_find(&t, "alice", 100, &fresh);
    assert_int_equal(fresh, 1);
    assert_string_equal(first->head.key, "alice");
    first->value = 7;
    e = api_keytable_find(&t, "alice", 200, &fresh);
    assert_int_equal(fresh, 0);
    assert_ptr_equal(e, first);
    assert_int_equal(e->value, 7);
    /* 16 slots, a probe of 16: 40 more keys, each newer, evict the stalest */
    for (i = 0; i < 40; i++) {
        snprintf(key, sizeof(key), "k%d", i);
        e = api_keytable_find(&t, key, 300 + i, &fresh);
        assert_int_equal(fresh, 1);
        assert_int_equal(e->value, 0); /* zeroed but for its head */
    }
    e = api_keytable_find(&t, "alice", 400, &fresh);
    assert_int_equal(fresh, 1); /* alice was the stalest: gone */
    assert_int_equal(e->value, 0);
    /* the newest keys are still there */
    e = api_keytable_find(&t, "k39", 401, &fresh);
    assert_int_equal(fresh, 0);
    api_keytable_fini(&t);
}

static void test_buckets(void **state)
{
    struct api_ratelimit *rl = api_ratelimit_new(2); /* 2 a second, bursts of 4 */
    const int64_t t0 = INT64_C(1800000000000);
    int i;

    (void)state;
    assert_non_null(rl);
    for (i = 0; i < 4; i++)
        assert_int_equal(api_ratelimit_take(rl, "7", 1, t0), 0);
    assert_int_equal(api_ratelimit_take(rl, "7", 1, t0), 1);   /* wait a second */
    assert_int_equal(api_ratelimit_take(rl, "8", 1, t0), 0);   /* another key */
    assert_int_equal(api_ratelimit_take(rl, "7", 1, t0 + 500), 0); /* refilled one */
    assert_int_equal(api_ratelimit_take(rl, "7", 10, t0 + 500), 6); /* 5 s of refill, plus one */
    api_ratelimit_free(rl);
    rl = api_ratelimit_new(0); /* 0: no limit */
    for (i = 0; i < 100; i++)
        assert_int_equal(api_ratelimit_take(rl, "7", 10, t0), 0);
    api_ratelimit_free(rl);
}

RUN_TESTS(
    cmocka_unit_test(test_find_and_evict),
    cmocka_unit_test(test_buckets)
)
