/*
 * h_workloads.c: /api/v1/workloads: submit (trainings, workspaces,
 * distributed, inferences), list with filterBy/sortBy/paging, count, get,
 * delete, suspend, resume, events and pods.
 *
 * A submission is answered 202 only after its row and its Submitted event
 * have committed (db_workload_submit waits for the group commit); the
 * writer wakes the scheduler thread as that commit returns, before the
 * answer is written (db_on_submitted(), set by ctl_sched_start()). While its project, or the user
 * submitting, has as many Pending workloads as allotd's caps allow
 * (--max-pending-per-project, --max-pending-per-user), it is a 429 that
 * says which; a batch (/workloads/submissions) that would pass a cap is
 * refused whole, and a resume (Pending again) counts as a submission.
 * The count is taken in the savepoint of the write, so concurrent
 * submissions cannot pass a cap together. With ?dryRun=true it is read and checked the same way (a
 * taken name is the same 400), then answered 200 with what the next
 * scheduling turn would do with it (h_whatif.c), and nothing is stored.
 *
 * Invariants:
 *   1. The body is read through an allow-list per level (top, spec,
 *      compute, ...): an unknown field is a 400 naming it, and so is a
 *      known one allot does not act on (wl_spec.c); what is accepted takes
 *      effect and is echoed back in spec.
 *   2. Submitting needs the workload-write right on the target project
 *      (else 403, also for a project that does not exist, unless the
 *      caller writes system-wide: then 400); reading needs workload-read on the workload's project,
 *      and a workload the caller cannot read is a 404.
 *   3. Lists are paged: limit defaults to 50 and is at most 500.
 */
#include "api.h"
#include "assets.h"
#include "db_agent.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static double dev(int64_t milli)
{
    return (double)milli / 1000.0;
}

/* ---- the allow-lists ---- */

static const char *const top_fields[] = {
    "name", "useGivenNameAsPrefix", "projectId", "clusterId", "templateId", "assets", "spec",
    "masterSpecSameAsWorker", "masterSpec", NULL,
};

/* ---- reading a submission ---- */

static int name_in(struct api_req *r, json_t *o, struct db_workload *w)
{
    int prefix = 0;
    char suffix[8];
    size_t i, n;

    if (api_json_str(r, o, "name", w->name, 58, 1) ||
        api_json_bool(r, o, "useGivenNameAsPrefix", &prefix))
        return -1;
    if (prefix) {
        if (api_random_text(suffix, sizeof(suffix), 5)) {
            api_error(r, 500, "Internal error", "no randomness");
            return -1;
        }
        for (i = 0; suffix[i]; i++)
            suffix[i] = (char)((unsigned char)suffix[i] % 26 + 'a');
        n = strlen(w->name);
        snprintf(w->name + n, sizeof(w->name) - n, "-%s", suffix);
    }
    if (!api_valid_name(w->name)) {
        api_error(r, 400, "Bad request",
                  "name: lowercase letters, digits and '-', at most 63 characters");
        return -1;
    }
    return 0;
}

/* Finds the target project and checks the right to submit there. */
static int project_in(struct api_req *r, json_t *o, struct db_workload *w, struct api_project *q)
{
    char pid[DB_ID_LEN + 8] = "", cid[64] = "";
    int rc;

    if (api_json_str(r, o, "projectId", pid, sizeof(pid), 1) ||
        api_json_str(r, o, "clusterId", cid, sizeof(cid), 0))
        return -1;
    if (cid[0] && strcmp(cid, API_CLUSTER_ID) != 0) {
        api_error(r, 400, "Bad request", "clusterId names no cluster");
        return -1;
    }
    rc = api_project_lookup(r->app, pid, q);
    if (rc == DB_OK && api_can(&r->who, API_WL_WRITE, q->id, q->parent_id)) {
        w->project_seq = q->seq;
        snprintf(w->project_id, sizeof(w->project_id), "%s", q->id);
        snprintf(w->project_name, sizeof(w->project_name), "%s", q->name);
        snprintf(w->department_id, sizeof(w->department_id), "%s", q->parent_id);
        snprintf(w->department_name, sizeof(w->department_name), "%s", q->parent_name);
        return 0;
    }
    /* A project the caller may not submit to and one that does not exist
     * are the same 403 (the one status of the two Run:ai's create
     * operations list), so a submission never tells a caller which
     * projects exist; only a system-wide writer, who may see them all,
     * is told a project is unknown (400). */
    if (rc == DB_ENOTFOUND && api_can(&r->who, API_WL_WRITE, pid, ""))
        api_error(r, 400, "Bad request", "projectId names no project");
    else if (rc == DB_OK || rc == DB_ENOTFOUND)
        api_error(r, 403, "Forbidden",
                  "the caller may not submit to this project (or there is no such project)");
    else
        api_db_error(r, rc, "cannot read the project");
    return -1;
}

/* The typed view (Training1, Workspace1, ...): what create and the typed
 * GET routes answer. */
static void typed_write(struct jw *j, const struct db_workload *w)
{
    jw_open(j, '{');
    jw_str(j, "name", w->name);
    jw_str(j, "requestedName", w->name);
    jw_str(j, "workloadId", w->id);
    jw_str(j, "projectId", w->project_id);
    jw_str(j, "departmentId", w->department_id);
    jw_str(j, "clusterId", API_CLUSTER_ID);
    jw_str(j, "createdBy", w->created_by);
    jw_time(j, "createdAt", w->created_at);
    jw_time(j, "deletedAt", w->deleted_at);
    jw_str(j, "desiredPhase", w->desired_phase);
    jw_str(j, "actualPhase", w->phase);
    jw_json(j, "spec", w->spec, "{}");
    jw_close(j, '}');
}

/* ?dryRun=true (an allot extension): answer what the submission would do
 * (h_whatif.c) instead of storing it. 1 dry run, 0 not, -1 replied 400. */
static int dry_run_in(struct api_req *r)
{
    char v[8];

    if (api_query(r, "dryRun", v, sizeof(v)) != 0 || strcmp(v, "false") == 0)
        return 0;
    if (strcmp(v, "true") == 0)
        return 1;
    api_error(r, 400, "Bad request", "dryRun is true or false");
    return -1;
}

/* A taken name: 400, not 409, on the create operations (Run:ai's document
 * lists no 409 for them; a retry sends its Idempotency-Key instead). */
static void taken(struct api_req *r, const char *name)
{
    char details[DB_NAME_LEN + 96];

    snprintf(details, sizeof(details),
             "the name %s is taken: a workload of that name exists in the project", name);
    api_error(r, 400, "Bad request", details);
}

/* The live workload named name in the project; NULL if none (or on error). */
static struct db_workload *named(struct api_req *r, int64_t project_seq, const char *name)
{
    struct db_wl_query q;
    struct db_workload *found = NULL;
    int n = 0;

    memset(&q, 0, sizeof(q));
    q.limit = 1;
    q.projects = &project_seq;
    q.n_projects = 1;
    q.n_filters = 1;
    snprintf(q.filters[0].field, sizeof(q.filters[0].field), "name");
    snprintf(q.filters[0].op, sizeof(q.filters[0].op), "==");
    snprintf(q.filters[0].value, sizeof(q.filters[0].value), "%s", name);
    if (db_workload_list(r->app->db, &q, &found, &n) != DB_OK || n != 1) {
        db_workloads_free(found, n);
        return NULL;
    }
    return found;
}

/* A submission of n workloads met a taken name. If it retries a request
 * whose Idempotency-Key was reserved and never answered (idempotency.c:
 * its server died after the commit), and every name is held by a workload
 * the same principal submitted since then, those are the first request's:
 * answered 202 as it would have answered them (wrap: the submissions
 * route's {"workloads": [...]}). 1 if answered. */
static int retried(struct api_req *r, const struct db_workload *ws, int n, int wrap)
{
    struct db_workload **got = calloc((size_t)n, sizeof(*got));
    struct jw j = {0};
    int64_t since;
    int i, ok = got != NULL;

    if (!api_idem_retry(r, &since)) {
        free(got);
        return 0;
    }
    for (i = 0; ok && i < n; i++) {
        got[i] = named(r, ws[i].project_seq, ws[i].name);
        ok = got[i] && strcmp(got[i]->created_by, r->who.user.login) == 0 &&
             got[i]->created_at >= since && got[i]->type == ws[i].type;
    }
    if (ok) {
        if (wrap) {
            jw_open(&j, '{');
            jw_key(&j, "workloads");
            jw_open(&j, '[');
        }
        for (i = 0; i < n; i++)
            typed_write(&j, got[i]);
        if (wrap) {
            jw_close(&j, ']');
            jw_close(&j, '}');
        }
        jw_reply(r, 202, &j);
    }
    for (i = 0; got && i < n; i++)
        if (got[i])
            db_workloads_free(got[i], 1);
    free(got);
    return ok;
}

