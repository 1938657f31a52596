/*
 * test_affinity.c: which nodes a workload may use (scheduler/affinity.c):
 * node types in order and required node affinity, one row per rule; and
 * what a pod is charged per device (sched_pod_gpu()).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cmocka_main.h"

#include "sched.h"

static const struct sched_label rack_a_gen3[] = {{"rack", "a"}, {"gen", "3"}, {"node-type", "dgx"}};
static const struct sched_node labelled = {"n1", 0, 1, 8, -1, -1, "dgx", rack_a_gen3, 3, 81920};
static const struct sched_node bare = {"n2", 0, 1, 8, -1, -1, NULL, NULL, 0, 0};

static const char *const v_a[] = {"a"};
static const char *const v_b_c[] = {"b", "c"};
static const char *const v_2[] = {"2"};
static const char *const v_3[] = {"3"};
static const char *const v_n1[] = {"n1"};
static const char *const v_word[] = {"three"};

/* One match alone as the only term, against the labelled node and the bare one. */
static const struct {
    struct sched_match m;
    int on_labelled, on_bare;
} matches[] = {
    {{"rack", SCHED_OP_IN, v_a, 1}, 1, 0},
    {{"rack", SCHED_OP_IN, v_b_c, 2}, 0, 0},
    {{"rack", SCHED_OP_NOT_IN, v_b_c, 2}, 1, 1},       /* no label: NotIn holds */
    {{"rack", SCHED_OP_NOT_IN, v_a, 1}, 0, 1},
    {{"rack", SCHED_OP_EXISTS, NULL, 0}, 1, 0},
    {{"rack", SCHED_OP_DOES_NOT_EXIST, NULL, 0}, 0, 1},
    {{"gen", SCHED_OP_GT, v_2, 1}, 1, 0},
    {{"gen", SCHED_OP_GT, v_3, 1}, 0, 0},              /* strictly greater */
    {{"gen", SCHED_OP_LT, v_3, 1}, 0, 0},
    {{"gen", SCHED_OP_GT, v_word, 1}, 0, 0},           /* not an integer: holds nowhere */
    {{SCHED_HOSTNAME_LABEL, SCHED_OP_IN, v_n1, 1}, 1, 0},   /* the node's name */
    {{"node-type", SCHED_OP_IN, (const char *const[]){"dgx"}, 1}, 1, 0},
};

static void test_one_match(void **unused)
{
    struct sched_workload w;
    struct sched_term term;
    size_t i;

    (void)unused;
    for (i = 0; i < sizeof(matches) / sizeof(matches[0]); i++) {
        memset(&w, 0, sizeof(w));
        term.matches = &matches[i].m;
        term.n_matches = 1;
        w.affinity = &term;
        w.n_affinity = 1;
        assert_int_equal(sched_node_allowed(&w, &labelled), matches[i].on_labelled);
        assert_int_equal(sched_node_allowed(&w, &bare), matches[i].on_bare);
    }
}

/* Terms: any of them; matches inside a term: all of them; a term without
 * matches holds nowhere. */
static void test_terms(void **unused)
{
    const struct sched_match rack_a = {"rack", SCHED_OP_IN, v_a, 1};
    const struct sched_match gen_gt_3 = {"gen", SCHED_OP_GT, v_3, 1};
    const struct sched_match no_rack = {"rack", SCHED_OP_DOES_NOT_EXIST, NULL, 0};
    const struct sched_match both[] = {rack_a, gen_gt_3};
    struct sched_term terms[2] = {{both, 2}, {&no_rack, 1}};
    struct sched_workload w;

    (void)unused;
    memset(&w, 0, sizeof(w));
    w.affinity = terms;
    w.n_affinity = 1;
    assert_false(sched_node_allowed(&w, &labelled)); /* gen 3 is not > 3 */
    w.n_affinity = 2;
    assert_false(sched_node_allowed(&w, &labelled));
    assert_true(sched_node_allowed(&w, &bare));       /* the second term */
    terms[0].n_matches = 1;
    assert_true(sched_node_allowed(&w, &labelled));
    terms[0].n_matches = 0;
    w.n_affinity = 1;
    assert_false(sched_node_allowed(&w, &labelled));
    assert_false(sched_node_allowed(&w, &bare));
}

/* Node types: one, or any of a list; node affinity on top. */
static void test_node_types(void **unused)
{
    static const char *const types[] = {"pcie", "dgx"};
    struct sched_workload w;

    (void)unused;
    memset(&w, 0, sizeof(w));
    assert_true(sched_node_allowed(&w, &bare));
    w.node_type = "dgx";
    assert_true(sched_node_allowed(&w, &labelled));
    assert_false(sched_node_allowed(&w, &bare));
    w.node_type = NULL;
    w.node_types = types;
    w.n_node_types = 1;
    assert_false(sched_node_allowed(&w, &labelled));
    w.n_node_types = 2;
    assert_true(sched_node_allowed(&w, &labelled));
    assert_false(sched_node_allowed(&w, &bare));
}

/* Per pod: whole devices 1000 each, a portion on each of its devices, a
 * GPU-memory request the fraction of the device's memory, rounded up. */
static void test_pod_charge(void **unused)
{
    struct sched_workload w;

    (void)unused;
    memset(&w, 0, sizeof(w));
    w.gpu_devices = 2;
    assert_int_equal(sched_pod_gpu(&w, &labelled), 2000);
    assert_int_equal(sched_shared_devices(&w), 0);
    w.gpu_portion = 250;
    assert_int_equal(sched_pod_gpu(&w, &labelled), 500);
    assert_int_equal(sched_shared_devices(&w), 2);
    w.gpu_portion = 0;
    w.gpu_devices = 0;
    w.gpu_memory_mib = 20480;
    assert_int_equal(sched_shared_devices(&w), 1);
    assert_int_equal(sched_pod_gpu(&w, &labelled), 250);   /* 20 of 80 GiB */
    w.gpu_memory_mib = 20481;
    assert_int_equal(sched_pod_gpu(&w, &labelled), 251);   /* rounded up */
}

RUN_TESTS(
    cmocka_unit_test(test_one_match),
    cmocka_unit_test(test_terms),
    cmocka_unit_test(test_node_types),
    cmocka_unit_test(test_pod_charge)
)
