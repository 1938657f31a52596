/*
 * h_whatif.c: what a change would do, answered without making it (an
 * allot extension): POST /api/v1/workloads/{type}?dryRun=true (a
 * submission; h_workloads.c reads and checks it as a real one, then calls
 * api_wl_dry_run()) and POST /api/v1/whatif (a list of changes an admin
 * considers). whatif.c runs the scheduler's next turn on a copy.
 *
 * Step 1  read the changes: each by the table change_types[] (its fields,
 *         and how it is read and checked); every change needs the right
 *         the real one needs (quotas: org-write on the queue's parent;
 *         nodes: node-write on the system; workloads: workload-write on
 *         their project, and a workload the caller cannot read is a 404);
 * Step 2  run (wi_run(): 503 when WI_MAX_RUNS others kept it waiting for
 *         WI_WAIT_MS);
 * Step 3  answer: the workloads that would start, stop or move, each
 *         named only if the caller may read its project ("1 GPU of another
 *         project" otherwise); for a submission its own placement or
 *         pending reason and message; for /whatif the fair shares before
 *         and after of the queues the caller may read; the header
 *         Server-Timing says how the run was made, how long it took and
 *         the CPU time it used.
 *
 * Invariants:
 *   1. Nothing is stored: the database and the scheduler's state are as
 *      they were, whatever the answer.
 *   2. A change the caller could not make for real is refused with the
 *      status the real request would get.
 */
#include "api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

#define MAX_CHANGES 32

/* ---- Step 3: the answer ---- */

static json_t *gpu_json(int64_t milli)
{
    return json_real((double)milli / 1000.0);
}

static void gpu_text(int64_t milli, char *buf, size_t len)
{
    if (milli % 1000 == 0)
        snprintf(buf, len, "%lld GPU%s", (long long)(milli / 1000), milli == 1000 ? "" : "s");
    else
        snprintf(buf, len, "%.2f GPU", (double)milli / 1000.0);
}

static json_t *pods_json(const struct wi_result *res, const struct wi_pod *pods, int n)
{
    json_t *a = json_array(), *devs;
    int i, d;

    for (i = 0; i < n; i++) {
        devs = json_array();
        for (d = 0; d < 64; d++)
            if (pods[i].devices & ((uint64_t)1 << d))
                json_array_append_new(devs, json_integer(d));
        json_array_append_new(a, json_pack("{s:i, s:s, s:o}", "index", pods[i].index,
                                           "nodeName", res->m.topo->nodes[pods[i].node].name,
                                           "gpuDevices", devs));
    }
    return a;
}

static const struct db_queue *queue_row(const struct wi_result *res, int q)
{
    return q >= 0 && q < res->m.n_queues ? &res->m.topo->queues[q] : NULL;
}

static int may_read_workloads(struct api_req *r, const struct db_queue *q)
{
    return q && api_can(&r->who, API_WL_READ, q->id, q->parent_id);
}

/* The pool of an effect: where its pods run after, else where they ran. */
static json_t *pool_json(const struct wi_result *res, const struct wi_effect *e)
{
    const struct wi_pod *p = e->n_after ? e->after : e->n_before ? e->before : NULL;

    return p ? json_string(res->m.pools[res->m.nodes[p->node].pool].name) : json_null();
}

static json_t *effect_json(struct api_req *r, const struct wi_result *res,
                           const struct wi_effect *e)
{
    const struct db_queue *q = queue_row(res, e->queue), *by = queue_row(res, e->by_queue);
    int shown = may_read_workloads(r, q);
    struct db_workload w;
    char gpus[32], text[DB_NAME_LEN * 2 + 64];
    json_t *o;

    gpu_text(e->gpu_milli, gpus, sizeof(gpus));
    if (shown)
        snprintf(text, sizeof(text), "%s of %s (%s)", e->name, q->name, gpus);
    else
        snprintf(text, sizeof(text), "%s of another project", gpus);
    o = json_pack("{s:b, s:o, s:s, s:o, s:s}", "visible", shown, "gpu", gpu_json(e->gpu_milli),
                  "reason", wi_reason_name(e->reason), "nodePool", pool_json(res, e),
                  "description", text);
    json_object_set_new(o, "name", shown ? json_string(e->name) : json_null());
    json_object_set_new(o, "projectId", shown ? json_string(q->id) : json_null());
    json_object_set_new(o, "projectName", shown ? json_string(q->name) : json_null());
    json_object_set_new(o, "workloadId", json_null());
    if (shown && e->seq > 0 && db_workload_get_seq(r->app->db, e->seq, &w) == DB_OK)
        json_object_set_new(o, "workloadId", json_string(w.id));
    if (shown && e->seq > 0)
        db_workload_clear(&w);
    json_object_set_new(o, "pods", pods_json(res, e->after, e->n_after));
    json_object_set_new(o, "previousPods", pods_json(res, e->before, e->n_before));
    if (by && may_read_workloads(r, by))
        json_object_set_new(o, "forWorkload", json_pack("{s:s, s:s}", "name", e->by_name,
                                                        "projectName", by->name));
    else
        json_object_set_new(o, "forWorkload", json_null());
    return o;
}