/* A live workload of w's name in its project: what the insert would
 * refuse (with a 400, as a submission is). 0 free, -1 replied. */
static int name_free(struct api_req *r, const struct db_workload *w)
{
    struct db_wl_query q;
    struct db_workload *found = NULL;
    int n = 0, rc;

    memset(&q, 0, sizeof(q));
    q.limit = 1;
    q.projects = &w->project_seq;
    q.n_projects = 1;
    q.n_filters = 1;
    snprintf(q.filters[0].field, sizeof(q.filters[0].field), "name");
    snprintf(q.filters[0].op, sizeof(q.filters[0].op), "==");
    snprintf(q.filters[0].value, sizeof(q.filters[0].value), "%s", w->name);
    rc = db_workload_list(r->app->db, &q, &found, &n);
    db_workloads_free(found, n);
    if (rc != DB_OK)
        return api_db_error(r, rc, "cannot read the project's workloads"), -1;
    if (n > 0)
        return taken(r, w->name), -1;
    return 0;
}

/* Reads one submission body into w (name, project and the right to submit
 * there, the spec its template and assets give with its own over them);
 * replies 400/403 itself and returns -1 otherwise. */
static int workload_in(struct api_req *r, json_t *o, struct db_workload *w,
                       struct api_project *project)
{
    json_t *refs = NULL;
    int rc = -1;

    snprintf(w->created_by, sizeof(w->created_by), "%s", r->who.user.login);
    if (api_json_allow(r, o, top_fields, NULL) == 0 && name_in(r, o, w) == 0 &&
        project_in(r, o, w, project) == 0 &&
        api_assets_expand(r, o, project, w->type, &refs) == 0 &&
        api_wl_spec_in(r, o, project, w) == 0)
        rc = api_assets_note(r, w, refs);
    json_decref(refs);
    return rc;
}

/* allotd's caps on pending work (--max-pending-per-project, -per-user). */
static struct db_pending_caps pending_caps(const struct api_req *r)
{
    const struct api_config *c = &r->app->cfg; /* tenant settings change them (h_settings.c) */
    struct db_pending_caps caps = {__atomic_load_n(&c->max_pending_project, __ATOMIC_RELAXED),
                                   __atomic_load_n(&c->max_pending_user, __ATOMIC_RELAXED)};

    return caps;
}

static void create(struct api_req *r, int type)
{
    struct db_workload *w = calloc(1, sizeof(*w));
    struct api_project *project = calloc(1, sizeof(*project));
    struct db_pending_caps caps = pending_caps(r);
    char why[DB_MSG_LEN];
    struct jw j = {0};
    json_t *o = NULL;
    int rc, dry;

    if (!w || !project) {
        api_error(r, 500, "Internal error", "out of memory");
        goto out;
    }
    w->type = type;
    if ((dry = dry_run_in(r)) < 0)
        goto out;
    o = api_body_object(r);
    if (!o || workload_in(r, o, w, project))
        goto out;
    if (dry) {
        if (name_free(r, w) == 0)
            api_wl_dry_run(r, w);
        goto out;
    }
    rc = db_workload_submit(r->app->db, w, &caps, why, sizeof(why));
    if (rc == DB_ECONFLICT) {
        if (!retried(r, w, 1, 0))
            taken(r, w->name);
        goto out;
    }
    if (rc == DB_ELIMIT) {
        api_error(r, 429, "Too many requests", why);
        goto out;
    }
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot store the workload");
        goto out;
    }
    api_metrics_submitted(); /* the writer woke the scheduler: db_on_submitted() */
    typed_write(&j, w);
    jw_reply(r, 202, &j);
out:
    json_decref(o);
    free(project);
    if (w)
        db_workloads_free(w, 1);
}

void api_h_wl_create_training(struct api_req *r)
{
    create(r, DB_TRAINING);
}

void api_h_wl_create_workspace(struct api_req *r)
{
    create(r, DB_WORKSPACE);
}

void api_h_wl_create_distributed(struct api_req *r)
{
    create(r, DB_DISTRIBUTED);
}

void api_h_wl_create_inference(struct api_req *r)
{
    create(r, DB_INFERENCE);
}

/* ---- submissions: several workloads, a project by name ---- */

#define SUBMIT_MAX_COUNT 1000

/* The workload type a submissions body names ("Training", ...: the generic
 * view's type names), or -1. */
static int type_named(const char *name)
{
    static const int types[] = {DB_TRAINING, DB_WORKSPACE, DB_INFERENCE, DB_DISTRIBUTED};
    size_t i;

    for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (strcmp(name, db_type_name(types[i])) == 0)
            return types[i];
    return -1;
}

/* projectName instead of projectId: the project's id goes into the body,
 * and project_in() checks the right to submit there as for an id. A
 * project the caller may not read is not found, as in the project routes. */
static int project_name_in(struct api_req *r, json_t *o)
{
    struct db_queue *q;
    char name[DB_NAME_LEN] = "", details[DB_NAME_LEN + 64];
    int rc;

    if (api_json_str(r, o, "projectName", name, sizeof(name), 0))
        return -1;
    if (!name[0])
        return 0;
    if (json_object_get(o, "projectId")) {
        api_error(r, 400, "Bad request", "projectName and projectId: give one of them");
        return -1;
    }
    q = calloc(1, sizeof(*q));
    if (!q) {
        api_error(r, 500, "Internal error", "out of memory");
        return -1;
    }
    rc = db_queue_by_name(r->app->db, DB_PROJECT, name, q);
    if (rc == DB_OK && !api_can(&r->who, API_ORG_READ, q->id, q->parent_id))
        rc = DB_ENOTFOUND;  /* a project the caller may not read is one it cannot name */
    if (rc == DB_OK)
        json_object_set_new(o, "projectId", json_string(q->id));
    else if (rc == DB_ENOTFOUND) {
        snprintf(details, sizeof(details), "projectName: no project named %s", name);
        api_error(r, 400, "Bad request", details);
    }
    else
        api_db_error(r, rc, "cannot read the project");
    free(q);
    json_object_del(o, "projectName");
    return rc == DB_OK ? 0 : -1;
}

/* Workload i of a batch of n: NAME-i, with ALLOT_BATCH_INDEX=i and
 * ALLOT_BATCH_COUNT=n added to its environment (refused if the body sets
 * either itself). */
static json_t *batch_item(struct api_req *r, const json_t *o, const char *name, int i, int n)
{
    static const char *const own[] = {"ALLOT_BATCH_INDEX", "ALLOT_BATCH_COUNT"};
    json_t *item = json_deep_copy(o), *spec, *env, *e;
    char text[DB_NAME_LEN + 16];
    size_t k, v;

    if (!item) {
        api_error(r, 500, "Internal error", "out of memory");
        return NULL;
    }
    snprintf(text, sizeof(text), "%s-%d", name, i);
    json_object_set_new(item, "name", json_string(text));
    spec = json_object_get(item, "spec");
    if (!spec) {
        spec = json_object();
        json_object_set_new(item, "spec", spec);
    }
    env = json_object_get(spec, "environmentVariables");
    if (!json_is_object(spec) || (env && !json_is_array(env))) {
        json_decref(item);
        api_error(r, 400, "Bad request", "spec.environmentVariables: an array of {name, value}");
        return NULL;
    }
    if (!env) {
        env = json_array();
        json_object_set_new(spec, "environmentVariables", env);
    }
    json_array_foreach(env, k, e)
        for (v = 0; v < 2; v++)
            if (json_is_string(json_object_get(e, "name")) &&
                strcmp(json_string_value(json_object_get(e, "name")), own[v]) == 0) {
                json_decref(item);
                api_error(r, 400, "Bad request",
                          "spec.environmentVariables: ALLOT_BATCH_INDEX and ALLOT_BATCH_COUNT "
                          "are set by allotd");
                return NULL;
            }
    snprintf(text, sizeof(text), "%d", i);
    json_array_append_new(env, json_pack("{s:s, s:s}", "name", own[0], "value", text));
    snprintf(text, sizeof(text), "%d", n);
    json_array_append_new(env, json_pack("{s:s, s:s}", "name", own[1], "value", text));
    return item;
}

/* POST /api/v1/workloads/submissions: allot's extension. The body of a
 * typed submission (POST /api/v1/workloads/trainings, ...) plus:
 *   type         "Training", "Workspace", "Inference" or "Distributed";
 *   projectName  the project by name, instead of projectId;
 *   count        1..1000: that many workloads NAME-0 .. NAME-(count-1),
 *                each with its index in its environment (batch_item());
 *                absent: one workload named NAME.
 * Every workload is read first; then all rows commit in one write, or
 * none does. 202 {"workloads": [typed views]}. */
