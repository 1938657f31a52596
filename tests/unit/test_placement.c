/*
 * test_placement.c: where pods go (scheduler/placement.c): bin-pack and
 * spread per pool, device choice for whole and fractional requests,
 * node-type affinity (types in order or ranked alike), all-or-nothing
 * gangs, pool preference order; and
 * whether a gang fits as things are (scheduler/capacity.c,
 * sched__all_fit_as_is()) against placing it pod by pod, a GPU-memory
 * pod's charge against its limit included; the pool's node
 * index against a walk of the pool.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cmocka_main.h"

#include "sched_int.h"
#include "test_world.h"

/* Each case: the world and its script, then where pods went (node, and
 * device mask) and who waits. */
static const struct tw_case placement_cases[] = {
    {"bin-pack: the fullest node that fits, ties by name",
     "node pk-2 4; node pk-1 4; queue p 8; wl j1 p 1 1; wl j2 p 1 1; settle",
     "@pk-1:0x1 j1; @pk-1:0x2 j2"},
    {"spread: the emptiest node",
     "pool 0 placement=spread; node sp-1 4; node sp-2 4; queue p 8; wl s1 p 1 1; wl s2 p 1 1;"
     " settle",
     "@sp-1 s1; @sp-2 s2"},
    /* f2 on the fullest device with room, f3 on another (0.5 + 0.3 + 0.3
     * > 1), two on the empty devices only, whole finds none */
    {"fractions share a device, whole GPUs need empty ones",
     "node node-1 4; queue p 4; wl f1 p 1 0 portion=500; wl f2 p 1 0 portion=300;"
     " wl f3 p 1 0 portion=300; settle; expect @node-1:0x1 f1 f2; expect @node-1:0x2 f3;"
     " wl two p 1 2; settle; expect @node-1:0xc two; wl whole p 1 1; settle",
     "Pending whole"},
    {"a node type narrows the nodes",
     "node a-node 2; node b-node 2 type=dgx; queue p 4; wl a p 1 1 type=dgx;"
     " wl h p 1 1 type=h100; settle",
     "@b-node a; why=NoMatchingNodePool h"},
    /* w1 and w2 follow the project's order (pool-b, then default); w3
     * may use pool-b only, which is full */
    {"pool preference order",
     "pools 2; node d-1 2; node b-1 2 pool=1; queue p 2 pools=1,0; wl w1 p 1 2; wl w2 p 1 2;"
     " wl w3 p 1 1 pools=1; settle",
     "@b-1 w1; @d-1 w2; Pending w3"},
};

static struct tw_table placements = TW_TABLE(placement_cases);

/* Node types in order: the first type is taken even where bin-packing
 * would pick a fuller node of the second. Ranked alike (node_types_alike,
 * a trace's gpu_spec), the pool's strategy picks among both types, so the
 * pod joins the fuller node. Two workloads whose constraints differ only
 * in that flag are placed in one cycle each by its own rule (they are not
 * one class). */
static void test_node_types_alike(void **unused)
{
    static const char *const both[] = {"big", "small"};
    struct tw w;
    int held, first, alike;

    (void)unused;
    tw_build(&w, "node b-1 8 type=big; node s-1 8 type=small; queue p 16;"
                 " wl held p 1 6 on=s-1:0x3f; wl first p 1 1; wl alike p 1 1");
    held = tw_wl(&w, "held");
    first = tw_wl(&w, "first");
    alike = tw_wl(&w, "alike");
    w.wl[held].node_type = "small";
    w.wl[first].node_types = w.wl[alike].node_types = both;
    w.wl[first].n_node_types = w.wl[alike].n_node_types = 2;
    w.wl[alike].node_types_alike = 1;
    tw_settle(&w);
    assert_int_equal(w.wl[first].phase, SCHED_RUNNING);
    assert_int_equal(w.wl[alike].phase, SCHED_RUNNING);
    assert_int_equal(w.pods[first][0].node, tw_n(&w, "b-1"));   /* big, the first type */
    assert_int_equal(w.pods[alike][0].node, tw_n(&w, "s-1"));   /* the fuller node */
    tw_free(&w);
}

/* A gang is placed whole or not at all: nothing bound until a fourth
 * node makes room for all four pods. */
