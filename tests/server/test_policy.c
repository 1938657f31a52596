/*
 * test_policy.c: the rule engine of workload policies (api/policy.c)
 * without a server: the merge of a tenant, a department and a project
 * policy (a field's rule from the highest scope that has one, its default
 * from the lowest, sourceOfRule saying where), the matrix of submissions
 * against that chain (each default filled, each refusal naming its field,
 * value, rule and scope), what a policy may not say, and PATCH's merge and
 * reset.
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

#include "db.h"
#include "policy.h"

static const char tenant[] =
    "{\"defaults\": {\"image\": \"busybox\", \"compute\": {\"gpuDevicesRequest\": 1}},"
    " \"rules\": {\"compute\": {\"gpuDevicesRequest\": {\"max\": 4}},"
    "  \"nodePools\": {\"options\": [{\"value\": \"default\"}, {\"value\": \"a100\"}]}}}";
static const char dept[] =
    "{\"defaults\": {\"compute\": {\"gpuDevicesRequest\": 2, \"cpuMemoryRequest\": \"512Mi\"}},"
    " \"rules\": {\"compute\": {\"gpuDevicesRequest\": {\"max\": 8},"
    "  \"cpuMemoryRequest\": {\"max\": \"1Gi\"}},"
    "  \"imagePullPolicy\": {\"options\": [{\"value\": \"IfNotPresent\"}]}}}";
static const char project[] =
    "{\"defaults\": {\"compute\": {\"gpuDevicesRequest\": 1}, \"priorityClass\": \"train\"},"
    " \"rules\": {\"priorityClass\": {\"canEdit\": false},"
    "  \"command\": {\"required\": true},"
    "  \"compute\": {\"cpuCoreRequest\": {\"min\": 0.5, \"step\": 0.5},"
    "   \"cpuMemoryRequest\": {\"max\": \"4Gi\"}}}}";

struct chain {
    struct pol_layer l[3];
};

static void chain_make(struct chain *c, int depth)
{
    const char *bodies[] = {tenant, dept, project};
    const char *scopes[] = {"tenant", "department", "project"};
    const char *names[] = {"", "research", "team-a"};
    const char *ids[] = {"", "d-1", "p-1"};
    int i;

    memset(c, 0, sizeof(*c));
    for (i = 0; i < depth; i++) {
        c->l[i] = (struct pol_layer){scopes[i], ids[i], names[i], 7, NULL};
        c->l[i].policy = json_loads(bodies[i], 0, NULL);
        assert_non_null(c->l[i].policy);
    }
}

static void chain_free(struct chain *c)
{
    int i;

    for (i = 0; i < 3; i++)
        json_decref(c->l[i].policy);
}

/* A field of a JSON document, as compact text ("" when absent). */
static void field(json_t *o, const char *a, const char *b, char *out, size_t len)
{
    json_t *v = json_object_get(o, a);
    char *s;

    if (b)
        v = json_object_get(v, b);
    s = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    snprintf(out, len, "%s", s ? s : "");
    free(s);
}

static void test_merge(void **state)
{
    struct chain c;
    json_t *e, *rules, *defaults;
    char got[256];

    (void)state;
    chain_make(&c, 3);
    e = pol_merge(c.l, 3, DB_TRAINING);
    rules = json_object_get(e, "rules");
    defaults = json_object_get(e, "defaults");
    /* the tenant's rule on GPUs governs; the department's max 8 does not */
    field(rules, "compute", "gpuDevicesRequest", got, sizeof(got));
    assert_string_equal(got, "{\"max\":4,\"sourceOfRule\":{\"scope\":\"tenant\"}}");
    /* the department has the highest rule on memory (the project's 4Gi loses) */
    field(rules, "compute", "cpuMemoryRequest", got, sizeof(got));
    assert_string_equal(got, "{\"max\":\"1Gi\",\"sourceOfRule\":{\"departmentId\":\"d-1\","
                             "\"scope\":\"department\"}}");
    field(rules, "priorityClass", NULL, got, sizeof(got));
    assert_string_equal(got, "{\"canEdit\":false,\"sourceOfRule\":{\"projectId\":7,"
                             "\"scope\":\"project\"}}");
    /* defaults: the lowest scope's */
    field(defaults, "compute", NULL, got, sizeof(got));
    assert_string_equal(got, "{\"cpuMemoryRequest\":\"512Mi\",\"gpuDevicesRequest\":1}");
    field(defaults, "image", NULL, got, sizeof(got));
    assert_string_equal(got, "\"busybox\"");
    json_decref(e);
    /* a department's chain stops there: its default 2 */
    e = pol_merge(c.l, 2, DB_TRAINING);
    field(json_object_get(e, "defaults"), "compute", "gpuDevicesRequest", got, sizeof(got));
    assert_string_equal(got, "2");
    json_decref(e);
    chain_free(&c);
}