void api_h_wl_submissions(struct api_req *r)
{
    struct db_workload *ws = NULL;
    struct api_project *project = calloc(1, sizeof(*project));
    struct db_pending_caps caps;
    char type_name[16] = "", name[DB_NAME_LEN] = "", why[DB_MSG_LEN];
    int64_t count = 0;
    int type, n = 1, i, rc;
    struct jw j = {0};
    json_t *o = api_body_object(r), *item;

    if (!project) {
        api_error(r, 500, "Internal error", "out of memory");
        goto out;
    }
    if (!o || api_json_str(r, o, "type", type_name, sizeof(type_name), 1) ||
        api_json_int(r, o, "count", 1, SUBMIT_MAX_COUNT, &count) || project_name_in(r, o))
        goto out;
    type = type_named(type_name);
    if (type < 0) {
        api_error(r, 400, "Bad request",
                  "type: one of Training, Workspace, Inference, Distributed");
        goto out;
    }
    if (count > 0 && json_is_true(json_object_get(o, "useGivenNameAsPrefix"))) {
        api_error(r, 400, "Bad request",
                  "count and useGivenNameAsPrefix: a batch names its workloads NAME-INDEX");
        goto out;
    }
    if (json_object_get(o, "count")) {
        n = (int)count;
        if (api_json_str(r, o, "name", name, 58, 1))
            goto out;
    }
    json_object_del(o, "type");
    json_object_del(o, "count");
    ws = calloc((size_t)n, sizeof(*ws));
    if (!ws) {
        api_error(r, 500, "Internal error", "out of memory");
        goto out;
    }
    for (i = 0; i < n; i++) {
        item = count > 0 ? batch_item(r, o, name, i, n) : json_incref(o);
        ws[i].type = type;
        rc = item ? workload_in(r, item, &ws[i], project) : -1;
        json_decref(item);
        if (rc != 0)
            goto out;
    }
    caps = pending_caps(r);
    rc = db_workloads_submit(r->app->db, ws, n, &caps, why, sizeof(why));
    if (rc == DB_ELIMIT) {
        api_error(r, 429, "Too many requests", why);
        goto out;
    }
    if (rc == DB_ECONFLICT) {
        if (retried(r, ws, n, 1))
            goto out;
        if (count > 0)
            api_error(r, 400, "Bad request",
                      "a name of the batch is taken: a workload of one of those names exists in "
                      "the project, and none was added");
        else
            taken(r, ws[0].name);
        goto out;
    }
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot store the workloads");
        goto out;
    }
    jw_open(&j, '{');
    jw_key(&j, "workloads");
    jw_open(&j, '[');
    for (i = 0; i < n; i++) {
        api_metrics_submitted();
        typed_write(&j, &ws[i]);
    }
    jw_close(&j, ']');
    jw_close(&j, '}');
    jw_reply(r, 202, &j);
out:
    json_decref(o);
    free(project);
    if (ws)
        db_workloads_free(ws, n);
}

/* ---- the generic view ---- */

static const char *category(int type)
{
    return type == DB_WORKSPACE ? "Build" : type == DB_INFERENCE ? "Deploy" : "Train";
}

static json_t *pools_array(const char *pools)
{
    json_t *a = json_array();
    const char *p = pools;

    while (a && p && *p) {
        const char *c = strchr(p, ',');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        json_array_append_new(a, json_stringn(p, n));
        p = c ? c + 1 : NULL;
    }
    return a;
}

static void pools_write(struct jw *j, const char *key, const char *pools)
{
    const char *p = pools;
    char name[DB_NAME_LEN];

    jw_key(j, key);
    jw_open(j, '[');
    while (p && *p) {
        const char *c = strchr(p, ',');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        if (n >= sizeof(name))
            n = sizeof(name) - 1;
        memcpy(name, p, n);
        name[n] = 0;
        jw_str(j, NULL, name);
        p = c ? c + 1 : NULL;
    }
    jw_close(j, ']');
}

/* A memory quantity in MiB ("512Mi"), null for none. */
static void memory_write(struct jw *j, const char *key, int64_t mib)
{
    if (mib <= 0)
        jw_null(j, key);
    else
        jw_mib(j, key, mib);
}

/* phaseReason takes only the values of Run:ai's PhaseReason enum; the
 * other reasons a pending workload has (InsufficientResources, ...) are
 * in its Ready condition's reason. */
static void phase_reason_write(struct jw *j, const char *reason)
{
    if (strcmp(reason, "NonPreemptibleOverQuota") == 0 || strcmp(reason, "OverLimit") == 0)
        jw_str(j, "phaseReason", reason);
    else
        jw_null(j, "phaseReason");
}

/* What the workload asks for `pods` pods: GPUs (whole devices, or a
 * portion of each shared device) or, for a GPU-memory request, memory of
 * each device (its GPU share depends on the device it gets). */
static void requested_write(struct jw *j, const char *key, const struct db_workload *w, int pods)
{
    int shared = w->gpu_portion > 0 || w->gpu_memory_mib > 0;
    int devices = shared && w->gpu_devices < 1 ? 1 : w->gpu_devices;
    int64_t gpu = w->gpu_portion > 0 ? devices * w->gpu_portion : (int64_t)devices * 1000;

    jw_key(j, key);
    jw_open(j, '{');
    jw_str(j, "gpuRequestType", w->gpu_memory_mib > 0 ? "memory" : "portion");
    jw_key(j, "gpu");
    jw_open(j, '{');
    if (w->gpu_memory_mib > 0)
        jw_null(j, "request");
    else
        jw_milli(j, "request", gpu * pods);
    jw_close(j, '}');
    jw_key(j, "gpuMemory");
    jw_open(j, '{');
    memory_write(j, "request", w->gpu_memory_mib * devices * pods);
    jw_close(j, '}');
    jw_key(j, "cpu");
    jw_open(j, '{');
    jw_milli(j, "request", w->cpu_milli * pods);
    jw_close(j, '}');
    jw_key(j, "cpuMemory");
    jw_open(j, '{');
    memory_write(j, "request", w->mem_mib * pods);
    jw_close(j, '}');
    jw_close(j, '}');
}

/* About what the generic view of a workload takes (1.4-1.6 KB with a
 * short spec): a list reserves this much per row. */
#define WL_VIEW_BYTES 1600

/* The generic view (GET /api/v1/workloads and /{id}) is written in three
 * parts: what comes before the one field that moves with the clock, that
 * field, and what comes after it (a list keeps the first and the last of
 * each row, viewcache.c). */

/* topology: the levels it was submitted with ({name, requiredPlacement,
 * preferredPlacement}, each when given); null when none. */
static void topology_write(struct jw *j, const char *text)
{
    static const char *const keys[] = {"name", "requiredPlacement", "preferredPlacement"};
    json_t *t = text[0] ? json_loads(text, 0, NULL) : NULL;
    size_t i;

    if (!t) {
        jw_null(j, "topology");
        return;
    }
    jw_key(j, "topology");
    jw_open(j, '{');
    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (json_is_string(json_object_get(t, keys[i])))
            jw_str(j, keys[i], json_string_value(json_object_get(t, keys[i])));
    jw_close(j, '}');
    json_decref(t);
}

/* The part before totalRunningTimeSeconds, from the opening brace. */
static void generic_head(struct jw *j, const struct db_workload *w)
{
    char ns[sizeof("runai-") - 1 + sizeof(w->project_name)] = "runai-";
    int running = strcmp(w->phase, "Running") == 0;

    /* project_name is terminated within its array (db__copy) */
    memcpy(ns + 6, w->project_name, strlen(w->project_name) + 1);
    jw_open(j, '{');
    jw_str(j, "id", w->id);
    jw_str(j, "name", w->name);
    jw_str(j, "type", db_type_name(w->type));
    jw_int(j, "tenantId", 1);
    jw_str(j, "clusterId", API_CLUSTER_ID);
    jw_str(j, "projectId", w->project_id);
    jw_str(j, "projectName", w->project_name);
    jw_str(j, "departmentId", w->department_id);
    jw_str(j, "departmentName", w->department_name);
    jw_str(j, "namespace", ns);
    jw_time(j, "createdAt", w->created_at);
    jw_time(j, "updatedAt", w->updated_at);
    jw_time(j, "deletedAt", w->deleted_at);
    jw_str(j, "phase", w->phase);
    jw_time(j, "phaseUpdatedAt", w->phase_updated_at);
    jw_str(j, "k8sPhase", running ? "Running" : "Pending");
    jw_time(j, "k8sPhaseUpdatedAt", w->phase_updated_at);
    jw_int(j, "runningPods", w->running_pods);
    jw_int(j, "priority", w->priority);
    jw_str(j, "priorityClassName", w->priority_class);
    jw_str(j, "source", "Control-plane");
    jw_str(j, "category", category(w->type));
    jw_str(j, "phaseMessage", w->phase_message);
    jw_str(j, "desiredPhase", w->desired_phase);
    jw_bool(j, "preemptible", w->preemptible);
    jw_str(j, "submittedBy", w->created_by);
    phase_reason_write(j, w->phase_reason);
    jw_key(j, "conditions");
    jw_open(j, '[');
    jw_open(j, '{');
    jw_str(j, "type", "Ready");
    jw_str(j, "status", running ? "True" : "False");
    jw_str(j, "reason", w->phase_reason);
    jw_str(j, "message", w->phase_message);
    jw_time(j, "lastTransitionTime", w->phase_updated_at);
    jw_close(j, '}');
    jw_close(j, ']');
    jw_key(j, "requestedPods");
    jw_open(j, '{');
    jw_int(j, "number", w->n_pods);
    jw_int(j, "min", w->min_pods);
    jw_int(j, "max", w->n_pods);
    jw_close(j, '}');
    requested_write(j, "workloadRequestedResources", w, w->n_pods);
    requested_write(j, "podsRequestedResources", w, 1);
    jw_key(j, "allocatedResources");
    jw_open(j, '{');
    jw_milli(j, "gpu", w->alloc_gpu_milli);
    if (w->gpu_memory_mib > 0)
        jw_mib(j, "gpuMemory", w->gpu_memory_mib * (w->gpu_devices > 0 ? w->gpu_devices : 1) *
                                   w->running_pods);
    jw_milli(j, "cpu", w->cpu_milli * w->running_pods);
    jw_mib(j, "cpuMemory", w->mem_mib * w->running_pods);
    jw_close(j, '}');
    pools_write(j, "requestedNodePools", w->pools);
    topology_write(j, w->topology);
    jw_key(j, "images");
    jw_open(j, '[');
    jw_str(j, NULL, w->image);
    jw_close(j, ']');
    jw_time(j, "completedAt", w->completed_at);
}