static void test_gang_all_or_nothing(void **unused)
{
    struct tw w;

    (void)unused;
    tw_build(&w, "node n1 2; node n2 2; node n3 2; queue p 8; wl g p 4 2");
    assert_int_equal(tw_cycle(&w), 0);
    assert_string_equal(tw_phases(&w, "Pending g; @nowhere g"), "");
    tw_more(&w, "node n4 2; settle");
    assert_string_equal(tw_phases(&w, "Running g"), "");
    tw_free(&w);
}

/* Leaves a pattern on the stack below the caller, where the cycle's own
 * frames will lie. */
__attribute__((noinline)) static void stack_dirty(void)
{
    volatile unsigned char bytes[16384];
    size_t i;

    for (i = 0; i < sizeof(bytes); i++)
        bytes[i] = 0xAA;
}

/* A decision's bytes are its fields and zeros (sched.h invariant 2:
 * results compare byte for byte; a padding byte taken from the stack made
 * a cycle and the incremental path differ in clang's -O0 build). */
static void test_decision_padding_is_zero(void **unused)
{
    struct sched_decision zero;
    const unsigned char *got;
    struct tw w;
    size_t b;
    int k;

    (void)unused;
    tw_build(&w, "node n1 4; node n2 4; queue p 8; wl a p 1 1; wl b p 2 2");
    stack_dirty();
    assert_int_equal(tw_cycle(&w), 3);
    for (k = 0; k < w.res.n_decisions; k++) {
        memset(&zero, 0, sizeof(zero));
        zero.kind = w.res.decisions[k].kind;
        zero.action = w.res.decisions[k].action;
        zero.workload = w.res.decisions[k].workload;
        zero.pod = w.res.decisions[k].pod;
        zero.node = w.res.decisions[k].node;
        zero.devices = w.res.decisions[k].devices;
        zero.by_workload = w.res.decisions[k].by_workload;
        got = (const unsigned char *)&w.res.decisions[k];
        for (b = 0; b < sizeof(zero); b++)
            assert_int_equal(got[b], ((const unsigned char *)&zero)[b]);
    }
    tw_free(&w);
}

/* sched__all_fit_as_is() says what placing the gang pod by pod
 * (sched__place_pods()) finds: n1 4 GPUs with 2 used, n2 2 GPUs and 1,000
 * millicores, n3 8 GPUs with 7 used, n4 4 empty GPUs but not ready. */
static void test_all_fit_as_is(void **unused)
{
    static const struct {
        int pods, gpus;
        int64_t portion, cpu;
        int want;   /* 1 fit, 0 not, -1 unknown */
    } cases[] = {
        {2, 2, 0, 0, 1},      /* n1 and n2 take one each */
        {3, 2, 0, 0, 0},      /* n3 has one empty device, n4 is not ready */
        {5, 1, 0, 0, 1},      /* 2 + 2 + 1 */
        {6, 1, 0, 0, 0},
        {4, 1, 0, 600, 1},    /* n2 holds one 600-millicore pod: 2 + 1 + 1 */
        {5, 1, 0, 600, 0},
        {3, 0, 0, 400, 1},    /* CPU only: n2 two, n1 and n3 plenty */
        {2, 0, 500, 0, -1},   /* shared devices: unknown */
        {1, 1, 0, 0, 1},      /* one pod: the first node that fits */
    };
    size_t i;

    (void)unused;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct tw w;
        struct sched_session ss;
        char gang[128];
        int g, got;

        tw_build(&w, "node n1 4; node n2 2 cpu=1000; node n3 8; node n4 4 ready=0; queue p -1;"
                     " wl b1 p 1 2 on=n1:0x3; wl b3 p 1 7 on=n3:0x7f");
        snprintf(gang, sizeof(gang), "wl g p %d %d portion=%lld cpu=%lld", cases[i].pods,
                 cases[i].gpus, (long long)cases[i].portion, (long long)cases[i].cpu);
        tw_more(&w, gang);
        g = tw_wl(&w, "g");
        assert_int_equal(sched__session_build(&ss, &w.st, NULL, w.arena), SCHED_OK);
        got = sched__all_fit_as_is(&ss, g, 0, cases[i].pods);
        assert_int_equal(got, cases[i].want);
        if (got >= 0)
            assert_int_equal(sched__place_pods(&ss, g, 0, cases[i].pods, SCHED_ACT_ALLOCATE), got);
        tw_free(&w);
    }
}