/* The effects of one kind (enum wi_what). */
static json_t *effects_json(struct api_req *r, const struct wi_result *res, int what)
{
    json_t *a = json_array();
    int i;

    for (i = 0; i < res->n_effects; i++)
        if (res->effects[i].what == what)
            json_array_append_new(a, effect_json(r, res, &res->effects[i]));
    return a;
}

static json_t *figures_json(const struct wi_figures *f)
{
    if (!f->known)
        return json_null();
    return json_pack("{s:o, s:o, s:o}", "deserved",
                     f->deserved[0] < 0 ? json_integer(-1) : gpu_json(f->deserved[0]),
                     "fairShare", gpu_json(f->fair[0]), "allocated", gpu_json(f->allocated[0]));
}

static int may_read_queue(struct api_req *r, const struct db_queue *q)
{
    if (q->kind == DB_PROJECT)
        return api_can(&r->who, API_ORG_READ, q->id, q->parent_id);
    return api_can(&r->who, API_ORG_READ, "", q->id);
}

static int all_zero(const struct wi_figures *f)
{
    return f->deserved[0] == 0 && f->fair[0] == 0 && f->allocated[0] == 0;
}

/* GPU figures of every queue and pool the caller may read, but those with
 * nothing before nor after. */
static json_t *shares_json(struct api_req *r, const struct wi_result *res)
{
    json_t *a = json_array();
    int i;

    for (i = 0; i < res->n_shares; i++) {
        const struct wi_share *s = &res->shares[i];
        const struct db_queue *q = &res->m.topo->queues[s->queue];
        if (!may_read_queue(r, q) || (all_zero(&s->before) && all_zero(&s->after)))
            continue;
        json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s, s:o, s:o}", "kind",
                                           q->kind == DB_PROJECT ? "project" : "department",
                                           "id", q->id, "name", q->name, "nodePool",
                                           res->m.pools[s->pool].name, "before",
                                           figures_json(&s->before), "after",
                                           figures_json(&s->after)));
    }
    return a;
}

/* Step 2 and its failures; 0 when res is filled. */
static int run(struct api_req *r, const struct wi_change *ch, int n, struct wi_result *res)
{
    static const char busy[] = "{\"code\":503,\"message\":\"Service unavailable\",\"details\":"
                               "\"other what-if runs kept this one waiting; retry in a second\"}";
    struct ctl_share *before = NULL;
    int n_before = 0, rc;

    ctl_sched_shares(r->app->sched, &before, &n_before);
    rc = wi_run(r->app->sched, ch, n, before, n_before, res);
    free(before);
    if (rc == WI_BUSY)
        api_reply_with(r, 503, "application/json", busy, sizeof(busy) - 1,
                       "Retry-After: 1\r\n");
    else if (rc != 0)
        api_error(r, 500, "Internal error", "the scheduler's state could not be copied");
    return rc;
}

/* The answer, with how it was made in a Server-Timing header: "kept" (on
 * the scheduler's own state) or "copy" (on a copy of its model), the
 * milliseconds the run took (the copy or fork, the passes) and the CPU
 * milliseconds it used (the request's thread, and a kept run's child up
 * to its answer). */
static void reply_timed(struct api_req *r, json_t *o, const struct wi_result *res)
{
    char *s = json_dumps(o, JSON_COMPACT);
    char timing[96];

    snprintf(timing, sizeof(timing),
             "Server-Timing: whatif;desc=\"%s\";dur=%.3f, cpu;dur=%.3f\r\n",
             res->kept ? "kept" : "copy", (double)(res->copy_us + res->run_us) / 1000.0,
             (double)res->cpu_us / 1000.0);
    if (s)
        api_reply_with(r, 200, "application/json", s, strlen(s), timing);
    else
        api_error(r, 500, "Internal error", "out of memory");
    free(s);
    json_decref(o);
}