#define RUNNING_KEY "totalRunningTimeSeconds"

/* The field that moves with the clock: the earlier runs, and this one
 * while it runs. */
static int64_t running_seconds(const struct db_workload *w)
{
    return (w->run_ms + (w->started_ms > 0 && (strcmp(w->phase, "Running") == 0 ||
                                               strcmp(w->phase, "Initializing") == 0)
                             ? api_now_ms() - w->started_ms : 0)) / 1000;
}

/* The part after totalRunningTimeSeconds, left open for what the caller
 * adds. */
static void generic_tail(struct jw *j, const struct db_workload *w)
{
    jw_key(j, "actionsSupport");
    jw_open(j, '{');
    jw_bool(j, "delete", 1);
    jw_bool(j, "suspend", w->type != DB_INFERENCE);
    jw_close(j, '}');
    jw_json(j, "spec", w->spec, "{}");
}

/* The whole generic view, left open for what the caller adds. */
static void generic_write(struct jw *j, const struct db_workload *w)
{
    generic_head(j, w);
    jw_int(j, RUNNING_KEY, running_seconds(w));
    generic_tail(j, w);
}

/* A list's row: its kept view with the clock's field fresh, else written
 * and kept. The comma before the row is written first, so that what is
 * kept starts at its brace. */
static void generic_row_write(struct api_viewcache *vc, struct jw *j, const struct db_workload *w)
{
    size_t head, head_end, tail;

    if (j->need_comma)
        jw_raw(j, ",", 1);
    j->need_comma = 0;
    if (!api_viewcache_get(vc, w, j, RUNNING_KEY, running_seconds(w))) {
        head = j->n;
        generic_head(j, w);
        head_end = j->n;
        jw_int(j, RUNNING_KEY, running_seconds(w));
        tail = j->n;
        generic_tail(j, w);
        if (!j->failed)
            api_viewcache_put(vc, w, j->buf + head, head_end - head, j->buf + tail, j->n - tail);
    }
    jw_close(j, '}');
}

/* urls: where the pods' ports are reached, "http://ADDRESS:PORT" for each
 * port of each pod on an agent's node (simulated nodes run nothing). */
static json_t *urls_json(const struct db_workload *w, const struct db_pod *pods, int n)
{
    json_t *ports, *urls = json_array(), *p;
    char url[128];
    size_t k;
    int i;

    for (i = 0; i < n && (pods[i].simulated || !pods[i].address[0]); i++)
        ;
    if (i == n) /* no pod reachable: the spec's ports need not be read */
        return urls;
    ports = api_wl_ports(w->spec);
    for (i = 0; i < n; i++)
        json_array_foreach(ports, k, p) {
            if (pods[i].simulated || !pods[i].address[0])
                continue;
            snprintf(url, sizeof(url), strchr(pods[i].address, ':') ? "http://[%s]:%lld"
                                                                     : "http://%s:%lld",
                     pods[i].address, (long long)json_integer_value(json_object_get(p, "host")));
            json_array_append_new(urls, json_string(url));
        }
    json_decref(ports);
    return urls;
}

/* One workload: the generic view, and its pods' urls. */
static void generic_one_write(struct jw *j, const struct db_workload *w,
                              const struct db_pod *pods, int n)
{
    json_t *urls = urls_json(w, pods, n);
    char *text = json_array_size(urls) ? json_dumps(urls, JSON_COMPACT) : NULL;

    generic_write(j, w);
    jw_json(j, "urls", text, "[]");
    free(text);
    json_decref(urls);
    jw_close(j, '}');
}

/* ---- list and count ---- */

/* Does allot's cluster id pass filter f (a text field's operators)? */
static int cluster_passes(const struct db_filter *f)
{
    const char *id = API_CLUSTER_ID, *v = f->value;
    size_t n = strlen(id), m = strlen(v);
    int c = strcmp(id, v);

    if (f->op[1] == '@')
        return (strstr(id, v) != NULL) == (f->op[0] == '=');
    if (f->op[1] == '^')
        return strncmp(id, v, m) == 0;
    if (f->op[1] == '$')
        return n >= m && strcmp(id + n - m, v) == 0;
    return f->op[0] == '=' ? c == 0 : f->op[0] == '!' ? c != 0 : f->op[0] == '<' ? c <= 0
                                                                                  : c >= 0;
}

/* clusterId, the same for every workload (allot has one cluster): a sort
 * by it is the default order (createdAt); a filter on it keeps every row
 * (it goes) or none (it becomes id=="", which no workload has). */
static void cluster_fields(struct db_wl_query *q)
{
    int i, k = 0;

    if (strcmp(q->sort_by, "clusterId") == 0)
        q->sort_by[0] = 0;
    for (i = 0; i < q->n_filters; i++) {
        if (strcmp(q->filters[i].field, "clusterId") != 0) {
            q->filters[k++] = q->filters[i];
        } else if (!cluster_passes(&q->filters[i])) {
            q->filters[k] = q->filters[i];
            snprintf(q->filters[k].field, sizeof(q->filters[k].field), "id");
            snprintf(q->filters[k].op, sizeof(q->filters[k].op), "==");
            q->filters[k++].value[0] = 0;
        }
    }
    q->n_filters = k;
}

/* The list query (filterBy, sortBy, sortOrder, offset, limit, as every
 * list reads them) and deleted=true|false. */
static int query_in(struct api_req *r, struct db_wl_query *q)
{
    struct api_lq lq;
    char buf[8];
    int rc;

    memset(q, 0, sizeof(*q));
    if (api_lq_parse(r, &lq) != 0)
        return -1;
    q->n_filters = lq.n_filters;
    memcpy(q->filters, lq.filters, sizeof(q->filters));
    memcpy(q->sort_by, lq.sort_by, sizeof(q->sort_by));
    q->desc = lq.desc;
    q->offset = lq.offset;
    q->limit = lq.limit;
    cluster_fields(q);
    rc = api_query(r, "deleted", buf, sizeof(buf));
    if (rc != 1 && (rc != 0 || (strcmp(buf, "true") && strcmp(buf, "false"))))
        return api_error(r, 400, "Bad request", "deleted is true or false"), -1;
    /* deleted=true: the deleted ones only, as Run:ai's document says */
    q->include_deleted = rc == 0 && strcmp(buf, "true") == 0 ? DB_WL_DELETED_ONLY : 0;
    return 0;
}

/* Restricts q to the projects the caller may read, unless it may read all. */
static int scope_in(struct api_req *r, struct db_wl_query *q, int64_t **seqs)
{
    struct api_project_ref *ps = NULL;
    int n = 0, i, rc;

    *seqs = NULL;
    if (api_can(&r->who, API_WL_READ, "", ""))
        return 0;
    rc = api_project_refs(r->app, &ps, &n);
    if (rc != DB_OK)
        return api_db_error(r, rc, "cannot list projects"), -1;
    *seqs = malloc(sizeof(int64_t) * (size_t)(n + 1));
    if (!*seqs) {
        free(ps);
        return api_error(r, 500, "Internal error", "out of memory"), -1;
    }
    for (i = 0; i < n; i++)
        if (api_can(&r->who, API_WL_READ, ps[i].id, ps[i].parent_id))
            (*seqs)[q->n_projects++] = ps[i].seq;
    q->projects = *seqs;
    free(ps);
    return 0;
}

