/*
 * test_reasons.c: every pending workload has a reason, and its message
 * names the numbers (scheduler/reasons.c, vocab.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_world.h"

static void expect_reason(struct tw *w, int wl, int reason, const char *message)
{
    const struct sched_pending *why = tw_pending(w, wl);
    char buf[512];

    assert_non_null(why);
    sched_reason_message(&w->st, why, buf, sizeof(buf));
    if (why->reason != reason || !strstr(buf, message))
        fail_msg("%s: got %s \"%s\", expected %s containing \"%s\"", w->wl[wl].name,
                 sched_reason_name(why->reason), buf, sched_reason_name(reason), message);
}

static void test_non_preemptible_over_quota(void **unused)
{
    struct tw w;
    int a, ws;

    (void)unused;
    tw_init(&w, 1);
    tw_node(&w, "node-1", 0, 8);
    a = tw_queue(&w, "team-a", -1, 2, -1, 1);
    ws = tw_workload(&w, "ws", a, 1, 3, 0, 100);
    w.wl[ws].type = SCHED_WORKSPACE;
    tw_settle(&w);
    expect_reason(&w, ws, SCHED_R_NON_PREEMPTIBLE_OVER_QUOTA,
                  "team-a would use 3 of its 2 deserved GPUs; this workspace is non-preemptible "
                  "(priority 100) and must fit the quota");
    tw_free(&w);
}

static void test_over_limit(void **unused)
{
    struct tw w;
    int a, t1, t2;

    (void)unused;
    tw_init(&w, 1);
    tw_node(&w, "node-1", 0, 8);
    a = tw_queue(&w, "team-a", -1, 2, 3, 1);
    t1 = tw_workload(&w, "t1", a, 1, 2, 0, 50);
    t2 = tw_workload(&w, "t2", a, 1, 2, 0, 50);
    tw_settle(&w);
    assert_int_equal(w.wl[t1].phase, SCHED_RUNNING);
    expect_reason(&w, t2, SCHED_R_OVER_LIMIT, "team-a would use 4 GPUs, above its limit of 3");
    tw_free(&w);
}

static void test_fair_share_reached_and_insufficient(void **unused)
{
    struct tw w;
    int a, b, a1, b1;

    (void)unused;
    tw_init(&w, 1);
    tw_node(&w, "node-1", 0, 2);
    a = tw_queue(&w, "team-a", -1, 1, -1, 1);
    b = tw_queue(&w, "team-b", -1, 1, -1, 1);
    tw_workload(&w, "a0", a, 1, 1, 0, 50);
    tw_workload(&w, "b0", b, 1, 1, 0, 50);
    tw_settle(&w);
    a1 = tw_workload(&w, "a1", a, 1, 1, 0, 50);
    tw_settle(&w);
    expect_reason(&w, a1, SCHED_R_QUEUE_FAIR_SHARE_REACHED,
                  "team-a would use 2 of its fair share of 1 GPU; the rest is used by projects "
                  "within their share");
    tw_free(&w);

    /* Alone in its pool, a workload that does not fit just waits for room. */
    tw_init(&w, 1);
    tw_node(&w, "node-1", 0, 2);
    a = tw_queue(&w, "p", -1, 8, -1, 1);
    tw_workload(&w, "f", a, 1, 1, 0, 50);
    tw_settle(&w);
    b1 = tw_workload(&w, "two", a, 1, 2, 0, 50);
    a1 = tw_workload(&w, "huge", a, 1, 4, 0, 50);
    tw_settle(&w);
    expect_reason(&w, b1, SCHED_R_INSUFFICIENT_RESOURCES, "needs 2 GPUs");
    expect_reason(&w, a1, SCHED_R_INSUFFICIENT_RESOURCES, "needs 4 GPUs");
    (void)b;
    tw_free(&w);
}

/* InsufficientResources names what is free now over the pool's ready
 * nodes, after the placements (the pool's copy of its nodes' free room,
 * struct ss_pool), not the pool's capacity. */
static void test_insufficient_names_the_free_room(void **unused)
{
    struct tw w;
    int p, two;

    (void)unused;
    tw_init(&w, 1);
    tw_node(&w, "node-1", 0, 2);
    tw_node(&w, "node-2", 0, 2);
    p = tw_queue(&w, "p", -1, 8, -1, 1);
    tw_workload(&w, "one-a", p, 1, 1, 0, 50);
    tw_workload(&w, "one-b", p, 1, 1, 0, 50);
    w.pools[0].gpu_placement = SCHED_SPREAD;   /* one on each node: 2 free, 1 on each */
    tw_settle(&w);
    two = tw_workload(&w, "two", p, 1, 2, 0, 50);
    tw_settle(&w);
    expect_reason(&w, two, SCHED_R_INSUFFICIENT_RESOURCES,
                  "needs 2 GPUs; 2 free in the pool, not enough on one node");
    tw_free(&w);
}

