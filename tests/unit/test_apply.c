/*
 * test_apply.c: how drivers turn decisions into their next state
 * (scheduler/apply.c), and the cycle's memory (scheduler/arena.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sched_int.h"
#include "test_world.h"

static struct sched_decision decision(int kind, int wl, int pod, int node, uint64_t devices)
{
    struct sched_decision d = {kind, SCHED_ACT_ALLOCATE, wl, pod, node, devices, -1};
    return d;
}

struct step {
    int kind, pod, node;
    int phase_after;
};

/* A gang of 3 with minimum 2: running from its second pod, pending again
 * when an eviction takes it below. Read as a table. */
static const struct step gang_steps[] = {
    {SCHED_BIND, 0, 0, SCHED_PENDING},
    {SCHED_BIND, 1, 1, SCHED_RUNNING},
    {SCHED_BIND, 2, 1, SCHED_RUNNING},
    {SCHED_EVICT, 2, -1, SCHED_RUNNING},  /* elastic pod above the minimum */
    {SCHED_MOVE, 1, 0, SCHED_RUNNING},
    {SCHED_EVICT, -1, -1, SCHED_PENDING}, /* the whole workload */
};

static void test_gang_phases(void **unused)
{
    struct tw w;
    int p, g;
    size_t i;

    (void)unused;
    tw_init(&w, 1);
    tw_node(&w, "n1", 0, 2);
    tw_node(&w, "n2", 0, 2);
    p = tw_queue(&w, "p", -1, 4, -1, 1);
    g = tw_workload(&w, "g", p, 3, 1, 0, 50);
    w.wl[g].min_pods = 2;
    for (i = 0; i < sizeof(gang_steps) / sizeof(gang_steps[0]); i++) {
        const struct step *s = &gang_steps[i];
        struct sched_decision d = decision(s->kind, g, s->pod, s->node, 1);
        assert_int_equal(sched_apply_decision(w.wl, w.st.n_workloads, &d, 1000 * (int64_t)i),
                         SCHED_OK);
        if (w.wl[g].phase != s->phase_after)
            fail_msg("step %zu: phase %s, expected %s", i, sched_phase_name(w.wl[g].phase),
                     sched_phase_name(s->phase_after));
    }
    assert_int_equal(w.wl[g].started_ms, 1000); /* when the second pod made it run */
    assert_int_equal(w.pods[g][0].node, -1);
    tw_free(&w);
}

static void test_bad_decisions(void **unused)
{
    struct tw w;
    int p, t;
    struct sched_decision d;

    (void)unused;
    tw_init(&w, 1);
    tw_node(&w, "n1", 0, 2);
    p = tw_queue(&w, "p", -1, 4, -1, 1);
    t = tw_workload(&w, "t", p, 1, 1, 0, 50);
    d = decision(SCHED_BIND, t + 1, 0, 0, 1);
    assert_int_equal(sched_apply_decision(w.wl, w.st.n_workloads, &d, 0), SCHED_EINVAL);
    d = decision(SCHED_BIND, t, 1, 0, 1);
    assert_int_equal(sched_apply_decision(w.wl, w.st.n_workloads, &d, 0), SCHED_EINVAL);
    d = decision(SCHED_BIND, t, 0, -1, 1);
    assert_int_equal(sched_apply_decision(w.wl, w.st.n_workloads, &d, 0), SCHED_EINVAL);
    d = decision(7, t, 0, 0, 1);
    assert_int_equal(sched_apply_decision(w.wl, w.st.n_workloads, &d, 0), SCHED_EINVAL);
    assert_int_equal(sched_apply_decision(w.wl, w.st.n_workloads, NULL, 0), SCHED_EINVAL);
    assert_int_equal(w.wl[t].phase, SCHED_PENDING);
    tw_free(&w);
}