/* The matrix: a submission to team-a (depth 3), team-b (2: research, no
 * policy of its own) or the tenant only (1); NULL: accepted, with
 * `filled` (a compact "field=value") in the spec after. */
struct row {
    int depth;
    const char *spec;
    const char *refusal;
    const char *filled_field, *filled_sub, *filled;
};

static const struct row matrix[] = {
    {3, "{\"command\": \"run\"}", NULL, "compute", "gpuDevicesRequest", "1"},
    {3, "{\"command\": \"run\"}", NULL, "image", NULL, "\"busybox\""},
    {3, "{\"command\": \"run\"}", NULL, "priorityClass", NULL, "\"train\""},
    {2, "{}", NULL, "compute", "gpuDevicesRequest", "2"},
    {1, "{}", NULL, "compute", "gpuDevicesRequest", "1"},
    {1, "{\"compute\": {\"cpuMemoryRequest\": \"64Gi\"}}", NULL, "compute", "cpuMemoryRequest",
     "\"64Gi\""},
    {3, "{\"command\": \"run\", \"compute\": {\"gpuDevicesRequest\": 5}}",
     "spec.compute.gpuDevicesRequest 5 breaks the rule max 4 of the tenant policy", NULL, NULL,
     NULL},
    {2, "{\"compute\": {\"gpuDevicesRequest\": 6}}",
     "spec.compute.gpuDevicesRequest 6 breaks the rule max 4 of the tenant policy", NULL, NULL,
     NULL},
    {3, "{\"command\": \"run\", \"imagePullPolicy\": \"Always\"}",
     "spec.imagePullPolicy \"Always\" breaks the rule options [{\"value\":\"IfNotPresent\"}] of "
     "the department policy (research)", NULL, NULL, NULL},
    {1, "{\"imagePullPolicy\": \"Always\"}", NULL, "imagePullPolicy", NULL, "\"Always\""},
    {3, "{\"command\": \"run\", \"priorityClass\": \"build\"}",
     "spec.priorityClass \"build\" breaks the rule canEdit false of the project policy (team-a)",
     NULL, NULL, NULL},
    {3, "{\"command\": \"run\", \"priorityClass\": \"train\"}", NULL, "priorityClass", NULL,
     "\"train\""},
    {3, "{}", "spec.command breaks the rule required true of the project policy (team-a)", NULL,
     NULL, NULL},
    {3, "{\"command\": \"run\", \"compute\": {\"cpuCoreRequest\": 0.7}}",
     "spec.compute.cpuCoreRequest 0.7 breaks the rule step 0.5 of the project policy (team-a)",
     NULL, NULL, NULL},
    {3, "{\"command\": \"run\", \"compute\": {\"cpuCoreRequest\": 1.5}}", NULL, "compute",
     "cpuCoreRequest", "1.5"},
    {3, "{\"command\": \"run\", \"compute\": {\"cpuCoreRequest\": 0.25}}",
     "spec.compute.cpuCoreRequest 0.25 breaks the rule min 0.5 of the project policy (team-a)",
     NULL, NULL, NULL},
    {3, "{\"command\": \"run\", \"compute\": {\"cpuMemoryRequest\": \"2Gi\"}}",
     "spec.compute.cpuMemoryRequest \"2Gi\" breaks the rule max \"1Gi\" of the department policy "
     "(research)", NULL, NULL, NULL},
    {1, "{\"nodePools\": [\"a100\", \"h100\"]}",
     "spec.nodePools [\"a100\",\"h100\"] breaks the rule options", NULL, NULL, NULL},
    {1, "{\"nodePools\": [\"a100\"]}", NULL, "nodePools", NULL, "[\"a100\"]"},
};

