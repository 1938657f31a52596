/*
 * test_frag.c: the fragmentation measure and the placement that follows
 * it (scheduler/frag.c, placement.c), on small cases worked out by hand.
 *
 * F(n, m) = free(n) - usable(n, m), in milli-GPU: usable is 0 when no pod
 * of shape m fits the node now, else the free milli-GPU of the devices
 * with room for m's charge, half of it capped by what the node's memory
 * still feeds at m's ratio. A node's fragmentation is sum_m weight x F.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cmocka_main.h"

#include "sched_int.h"
#include "test_world.h"

#define MIX_CAP SCHED_MIX_MAX

struct fx {
    struct tw w;
    struct sched_mix_entry mix[MIX_CAP];
    const char *types[MIX_CAP];
    char text[256];
    struct sched_session ss;
};

/* One pool placing by `placement`, one project p (deserved unlimited),
 * and the world's description (tw_build's items) on top. */
static void fx_init(struct fx *f, int placement, const char *world)
{
    memset(f, 0, sizeof(*f));
    tw_build(&f->w, "queue p -1");
    f->w.pools[0].gpu_placement = (uint8_t)placement;
    f->w.pools[0].cpu_placement = (uint8_t)placement;
    f->w.st.mix = f->mix;
    tw_more(&f->w, world);
}

/* The mix's shapes, split by ';', each of words g=DEVICES, p=PORTION
 * (milli), cpu=MILLI, mem=MIB, type=NODE-TYPE, w=WEIGHT (0 unless told;
 * weight 1 unless told). */
static void fx_mix(struct fx *f, const char *shapes)
{
    char *item, *save = NULL;

    snprintf(f->text, sizeof(f->text), "%s", shapes);
    for (item = strtok_r(f->text, ";", &save); item != NULL; item = strtok_r(NULL, ";", &save)) {
        struct sched_mix_entry *e = &f->mix[f->w.st.n_mix];
        char *words[8], *in = NULL;
        int n = 0;

        for (words[0] = strtok_r(item, " ", &in); words[n] != NULL && n < 7;)
            words[++n] = strtok_r(NULL, " ", &in);
        e->shape.gpu_devices = atoi(tw_opt(words, 0, n, "g", "0"));
        e->shape.gpu_portion = atoll(tw_opt(words, 0, n, "p", "0"));
        e->shape.cpu_milli = atoll(tw_opt(words, 0, n, "cpu", "0"));
        e->shape.mem_mib = atoll(tw_opt(words, 0, n, "mem", "0"));
        e->weight = atoll(tw_opt(words, 0, n, "w", "1"));
        f->types[f->w.st.n_mix] = tw_opt(words, 0, n, "type", NULL);
        if (f->types[f->w.st.n_mix] != NULL) {
            e->shape.node_types = &f->types[f->w.st.n_mix];
            e->shape.n_node_types = 1;
        }
        f->w.st.n_mix++;
    }
}

static void fx_session(struct fx *f)
{
    sched_arena_reset(f->w.arena);
    assert_int_equal(sched__session_build(&f->ss, &f->w.st, NULL, f->w.arena), SCHED_OK);
}

static void fx_free(struct fx *f)
{
    tw_free(&f->w);
}

/* A node's measure and pods' rises, as a table: the world (fx_init), the
 * mix (fx_mix), node 0's measure, and sched__frag_rise() of pods on node 0
 * ("POD:DEVICES=RISE ..."). */
struct measure_case {
    const char *world, *mix;
    int64_t node;
    const char *rises;
};