/* ---- the submission ---- */

void api_wl_dry_run(struct api_req *r, const struct db_workload *w)
{
    struct db_sched_pod *pods = calloc((size_t)w->n_pods + 1, sizeof(*pods));
    struct db_sched_wl row;
    struct wi_change ch;
    struct wi_result res;
    json_t *o;

    if (!pods) {
        api_error(r, 500, "Internal error", "out of memory");
        return;
    }
    memset(&row, 0, sizeof(row));
    row.project_seq = w->project_seq;
    row.name = w->name;
    row.pools = w->pools;
    row.node_type = w->node_type;
    row.affinity = w->affinity;
    row.phase = "Pending";
    row.phase_reason = row.phase_message = "";
    row.type = w->type;
    row.priority = w->priority;
    row.preemptible = w->preemptible;
    row.n_pods = w->n_pods;
    row.min_pods = w->min_pods;
    row.gpu_devices = w->gpu_devices;
    row.gpu_portion = w->gpu_portion;
    row.cpu_milli = w->cpu_milli;
    row.mem_mib = w->mem_mib;
    row.gpu_memory_mib = w->gpu_memory_mib;
    row.pods = pods;
    memset(&ch, 0, sizeof(ch));
    ch.kind = WI_SUBMIT;
    ch.submission = &row;
    if (run(r, &ch, 1, &res) == 0) {
        o = json_pack("{s:b, s:s, s:s, s:s, s:s, s:b, s:s, s:s, s:s, s:o, s:o, s:o}",
                      "dryRun", 1, "name", w->name, "type", db_type_name(w->type), "projectId",
                      w->project_id, "projectName", w->project_name, "wouldRun", res.placed,
                      "phase", res.phase, "pendingReason", res.phase_reason, "pendingMessage",
                      res.phase_message, "nodePool",
                      res.pool >= 0 ? json_string(res.m.pools[res.pool].name) : json_null(),
                      "gpu", gpu_json(res.gpu_milli), "pods",
                      pods_json(&res, res.pods, res.n_pods));
        json_object_set_new(o, "evictions", effects_json(r, &res, WI_STOP));
        json_object_set_new(o, "moved", effects_json(r, &res, WI_MOVE));
        json_object_set_new(o, "started", effects_json(r, &res, WI_START));
        json_object_set_new(o, "passes", json_integer(res.passes));
        reply_timed(r, o, &res);
    }
    wi_result_free(&res);
    free(pods);
}

/* ---- Step 1: the changes of /whatif ---- */

struct changes {
    struct wi_change ch[MAX_CHANGES];
    struct db_queue *queues[MAX_CHANGES];   /* WI_QUOTA: malloc'd */
    struct db_node nodes[MAX_CHANGES];      /* WI_ADD_NODE */
    struct db_node *all_nodes;              /* the cluster's, read once */
    int n_all_nodes, n;
};

static int may_change_nodes(struct api_req *r)
{
    if (api_can(&r->who, API_NODE_WRITE, "", ""))
        return 1;
    api_error(r, 403, "Forbidden", "changing nodes needs the node-write right on the system");
    return 0;
}

static int nodes_read(struct api_req *r, struct changes *c)
{
    int rc;

    if (c->all_nodes)
        return 0;
    rc = db_node_list(r->app->db, &c->all_nodes, &c->n_all_nodes);
    if (rc != DB_OK)
        return api_db_error(r, rc, "cannot list nodes"), -1;
    return 0;
}

static const struct db_node *node_named(const struct changes *c, const char *name)
{
    int i;

    for (i = 0; i < c->n_all_nodes; i++)
        if (strcmp(c->all_nodes[i].name, name) == 0)
            return &c->all_nodes[i];
    return NULL;
}

static int quota_in(struct api_req *r, json_t *o, struct changes *c, struct wi_change *ch)
{
    char pid[DB_ID_LEN + 8] = "", did[DB_ID_LEN + 8] = "";
    int replace = 0;
    json_t *res = json_object_get(o, "resources");

    if (api_json_str(r, o, "projectId", pid, sizeof(pid), 0) ||
        api_json_str(r, o, "departmentId", did, sizeof(did), 0) ||
        api_json_bool(r, o, "replace", &replace))
        return -1;
    if (!pid[0] == !did[0])
        return api_error(r, 400, "Bad request",
                         "a quota change names a projectId or a departmentId"), -1;
    if (!res)
        return api_error(r, 400, "Bad request", "a quota change needs resources"), -1;
    c->queues[c->n] = api_queue_resources_in(r, pid[0] ? DB_PROJECT : DB_DEPARTMENT,
                                             pid[0] ? pid : did, res, replace);
    ch->queue = c->queues[c->n];
    return ch->queue ? 0 : -1;
}

