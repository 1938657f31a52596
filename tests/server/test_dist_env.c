/*
 * test_dist_env.c: what a distributed workload's pods are told (api/
 * dist_env.c), one row a case: a framework, a gang of pods on nodes, the
 * pod asked about, and the variables it must get with their values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cmocka_main.h"

#include "api.h"

#define MAX_WANT 8

struct env_case {
    const char *framework;
    int has_master, n, idx, min_pods;
    const char *want[MAX_WANT][2];   /* name, value; NULL ends */
};

/* Three pods on three nodes (10.0.0.1-3), indexes 0-2; port 30000. */
static const struct env_case cases[] = {
    {"PyTorch", 1, 3, 2, 3,
     {{"MASTER_ADDR", "10.0.0.1"}, {"MASTER_PORT", "30000"}, {"WORLD_SIZE", "3"},
      {"RANK", "2"}, {"LOCAL_RANK", "0"}, {"PET_NNODES", "3"}, {"PET_NODE_RANK", "2"}}},
    {"", 1, 2, 1, 2, {{"MASTER_ADDR", "10.0.0.1"}, {"RANK", "1"}, {"WORLD_SIZE", "2"}}},
    {"PyTorch", 1, 3, 0, 2,
     {{"PET_NNODES", "2:3"}, {"PET_RDZV_BACKEND", "c10d"},
      {"PET_RDZV_ENDPOINT", "10.0.0.1:30000"}}},
    {"TF", 1, 3, 2, 3,
     {{"TF_CONFIG", "{\"cluster\":{\"chief\":[\"10.0.0.1:30000\"],\"worker\":[\"10.0.0.2:30001\","
                    "\"10.0.0.3:30002\"]},\"task\":{\"index\":1,\"type\":\"worker\"}}"}}},
    {"TF", 0, 2, 0, 2,
     {{"TF_CONFIG", "{\"cluster\":{\"worker\":[\"10.0.0.1:30000\",\"10.0.0.2:30001\"]},"
                    "\"task\":{\"index\":0,\"type\":\"worker\"}}"}}},
    {"JAX", 1, 3, 1, 3,
     {{"JAX_COORDINATOR_ADDRESS", "10.0.0.1:30000"}, {"JAX_NUM_PROCESSES", "3"},
      {"JAX_PROCESS_ID", "1"}}},
    {"XGBoost", 1, 3, 1, 3,
     {{"MASTER_ADDR", "10.0.0.1"}, {"WORKER_ADDRS", "10.0.0.2,10.0.0.3"},
      {"DMLC_TRACKER_URI", "10.0.0.1"}, {"DMLC_TRACKER_PORT", "30000"},
      {"DMLC_NUM_WORKER", "3"}, {"DMLC_TASK_ID", "1"}}},
    {"MPI", 1, 3, 0, 3, {{"ALLOT_MPI_SLOTS_PER_WORKER", "4"}, {"ALLOT_DIST_RANK", "0"}}},
};

static void gang(struct db_pod *pods, int n)
{
    int k;

    memset(pods, 0, sizeof(*pods) * (size_t)n);
    for (k = 0; k < n; k++) {
        pods[k].idx = k;
        pods[k].node_seq = k + 1;
        snprintf(pods[k].address, sizeof(pods[k].address), "10.0.0.%d", k + 1);
    }
}

static const char *value_of(json_t *env, const char *name)
{
    size_t i;
    json_t *e;
    const char *found = NULL;

    json_array_foreach(env, i, e)
        if (strcmp(json_string_value(json_object_get(e, "name")), name) == 0)
            found = json_string_value(json_object_get(e, "value"));
    return found;
}

