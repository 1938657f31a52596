/*
 * test_replay_policies.c: the FGD paper's placement scores as the replay's
 * baselines compute them (sim/replay_policies.c), on single nodes worked
 * out by hand. Normalisers: 128 CPUs (128000 milli) and 8 GPUs (8000
 * milli); every score is a whole number from 0 to 100, truncated.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cmocka_main.h"

#include "replay_policies.h"

#define F 1000   /* a free device */

struct row {
    const char *why;
    int policy;
    int64_t cpu_left;
    int n_gpus;
    int64_t dev[RPP_MAX_GPUS];
    int tags[RPP_NTAGS];        /* pods on the node per tag: share, 1-GPU, 2-GPU, ... */
    int64_t pod_cpu;
    int pod_gpus;
    int64_t pod_milli;
    int score;
    uint64_t devices;
};

/* FGD's shapes in these rows: one whole GPU (cpu 0), every pod alike. */
static const struct row rows[] = {
    /* BestFit: kept = (CPU left - asked) / 128000 / 2 + (GPU left - asked) / 8000 / 2.
     * (56000 / 128000 + 1000 / 8000) / 2 = 0.28125 -> (1 - 0.28125) x 100 = 71.875 */
    {"bestfit, one GPU of two", RPP_BESTFIT, 64000, 2, {F, F}, {0}, 8000, 1, 1000, 71, 0x1},
    /* (60000 / 128000 + 1250 / 8000) / 2 = 0.3125 -> 68.75; the half-used device fits best */
    {"bestfit, a share", RPP_BESTFIT, 64000, 2, {F, 500}, {0}, 4000, 1, 250, 68, 0x2},
    /* DotProd: (64000/128000 x 8000/128000 + 2000/8000 x 1000/8000) / 2 = 0.03125 -> 96.875 */
    {"dotprod", RPP_DOTPROD, 64000, 2, {F, F}, {0}, 8000, 1, 1000, 96, 0x1},
    /* GpuClustering: band + 25 x (8000 - GPU left) / 8000 (integer).
     * Only 1-GPU pods there: 75 + 25 x 2000 / 8000 = 81 */
    {"clustering, same kind only", RPP_GPUCLUSTERING, 64000, 8, {F, F, F, F, F, F, 0, 0},
     {0, 2}, 8000, 1, 1000, 81, 0x1},
    /* its kind among others: 50 + 6 */
    {"clustering, kind among others", RPP_GPUCLUSTERING, 64000, 8, {F, F, F, F, F, F, 0, 0},
     {1, 1}, 8000, 1, 1000, 56, 0x1},
    /* other kinds only: 0 + 6 */
    {"clustering, other kinds", RPP_GPUCLUSTERING, 64000, 8, {F, F, F, F, F, F, 0, 0},
     {0, 2}, 8000, 2, 1000, 6, 0x3},
    /* an empty node: 25 + 0 */
    {"clustering, empty node", RPP_GPUCLUSTERING, 64000, 8, {F, F, F, F, F, F, F, F}, {0},
     8000, 1, 1000, 25, 0x1},
    {"clustering, CPU-only pod", RPP_GPUCLUSTERING, 64000, 2, {F, F}, {0}, 8000, 0, 0, 0, 0},
    /* GpuPacking: every device free: max(33 - free, free) */
    {"packing, empty 8-GPU node", RPP_GPUPACKING, 64000, 8, {F, F, F, F, F, F, F, F}, {0},
     8000, 1, 1000, 25, 0x1},
    {"packing, empty 2-GPU node", RPP_GPUPACKING, 64000, 2, {F, F}, {0}, 8000, 1, 1000, 31,
     0x1},
    /* a share on a used device: 100 - (300 x 100 / 1000) / 10 = 97 */
    {"packing, share on a used device", RPP_GPUPACKING, 64000, 4, {F, 300, F, F}, {1}, 8000,
     1, 200, 97, 0x2},
    /* whole devices opened on a used node: 50 - opened */
    {"packing, one device opened", RPP_GPUPACKING, 64000, 4, {F, 300, F, F}, {1}, 8000, 1,
     1000, 49, 0x1},
    {"packing, two devices opened", RPP_GPUPACKING, 64000, 4, {F, 300, F, F}, {1}, 8000, 2,
     1000, 48, 0x5},
    /* FGD, shapes {1 GPU}: F = free GPU of devices under 1000 while one whole device is
     * free, else all the free GPU. Before: [F, F] -> 0; a 0.5 pod leaves [500, F] -> 500:
     * 100 x sigmoid(-0.5) = 37.75 */
    {"fgd, a share on an empty node", RPP_FGD, 64000, 2, {F, F}, {0}, 8000, 1, 500, 37, 0x1},
    /* before [500, F] -> 500; on device 0: [0, F] -> 0, 100 x sigmoid(0.5) = 62.2; on
     * device 1: [500, 500] -> 1000 (no whole device), 37: device 0 */
    {"fgd, a share on the half-used device", RPP_FGD, 64000, 2, {500, F}, {1}, 8000, 1, 500,
     62, 0x1},
    /* a whole GPU on [500, F] leaves [500, 0] -> 500: no change, 100 x sigmoid(0) = 50 */
    {"fgd, a whole GPU", RPP_FGD, 64000, 2, {500, F}, {1}, 8000, 1, 1000, 50, 0x2},
};

