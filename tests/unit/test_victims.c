/*
 * test_victims.c: whom reclaim and preempt evict (scheduler/victims.c):
 * fewest GPUs first, then the queue furthest above its fair share, then
 * the lowest priority, then the newest; protected and non-preemptible
 * workloads are never taken; elastic workloads give one pod at a time; a
 * whole-device reclaimer has a device emptied, not only freed in part.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_world.h"

/* The Run:ai quick start: b2 takes the GPU of the 1-GPU a1, not of the 2-GPU a2. */
static void test_fewest_gpus(void **unused)
{
    struct tw w;
    int a, b, a1, a2, b1, b2;

    (void)unused;
    tw_init(&w, 1);
    tw_node(&w, "node-1", 0, 2);
    tw_node(&w, "node-2", 0, 2);
    a = tw_queue(&w, "team-a", -1, 2, -1, 1);
    b = tw_queue(&w, "team-b", -1, 2, -1, 1);
    a1 = tw_workload(&w, "a1", a, 1, 1, 0, 50);
    a2 = tw_workload(&w, "a2", a, 1, 2, 0, 50);
    b1 = tw_workload(&w, "b1", b, 1, 1, 0, 50);
    tw_settle(&w);
    assert_int_equal(w.wl[a1].phase, SCHED_RUNNING);
    assert_int_equal(w.wl[a2].phase, SCHED_RUNNING);
    assert_int_equal(w.wl[b1].phase, SCHED_RUNNING);
    b2 = tw_workload(&w, "b2", b, 1, 1, 0, 50);
    assert_true(tw_cycle(&w) > 0);
    assert_true(tw_evicted(&w, a1));
    assert_false(tw_evicted(&w, a2));
    assert_int_equal(w.wl[b2].phase, SCHED_RUNNING);
    assert_int_equal(w.pods[b2][0].node, 0);
    tw_free(&w);
}

/* Equal GPUs on two nodes: the victim of the queue above its fair share
 * wins over an earlier node whose workloads belong to a queue at its share. */
static void test_most_over_fair_share(void **unused)
{
    struct tw w;
    int a, b, c, a1, a2, a3, c1, b1;

    (void)unused;
    tw_init(&w, 1);
    tw_node(&w, "n1", 0, 2);
    tw_node(&w, "n2", 0, 2);
    a = tw_queue(&w, "team-a", -1, 1, -1, 1);
    b = tw_queue(&w, "team-b", -1, 1, -1, 1);
    c = tw_queue(&w, "team-c", -1, 0, -1, 0);
    a1 = tw_workload(&w, "a1", a, 1, 1, 0, 50);
    a2 = tw_workload(&w, "a2", a, 1, 1, 0, 50);
    c1 = tw_workload(&w, "c1", c, 1, 1, 0, 50);
    a3 = tw_workload(&w, "a3", a, 1, 1, 0, 50);
    tw_running(&w, a1, 0, 0, 1);
    tw_running(&w, a2, 0, 0, 2);
    tw_running(&w, c1, 0, 1, 1);
    tw_running(&w, a3, 0, 1, 2);
    b1 = tw_workload(&w, "b1", b, 1, 1, 0, 50);
    tw_cycle(&w);
    assert_true(tw_evicted(&w, c1));
    assert_false(tw_evicted(&w, a1));
    assert_false(tw_evicted(&w, a2));
    assert_false(tw_evicted(&w, a3));
    assert_int_equal(w.pods[b1][0].node, 1);
    tw_free(&w);
}

/* Inside a project: strictly higher priority preempts, the lowest priority goes first. */
static void test_preempt_lowest_priority(void **unused)
{
    struct tw w;
    int p, x, y, z, e;

    (void)unused;
    tw_init(&w, 1);
    tw_node(&w, "node-1", 0, 2);
    p = tw_queue(&w, "p", -1, 2, -1, 1);
    x = tw_workload(&w, "x", p, 1, 1, 0, 40);
    y = tw_workload(&w, "y", p, 1, 1, 0, 50);
    tw_settle(&w);
    e = tw_workload(&w, "equal", p, 1, 1, 0, 40);
    tw_cycle(&w);
    assert_false(tw_evicted(&w, x)); /* equal priority never preempts */
    assert_false(tw_evicted(&w, y));
    assert_int_equal(w.wl[e].phase, SCHED_PENDING);
    w.wl[e].phase = SCHED_COMPLETED;
    z = tw_workload(&w, "z", p, 1, 1, 0, 75);
    tw_cycle(&w);
    assert_true(tw_evicted(&w, x));
    assert_false(tw_evicted(&w, y));
    assert_int_equal(w.wl[z].phase, SCHED_RUNNING);
    tw_free(&w);
}

