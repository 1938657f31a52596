/*
 * test_order.c: who goes first (scheduler/order.c): job order inside a
 * project, queue order between projects, rank for spare capacity.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_world.h"

/* Higher priority first, whatever the submission order. */
static void test_priority_before_age(void **unused)
{
    struct tw w;
    int p, old, urgent;

    (void)unused;
    tw_init(&w, 1);
    tw_node(&w, "node-1", 0, 1);
    p = tw_queue(&w, "p", -1, 1, -1, 1);
    old = tw_workload(&w, "old", p, 1, 1, 0, 50);
    urgent = tw_workload(&w, "urgent", p, 1, 1, 0, 75);
    tw_cycle(&w);
    assert_int_equal(w.wl[urgent].phase, SCHED_RUNNING);
    assert_int_equal(w.wl[old].phase, SCHED_PENDING);
    tw_free(&w);
}

/* Equal priority: the earlier submission first. */
static void test_age_breaks_ties(void **unused)
{
    struct tw w;
    int p, first, second;

    (void)unused;
    tw_init(&w, 1);
    tw_node(&w, "node-1", 0, 1);
    p = tw_queue(&w, "p", -1, 1, -1, 1);
    second = tw_workload(&w, "second", p, 1, 1, 0, 50);
    first = tw_workload(&w, "first", p, 1, 1, 0, 50);
    w.wl[first].queued_seq = 1;
    w.wl[second].queued_seq = 2;
    tw_cycle(&w);
    assert_int_equal(w.wl[first].phase, SCHED_RUNNING);
    assert_int_equal(w.wl[second].phase, SCHED_PENDING);
    tw_free(&w);
}

/* A project that stays within deserved goes before one that would exceed
 * it, even when the other's workload is older. */
static void test_within_deserved_first(void **unused)
{
    struct tw w;
    int a, b, a1, a2, b1;

    (void)unused;
    tw_init(&w, 1);
    tw_node(&w, "node-1", 0, 2);
    a = tw_queue(&w, "team-a", -1, 1, -1, 1);
    b = tw_queue(&w, "team-b", -1, 1, -1, 1);
    a1 = tw_workload(&w, "a1", a, 1, 1, 0, 50);
    tw_running(&w, a1, 0, 0, 1);
    a2 = tw_workload(&w, "a2", a, 1, 1, 0, 50);
    b1 = tw_workload(&w, "b1", b, 1, 1, 0, 50);
    tw_cycle(&w);
    assert_int_equal(w.wl[b1].phase, SCHED_RUNNING);
    assert_int_equal(w.wl[a2].phase, SCHED_PENDING);
    tw_free(&w);
}

/* With nothing deserved, the higher rank takes the spare GPU. */
static void test_rank_first(void **unused)
{
    struct tw w;
    int lo, hi, l1, h1;

    (void)unused;
    tw_init(&w, 1);
    tw_node(&w, "node-1", 0, 1);
    lo = tw_queue(&w, "low", -1, 0, -1, 1);
    hi = tw_queue(&w, "high", -1, 0, -1, 1);
    w.queues[hi].rank = 1;
    l1 = tw_workload(&w, "l1", lo, 1, 1, 0, 50);
    h1 = tw_workload(&w, "h1", hi, 1, 1, 0, 50);
    tw_cycle(&w);
    assert_int_equal(w.wl[h1].phase, SCHED_RUNNING);
    assert_int_equal(w.wl[l1].phase, SCHED_PENDING);
    tw_free(&w);
}

/* Queues alternate as their shares move: two projects, equal quotas, four
 * GPUs, each asking four: they end with two each, not four and zero. */
static void test_queues_alternate(void **unused)
{
    struct tw w;
    int a, b, i;
    int64_t alloc_a = 0, alloc_b = 0;
    static const char *names[8] = {"a0", "a1", "a2", "a3", "b0", "b1", "b2", "b3"};

    (void)unused;
    tw_init(&w, 1);
    tw_node(&w, "node-1", 0, 4);
    a = tw_queue(&w, "team-a", -1, 2, -1, 1);
    b = tw_queue(&w, "team-b", -1, 2, -1, 1);
    for (i = 0; i < 8; i++)
        tw_workload(&w, names[i], i < 4 ? a : b, 1, 1, 0, 50);
    tw_cycle(&w);
    for (i = 0; i < 8; i++)
        if (w.wl[i].phase == SCHED_RUNNING)
            *(i < 4 ? &alloc_a : &alloc_b) += 1;
    assert_int_equal(alloc_a, 2);
    assert_int_equal(alloc_b, 2);
    tw_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_priority_before_age),
        cmocka_unit_test(test_age_breaks_ties),
        cmocka_unit_test(test_within_deserved_first),
        cmocka_unit_test(test_rank_first),
        cmocka_unit_test(test_queues_alternate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
