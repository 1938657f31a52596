/*
 * h_agent.c: /api/v1/agent/...: agent tokens (create, list, revoke); what
 * allot-agent calls with one (register its node, heartbeat: report its
 * pods and GPU metrics and get the pods to run, and wait, when asked, for
 * them to change: control/assign_watch.c; upload pod logs); the
 * agents' nodes view. What the control loop does with what agents report
 * (silent nodes lost, workloads past their limits suspended) is
 * control/enforce.c.
 *
 * An agent token is "<id>.<secret>": the id names its row, the secret is
 * 43 random characters (about 256 bits) of which only the SHA-256 is
 * stored. The token is shown once, in the answer that creates it.
 *
 * Invariants:
 *   1. Agent routes are reached only with a valid, unrevoked agent token
 *      (api_agent_authenticate(), called by the dispatcher); user tokens do
 *      not work there and agent tokens work nowhere else.
 *   2. An agent acts only on its own node: the node is the one its token
 *      registered, never one a request names; pods and logs are checked
 *      against it (db_agent.h).
 *   3. Agents' bodies are read as strictly as users': allow-lists, types,
 *      lengths and counts.
 *   4. Creating, listing and revoking tokens needs the node-write right on
 *      the system scope (a System administrator).
 *   5. A heartbeat waits ("waitMs", at most a third of the lease) only
 *      once its report is recorded and its node's pods read, holding no
 *      lock and no transaction: a wait delays its answer, never what it
 *      reported; and only when its report changed no workload, so the log
 *      bytes the agent uploads after an answer follow a pod's end at once.
 */
#include "agent_int.h"
#include "db_agent.h"
#include "secrets.h"
#include "secretbox.h"

#include <civetweb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TOKEN_ID_LEN 12
#define TOKEN_SECRET_LEN 43
#define MAX_REPORTED_PODS 1024
#define DEFAULT_GRACE_S 30

/* ---- small checks ---- */

/* A host-like name: letters, digits, '.', '_' and '-', 1 to 63 long. */
static int valid_node_name(const char *s)
{
    size_t n = strlen(s);

    return n >= 1 && n <= 63 && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789._-") == n;
}

/* A host name or an IPv4/IPv6 address: letters, digits, '.', ':', '-'. */
static int valid_address(const char *s)
{
    size_t n = strlen(s);

    return n >= 1 && n < 64 && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789.:-") == n;
}

static int valid_uid(const char *s)
{
    size_t n = strlen(s);

    return n >= 1 && n < DB_ID_LEN && strspn(s, "0123456789abcdef") == n;
}

static int system_admin(struct api_req *r)
{
    if (api_can(&r->who, API_NODE_WRITE, "", ""))
        return 1;
    api_error(r, 403, "Forbidden", "agent tokens need the node-write right on the system");
    return 0;
}

/* ---- tokens ---- */

static json_t *token_json(const struct db_agent_token *t)
{
    return json_pack("{s:s, s:s, s:s, s:o, s:s, s:o, s:o, s:b, s:o, s:o}", "id", t->id, "name",
                     t->name, "nodeName", t->node_name, "createdAt", api_time(t->created_at),
                     "createdBy", t->created_by, "lastUsedAt", api_time(t->last_used_at),
                     "revokedAt", api_time(t->revoked_at), "revoked", t->revoked_at != 0,
                     "nodePool", t->pool[0] ? json_string(t->pool) : json_null(), "gpus",
                     t->has_gpus ? json_integer(t->n_gpus) : json_null());
}

/* The pool named in a request exists (400 if not); "" passes. */
static int pool_exists(struct api_req *r, const char *field, const char *name)
{
    struct db_pool p;
    char msg[256];
    int rc;

    if (!name[0])
        return 0;
    rc = db_pool_by_name(r->app->db, name, &p);
    if (rc == DB_OK)
        return 0;
    snprintf(msg, sizeof(msg), "field '%s': no node pool named %.100s", field, name);
    if (rc == DB_ENOTFOUND)
        api_error(r, 400, "Bad request", msg);
    else
        api_db_error(r, rc, "cannot read the node pools");
    return -1;
}

#define T struct db_agent_token
static const struct api_field token_fields[] = {
    API_FIELD_TEXT(T, "name", name, 64, API_F_REQUIRED, API_TEXT_LABEL),
    API_FIELD_STRN(T, "nodeName", node_name, 64, API_F_OPTIONAL),
    API_FIELD_STR(T, "nodePool", pool, API_F_OPTIONAL),
    API_FIELD_INT(T, "gpus", n_gpus, 0, 64),
};
#undef T

static int token_in(struct api_req *r, json_t *o, struct db_agent_token *t)
{
    t->n_gpus = -1;
    if (api_fields_in(r, o, token_fields, API_FIELDS_N(token_fields), t, NULL, 0) ||
        pool_exists(r, "nodePool", t->pool))
        return -1;
    t->has_gpus = json_object_get(o, "gpus") != NULL;
    if (!t->name[0] || strspn(t->name, " ") == strlen(t->name)) {
        api_error(r, 400, "Bad request", "field 'name': must not be empty");
        return -1;
    }
    if (t->node_name[0] && !valid_node_name(t->node_name)) {
        api_error(r, 400, "Bad request",
                  "field 'nodeName': letters, digits, '.', '_' and '-', at most 63");
        return -1;
    }
    return 0;
}

