/*
 * test_apply.c: how drivers turn decisions into their next state
 * (scheduler/apply.c), the cycle's memory (scheduler/arena.c: its blocks,
 * its int arrays grown), and how a kept pending list loses entries
 * (sched__take_out(), cycle.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cmocka_main.h"

#include "sched_int.h"
#include "test_world.h"

static struct sched_decision decision(int kind, int wl, int pod, int node, uint64_t devices)
{
    struct sched_decision d = {kind, SCHED_ACT_ALLOCATE, wl, pod, node, devices, -1};
    return d;
}

/* A decision for the world's one workload g (or, with `next`, for the
 * index after it), applied at 1000 ms times its place in the table, and
 * its code and g's phase after it. */
struct step {
    int kind, pod, node;
    int rc, phase_after;
    int next;
};

/* Builds world (one workload, g) and applies each step: its code and
 * the phase after it as the step says; *w stays built (tw_free). */
static void run_steps(struct tw *w, const char *world, const struct step *steps, size_t n)
{
    size_t i;
    int g;

    tw_build(w, world);
    g = tw_wl(w, "g");
    for (i = 0; i < n; i++) {
        const struct step *s = &steps[i];
        struct sched_decision d = decision(s->kind, g + s->next, s->pod, s->node, 1);
        int rc = sched_apply_decision(w->wl, w->st.n_workloads, &d, 1000 * (int64_t)i);

        if (rc != s->rc || w->wl[g].phase != s->phase_after)
            fail_msg("step %zu: code %d, phase %s; expected %d, %s", i, rc,
                     sched_phase_name(w->wl[g].phase), s->rc, sched_phase_name(s->phase_after));
    }
}

/* A gang of 3 with minimum 2: running from its second pod, pending again
 * when an eviction takes it below. Read as a table. */
static const struct step gang_steps[] = {
    {SCHED_BIND, 0, 0, SCHED_OK, SCHED_PENDING, 0},
    {SCHED_BIND, 1, 1, SCHED_OK, SCHED_RUNNING, 0},
    {SCHED_BIND, 2, 1, SCHED_OK, SCHED_RUNNING, 0},
    {SCHED_EVICT, 2, -1, SCHED_OK, SCHED_RUNNING, 0},  /* elastic pod above the minimum */
    {SCHED_MOVE, 1, 0, SCHED_OK, SCHED_RUNNING, 0},
    {SCHED_EVICT, -1, -1, SCHED_OK, SCHED_PENDING, 0}, /* the whole workload */
};

static void test_gang_phases(void **unused)
{
    struct tw w;

    (void)unused;
    run_steps(&w, "node n1 2; node n2 2; queue p 4; wl g p 3 1 min=2", gang_steps,
              sizeof(gang_steps) / sizeof(gang_steps[0]));
    assert_int_equal(w.wl[0].started_ms, 1000); /* when the second pod made it run */
    assert_int_equal(w.pods[0][0].node, -1);
    tw_free(&w);
}

/* Decisions that name no workload, pod or node of the state, or no kind,
 * are refused and change nothing. */
static const struct step bad_steps[] = {
    {SCHED_BIND, 0, 0, SCHED_EINVAL, SCHED_PENDING, 1}, /* the workload after the last */
    {SCHED_BIND, 1, 0, SCHED_EINVAL, SCHED_PENDING, 0}, /* a pod past n_pods */
    {SCHED_BIND, 0, -1, SCHED_EINVAL, SCHED_PENDING, 0},
    {7, 0, 0, SCHED_EINVAL, SCHED_PENDING, 0},
};

static void test_bad_decisions(void **unused)
{
    struct tw w;

    (void)unused;
    run_steps(&w, "node n1 2; queue p 4; wl g p 1 1", bad_steps,
              sizeof(bad_steps) / sizeof(bad_steps[0]));
    assert_int_equal(sched_apply_decision(w.wl, w.st.n_workloads, NULL, 0), SCHED_EINVAL);
    assert_string_equal(tw_phases(&w, "Pending g"), "");
    tw_free(&w);
}