static void node_of(const struct row *r, struct rpp_node *n)
{
    memset(n, 0, sizeof(*n));
    n->cpu_left = r->cpu_left;
    n->mem_left = 1 << 20;
    n->n_gpus = r->n_gpus;
    memcpy(n->dev_left, r->dev, sizeof(n->dev_left));
    memcpy(n->tags, r->tags, sizeof(n->tags));
}

static void test_scores(void **unused)
{
    struct rpp_shape one = {{0, 0, 1, RPP_MILLI, NULL, 0}, 1.0};
    struct rpp_shapes sh = {&one, 1};
    struct rpp_node n;
    struct rpp_pod p;
    uint64_t rng = 1, devices;
    size_t i;

    (void)unused;
    for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const struct row *r = &rows[i];

        node_of(r, &n);
        n.frag = rpp_frag(&n, &sh);
        memset(&p, 0, sizeof(p));
        p.cpu = r->pod_cpu;
        p.num_gpu = r->pod_gpus;
        p.milli = r->pod_milli;
        assert_true(rpp_fits(&n, &p));
        print_message("%s\n", r->why);
        assert_int_equal(rpp_score(r->policy, &n, &p, &sh, &rng, &devices), r->score);
        assert_int_equal(devices, r->devices);
    }
}

/* F with a CPU-only shape: every free GPU counts for it (half the weight
 * here), whatever the node; the 1-GPU shape adds nothing while a whole
 * device is free and the CPU holds it. */
static void test_frag_shapes(void **unused)
{
    struct rpp_shape two[2] = {{{4000, 0, 0, 0, NULL, 0}, 0.5},
                               {{8000, 0, 1, RPP_MILLI, NULL, 0}, 0.5}};
    struct rpp_shapes sh = {two, 2};
    struct rpp_node n;
    struct row r = {"", 0, 64000, 2, {F, F}, {0}, 0, 0, 0, 0, 0};

    (void)unused;
    node_of(&r, &n);
    assert_true(rpp_frag(&n, &sh) == 1000.0);    /* 0.5 x 2000 + 0.5 x 0 */
    n.cpu_left = 6000;                           /* the 1-GPU shape lacks CPU: all of it */
    assert_true(rpp_frag(&n, &sh) == 2000.0);
    n.cpu_left = 64000;
    n.dev_left[0] = 300;                         /* 1300 free, 300 under a whole device */
    assert_true(rpp_frag(&n, &sh) == 0.5 * 1300 + 0.5 * 300);
}

/* Fit: CPU, memory, the GPU model, devices with the pod's milli free. */
static void test_fits(void **unused)
{
    static const int p100[] = {0};
    struct row r = {"", 0, 64000, 2, {F, 600}, {0}, 0, 0, 0, 0, 0};
    struct rpp_pod p = {8000, 1000, 2, RPP_MILLI, NULL, 0};
    struct rpp_node n;

    (void)unused;
    node_of(&r, &n);
    n.model = 1;
    assert_false(rpp_fits(&n, &p));              /* one whole device free, two asked */
    p.num_gpu = 1;
    assert_true(rpp_fits(&n, &p));
    p.spec = p100;                               /* model 0 only */
    p.n_spec = 1;
    assert_false(rpp_fits(&n, &p));
    p.spec = NULL;
    p.n_spec = 0;
    p.mem = 2 << 20;                             /* more memory than the node */
    assert_false(rpp_fits(&n, &p));
    p.mem = 0;
    p.milli = 700;                               /* a share: device 0 has room */
    assert_true(rpp_fits(&n, &p));
}

RUN_TESTS(
    cmocka_unit_test(test_scores),
    cmocka_unit_test(test_frag_shapes),
    cmocka_unit_test(test_fits)
)