void api_h_agent_tokens_create(struct api_req *r)
{
    struct db_agent_token t;
    char secret[TOKEN_SECRET_LEN + 1], token[DB_ID_LEN + TOKEN_SECRET_LEN + 2];
    json_t *o = NULL;
    int rc;

    memset(&t, 0, sizeof(t));
    if (!system_admin(r) || !(o = api_body_object(r)) || token_in(r, o, &t) != 0)
        goto out;
    if (api_random_text(t.id, sizeof(t.id), TOKEN_ID_LEN) != 0 ||
        api_random_text(secret, sizeof(secret), TOKEN_SECRET_LEN) != 0) {
        api_error(r, 500, "Internal error", "no randomness");
        goto out;
    }
    api_sha256_hex(secret, strlen(secret), t.secret_hash);
    snprintf(t.created_by, sizeof(t.created_by), "%s", r->who.user.login);
    rc = db_agent_token_insert(r->app->db, &t);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot store the token");
        goto out;
    }
    snprintf(token, sizeof(token), "%s.%s", t.id, secret);
    api_reply(r, 201, json_pack("{s:s, s:s, s:s, s:s, s:o}", "id", t.id, "name", t.name,
                                "nodeName", t.node_name, "token", token, "createdAt",
                                api_time(t.created_at)));
out:
    memset(secret, 0, sizeof(secret));
    memset(token, 0, sizeof(token));
    json_decref(o);
}

void api_h_agent_tokens_list(struct api_req *r)
{
    struct db_agent_token *ts = NULL;
    int n = 0, i, rc;
    json_t *a;

    if (!system_admin(r))
        return;
    rc = db_agent_token_list(r->app->db, &ts, &n);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot list tokens");
        return;
    }
    a = json_array();
    for (i = 0; i < n; i++)
        json_array_append_new(a, token_json(&ts[i]));
    api_reply(r, 200, json_pack("{s:o}", "tokens", a));
    free(ts);
}

void api_h_agent_token_revoke(struct api_req *r)
{
    struct db_agent_token t;
    int rc;

    if (!system_admin(r))
        return;
    rc = db_agent_token_revoke(r->app->db, r->params[0], api_now_ms());
    if (rc == DB_OK)
        rc = db_agent_token_get(r->app->db, r->params[0], &t);
    if (rc != DB_OK) {
        api_db_error(r, rc, "no such token, or revoked already");
        return;
    }
    api_reply(r, 200, token_json(&t));
}

/* ---- authentication (invariant 1) ---- */

static int secret_matches(const char *secret, const char *hash)
{
    char h[65];
    unsigned char diff = 0;
    size_t i;

    api_sha256_hex(secret, strlen(secret), h);
    if (strlen(hash) != 64)
        return 0;
    for (i = 0; i < 64; i++)
        diff |= (unsigned char)(h[i] ^ hash[i]);
    return diff == 0;
}

int api_agent_authenticate(struct api_req *r)
{
    const char *h = mg_get_header(r->conn, "Authorization");
    const char *tok, *dot;
    char id[TOKEN_ID_LEN + 1];
    struct db_agent_token t;

    if (!h || strncasecmp(h, "Bearer ", 7) != 0) {
        api_error(r, 401, "Unauthorized", "an agent token is required");
        return -1;
    }
    tok = h + 7;
    dot = strchr(tok, '.');
    if (!dot || dot - tok != TOKEN_ID_LEN || strlen(dot + 1) != TOKEN_SECRET_LEN)
        goto bad;
    memcpy(id, tok, TOKEN_ID_LEN);
    id[TOKEN_ID_LEN] = 0;
    if (db_agent_token_get(r->app->db, id, &t) != DB_OK || t.revoked_at != 0 ||
        !secret_matches(dot + 1, t.secret_hash))
        goto bad;
    r->agent_token = t.seq;
    snprintf(r->agent_node, sizeof(r->agent_node), "%s", t.node_name);
    return 0;
bad:
    api_error(r, 401, "Unauthorized", "the agent token is invalid or revoked");
    return -1;
}

/* ---- registration ---- */

/* labels: an object of short strings; node_type from run.ai/type or node-type. */
static int labels_in(struct api_req *r, json_t *l, struct db_agent_reg *g, char **text)
{
    const char *key;
    json_t *v;

    *text = NULL;
    if (l && !json_is_null(l) && (!json_is_object(l) || json_object_size(l) > 64)) {
        api_error(r, 400, "Bad request", "field 'labels': an object of at most 64 labels");
        return -1;
    }
    json_object_foreach(l, key, v) {
        if (!json_is_string(v) || strlen(key) > 63 || json_string_length(v) > 63) {
            api_error(r, 400, "Bad request", "field 'labels': short string keys and values");
            return -1;
        }
        if (strcmp(key, "run.ai/type") == 0 || (strcmp(key, "node-type") == 0 && !g->node_type[0]))
            snprintf(g->node_type, sizeof(g->node_type), "%s", json_string_value(v));
    }
    *text = json_is_object(l) ? json_dumps(l, JSON_COMPACT | JSON_SORT_KEYS) : strdup("{}");
    if (!*text) {
        api_error(r, 500, "Internal error", "out of memory");
        return -1;
    }
    return 0;
}

/* gpus: [{index, uuid, model, memoryMiB}], indices 0..n-1 in order. The
 * node's device memory is its smallest device's (0 if none reports one). */
struct reg_gpu {
    int64_t index, memory_mib;
    char uuid[64], model[64];
};
#define D struct reg_gpu
static const struct api_field reg_gpu_fields[] = {
    API_FIELD_I64(D, "index", index, 0, 63),
    API_FIELD_STR(D, "uuid", uuid, API_F_OPTIONAL),
    API_FIELD_STR(D, "model", model, API_F_OPTIONAL),
    API_FIELD_I64(D, "memoryMiB", memory_mib, 0, (double)(INT64_C(1) << 40)),
};
#undef D