static const struct measure_case measure_cases[] = {
    /* FGD's own case: a device half used. For a 1-GPU shape the half is a
     * fragment (500 of 1500 free); for a 0.5 shape nothing is. A 0.5 pod
     * on the half-used device leaves one whole device (0); on the empty
     * one it leaves two halves (1000 for the 1-GPU shape). */
    {"node n1 2; wl half p 1 0 portion=500 on=n1:0x1; wl pod p 1 0 portion=500", "g=1; p=500", 500,
     "pod:0x1=-500 pod:0x2=500"},
    /* Weights count: 3 x the 1-GPU shape's 500 plus 2 x a 0.3 shape's 0
     * (both devices have room for 0.3) = 1500; a 0.8 shape finds room only
     * on the empty device: its F is 1500 - 1000 = 500, times 4. */
    {"node n1 2; wl half p 1 0 portion=500 on=n1:0x1", "g=1 w=3; p=300 w=2; p=800 w=4",
     3 * 500 + 2 * 0 + 4 * 500, ""},
    /* Past FGD: memory strands GPUs, half counted. Four empty GPUs and
     * 8 GiB; the shape asks 1 GPU and 4 GiB, so the memory feeds 2000 of
     * the 4000 free, and usable is (4000 + 2000) / 2 = 3000: 1000 are
     * stranded (FGD says 0). A CPU-only pod of 4 GiB leaves memory for
     * 1000: usable 2500, 500 more stranded. A 1-GPU pod of 1 GiB leaves
     * 3000 free and 7 GiB, which feed 7/4 x 1000 = 1750 (in proportion:
     * the rest feeds smaller shapes): usable 2375, 625 stranded, 375
     * fewer than before. */
    {"node n1 4 mem=8192; wl mem p 1 0 mem=4096; wl gpu p 1 1 mem=1024", "g=1 mem=4096", 1000,
     "mem:0=500 gpu:0x1=-375"},
    /* The CPU left caps nothing: with 8 cores the 4-core shape's pods fit
     * (0 stranded), and still do once a 4-core pod takes half (rise 0);
     * a 5-core pod leaves too few for one (step 1): all 4000 stranded. */
    {"node n1 4 cpu=8000; wl cpu p 1 0 cpu=4000; wl big p 1 0 cpu=5000", "g=1 cpu=4000", 0,
     "cpu:0=0 big:0=4000"},
    /* A shape that may not use the node (another node type) finds every
     * free GPU a fragment; one that asks more devices than are empty too. */
    {"node n1 2 type=mine", "g=1 type=other; g=4 w=10; g=2 w=100",
     1 * 2000 + 10 * 2000 + 100 * 0, ""},
    /* Past FGD: whole devices come in whole pods. Five empty GPUs of eight:
     * a 4-GPU shape can use four of them, so 1000 are stranded (FGD counts
     * none: one pod fits); a 2-GPU shape strands 1000 too, a 1-GPU shape
     * nothing. A 1-GPU pod there leaves four: nothing stranded for any. */
    {"node n1 8; wl busy p 1 3 on=n1:0x7; wl pod p 1 1", "g=4; g=2 w=10; g=1 w=100",
     1 * 1000 + 10 * 1000 + 100 * 0, "pod:0x8=-11000"},
};

static void test_measures(void **unused)
{
    size_t i;

    (void)unused;
    for (i = 0; i < sizeof(measure_cases) / sizeof(measure_cases[0]); i++) {
        const struct measure_case *m = &measure_cases[i];
        char text[128], *word, *save = NULL, name[32];
        unsigned long long devices;
        long long rise;
        struct fx f;

        fx_init(&f, SCHED_FRAGMENTATION, m->world);
        fx_mix(&f, m->mix);
        fx_session(&f);
        if (sched__frag_node(&f.ss, 0) != m->node)
            fail_msg("case %zu: node 0 measures %lld, not %lld", i,
                     (long long)sched__frag_node(&f.ss, 0), (long long)m->node);
        snprintf(text, sizeof(text), "%s", m->rises);
        for (word = strtok_r(text, " ", &save); word; word = strtok_r(NULL, " ", &save)) {
            if (sscanf(word, "%31[^:]:%llx=%lld", name, &devices, &rise) != 3)
                fail_msg("case %zu: cannot read \"%s\"", i, word);
            if (sched__frag_rise(&f.ss, tw_wl(&f.w, name), 0, devices) != rise)
                fail_msg("case %zu: %s rises %lld, not %lld", i, word,
                         (long long)sched__frag_rise(&f.ss, tw_wl(&f.w, name), 0, devices), rise);
        }
        fx_free(&f);
    }
}

/* The half-used device of the first case is where a 0.5 pod goes (rise
 * -500). */
