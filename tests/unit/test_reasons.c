/*
 * test_reasons.c: every pending workload has a reason, and its message
 * names the numbers (scheduler/reasons.c, vocab.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cmocka_main.h"

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

/* A case: the world and its script (tw_build), then the pending reason
 * of one workload, what its message holds and what it must not hold. */
struct reason_case {
    const char *world, *workload;
    int reason;
    const char *message, *never;
};

static const struct reason_case reason_cases[] = {
    {"node node-1 8; queue team-a 2; wl ws team-a 1 3 prio=100 kind=workspace; settle", "ws",
     SCHED_R_NON_PREEMPTIBLE_OVER_QUOTA,
     "team-a would use 3 of its 2 deserved GPUs; this workspace is non-preemptible "
     "(priority 100) and must fit the quota", NULL},
    {"node node-1 8; queue team-a 2 limit=3; wl t1 team-a 1 2; wl t2 team-a 1 2; settle", "t2",
     SCHED_R_OVER_LIMIT, "team-a would use 4 GPUs, above its limit of 3", NULL},
    {"node node-1 2; queue team-a 1; queue team-b 1; wl a0 team-a 1 1; wl b0 team-b 1 1; settle;"
     " wl a1 team-a 1 1; settle", "a1", SCHED_R_QUEUE_FAIR_SHARE_REACHED,
     "team-a would use 2 of its fair share of 1 GPU; the rest is used by projects "
     "within their share", NULL},
    /* alone in its pool, a workload that does not fit just waits for room */
    {"node node-1 2; queue p 8; wl f p 1 1; settle; wl two p 1 2; wl huge p 1 4; settle", "two",
     SCHED_R_INSUFFICIENT_RESOURCES, "needs 2 GPUs", NULL},
    {"node node-1 2; queue p 8; wl f p 1 1; settle; wl two p 1 2; wl huge p 1 4; settle", "huge",
     SCHED_R_INSUFFICIENT_RESOURCES, "needs 4 GPUs", NULL},
    /* InsufficientResources names what is free now over the pool's ready
     * nodes, after the placements (the pool's copy of its nodes' free room,
     * struct ss_pool), not the pool's capacity: spread, one on each node,
     * 2 free, 1 on each */
    {"node node-1 2; node node-2 2; queue p 8; wl one-a p 1 1; wl one-b p 1 1;"
     " pool 0 placement=spread; settle; wl two p 1 2; settle", "two",
     SCHED_R_INSUFFICIENT_RESOURCES, "needs 2 GPUs; 2 free in the pool, not enough on one node",
     NULL},
    /* "the rest is used by projects within their share" only when it is */
    {"node node-1 3; queue team-a 1 weight=0; queue team-b 0 weight=0;"
     " wl a0 team-a 1 1 on=node-1:1; wl b0 team-b 1 2 on=node-1:6; wl a1 team-a 1 1; settle",
     "a1", SCHED_R_QUEUE_FAIR_SHARE_REACHED,
     "team-a would use 2 of its fair share of 1 GPU; team-b holds more than its "
     "own share, but only a project within its fair share may take GPUs back", NULL},
    /* only a non-preemptible workload is described as non-preemptible */
    {"node node-1 2; queue team-a 0; queue team-b 2; wl b1 team-b 1 2 on=node-1:3;"
     " wl np team-a 1 1 prio=150; wl pre team-a 1 1 prio=150 preemptible=1; settle", "np",
     SCHED_R_NON_PREEMPTIBLE_OVER_QUOTA,
     "this training is non-preemptible (priority 150) and must fit the quota", NULL},
    {"node n1 2; node n2 2; queue p 8; wl g p 3 2; wl n p 1 1 type=h100; wl s p 1 1 phase=Stopped;"
     " settle", "g", SCHED_R_GANG_NOT_SATISFIABLE, "gang of 3 pods", NULL},
    {"node n1 2; node n2 2; queue p 8; wl g p 3 2; wl n p 1 1 type=h100; wl s p 1 1 phase=Stopped;"
     " settle", "n", SCHED_R_NO_MATCHING_NODE_POOL, "node-type h100", NULL},
    {"node n1 2; node n2 2; queue p 8; wl g p 3 2; wl n p 1 1 type=h100; wl s p 1 1 phase=Stopped;"
     " settle", "s", SCHED_R_SUSPENDED, "suspended", NULL},
    /* a GPU workload short of CPU or memory: the message gives the
     * request's own cores or MiB, not its GPU count in those units; the
     * hog is non-preemptible: nothing to take; c asks 64 cores, 56 free;
     * m 30 GiB, 25,536 MiB free */
    {"node n1 8 cpu=96000 mem=65536; queue p 8;"
     " wl hog p 1 1 prio=125 cpu=40000 mem=40000 preemptible=0; wl c p 1 2 cpu=64000;"
     " wl m p 1 2 mem=30720; settle", "c", SCHED_R_INSUFFICIENT_RESOURCES,
     "needs 64 CPU cores; 56 free in the pool", NULL},
    {"node n1 8 cpu=96000 mem=65536; queue p 8;"
     " wl hog p 1 1 prio=125 cpu=40000 mem=40000 preemptible=0; wl c p 1 2 cpu=64000;"
     " wl m p 1 2 mem=30720; settle", "m", SCHED_R_INSUFFICIENT_RESOURCES,
     "needs 30720 MiB of memory; 25536 free in the pool", NULL},
    /* node types or required affinity narrow the nodes: the message names
     * them and gives no figure of the whole pool (its free GPUs are on
     * nodes the workload may not use); n2 is untyped and empty */
    {"node n1 2 type=a; node n2 4; queue p 8; wl a0 p 1 2 prio=125 preemptible=0 type=a;"
     " wl t p 1 2 type=a; settle", "t", SCHED_R_INSUFFICIENT_RESOURCES,
     "needs 2 GPUs on nodes of node-type a; none of them has room for each pod",
     "free in the pool"},
    /* a pod that no node of its pool can hold even empty (3 GPUs on 2-GPU
     * nodes) can never run as asked: said so, with the pod's request and
     * the largest node, for a single pod and for a gang */
    {"node n1 2; node n2 2; queue p 8; wl one p 1 3; wl gang p 2 3; settle", "one",
     SCHED_R_INSUFFICIENT_RESOURCES,
     "can never run as asked: each pod needs 3 GPUs on one node, and the largest "
     "ready node has 2", NULL},
    {"node n1 2; node n2 2; queue p 8; wl one p 1 3; wl gang p 2 3; settle", "gang",
     SCHED_R_GANG_NOT_SATISFIABLE, "can never run as asked: each pod needs 3 GPUs on one node",
     NULL},
    /* with several pools the message says what became of it in each */
    {"pools 3; node n1 1 type=a; node n2 1 pool=1 type=a; node n3 4 pool=2 type=b; queue p 8;"
     " wl t p 1 2 type=a; settle", "t", SCHED_R_INSUFFICIENT_RESOURCES,
     "can never run as asked: each pod needs 2 GPUs on one node, and the largest "
     "ready node of node-type a in node pool default has 1; also tried node pool "
     "pool-b (not started there either), node pool pool-c (no ready node of "
     "node-type a)", NULL},
};