void api_h_wl_list(struct api_req *r)
{
    struct db_wl_query q;
    struct api_rows rows = {0};
    struct jw j = {0};
    int64_t *seqs = NULL;
    int i, rc;

    if (query_in(r, &q) || scope_in(r, &q, &seqs))
        goto out;
    q.limit++; /* one more row says whether there is a next page */
    rc = api_readcache_list(r->app->rcache, r->app->db, &q, &rows);
    q.limit--;
    if (rc != DB_OK) {
        api_db_error(r, rc, rc == DB_EINVAL ? "unknown filterBy or sortBy field, or bad value"
                                            : "cannot list");
        goto out;
    }
    jw_reserve(&j, (size_t)rows.n * WL_VIEW_BYTES); /* one allocation, not eight doublings */
    jw_open(&j, '{');
    jw_key(&j, "workloads");
    jw_open(&j, '[');
    for (i = 0; i < rows.n && i < q.limit; i++)
        generic_row_write(r->app->vc, &j, &rows.w[i]);
    jw_close(&j, ']');
    if (rows.n > q.limit)
        jw_int(&j, "next", (int64_t)q.offset + q.limit);
    jw_close(&j, '}');
    jw_reply(r, 200, &j);
out:
    api_rows_release(&rows);
    free(seqs);
}

void api_h_wl_count(struct api_req *r)
{
    struct db_wl_query q;
    int64_t *seqs = NULL, count = 0;
    int rc;

    if (query_in(r, &q) || scope_in(r, &q, &seqs))
        goto out;
    rc = db_workload_count(r->app->db, &q, &count);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot count");
        goto out;
    }
    api_reply(r, 200, json_pack("{s:I}", "count", (json_int_t)count));
out:
    free(seqs);
}

/* ---- one workload ---- */

/* The type a typed path (/workloads/trainings/{id}) insists on, or -1. */
static int path_type(const char *path)
{
    static const char *const seg[] = {"/trainings/", "/workspaces/", "/inferences/",
                                      "/distributed/"};
    int i;

    for (i = 0; i < 4; i++)
        if (strstr(path, seg[i]))
            return i;
    return -1;
}

/* The path's workload as read (rc), if the caller may read it (else 404)
 * and, when `perm` asks more, holds it (else 403). */
static int load_check(struct api_req *r, unsigned perm, struct db_workload *w, int rc)
{
    int t = path_type(r->path);

    if (rc == DB_OK && ((t >= 0 && w->type != t) ||
                        !api_can(&r->who, API_WL_READ, w->project_id, w->department_id)))
        rc = DB_ENOTFOUND;
    if (rc == DB_OK && w->deleted_at && perm != API_WL_READ)
        rc = DB_ENOTFOUND;
    if (rc != DB_OK) {
        api_db_error(r, rc, "no such workload");
        return -1;
    }
    if (perm != API_WL_READ && !api_can(&r->who, perm, w->project_id, w->department_id)) {
        api_error(r, 403, "Forbidden", "the caller may not change workloads of this project");
        return -1;
    }
    return 0;
}

/* Loads the path's workload (load_check()); with pods, its pods too, in
 * the same read. */
static int load_pods(struct api_req *r, unsigned perm, struct db_workload *w,
                     struct db_pod **pods, int *n)
{
    int rc = pods ? db_workload_get_pods(r->app->db, r->params[0], w, pods, n)
                  : db_workload_get(r->app->db, r->params[0], w);

    return load_check(r, perm, w, rc);
}

static int load(struct api_req *r, unsigned perm, struct db_workload *w)
{
    return load_pods(r, perm, w, NULL, NULL);
}

int api_wl_load(struct api_req *r, unsigned perm, struct db_workload *w)
{
    return load(r, perm, w);
}

void api_h_wl_get(struct api_req *r)
{
    struct db_workload w;
    struct db_pod *pods = NULL;
    struct jw j = {0};
    int typed = path_type(r->path) >= 0, n = 0, rc;

    /* the generic view's urls need the pods: read with the workload, from
     * memory on PostgreSQL while nothing changed (readcache.c) */
    rc = api_readcache_workload(r->app->rcache, r->app->db, r->params[0], &w,
                                typed ? NULL : &pods, &n);
    if (load_check(r, API_WL_READ, &w, rc) == 0) {
        if (typed)
            typed_write(&j, &w);
        else
            generic_one_write(&j, &w, pods, n);
        jw_reply(r, 200, &j);
    }
    free(pods);
    db_workload_clear(&w);
}

static void act(struct api_req *r, int action, const char *done)
{
    struct db_workload w;
    struct db_pending_caps caps = pending_caps(r);
    char msg[DB_NAME_LEN + 64], why[DB_MSG_LEN];
    int rc;

    if (load(r, API_WL_WRITE, &w) != 0)
        goto out;
    if (action != DB_WL_DELETE && w.type == DB_INFERENCE) {
        api_error(r, 400, "Bad request", "inference workloads cannot be suspended or resumed");
        goto out;
    }
    if (action == DB_WL_RESUME) /* Pending again: counted as a submission is */
        rc = db_workload_resume(r->app->db, w.seq, r->who.user.login, api_now_ms(), &caps, why,
                                sizeof(why));
    else
        rc = db_workload_act(r->app->db, w.seq, action, r->who.user.login, api_now_ms());
    if (rc == DB_ELIMIT) {
        api_error(r, 429, "Too many requests", why);
        goto out;
    }
    if (rc == DB_ECONFLICT && action == DB_WL_RESUME) {
        /* Run:ai's resume lists no 409: resuming what runs changes nothing */
        snprintf(msg, sizeof(msg), "workload %s is not suspended: nothing to resume", w.name);
        api_reply(r, 202, json_pack("{s:i, s:s}", "code", 202, "message", msg));
        goto out;
    }
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot change the workload");
        goto out;
    }
    ctl_sched_touch(r->app->sched, w.seq);
    snprintf(msg, sizeof(msg), "workload %s %s", w.name, done);
    api_reply(r, 202, json_pack("{s:i, s:s}", "code", 202, "message", msg));
out:
    db_workload_clear(&w);
}

/* ---- batch ---- */

#define BATCH_MAX 500

struct batch {
    int action;
    json_t *ids;
    int64_t seqs[BATCH_MAX];
    int idx[BATCH_MAX];        /* index into ids of each seq */
    int rcs[BATCH_MAX];
    int n;
};

static void batch_fail(json_t *failed, const char *id, int code, const char *message)
{
    json_array_append_new(failed, json_pack("{s:s, s:i, s:s}", "id", id, "code", code, "message",
                                            message));
}

/* Checks one id as the single-workload routes would; adds it to b or to
 * failed. */
static void batch_one(struct api_req *r, struct batch *b, int i, json_t *failed)
{
    const char *id = json_string_value(json_array_get(b->ids, (size_t)i));
    struct db_workload w;
    int rc = db_workload_get(r->app->db, id, &w);

    if (rc == DB_OK && (w.deleted_at || !api_can(&r->who, API_WL_READ, w.project_id,
                                                  w.department_id)))
        rc = DB_ENOTFOUND;
    if (rc != DB_OK)
        batch_fail(failed, id, rc == DB_ENOTFOUND ? 404 : 500, "no such workload");
    else if (!api_can(&r->who, API_WL_WRITE, w.project_id, w.department_id))
        batch_fail(failed, id, 403, "the caller may not change workloads of this project");
    else if (b->action != DB_WL_DELETE && w.type == DB_INFERENCE)
        batch_fail(failed, id, 400, "inference workloads cannot be suspended or resumed");
    else {
        b->seqs[b->n] = w.seq;
        b->idx[b->n++] = i;
    }
    db_workload_clear(&w);
}

static int batch_in(struct api_req *r, json_t *o, struct batch *b)
{
    static const char *const fields[] = {"ids", "action", NULL};
    static const char *const actions[] = {"delete", "suspend", "resume"};
    char action[16] = "";
    size_t i;

    if (api_json_allow(r, o, fields, NULL) ||
        api_json_str(r, o, "action", action, sizeof(action), 1))
        return -1;
    for (b->action = 0; b->action < 3 && strcmp(action, actions[b->action]); b->action++)
        ;
    b->ids = json_object_get(o, "ids");
    if (b->action == 3) {
        api_error(r, 400, "Bad request", "field 'action': delete, suspend or resume");
        return -1;
    }
    if (!json_is_array(b->ids) || json_array_size(b->ids) == 0 ||
        json_array_size(b->ids) > BATCH_MAX) {
        api_error(r, 400, "Bad request", "field 'ids': an array of 1 to 500 workload ids");
        return -1;
    }
    for (i = 0; i < json_array_size(b->ids); i++)
        if (!json_is_string(json_array_get(b->ids, i)) ||
            !api_is_uuid(json_string_value(json_array_get(b->ids, i)))) {
            api_error(r, 400, "Bad request", "field 'ids': workload ids are UUIDs");
            return -1;
        }
    return 0;
}

