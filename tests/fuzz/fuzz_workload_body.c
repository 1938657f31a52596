/*
 * fuzz_workload_body.c: a workload submission's body, as POST
 * /api/v1/workloads/{trainings,workspaces,inferences,distributed} reads it.
 *
 * The node pools it may name ("default", "pcie-pool") are in a real
 * database, in a temporary directory made at the first input.
 *
 * Input: one byte that picks the workload type (bits 0-1) and the project
 * (bit 2: a project with node types and scheduling rules, or one without),
 * then the body.
 *
 * Step 1  api_body_object(): the depth cap, strict JSON, an object;
 * Step 2  the top-level allow-list of the create operations;
 * Step 3  api_wl_spec_in(): the whole spec.
 * Checked: a refused body got exactly one 4xx/5xx {code, message, details};
 * an accepted one got no reply, and what it fills lies inside the
 * schema's CHECK constraints (db/checks.c), with the stored spec valid
 * JSON.
 */
#include "fuzz.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "quantity.h"

/* The create operations' top-level fields (h_workloads.c). */
static const char *const top_fields[] = {
    "name", "useGivenNameAsPrefix", "projectId", "clusterId", "templateId", "spec",
    "masterSpecSameAsWorker", "masterSpec", NULL,
};

static struct api_app app;

static void db_setup(void)
{
    static const char *const pools[] = {"default", "pcie-pool"};
    app.db = fuzz_db_open("body", pools, sizeof(pools) / sizeof(pools[0]));
}

static void project_fill(struct api_project *p, int with_rules)
{
    memset(p, 0, sizeof(*p));
    p->seq = 2;
    strcpy(p->id, "2");
    strcpy(p->name, "team-a");
    strcpy(p->parent_id, "1");
    strcpy(p->parent_name, "default");
    if (!with_rules)
        return;
    strcpy(p->node_types, "{\"training\":[\"a100\",\"h100\"],\"workspace\":[\"t4\"]}");
    strcpy(p->rules, "{\"interactiveJobTimeLimitSeconds\":3600,"
                     "\"trainingJobMaxIdleDurationSeconds\":600}");
}

static int in_qty(int64_t v)
{
    return v >= 0 && v <= QUANTITY_MAX_MIB;
}

static void accepted_check(const struct db_workload *w)
{
    json_t *spec;

    FUZZ_ASSERT(w->priority >= 0 && w->priority <= 1000);
    FUZZ_ASSERT(w->preemptible == 0 || w->preemptible == 1);
    FUZZ_ASSERT(w->n_pods >= 1 && w->n_pods <= 100000);
    FUZZ_ASSERT(w->min_pods >= 1 && w->min_pods <= w->n_pods);
    FUZZ_ASSERT(w->gpu_devices >= 0 && w->gpu_devices <= 64);
    FUZZ_ASSERT(w->gpu_portion >= 0 && w->gpu_portion <= 999);
    FUZZ_ASSERT(in_qty(w->cpu_milli) && in_qty(w->mem_mib) && in_qty(w->gpu_memory_mib));
    FUZZ_ASSERT(memchr(w->pools, 0, sizeof(w->pools)) != NULL);
    FUZZ_ASSERT(memchr(w->node_type, 0, sizeof(w->node_type)) != NULL);
    FUZZ_ASSERT(memchr(w->affinity, 0, sizeof(w->affinity)) != NULL);
    FUZZ_ASSERT(w->spec != NULL);
    spec = json_loads(w->spec, JSON_REJECT_DUPLICATES, NULL);
    FUZZ_ASSERT(json_is_object(spec));
    json_decref(spec);
    if (w->affinity[0]) {
        spec = json_loads(w->affinity, 0, NULL);
        FUZZ_ASSERT(spec != NULL);
        json_decref(spec);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct api_req r;
    struct api_project project;
    struct db_workload w;
    json_t *o;
    int rc;

    if (size < 1)
        return 0;
    if (!app.db)
        db_setup();
    memset(&r, 0, sizeof(r));
    r.app = &app;
    memset(&w, 0, sizeof(w));
    r.method = "POST";
    r.path = "/api/v1/workloads/trainings";
    r.body = fuzz_text(data + 1, size - 1);
    r.body_len = size - 1;
    w.type = data[0] & 3;
    project_fill(&project, (data[0] >> 2) & 1);
    fuzz_reply_reset();
    o = api_body_object(&r);
    if (!o) {
        fuzz_reply_check(&r, 400);
        goto out;
    }
    rc = api_json_allow(&r, o, top_fields, NULL);
    if (rc == 0)
        rc = api_wl_spec_in(&r, o, &project, &w);
    if (rc == 0) {
        fuzz_reply_none(&r);
        accepted_check(&w);
    } else {
        fuzz_reply_check(&r, 400);
    }
    json_decref(o);
out:
    db_workload_clear(&w);
    free(r.body);
    return 0;
}