static void test_half_used_device(void **unused)
{
    struct fx f;
    int64_t rise;

    (void)unused;
    fx_init(&f, SCHED_FRAGMENTATION, measure_cases[0].world);
    fx_mix(&f, measure_cases[0].mix);
    fx_session(&f);
    assert_int_equal(sched__frag_devices(&f.ss, tw_wl(&f.w, "pod"), 0, &rise), 0x1);
    assert_int_equal(rise, -500);
    fx_free(&f);
}

/* A CPU-only pod is placed by its rise too. Two 1-GPU nodes; the mix's
 * shape asks 1 GPU and 100 GiB. The pod asks 1 core and 150 GiB: on n1
 * (200 GiB) it leaves 50 GiB, too little for the shape, and strands the
 * GPU (rise 1000); on n2 (400 GiB) nothing (0). The CPU-per-GPU tie-break
 * alone would pick n1 (63 cores per free GPU left against 59). */
static void test_cpu_only_pod_by_rise(void **unused)
{
    struct fx f;
    int pod;
    int64_t rise;

    (void)unused;
    fx_init(&f, SCHED_FRAGMENTATION,
            "node n1 1 cpu=64000 mem=204800; node n2 1 cpu=60000 mem=409600;"
            " wl cpu p 1 0 cpu=1000 mem=153600");
    pod = tw_wl(&f.w, "cpu");
    fx_mix(&f, "g=1 cpu=1000 mem=102400");
    fx_session(&f);
    assert_int_equal(sched__frag_devices(&f.ss, pod, 0, &rise), 0);
    assert_int_equal(rise, 1000);
    assert_int_equal(sched__frag_devices(&f.ss, pod, 1, &rise), 0);
    assert_int_equal(rise, 0);
    tw_settle(&f.w);
    assert_int_equal(f.w.pods[pod][0].node, 1);
    fx_free(&f);
}

/* Shapes that ask no GPU strand none: they do not count. With no mix at
 * all every node measures 0. */
static void test_cpu_shapes_ignored(void **unused)
{
    struct fx f;

    (void)unused;
    fx_init(&f, SCHED_FRAGMENTATION, "node n1 2");
    fx_session(&f);
    assert_int_equal(sched__frag_node(&f.ss, 0), 0);
    fx_mix(&f, "cpu=1000 w=5");
    fx_session(&f);
    assert_int_equal(f.ss.frag.n, 0);
    assert_int_equal(sched__frag_node(&f.ss, 0), 0);
    fx_free(&f);
}

/* A node's measure is kept between calls and follows every pod that
 * comes or goes: FGD's half-used device (500 for the 1-GPU shape); a 0.5
 * pod on the other device leaves two halves (1000), and taking it off
 * gives 500 again. */
static void test_measure_follows_placements(void **unused)
{
    struct fx f;
    int pod;

    (void)unused;
    fx_init(&f, SCHED_FRAGMENTATION,
            "node n1 2; wl half p 1 0 portion=500 on=n1:0x1; wl pod p 1 0 portion=500");
    pod = tw_wl(&f.w, "pod");
    fx_mix(&f, "g=1");
    fx_session(&f);
    assert_int_equal(sched__frag_node(&f.ss, 0), 500);
    assert_int_equal(sched__frag_node(&f.ss, 0), 500);
    assert_int_equal(sched__place(&f.ss, pod, 0, 0, 0x2), SCHED_OK);
    assert_int_equal(sched__frag_node(&f.ss, 0), 1000);
    assert_int_equal(sched__unplace(&f.ss, pod, 0), SCHED_OK);
    assert_int_equal(sched__frag_node(&f.ss, 0), 500);
    fx_free(&f);
}

/* The mix only matters in pools placing by fragmentation. */
static void test_binpack_pools_skip_the_measure(void **unused)
{
    struct fx f;

    (void)unused;
    fx_init(&f, SCHED_BINPACK, "node n1 2");
    fx_mix(&f, "g=1");
    fx_session(&f);
    assert_int_equal(f.ss.frag.n, 0);
    fx_free(&f);
}

/* Where the strategies part: two 4-GPU nodes, n1 with 2 GPUs held, n2
 * with 1; recent requests are 2-GPU pods. A 1-GPU pod goes to n1 by
 * bin-packing (fullest), which leaves n1 one GPU no 2-GPU pod can use
 * (rise 1000 x weight); by fragmentation to n2 (rise 0), and both 2-GPU
 * pods that follow fit. */