/* The pool's minimum guaranteed runtime protects a young workload. */
static void test_min_runtime(void **unused)
{
    struct tw w;
    int p1, p2, t1, t2;

    (void)unused;
    tw_init(&w, 1);
    w.pools[0].min_guaranteed_runtime_ms = 3600000;
    tw_node(&w, "node-1", 0, 2);
    p1 = tw_queue(&w, "p1", -1, 0, -1, 1);
    p2 = tw_queue(&w, "p2", -1, 2, -1, 1);
    t1 = tw_workload(&w, "t1", p1, 1, 2, 0, 50);
    tw_settle(&w);
    w.st.now_ms = 600000;
    t2 = tw_workload(&w, "t2", p2, 1, 2, 0, 50);
    tw_cycle(&w);
    assert_false(tw_evicted(&w, t1));
    w.st.now_ms = 3600000;
    tw_cycle(&w);
    assert_true(tw_evicted(&w, t1));
    assert_int_equal(w.wl[t2].phase, SCHED_RUNNING);
    tw_free(&w);
}

/* An elastic workload above its minimum gives one pod, and keeps running. */
static void test_elastic_one_pod(void **unused)
{
    struct tw w;
    int p1, p2, e, t, i, evicts = 0;

    (void)unused;
    tw_init(&w, 1);
    tw_node(&w, "node-1", 0, 4);
    p1 = tw_queue(&w, "p1", -1, 0, -1, 1);
    p2 = tw_queue(&w, "p2", -1, 2, -1, 1);
    e = tw_workload(&w, "e", p1, 4, 1, 0, 50);
    w.wl[e].min_pods = 2;
    tw_settle(&w);
    assert_int_equal(w.wl[e].phase, SCHED_RUNNING);
    t = tw_workload(&w, "t", p2, 1, 1, 0, 50);
    tw_cycle(&w);
    for (i = 0; i < w.res.n_decisions; i++)
        if (w.res.decisions[i].kind == SCHED_EVICT) {
            assert_int_equal(w.res.decisions[i].workload, e);
            assert_true(w.res.decisions[i].pod >= 0);
            evicts++;
        }
    assert_int_equal(evicts, 1);
    assert_int_equal(w.wl[e].phase, SCHED_RUNNING);
    assert_int_equal(w.wl[t].phase, SCHED_RUNNING);
    tw_free(&w);
}

/* Non-preemptible work is never a victim, even far above fair share. */
static void test_non_preemptible_kept(void **unused)
{
    struct tw w;
    int p1, p2, ws, t;
    const struct sched_pending *why;

    (void)unused;
    tw_init(&w, 1);
    tw_node(&w, "node-1", 0, 2);
    p1 = tw_queue(&w, "p1", -1, 0, -1, 1);
    p2 = tw_queue(&w, "p2", -1, 2, -1, 1);
    ws = tw_workload(&w, "ws", p1, 1, 2, 0, 100);
    tw_running(&w, ws, 0, 0, 3);
    t = tw_workload(&w, "t", p2, 1, 1, 0, 50);
    tw_cycle(&w);
    assert_false(tw_evicted(&w, ws));
    why = tw_pending(&w, t);
    assert_non_null(why);
    assert_int_equal(why->reason, SCHED_R_INSUFFICIENT_RESOURCES);
    tw_free(&w);
}

/* A whole-device reclaimer needs an empty device. Device 0 of node-1 holds
 * two fractions of 500 (taking one leaves the device in use: both go), one
 * whole-device pod (it alone goes), or two whole-device pods charged over
 * its capacity (both go); device 1 holds non-preemptible work. */
static void test_whole_needs_device_emptied(void **unused)
{
    static const struct {
        int64_t portion;   /* of each pod on device 0; 0: whole-device pods */
        int pods, evicted;
    } cases[] = {{500, 2, 2}, {0, 1, 1}, {0, 2, 2}};
    size_t i;

    (void)unused;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct tw w;
        int p1, p2, ws, v1, v2 = -1, t, n;

        tw_init(&w, 1);
        tw_node(&w, "node-1", 0, 2);
        p1 = tw_queue(&w, "p1", -1, 0, -1, 1);
        p2 = tw_queue(&w, "p2", -1, 2, -1, 1);
        ws = tw_workload(&w, "ws", p1, 1, 1, 0, 100);
        tw_running(&w, ws, 0, 0, 0x2);
        v1 = tw_workload(&w, "v1", p1, 1, cases[i].portion ? 0 : 1, cases[i].portion, 50);
        tw_running(&w, v1, 0, 0, 0x1);
        if (cases[i].pods == 2) {
            v2 = tw_workload(&w, "v2", p1, 1, cases[i].portion ? 0 : 1, cases[i].portion, 50);
            tw_running(&w, v2, 0, 0, 0x1);
        }
        t = tw_workload(&w, "t", p2, 1, 1, 0, 50);
        tw_cycle(&w);
        n = tw_evicted(&w, v1) + (v2 >= 0 && tw_evicted(&w, v2));
        assert_int_equal(n, cases[i].evicted);
        assert_false(tw_evicted(&w, ws));
        tw_settle(&w);
        assert_int_equal(w.wl[t].phase, SCHED_RUNNING);
        assert_int_equal(w.pods[t][0].devices, 0x1);
        tw_free(&w);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fewest_gpus),
        cmocka_unit_test(test_most_over_fair_share),
        cmocka_unit_test(test_preempt_lowest_priority),
        cmocka_unit_test(test_min_runtime),
        cmocka_unit_test(test_elastic_one_pod),
        cmocka_unit_test(test_non_preemptible_kept),
        cmocka_unit_test(test_whole_needs_device_emptied),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