static int gpus_in(struct api_req *r, json_t *a, struct db_agent_reg *g, char **text)
{
    size_t i;

    *text = NULL;
    if (!json_is_array(a) || json_array_size(a) > 64) {
        api_error(r, 400, "Bad request", "field 'gpus': an array of at most 64 devices");
        return -1;
    }
    for (i = 0; i < json_array_size(a); i++) {
        json_t *d = json_array_get(a, i);
        struct reg_gpu dev = {.index = -1};
        if (!json_is_object(d) ||
            api_fields_in(r, d, reg_gpu_fields, API_FIELDS_N(reg_gpu_fields), &dev, "gpus[]", 0)) {
            if (!json_is_object(d))
                api_error(r, 400, "Bad request", "field 'gpus': devices are objects");
            return -1;
        }
        if (dev.index != (int64_t)i) {
            api_error(r, 400, "Bad request", "field 'gpus': indices must be 0, 1, ... in order");
            return -1;
        }
        if (i == 0)
            snprintf(g->gpu_type, sizeof(g->gpu_type), "%s", dev.model);
        if (dev.memory_mib > 0 &&
            (g->gpu_memory_mib == 0 || dev.memory_mib < g->gpu_memory_mib))
            g->gpu_memory_mib = dev.memory_mib;
    }
    g->n_gpus = (int)json_array_size(a);
    *text = json_dumps(a, JSON_COMPACT);
    if (!*text) {
        api_error(r, 500, "Internal error", "out of memory");
        return -1;
    }
    return 0;
}

/* The pool: the one named, else the oldest whose label the node carries,
 * else "default". */
static int pool_in(struct api_req *r, json_t *labels, struct db_agent_reg *g)
{
    struct db_pool *ps = NULL;
    int n = 0, i, rc;

    g->pool_pinned = g->pool[0] != 0;
    if (g->pool[0])
        return 0;
    snprintf(g->pool, sizeof(g->pool), "default");
    rc = db_pool_list(r->app->db, &ps, &n);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot list node pools");
        return -1;
    }
    for (i = 0; i < n && json_is_object(labels); i++) {
        json_t *v = json_object_get(labels, ps[i].label_key);
        if (json_is_string(v) && strcmp(json_string_value(v), ps[i].label_value) == 0) {
            snprintf(g->pool, sizeof(g->pool), "%s", ps[i].name);
            break;
        }
    }
    free(ps);
    return 0;
}

#define G struct db_agent_reg
static const struct api_field reg_fields[] = {
    API_FIELD_STRN(G, "name", name, 64, API_F_REQUIRED),
    API_FIELD_STR(G, "nodePool", pool, API_F_OPTIONAL),
    API_FIELD_OTHER("labels"), /* labels_in() */
    API_FIELD_OTHER("gpus"),   /* gpus_in() */
    API_FIELD_I64(G, "cpuMillis", cpu_milli, -1, (double)(INT64_C(1) << 40)),
    API_FIELD_I64(G, "memoryMiB", mem_mib, -1, (double)(INT64_C(1) << 40)),
    API_FIELD_I64(G, "heartbeatMs", heartbeat_ms, 100, 600000),
    API_FIELD_STR(G, "version", version, API_F_OPTIONAL),
    API_FIELD_STR(G, "runtime", runtime, API_F_OPTIONAL),
    API_FIELD_STR(G, "address", address, API_F_OPTIONAL),
};
#undef G

static int reg_in(struct api_req *r, json_t *o, struct db_agent_reg *g, char **labels,
                  char **gpus)
{
    g->cpu_milli = g->mem_mib = -1;
    g->heartbeat_ms = 2000;
    if (api_fields_in(r, o, reg_fields, API_FIELDS_N(reg_fields), g, NULL, 0))
        return -1;
    if (!g->address[0])
        snprintf(g->address, sizeof(g->address), "%s", r->remote);
    if (!valid_address(g->address)) {
        api_error(r, 400, "Bad request", "field 'address': a host name or an IP address");
        return -1;
    }
    if (!valid_node_name(g->name)) {
        api_error(r, 400, "Bad request",
                  "field 'name': letters, digits, '.', '_' and '-', at most 63");
        return -1;
    }
    if (labels_in(r, json_object_get(o, "labels"), g, labels) ||
        gpus_in(r, json_object_get(o, "gpus"), g, gpus) ||
        pool_in(r, json_object_get(o, "labels"), g))
        return -1;
    g->labels = *labels;
    g->gpus = *gpus;
    return 0;
}

/* The lease every answer to an agent renews: the agent stops its pods
 * once leaseMs have passed since it sent its last answered request, and
 * the server calls the node lost only lostAfterMs after the last request
 * it received (the lease plus a margin), so a pod is never requeued while
 * it may still run. */
static void lease_fields(const struct api_req *r, json_t *o)
{
    const struct api_config *cfg = &r->app->cfg;

    json_object_set_new(o, "leaseMs", json_integer(cfg->agent_lease_ms));
    json_object_set_new(o, "lostAfterMs",
                        json_integer((json_int_t)cfg->agent_lease_ms + cfg->agent_margin_ms));
}

/* At least three heartbeats fit in a lease, so one lost request or a slow
 * answer does not end it. */
static int heartbeat_fits(struct api_req *r, int64_t heartbeat_ms)
{
    int lease = r->app->cfg.agent_lease_ms;
    char msg[256];

    if (heartbeat_ms * 3 <= lease)
        return 1;
    snprintf(msg, sizeof(msg), "field 'heartbeatMs': %lld is too long for this server's agent"
             " lease of %d ms: at most a third of it (allot-agent --heartbeat-ms, allotd"
             " --agent-lease-ms)", (long long)heartbeat_ms, lease);
    api_error(r, 400, "Bad request", msg);
    return 0;
}