static void test_matrix(void **state)
{
    struct chain c;
    char msg[512], got[256];
    size_t i;

    (void)state;
    chain_make(&c, 3);
    for (i = 0; i < sizeof(matrix) / sizeof(matrix[0]); i++) {
        const struct row *m = &matrix[i];
        json_t *spec = json_loads(m->spec, 0, NULL);
        int rc = pol_apply(c.l, m->depth, DB_TRAINING, spec, 0, msg, sizeof(msg));
        if (m->refusal) {
            if (rc == 0 || !strstr(msg, m->refusal))
                fail_msg("row %zu: wanted \"%s\", got %d \"%s\"", i, m->refusal, rc,
                         rc ? msg : "");
        } else {
            if (rc != 0)
                fail_msg("row %zu refused: %s", i, msg);
            field(spec, m->filled_field, m->filled_sub, got, sizeof(got));
            if (strcmp(got, m->filled))
                fail_msg("row %zu: %s is %s, wanted %s", i, m->filled_field, got, m->filled);
        }
        json_decref(spec);
    }
    chain_free(&c);
}

/* A policy that cannot be kept, and why (a part of the message). */
struct bad {
    int type;
    const char *body, *why;
};

static const struct bad bad_bodies[] = {
    {DB_TRAINING, "{\"rules\": {\"tolerations\": {\"canAdd\": false}}}",
     "rules.tolerations is not a field"},
    {DB_TRAINING, "{\"rules\": {\"numWorkers\": {\"max\": 2}}}", "rules.numWorkers is not a field"},
    {DB_TRAINING, "{\"rules\": {\"image\": {\"min\": 2}}}", "rules.image.min is not supported"},
    {DB_TRAINING, "{\"rules\": {\"image\": {\"defaultFrom\": {\"field\": \"x\"}}}}",
     "rules.image.defaultFrom is not supported"},
    {DB_TRAINING, "{\"rules\": {\"compute\": {\"gpuDevicesRequest\": {\"min\": 3, \"max\": 2}}}}",
     "min is above max"},
    {DB_TRAINING, "{\"rules\": {\"compute\": {\"gpuDevicesRequest\": {\"step\": 0}}}}",
     "step must be above 0"},
    {DB_TRAINING, "{\"rules\": {\"compute\": {\"gpuDevicesRequest\": {\"max\": 1.5}}}}",
     "not of the field's kind"},
    {DB_TRAINING, "{\"rules\": {\"image\": {\"required\": \"yes\"}}}", "true or false"},
    {DB_TRAINING, "{\"defaults\": {\"compute\": {\"cpuMemoryRequest\": \"lots\"}}}",
     "must be a quantity"},
    {DB_TRAINING, "{\"defaults\": {\"nodePools\": \"default\"}}", "an array of strings"},
    {DB_TRAINING, "{\"defaults\": {\"compute\": {\"gpuDevicesRequest\": 3}},"
                  " \"rules\": {\"compute\": {\"gpuDevicesRequest\": {\"max\": 2}}}}",
     "spec.compute.gpuDevicesRequest 3 (its default) breaks the rule max 2 of the new policy"},
    {DB_TRAINING, "{\"imposedAssets\": [\"0a\"]}", "policy.imposedAssets is not supported"},
    {DB_DISTRIBUTED, "{\"rules\": {\"master\": {\"image\": {\"required\": true}}}}",
     "the master runs the workers' spec"},
    {DB_DISTRIBUTED, "{\"rules\": {\"image\": {\"required\": true}}}", "master and worker only"},
};

static void test_bad_bodies(void **state)
{
    char msg[512];
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(bad_bodies) / sizeof(bad_bodies[0]); i++) {
        json_t *b = json_loads(bad_bodies[i].body, 0, NULL);
        int rc = pol_check_body(b, bad_bodies[i].type, msg, sizeof(msg));
        if (rc == 0 || !strstr(msg, bad_bodies[i].why))
            fail_msg("body %zu: wanted \"%s\", got %d \"%s\"", i, bad_bodies[i].why, rc,
                     rc ? msg : "");
        json_decref(b);
    }
    for (i = 0; i < 3; i++) {
        const char *good[] = {tenant, dept, project};
        json_t *b = json_loads(good[i], 0, NULL);
        if (pol_check_body(b, DB_TRAINING, msg, sizeof(msg)) != 0)
            fail_msg("policy %zu refused: %s", i, msg);
        json_decref(b);
    }
}

