/*
 * test_viewcache.c: the kept views of workloads (api/viewcache.c). A view
 * kept for a row is given back, with the clock's field written fresh
 * between its two parts and the commas where the writer puts them, only
 * for a row equal to it in every byte: each change in the table below
 * (the fields the scheduler, the API and renames change, the spec) misses.
 * Another seq in the same slot misses and replaces it; a view too large is
 * not kept; a NULL cache keeps nothing; threads putting and getting two
 * versions of the same rows always get the text of the row they hold.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#include <cmocka.h>

#include "cmocka_main.h"

#include "api.h"

/* A row as the list's reader leaves it: zeroed, then filled. */
static void row_make(struct db_workload *w, int64_t seq, const char *spec)
{
    memset(w, 0, sizeof(*w));
    w->seq = seq;
    snprintf(w->id, sizeof(w->id), "id-%lld", (long long)seq);
    snprintf(w->name, sizeof(w->name), "train-%lld", (long long)seq);
    strcpy(w->project_name, "team-a");
    strcpy(w->department_name, "research");
    strcpy(w->phase, "Pending");
    w->n_pods = 1;
    w->version = 1;
    w->spec = spec ? strdup(spec) : NULL;
}

/* The view the cache would be given for w: a stand-in with the same
 * parts (before the clock's field, after it) and the row's name in it. */
static void view_parts(const struct db_workload *w, char *before, size_t blen, char *after,
                       size_t alen)
{
    snprintf(before, blen, "{\"name\":\"%s\",\"phase\":\"%s\"", w->name, w->phase);
    snprintf(after, alen, ",\"spec\":%s", w->spec ? w->spec : "{}");
}

static void put(struct api_viewcache *vc, const struct db_workload *w)
{
    char before[256], after[256];

    view_parts(w, before, sizeof(before), after, sizeof(after));
    api_viewcache_put(vc, w, before, strlen(before), after, strlen(after));
}

/* What a list of one row writes from the cache: "[...]", or NULL on a miss. */
static char *got_list(struct api_viewcache *vc, const struct db_workload *w, int64_t fresh)
{
    struct jw j = {0};
    size_t len;
    int hit;

    jw_open(&j, '[');
    jw_int(&j, NULL, 0); /* a value before: the row's comma is the writer's */
    jw_raw(&j, ",", 1);
    j.need_comma = 0;
    hit = api_viewcache_get(vc, w, &j, "running", fresh);
    jw_close(&j, '}');
    jw_close(&j, ']');
    if (!hit) {
        free(jw_take(&j, &len));
        return NULL;
    }
    return jw_take(&j, &len);
}

static void test_hit_writes_the_parts_and_the_fresh_field(void **state)
{
    struct api_viewcache *vc = api_viewcache_new();
    struct db_workload w;
    char *got;

    (void)state;
    row_make(&w, 7, "{\"image\":\"x\"}");
    assert_null(got_list(vc, &w, 5));
    put(vc, &w);
    got = got_list(vc, &w, 5);
    assert_string_equal(got, "[0,{\"name\":\"train-7\",\"phase\":\"Pending\",\"running\":5,"
                             "\"spec\":{\"image\":\"x\"}}]");
    free(got);
    got = got_list(vc, &w, 6); /* the clock's field is never kept */
    assert_non_null(strstr(got, "\"running\":6,"));
    free(got);
    db_workload_clear(&w);
    api_viewcache_free(vc);
}

/* Each change of a row that a view shows, made to a copy of the kept row. */
static void set_name(struct db_workload *w) { strcpy(w->name, "renamed"); }
static void set_phase(struct db_workload *w) { strcpy(w->phase, "Running"); }
static void set_message(struct db_workload *w) { strcpy(w->phase_message, "no room"); }
static void set_project(struct db_workload *w) { strcpy(w->project_name, "team-b"); }
static void set_department(struct db_workload *w) { strcpy(w->department_name, "ops"); }
static void set_pods(struct db_workload *w) { w->running_pods = 1; }
static void set_gpu(struct db_workload *w) { w->alloc_gpu_milli = 1000; }
static void set_version(struct db_workload *w) { w->version = 2; }
static void set_updated(struct db_workload *w) { w->updated_at = 1; }
static void set_spec_text(struct db_workload *w)
{
    free(w->spec);
    w->spec = strdup("{\"image\":\"y\"}");
}
static void set_spec_longer(struct db_workload *w)
{
    free(w->spec);
    w->spec = strdup("{\"image\":\"x\",\"a\":1}");
}
static void set_spec_null(struct db_workload *w)
{
    free(w->spec);
    w->spec = NULL;
}