/* A GPU-memory pod is charged by the device it lands on, so the fit test
 * (sched__fits_somewhere()) says what sched__place_pods() does, limits
 * included; and where the charge breaks only the limit, a preempt of the
 * project's own work makes the room. Pool 0: n1, 2 devices of 40,000 MiB,
 * device 0 held by b (1 GPU, priority 25); pool 1: n2, 1 device of
 * 80,000 MiB held by another project, which sets the estimate before
 * placement (30,000 MiB: 375 milli-GPU; on n1: 750). */
static void test_memory_fit_as_allocate(void **unused)
{
    static const struct {
        double limit;     /* the project's GPU limit in GPUs, -1 none */
        int64_t mib;      /* g's request per pod */
        int fits;         /* fit test and allocate, as things are */
        int evicts_b;     /* the cycle preempts b for g */
    } cases[] = {
        {-1, 30000, 1, 0},    /* 1,000 + 750 under no limit */
        {2, 30000, 1, 0},     /* 1,750 of 2,000 */
        {1.5, 20000, 1, 0},   /* 1,500 of 1,500 */
        {1.5, 30000, 0, 1},   /* 1,750 of 1,500 (the estimate, 1,375, would pass) */
        {1.5, 50000, 0, 0},   /* no device of n1 holds it, nor would evicting b help */
    };
    size_t i;

    (void)unused;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct tw w;
        struct sched_session ss;
        char world[384];
        int g;

        snprintf(world, sizeof(world),
                 "pools 2; node n1 2 gpumem=40000; node n2 1 pool=1 gpumem=80000;"
                 " queue p -1 limit=%g; queue o -1; wl b p 1 1 prio=25 on=n1:0x1;"
                 " wl h o 1 1 on=n2:0x1; wl g p 1 0 prio=130 gpumem=%lld pools=0,1",
                 cases[i].limit, (long long)cases[i].mib);
        tw_build(&w, world);
        g = tw_wl(&w, "g");
        assert_int_equal(sched__session_build(&ss, &w.st, NULL, w.arena), SCHED_OK);
        assert_int_equal(sched__fits_somewhere(&ss, g, 0), cases[i].fits);
        assert_int_equal(sched__all_fit_as_is(&ss, g, 0, 1), cases[i].fits);
        assert_int_equal(sched__place_pods(&ss, g, 0, 1, SCHED_ACT_ALLOCATE), cases[i].fits);
        assert_true(tw_cycle(&w) >= 0);
        assert_int_equal(tw_evicted(&w, tw_wl(&w, "b")), cases[i].evicts_b);
        tw_free(&w);
    }
}

/* The best node by a walk of the pool, as placement.c's opening comment
 * orders them for a whole-device pod: the lowest rank, then the fullest
 * (binpack) or the highest free ratio (spread), then the name. */
static int walk_best(const struct sched_session *ss, int w, int pool, int exclude)
{
    const struct ss_pool *p = &ss->pools[pool];
    int spread = ss->in->pools[pool].gpu_placement == SCHED_SPREAD, best = -1, i;

    for (i = 0; i < p->n_nodes; i++) {
        int n = p->nodes[i], ra, rb;
        const struct ss_node *a = &ss->nodes[n], *b;
        __int128 l, r;
        if (n == exclude || !sched__pod_fits_node(ss, w, n))
            continue;
        if (best < 0) {
            best = n;
            continue;
        }
        b = &ss->nodes[best];
        ra = sched__node_rank(ss, w, n);
        rb = sched__node_rank(ss, w, best);
        l = spread ? (__int128)a->gpu_free * b->n_gpus : -(__int128)a->gpu_free;
        r = spread ? (__int128)b->gpu_free * a->n_gpus : -(__int128)b->gpu_free;
        if (ra < rb || (ra == rb && (l > r || (l == r && a->name_rank < b->name_rank))))
            best = n;
    }
    return best;
}

/* sched__best_node() answers a whole-device pod from the pool's node index
 * (struct ss_node_index): after every placement, removal and rollback of a
 * random walk, on a binpack and a spread pool of nodes of 2, 4 and 8 GPUs
 * (some devices shared, one charged twice over its capacity), it names the
 * node the walk of the pool names, for pods of 1 to 8 devices, with and
 * without a node left out, and for a pod preferring one node type. */