void api_h_wl_batch(struct api_req *r)
{
    struct batch *b = calloc(1, sizeof(*b));
    struct db_pending_caps caps = pending_caps(r);
    json_t *o = NULL, *ok, *failed;
    char id[DB_ID_LEN];
    int i;

    if (!b) {
        api_error(r, 500, "Internal error", "out of memory");
        return;
    }
    o = api_body_object(r);
    if (!o || batch_in(r, o, b) != 0)
        goto out;
    ok = json_array();
    failed = json_array();
    for (i = 0; i < (int)json_array_size(b->ids); i++)
        batch_one(r, b, i, failed);
    if (b->n > 0)
        db_workload_act_many(r->app->db, b->seqs, b->n, b->action, r->who.user.login,
                             api_now_ms(), &caps, b->rcs);
    for (i = 0; i < b->n; i++) {
        const char *wid = json_string_value(json_array_get(b->ids, (size_t)b->idx[i]));
        if (b->rcs[i] == DB_OK) {
            json_array_append_new(ok, json_string(wid));
            ctl_sched_touch(r->app->sched, b->seqs[i]);
        } else {
            batch_fail(failed, wid, b->rcs[i] == DB_ECONFLICT ? 409
                                    : b->rcs[i] == DB_ENOTFOUND ? 404
                                    : b->rcs[i] == DB_ELIMIT ? 429 : 500,
                       b->rcs[i] == DB_ECONFLICT ? "the workload is not suspended"
                       : b->rcs[i] == DB_ELIMIT
                           ? "its project or its submitter has as many pending workloads as"
                             " this server takes (allotd --max-pending-per-project,"
                             " --max-pending-per-user)"
                           : db_strerror(b->rcs[i]));
        }
    }
    db_uuid_new(id);
    api_reply(r, 200, json_pack("{s:s, s:o, s:o}", "id", id, "succeeded", ok, "failed", failed));
out:
    json_decref(o);
    free(b);
}

void api_h_wl_delete(struct api_req *r)
{
    act(r, DB_WL_DELETE, "is being deleted");
}

void api_h_wl_suspend(struct api_req *r)
{
    act(r, DB_WL_SUSPEND, "suspended");
}

void api_h_wl_resume(struct api_req *r)
{
    act(r, DB_WL_RESUME, "resumed");
}

/* Run:ai's Event of a workload's event. */
json_t *api_wl_event_json(const struct db_workload *w, const struct db_event *ev)
{
    char ns[DB_NAME_LEN + 8], id[DB_ID_LEN];

    snprintf(ns, sizeof(ns), "runai-%s", w->project_name);
    api_uuid_derived(w->id, API_UUID_EVENT, ev->seq, id);
    return json_pack("{s:o, s:s, s:s, s:s, s:s, s:s, s:s, s:{s:s, s:s, s:s, s:s}}", "createdAt",
                     api_time(ev->created_at), "id", id, "type", ev->type, "clusterId",
                     API_CLUSTER_ID, "message", ev->message, "reason", ev->reason, "source",
                     "allot-scheduler", "involvedObject", "uid", w->id, "kind", "Workload",
                     "name", w->name, "namespace", ns);
}

/* The events of w from `from` on, before `to` (0: no end), all of them,
 * oldest first (desc: newest first); -1 replied. */
static int events_between(struct api_req *r, const struct db_workload *w, int64_t from,
                          int64_t to, int desc, struct db_event **ev, int *n)
{
    int i, k, rc = db_event_list(r->app->db, w->seq, desc, 0, 1 << 30, ev, n);

    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot list events");
        return -1;
    }
    for (i = k = 0; i < *n; i++)
        if ((*ev)[i].created_at >= from && (!to || (*ev)[i].created_at < to))
            (*ev)[k++] = (*ev)[i];
    *n = k;
    return 0;
}

void api_wl_events_reply(struct api_req *r, const struct db_workload *w, int64_t from,
                         int64_t to)
{
    struct db_event *ev = NULL;
    struct api_lq q;
    int n = 0, i;
    json_t *a, *o;

    if (api_lq_parse(r, &q) != 0)
        goto out;
    if (q.n_filters || q.sort_by[0]) {
        api_error(r, 400, "Bad request", "the events take offset, limit and sortOrder only");
        goto out;
    }
    if (events_between(r, w, from, to, q.desc, &ev, &n) != 0)
        goto out;
    a = json_array();
    for (i = q.offset; i < n && i < q.offset + q.limit; i++)
        json_array_append_new(a, api_wl_event_json(w, &ev[i]));
    o = json_pack("{s:o}", "events", a);
    if (o && n > q.offset + q.limit)
        json_object_set_new(o, "next", json_integer(q.offset + q.limit));
    api_reply(r, 200, o);
out:
    free(ev);
}

void api_h_wl_events(struct api_req *r)
{
    struct db_workload w;

    if (load(r, API_WL_READ, &w) == 0)
        api_wl_events_reply(r, &w, 0, 0);
    db_workload_clear(&w);
}

/* ---- evictions across workloads ---- */

/* departmentId and nodepoolName of GET /api/v1/evictions[/count]: the
 * department's and the pool's seqs (0: not given); -1 replied 404. */
static int evictions_where(struct api_req *r, struct db_event_query *q)
{
    struct db_queue *dq;
    struct db_pool p;
    char buf[DB_NAME_LEN];
    int rc = 0;

    if (api_query(r, "nodepoolName", buf, sizeof(buf)) == 0) {
        if (db_pool_by_name(r->app->db, buf, &p) != DB_OK)
            return api_error(r, 404, "Not found", "nodepoolName names no node pool"), -1;
        q->pool_seq = p.seq;
    }
    if (api_query(r, "departmentId", buf, sizeof(buf)) != 0)
        return 0;
    dq = calloc(1, sizeof(*dq));
    if (!dq)
        return api_error(r, 500, "Internal error", "out of memory"), -1;
    if (db_queue_get(r->app->db, buf, dq) != DB_OK || dq->kind != DB_DEPARTMENT) {
        api_error(r, 404, "Not found", "departmentId names no department");
        rc = -1;
    }
    q->department_seq = dq->seq;
    free(dq);
    return rc;
}

/* start and end (ISO-8601; default: the day before now), offset and limit
 * (default 50, at most 500), departmentId and nodepoolName of
 * GET /api/v1/evictions[/count], and the caller's projects as a JSON
 * array (NULL: every project). */
static int evictions_in(struct api_req *r, struct db_event_query *q, char **reasons,
                        char **projects)
{
    struct db_wl_query wq;
    int64_t *seqs = NULL;
    json_t *a;
    char buf[64], *end;
    int i;

    memset(q, 0, sizeof(*q));
    *reasons = *projects = NULL;
    q->to_ms = api_now_ms() + 1;
    q->limit = API_PAGE_DEFAULT;
    if (api_query(r, "end", buf, sizeof(buf)) == 0 && api_parse_time(buf, &q->to_ms))
        return api_error(r, 400, "Bad request", "end must be an ISO-8601 time"), -1;
    q->from_ms = q->to_ms - 86400000LL;
    if (api_query(r, "start", buf, sizeof(buf)) == 0 && api_parse_time(buf, &q->from_ms))
        return api_error(r, 400, "Bad request", "start must be an ISO-8601 time"), -1;
    if (q->to_ms < q->from_ms)
        return api_error(r, 400, "Bad request", "start must not be after end"), -1;
    if (api_query(r, "offset", buf, 16) == 0 && ((q->offset = (int)strtol(buf, &end, 10)) < 0 ||
                                                   *end))
        return api_error(r, 400, "Bad request", "offset must be a non-negative integer"), -1;
    if (api_query(r, "limit", buf, 16) == 0 &&
        ((q->limit = (int)strtol(buf, &end, 10)) < 1 || q->limit > API_PAGE_MAX || *end))
        return api_error(r, 400, "Bad request", "limit must be between 1 and 500"), -1;
    if (evictions_where(r, q) != 0)
        return -1;
    memset(&wq, 0, sizeof(wq));
    if (scope_in(r, &wq, &seqs) != 0)
        return -1;
    a = json_array();
    for (i = 0; i < 3; i++)
        json_array_append_new(a, json_string(ctl_eviction_reasons[i]));
    *reasons = json_dumps(a, JSON_COMPACT);
    json_decref(a);
    if (seqs) {
        a = json_array();
        for (i = 0; i < wq.n_projects; i++)
            json_array_append_new(a, json_integer(seqs[i]));
        *projects = json_dumps(a, JSON_COMPACT);
        json_decref(a);
    }
    free(seqs);
    if (!*reasons || (seqs && !*projects))
        return api_error(r, 500, "Internal error", "out of memory"), -1;
    q->reasons_json = *reasons;
    q->projects_json = *projects;
    return 0;
}