/* The core refuses a snapshot that breaks its rules instead of guessing. */
static void test_invalid_state(void **unused)
{
    struct tw w;
    int p, t;
    struct sched_result res;

    (void)unused;
    tw_init(&w, 1);
    tw_node(&w, "n1", 0, 2);
    p = tw_queue(&w, "p", -1, 4, -1, 1);
    t = tw_workload(&w, "t", p, 1, 1, 0, 50);
    w.wl[t].min_pods = 2; /* above n_pods */
    assert_int_equal(sched_cycle(&w.st, NULL, w.arena, &res), SCHED_EINVAL);
    w.wl[t].min_pods = 1;
    w.wl[t].gpu_portion = 500; /* a portion and GPU memory together */
    w.wl[t].gpu_memory_mib = 20000;
    assert_int_equal(sched_cycle(&w.st, NULL, w.arena, &res), SCHED_EINVAL);
    w.wl[t].gpu_portion = 0;
    w.wl[t].gpu_memory_mib = -1; /* negative memory */
    assert_int_equal(sched_cycle(&w.st, NULL, w.arena, &res), SCHED_EINVAL);
    w.wl[t].gpu_memory_mib = 0;
    w.wl[t].n_affinity = 1; /* terms promised, none given */
    assert_int_equal(sched_cycle(&w.st, NULL, w.arena, &res), SCHED_EINVAL);
    w.wl[t].n_affinity = 0;
    w.queues[p].parent = p; /* a cycle in the tree */
    assert_int_equal(sched_cycle(&w.st, NULL, w.arena, &res), SCHED_EINVAL);
    tw_free(&w);
}

static void test_arena(void **unused)
{
    struct sched_arena *a = sched_arena_new();
    struct sched_result res;
    struct tw w;
    size_t peak;

    (void)unused;
    assert_non_null(a);
    sched_arena_free(NULL);
    tw_init(&w, 1);
    tw_node(&w, "n1", 0, 2);
    tw_workload(&w, "t", tw_queue(&w, "p", -1, 4, -1, 1), 1, 1, 0, 50);
    assert_int_equal(sched_cycle(&w.st, NULL, a, &res), SCHED_OK);
    peak = sched_arena_peak(a);
    assert_true(peak > 0);
    sched_arena_reset(a);
    assert_int_equal(sched_cycle(&w.st, NULL, a, &res), SCHED_OK);
    assert_int_equal(sched_arena_peak(a), peak); /* the same cycle needs the same memory */
    assert_int_equal(res.n_decisions, 1);
    sched_arena_free(a);
    tw_free(&w);
}

/* Allocations of every size, which fill blocks, leave nearly full ones
 * aside (arena.c, Invariant 4) and ask for blocks larger than one, are
 * aligned, zero-filled and apart, again after a reset that reuses them. */
static void test_arena_blocks(void **unused)
{
    static const size_t sizes[] = {1000000, 40000, 16, 3000000, 24000, 1, 900000, 70000, 200, 48};
    struct sched_arena *a = sched_arena_new();
    unsigned char *p[40];
    size_t n, k;
    int round, i, dirty;

    (void)unused;
    for (round = 0; round < 2; round++) {
        for (i = 0; i < 40; i++) {
            n = sizes[i % 10];
            /* every third one not zeroed; the others must come zeroed even
             * where the first round wrote (the blocks are kept) */
            p[i] = i % 3 == 2 ? sched__array_raw(a, n, 1) : sched__alloc(a, n);
            assert_non_null(p[i]);
            assert_int_equal((uintptr_t)p[i] % 16, 0);
            for (k = 0, dirty = 0; i % 3 != 2 && k < n; k++)
                dirty |= p[i][k];
            assert_int_equal(dirty, 0);
            memset(p[i], i + 1, n);
        }
        for (i = 0; i < 40; i++) {   /* no later allocation wrote over it */
            n = sizes[i % 10];
            assert_int_equal(p[i][0], i + 1);
            assert_int_equal(p[i][n - 1], i + 1);
        }
        sched_arena_reset(a);
    }
    assert_null(sched__array_raw(a, SIZE_MAX / 8 + 1, 16));   /* count x size overflows */
    sched_arena_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gang_phases),
        cmocka_unit_test(test_bad_decisions),
        cmocka_unit_test(test_invalid_state),
        cmocka_unit_test(test_arena),
        cmocka_unit_test(test_arena_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