/* 600 random steps on 16 nodes in 2 pools: a pod of fill placed where it
 * fits, or taken off (one time in unplace_in), with marks and rollbacks;
 * after each, sched__best_node() for each of the 5 probes, with and
 * without an excluded node, is walk's answer. */
static void random_steps(struct sched_session *ss, const int *fill, int n_fill,
                         const int *probe, int (*walk)(const struct sched_session *, int, int, int),
                         uint64_t rnd, int unplace_in)
{
    struct ss_mark mark = {0, 0, 0};
    int step, pool, i;

    for (step = 0; step < 600; step++) {
        int f, k, node;
        rnd = rnd * 6364136223846793005ULL + 1442695040888963407ULL;
        f = fill[(rnd >> 33) % (uint64_t)n_fill];
        k = (int)((rnd >> 40) % TW_PODS);
        node = (int)((rnd >> 48) % 16);
        if (step % 40 == 0)
            mark = sched__mark(ss);
        else if (step % 40 == 30 && (rnd >> 20) % 2)
            sched__rollback(ss, mark);
        else if (ss->pods[f][k].node >= 0 && (rnd >> 24) % (uint64_t)unplace_in == 0)
            assert_int_equal(sched__unplace(ss, f, k), SCHED_OK);
        else if (ss->pods[f][k].node < 0 && sched__pod_fits_node(ss, f, node))
            assert_int_equal(sched__place(ss, f, k, node, sched__choose_devices(ss, f, node)),
                             SCHED_OK);
        for (pool = 0; pool < 2; pool++)
            for (i = 0; i < 5; i++) {
                assert_int_equal(sched__best_node(ss, probe[i], pool, -1),
                                 walk(ss, probe[i], pool, -1));
                assert_int_equal(sched__best_node(ss, probe[i], pool, node),
                                 walk(ss, probe[i], pool, node));
            }
    }
}

static void test_node_index_matches_walk(void **unused)
{
    static const char *names[] = {"n00", "n01", "n02", "n03", "n04", "n05", "n06", "n07",
                                  "n08", "n09", "n10", "n11", "n12", "n13", "n14", "n15"};
    static const char *types[] = {"small", "big"};
    static const char *const prefer[] = {"big", "small"};
    struct tw w;
    struct sched_session ss;
    int q, i, fill[16], probe[5], n_fill = 0;

    (void)unused;
    tw_init(&w, 2);
    w.pools[1].gpu_placement = SCHED_SPREAD;
    for (i = 0; i < 16; i++) {
        tw_node(&w, names[i], i % 2, (int[]){2, 4, 8}[i % 3]);
        w.nodes[i].node_type = types[i % 3 == 2];
    }
    q = tw_queue(&w, "p", -1, -1, -1, 1);
    for (i = 0; i < 5; i++)
        probe[i] = tw_workload(&w, names[i], q, 1, (int[]){1, 2, 4, 8, 2}[i], 0, 50);
    w.wl[probe[4]].node_types = prefer;   /* rank 1 on big nodes, 2 on small */
    w.wl[probe[4]].n_node_types = 2;
    for (i = 0; i < 16; i++) {
        fill[n_fill] = tw_workload(&w, names[i], q, TW_PODS, 1 + i % 3, i % 5 == 4 ? 300 : 0, 50);
        if (w.wl[fill[n_fill]].gpu_portion > 0)
            w.wl[fill[n_fill]].gpu_devices = 1;
        n_fill++;
    }
    tw_running(&w, fill[0], 0, 0, 0x1);   /* n00's device 0 charged twice */
    tw_running(&w, fill[3], 0, 0, 0x1);
    assert_int_equal(sched__session_build(&ss, &w.st, NULL, w.arena), SCHED_OK);
    random_steps(&ss, fill, n_fill, probe, walk_best, 42, 1);
    tw_free(&w);
}

/* sched__best_node() in a fragmentation pool, by the full comparison of
 * every node of the pool (sched__candidate_better()). */