static int place_then_pairs(int placement, int *one_node)
{
    struct fx f;
    int left;

    /* non-preemptible (inference priority): consolidation cannot move them */
    fx_init(&f, placement,
            "node n1 4; node n2 4; wl a p 1 2 prio=125 on=n1:0x3; wl b p 1 1 prio=125 on=n2:0x1");
    fx_mix(&f, "g=2 w=3; g=1");
    tw_more(&f.w, "wl one p 1 1 prio=125; settle");
    *one_node = f.w.pods[tw_wl(&f.w, "one")][0].node;
    tw_more(&f.w, "wl pair-1 p 1 2; wl pair-2 p 1 2; settle");
    left = (f.w.wl[tw_wl(&f.w, "pair-1")].phase == SCHED_PENDING) +
           (f.w.wl[tw_wl(&f.w, "pair-2")].phase == SCHED_PENDING);
    fx_free(&f);
    return left;
}

static void test_fragmentation_differs_from_binpack(void **unused)
{
    int node;

    (void)unused;
    assert_int_equal(place_then_pairs(SCHED_BINPACK, &node), 1);
    assert_int_equal(node, 0);
    assert_int_equal(place_then_pairs(SCHED_FRAGMENTATION, &node), 0);
    assert_int_equal(node, 1);
}

/* Same state, same decisions: the measure has no hidden order. */
static void test_deterministic(void **unused)
{
    int a, b, i;

    (void)unused;
    for (i = 0; i < 3; i++) {
        assert_int_equal(place_then_pairs(SCHED_FRAGMENTATION, &a), 0);
        assert_int_equal(place_then_pairs(SCHED_FRAGMENTATION, &b), 0);
        assert_int_equal(a, b);
    }
}

/* A full mix: every shape keeps its own node types. Two nodes of 2
 * GPUs, types mine and other; the mix's last shape (SCHED_MIX_MAX - 1,
 * past the 32nd) may use only other, the rest any node: on n1 only the
 * last shape finds the free GPUs a fragment (2000), on n2 none does. */
static void test_full_mix_keeps_types(void **unused)
{
    static const char *other = "other";
    struct fx f;
    int i;

    (void)unused;
    fx_init(&f, SCHED_FRAGMENTATION, "node n1 2 type=mine; node n2 2 type=other");
    for (i = 0; i < SCHED_MIX_MAX; i++) {
        f.mix[i].shape.gpu_devices = 1;
        f.mix[i].shape.cpu_milli = i;   /* distinct shapes */
        f.mix[i].weight = 1;
    }
    f.mix[SCHED_MIX_MAX - 1].shape.node_types = &other;
    f.mix[SCHED_MIX_MAX - 1].shape.n_node_types = 1;
    f.w.st.n_mix = SCHED_MIX_MAX;
    fx_session(&f);
    assert_int_equal(sched__frag_node(&f.ss, 0), 2000);
    assert_int_equal(sched__frag_node(&f.ss, 1), 0);
    fx_free(&f);
}

/* A bad mix is refused like any bad snapshot. */
static void test_invalid_mix(void **unused)
{
    struct fx f;

    (void)unused;
    fx_init(&f, SCHED_FRAGMENTATION, "node n1 2");
    fx_mix(&f, "g=1 w=0");
    assert_int_equal(sched_cycle(&f.w.st, NULL, f.w.arena, &f.w.res), SCHED_EINVAL);
    f.mix[0].weight = SCHED_MIX_MAX_WEIGHT + 1;
    assert_int_equal(sched_cycle(&f.w.st, NULL, f.w.arena, &f.w.res), SCHED_EINVAL);
    f.mix[0].weight = 1;
    f.mix[0].shape.gpu_portion = 1000;
    assert_int_equal(sched_cycle(&f.w.st, NULL, f.w.arena, &f.w.res), SCHED_EINVAL);
    f.mix[0].shape.gpu_portion = 0;
    f.w.st.n_mix = SCHED_MIX_MAX + 1;
    assert_int_equal(sched_cycle(&f.w.st, NULL, f.w.arena, &f.w.res), SCHED_EINVAL);
    f.w.st.n_mix = 1;
    f.w.pools[0].gpu_placement = SCHED_FRAGMENTATION + 1;
    assert_int_equal(sched_cycle(&f.w.st, NULL, f.w.arena, &f.w.res), SCHED_EINVAL);
    fx_free(&f);
}