void api_h_agent_register(struct api_req *r)
{
    struct db_agent_reg *g = calloc(1, sizeof(*g));
    char *labels = NULL, *gpus = NULL;
    json_t *o = NULL, *reply;
    int rc;

    if (!g) {
        api_error(r, 500, "Internal error", "out of memory");
        return;
    }
    o = api_body_object(r);
    if (!o || reg_in(r, o, g, &labels, &gpus) != 0 || !heartbeat_fits(r, g->heartbeat_ms))
        goto out;
    g->token_seq = r->agent_token;
    g->now_ms = api_now_ms();
    rc = db_agent_register(r->app->db, g);
    if (rc == DB_ENOTFOUND || rc == DB_ECONFLICT) {
        api_error(r, rc == DB_ENOTFOUND ? 400 : 409,
                  rc == DB_ENOTFOUND ? "Bad request" : "Conflict", g->why);
        goto out;
    }
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot register the node");
        goto out;
    }
    ctl_sched_org_changed(r->app->sched);
    if (g->pending)
        fprintf(stderr, "allotd: agent: node %s asks for pool %s and %d GPUs; it has pool %s and"
                " %d GPUs until an admin approves (allot agent approve %s)\n", g->name, g->pool,
                g->n_gpus, g->approved_pool, g->effective_gpus, g->name);
    reply = json_pack("{s:s, s:s, s:s, s:I, s:i, s:b}", "nodeId", g->node_id, "name", g->name,
                      "nodePool", g->approved_pool, "heartbeatMs", (json_int_t)g->heartbeat_ms,
                      "gpuCount", g->effective_gpus, "pendingApproval", g->pending);
    if (reply)
        lease_fields(r, reply);
    api_reply(r, 200, reply);
out:
    json_decref(o);
    free(labels);
    free(gpus);
    free(g);
}

/* ---- heartbeats ---- */

static int pod_state(const char *s)
{
    if (strcmp(s, "Running") == 0)
        return DB_POD_RUNNING;
    if (strcmp(s, "Exited") == 0)
        return DB_POD_EXITED;
    if (strcmp(s, "Lost") == 0)
        return DB_POD_LOST;
    return -1;
}

struct pod_gpu_in {
    int64_t index, utilization, memory_used_mib;
};
#define D struct pod_gpu_in
static const struct api_field pod_gpu_fields[] = {
    API_FIELD_I64(D, "index", index, 0, 63),
    API_FIELD_I64(D, "utilization", utilization, 0, 100),
    API_FIELD_I64(D, "memoryUsedMiB", memory_used_mib, -1, (double)(INT64_C(1) << 40)),
    API_FIELD_OTHER("pids"),
};
#undef D

/* pods[].gpus: [{index, utilization, memoryUsedMiB, pids}], a device at
 * most once, utilisation and memory unknown (-1) when left out; into the
 * room at `room` (64 entries). */
static int pod_gpus_in(struct api_req *r, json_t *a, struct db_pod_report *p,
                       struct db_pod_gpu *room)
{
    uint64_t seen = 0;
    size_t i;

    if (!a || json_is_null(a))
        return 0;
    if (!json_is_array(a) || json_array_size(a) > 64) {
        api_error(r, 400, "Bad request", "field 'pods[].gpus': an array of at most 64 devices");
        return -1;
    }
    for (i = 0; i < json_array_size(a); i++) {
        json_t *d = json_array_get(a, i), *pids = json_object_get(d, "pids");
        struct pod_gpu_in dev = {-1, -1, -1}; /* absent: unknown */
        if (!json_is_object(d) || api_fields_in(r, d, pod_gpu_fields,
                                                API_FIELDS_N(pod_gpu_fields), &dev,
                                                "pods[].gpus[]", 0)) {
            if (!json_is_object(d))
                api_error(r, 400, "Bad request", "field 'pods[].gpus': devices are objects");
            return -1;
        }
        if (!json_object_get(d, "index") || seen >> dev.index & 1 ||
            (pids && (!json_is_array(pids) || json_array_size(pids) > 64))) {
            api_error(r, 400, "Bad request", "pods[].gpus[]: an index, once per pod; pids is"
                      " an array of at most 64 process ids");
            return -1;
        }
        seen |= (uint64_t)1 << dev.index;
        room[i].gpu = (int)dev.index;
        room[i].utilization = (int)dev.utilization;
        room[i].mem_mib = dev.memory_used_mib;
        room[i].pid = json_is_integer(json_array_get(pids, 0)) &&
                              json_integer_value(json_array_get(pids, 0)) > 0 &&
                              json_integer_value(json_array_get(pids, 0)) < INT32_MAX
                          ? (int)json_integer_value(json_array_get(pids, 0))
                          : 0;
    }
    p->has_gpus = 1;
    p->gpus = room;
    p->n_gpus = (int)json_array_size(a);
    return 0;
}

static int pod_in(struct api_req *r, json_t *o, struct db_pod_report *p, struct db_pod_gpu *room)
{
    static const char *const fields[] = {"uid", "state", "exitCode", "signal", "stopped", "ran",
                                         "at", "message", "gpus", NULL};
    char state[16] = "";
    int64_t code = 0, sig = 0, at = 0;
    int ran = 1;

    if (!json_is_object(o)) {
        api_error(r, 400, "Bad request", "field 'pods': pods are objects");
        return -1;
    }
    if (api_json_allow(r, o, fields, "pods[]") ||
        api_json_str(r, o, "uid", p->uid, sizeof(p->uid), 1) ||
        api_json_str(r, o, "state", state, sizeof(state), 1) ||
        api_json_int(r, o, "exitCode", -1, 255, &code) ||
        api_json_int(r, o, "signal", 0, 64, &sig) ||
        api_json_bool(r, o, "stopped", &p->stopped) || api_json_bool(r, o, "ran", &ran) ||
        api_json_int(r, o, "at", 0, INT64_C(1) << 50, &at) ||
        api_json_str(r, o, "message", p->message, 400, 0) ||
        pod_gpus_in(r, json_object_get(o, "gpus"), p, room))
        return -1;
    p->state = pod_state(state);
    if (!valid_uid(p->uid) || p->state < 0) {
        api_error(r, 400, "Bad request",
                  "pods[]: uid is lowercase hex; state is Running, Exited or Lost");
        return -1;
    }
    p->exit_code = (int)code;
    p->signal = (int)sig;
    p->never_ran = !ran;
    p->at_ms = at;
    return 0;
}

/* What a heartbeat's gpus[] say of a device: checked, then kept as the
 * text the agent sent. */