static void test_cases(void **state)
{
    struct db_pod pods[3];
    size_t c;
    int k;

    (void)state;
    for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        const struct env_case *t = &cases[c];
        struct api_dist d = {.has_master = t->has_master, .pods = pods, .n = t->n,
                             .port = 30000, .min_pods = t->min_pods, .max_pods = t->n,
                             .slots = 4};
        json_t *env = json_array();

        snprintf(d.framework, sizeof(d.framework), "%s", t->framework);
        gang(pods, t->n);
        assert_int_equal(api_dist_env(&d, t->idx, env), 0);
        for (k = 0; k < MAX_WANT && t->want[k][0]; k++) {
            const char *got = value_of(env, t->want[k][0]);
            if (!got || strcmp(got, t->want[k][1]) != 0)
                fail_msg("case %zu (%s pod %d): %s is %s, want %s", c, t->framework, t->idx,
                         t->want[k][0], got ? got : "unset", t->want[k][1]);
        }
        json_decref(env);
    }
}

/* A pod that is not one of the gang's is told nothing. */
static void test_unknown_pod(void **state)
{
    struct db_pod pods[2];
    struct api_dist d = {.framework = "PyTorch", .pods = pods, .n = 2, .port = 30000,
                         .min_pods = 2, .max_pods = 2, .slots = 1};
    json_t *env = json_array();

    (void)state;
    gang(pods, 2);
    assert_int_equal(api_dist_env(&d, 5, env), -1);
    assert_int_equal(json_array_size(env), 0);
    json_decref(env);
}

/* MPI's host file: the workers by pod name, each with slotsPerWorker slots. */
static void test_hostfile(void **state)
{
    struct db_pod pods[3];
    struct api_dist d = {.framework = "MPI", .has_master = 1, .pods = pods, .n = 3,
                         .port = 30000, .min_pods = 3, .max_pods = 3, .slots = 2, .name = "mp"};
    char *text;

    (void)state;
    gang(pods, 3);
    text = api_dist_hostfile(&d);
    assert_string_equal(text, "mp-1-0 slots=2\nmp-2-0 slots=2\n");
    free(text);
    d.has_master = 0;
    text = api_dist_hostfile(&d);
    assert_string_equal(text, "mp-0-0 slots=2\nmp-1-0 slots=2\nmp-2-0 slots=2\n");
    free(text);
}

/* MPI's exec objects: the launcher knows every worker's endpoint (its
 * node's address, port + rank), a worker its own port; no launcher, none;
 * the key is per workload. */
static void test_mpi(void **state)
{
    static const unsigned char secret[32] = {1, 2, 3};
    struct db_pod pods[3];
    struct api_dist d = {.framework = "MPI", .has_master = 1, .pods = pods, .n = 3,
                         .port = 30000, .min_pods = 3, .max_pods = 3, .slots = 1, .name = "mp"};
    char k1[65], k2[65], *text;
    json_t *o;

    (void)state;
    gang(pods, 3);
    o = api_dist_mpi(&d, 0, "k");
    text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(text, "{\"key\":\"k\",\"role\":\"launcher\",\"workers\":["
                              "{\"address\":\"10.0.0.2\",\"host\":\"mp-1-0\",\"port\":30001},"
                              "{\"address\":\"10.0.0.3\",\"host\":\"mp-2-0\",\"port\":30002}]}");
    free(text);
    json_decref(o);
    o = api_dist_mpi(&d, 2, "k");
    text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(text, "{\"key\":\"k\",\"port\":30002,\"role\":\"worker\"}");
    free(text);
    json_decref(o);
    assert_null(api_dist_mpi(&d, 7, "k"));
    d.has_master = 0;
    assert_null(api_dist_mpi(&d, 1, "k"));
    assert_int_equal(api_dist_mpi_key(secret, 32, "wl-a", k1), 0);
    assert_int_equal(api_dist_mpi_key(secret, 32, "wl-b", k2), 0);
    assert_int_equal(strlen(k1), 64);
    assert_string_not_equal(k1, k2);
    assert_int_equal(api_dist_mpi_key(secret, 32, "wl-a", k2), 0);
    assert_string_equal(k1, k2);
}

RUN_TESTS(
    cmocka_unit_test(test_cases),
    cmocka_unit_test(test_unknown_pod),
    cmocka_unit_test(test_hostfile),
    cmocka_unit_test(test_mpi)
)