/* The window of recent requests: pods counted by shape, the oldest leave
 * once it is full, node types are its own copies, and a copy goes on as
 * the original does. */
static void test_mix_window(void **unused)
{
    char type[] = "a100";
    const char *types[] = {type};
    struct sched_workload one = {0}, two = {0}, cpu = {0};
    struct sched_mix_window *win = sched_mix_window_new(4), *copy;
    const struct sched_mix_entry *m, *c;
    int n, i;

    (void)unused;
    assert_non_null(win);
    one.gpu_devices = 1;
    one.n_pods = 3;
    one.node_types = types;
    one.n_node_types = 1;
    two.gpu_devices = 2;
    two.n_pods = 1;
    cpu.cpu_milli = 1000;
    cpu.n_pods = 5;
    assert_int_equal(sched_mix_window_note(win, &two), SCHED_OK);
    assert_int_equal(sched_mix_window_note(win, &one), SCHED_OK);
    assert_int_equal(sched_mix_window_note(win, &cpu), SCHED_OK);   /* asks no GPU: not noted */
    type[0] = 'x';                                                   /* the window has its own */
    n = sched_mix_window_get(win, &m);
    assert_int_equal(n, 2);
    assert_int_equal(m[0].shape.gpu_devices, 1);
    assert_int_equal(m[0].weight, 3);
    assert_string_equal(m[0].shape.node_types[0], "a100");
    assert_int_equal(m[1].shape.gpu_devices, 2);
    assert_int_equal(m[1].weight, 1);
    copy = sched_mix_window_copy(win);
    assert_non_null(copy);
    /* one more 2-GPU pod: the ring of 4 drops its oldest, the 2-GPU pod */
    assert_int_equal(sched_mix_window_note(win, &two), SCHED_OK);
    assert_int_equal(sched_mix_window_note(copy, &two), SCHED_OK);
    n = sched_mix_window_get(win, &m);
    assert_int_equal(n, 2);
    assert_int_equal(m[0].weight, 3);
    assert_int_equal(m[1].weight, 1);
    assert_int_equal(sched_mix_window_get(copy, &c), n);
    for (i = 0; i < n; i++) {
        assert_int_equal(c[i].weight, m[i].weight);
        assert_int_equal(c[i].shape.gpu_devices, m[i].shape.gpu_devices);
        assert_int_equal(c[i].shape.n_node_types, m[i].shape.n_node_types);
    }
    sched_mix_window_free(win);
    assert_string_equal(c[0].shape.node_types[0], "a100");   /* nothing shared */
    sched_mix_window_free(copy);
}

/* The mix moves in steps: the same mix (weights included) until the pods
 * noted since it was computed reach 1/SCHED_MIX_STEP of the window; a
 * shape that left the window meanwhile stays valid in the mix given. */