struct gpu_metric_in {
    int64_t index, utilization, memory_used_mib, memory_total_mib, processes;
    char uuid[64], model[64];
};
#define D struct gpu_metric_in
static const struct api_field gpu_metric_fields[] = {
    API_FIELD_I64(D, "index", index, 0, 63),
    API_FIELD_STR(D, "uuid", uuid, API_F_OPTIONAL),
    API_FIELD_STR(D, "model", model, API_F_OPTIONAL),
    API_FIELD_I64(D, "utilization", utilization, 0, 100),
    API_FIELD_I64(D, "memoryUsedMiB", memory_used_mib, 0, (double)(INT64_C(1) << 40)),
    API_FIELD_I64(D, "memoryTotalMiB", memory_total_mib, 0, (double)(INT64_C(1) << 40)),
    API_FIELD_I64(D, "processes", processes, 0, 1 << 20),
};
#undef D

/* gpus: [{index, uuid, model, utilization, memoryUsedMiB, memoryTotalMiB,
 * processes}] */
static int metrics_in(struct api_req *r, json_t *a, char **text)
{
    size_t i;

    *text = NULL;
    if (!a || json_is_null(a))
        return 0;
    if (!json_is_array(a) || json_array_size(a) > 64) {
        api_error(r, 400, "Bad request", "field 'gpus': an array of at most 64 devices");
        return -1;
    }
    for (i = 0; i < json_array_size(a); i++) {
        json_t *d = json_array_get(a, i);
        struct gpu_metric_in dev;
        if (!json_is_object(d) || api_fields_in(r, d, gpu_metric_fields,
                                                API_FIELDS_N(gpu_metric_fields), &dev, "gpus[]",
                                                0)) {
            if (!json_is_object(d))
                api_error(r, 400, "Bad request", "field 'gpus': devices are objects");
            return -1;
        }
    }
    *text = json_dumps(a, JSON_COMPACT);
    if (!*text) {
        api_error(r, 500, "Internal error", "out of memory");
        return -1;
    }
    return 0;
}

/* Each device's utilisation by index (-1 where not said), for idle limits. */
static void utilization_in(json_t *gpus, struct db_heartbeat *h, int *util)
{
    json_t *d;
    size_t i;
    int k;

    for (k = 0; k < 64; k++)
        util[k] = -1;
    json_array_foreach(gpus, i, d) {
        json_t *x = json_object_get(d, "index"), *u = json_object_get(d, "utilization");
        if (!json_is_integer(x) || !json_is_integer(u))
            continue;
        k = (int)json_integer_value(x);
        util[k] = (int)json_integer_value(u);
        if (k + 1 > h->n_util)
            h->n_util = k + 1;
    }
    h->utilization = util;
}

/* Room for 64 devices per pod: the pods' gpus arrays. */
static struct db_pod_gpu *gpu_room(json_t *pods)
{
    return calloc(json_array_size(pods) * 64 + 1, sizeof(struct db_pod_gpu));
}

static int heartbeat_in(struct api_req *r, json_t *o, struct db_heartbeat *h, char **gpus,
                        int *util, struct db_pod_gpu **room)
{
    static const char *const fields[] = {"pods", "gpus", "waitMs", "generation", NULL};
    json_t *pods = json_object_get(o, "pods");
    struct db_pod_report *ps;
    size_t i;

    if (api_json_allow(r, o, fields, NULL) || metrics_in(r, json_object_get(o, "gpus"), gpus))
        return -1;
    if (pods && !json_is_null(pods) &&
        (!json_is_array(pods) || json_array_size(pods) > MAX_REPORTED_PODS)) {
        api_error(r, 400, "Bad request", "field 'pods': an array of at most 1024 pods");
        return -1;
    }
    ps = calloc(json_array_size(pods) + 1, sizeof(*ps));
    *room = gpu_room(pods);
    h->pods = ps;
    if (!ps || !*room) {
        api_error(r, 500, "Internal error", "out of memory");
        return -1;
    }
    for (i = 0; i < json_array_size(pods); i++) {
        if (pod_in(r, json_array_get(pods, i), &ps[i], *room + i * 64) != 0)
            return -1;
        h->n_pods++;
    }
    h->gpus = *gpus;
    utilization_in(json_object_get(o, "gpus"), h, util);
    return 0;
}

static json_t *devices_json(uint64_t devices)
{
    json_t *a = json_array();
    int d;

    for (d = 0; a && d < 64; d++)
        if (devices & ((uint64_t)1 << d))
            json_array_append_new(a, json_integer(d));
    return a;
}

/* What a pod field (an environment variable's podFieldRef.path) means
 * here: the pod's name as GET /workloads/{id}/pods gives it, its node's
 * name, and its node's address (a pod shares its node's network). */
struct pod_fields {
    char name[DB_NAME_LEN + 16];
    const char *node, *address;
};

static const char *pod_field(const struct pod_fields *f, const char *path)
{
    if (strcmp(path, "metadata.name") == 0)
        return f->name;
    if (strcmp(path, "spec.nodeName") == 0)
        return f->node;
    if (strcmp(path, "status.podIP") == 0 || strcmp(path, "status.hostIP") == 0)
        return f->address;
    return NULL;
}

/* environmentVariables: [{name, value}], a podFieldRef's value resolved;
 * an excluded entry, or one that is neither (submitted before allotd
 * checked them), is left out. */
/* The value of a {secret: {name, key}} entry (secrets.h), opened for this
 * reply only: the agent's channel is the one place a value goes. NULL
 * (said on stderr, without the value) when it cannot be had. */
static json_t *secret_json(struct db *db, const char *project, const char *pod, json_t *ref)
{
    const char *name = json_string_value(json_object_get(ref, "name"));
    const char *key = json_string_value(json_object_get(ref, "key"));
    char *value = NULL;
    json_t *v;

    if (!name || !key || api_secret_value(db, project, name, key, &value) != 0) {
        fprintf(stderr, "allotd: pod %s: the key %s of secret %s of project %s cannot be had;"
                        " the pod waits\n", pod, key ? key : "?", name ? name : "?", project);
        return NULL;
    }
    v = json_string(value);
    api_secretbox_free(value);
    return v;
}

