/*
 * test_openapi.c: openapi/openapi.json and the route table agree both
 * ways: every route is documented with its method, and every documented
 * operation is served. Path parameter names are ignored ({id} matches
 * {workloadId}). Secured operations are exactly the non-public routes.
 * The submission and batch routes describe their Idempotency-Key header.
 * Neither side may be empty: an empty route table or spec would agree
 * with anything.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "api.h"

static json_t *spec;

/* "/a/{x}/b" -> "/a/{}/b" */
static void normalize(const char *in, char *out, size_t len)
{
    size_t o = 0;

    while (*in && o + 3 < len) {
        if (*in == '{') {
            out[o++] = '{';
            out[o++] = '}';
            in = strchr(in, '}');
            in = in ? in + 1 : "";
        } else {
            out[o++] = *in++;
        }
    }
    out[o] = 0;
}

static void lower(const char *in, char *out)
{
    while (*in)
        *out++ = (char)(*in >= 'A' && *in <= 'Z' ? *in++ + 32 : *in++);
    *out = 0;
}

static json_t *find_op(const char *path, const char *method)
{
    const char *key;
    json_t *item;
    char want[256], have[256], m[16];

    normalize(path, want, sizeof(want));
    lower(method, m);
    json_object_foreach(json_object_get(spec, "paths"), key, item) {
        normalize(key, have, sizeof(have));
        if (strcmp(have, want) == 0)
            return json_object_get(item, m);
    }
    return NULL;
}

/* Both sides hold something: at least this many routes and operations. */
#define MIN_ROUTES 50

static int count_operations(void)
{
    const char *key, *method;
    json_t *item, *op;
    int n = 0;

    json_object_foreach(json_object_get(spec, "paths"), key, item)
        json_object_foreach(item, method, op)
            n += strcmp(method, "parameters") != 0;
    return n;
}

static void test_neither_side_empty(void **state)
{
    (void)state;
    if (api_n_routes < MIN_ROUTES)
        fail_msg("the route table holds %d routes, fewer than %d", api_n_routes, MIN_ROUTES);
    if (count_operations() < MIN_ROUTES)
        fail_msg("openapi.json documents %d operations, fewer than %d", count_operations(),
                 MIN_ROUTES);
}

static void test_routes_documented(void **state)
{
    int i;

    (void)state;
    for (i = 0; i < api_n_routes; i++) {
        json_t *op = find_op(api_routes[i].pattern, api_routes[i].method);
        json_t *sec;
        if (!op)
            fail_msg("route %s %s is not in openapi.json", api_routes[i].method,
                     api_routes[i].pattern);
        sec = json_object_get(op, "security");
        /* public routes say security: [] */
        if (api_routes[i].perm == API_PUBLIC && !(json_is_array(sec) && json_array_size(sec) == 0))
            fail_msg("public route %s %s must say security: []", api_routes[i].method,
                     api_routes[i].pattern);
        if (api_routes[i].perm != API_PUBLIC && json_is_array(sec) && json_array_size(sec) == 0)
            fail_msg("route %s %s needs a token but the spec says it is public",
                     api_routes[i].method, api_routes[i].pattern);
    }
}

static void test_spec_served(void **state)
{
    const char *key, *method;
    json_t *item, *op;
    char a[256], b[256], m[16];
    int i, found;

    (void)state;
    json_object_foreach(json_object_get(spec, "paths"), key, item) {
        json_object_foreach(item, method, op) {
            if (strcmp(method, "parameters") == 0)
                continue;
            normalize(key, a, sizeof(a));
            found = 0;
            for (i = 0; i < api_n_routes && !found; i++) {
                normalize(api_routes[i].pattern, b, sizeof(b));
                lower(api_routes[i].method, m);
                found = strcmp(a, b) == 0 && strcmp(m, method) == 0;
            }
            if (!found)
                fail_msg("openapi.json documents %s %s, which no route serves", method, key);
        }
    }
}

/* The routes that take an Idempotency-Key (api/idempotency.c) describe
 * it: an optional string header parameter of 1 to 255 characters. */
static void test_idempotency_key_documented(void **state)
{
    static const char *const paths[] = {
        "/api/v1/workloads/trainings",   "/api/v1/workloads/workspaces",
        "/api/v1/workloads/inferences",  "/api/v1/workloads/distributed",
        "/api/v1/workloads/submissions", "/api/v1/workloads/batch",
    };
    size_t i, k;
    json_t *p;

    (void)state;
    for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        json_t *op = find_op(paths[i], "POST"), *found = NULL;
        if (!op)
            fail_msg("openapi.json has no POST %s", paths[i]);
        json_array_foreach(json_object_get(op, "parameters"), k, p)
            if (json_is_string(json_object_get(p, "name")) &&
                strcmp(json_string_value(json_object_get(p, "name")), "Idempotency-Key") == 0)
                found = p;
        if (!found)
            fail_msg("POST %s does not describe the Idempotency-Key header", paths[i]);
        if (strcmp(json_string_value(json_object_get(found, "in")), "header") != 0 ||
            json_is_true(json_object_get(found, "required")) ||
            json_integer_value(json_object_get(json_object_get(found, "schema"), "maxLength")) !=
                255 ||
            json_integer_value(json_object_get(json_object_get(found, "schema"), "minLength")) !=
                1)
            fail_msg("POST %s: Idempotency-Key is not an optional header of 1 to 255 characters",
                     paths[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_neither_side_empty),
        cmocka_unit_test(test_routes_documented),
        cmocka_unit_test(test_spec_served),
        cmocka_unit_test(test_idempotency_key_documented),
    };
    json_error_t err;

    spec = json_load_file(ALLOT_OPENAPI, JSON_REJECT_DUPLICATES, &err);
    if (!spec) {
        fprintf(stderr, "cannot read %s: %s\n", ALLOT_OPENAPI, err.text);
        return 1;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