static void test_mix_window_steps(void **unused)
{
    const int cap = 5 * SCHED_MIX_STEP;   /* a step is 5 pods once full */
    char type[] = "v100";
    const char *types[] = {type};
    struct sched_workload old = {0}, one = {0};
    struct sched_mix_window *win = sched_mix_window_new(cap), *copy;
    const struct sched_mix_entry *m, *c;
    int i;

    (void)unused;
    assert_non_null(win);
    old.gpu_devices = 2;
    old.n_pods = cap;
    old.node_types = types;
    old.n_node_types = 1;
    one.gpu_devices = 1;
    one.n_pods = 1;
    assert_int_equal(sched_mix_window_note(win, &old), SCHED_OK);
    assert_int_equal(sched_mix_window_get(win, &m), 1);
    assert_int_equal(m[0].weight, cap);
    for (i = 0; i < 4; i++)   /* 4 pods: under a step, the mix stays */
        assert_int_equal(sched_mix_window_note(win, &one), SCHED_OK);
    assert_int_equal(sched_mix_window_get(win, &m), 1);
    assert_int_equal(m[0].shape.gpu_devices, 2);
    assert_int_equal(m[0].weight, cap);
    copy = sched_mix_window_copy(win);   /* a copy gives what the original gives */
    assert_non_null(copy);
    assert_int_equal(sched_mix_window_get(copy, &c), 1);
    assert_int_equal(c[0].weight, cap);
    assert_int_equal(sched_mix_window_note(win, &one), SCHED_OK);   /* the 5th: a step */
    assert_int_equal(sched_mix_window_get(win, &m), 2);
    assert_int_equal(m[0].weight, cap - 5);
    assert_int_equal(m[1].shape.gpu_devices, 1);
    assert_int_equal(m[1].weight, 5);
    /* in the copy the 2-GPU shape leaves the window entirely while its
     * mix names it: the mix given still reads the shape's node type */
    for (i = 0; i < cap; i++)
        assert_int_equal(sched_mix_window_note(copy, &one), SCHED_OK);
    assert_int_equal(c[0].shape.gpu_devices, 2);
    assert_string_equal(c[0].shape.node_types[0], "v100");
    assert_int_equal(sched_mix_window_get(copy, &c), 1);
    assert_int_equal(c[0].shape.gpu_devices, 1);
    assert_int_equal(c[0].weight, cap);
    sched_mix_window_free(copy);
    sched_mix_window_free(win);
}

/* The drivers' window (SCHED_MIX_WINDOW) is a long history: 8-GPU pods
 * noted thousands of pods back still count in the mix, and only a full
 * window lets its oldest pods go. */
static void test_mix_window_history(void **unused)
{
    static const struct {
        int old_pods, new_pods;     /* 8-GPU pods noted, then 1-GPU pods */
        int64_t want_old, want_new; /* their weights in the mix; 0: not in it */
    } cases[] = {
        {30, 5000, 30, 5000},         /* rare, 5,000 pods back */
        {2000, 7000, 2000, 7000},     /* 9,000 pods: all remembered */
        {2000, SCHED_MIX_WINDOW - 500, 500, SCHED_MIX_WINDOW - 500},   /* the oldest 1,500 leave */
        {10, SCHED_MIX_WINDOW, 0, SCHED_MIX_WINDOW},                   /* pushed out */
    };
    struct sched_workload old = {0}, one = {0};
    const struct sched_mix_entry *m;
    size_t c;
    int n;

    (void)unused;
    old.gpu_devices = 8;
    old.cpu_milli = 64000;
    one.gpu_devices = 1;
    one.cpu_milli = 8000;
    for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        struct sched_mix_window *win = sched_mix_window_new(SCHED_MIX_WINDOW);

        assert_non_null(win);
        old.n_pods = cases[c].old_pods;
        one.n_pods = cases[c].new_pods;
        assert_int_equal(sched_mix_window_note(win, &old), SCHED_OK);
        assert_int_equal(sched_mix_window_note(win, &one), SCHED_OK);
        n = sched_mix_window_get(win, &m);
        assert_int_equal(n, cases[c].want_old ? 2 : 1);
        assert_int_equal(m[0].shape.gpu_devices, 1);
        assert_int_equal(m[0].weight, cases[c].want_new);
        if (cases[c].want_old) {
            assert_int_equal(m[1].shape.gpu_devices, 8);
            assert_int_equal(m[1].weight, cases[c].want_old);
        }
        sched_mix_window_free(win);
    }
}

RUN_TESTS(
    cmocka_unit_test(test_measures),
    cmocka_unit_test(test_half_used_device),
    cmocka_unit_test(test_cpu_only_pod_by_rise),
    cmocka_unit_test(test_cpu_shapes_ignored),
    cmocka_unit_test(test_measure_follows_placements),
    cmocka_unit_test(test_binpack_pools_skip_the_measure),
    cmocka_unit_test(test_fragmentation_differs_from_binpack),
    cmocka_unit_test(test_deterministic),
    cmocka_unit_test(test_full_mix_keeps_types),
    cmocka_unit_test(test_invalid_mix),
    cmocka_unit_test(test_mix_window),
    cmocka_unit_test(test_mix_window_steps),
    cmocka_unit_test(test_mix_window_history)
)