/* NULL when a secret's value cannot be had (the pod is not handed out). */
static json_t *env_json(struct db *db, const char *project, json_t *spec,
                        const struct pod_fields *f)
{
    json_t *in = json_object_get(spec, "environmentVariables"), *out = json_array(), *e;
    size_t i;

    json_array_foreach(in, i, e) {
        json_t *n = json_object_get(e, "name"), *v = json_object_get(e, "value");
        json_t *path = json_object_get(json_object_get(e, "podFieldRef"), "path");
        json_t *secret = json_object_get(e, "secret");
        if (!secret) /* a user credential is a secret its submitter created */
            secret = json_object_get(e, "userCredential");
        const char *field = json_is_string(path) ? pod_field(f, json_string_value(path)) : NULL;
        if (!json_is_string(n) || json_is_true(json_object_get(e, "exclude")))
            continue;
        if (json_is_string(v))
            json_array_append_new(out, json_pack("{s:O, s:O}", "name", n, "value", v));
        else if (field)
            json_array_append_new(out, json_pack("{s:O, s:s}", "name", n, "value", field));
        else if (json_is_object(secret)) {
            json_t *value = secret_json(db, project, f->name, secret);
            if (!value) {
                json_decref(out);
                return NULL;
            }
            json_array_append_new(out, json_pack("{s:O, s:o}", "name", n, "value", value));
        }
    }
    return out;
}

static int has_field_refs(json_t *spec)
{
    json_t *e;
    size_t i;

    json_array_foreach(json_object_get(spec, "environmentVariables"), i, e)
        if (json_object_get(e, "podFieldRef"))
            return 1;
    return 0;
}

static const char *spec_str(json_t *spec, const char *key)
{
    json_t *v = json_object_get(spec, key);

    return json_is_string(v) ? json_string_value(v) : "";
}

/* What handing out one pod needs besides its row: the store, allotd's key
 * (MPI's exec key is derived from it), its options (the rendezvous ports),
 * and what is found on the way: MPI's host file and the pod's "mpi" object. */
struct handout {
    struct db *db;
    const struct api_keyring *key;
    const struct api_config *cfg;
    char *hostfile;
    json_t *mpi;
};

/* The pods of w that meet, and where (dist_env.c): their variables
 * appended to env, MPI's host file and exec object into ho. -1 when they
 * cannot be told yet (the pod is handed out at a later heartbeat). */
static int distributed_in(struct handout *ho, const struct db_assignment *a, json_t *spec,
                          const struct db_workload *w, struct db_pod *pods, int n, json_t *env)
{
    struct api_dist d;
    json_t *workers = json_object_get(spec, "numWorkers");
    json_t *slots = json_object_get(spec, "slotsPerWorker");
    char key[65];
    int i, bound = 0, rc;

    memset(&d, 0, sizeof(d));
    snprintf(d.framework, sizeof(d.framework), "%s", spec_str(spec, "distributedFramework"));
    for (i = 0; i < n; i++)
        if (pods[i].node_seq != 0)
            pods[bound++] = pods[i];
    rc = db_rendezvous_ports(ho->db, w->seq, w->n_pods, ho->cfg->rendezvous_first,
                             ho->cfg->rendezvous_last, &d.port);
    if (rc == DB_OK) {
        d.has_master = !(json_is_integer(workers) && json_integer_value(workers) >= w->n_pods);
        d.pods = pods;
        d.n = bound;
        d.min_pods = w->min_pods;
        d.max_pods = w->n_pods;
        d.slots = json_is_integer(slots) ? (int)json_integer_value(slots) : 1;
        d.name = a->workload_name;
        rc = api_dist_env(&d, a->idx, env) == 0 ? DB_OK : DB_ENOTFOUND;
    }
    if (rc == DB_OK && strcmp(d.framework, "MPI") == 0) {
        if (!(ho->hostfile = api_dist_hostfile(&d)) ||
            api_dist_mpi_key(ho->key->key, ho->key->len, a->workload_id, key) != 0)
            rc = DB_ENOMEM;
        else
            ho->mpi = api_dist_mpi(&d, a->idx, key);
        memset(key, 0, sizeof(key));
    }
    return rc == DB_OK ? 0 : -1;
}

/* The environment of a's pod: the workload's variables (pod fields
 * resolved), then a distributed workload's (dist_env.c); NULL when it
 * cannot be told yet. The workload and its pods are read only when a
 * variable needs them. */
static json_t *assignment_env(struct handout *ho, const struct db_assignment *a, json_t *spec)
{
    struct pod_fields f = {"", "", ""};
    struct db_workload w;
    struct db_pod *pods = NULL;
    json_t *env = NULL;
    int n = 0, i, rc = DB_OK;

    memset(&w, 0, sizeof(w));
    snprintf(f.name, sizeof(f.name), "%s-%d-0", a->workload_name, a->idx);
    if (a->type == DB_DISTRIBUTED || has_field_refs(spec))
        rc = db_workload_get_pods(ho->db, a->workload_id, &w, &pods, &n);
    for (i = 0; rc == DB_OK && i < n; i++)
        if (pods[i].idx == a->idx) {
            f.node = pods[i].node_name;
            f.address = pods[i].address;
        }
    if (rc == DB_OK)
        env = env_json(ho->db, a->project_name, spec, &f);
    if (env && a->type == DB_DISTRIBUTED &&
        distributed_in(ho, a, spec, &w, pods, n, env) != 0) {
        json_decref(env);
        env = NULL;
    }
    db_workload_clear(&w);
    free(pods);
    return env;
}

/* What the agent needs to start a pod it does not know yet; NULL when it
 * cannot be told yet. */