static void test_distributed_worker(void **state)
{
    struct pol_layer l = {"tenant", "", "", 0, NULL};
    json_t *spec = json_loads("{\"numWorkers\": 3}", 0, NULL), *e;
    char msg[512], got[128];

    (void)state;
    l.policy = json_loads("{\"defaults\": {\"worker\": {\"image\": \"torch\"}},"
                          " \"rules\": {\"worker\": {\"numWorkers\": {\"max\": 2}}}}", 0, NULL);
    assert_int_equal(pol_check_body(l.policy, DB_DISTRIBUTED, msg, sizeof(msg)), 0);
    assert_int_equal(pol_apply(&l, 1, DB_DISTRIBUTED, spec, 0, msg, sizeof(msg)), -1);
    assert_non_null(strstr(msg, "spec.numWorkers 3 breaks the rule max 2 of the tenant policy"));
    json_object_set_new(spec, "numWorkers", json_integer(2));
    assert_int_equal(pol_apply(&l, 1, DB_DISTRIBUTED, spec, 0, msg, sizeof(msg)), 0);
    field(spec, "image", NULL, got, sizeof(got));
    assert_string_equal(got, "\"torch\"");
    e = pol_merge(&l, 1, DB_DISTRIBUTED);
    field(json_object_get(e, "rules"), "worker", "numWorkers", got, sizeof(got));
    assert_string_equal(got, "{\"max\":2,\"sourceOfRule\":{\"scope\":\"tenant\"}}");
    json_decref(e);
    json_decref(spec);
    json_decref(l.policy);
}

/* POL_PARTIAL, an asset's part of a spec: a field it leaves out is not
 * required (the project's command), but canEdit and the values' rules
 * hold. */
static void test_partial(void **state)
{
    static const struct {
        const char *part, *breach; /* NULL: complies */
    } cases[] = {
        {"{\"image\": \"busybox\"}", NULL},
        {"{\"compute\": {\"gpuDevicesRequest\": 9}}",
         "spec.compute.gpuDevicesRequest 9 breaks the rule max 4 of the tenant policy"},
        {"{\"priorityClass\": \"build\"}", "spec.priorityClass \"build\" breaks the rule canEdit"},
        {"{\"compute\": {\"cpuCoreRequest\": 0.75}}", "breaks the rule step 0.5"},
    };
    struct chain c;
    char msg[512];
    size_t i;

    (void)state;
    chain_make(&c, 3);
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *part = json_loads(cases[i].part, 0, NULL);
        int rc = pol_apply(c.l, 3, DB_TRAINING, part, POL_PARTIAL, msg, sizeof(msg));

        assert_int_equal(rc, cases[i].breach ? -1 : 0);
        if (cases[i].breach)
            assert_non_null(strstr(msg, cases[i].breach));
        json_decref(part);
    }
    chain_free(&c);
}

static void test_patch_and_reset(void **state)
{
    json_t *p = json_loads(project, 0, NULL), *patch, *reset;
    char msg[256], got[256];

    (void)state;
    patch = json_loads("{\"defaults\": {\"image\": \"python\", \"priorityClass\": null}}", 0,
                       NULL);
    assert_int_equal(pol_patch(p, patch), 0);
    field(json_object_get(p, "defaults"), "image", NULL, got, sizeof(got));
    assert_string_equal(got, "\"python\"");
    field(json_object_get(p, "defaults"), "priorityClass", NULL, got, sizeof(got));
    assert_string_equal(got, "");
    field(json_object_get(p, "defaults"), "compute", NULL, got, sizeof(got));
    assert_string_equal(got, "{\"gpuDevicesRequest\":1}");
    reset = json_loads("[\"compute.cpuCoreRequest\", \"command\"]", 0, NULL);
    assert_int_equal(pol_reset(p, reset, DB_TRAINING, msg, sizeof(msg)), 0);
    field(json_object_get(p, "rules"), "compute", NULL, got, sizeof(got));
    assert_string_equal(got, "{\"cpuMemoryRequest\":{\"max\":\"4Gi\"}}");
    field(json_object_get(p, "rules"), "command", NULL, got, sizeof(got));
    assert_string_equal(got, "");
    json_decref(reset);
    reset = json_loads("[\"security.runAsUid\"]", 0, NULL);
    assert_int_equal(pol_reset(p, reset, DB_TRAINING, msg, sizeof(msg)), -1);
    assert_non_null(strstr(msg, "security.runAsUid"));
    json_decref(reset);
    json_decref(patch);
    json_decref(p);
}

RUN_TESTS(
    cmocka_unit_test(test_merge),
    cmocka_unit_test(test_matrix),
    cmocka_unit_test(test_bad_bodies),
    cmocka_unit_test(test_distributed_worker),
    cmocka_unit_test(test_patch_and_reset),
    cmocka_unit_test(test_partial)
)