/* "The rest is used by projects within their share" only when it is. */
static void test_fair_share_reached_rest_above_share(void **unused)
{
    struct tw w;
    int a, b, a1;

    (void)unused;
    tw_init(&w, 1);
    tw_node(&w, "node-1", 0, 3);
    a = tw_queue(&w, "team-a", -1, 1, -1, 0);
    b = tw_queue(&w, "team-b", -1, 0, -1, 0);
    tw_running(&w, tw_workload(&w, "a0", a, 1, 1, 0, 50), 0, 0, 1);
    tw_running(&w, tw_workload(&w, "b0", b, 1, 2, 0, 50), 0, 0, 6);
    a1 = tw_workload(&w, "a1", a, 1, 1, 0, 50);
    tw_settle(&w);
    expect_reason(&w, a1, SCHED_R_QUEUE_FAIR_SHARE_REACHED,
                  "team-a would use 2 of its fair share of 1 GPU; team-b holds more than its "
                  "own share, but only a project within its fair share may take GPUs back");
    tw_free(&w);
}

/* While the pool's minimum runtime protects the only victims, the reason
 * names them and the time left. */
static void test_protected_by_min_runtime(void **unused)
{
    struct tw w;
    int a, b, b1;

    (void)unused;
    tw_init(&w, 1);
    w.pools[0].min_guaranteed_runtime_ms = 300000;
    w.st.now_ms = 1000000;
    tw_node(&w, "node-1", 0, 2);
    a = tw_queue(&w, "team-a", -1, 0, -1, 1);
    b = tw_queue(&w, "team-b", -1, 2, -1, 1);
    tw_running(&w, tw_workload(&w, "a1", a, 1, 2, 0, 50), 0, 0, 3);
    w.st.now_ms += 50000;
    b1 = tw_workload(&w, "b1", b, 1, 1, 0, 50);
    tw_settle(&w);
    expect_reason(&w, b1, SCHED_R_INSUFFICIENT_RESOURCES,
                  "would reclaim from team-a, whose workloads are protected by the node pool's "
                  "minimum runtime for 4m10s more");
    w.st.now_ms += 250000;
    tw_settle(&w);
    assert_int_equal(w.wl[b1].phase, SCHED_RUNNING);
    tw_free(&w);
}

/* Only a non-preemptible workload is described as non-preemptible: a
 * very-high training made preemptible waits for its fair share. */
static void test_preemptibility_described_truly(void **unused)
{
    struct tw w;
    int a, b, np, pre;
    char buf[512];

    (void)unused;
    tw_init(&w, 1);
    tw_node(&w, "node-1", 0, 2);
    a = tw_queue(&w, "team-a", -1, 0, -1, 1);
    b = tw_queue(&w, "team-b", -1, 2, -1, 1);
    tw_running(&w, tw_workload(&w, "b1", b, 1, 2, 0, 50), 0, 0, 3);
    np = tw_workload(&w, "np", a, 1, 1, 0, 150);
    pre = tw_workload(&w, "pre", a, 1, 1, 0, 150);
    w.wl[pre].preemptible = 1;
    tw_settle(&w);
    expect_reason(&w, np, SCHED_R_NON_PREEMPTIBLE_OVER_QUOTA,
                  "this training is non-preemptible (priority 150) and must fit the quota");
    assert_non_null(tw_pending(&w, pre));
    assert_int_not_equal(tw_pending(&w, pre)->reason, SCHED_R_NON_PREEMPTIBLE_OVER_QUOTA);
    sched_reason_message(&w.st, tw_pending(&w, pre), buf, sizeof(buf));
    assert_null(strstr(buf, "non-preemptible"));
    tw_free(&w);
}

static void test_gang_and_pool_and_suspended(void **unused)
{
    struct tw w;
    int p, g, n, s;

    (void)unused;
    tw_init(&w, 1);
    tw_node(&w, "n1", 0, 2);
    tw_node(&w, "n2", 0, 2);
    p = tw_queue(&w, "p", -1, 8, -1, 1);
    g = tw_workload(&w, "g", p, 3, 2, 0, 50);
    n = tw_workload(&w, "n", p, 1, 1, 0, 50);
    w.wl[n].node_type = "h100";
    s = tw_workload(&w, "s", p, 1, 1, 0, 50);
    w.wl[s].phase = SCHED_STOPPED;
    tw_settle(&w);
    expect_reason(&w, g, SCHED_R_GANG_NOT_SATISFIABLE, "gang of 3 pods");
    expect_reason(&w, n, SCHED_R_NO_MATCHING_NODE_POOL, "node-type h100");
    expect_reason(&w, s, SCHED_R_SUSPENDED, "suspended");
    tw_free(&w);
}