static json_t *assignment_json(const struct api_app *app, const struct db_assignment *a)
{
    json_t *spec = a->spec ? json_loads(a->spec, 0, NULL) : NULL;
    json_t *grace = json_object_get(spec, "terminationGracePeriodSeconds");
    struct handout ho = {app->db, &app->key, &app->cfg, NULL, NULL};
    json_t *env = assignment_env(&ho, a, spec), *o = NULL;

    if (!env)
        goto out;
    o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:o, s:s, s:s, s:s, s:s, s:o, s:I, s:s, s:o}",
                  "uid",
                  a->uid, "workloadId", a->workload_id, "workloadName", a->workload_name,
                  "project", a->project_name, "type", db_type_name(a->type), "podIndex", a->idx,
                  "devices", devices_json(a->devices), "image", a->image, "command",
                  spec_str(spec, "command"), "args", spec_str(spec, "args"), "workingDir",
                  spec_str(spec, "workingDir"), "env", env,
                  "terminationGracePeriodSeconds",
                  (json_int_t)(json_is_integer(grace) && json_integer_value(grace) >= 0
                                   ? json_integer_value(grace)
                                   : DEFAULT_GRACE_S),
                  "imagePullPolicy", spec_str(spec, "imagePullPolicy"), "ports",
                  api_wl_ports(a->spec));
    if (o && ho.hostfile)
        json_object_set_new(o, "hostfile", json_string(ho.hostfile));
    if (o && ho.mpi)
        json_object_set(o, "mpi", ho.mpi);
    if (o && json_is_object(json_object_get(spec, "storage")))
        json_object_set(o, "storage", json_object_get(spec, "storage"));
out:
    free(ho.hostfile);
    json_decref(ho.mpi);
    json_decref(spec);
    return o;
}

static int was_reported(const struct db_heartbeat *h, const char *uid)
{
    int i;

    for (i = 0; i < h->n_pods; i++)
        if (strcmp(h->pods[i].uid, uid) == 0)
            return 1;
    return 0;
}

/* Pods the agent knows are named by uid only; new ones come in full. */
static json_t *assigned_json(const struct api_app *app, const struct db_heartbeat *h)
{
    json_t *a = json_array();
    int i;

    for (i = 0; a && i < h->n_assigned; i++)
        json_array_append_new(a, was_reported(h, h->assigned[i].uid)
                                     ? json_pack("{s:s}", "uid", h->assigned[i].uid)
                                     : assignment_json(app, &h->assigned[i]));
    return a;
}

/* The scheduler keeps a model: it re-reads what a heartbeat changed. */
static void tell_scheduler(struct api_req *r, const struct db_heartbeat *h)
{
    int i;

    if (h->node_changed)
        ctl_sched_org_changed(r->app->sched);
    for (i = 0; i < h->n_touched; i++)
        ctl_sched_touch(r->app->sched, h->touched[i]);
}

/* A heartbeat that waits for its node's pods to change (assign_watch.c):
 * "waitMs" at most, for a change after the "generation" an earlier answer
 * gave. */
struct hb_wait {
    int64_t wait_ms;      /* 0: it does not wait */
    int64_t generation;   /* -1: not given */
};

static int wait_in(struct api_req *r, json_t *o, struct hb_wait *w)
{
    w->wait_ms = 0;
    w->generation = -1;
    if (api_json_int(r, o, "waitMs", 1, r->app->cfg.agent_lease_ms / 3, &w->wait_ms) ||
        api_json_int(r, o, "generation", 0, INT64_C(1) << 53, &w->generation))
        return -1;
    if ((w->wait_ms > 0) != (w->generation >= 0)) {
        api_error(r, 400, "Bad request", "fields 'waitMs' and 'generation' go together: a "
                  "heartbeat waits for a change after the generation of an earlier answer");
        return -1;
    }
    return 0;
}

/* After the heartbeat's pods were read at `generation`: wait as asked,
 * then say so ("waited": the agent comes back at once) and give the
 * generation its next heartbeat names. A heartbeat whose report changed a
 * workload (a pod that started or ended) does not wait: its agent uploads
 * the pods' new log bytes once answered, and a workload seen Completed has
 * its whole log as soon as it did without waits. */
static void wait_and_say(struct api_req *r, const struct hb_wait *w, const struct db_heartbeat *h,
                         int64_t generation, json_t *reply)
{
    int waited = -1;

    if (w->wait_ms > 0 && (h->n_touched > 0 || h->node_changed))
        waited = 1;
    else if (w->wait_ms > 0)
        waited = ctl_watch_wait(r->app->watch, h->node_seq, w->generation, (int)w->wait_ms);

    if (!reply || !r->app->watch)
        return;
    json_object_set_new(reply, "generation", json_integer(generation));
    if (w->wait_ms > 0)
        json_object_set_new(reply, "waited", json_boolean(waited >= 0));
}

void api_h_agent_heartbeat(struct api_req *r)
{
    struct db_heartbeat h;
    struct db_pod_gpu *room = NULL;
    struct hb_wait w;
    char *gpus = NULL;
    int util[64];
    int64_t generation;
    json_t *o, *reply;
    int rc;

    memset(&h, 0, sizeof(h));
    o = api_body_object(r);
    if (!o || heartbeat_in(r, o, &h, &gpus, util, &room) != 0 || wait_in(r, o, &w) != 0)
        goto out;
    h.token_seq = r->agent_token;
    h.now_ms = api_now_ms();
    generation = ctl_watch_now(r->app->watch);   /* before the read: assign_watch.c, Step 1 */
    rc = db_agent_heartbeat(r->app->db, &h);
    if (rc == DB_ENOTFOUND) {
        api_error(r, 409, "Conflict", "the token has no node: register first");
        goto out;
    }
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot record the heartbeat");
        goto out;
    }
    tell_scheduler(r, &h);
    reply = json_pack("{s:o}", "pods", assigned_json(r->app, &h));
    if (reply)
        lease_fields(r, reply);
    wait_and_say(r, &w, &h, generation, reply);
    api_reply(r, 200, reply);