static void test_any_change_misses(void **state)
{
    static void (*const changes[])(struct db_workload *) = {
        set_name, set_phase, set_message, set_project, set_department, set_pods,
        set_gpu, set_version, set_updated, set_spec_text, set_spec_longer, set_spec_null,
    };
    struct api_viewcache *vc = api_viewcache_new();
    struct db_workload w, changed;
    char *got;
    size_t i;

    (void)state;
    row_make(&w, 9, "{\"image\":\"x\"}");
    put(vc, &w);
    for (i = 0; i < sizeof(changes) / sizeof(changes[0]); i++) {
        row_make(&changed, 9, "{\"image\":\"x\"}");
        changes[i](&changed);
        assert_null(got_list(vc, &changed, 0));
        put(vc, &changed); /* the changed row's view replaces the kept one */
        assert_null(got_list(vc, &w, 0));
        got = got_list(vc, &changed, 0);
        assert_non_null(got);
        free(got);
        put(vc, &w);
        db_workload_clear(&changed);
    }
    db_workload_clear(&w);
    api_viewcache_free(vc);
}

static void test_slot_size_and_null(void **state)
{
    struct api_viewcache *vc = api_viewcache_new();
    struct db_workload a, b, big;
    char *spec = malloc(20000), *got;

    (void)state;
    row_make(&a, 3, NULL);
    row_make(&b, 3 + 1024, NULL); /* the same slot */
    put(vc, &a);
    assert_null(got_list(vc, &b, 0));
    put(vc, &b);
    assert_null(got_list(vc, &a, 0));
    got = got_list(vc, &b, 0);
    assert_non_null(got);
    free(got);

    memset(spec, 'x', 19999);
    spec[0] = '"';
    spec[19998] = '"';
    spec[19999] = 0;
    row_make(&big, 4, spec);
    put(vc, &big); /* over VC_ENTRY_MAX: not kept */
    assert_null(got_list(vc, &big, 0));

    put(NULL, &a);
    assert_null(got_list(NULL, &a, 0));
    api_viewcache_free(NULL);
    db_workload_clear(&a);
    db_workload_clear(&b);
    db_workload_clear(&big);
    free(spec);
    api_viewcache_free(vc);
}

/* Threads put and get two versions (phases) of rows 0..15: a hit always
 * gives the text of the version the thread asked with. */
struct race {
    struct api_viewcache *vc;
    int id, bad;
};

static void *racer(void *arg)
{
    struct race *r = arg;
    struct db_workload w;
    char *got;
    int i;

    for (i = 0; i < 4000; i++) {
        row_make(&w, i % 16, NULL);
        strcpy(w.phase, (i / 16 + r->id) % 2 ? "Running" : "Pending");
        if (i % 3 == 0)
            put(r->vc, &w);
        got = got_list(r->vc, &w, i);
        if (got && !strstr(got, w.phase))
            r->bad++;
        free(got);
        db_workload_clear(&w);
    }
    return NULL;
}

static void test_threads(void **state)
{
    struct api_viewcache *vc = api_viewcache_new();
    struct race r[8];
    pthread_t t[8];
    int i;

    (void)state;
    for (i = 0; i < 8; i++) {
        r[i] = (struct race){vc, i, 0};
        assert_int_equal(pthread_create(&t[i], NULL, racer, &r[i]), 0);
    }
    for (i = 0; i < 8; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(r[i].bad, 0);
    }
    api_viewcache_free(vc);
}

RUN_TESTS(
    cmocka_unit_test(test_hit_writes_the_parts_and_the_fresh_field),
    cmocka_unit_test(test_any_change_misses),
    cmocka_unit_test(test_slot_size_and_null),
    cmocka_unit_test(test_threads)
)
