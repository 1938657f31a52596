/*
 * test_fairshare.c: fair-share division (scheduler/fairshare.c) against
 * the worked examples of kai-scheduling.md section 2.2, plus the
 * hierarchy, oversubscription and time-based cases.
 *
 * Each row builds one pool with one node of `total` GPUs and sibling
 * queues whose demand is one elastic workload of `request` 1-GPU pods,
 * runs one cycle, and compares the recorded GPU fair shares.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cmocka_main.h"
#include <stdio.h>
#include <string.h>

#include "sched.h"

#define MAXQ 4

struct row {
    const char *what;
    int total;
    int n;                          /* queues */
    int deserved[MAXQ], limit[MAXQ], weight[MAXQ], rank[MAXQ], request[MAXQ];
    int expect[MAXQ];
};

static const struct row rows[] = {
    {"requests capped", 15, 2, {2, 2}, {-1, -1}, {2, 2}, {0, 0}, {6, 6}, {6, 6}},
    {"weights 1/3", 8, 2, {2, 2}, {-1, -1}, {1, 3}, {0, 0}, {6, 6}, {3, 5}},
    {"limit of q1 = 5", 12, 2, {2, 2}, {5, -1}, {2, 2}, {0, 0}, {6, 6}, {5, 6}},
    {"largest remainder", 11, 2, {2, 2}, {-1, -1}, {1, 4}, {0, 0}, {10, 10}, {3, 8}},
    {"tie goes to the older queue", 11, 2, {2, 2}, {-1, -1}, {2, 2}, {0, 0}, {6, 6}, {6, 5}},
    {"rank does not touch deserved", 4, 2, {2, 2}, {-1, -1}, {2, 2}, {1, 2}, {6, 6}, {2, 2}},
    {"higher rank takes all spare", 6, 2, {2, 2}, {-1, -1}, {100, 1}, {1, 2}, {6, 6}, {2, 4}},
    {"three queues, two ranks", 5, 3, {2, 2, 1}, {-1, -1, -1}, {2, 2, 2}, {2, 2, 1}, {5, 5, 0},
     {3, 2, 0}},
    {"oversubscribed: no over-quota pass", 4, 2, {3, 3}, {-1, -1}, {1, 1}, {0, 0}, {6, 6}, {3, 3}},
    {"weight 0 gets no spare", 8, 2, {1, 1}, {-1, -1}, {0, 1}, {0, 0}, {6, 6}, {1, 6}},
    {"limit 0 gets nothing", 8, 2, {2, 2}, {0, -1}, {1, 1}, {0, 0}, {6, 6}, {0, 6}},
    {"unlimited deserved", 8, 2, {-1, 2}, {-1, -1}, {1, 1}, {0, 0}, {6, 6}, {6, 2}},
};

struct world {
    struct sched_pool pool;
    struct sched_node node;
    struct sched_queue queues[MAXQ + 1];
    struct sched_quota quota[MAXQ + 1][SCHED_NRES];
    struct sched_workload wl[MAXQ + 1];
    struct sched_pod pods[MAXQ + 1][16];
    char names[MAXQ + 1][16];
    struct sched_state state;
};

static void quota_set(struct sched_quota *q, int64_t deserved, int64_t limit, int64_t weight)
{
    q[SCHED_GPU].deserved = deserved;
    q[SCHED_GPU].limit = limit;
    q[SCHED_GPU].weight = weight;
    q[SCHED_CPU].deserved = q[SCHED_MEM].deserved = 0;
    q[SCHED_CPU].limit = q[SCHED_MEM].limit = -1;
    q[SCHED_CPU].weight = q[SCHED_MEM].weight = 1000;
}

static void build(struct world *w, const struct row *r)
{
    int i, k;

    memset(w, 0, sizeof(*w));
    w->pool.name = "default";
    w->node.name = "node-1";
    w->node.ready = 1;
    w->node.n_gpus = r->total;
    w->node.cpu_milli = w->node.mem_mib = SCHED_UNLIMITED;
    for (i = 0; i < r->n; i++) {
        snprintf(w->names[i], sizeof(w->names[i]), "q%d", i + 1);
        quota_set(w->quota[i], r->deserved[i] < 0 ? -1 : r->deserved[i] * 1000,
                  r->limit[i] < 0 ? -1 : r->limit[i] * 1000, r->weight[i] * 1000);
        w->queues[i].name = w->names[i];
        w->queues[i].parent = -1;
        w->queues[i].rank = r->rank[i];
        w->queues[i].quota = &w->quota[i][0];
        w->wl[i].name = w->names[i];
        w->wl[i].queue = i;
        w->wl[i].priority = 50;
        w->wl[i].preemptible = 1;
        w->wl[i].n_pods = r->request[i] > 0 ? r->request[i] : 1;
        w->wl[i].min_pods = 1;
        w->wl[i].gpu_devices = r->request[i] > 0 ? 1 : 0;
        w->wl[i].queued_seq = i;
        w->wl[i].started_ms = w->wl[i].stale_since_ms = SCHED_NO_TIME;
        w->wl[i].phase = r->request[i] > 0 ? SCHED_PENDING : SCHED_COMPLETED;
        w->wl[i].pods = w->pods[i];
        for (k = 0; k < 16; k++)
            w->pods[i][k].node = -1;
    }
    w->state.pools = &w->pool;
    w->state.n_pools = 1;
    w->state.nodes = &w->node;
    w->state.n_nodes = 1;
    w->state.queues = w->queues;
    w->state.n_queues = r->n;
    w->state.workloads = w->wl;
    w->state.n_workloads = r->n;
}

