/*
 * test_clock.c: common/clock.c. clock_deadline() on both clocks, one row a
 * distance: the deadline is the clock before the call plus the distance
 * (within the call's own time), its nanoseconds normalized.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <time.h>

#include "clock.h"
#include "../cmocka_main.h"

static int64_t ns_of(const struct timespec *ts)
{
    return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

static void test_deadline(void **state)
{
    static const int64_t distances_ms[] = {0, 1, 999, 1000, 1001, 1500, 86400000};
    static const clockid_t clocks[] = {CLOCK_REALTIME, CLOCK_MONOTONIC};
    struct timespec before, at, after;
    size_t i, c;

    (void)state;
    for (c = 0; c < sizeof(clocks) / sizeof(clocks[0]); c++)
        for (i = 0; i < sizeof(distances_ms) / sizeof(distances_ms[0]); i++) {
            int64_t want = distances_ms[i] * 1000000;
            clock_gettime(clocks[c], &before);
            clock_deadline(&at, clocks[c], distances_ms[i]);
            clock_gettime(clocks[c], &after);
            assert_true(at.tv_nsec >= 0 && at.tv_nsec < 1000000000L);
            assert_true(ns_of(&at) >= ns_of(&before) + want);
            assert_true(ns_of(&at) <= ns_of(&after) + want);
        }
}

static void test_clocks(void **state)
{
    struct timespec real;
    int64_t a = clock_mono_us(), b = clock_mono_us();

    (void)state;
    assert_true(b >= a);
    clock_gettime(CLOCK_REALTIME, &real);
    assert_true(clock_now_ms() >= (int64_t)real.tv_sec * 1000);
}

RUN_TESTS(
    cmocka_unit_test(test_deadline),
    cmocka_unit_test(test_clocks)
)