/* The node by its name alone: a list of every node sums what each holds
 * (a join over every pod), milliseconds at 1,000 nodes. */
static int drain_in(struct api_req *r, json_t *o, struct changes *c, struct wi_change *ch)
{
    char name[DB_NAME_LEN] = "";
    struct db_node n;
    int rc;

    (void)c;
    if (!may_change_nodes(r) || api_json_str(r, o, "nodeName", name, sizeof(name), 1))
        return -1;
    rc = db_node_get(r->app->db, name, &n);
    if (rc == DB_ENOTFOUND)
        return api_error(r, 400, "Bad request", "nodeName names no node"), -1;
    if (rc != DB_OK)
        return api_db_error(r, rc, "cannot read the node"), -1;
    ch->node_seq = n.seq;
    return 0;
}

/* An added node's labels: its node type, and its pool's label. */
static void node_labels(struct db_node *n, const struct db_pool *p)
{
    json_t *labels = json_object();
    char *text;

    if (n->node_type[0])
        json_object_set_new(labels, "node-type", json_string(n->node_type));
    if (p->label_key[0])
        json_object_set_new(labels, p->label_key, json_string(p->label_value));
    text = json_dumps(labels, JSON_COMPACT | JSON_SORT_KEYS);
    snprintf(n->labels, sizeof(n->labels), "%s", text ? text : "{}");
    free(text);
    json_decref(labels);
}

/* A node named by the change, or "whatif-N" (N its place in the list). */
static int add_node_in(struct api_req *r, json_t *o, struct changes *c, struct wi_change *ch)
{
    struct db_node *n = &c->nodes[c->n];
    char pool[DB_NAME_LEN] = "default", mem[32] = "";
    struct db_pool p;
    int64_t gpus = -1;
    int i, rc;

    if (!may_change_nodes(r) || api_json_str(r, o, "name", n->name, sizeof(n->name), 0) ||
        api_json_str(r, o, "nodePool", pool, sizeof(pool), 0) ||
        api_json_int(r, o, "gpus", 0, SCHED_MAX_NODE_GPUS, &gpus) ||
        api_json_str(r, o, "nodeType", n->node_type, sizeof(n->node_type), 0) ||
        api_json_str(r, o, "gpuMemory", mem, sizeof(mem), 0) || nodes_read(r, c))
        return -1;
    if (gpus < 0)
        return api_error(r, 400, "Bad request", "an added node needs gpus"), -1;
    if (mem[0] && api_quantity_mib(mem, &n->gpu_memory_mib) != 0)
        return api_error(r, 400, "Bad request", "gpuMemory: a quantity such as 80Gi"), -1;
    if (!n->name[0])
        snprintf(n->name, sizeof(n->name), "whatif-%d", c->n + 1);
    for (i = 0; i < c->n; i++)
        if (c->ch[i].kind == WI_ADD_NODE && strcmp(c->nodes[i].name, n->name) == 0)
            break;
    if (i < c->n || node_named(c, n->name))
        return api_error(r, 400, "Bad request", "an added node's name is taken"), -1;
    rc = db_pool_by_name(r->app->db, pool, &p);
    if (rc != DB_OK)
        return api_error(r, 400, "Bad request", "nodePool names no node pool"), -1;
    n->pool_seq = p.seq;
    n->n_gpus = (int)gpus;
    n->cpu_milli = n->mem_mib = -1;
    node_labels(n, &p);
    ch->node = n;
    return 0;
}

/* A workload the caller could delete or suspend (as DELETE and /suspend
 * check it). */
static int workload_in(struct api_req *r, json_t *o, struct changes *c, struct wi_change *ch)
{
    char id[DB_ID_LEN + 8] = "";
    struct db_workload w;
    int rc = -1;

    (void)c;
    if (api_json_str(r, o, "workloadId", id, sizeof(id), 1))
        return -1;
    if (db_workload_get(r->app->db, id, &w) != DB_OK || w.deleted_at ||
        !api_can(&r->who, API_WL_READ, w.project_id, w.department_id))
        api_error(r, 404, "Not found", "workloadId names no workload");
    else if (!api_can(&r->who, API_WL_WRITE, w.project_id, w.department_id))
        api_error(r, 403, "Forbidden", "the caller may not change workloads of this project");
    else if (ch->kind == WI_SUSPEND && w.type == DB_INFERENCE)
        api_error(r, 400, "Bad request", "inference workloads cannot be suspended or resumed");
    else {
        ch->workload_seq = w.seq;
        rc = 0;
    }
    db_workload_clear(&w);
    return rc;
}

