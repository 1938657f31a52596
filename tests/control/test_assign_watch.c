/*
 * test_assign_watch.c: the heartbeats' watch (control/assign_watch.c) on
 * real threads and clocks, one row per promise:
 *   marked before   a node marked after the generation named: at once, 1
 *   other node      a mark of another node does not end a wait (but for
 *                   a shared slot, which no two seqs here share)
 *   timeout         nothing marked: 0 once the wait has passed, not before
 *   woken           a mark from another thread ends a wait early, 1
 *   cap             max_waiting waiters at most: one more is -1 at once
 *   foreign         a generation above the counter (another replica's): 1
 *   close           a waiter wakes at once (0), and nothing waits after (-1)
 *   counter         starts at the clock's microseconds, below 2^53, and
 *                   every batch of marks moves it by one
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <pthread.h>
#include <time.h>

#include "control.h"
#include "../cmocka_main.h"
#include "../test_clock.h"

struct waiter {
    struct ctl_watch *w;
    int64_t node, after;
    int wait_ms, rc;
    int64_t took_ms;
};

static void *wait_thread(void *arg)
{
    struct waiter *x = arg;
    int64_t t0 = test_mono_ms();

    x->rc = ctl_watch_wait(x->w, x->node, x->after, x->wait_ms);
    x->took_ms = test_mono_ms() - t0;
    return NULL;
}

static void test_counter_and_marked_before(void **state)
{
    struct ctl_watch *w = ctl_watch_new(4);
    struct timespec real;
    int64_t g0, node = 7;

    (void)state;
    assert_non_null(w);
    clock_gettime(CLOCK_REALTIME, &real);
    g0 = ctl_watch_now(w);
    assert_true(g0 <= (int64_t)real.tv_sec * 1000000 + real.tv_nsec / 1000);
    assert_true(g0 > ((int64_t)real.tv_sec - 60) * 1000000 && g0 < (INT64_C(1) << 53));
    ctl_watch_mark(w, &node, 1);
    assert_int_equal(ctl_watch_now(w), g0 + 1);
    assert_int_equal(ctl_watch_wait(w, node, g0, 5000), 1);       /* at once */
    assert_int_equal(ctl_watch_wait(w, node, g0 + 1, 1), 0);       /* nothing after it */
    assert_int_equal(ctl_watch_wait(w, node, g0 + 2, 5000), 1);    /* foreign: never given */
    ctl_watch_free(w);
}

static void test_timeout_and_other_node(void **state)
{
    struct ctl_watch *w = ctl_watch_new(4);
    struct waiter x = {w, 1, 0, 300, -2, 0};
    int64_t other = 2;
    pthread_t th;

    (void)state;
    x.after = ctl_watch_now(w);
    assert_int_equal(pthread_create(&th, NULL, wait_thread, &x), 0);
    test_sleep_ms(50);
    ctl_watch_mark(w, &other, 1);
    pthread_join(th, NULL);
    assert_int_equal(x.rc, 0);
    assert_true(x.took_ms >= 290);
    ctl_watch_free(w);
}

static void test_woken_by_a_mark(void **state)
{
    struct ctl_watch *w = ctl_watch_new(4);
    struct waiter x = {w, 42, 0, 10000, -2, 0};
    int64_t nodes[] = {3, 42};
    pthread_t th;

    (void)state;
    x.after = ctl_watch_now(w);
    assert_int_equal(pthread_create(&th, NULL, wait_thread, &x), 0);
    test_sleep_ms(100);
    ctl_watch_mark(w, nodes, 2);
    pthread_join(th, NULL);
    assert_int_equal(x.rc, 1);
    assert_true(x.took_ms < 5000);
    ctl_watch_free(w);
}

static void test_cap_and_close(void **state)
{
    struct ctl_watch *w = ctl_watch_new(1), *none = ctl_watch_new(0);
    struct waiter x = {w, 5, 0, 20000, -2, 0};
    pthread_t th;
    int64_t t0;

    (void)state;
    assert_int_equal(ctl_watch_wait(none, 5, ctl_watch_now(none), 1000), -1);
    x.after = ctl_watch_now(w);
    assert_int_equal(pthread_create(&th, NULL, wait_thread, &x), 0);
    test_sleep_ms(100);
    t0 = test_mono_ms();
    assert_int_equal(ctl_watch_wait(w, 6, x.after, 5000), -1);    /* the one waiter is there */
    assert_true(test_mono_ms() - t0 < 1000);
    ctl_watch_close(w);
    pthread_join(th, NULL);
    assert_int_equal(x.rc, 0);
    assert_true(x.took_ms < 10000);
    assert_int_equal(ctl_watch_wait(w, 5, x.after, 5000), -1);    /* closed */
    assert_int_equal(ctl_watch_wait(NULL, 5, 0, 5000), -1);
    ctl_watch_free(w);
    ctl_watch_free(none);
}

RUN_TESTS(
    cmocka_unit_test(test_counter_and_marked_before),
    cmocka_unit_test(test_timeout_and_other_node),
    cmocka_unit_test(test_woken_by_a_mark),
    cmocka_unit_test(test_cap_and_close)
)