static int walk_candidates(const struct sched_session *ss, int w, int pool, int exclude)
{
    const struct ss_pool *p = &ss->pools[pool];
    struct ss_cand best, c;
    int i;

    best.node = -1;
    for (i = 0; i < p->n_nodes; i++)
        if (p->nodes[i] != exclude && sched__candidate(ss, w, p->nodes[i], &c) &&
            (best.node < 0 || sched__candidate_better(ss, w, &c, &best)))
            best = c;
    return best.node;
}

/* Fragmentation pools compare a whole-device pod's nodes by state: nodes
 * in one state go by name, a state that lost loses again. Nodes of a few
 * kinds (many alike, CPU that runs short, memory that only changes the
 * state) take and give back pods at
 * random, with rollbacks; the answer is the walk's, for whole-device,
 * shared and node-type-preferring pods, with and without `exclude`. */
static void test_frag_by_state_matches_walk(void **unused)
{
    static const char *names[] = {"n00", "n01", "n02", "n03", "n04", "n05", "n06", "n07",
                                  "n08", "n09", "n10", "n11", "n12", "n13", "n14", "n15"};
    static const char *types[] = {"small", "big"};
    static const char *const prefer[] = {"big", "small"};
    static const struct { int gpus; int64_t portion, cpu, weight; } shapes[] = {
        {1, 0, 4000, 5}, {2, 0, 16000, 3}, {4, 0, 8000, 1}, {1, 500, 2000, 4},
    };
    static const struct { int gpus; int64_t portion, cpu; } probes[] = {
        {1, 0, 4000}, {2, 0, 12000}, {4, 0, 0}, {1, 250, 1000}, {1, 0, 8000},
    };
    struct sched_mix_entry mix[4];
    struct tw w;
    struct sched_session ss;
    int q, i, fill[12], probe[5];

    (void)unused;
    tw_init(&w, 2);
    w.pools[0].gpu_placement = w.pools[1].gpu_placement = SCHED_FRAGMENTATION;
    memset(mix, 0, sizeof(mix));
    for (i = 0; i < 4; i++) {
        mix[i].shape.gpu_devices = shapes[i].gpus;
        mix[i].shape.gpu_portion = shapes[i].portion;
        mix[i].shape.cpu_milli = shapes[i].cpu;
        mix[i].weight = shapes[i].weight;
    }
    w.st.mix = mix;
    w.st.n_mix = 4;
    for (i = 0; i < 16; i++) {
        tw_node(&w, names[i], i % 2, i % 4 == 3 ? 8 : 4);
        w.nodes[i].cpu_milli = i % 4 == 3 ? 32000 : 48000;
        if (i % 3 == 0)   /* another state, measured alike: the name decides */
            w.nodes[i].mem_mib = 512000;
        w.nodes[i].node_type = types[i % 5 == 4];
    }
    q = tw_queue(&w, "p", -1, -1, -1, 1);
    for (i = 0; i < 5; i++) {
        probe[i] = tw_workload(&w, names[i], q, 1, probes[i].gpus, probes[i].portion, 50);
        w.wl[probe[i]].cpu_milli = probes[i].cpu;
    }
    w.wl[probe[4]].node_types = prefer;   /* rank 1 on big nodes, 2 on small */
    w.wl[probe[4]].n_node_types = 2;
    for (i = 0; i < 12; i++) {
        fill[i] = tw_workload(&w, names[i], q, TW_PODS, 1 + i % 2, i % 4 == 3 ? 500 : 0, 50);
        w.wl[fill[i]].cpu_milli = (int64_t)(i % 3) * 6000;
    }
    assert_int_equal(sched__session_build(&ss, &w.st, NULL, w.arena), SCHED_OK);
    random_steps(&ss, fill, 12, probe, walk_candidates, 7, 3);
    tw_free(&w);
}

RUN_TESTS(
    cmocka_unit_test_prestate(tw_test_cases, &placements),
    cmocka_unit_test(test_node_types_alike),
    cmocka_unit_test(test_gang_all_or_nothing),
    cmocka_unit_test(test_decision_padding_is_zero),
    cmocka_unit_test(test_all_fit_as_is),
    cmocka_unit_test(test_memory_fit_as_allocate),
    cmocka_unit_test(test_node_index_matches_walk),
    cmocka_unit_test(test_frag_by_state_matches_walk)
)