/* A GPU workload short of CPU or memory: the message gives the request's
 * own cores or MiB, not its GPU count in those units. */
static void test_short_of_cpu_or_memory_says_its_request(void **unused)
{
    struct tw w;
    int p, c, m, n;

    (void)unused;
    tw_init(&w, 1);
    n = tw_node(&w, "n1", 0, 8);
    w.nodes[n].cpu_milli = 96000;
    w.nodes[n].mem_mib = 65536;
    p = tw_queue(&w, "p", -1, 8, -1, 1);
    tw_workload(&w, "hog", p, 1, 1, 0, 125);   /* non-preemptible: nothing to take */
    w.wl[0].cpu_milli = 40000;
    w.wl[0].mem_mib = 40000;
    w.wl[0].preemptible = 0;
    c = tw_workload(&w, "c", p, 1, 2, 0, 50);
    w.wl[c].cpu_milli = 64000;   /* 64 cores: 56 free */
    m = tw_workload(&w, "m", p, 1, 2, 0, 50);
    w.wl[m].mem_mib = 30720;     /* 30 GiB: 25,536 MiB free */
    tw_settle(&w);
    expect_reason(&w, c, SCHED_R_INSUFFICIENT_RESOURCES, "needs 64 CPU cores; 56 free in the pool");
    expect_reason(&w, m, SCHED_R_INSUFFICIENT_RESOURCES,
                  "needs 30720 MiB of memory; 25536 free in the pool");
    tw_free(&w);
}

/* Node types or required affinity narrow the nodes: the message names
 * them and gives no figure of the whole pool (its free GPUs are on nodes
 * the workload may not use). */
static void test_node_type_that_blocks_is_named(void **unused)
{
    struct tw w;
    int p, a, t, n1;

    (void)unused;
    tw_init(&w, 1);
    n1 = tw_node(&w, "n1", 0, 2);
    w.nodes[n1].node_type = "a";
    tw_node(&w, "n2", 0, 4);   /* untyped, empty */
    p = tw_queue(&w, "p", -1, 8, -1, 1);
    a = tw_workload(&w, "a0", p, 1, 2, 0, 125);
    w.wl[a].preemptible = 0;
    w.wl[a].node_type = "a";
    t = tw_workload(&w, "t", p, 1, 2, 0, 50);
    w.wl[t].node_type = "a";
    tw_settle(&w);
    expect_reason(&w, t, SCHED_R_INSUFFICIENT_RESOURCES,
                  "needs 2 GPUs on nodes of node-type a; none of them has room for each pod");
    {
        char buf[512];
        sched_reason_message(&w.st, tw_pending(&w, t), buf, sizeof(buf));
        assert_null(strstr(buf, "free in the pool"));
    }
    tw_free(&w);
}

/* A pod that no node of its pool can hold even empty (3 GPUs on 2-GPU
 * nodes) can never run as asked: said so, with the pod's request and the
 * largest node, for a single pod and for a gang. */
static void test_never_fits_says_so(void **unused)
{
    struct tw w;
    int p, one, gang;

    (void)unused;
    tw_init(&w, 1);
    tw_node(&w, "n1", 0, 2);
    tw_node(&w, "n2", 0, 2);
    p = tw_queue(&w, "p", -1, 8, -1, 1);
    one = tw_workload(&w, "one", p, 1, 3, 0, 50);
    gang = tw_workload(&w, "gang", p, 2, 3, 0, 50);
    tw_settle(&w);
    expect_reason(&w, one, SCHED_R_INSUFFICIENT_RESOURCES,
                  "can never run as asked: each pod needs 3 GPUs on one node, and the largest "
                  "ready node has 2");
    assert_int_equal(tw_pending(&w, one)->detail, SCHED_D_NEVER_FITS);
    expect_reason(&w, gang, SCHED_R_GANG_NOT_SATISFIABLE,
                  "can never run as asked: each pod needs 3 GPUs on one node");
    tw_free(&w);
}

/* With several pools the message says what became of it in each. */
static void test_each_pool_tried(void **unused)
{
    struct tw w;
    int p, t, n3;

    (void)unused;
    tw_init(&w, 3);
    tw_node(&w, "n1", 0, 1);
    tw_node(&w, "n2", 1, 1);
    n3 = tw_node(&w, "n3", 2, 4);
    w.nodes[n3].node_type = "b";
    p = tw_queue(&w, "p", -1, 8, -1, 1);
    t = tw_workload(&w, "t", p, 1, 2, 0, 50);
    w.wl[t].node_type = "a";
    w.nodes[0].node_type = "a";
    w.nodes[1].node_type = "a";
    tw_settle(&w);
    expect_reason(&w, t, SCHED_R_INSUFFICIENT_RESOURCES,
                  "can never run as asked: each pod needs 2 GPUs on one node, and the largest "
                  "ready node of node-type a in node pool default has 1; also tried node pool "
                  "pool-b (not started there either), node pool pool-c (no ready node of "
                  "node-type a)");
    tw_free(&w);
}