/* The core refuses a snapshot that breaks its rules instead of guessing. */
static void test_invalid_state(void **unused)
{
    struct tw w;
    int p, t;
    struct sched_result res;

    (void)unused;
    tw_build(&w, "node n1 2; queue p 4; wl t p 1 1 min=2"); /* min above n_pods */
    p = tw_q(&w, "p");
    t = tw_wl(&w, "t");
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

/* A workload whose every list holds something, in storage of its own, so
 * that two copies compare by content. */
struct wcopy {
    struct sched_workload w;
    char name[8], node_type[8], type0[8], type1[8], key[8], v0[8], v1[8];
    int pools[2];
    struct sched_pod pods[2];
    const char *types[2];
    const char *values[2];
    struct sched_match match;
    struct sched_term term;
};

static void wcopy_init(struct wcopy *c)
{
    memset(c, 0, sizeof(*c));
    strcpy(c->name, "w1");
    strcpy(c->node_type, "a100");
    strcpy(c->type0, "h100");
    strcpy(c->type1, "a100");
    strcpy(c->key, "zone");
    strcpy(c->v0, "z1");
    strcpy(c->v1, "z2");
    c->pools[0] = 1;
    c->pools[1] = 0;
    c->pods[0].node = 3;
    c->pods[0].devices = 0x3;
    c->pods[1].node = -1;
    c->types[0] = c->type0;
    c->types[1] = c->type1;
    c->values[0] = c->v0;
    c->values[1] = c->v1;
    c->match = (struct sched_match){c->key, SCHED_OP_IN, c->values, 2};
    c->term = (struct sched_term){&c->match, 1};
    c->w = (struct sched_workload){
        .name = c->name, .queue = 2, .type = SCHED_TRAINING, .priority = 50, .preemptible = 1,
        .phase = SCHED_RUNNING, .n_pods = 2, .min_pods = 1, .gpu_devices = 2, .gpu_portion = 0,
        .cpu_milli = 1000, .mem_mib = 2048, .pools = c->pools, .n_pools = 2,
        .node_type = c->node_type, .queued_seq = 7, .started_ms = 1000,
        .stale_since_ms = SCHED_NO_TIME, .pods = c->pods, .gpu_memory_mib = 0,
        .node_types = c->types, .n_node_types = 2, .affinity = &c->term, .n_affinity = 1};
}

/* One change of one field the core reads, each in a row of the table. */
static void ch_name(struct wcopy *c) { c->name[1] = '2'; }
static void ch_queue(struct wcopy *c) { c->w.queue++; }
static void ch_type(struct wcopy *c) { c->w.type = SCHED_WORKSPACE; }
static void ch_priority(struct wcopy *c) { c->w.priority++; }
static void ch_preemptible(struct wcopy *c) { c->w.preemptible = 0; }
static void ch_phase(struct wcopy *c) { c->w.phase = SCHED_PENDING; }
static void ch_n_pods(struct wcopy *c) { c->w.n_pods = 1; }
static void ch_min_pods(struct wcopy *c) { c->w.min_pods = 2; }
static void ch_gpu_devices(struct wcopy *c) { c->w.gpu_devices = 1; }
static void ch_gpu_portion(struct wcopy *c) { c->w.gpu_portion = 500; }
static void ch_cpu(struct wcopy *c) { c->w.cpu_milli++; }
static void ch_mem(struct wcopy *c) { c->w.mem_mib++; }
static void ch_gpu_memory(struct wcopy *c) { c->w.gpu_memory_mib = 1024; }
static void ch_pool_order(struct wcopy *c) { c->pools[1] = 2; }
static void ch_n_pools(struct wcopy *c) { c->w.n_pools = 1; }
static void ch_pools_default(struct wcopy *c) { c->w.pools = NULL; c->w.n_pools = 0; }
static void ch_node_type(struct wcopy *c) { c->node_type[0] = 'h'; }
static void ch_no_node_type(struct wcopy *c) { c->w.node_type = NULL; }
static void ch_queued_seq(struct wcopy *c) { c->w.queued_seq++; }
static void ch_started(struct wcopy *c) { c->w.started_ms = SCHED_NO_TIME; }
static void ch_stale(struct wcopy *c) { c->w.stale_since_ms = 5; }
static void ch_pod_node(struct wcopy *c) { c->pods[1].node = 4; }
static void ch_pod_devices(struct wcopy *c) { c->pods[0].devices = 0xc; }
static void ch_type_list(struct wcopy *c) { c->type1[0] = 'v'; }
static void ch_n_types(struct wcopy *c) { c->w.n_node_types = 1; }
static void ch_key(struct wcopy *c) { c->key[0] = 'r'; }
static void ch_op(struct wcopy *c) { c->match.op = SCHED_OP_NOT_IN; }
static void ch_value(struct wcopy *c) { c->v1[1] = '3'; }
static void ch_n_values(struct wcopy *c) { c->match.n_values = 1; }
static void ch_n_matches(struct wcopy *c) { c->term.n_matches = 0; }
static void ch_n_affinity(struct wcopy *c) { c->w.n_affinity = 0; }

static void (*const field_changes[])(struct wcopy *) = {
    ch_name, ch_queue, ch_type, ch_priority, ch_preemptible, ch_phase, ch_n_pods, ch_min_pods,
    ch_gpu_devices, ch_gpu_portion, ch_cpu, ch_mem, ch_gpu_memory, ch_pool_order, ch_n_pools,
    ch_pools_default, ch_node_type, ch_no_node_type, ch_queued_seq, ch_started, ch_stale,
    ch_pod_node, ch_pod_devices, ch_type_list, ch_n_types, ch_key, ch_op, ch_value, ch_n_values,
    ch_n_matches, ch_n_affinity,
};

/* Two copies of one workload are the same (by content, not by address);
 * a change of any one field the core reads makes them differ, both ways. */
static void test_workload_same(void **unused)
{
    static struct wcopy a, b;
    size_t i;

    (void)unused;
    wcopy_init(&a);
    wcopy_init(&b);
    assert_true(sched_workload_same(&a.w, &b.w));
    for (i = 0; i < sizeof(field_changes) / sizeof(field_changes[0]); i++) {
        wcopy_init(&b);
        field_changes[i](&b);
        if (sched_workload_same(&a.w, &b.w) || sched_workload_same(&b.w, &a.w))
            fail_msg("change %zu of the table is not seen", i);
    }
}

/* An int array of the arena grown by sched__ints_room(): its first n
 * kept, the rest zeroed, twice the room (at least `least`), or as it was
 * when it has the room. */
static void test_ints_room(void **unused)
{
    struct sched_arena *a = sched_arena_new();
    int *arr = NULL, *was, cap = 0, i;

    (void)unused;
    assert_non_null(a);
    assert_int_equal(sched__ints_room(a, &arr, &cap, 0, 1, 16), SCHED_OK);
    assert_int_equal(cap, 16);
    for (i = 0; i < 16; i++)
        assert_int_equal(arr[i], 0);
    for (i = 0; i < 16; i++)
        arr[i] = 100 + i;
    was = arr;
    assert_int_equal(sched__ints_room(a, &arr, &cap, 16, 16, 16), SCHED_OK);
    assert_ptr_equal(arr, was);   /* room enough: the same array */
    assert_int_equal(sched__ints_room(a, &arr, &cap, 12, 40, 16), SCHED_OK);
    assert_int_equal(cap, 64);
    for (i = 0; i < 64; i++)
        assert_int_equal(arr[i], i < 12 ? 100 + i : 0);
    sched_arena_free(a);
}

/* Entries taken out of a list of 10 (workloads 0..9, kind 100 + w): where
 * the list then begins, and what it holds from there. Read as a table. */
struct take_out_case {
    int gone[4], n_gone, may_shift;
    int begins;
    const char *left;   /* the workloads left, in order, one digit each */
};

static const struct take_out_case take_out_cases[] = {
    {{0}, 0, 1, 0, "0123456789"},          /* nothing gone */
    {{9}, 1, 1, 0, "012345678"},           /* the last: nothing moves */
    {{0}, 1, 1, 1, "123456789"},           /* the first: the list begins after it */
    {{2}, 1, 1, 1, "013456789"},           /* early: the two before it move up */
    {{7}, 1, 1, 0, "012345689"},           /* late: the two after it move down */
    {{2}, 1, 0, 0, "013456789"},           /* early, may not shift: the rest move down */
    {{1, 3, 4}, 3, 1, 3, "0256789"},       /* runs between them move up, in order */
    {{5, 6, 8}, 3, 1, 0, "0123479"},       /* ... or down */
    {{0, 2, 4, 6}, 4, 0, 0, "135789"},
    {{0, 1, 2, 3}, 4, 1, 4, "456789"},
};

static void test_take_out(void **unused)
{
    size_t c;
    int i;

    (void)unused;
    for (c = 0; c < sizeof(take_out_cases) / sizeof(take_out_cases[0]); c++) {
        const struct take_out_case *t = &take_out_cases[c];
        struct sched_pending list[10];
        int kind_of[10], n = (int)strlen(t->left), begins;

        for (i = 0; i < 10; i++) {
            memset(&list[i], 0, sizeof(list[i]));
            list[i].workload = i;
            list[i].request = 1000 + i;
            kind_of[i] = 100 + i;
        }
        begins = sched__take_out(list, kind_of, 10, t->gone, t->n_gone, t->may_shift);
        if (begins != t->begins)
            fail_msg("case %zu: begins at %d, expected %d", c, begins, t->begins);
        for (i = 0; i < n; i++) {
            int w = t->left[i] - '0';
            if (list[begins + i].workload != w || list[begins + i].request != 1000 + w ||
                kind_of[begins + i] != 100 + w)
                fail_msg("case %zu: entry %d holds workload %d (kind %d), expected %d", c, i,
                         list[begins + i].workload, kind_of[begins + i], w);
        }
    }
}

RUN_TESTS(
    cmocka_unit_test(test_gang_phases),
    cmocka_unit_test(test_bad_decisions),
    cmocka_unit_test(test_invalid_state),
    cmocka_unit_test(test_arena),
    cmocka_unit_test(test_arena_blocks),
    cmocka_unit_test(test_workload_same),
    cmocka_unit_test(test_take_out),
    cmocka_unit_test(test_ints_room)
)