out:
    db_heartbeat_clear(&h);
    free((void *)h.pods);
    free(room);
    free(gpus);
    json_decref(o);
}

/* ---- logs ---- */

void api_h_agent_logs_append(struct api_req *r)
{
    struct db_pod_run run;
    char buf[32];
    int64_t offset = -1, size = 0;
    int rc;

    if (api_query(r, "offset", buf, sizeof(buf)) == 1) {
        api_error(r, 400, "Bad request", "offset: the log position of the body's first byte");
        return;
    }
    if (api_query_int(r, "offset", 0, INT64_MAX, &offset))
        return;
    rc = db_pod_run_get(r->app->db, r->params[0], &run);
    if (rc == DB_OK && strcmp(run.node_name, r->agent_node) != 0)
        rc = DB_ENOTFOUND; /* invariant 2 */
    if (rc != DB_OK) {
        api_db_error(r, rc, "no run of that pod on this node");
        return;
    }
    rc = api_log_append(r->app, run.workload_seq, run.uid, offset, r->body ? r->body : "",
                        r->body_len, &size);
    if (rc < 0) {
        api_error(r, 500, "Internal error", "cannot write the log");
        return;
    }
    api_reply(r, rc == 0 ? 200 : 409,
              rc == 0 ? json_pack("{s:I}", "size", (json_int_t)size)
                      : json_pack("{s:i, s:s, s:s, s:I}", "code", 409, "message", "Conflict",
                                  "details", "the log holds fewer bytes: resume at size",
                                  "size", (json_int_t)size));
}

/* ---- the agents' nodes ---- */

static json_t *agent_node_json(const struct db_agent_node *a)
{
    json_t *labels = json_loads(a->labels, 0, NULL), *gpus = json_loads(a->gpus, 0, NULL);
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:i, s:s, s:s, s:I, s:o, s:o, s:s, s:s, s:o,"
                          " s:o}",
                          "id", a->node_id, "name", a->name, "nodePool", a->pool_name, "status",
                          a->ready ? "Ready" : "NotReady", "gpuCount", a->n_gpus, "gpuType",
                          a->gpu_type, "tokenId", a->token_id, "heartbeatMs",
                          (json_int_t)a->heartbeat_ms, "registeredAt",
                          api_time(a->registered_at), "lastHeartbeatAt", api_time(a->last_seen),
                          "agentVersion", a->version, "runtime", a->runtime, "labels",
                          labels ? labels : json_object(), "gpus", gpus ? gpus : json_array());

    if (o) {
        json_object_set_new(o, "approved", json_pack("{s:s, s:i}", "nodePool", a->pool_name,
                                                     "gpus", a->approved_gpus));
        json_object_set_new(o, "requested", json_pack("{s:s, s:i}", "nodePool",
                                                      a->requested_pool, "gpus",
                                                      a->requested_gpus));
        json_object_set_new(o, "pendingApproval",
                            json_boolean(strcmp(a->requested_pool, a->pool_name) != 0 ||
                                         a->requested_gpus != a->approved_gpus));
    }
    return o;
}

void api_h_agent_nodes(struct api_req *r)
{
    struct db_agent_node *ns = NULL;
    int n = 0, i, rc;
    json_t *a;

    rc = db_agent_node_list(r->app->db, &ns, &n);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot list agent nodes");
        return;
    }
    a = json_array();
    for (i = 0; i < n; i++)
        json_array_append_new(a, agent_node_json(&ns[i]));
    api_reply(r, 200, json_pack("{s:o}", "nodes", a));
    db_agent_nodes_free(ns, n);
}

/* ---- an admin sets or approves an agent node's pool and GPU count ---- */

/* 200 with the agent node named, as the list shows it. */
static void reply_node(struct api_req *r, const char *name)
{
    struct db_agent_node *ns = NULL;
    int n = 0, i, rc = db_agent_node_list(r->app->db, &ns, &n);

    for (i = 0; rc == DB_OK && i < n && strcmp(ns[i].name, name) != 0; i++)
        ;
    if (rc != DB_OK)
        api_db_error(r, rc, "cannot read the node");
    else if (i == n)
        api_error(r, 404, "Not found", "the node is gone");
    else
        api_reply(r, 200, agent_node_json(&ns[i]));
    db_agent_nodes_free(ns, n);
}

static void approved(struct api_req *r, struct db_agent_approval *a)
{
    int rc;

    if (!system_admin(r))
        return;
    a->node = r->params[0];
    rc = db_agent_node_approve(r->app->db, a);
    if (rc == DB_ENOTFOUND) {
        api_error(r, 404, "Not found", a->why);
        return;
    }
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot change the node");
        return;
    }
    ctl_sched_org_changed(r->app->sched);
    reply_node(r, a->node);
}

/* POST /api/v1/agent/nodes/{name}/approve: what it asked for last. */
void api_h_agent_node_approve(struct api_req *r)
{
    struct db_agent_approval a;

    memset(&a, 0, sizeof(a));
    a.take_requested = 1;
    approved(r, &a);
}

/* PATCH /api/v1/agent/nodes/{name} {nodePool?, gpus?}: what an admin sets. */
void api_h_agent_node_set(struct api_req *r)
{
    static const char *const fields[] = {"nodePool", "gpus", NULL};
    struct db_agent_approval a;
    char pool[DB_NAME_LEN] = "";
    int64_t gpus = -1;
    json_t *o;

    memset(&a, 0, sizeof(a));
    if (!system_admin(r) || !(o = api_body_object(r)))
        return;
    if (api_json_allow(r, o, fields, NULL) == 0 &&
        api_json_str(r, o, "nodePool", pool, sizeof(pool), 0) == 0 &&
        api_json_int(r, o, "gpus", 0, 64, &gpus) == 0 && pool_exists(r, "nodePool", pool) == 0) {
        a.pool = pool[0] ? pool : NULL;
        a.n_gpus = json_object_get(o, "gpus") ? (int)gpus : -1;
        approved(r, &a);
    }
    json_decref(o);
}