/* An autoscaled inference (at least 1 replica, up to 3) with room for 2
 * runs, and its third replica has a reason of its own, figures about that
 * replica alone, from the cycle that places the first two on. */
static void test_waiting_replica_has_a_reason(void **unused)
{
    struct tw w;
    const struct sched_pending *why;
    char buf[512];
    int p, inf, cycle;

    (void)unused;
    tw_init(&w, 1);
    tw_node(&w, "node-1", 0, 2);
    p = tw_queue(&w, "p", -1, 8, -1, 1);
    inf = tw_workload(&w, "inf", p, 3, 1, 0, 125);
    w.wl[inf].type = SCHED_INFERENCE;
    w.wl[inf].min_pods = 1;
    for (cycle = 0; cycle < 2; cycle++) {   /* the placing cycle, then a settled one */
        assert_int_equal(tw_cycle(&w), cycle == 0 ? 2 : 0);
        assert_int_equal(w.wl[inf].phase, SCHED_RUNNING);
        assert_null(tw_pending(&w, inf));
        assert_int_equal(w.res.n_waiting, 1);
        why = &w.res.waiting[0];
        assert_int_equal(why->workload, inf);
        assert_int_equal(why->reason, SCHED_R_INSUFFICIENT_RESOURCES);
        assert_int_equal(why->res, SCHED_GPU);
        assert_int_equal(why->request, SCHED_MILLI);   /* one replica's GPU */
        assert_int_equal(why->bound, 0);               /* none free */
        sched_reason_message(&w.st, why, buf, sizeof(buf));
        if (!strstr(buf, "needs 1 GPU; 0 free in the pool"))
            fail_msg("inf: \"%s\"", buf);
    }
    /* room for the third: placed, nothing waits */
    tw_node(&w, "node-2", 0, 1);
    tw_settle(&w);
    assert_int_equal(w.res.n_waiting, 0);
    tw_free(&w);
}

static void test_vocabulary(void **unused)
{
    int prio = 0, type = -1;

    (void)unused;
    assert_int_equal(sched_priority_class("train", &prio), SCHED_OK);
    assert_int_equal(prio, 50);
    assert_int_equal(sched_priority_class("interactive-preemptible", &prio), SCHED_OK);
    assert_int_equal(prio, 75);
    assert_int_equal(sched_priority_class("very-high", &prio), SCHED_OK);
    assert_int_equal(prio, 150);
    assert_int_equal(sched_priority_class("42", &prio), SCHED_OK);
    assert_int_equal(prio, 42);
    assert_int_equal(sched_priority_class("urgent", &prio), SCHED_EINVAL);
    assert_int_equal(sched_priority_class("", &prio), SCHED_EINVAL);
    assert_true(sched_default_preemptible(75));
    assert_false(sched_default_preemptible(100));
    assert_string_equal(sched_default_priority_class(SCHED_WORKSPACE), "build");
    assert_string_equal(sched_default_priority_class(SCHED_INFERENCE), "inference");
    assert_string_equal(sched_default_priority_class(SCHED_DISTRIBUTED), "train");
    assert_int_equal(sched_type_parse("distributed", &type), SCHED_OK);
    assert_int_equal(type, SCHED_DISTRIBUTED);
    assert_int_equal(sched_type_parse("batch", &type), SCHED_EINVAL);
    assert_string_equal(sched_reason_name(SCHED_R_QUEUE_FAIR_SHARE_REACHED), "QueueFairShareReached");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_non_preemptible_over_quota),
        cmocka_unit_test(test_over_limit),
        cmocka_unit_test(test_fair_share_reached_and_insufficient),
        cmocka_unit_test(test_insufficient_names_the_free_room),
        cmocka_unit_test(test_fair_share_reached_rest_above_share),
        cmocka_unit_test(test_protected_by_min_runtime),
        cmocka_unit_test(test_preemptibility_described_truly),
        cmocka_unit_test(test_gang_and_pool_and_suspended),
        cmocka_unit_test(test_short_of_cpu_or_memory_says_its_request),
        cmocka_unit_test(test_node_type_that_blocks_is_named),
        cmocka_unit_test(test_never_fits_says_so),
        cmocka_unit_test(test_each_pool_tried),
        cmocka_unit_test(test_waiting_replica_has_a_reason),
        cmocka_unit_test(test_vocabulary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