static void test_worked_examples(void **unused)
{
    size_t i;
    int q;

    (void)unused;
    for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct world w;
        struct sched_result res;
        struct sched_arena *arena = sched_arena_new();

        build(&w, &rows[i]);
        assert_int_equal(sched_cycle(&w.state, NULL, arena, &res), SCHED_OK);
        for (q = 0; q < rows[i].n; q++) {
            int64_t got = sched_result_share(&res, q, 0)->fair[SCHED_GPU];
            if (got != rows[i].expect[q] * 1000)
                fail_msg("%s: q%d fair share %lld, expected %d000", rows[i].what, q + 1,
                         (long long)got, rows[i].expect[q]);
        }
        sched_arena_free(arena);
    }
}

/* Two departments with two projects each: the department's share is what
 * its projects divide (scenario 08's numbers). */
static void test_two_levels(void **unused)
{
    struct world w;
    struct sched_result res;
    struct sched_arena *arena = sched_arena_new();
    struct sched_queue queues[5];
    struct sched_quota quota[5][SCHED_NRES];
    struct sched_workload wl[3];
    struct sched_pod pods[3][16];
    const int request[3] = {8, 4, 2}; /* p1, p2 in d1; p3 in d2 */
    int i, k;

    (void)unused;
    build(&w, &rows[0]);
    w.node.n_gpus = 8;
    memset(queues, 0, sizeof(queues));
    for (i = 0; i < 5; i++)
        queues[i].quota = &quota[i][0];
    queues[0] = (struct sched_queue){"d1", -1, 0, &quota[0][0], NULL, 0, NULL};
    queues[1] = (struct sched_queue){"d2", -1, 0, &quota[1][0], NULL, 0, NULL};
    queues[2] = (struct sched_queue){"p1", 0, 0, &quota[2][0], NULL, 0, NULL};
    queues[3] = (struct sched_queue){"p2", 0, 0, &quota[3][0], NULL, 0, NULL};
    queues[4] = (struct sched_queue){"p3", 1, 0, &quota[4][0], NULL, 0, NULL};
    quota_set(quota[0], 4000, -1, 1000);
    quota_set(quota[1], 4000, -1, 1000);
    quota_set(quota[2], 2000, -1, 1000);
    quota_set(quota[3], 2000, -1, 1000);
    quota_set(quota[4], 4000, -1, 1000);
    for (i = 0; i < 3; i++) {
        wl[i] = w.wl[0];
        wl[i].name = queues[2 + i].name;
        wl[i].queue = 2 + i;
        wl[i].n_pods = request[i];
        wl[i].queued_seq = i;
        wl[i].pods = pods[i];
        for (k = 0; k < 16; k++)
            pods[i][k].node = -1;
    }
    w.state.queues = queues;
    w.state.n_queues = 5;
    w.state.workloads = wl;
    w.state.n_workloads = 3;
    assert_int_equal(sched_cycle(&w.state, NULL, arena, &res), SCHED_OK);
    assert_int_equal(sched_result_share(&res, 0, 0)->fair[SCHED_GPU], 6000); /* d1 */
    assert_int_equal(sched_result_share(&res, 1, 0)->fair[SCHED_GPU], 2000); /* d2 */
    assert_int_equal(sched_result_share(&res, 2, 0)->fair[SCHED_GPU], 3000); /* p1 */
    assert_int_equal(sched_result_share(&res, 3, 0)->fair[SCHED_GPU], 3000); /* p2 */
    assert_int_equal(sched_result_share(&res, 4, 0)->fair[SCHED_GPU], 2000); /* p3 */
    sched_arena_free(arena);
}

/* Time-based fairshare: scenario 11's numbers. p1 used the whole pool for
 * the whole window, p2 nothing: weights become 0 and 1. */
static void test_time_based(void **unused)
{
    struct world w;
    struct sched_result res;
    struct sched_arena *arena = sched_arena_new();
    struct sched_usage usage = {0, 0, 0, 36000000, {8000, 0, 0}};
    const struct row r = {"tbf", 8, 2, {0, 0}, {-1, -1}, {1, 1}, {0, 0}, {8, 8}, {0, 8}};

    (void)unused;
    build(&w, &r);
    w.pool.tbf_enabled = 1;
    w.pool.tbf_window_ms = 36000000;
    w.pool.tbf_k_milli = 1000;
    w.state.now_ms = 36000000;
    w.state.usage = &usage;
    w.state.n_usage = 1;
    assert_int_equal(sched_cycle(&w.state, NULL, arena, &res), SCHED_OK);
    assert_int_equal(sched_result_share(&res, 0, 0)->fair[SCHED_GPU], 0);
    assert_int_equal(sched_result_share(&res, 1, 0)->fair[SCHED_GPU], 8000);
    /* Without the history the split is even again. */
    w.state.n_usage = 0;
    assert_int_equal(sched_cycle(&w.state, NULL, arena, &res), SCHED_OK);
    assert_int_equal(sched_result_share(&res, 0, 0)->fair[SCHED_GPU], 4000);
    assert_int_equal(sched_result_share(&res, 1, 0)->fair[SCHED_GPU], 4000);
    sched_arena_free(arena);
}

RUN_TESTS(
    cmocka_unit_test(test_worked_examples),
    cmocka_unit_test(test_two_levels),
    cmocka_unit_test(test_time_based)
)