static const char *const quota_fields[] = {"type", "projectId", "departmentId", "resources",
                                           "replace", NULL};
static const char *const drain_fields[] = {"type", "nodeName", NULL};
static const char *const add_node_fields[] = {"type", "name", "nodePool", "gpus", "nodeType",
                                              "gpuMemory", NULL};
static const char *const workload_fields[] = {"type", "workloadId", NULL};

/* perm: the right the real change's route asks before its handler runs
 * (the dispatcher answers 403 without it). */
static const struct change_type {
    const char *name;
    int kind;                          /* enum wi_change_kind */
    unsigned perm;
    const char *const *fields;
    int (*in)(struct api_req *r, json_t *o, struct changes *c, struct wi_change *ch);
} change_types[] = {
    {"quota", WI_QUOTA, API_ORG_WRITE, quota_fields, quota_in},
    {"drainNode", WI_DRAIN, API_NODE_WRITE, drain_fields, drain_in},
    {"addNode", WI_ADD_NODE, API_NODE_WRITE, add_node_fields, add_node_in},
    {"deleteWorkload", WI_DELETE, API_WL_WRITE, workload_fields, workload_in},
    {"suspendWorkload", WI_SUSPEND, API_WL_WRITE, workload_fields, workload_in},
};

static int change_in(struct api_req *r, json_t *o, struct changes *c)
{
    char type[32] = "";
    size_t t;

    if (!json_is_object(o))
        return api_error(r, 400, "Bad request", "changes[] entries are objects"), -1;
    if (api_json_str(r, o, "type", type, sizeof(type), 1))
        return -1;
    for (t = 0; t < sizeof(change_types) / sizeof(change_types[0]); t++)
        if (strcmp(change_types[t].name, type) == 0)
            break;
    if (t == sizeof(change_types) / sizeof(change_types[0]))
        return api_error(r, 400, "Bad request", "changes[].type: quota, drainNode, addNode, "
                                                "deleteWorkload or suspendWorkload"), -1;
    if (api_json_allow(r, o, change_types[t].fields, "changes[]"))
        return -1;
    if (!api_can_any(&r->who, change_types[t].perm))
        return api_error(r, 403, "Forbidden", "the caller may not make this change"), -1;
    c->ch[c->n].kind = change_types[t].kind;
    if (change_types[t].in(r, o, c, &c->ch[c->n]) != 0)
        return -1;
    c->n++;
    return 0;
}

static int changes_in(struct api_req *r, json_t *body, struct changes *c)
{
    static const char *const fields[] = {"changes", NULL};
    json_t *a = json_object_get(body, "changes");
    size_t i;

    if (api_json_allow(r, body, fields, NULL))
        return -1;
    if (!json_is_array(a) || json_array_size(a) == 0 || json_array_size(a) > MAX_CHANGES)
        return api_error(r, 400, "Bad request",
                         "field 'changes': an array of 1 to 32 changes"), -1;
    for (i = 0; i < json_array_size(a); i++)
        if (change_in(r, json_array_get(a, i), c) != 0)
            return -1;
    return 0;
}

void api_h_whatif(struct api_req *r)
{
    struct changes *c = calloc(1, sizeof(*c));
    struct wi_result res;
    json_t *body = NULL, *o;
    int i;

    memset(&res, 0, sizeof(res));
    if (!c) {
        api_error(r, 500, "Internal error", "out of memory");
        return;
    }
    body = api_body_object(r);
    if (!body || changes_in(r, body, c) != 0 || run(r, c->ch, c->n, &res) != 0)
        goto out;
    o = json_pack("{s:o, s:o, s:o, s:o, s:i}", "started", effects_json(r, &res, WI_START),
                  "stopped", effects_json(r, &res, WI_STOP), "moved",
                  effects_json(r, &res, WI_MOVE), "fairShares", shares_json(r, &res), "passes",
                  res.passes);
    reply_timed(r, o, &res);
out:
    wi_result_free(&res);
    for (i = 0; i < MAX_CHANGES; i++)
        free(c->queues[i]);
    free(c->all_nodes);
    json_decref(body);
    free(c);
}