void api_h_wl_evictions(struct api_req *r)
{
    struct db_event_query q;
    struct db_event_row *ev = NULL;
    char *reasons = NULL, *projects = NULL, id[DB_ID_LEN];
    int n = 0, i, rc;
    json_t *a, *o;

    if (evictions_in(r, &q, &reasons, &projects) != 0)
        goto out;
    q.limit++; /* one more row says whether there is a next page */
    rc = db_event_query_list(r->app->db, &q, &ev, &n);
    q.limit--;
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot list evictions");
        goto out;
    }
    a = json_array();
    for (i = 0; i < n && i < q.limit; i++) {
        api_uuid_derived(ev[i].workload_id, API_UUID_EVENT, ev[i].e.seq, id);
        json_array_append_new(
            a, json_pack("{s:s, s:o, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "id", id,
                         "createdAt", api_time(ev[i].e.created_at), "type", ev[i].e.type,
                         "reason", ev[i].e.reason, "message", ev[i].e.message, "workloadId",
                         ev[i].workload_id, "workloadName", ev[i].workload_name, "workloadType",
                         db_type_name(ev[i].workload_type), "projectId", ev[i].project_id,
                         "projectName", ev[i].project_name));
    }
    o = json_pack("{s:o}", "evictions", a);
    if (o && n > q.limit)
        json_object_set_new(o, "next", json_integer(q.offset + q.limit));
    api_reply(r, 200, o);
out:
    free(ev);
    free(reasons);
    free(projects);
}

void api_h_wl_evictions_count(struct api_req *r)
{
    struct db_event_query q;
    char *reasons = NULL, *projects = NULL;
    int64_t count = 0;
    int rc;

    if (evictions_in(r, &q, &reasons, &projects) != 0)
        goto out;
    rc = db_event_query_count(r->app->db, &q, &count);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot count evictions");
        goto out;
    }
    api_reply(r, 200, json_pack("{s:I}", "count", (json_int_t)count));
out:
    free(reasons);
    free(projects);
}

/* A pod's id: a UUID derived from its workload's and its index (Run:ai's
 * Pod id is a UUID); the same for the same pod. */
void api_pod_id(const struct db_workload *w, int idx, char *out, size_t len)
{
    char id[DB_ID_LEN];

    api_uuid_derived(w->id, API_UUID_POD, idx, id);
    snprintf(out, len, "%s", id);
}

/* {gpuRequestType, gpu: {request}, gpuMemory, cpu, cpuMemory: {request}}
 * of one pod. */
static json_t *pod_request_json(const struct db_workload *w)
{
    int shared = w->gpu_portion > 0 || w->gpu_memory_mib > 0;
    int n_dev = shared && w->gpu_devices < 1 ? 1 : w->gpu_devices;
    double gpu = w->gpu_portion ? dev(w->gpu_portion * n_dev) : (double)n_dev;
    char mem[32], gmem[32];

    snprintf(mem, sizeof(mem), "%lldMi", (long long)w->mem_mib);
    snprintf(gmem, sizeof(gmem), "%lldMi", (long long)w->gpu_memory_mib * n_dev);
    return json_pack("{s:s, s:{s:o}, s:{s:o}, s:{s:f}, s:{s:o}}", "gpuRequestType",
                     w->gpu_memory_mib > 0 ? "memory" : "portion", "gpu", "request",
                     w->gpu_memory_mib > 0 ? json_null() : json_real(gpu), "gpuMemory", "request",
                     w->gpu_memory_mib > 0 ? json_string(gmem) : json_null(), "cpu", "request",
                     dev(w->cpu_milli), "cpuMemory", "request",
                     w->mem_mib > 0 ? json_string(mem) : json_null());
}

/* How many pods a workload shows: none once stopped or deleted. */
static int pods_shown(const struct db_workload *w)
{
    return w->deleted_at || strcmp(w->phase, "Stopped") == 0 ? 0 : w->n_pods;
}

/* A pod's Kubernetes phase: Running where bound, Succeeded or Failed once
 * its workload ended, else Pending. */
static const char *pod_phase(const struct db_workload *w, const struct db_pod *p)
{
    if (strcmp(w->phase, "Completed") == 0)
        return "Succeeded";
    if (strcmp(w->phase, "Failed") == 0)
        return "Failed";
    return p ? "Running" : "Pending";
}

static json_t *pod_json(const struct db_workload *w, int idx, const struct db_pod *p)
{
    char id[DB_ID_LEN], name[DB_NAME_LEN + 16];
    json_t *devs = json_array();
    int d;

    api_pod_id(w, idx, id, sizeof(id));
    snprintf(name, sizeof(name), "%s-%d-0", w->name, idx);
    for (d = 0; p && d < 64; d++)
        if (p->devices & ((uint64_t)1 << d))
            json_array_append_new(devs, json_integer(d));
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:s?, s:s?, s:o, s:s, s:s,"
                     " s:o, s:o, s:o, s:o, s:[{s:s, s:s}], s:o, s:{s:f}, s:o}",
                     "id", id, "name", name, "workloadId", w->id, "workloadName", w->name,
                     "clusterId", API_CLUSTER_ID, "projectId", w->project_id, "projectName",
                     w->project_name, "tenantId", 1, "nodeName", p ? p->node_name : NULL,
                     "currentNodePool", p ? p->pool_name : NULL, "requestedNodePools",
                     pools_array(w->pools), "k8sPhase", pod_phase(w, p), "priorityClassName",
                     w->priority_class, "createdAt", api_time(w->created_at), "completedAt",
                     api_time(w->completed_at), "updatedAt", api_time(w->updated_at),
                     "k8sPhaseUpdatedAt", api_time(w->phase_updated_at), "containers", "name",
                     w->name, "image", w->image, "requestedResources", pod_request_json(w),
                     "allocatedResources", "gpu", p ? dev(p->gpu_milli) : 0.0, "gpuDevices",
                     devs);
}

/* The bound pod of index idx among pods[0..n) (sorted), or NULL. */
static const struct db_pod *pod_at(const struct db_pod *pods, int n, int64_t wl_seq, int idx)
{
    int i;

    for (i = 0; i < n; i++)
        if (pods[i].workload_seq == wl_seq && pods[i].idx == idx)
            return &pods[i];
    return NULL;
}

json_t *api_wl_pods_json(struct api_req *r, const struct db_workload *w)
{
    struct db_pod *pods = NULL;
    struct db_pod_gpu_row *gpus = NULL;
    int n = 0, n_gpus = 0, i, rc;
    json_t *a = NULL;

    rc = db_pod_list(r->app->db, w->seq, &pods, &n);
    if (rc == DB_OK)
        rc = db_pod_gpu_list(r->app->db, w->seq, &gpus, &n_gpus);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot list pods");
        goto out;
    }
    a = json_array();
    for (i = 0; i < pods_shown(w); i++) {
        json_t *o = pod_json(w, i, pod_at(pods, n, w->seq, i));
        json_object_set_new(o, "gpuUsage", api_pod_gpu_usage(gpus, n_gpus, i));
        json_array_append_new(a, o);
    }
out:
    free(pods);
    free(gpus);
    return a;
}

void api_h_wl_pods(struct api_req *r)
{
    struct db_workload w;
    json_t *a;

    if (load(r, API_WL_READ, &w) == 0 && (a = api_wl_pods_json(r, &w)) != NULL)
        api_reply(r, 200, json_pack("{s:o}", "pods", a));
    db_workload_clear(&w);
}

/* ---- every pod: /workloads/pods and its count ---- */

struct pod_row {
    const struct db_workload *w;
    int idx;
    const struct db_pod *p;
};

static int pod_row_get(const void *row, const char *f, struct api_lv *v)
{
    const struct pod_row *x = row;

    if (strcmp(f, "clusterId") == 0)
        v->s = API_CLUSTER_ID;
    else if (strcmp(f, "workloadId") == 0)
        v->s = x->w->id;
    else if (strcmp(f, "workloadName") == 0)
        v->s = x->w->name;
    else if (strcmp(f, "revisionId") == 0)
        v->s = "";
    else if (strcmp(f, "nodeName") == 0)
        v->s = x->p ? x->p->node_name : "";
    else if (strcmp(f, "currentNodepool") == 0)
        v->s = x->p ? x->p->pool_name : "";
    else if (strcmp(f, "createdAt") == 0 || strcmp(f, "completedAt") == 0 ||
             strcmp(f, "deletedAt") == 0) {
        v->kind = API_LV_DATE;
        v->d = (double)(f[1] == 'r' ? x->w->created_at
                        : f[0] == 'c' ? x->w->completed_at : x->w->deleted_at);
    } else
        return -1;
    return 0;
}

static json_t *pod_row_json(struct api_req *r, const void *row)
{
    const struct pod_row *x = row;

    (void)r;
    return pod_json(x->w, x->idx, x->p);
}

/* completed=all (default) | true (pods of ended workloads) | false;
 * verbosity=brief | full (one shape answers both); deleted=true lists
 * nothing, for allotd keeps no pods of deleted workloads. 0 ok. */