static void test_reason_cases(void **unused)
{
    size_t i;

    (void)unused;
    for (i = 0; i < sizeof(reason_cases) / sizeof(reason_cases[0]); i++) {
        const struct reason_case *c = &reason_cases[i];
        struct tw w;
        char buf[512];

        tw_build(&w, c->world);
        expect_reason(&w, tw_wl(&w, c->workload), c->reason, c->message);
        sched_reason_message(&w.st, tw_pending(&w, tw_wl(&w, c->workload)), buf, sizeof(buf));
        if (c->never != NULL && strstr(buf, c->never) != NULL)
            fail_msg("%s: \"%s\" holds \"%s\"", c->workload, buf, c->never);
        tw_free(&w);
    }
}

/* Beside its reason: the workload that fits runs, a pod that never fits
 * says so in its detail, a very-high training made preemptible waits for
 * its fair share and is not described as non-preemptible. */
static void test_reasons_beside(void **unused)
{
    struct tw w;
    char buf[512];
    int pre;

    (void)unused;
    tw_build(&w, "node node-1 8; queue team-a 2 limit=3; wl t1 team-a 1 2; wl t2 team-a 1 2;"
                 " settle");
    assert_string_equal(tw_phases(&w, "Running t1"), "");
    tw_free(&w);
    tw_build(&w, "node n1 2; node n2 2; queue p 8; wl one p 1 3; settle");
    assert_int_equal(tw_pending(&w, tw_wl(&w, "one"))->detail, SCHED_D_NEVER_FITS);
    tw_free(&w);
    tw_build(&w, "node node-1 2; queue team-a 0; queue team-b 2; wl b1 team-b 1 2 on=node-1:3;"
                 " wl np team-a 1 1 prio=150; wl pre team-a 1 1 prio=150 preemptible=1; settle");
    pre = tw_wl(&w, "pre");
    assert_non_null(tw_pending(&w, pre));
    assert_int_not_equal(tw_pending(&w, pre)->reason, SCHED_R_NON_PREEMPTIBLE_OVER_QUOTA);
    sched_reason_message(&w.st, tw_pending(&w, pre), buf, sizeof(buf));
    assert_null(strstr(buf, "non-preemptible"));
    tw_free(&w);
}

/* While the pool's minimum runtime protects the only victims, the reason
 * names them and the time left. */
static void test_protected_by_min_runtime(void **unused)
{
    struct tw w;

    (void)unused;
    tw_build(&w, "pool 0 minruntime=300000; now 1000000; node node-1 2; queue team-a 0;"
                 " queue team-b 2; wl a1 team-a 1 2 on=node-1:3; now +50000; wl b1 team-b 1 1;"
                 " settle");
    expect_reason(&w, tw_wl(&w, "b1"), SCHED_R_INSUFFICIENT_RESOURCES,
                  "would reclaim from team-a, whose workloads are protected by the node pool's "
                  "minimum runtime for 4m10s more");
    tw_more(&w, "now +250000; settle");
    assert_string_equal(tw_phases(&w, "Running b1"), "");
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
    int inf, cycle;

    (void)unused;
    tw_build(&w, "node node-1 2; queue p 8; wl inf p 3 1 prio=125 kind=inference min=1");
    inf = tw_wl(&w, "inf");
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
    tw_more(&w, "node node-2 1; settle");
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

RUN_TESTS(
    cmocka_unit_test(test_reason_cases),
    cmocka_unit_test(test_reasons_beside),
    cmocka_unit_test(test_protected_by_min_runtime),
    cmocka_unit_test(test_waiting_replica_has_a_reason),
    cmocka_unit_test(test_vocabulary)
)