static int pods_query_in(struct api_req *r, int *completed, int *deleted)
{
    char v[16];

    *completed = -1;
    *deleted = 0;
    if (api_query(r, "completed", v, sizeof(v)) == 0 && strcmp(v, "all") != 0) {
        if (strcmp(v, "true") && strcmp(v, "false"))
            return api_error(r, 400, "Bad request", "completed is all, true or false"), -1;
        *completed = v[0] == 't';
    }
    if (api_query(r, "verbosity", v, sizeof(v)) == 0 && strcmp(v, "brief") && strcmp(v, "full"))
        return api_error(r, 400, "Bad request", "verbosity is brief or full"), -1;
    if (api_query(r, "deleted", v, sizeof(v)) == 0) {
        if (strcmp(v, "true") && strcmp(v, "false"))
            return api_error(r, 400, "Bad request", "deleted is true or false"), -1;
        *deleted = v[0] == 't';
    }
    return 0;
}

static int ended(const struct db_workload *w)
{
    return strcmp(w->phase, "Completed") == 0 || strcmp(w->phase, "Failed") == 0;
}

void api_h_pods_list(struct api_req *r)
{
    struct db_wl_query wq;
    struct db_workload *ws = NULL;
    struct db_pod *pods = NULL;
    struct pod_row *rows = NULL;
    struct api_lq q;
    int64_t *seqs = NULL;
    int n_w = 0, n_p = 0, n = 0, i, k, completed, deleted, rc;
    int count_only = (r->arg & API_ARG_COUNT) != 0;

    if (api_lq_parse(r, &q) != 0 || api_lq_search(r, &q, "workloadName") != 0 ||
        pods_query_in(r, &completed, &deleted) != 0)
        return;
    memset(&wq, 0, sizeof(wq));
    wq.limit = 1 << 30;
    if (scope_in(r, &wq, &seqs) != 0)
        return;
    rc = deleted ? DB_OK : db_workload_list(r->app->db, &wq, &ws, &n_w);
    if (rc == DB_OK && !deleted)
        rc = db_pod_list(r->app->db, 0, &pods, &n_p);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot list pods");
        goto out;
    }
    for (i = 0; i < n_w; i++)
        n += pods_shown(&ws[i]);
    rows = calloc((size_t)n + 1, sizeof(*rows));
    if (!rows) {
        api_error(r, 500, "Internal error", "out of memory");
        goto out;
    }
    for (n = 0, i = 0; i < n_w; i++)
        for (k = 0; (completed < 0 || completed == ended(&ws[i])) && k < pods_shown(&ws[i]); k++)
            rows[n++] = (struct pod_row){&ws[i], k, pod_at(pods, n_p, ws[i].seq, k)};
    api_lq_reply(r, &q, &(struct api_lq_rows){rows, n, sizeof(*rows), pod_row_get, pod_row_json},
                 "pods", count_only);
out:
    free(rows);
    free(pods);
    db_workloads_free(ws, n_w);
    free(seqs);
}

/* ---- history: events and the current phase ---- */

void api_wl_history_reply(struct api_req *r, const struct db_workload *w, int64_t from,
                          int64_t to, const struct api_phase_at *now)
{
    struct db_event *ev = NULL;
    struct api_lq q;
    int n = 0, i;
    json_t *a, *o;

    if (api_lq_parse(r, &q) != 0)
        goto out;
    if (q.n_filters || q.sort_by[0]) {
        api_error(r, 400, "Bad request", "the history takes offset and limit only");
        goto out;
    }
    if (events_between(r, w, from, to, 0, &ev, &n) != 0)
        goto out;
    a = json_array();
    for (i = q.offset; i < n && i < q.offset + q.limit; i++)
        json_array_append_new(a, json_pack("{s:{s:o, s:s}, s:{s:o}}", "meta", "creationTimestamp",
                                           api_time(ev[i].created_at), "type", "Event", "spec",
                                           "event", api_wl_event_json(w, &ev[i])));
    if (n >= q.offset && n < q.offset + q.limit)
        json_array_append_new(a, json_pack("{s:{s:o, s:s}, s:{s:{s:s, s:s}}}", "meta",
                                           "creationTimestamp", api_time(now->at), "type",
                                           "PhaseUpdate", "spec", "phaseUpdate", "phase",
                                           now->phase, "phaseMessage", now->message));
    o = json_pack("{s:o}", "records", a);
    if (o && n + 1 > q.offset + q.limit)
        json_object_set_new(o, "next", json_integer(q.offset + q.limit));
    api_reply(r, 200, o);
out:
    free(ev);
}

/* GET /workloads/{id}/history: Run:ai's HistoryRecords, its events (oldest
 * first) and, last, the phase it has been in since phaseUpdatedAt. */
void api_h_wl_history(struct api_req *r)
{
    struct db_workload w;

    if (load(r, API_WL_READ, &w) == 0) {
        struct api_phase_at now = {w.phase, w.phase_message, w.phase_updated_at};
        api_wl_history_reply(r, &w, 0, 0, &now);
    }
    db_workload_clear(&w);
}

/* ---- PATCH of an inference: image and replicas ---- */

/* Answers 501 naming the first field of spec allotd cannot change (Run:ai's
 * PATCH lists no 400: the field is valid, allotd does not implement it). */
static int unpatchable(struct api_req *r, json_t *spec, const char *const *patchable)
{
    const char *key, *const *p;
    char msg[160];
    json_t *v;

    json_object_foreach(spec, key, v) {
        for (p = patchable; *p && strcmp(*p, key) != 0; p++)
            ;
        if (*p)
            continue;
        snprintf(msg, sizeof(msg), "changing spec.%.64s is not implemented: allotd changes"
                 " image and autoscaling replicas", key);
        api_error(r, 501, "Not implemented", msg);
        return -1;
    }
    return 0;
}

/* PATCH /workloads/inferences/{id} {spec: {image, autoscaling: {minReplicas,
 * maxReplicas, initialReplicas}}}: the new spec is merged into the stored
 * one and read as a submission's is; the workload's pods are placed again
 * with it (202). Other fields of Run:ai's InferenceUpdateSpec answer 501,
 * naming the field. */
void api_h_wl_inference_patch(struct api_req *r)
{
    static const char *const body_fields[] = {"spec", NULL};
    static const char *const patchable[] = {"image", "autoscaling", NULL};
    struct db_workload w, *nw = NULL;
    struct db_wl_respec u;
    struct db_pending_caps caps;
    char why[DB_MSG_LEN];
    struct api_project project;
    json_t *o = NULL, *in, *spec = NULL, *top = NULL, *refs = NULL;
    struct jw j = {0};
    int rc;

    if (load(r, API_WL_WRITE, &w) != 0)
        goto out;
    o = api_body_object(r);
    if (!o || api_json_allow(r, o, body_fields, NULL))
        goto out;
    in = json_object_get(o, "spec");
    if (!json_is_object(in))
        goto out_bad;
    if (unpatchable(r, in, patchable))
        goto out;
    spec = w.spec ? json_loads(w.spec, 0, NULL) : json_object();
    if (!spec)
        spec = json_object();
    if (json_object_update(spec, in) != 0)
        goto out_bad;
    /* where the spec came from stays with it, and is no field to read */
    refs = json_incref(json_object_get(spec, "assets"));
    json_object_del(spec, "assets");
    nw = calloc(1, sizeof(*nw));
    top = json_pack("{s:O}", "spec", spec);
    if (!nw || !top) {
        api_error(r, 500, "Internal error", "out of memory");
        goto out;
    }
    nw->type = w.type;
    rc = api_project_lookup(r->app, w.project_id, &project);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot read the workload's project");
        goto out;
    }
    /* the merged spec is read as a submission's is */
    if (api_wl_spec_in(r, top, &project, nw) != 0 || api_assets_note(r, nw, refs) != 0)
        goto out;
    caps = pending_caps(r); /* Pending again: counted as a submission is */
    u = (struct db_wl_respec){w.seq, nw->image, nw->spec, nw->n_pods, nw->min_pods,
                              r->who.user.login, api_now_ms(), &caps, why, sizeof(why)};
    rc = nw->spec ? db_workload_respec(r->app->db, &u) : DB_ENOMEM;
    if (rc == DB_ELIMIT) {
        api_error(r, 429, "Too many requests", why);
        goto out;
    }
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot update the workload");
        goto out;
    }
    ctl_sched_touch(r->app->sched, w.seq);
    db_workload_clear(nw);
    rc = db_workload_get(r->app->db, w.id, nw);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot read the workload back");
        goto out;
    }
    typed_write(&j, nw);
    jw_reply(r, 202, &j);
    goto out;
out_bad:
    if (!r->status)
        api_error(r, 400, "Bad request", "field 'spec' must be an object");
out:
    if (nw)
        db_workload_clear(nw);
    free(nw);
    json_decref(top);
    json_decref(spec);
    json_decref(refs);
    json_decref(o);
    db_workload_clear(&w);
}
