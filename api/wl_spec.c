/*
 * wl_spec.c: what a workload submission says, read strictly: every field
 * the API accepts takes effect, every other is refused with a 400 that
 * names it and says why (never accepted and dropped).
 *
 * Step 1  the top level: masterSpec is refused (a distributed master runs
 *         the workers' spec); templateId and assets were resolved into
 *         the spec before (h_assets.c); then the project's policies
 *         (h_policy.c) fill in their defaults and check their rules;
 * Step 2  spec, by the table spec_table[]: which workload types a field
 *         applies to, or why allot refuses it; then each group in turn:
 *         compute (whole devices, a portion or GPU memory of one or more
 *         shared devices, CPU, memory), node pools, node types (the
 *         project's list, any of them in order), required node affinity,
 *         topology (the levels it requires and prefers), priority and
 *         preemptibility, pods (parallelism, workers,
 *         replicas), ports, and the fields that must match what allot
 *         does (restartPolicy, category, completions);
 * Step 3  the project's effective scheduling rules, kept with the
 *         workload: Run:ai applies the rules a workload was submitted
 *         under, not ones set later.
 * The spec is stored as submitted; the agent reads command, args,
 * workingDir, environmentVariables, imagePullPolicy, ports and
 * terminationGracePeriodSeconds from it when it starts a pod.
 */
#include "api.h"
#include "secrets.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

#define T_TRAIN (1u << DB_TRAINING)
#define T_WORKSPACE (1u << DB_WORKSPACE)
#define T_INFERENCE (1u << DB_INFERENCE)
#define T_DIST (1u << DB_DISTRIBUTED)
#define T_ALL (T_TRAIN | T_WORKSPACE | T_INFERENCE | T_DIST)

/* ---- the table of spec fields ---- */

/* A value of a refused field that asks for what allot does anyway (an
 * empty list, a default of Run:ai's document that names allot's own
 * behaviour): accepted, as if absent. */
typedef int (*spec_as_allot)(json_t *v);

static int empty_list(json_t *v)
{
    return json_is_array(v) && json_array_size(v) == 0;
}

static int empty_list_or_object(json_t *v)
{
    return empty_list(v) || (json_is_object(v) && json_object_size(v) == 0);
}

static int is_false(json_t *v)
{
    return json_is_false(v);
}

/* sshAuthMountPath: the document's default; allot mounts no SSH keys. */
static int default_ssh_path(json_t *v)
{
    return json_is_string(v) && strcmp(json_string_value(v), "/root/.ssh") == 0;
}

/* The MPI launcher starts with the workers, as a gang does. */
static int launcher_at_startup(json_t *v)
{
    return json_is_string(v) && strcmp(json_string_value(v), "AtStartup") == 0;
}

/* Every pod of a finished workload is removed. */
static int clean_all(json_t *v)
{
    return json_is_string(v) && strcmp(json_string_value(v), "All") == 0;
}

struct spec_field {
    const char *name;
    unsigned types;            /* the workload types it applies to */
    const char *refused;       /* why allot refuses it (any non-null value), or NULL */
    spec_as_allot as_allot;    /* the refused field's values accepted (NULL: none) */
};

static const struct spec_field spec_table[] = {
    {"image", T_ALL, NULL, NULL},
    {"imagePullPolicy", T_ALL, NULL, NULL},
    {"command", T_ALL, NULL, NULL},
    {"args", T_ALL, NULL, NULL},
    {"workingDir", T_ALL, NULL, NULL},
    {"environmentVariables", T_ALL, NULL, NULL},
    {"compute", T_ALL, NULL, NULL},
    {"nodePools", T_ALL, NULL, NULL},
    {"nodeType", T_ALL, NULL, NULL},
    {"nodeAffinityRequired", T_ALL, NULL, NULL},
    {"priorityClass", T_ALL, NULL, NULL},
    {"preemptibility", T_ALL, NULL, NULL},
    {"terminationGracePeriodSeconds", T_ALL, NULL, NULL},
    {"ports", T_ALL, NULL, NULL},
    {"category", T_ALL, NULL, NULL},
    {"restartPolicy", T_ALL, NULL, NULL},
    {"parallelism", T_TRAIN, NULL, NULL},
    {"completions", T_TRAIN, NULL, NULL},
    {"distributedFramework", T_DIST, NULL, NULL},
    {"numWorkers", T_DIST, NULL, NULL},
    {"minReplicas", T_DIST, NULL, NULL},
    {"maxReplicas", T_DIST, NULL, NULL},
    {"autoscaling", T_INFERENCE, NULL, NULL},
    {"servingPort", T_INFERENCE, NULL, NULL},
    {"backoffLimit", T_TRAIN | T_WORKSPACE | T_DIST, NULL, NULL},
    {"terminateAfterPreemption", T_ALL,
     "a preempted workload always goes back to Pending and starts again", is_false},
    {"autoDeletionTimeAfterCompletionSeconds", T_ALL,
     "allot keeps finished workloads until they are deleted", NULL},
    {"labels", T_ALL, "allot pods carry no Kubernetes labels", empty_list},
    {"annotations", T_ALL, "allot pods carry no Kubernetes annotations", empty_list},
    {"tolerations", T_ALL, "allot nodes have no taints; use nodeAffinityRequired", empty_list},
    {"podAffinity", T_ALL, "allot places pods by node affinity only", empty_list_or_object},
    {"exposedUrls", T_ALL, NULL, NULL},
    {"topology", T_ALL, NULL, NULL},
    {"relatedUrls", T_ALL, "allot keeps no related links", empty_list},
    {"security", T_ALL, "pods run as the agent's user", empty_list_or_object},
    {"storage", T_ALL, NULL, NULL},
    {"createHomeDir", T_ALL, "pods run as the agent's user", is_false},
    {"stdin", T_ALL, "pods are not attached to a terminal", is_false},
    {"tty", T_ALL, "pods are not attached to a terminal", is_false},
    {"probes", T_ALL, "allot runs no probes", empty_list_or_object},
    {"imagePullSecrets", T_ALL, "the agent pulls with its own credentials", empty_list},
    {"cleanPodPolicy", T_DIST, "every pod of a finished workload is removed (All)", clean_all},
    {"slotsPerWorker", T_DIST, NULL, NULL},
    {"mpiLauncherCreationPolicy", T_DIST,
     "the MPI launcher starts with its workers (AtStartup)", launcher_at_startup},
    {"sshAuthMountPath", T_DIST,
     "allot mounts no SSH keys: only the default /root/.ssh is accepted", default_ssh_path},
    {"servingConfiguration", T_INFERENCE, "allot does not configure servers", NULL},
    {NULL, 0, NULL, NULL},
};

static const char *const type_words[] = {"trainings", "workspaces", "inferences",
                                         "distributed workloads"};

/* Every key of spec is in the table, applies to this type and is not
 * refused (a null value counts as absent). */
static int spec_fields_in(struct api_req *r, json_t *spec, int type)
{
    char msg[300];
    const char *key;
    json_t *v;
    int i, t;

    json_object_foreach(spec, key, v) {
        for (i = 0; spec_table[i].name && strcmp(spec_table[i].name, key) != 0; i++)
            ;
        if (!spec_table[i].name) {
            snprintf(msg, sizeof(msg), "unknown field 'spec.%.64s'", key);
            return api_error(r, 400, "Bad request", msg), -1;
        }
        if (json_is_null(v) || (spec_table[i].as_allot && spec_table[i].as_allot(v)))
            continue;
        if (spec_table[i].refused) {
            snprintf(msg, sizeof(msg), "spec.%s is not supported: %s", key,
                     spec_table[i].refused);
            return api_error(r, 400, "Bad request", msg), -1;
        }
        if (!(spec_table[i].types & (1u << type))) {
            size_t n = (size_t)snprintf(msg, sizeof(msg), "spec.%s applies to", key);
            for (t = 0; t < 4; t++)
                if (spec_table[i].types & (1u << t))
                    n += (size_t)snprintf(msg + n, sizeof(msg) - n, " %s", type_words[t]);
            snprintf(msg + n, sizeof(msg) - n, " only");
            return api_error(r, 400, "Bad request", msg), -1;
        }
    }
    return 0;
}

/* ---- compute ---- */

static const char *const compute_fields[] = {
    "gpuDevicesRequest", "gpuRequestType", "gpuPortionRequest", "gpuPortionLimit",
    "gpuMemoryRequest", "gpuMemoryLimit", "cpuCoreRequest", "cpuCoreLimit", "cpuMemoryRequest",
    "cpuMemoryLimit", "largeShmRequest", "extendedResources", NULL,
};

/* A limit must be absent or equal to its request: allot does not enforce
 * GPU limits (no memory isolation), and a different one would be dropped. */
static int limit_matches(struct api_req *r, json_t *c, const char *limit, const char *request)
{
    json_t *l = json_object_get(c, limit), *q = json_object_get(c, request);
    char msg[200];

    if (!l || json_is_null(l) || json_equal(l, q))
        return 0;
    snprintf(msg, sizeof(msg), "spec.compute.%s is not supported unless it equals %s: allot "
             "does not enforce GPU limits", limit, request);
    api_error(r, 400, "Bad request", msg);
    return -1;
}

static int refused_compute(struct api_req *r, json_t *c)
{
    static const char *const refused[][2] = {
        {"cpuCoreLimit", "allot does not cap a pod's CPU; cpuCoreRequest is what it reserves"},
        {"cpuMemoryLimit", "allot does not cap a pod's memory; cpuMemoryRequest is what it "
                           "reserves"},
        {"largeShmRequest", "pods get the shared memory of their node"},
        {"extendedResources", "allot schedules GPU, CPU and memory only"},
    };
    char msg[200];
    size_t i;

    for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        json_t *v = json_object_get(c, refused[i][0]);
        if (v && !json_is_null(v)) {
            snprintf(msg, sizeof(msg), "spec.compute.%s is not supported: %s", refused[i][0],
                     refused[i][1]);
            return api_error(r, 400, "Bad request", msg), -1;
        }
    }
    return limit_matches(r, c, "gpuPortionLimit", "gpuPortionRequest") ||
           limit_matches(r, c, "gpuMemoryLimit", "gpuMemoryRequest");
}

/* GPU: whole devices (gpuDevicesRequest), a portion of each of
 * gpuDevicesRequest shared devices (gpuPortionRequest, below 1), or GPU
 * memory of one shared device (gpuMemoryRequest, gpuRequestType memory). */
static int gpu_in(struct api_req *r, json_t *c, struct db_workload *w)
{
    int64_t devices = -1;
    double portion = -1;
    char type[16] = "", mem[32] = "";

    if (api_json_int(r, c, "gpuDevicesRequest", 0, SCHED_MAX_NODE_GPUS, &devices) ||
        api_json_num(r, c, "gpuPortionRequest", 0, 1, &portion) ||
        api_json_str(r, c, "gpuRequestType", type, sizeof(type), 0) ||
        api_json_str(r, c, "gpuMemoryRequest", mem, sizeof(mem), 0))
        return -1;
    if (type[0] && strcmp(type, "portion") != 0 && strcmp(type, "memory") != 0)
        return api_error(r, 400, "Bad request",
                         "spec.compute.gpuRequestType: portion or memory (MIG profiles are "
                         "not supported)"), -1;
    if (mem[0] || strcmp(type, "memory") == 0) {
        if (!mem[0] || portion >= 0 || strcmp(type, "portion") == 0)
            return api_error(r, 400, "Bad request",
                             "gpuRequestType memory goes with gpuMemoryRequest alone, without "
                             "gpuPortionRequest"), -1;
        if (devices > 1)
            return api_error(r, 400, "Bad request",
                             "a GPU memory request is of one device; several devices take "
                             "gpuPortionRequest"), -1;
        if (api_quantity_mib(mem, &w->gpu_memory_mib) != 0 || w->gpu_memory_mib < 1)
            return api_error(r, 400, "Bad request",
                             "spec.compute.gpuMemoryRequest is a quantity: 20G, 40Gi, 500M"), -1;
        w->gpu_devices = 1;
        return 0;
    }
    if (portion > 0 && portion < 1) {
        w->gpu_devices = devices > 0 ? (int)devices : 1;
        w->gpu_portion = (int64_t)llround(portion * 1000);
        w->gpu_portion = w->gpu_portion < 1 ? 1 : w->gpu_portion > 999 ? 999 : w->gpu_portion;
        return 0;
    }
    w->gpu_devices = devices >= 0 ? (int)devices : portion == 1 ? 1 : 0;
    return 0;
}

static int compute_in(struct api_req *r, json_t *c, struct db_workload *w)
{
    double cores = 0;
    char mem[32] = "";

    if (!c || json_is_null(c))
        return 0;
    if (!json_is_object(c))
        return api_error(r, 400, "Bad request", "spec.compute must be an object"), -1;
    if (api_json_allow(r, c, compute_fields, "spec.compute") || refused_compute(r, c) ||
        gpu_in(r, c, w) || api_json_num(r, c, "cpuCoreRequest", 0, 1e6, &cores) ||
        api_json_str(r, c, "cpuMemoryRequest", mem, sizeof(mem), 0))
        return -1;
    w->cpu_milli = (int64_t)llround(cores * 1000);
    if (mem[0] && api_quantity_mib(mem, &w->mem_mib))
        return api_error(r, 400, "Bad request",
                         "spec.compute.cpuMemoryRequest is not a quantity"), -1;
    return 0;
}

/* ---- node pools, node types, affinity ---- */

static int pools_in(struct api_req *r, json_t *a, struct db_workload *w)
{
    size_t i, used = 0;
    struct db_pool p;

    if (!a || json_is_null(a))
        return 0;
    if (!json_is_array(a) || json_array_size(a) > 16)
        return api_error(r, 400, "Bad request", "spec.nodePools must be an array of pool names"),
               -1;
    for (i = 0; i < json_array_size(a); i++) {
        json_t *v = json_array_get(a, i);
        size_t n;
        if (!json_is_string(v) || db_pool_by_name(r->app->db, json_string_value(v), &p))
            return api_error(r, 400, "Bad request", "spec.nodePools names no node pool"), -1;
        n = strlen(p.name);
        if (used + n + 2 > sizeof(w->pools))
            return api_error(r, 400, "Bad request", "spec.nodePools is too long"), -1;
        if (used)
            w->pools[used++] = ',';
        memcpy(w->pools + used, p.name, n + 1);
        used += n;
    }
    return 0;
}

/* An entry of nodeTypes.training or .workspace as the node type it names:
 * Run:ai's document makes the entries ids and nodeTypes.names the mapping
 * of ids to names, so an id that names maps is that name; an id it does
 * not map is the node type's name itself. NULL if v is not a string. */
static const char *node_type_name(json_t *names, json_t *v)
{
    json_t *n;

    if (!json_is_string(v))
        return NULL;
    n = json_object_get(names, json_string_value(v));
    return json_is_string(n) ? json_string_value(n) : json_string_value(v);
}

/* The name of the project's node type a (its list for this kind) that
 * `want` names, by name or by id; NULL if none does. */
static const char *project_type(json_t *a, json_t *names, const char *want)
{
    json_t *v;
    size_t i;

    json_array_foreach(a, i, v)
        if (json_is_string(v) && (strcmp(json_string_value(v), want) == 0 ||
                                  strcmp(node_type_name(names, v), want) == 0))
            return node_type_name(names, v);
    return NULL;
}

/* Appends name to the comma-separated list of w->node_type; -1 if it does
 * not fit or holds a comma. */
static int add_type(struct db_workload *w, size_t *used, const char *name)
{
    size_t n = name ? strlen(name) : 0;

    if (!n || strchr(name, ',') || *used + n + 2 > sizeof(w->node_type))
        return -1;
    if (*used)
        w->node_type[(*used)++] = ',';
    memcpy(w->node_type + *used, name, n + 1);
    *used += n;
    return 0;
}

/* The project's node types for this kind of workload (nodeTypes.training
 * for trainings and distributed, .workspace for workspaces, each entry
 * mapped through nodeTypes.names): without a nodeType the workload may use
 * any of them, the first preferred; with one (or several, comma-separated,
 * in the order preferred) each must be among them (by name or by id).
 * Stored comma-separated, by name, and written back into the spec's
 * nodeType, so the answered spec says which node types the workload took:
 * they are taken at submission. */
static int node_types_in(struct api_req *r, json_t *spec, const char *project_types,
                         struct db_workload *w)
{
    json_t *o = project_types[0] ? json_loads(project_types, 0, NULL) : NULL;
    json_t *a = json_object_get(o, w->type == DB_WORKSPACE ? "workspace" : "training"), *v;
    json_t *names = json_object_get(o, "names");
    char given[sizeof(w->node_type)] = "", *word, *save = NULL, msg[160];
    size_t i, used = 0;
    int rc = -1;

    if (api_json_str(r, spec, "nodeType", given, sizeof(given), 0))
        goto out;
    w->node_type[0] = '\0';
    if (w->type == DB_INFERENCE || !json_is_array(a) || json_array_size(a) == 0) {
        if (strchr(given, ','))
            api_error(r, 400, "Bad request", "spec.nodeType names one node type (the project"
                      " lists none to choose among)");
        else
            rc = 0, snprintf(w->node_type, sizeof(w->node_type), "%s", given);
        goto out;
    }
    for (word = strtok_r(given, ",", &save); word; word = strtok_r(NULL, ",", &save)) {
        if (!project_type(a, names, word)) {
            snprintf(msg, sizeof(msg), "spec.nodeType: %.64s is not one of the project's node"
                     " types", word);
            api_error(r, 400, "Bad request", msg);
            goto out;
        }
        if (add_type(w, &used, project_type(a, names, word)) != 0)
            goto too_long;
    }
    json_array_foreach(a, i, v) /* none given: the project's, in its order */
        if (!given[0] && add_type(w, &used, node_type_name(names, v)) != 0)
            goto too_long;
    if (!used) {
        api_error(r, 400, "Bad request", "spec.nodeType names no node type");
        goto out;
    }
    rc = 0;
    json_object_set_new(spec, "nodeType", json_string(w->node_type));
    goto out;
too_long:
    api_error(r, 400, "Bad request", "the project's node types cannot be used");
out:
    json_decref(o);
    return rc;
}

static const char *const match_ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt",
                                        NULL};

static int is_integer_text(const char *s)
{
    char *end;

    (void)strtoll(s, &end, 10);
    return *s && !*end;
}

/* One matchExpression: {key, operator, values} with as many values as the
 * operator takes. */
static int match_in(struct api_req *r, json_t *e)
{
    static const char *const fields[] = {"key", "operator", "values", NULL};
    json_t *key = json_object_get(e, "key"), *op = json_object_get(e, "operator");
    json_t *vals = json_object_get(e, "values"), *v;
    size_t i, n = json_array_size(vals);
    int k;

    if (!json_is_object(e))
        return api_error(r, 400, "Bad request", "matchExpressions holds objects"), -1;
    if (api_json_allow(r, e, fields, "spec.nodeAffinityRequired...matchExpressions[]"))
        return -1;
    for (k = 0; json_is_string(op) && match_ops[k] && strcmp(match_ops[k], json_string_value(op));
         k++)
        ;
    if (!json_is_string(key) || json_string_length(key) == 0 || json_string_length(key) > 253 ||
        !json_is_string(op) || !match_ops[k] ||
        (vals && !json_is_null(vals) && !json_is_array(vals)))
        return api_error(r, 400, "Bad request",
                         "matchExpressions: a key, an operator (In, NotIn, Exists, DoesNotExist, "
                         "Gt, Lt) and values"), -1;
    if ((k <= SCHED_OP_NOT_IN && n == 0) ||
        ((k == SCHED_OP_EXISTS || k == SCHED_OP_DOES_NOT_EXIST) && n) ||
        (k >= SCHED_OP_GT && n != 1) || n > 64)
        return api_error(r, 400, "Bad request",
                         "matchExpressions: In and NotIn take values, Exists and DoesNotExist "
                         "none, Gt and Lt one integer"), -1;
    json_array_foreach(vals, i, v)
        if (!json_is_string(v) || json_string_length(v) > 63 ||
            (k >= SCHED_OP_GT && !is_integer_text(json_string_value(v))))
            return api_error(r, 400, "Bad request",
                             "matchExpressions: values are strings (integers for Gt and Lt)"),
                   -1;
    return 0;
}

/* nodeAffinityRequired: {nodeSelectorTerms: [{matchExpressions: [...]}]},
 * kept as compact JSON for the scheduler. */
static int affinity_in(struct api_req *r, json_t *a, struct db_workload *w)
{
    static const char *const top[] = {"nodeSelectorTerms", NULL};
    static const char *const term_fields[] = {"matchExpressions", NULL};
    json_t *terms = json_object_get(a, "nodeSelectorTerms"), *t, *e;
    size_t i, k;
    char *text;

    if (!a || json_is_null(a))
        return 0;
    if (!json_is_object(a))
        return api_error(r, 400, "Bad request",
                         "spec.nodeAffinityRequired: {nodeSelectorTerms: [{matchExpressions: "
                         "[...]}]}"), -1;
    if (api_json_allow(r, a, top, "spec.nodeAffinityRequired"))
        return -1;
    if (!json_is_array(terms) || json_array_size(terms) == 0 || json_array_size(terms) > 16)
        return api_error(r, 400, "Bad request",
                         "spec.nodeAffinityRequired.nodeSelectorTerms: 1 to 16 terms"), -1;
    json_array_foreach(terms, i, t) {
        json_t *exprs = json_object_get(t, "matchExpressions");
        if (!json_is_object(t))
            return api_error(r, 400, "Bad request", "nodeSelectorTerms holds objects"), -1;
        if (api_json_allow(r, t, term_fields, "spec.nodeAffinityRequired.nodeSelectorTerms[]"))
            return -1;
        if (!json_is_array(exprs) || json_array_size(exprs) == 0 || json_array_size(exprs) > 16)
            return api_error(r, 400, "Bad request",
                             "each node selector term holds 1 to 16 matchExpressions"), -1;
        json_array_foreach(exprs, k, e)
            if (match_in(r, e) != 0)
                return -1;
    }
    text = json_dumps(a, JSON_COMPACT);
    if (!text || strlen(text) >= sizeof(w->affinity)) {
        free(text);
        return api_error(r, 400, "Bad request", "spec.nodeAffinityRequired is too large"), -1;
    }
    memcpy(w->affinity, text, strlen(text) + 1);
    free(text);
    return 0;
}

/* One level of spec.topology: a label key (Run:ai's NetworkTopologyLevels
 * pattern, 63 bytes at most), one of the named topology's levels if it
 * names one. */
static int level_in(struct api_req *r, json_t *t, const char *key, const json_t *levels)
{
    json_t *v = json_object_get(t, key), *l;
    char msg[256];
    size_t i;

    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v) || !api_label_key_ok(json_string_value(v))) {
        snprintf(msg, sizeof(msg), "spec.topology.%s is a node label key (a topology level)",
                 key);
        return api_error(r, 400, "Bad request", msg), -1;
    }
    json_array_foreach(levels, i, l)
        if (strcmp(json_string_value(l), json_string_value(v)) == 0)
            return 0;
    if (!levels)
        return 0;
    snprintf(msg, sizeof(msg), "spec.topology.%s: %.63s is not a level of network topology %.63s",
             key, json_string_value(v), json_string_value(json_object_get(t, "name")));
    return api_error(r, 400, "Bad request", msg), -1;
}

/* topology: {name, requiredPlacement, preferredPlacement}: the levels (label
 * keys) its pods must share a domain of and would rather share; name, if
 * given, a network topology whose levels they must be. Kept as compact JSON
 * for the scheduler (docs/scheduler.md, "Topology"). */
static int topology_in(struct api_req *r, json_t *t, struct db_workload *w)
{
    static const char *const fields[] = {"name", "requiredPlacement", "preferredPlacement", NULL};
    json_t *name = json_object_get(t, "name"), *levels = NULL;
    char *text;
    int rc;

    if (!t || json_is_null(t))
        return 0;
    if (!json_is_object(t))
        return api_error(r, 400, "Bad request",
                         "spec.topology: {name, requiredPlacement, preferredPlacement}"), -1;
    if (api_json_allow(r, t, fields, "spec.topology"))
        return -1;
    if (name && !json_is_null(name) &&
        (!json_is_string(name) || !(levels = api_ntopo_levels(r, json_string_value(name)))))
        return api_error(r, 400, "Bad request", "spec.topology.name: no network topology of "
                         "that name"), -1;
    rc = level_in(r, t, "requiredPlacement", levels) || level_in(r, t, "preferredPlacement", levels);
    json_decref(levels);
    if (rc)
        return -1;
    text = json_dumps(t, JSON_COMPACT | JSON_SORT_KEYS);
    if (!text || strlen(text) >= sizeof(w->topology)) {
        free(text);
        return api_error(r, 400, "Bad request", "spec.topology is too large"), -1;
    }
    memcpy(w->topology, text, strlen(text) + 1);
    free(text);
    return 0;
}

/* ---- priority, pods ---- */

static int priority_in(struct api_req *r, json_t *spec, struct db_workload *w)
{
    char pre[32] = "";

    if (api_json_str(r, spec, "priorityClass", w->priority_class, sizeof(w->priority_class), 0) ||
        api_json_str(r, spec, "preemptibility", pre, sizeof(pre), 0))
        return -1;
    if (!w->priority_class[0])
        snprintf(w->priority_class, sizeof(w->priority_class), "%s",
                 sched_default_priority_class(w->type));
    if (sched_priority_class(w->priority_class, &w->priority) != SCHED_OK)
        return api_error(r, 400, "Bad request", "spec.priorityClass names no priority class"), -1;
    if (!pre[0])
        w->preemptible = sched_default_preemptible(w->priority);
    else if (strcmp(pre, "preemptible") == 0 || strcmp(pre, "non-preemptible") == 0)
        w->preemptible = pre[0] == 'p';
    else
        return api_error(r, 400, "Bad request",
                         "spec.preemptibility: preemptible or non-preemptible"), -1;
    return 0;
}

static const char *const autoscaling_fields[] = {
    "minReplicas", "maxReplicas", "initialReplicas", "activationReplicas", "metric",
    "metricThreshold", "metricThresholdPercentage", "scaleToZeroRetentionSeconds",
    "scaleDownDelaySeconds", "concurrencyHardLimit", NULL,
};

/* An inference's replicas: it starts at minReplicas (1 if left out) and
 * grows to maxReplicas (else initialReplicas, else its minimum) whenever
 * GPUs are free, one pod at a time; reclaim takes back the pods above the
 * minimum. Scaling on a metric is not supported. */
static int replicas_in(struct api_req *r, json_t *as, int64_t *n, int64_t *min)
{
    int64_t max = -1, initial = -1;
    const char *key;
    json_t *v;

    if (!as || json_is_null(as))
        return 0;
    if (!json_is_object(as))
        return api_error(r, 400, "Bad request", "field 'spec.autoscaling' must be an object"), -1;
    if (api_json_allow(r, as, autoscaling_fields, "spec.autoscaling"))
        return -1;
    json_object_foreach(as, key, v)
        if (!json_is_null(v) && strcmp(key, "minReplicas") && strcmp(key, "maxReplicas") &&
            strcmp(key, "initialReplicas"))
            return api_error(r, 400, "Bad request",
                             "spec.autoscaling: only minReplicas, maxReplicas and "
                             "initialReplicas are supported; allot does not scale on metrics"),
                   -1;
    if (api_json_int(r, as, "minReplicas", 1, 1024, min) ||
        api_json_int(r, as, "maxReplicas", 1, 1024, &max) ||
        api_json_int(r, as, "initialReplicas", 1, 1024, &initial))
        return -1;
    if (*min < 0)
        *min = 1;
    if (max >= 0 && initial >= 0 && initial != max)
        return api_error(r, 400, "Bad request",
                         "spec.autoscaling: allot starts at minReplicas and grows to "
                         "maxReplicas; initialReplicas cannot differ from maxReplicas"), -1;
    *n = max >= 0 ? max : initial >= 0 ? initial : *min;
    if (*n < *min)
        return api_error(r, 400, "Bad request",
                         "spec.autoscaling: maxReplicas is below minReplicas"), -1;
    return 0;
}

/* A distributed workload: numWorkers workers plus a master (unless
 * masterSpecSameAsWorker is false); maxReplicas pods when given (it grows
 * to them), minReplicas the gang minimum. */
static int workers_in(struct api_req *r, json_t *spec, json_t *top, int64_t *n, int64_t *min)
{
    int64_t workers = -1, max = -1;
    int master = !json_is_false(json_object_get(top, "masterSpecSameAsWorker"));
    char fw[16] = "";

    int64_t slots = 1;

    if (api_json_int(r, spec, "numWorkers", 1, 1024, &workers) ||
        api_json_int(r, spec, "minReplicas", 1, 1025, min) ||
        api_json_int(r, spec, "maxReplicas", 1, 1025, &max) ||
        api_json_int(r, spec, "slotsPerWorker", 1, 1024, &slots) ||
        api_json_str(r, spec, "distributedFramework", fw, sizeof(fw), 0))
        return -1;
    if (fw[0] && strcmp(fw, "PyTorch") && strcmp(fw, "MPI") && strcmp(fw, "TF") &&
        strcmp(fw, "XGBoost") && strcmp(fw, "JAX"))
        return api_error(r, 400, "Bad request",
                         "spec.distributedFramework: PyTorch, MPI, TF, XGBoost or JAX"), -1;
    if (!master && strcmp(fw, "MPI") == 0)
        return api_error(r, 400, "Bad request",
                         "masterSpecSameAsWorker: false leaves an MPI workload no launcher (its"
                         " master runs mpirun; its workers run the launcher's exec endpoint)"),
               -1;
    if (slots != 1 && strcmp(fw, "MPI") != 0)
        return api_error(r, 400, "Bad request",
                         "spec.slotsPerWorker: 1 unless the framework is MPI (its host file's"
                         " slots)"), -1;
    *n = (workers > 0 ? workers : 1) + master;
    if (max >= 0) {
        if (workers > 0 && max < *n)
            return api_error(r, 400, "Bad request",
                             "spec.maxReplicas is below numWorkers (and the master)"), -1;
        *n = max;
    }
    if (*min > *n)
        return api_error(r, 400, "Bad request", "spec.minReplicas is above the pods it runs"),
               -1;
    return 0;
}

/* How many pods, and the gang minimum, by type. */
static int pods_in(struct api_req *r, json_t *spec, json_t *top, struct db_workload *w)
{
    int64_t n = 1, min = -1, completions = -1;

    switch (w->type) {
    case DB_TRAINING:
        if (api_json_int(r, spec, "parallelism", 1, 1024, &n) ||
            api_json_int(r, spec, "completions", 1, 1024, &completions))
            return -1;
        if (completions >= 0 && completions != n)
            return api_error(r, 400, "Bad request",
                             "spec.completions must equal parallelism: allot runs each pod "
                             "once and the training completes when all have"), -1;
        break;
    case DB_DISTRIBUTED:
        if (workers_in(r, spec, top, &n, &min))
            return -1;
        break;
    case DB_INFERENCE:
        if (replicas_in(r, json_object_get(spec, "autoscaling"), &n, &min))
            return -1;
        break;
    default:
        break;
    }
    w->n_pods = (int)n;
    w->min_pods = min >= 1 && min <= n ? (int)min : (int)n;
    return 0;
}

/* ---- ports ---- */

/* ports: [{container, serviceType, external, toolType, toolName, name,
 * exclude}] and an inference's servingPort {container, protocol}: each
 * pod listens on its node at `external` (else the container port); the
 * agent maps a container's port there, and tells a process the port in
 * ALLOT_PORT_<container> (and PORT, for the first). */
static int port_in(struct api_req *r, json_t *p, int serving)
{
    static const char *const fields[] = {"container", "serviceType", "external", "toolType",
                                         "toolName", "name", "exclude", NULL};
    static const char *const serving_fields[] = {"container", "protocol", NULL};
    int64_t container = -1, external = -1;
    char type[32] = "", proto[16] = "", text[64];
    int exclude = 0;

    if (!json_is_object(p))
        return api_error(r, 400, "Bad request", "spec.ports holds objects"), -1;
    if (api_json_allow(r, p, serving ? serving_fields : fields,
                       serving ? "spec.servingPort" : "spec.ports[]") ||
        api_json_int(r, p, "container", 1, 65535, &container) ||
        api_json_int(r, p, "external", 1, 65535, &external) ||
        api_json_str(r, p, "serviceType", type, sizeof(type), 0) ||
        api_json_str(r, p, "protocol", proto, sizeof(proto), 0) ||
        api_json_str(r, p, "toolType", text, sizeof(text), 0) ||
        api_json_str(r, p, "toolName", text, sizeof(text), 0) ||
        api_json_str(r, p, "name", text, sizeof(text), 0) ||
        api_json_bool(r, p, "exclude", &exclude))
        return -1;
    if (container < 0)
        return api_error(r, 400, "Bad request", "a port needs its container port"), -1;
    if (type[0] && strcmp(type, "NodePort") != 0)
        return api_error(r, 400, "Bad request",
                         "ports: serviceType NodePort only (allot gives each pod an address on "
                         "its node; there are no load balancers or cluster IPs)"), -1;
    if (proto[0] && strcmp(proto, "http") != 0 && strcmp(proto, "grpc") != 0)
        return api_error(r, 400, "Bad request", "spec.servingPort.protocol: http or grpc"), -1;
    return 0;
}

/* exposedUrls: container ports reached at http://NODE:PORT (the port is
 * published on the node as itself, like a port without `external`). A
 * URL of one's own and who may use it need an ingress allot does not
 * have: refused. */
static int exposed_urls_in(struct api_req *r, json_t *spec)
{
    static const char *const keys[] = {"container", "url", "authorizationType",
                                       "authorizedUsers", "authorizedGroups", "toolType",
                                       "toolName", "name", "customUrl", "exclude", NULL};
    json_t *list = json_object_get(spec, "exposedUrls"), *e, *v;
    char where[64];
    size_t i;

    if (!list || json_is_null(list))
        return 0;
    if (!json_is_array(list) || json_array_size(list) > 16)
        return api_error(r, 400, "Bad request", "spec.exposedUrls: a list of at most 16"), -1;
    json_array_foreach(list, i, e) {
        snprintf(where, sizeof(where), "spec.exposedUrls[%zu]", i);
        if (!json_is_object(e))
            return api_error(r, 400, "Bad request", "spec.exposedUrls: a list of objects"), -1;
        if (api_json_allow(r, e, keys, where))
            return -1;
        if (json_is_true(json_object_get(e, "exclude")))
            continue;
        v = json_object_get(e, "container");
        if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 65535)
            return api_error(r, 400, "Bad request",
                             "spec.exposedUrls[].container: a port from 1 to 65535 is required"),
                   -1;
        if ((json_string_value(json_object_get(e, "url")) &&
             json_string_value(json_object_get(e, "url"))[0]) ||
            json_is_true(json_object_get(e, "customUrl")))
            return api_error(r, 400, "Bad request",
                             "spec.exposedUrls[].url is not supported: allot has no ingress; the "
                             "URL is http://NODE:PORT of the pod's node"), -1;
        if (json_array_size(json_object_get(e, "authorizedUsers")) ||
            json_array_size(json_object_get(e, "authorizedGroups")) ||
            (json_string_value(json_object_get(e, "authorizationType")) &&
             strcmp(json_string_value(json_object_get(e, "authorizationType")), "public")))
            return api_error(r, 400, "Bad request",
                             "spec.exposedUrls[]: access control is not supported: allot does "
                             "not proxy a pod's URL; whoever reaches the node reaches the port"),
                   -1;
    }
    return 0;
}

/* Is container port c among the ports listed so far? */
static int port_listed(json_t *ports, json_t *c)
{
    json_t *p;
    size_t i;

    json_array_foreach(ports, i, p)
        if (json_equal(json_object_get(p, "container"), c))
            return 1;
    return 0;
}

/* The ports each pod of a workload listens on at its node, from its spec
 * (NULL: none): [{container, host, name}] (excluded entries left out;
 * host is `external`, else the container port). */
static json_t *ports_of(json_t *spec)
{
    json_t *out = json_array(), *p;
    json_t *serving = json_object_get(spec, "servingPort");
    size_t i;

    json_array_foreach(json_object_get(spec, "ports"), i, p) {
        json_t *c = json_object_get(p, "container"), *e = json_object_get(p, "external");
        if (!json_is_integer(c) || json_is_true(json_object_get(p, "exclude")))
            continue;
        json_array_append_new(out, json_pack("{s:O, s:O, s:s}", "container", c, "host",
                                             json_is_integer(e) ? e : c, "name",
                                             json_string_value(json_object_get(p, "toolName"))
                                                 ? json_string_value(json_object_get(p, "toolName"))
                                                 : ""));
    }
    if (json_is_integer(json_object_get(serving, "container")))
        json_array_append_new(out, json_pack("{s:O, s:O, s:s}", "container",
                                             json_object_get(serving, "container"), "host",
                                             json_object_get(serving, "container"), "name",
                                             "serving"));
    json_array_foreach(json_object_get(spec, "exposedUrls"), i, p) {
        json_t *c = json_object_get(p, "container");
        const char *tool = json_string_value(json_object_get(p, "toolName"));
        if (!json_is_integer(c) || json_is_true(json_object_get(p, "exclude")) ||
            port_listed(out, c))
            continue;
        json_array_append_new(out, json_pack("{s:O, s:O, s:s}", "container", c, "host", c, "name",
                                             tool ? tool : json_string_value(json_object_get(
                                                               p, "toolType"))
                                                           ? json_string_value(json_object_get(
                                                                 p, "toolType"))
                                                           : ""));
    }
    return out;
}

static int ports_in(struct api_req *r, json_t *spec)
{
    json_t *ports = json_object_get(spec, "ports"), *p, *serving, *all;
    size_t i, k;
    int rc = 0;

    if (ports && !json_is_null(ports) && (!json_is_array(ports) || json_array_size(ports) > 16))
        return api_error(r, 400, "Bad request", "spec.ports: an array of at most 16 ports"), -1;
    json_array_foreach(ports, i, p)
        if (port_in(r, p, 0) != 0)
            return -1;
    serving = json_object_get(spec, "servingPort");
    if (serving && !json_is_null(serving) && port_in(r, serving, 1) != 0)
        return -1;
    if (exposed_urls_in(r, spec) != 0)
        return -1;
    /* two ports of one pod cannot listen on the same node port */
    all = ports_of(spec);
    for (i = 0; rc == 0 && i < json_array_size(all); i++)
        for (k = i + 1; k < json_array_size(all); k++)
            if (json_equal(json_object_get(json_array_get(all, i), "host"),
                           json_object_get(json_array_get(all, k), "host"))) {
                api_error(r, 400, "Bad request", "spec.ports: two ports use one node port");
                rc = -1;
                break;
            }
    json_decref(all);
    return rc;
}

/* ---- storage: data a pod reaches ---- */

/* The kinds of spec.storage: what allot does with each (NULL: it reads
 * them) or why it refuses them (an empty list is accepted, as nothing). */
static const struct {
    const char *kind;
    const char *refused;
} storage_kinds[] = {
    {"hostPath", NULL},
    {"git", NULL},
    {"nfs", "the agents do not mount NFS: mount the export on the nodes and name it as a "
            "hostPath"},
    {"pvc", "allot has no persistent volume claims (no Kubernetes): use a hostPath"},
    {"s3", "the agents have no S3 client: copy the data to the nodes and use a hostPath"},
    {"configMapVolume", "allot has no config maps"},
    {"secretVolume", "allot mounts no secret volumes: give secrets as environment variables"},
    {"dataVolume", "allot has no data volumes (no Kubernetes): use a hostPath"},
    {"emptyDirVolume", "a pod's working directory is already its own empty directory"},
    {NULL, NULL},
};

static const char *const host_path_keys[] = {"name", "path", "mountPath", "readOnly",
                                             "mountPropagation", "exclude", NULL};
static const char *const git_keys[] = {"name", "repository", "branch", "revision", "path",
                                       "exclude", "passwordSecret", "secretKeyOfUser",
                                       "secretKeyOfPassword", "secretRef", NULL};
static const char *const git_secret_keys[] = {"passwordSecret", "secretKeyOfUser",
                                              "secretKeyOfPassword", "secretRef", NULL};

static int storage_error(struct api_req *r, const char *kind, size_t i, const char *what)
{
    char msg[400];

    snprintf(msg, sizeof(msg), "spec.storage.%s[%zu]%s", kind, i, what);
    return api_error(r, 400, "Bad request", msg), -1;
}

/* An absolute path without a ".." step: where a host path is, or is mounted. */
static int abs_path(json_t *v)
{
    const char *p = json_string_value(v);
    size_t n = p ? strlen(p) : 0;

    return p && p[0] == '/' && n < 512 && !strstr(p, "/../") &&
           !(n >= 3 && strcmp(p + n - 3, "/..") == 0);
}

/* A present, non-null value of a string field that is not a word (empty,
 * or an option-like leading '-'). */
static int bad_word(json_t *e, const char *key)
{
    json_t *v = json_object_get(e, key);
    const char *s = json_string_value(v);

    return v && !json_is_null(v) && (!s || !s[0] || s[0] == '-' || strlen(s) > 200);
}

static int host_path_in(struct api_req *r, json_t *e, size_t i)
{
    char where[64];
    const char *prop = json_string_value(json_object_get(e, "mountPropagation"));

    snprintf(where, sizeof(where), "spec.storage.hostPath[%zu]", i);
    if (api_json_allow(r, e, host_path_keys, where))
        return -1;
    if (!abs_path(json_object_get(e, "path")))
        return storage_error(r, "hostPath", i, ".path: an absolute path on the node is required");
    if (!abs_path(json_object_get(e, "mountPath")))
        return storage_error(r, "hostPath", i, ".mountPath: an absolute path is required");
    if (json_object_get(e, "readOnly") && !json_is_boolean(json_object_get(e, "readOnly")))
        return storage_error(r, "hostPath", i, ".readOnly: true or false");
    if (prop && strcmp(prop, "None") != 0)
        return storage_error(r, "hostPath", i,
                             ".mountPropagation: None only (the agents share no later mounts)");
    return 0;
}

static int git_in(struct api_req *r, json_t *e, size_t i)
{
    char where[64];
    const char *p = json_string_value(json_object_get(e, "path"));
    const char *repo = json_string_value(json_object_get(e, "repository"));
    int k;

    snprintf(where, sizeof(where), "spec.storage.git[%zu]", i);
    if (api_json_allow(r, e, git_keys, where))
        return -1;
    for (k = 0; git_secret_keys[k]; k++)
        if (json_object_get(e, git_secret_keys[k]) &&
            !json_is_null(json_object_get(e, git_secret_keys[k])))
            return storage_error(r, "git", i,
                                 ": credentials for a private repository are not supported; "
                                 "the agent clones public or local repositories");
    if (!repo || !repo[0] || repo[0] == '-' || strlen(repo) > 1000)
        return storage_error(r, "git", i, ".repository: a repository URL is required");
    if (!p || !p[0] || p[0] == '-' || strstr(p, "..") || strlen(p) > 500)
        return storage_error(r, "git", i, ".path: where the repository goes, without '..'");
    if (bad_word(e, "branch"))
        return storage_error(r, "git", i, ".branch: a branch name");
    if (bad_word(e, "revision"))
        return storage_error(r, "git", i, ".revision: a commit or tag name");
    return 0;
}

/* spec.storage: host paths and git repositories; every other kind of
 * Run:ai's is refused, saying why (an empty list of it is accepted). */
static int storage_in(struct api_req *r, json_t *spec)
{
    json_t *storage = json_object_get(spec, "storage"), *list, *e;
    char msg[400];
    const char *key;
    size_t i;
    int k;

    if (!storage || json_is_null(storage))
        return 0;
    if (!json_is_object(storage))
        return api_error(r, 400, "Bad request", "spec.storage: an object"), -1;
    json_object_foreach(storage, key, list) {
        for (k = 0; storage_kinds[k].kind && strcmp(storage_kinds[k].kind, key) != 0; k++)
            ;
        if (!storage_kinds[k].kind) {
            snprintf(msg, sizeof(msg), "unknown field 'spec.storage.%.64s'", key);
            return api_error(r, 400, "Bad request", msg), -1;
        }
        if (json_is_null(list) || (json_is_array(list) && json_array_size(list) == 0))
            continue;
        if (!json_is_array(list) || json_array_size(list) > 16) {
            snprintf(msg, sizeof(msg), "spec.storage.%s: a list of at most 16", key);
            return api_error(r, 400, "Bad request", msg), -1;
        }
        if (storage_kinds[k].refused) {
            snprintf(msg, sizeof(msg), "spec.storage.%s is not supported: %s", key,
                     storage_kinds[k].refused);
            return api_error(r, 400, "Bad request", msg), -1;
        }
        json_array_foreach(list, i, e) {
            if (!json_is_object(e))
                return storage_error(r, key, i, ": an object");
            if (json_is_true(json_object_get(e, "exclude")))
                continue;
            if (k == 0 ? host_path_in(r, e, i) : git_in(r, e, i))
                return -1;
        }
    }
    return 0;
}

/* ---- environment variables ---- */

static const char *const env_keys[] = {"name", "value", "secret", "configMap", "podFieldRef",
                                       "userCredential", "exclude", "description", NULL};

/* Where an entry's value comes from: the literal value, or one of these. */
static const char *const env_sources[] = {"value", "secret", "configMap", "podFieldRef",
                                          "userCredential", NULL};

/* The pod fields a podFieldRef may name (what they mean here: api_env_field()). */
static const char *const env_fields[] = {"metadata.name", "spec.nodeName", "status.podIP",
                                         "status.hostIP", NULL};

static int env_error(struct api_req *r, size_t i, const char *what)
{
    char msg[320];

    snprintf(msg, sizeof(msg), "spec.environmentVariables[%zu]%s", i, what);
    return api_error(r, 400, "Bad request", msg), -1;
}

/* A {secret: {name, key}} entry, or a {userCredential: {name, key}} one:
 * a secret the project sees, with that key, and for a user credential one
 * the submitter created (secrets.h); its value is resolved when the pod is
 * handed to its agent. */
static int env_secret_in(struct api_req *r, json_t *e, const char *field, size_t i,
                         const struct api_project *project, const char *where)
{
    static const char *const ref_keys[] = {"name", "key", NULL};
    char at[80], what[96];
    json_t *ref = json_object_get(e, field);
    const char *name = json_string_value(json_object_get(ref, "name"));
    const char *key = json_string_value(json_object_get(ref, "key"));

    snprintf(at, sizeof(at), "%s.%s", where, field);
    if (!json_is_object(ref))
        return snprintf(what, sizeof(what), ".%s: an object {name, key}", field),
               env_error(r, i, what);
    if (api_json_allow(r, ref, ref_keys, at))
        return -1;
    if (!name || !api_valid_name(name))
        return snprintf(what, sizeof(what), ".%s.name: a %s's name is required", field,
                        strcmp(field, "secret") == 0 ? "secret" : "credential"),
               env_error(r, i, what);
    if (!key || !key[0] || strlen(key) > 253)
        return snprintf(what, sizeof(what), ".%s.key: a key of the %s is required", field,
                        strcmp(field, "secret") == 0 ? "secret" : "credential"),
               env_error(r, i, what);
    return project ? api_secret_check_ref(r, project, field, name, key, where) : 0;
}

/* One entry: a name, and exactly one source that allot can give a pod. */
static int env_entry_in(struct api_req *r, json_t *e, size_t i, const struct api_project *project)
{
    char where[64];
    const char *name, *source = NULL;
    json_t *path;
    int k, n = 0;

    snprintf(where, sizeof(where), "spec.environmentVariables[%zu]", i);
    if (!json_is_object(e))
        return env_error(r, i, ": an object {name, value}");
    if (api_json_allow(r, e, env_keys, where))
        return -1;
    if (json_is_true(json_object_get(e, "exclude")))
        return 0;
    name = json_string_value(json_object_get(e, "name"));
    if (!name || !name[0] || strchr(name, '='))
        return env_error(r, i, ".name: a name without '=' is required");
    for (k = 0; env_sources[k]; k++)
        if (json_object_get(e, env_sources[k]) && !json_is_null(json_object_get(e, env_sources[k])))
            n++, source = source ? source : env_sources[k];
    if (n != 1)
        return env_error(r, i, ": exactly one of value, secret, configMap, podFieldRef and "
                               "userCredential");
    if (strcmp(source, "value") == 0)
        return json_is_string(json_object_get(e, "value")) ? 0
                                                            : env_error(r, i, ".value: a string");
    if (strcmp(source, "secret") == 0 || strcmp(source, "userCredential") == 0)
        return env_secret_in(r, e, source, i, project, where);
    if (strcmp(source, "configMap") == 0)
        return env_error(r, i, ".configMap is not supported: a config map is a Kubernetes"
                               " ConfigMap (Run:ai's config-map data source only names one to"
                               " mount) and allot has no Kubernetes to hold one; give the value,"
                               " or a secret");
    path = json_object_get(json_object_get(e, "podFieldRef"), "path");
    for (k = 0; json_is_string(path) && env_fields[k]; k++)
        if (strcmp(json_string_value(path), env_fields[k]) == 0)
            return 0;
    return env_error(r, i, ".podFieldRef.path: metadata.name, spec.nodeName, status.podIP or "
                           "status.hostIP");
}

static int env_in(struct api_req *r, json_t *spec, const struct api_project *project)
{
    json_t *env = json_object_get(spec, "environmentVariables"), *e;
    size_t i;

    if (!env || json_is_null(env))
        return 0;
    if (!json_is_array(env))
        return api_error(r, 400, "Bad request",
                         "spec.environmentVariables: an array of {name, value}"), -1;
    json_array_foreach(env, i, e)
        if (env_entry_in(r, e, i, project))
            return -1;
    return 0;
}

/* ---- fields that must agree with what allot does ---- */

static const char *category_of(int type)
{
    return type == DB_WORKSPACE ? "Build" : type == DB_INFERENCE ? "Deploy" : "Train";
}

static int fixed_in(struct api_req *r, json_t *spec, int type)
{
    char category[16] = "", restart[16] = "", pull[16] = "";
    int64_t grace = -1, backoff = -1;

    if (api_json_str(r, spec, "category", category, sizeof(category), 0) ||
        api_json_str(r, spec, "restartPolicy", restart, sizeof(restart), 0) ||
        api_json_str(r, spec, "imagePullPolicy", pull, sizeof(pull), 0) ||
        api_json_int(r, spec, "terminationGracePeriodSeconds", 0, 86400, &grace))
        return -1;
    if (category[0] && strcmp(category, category_of(type)) != 0)
        return api_error(r, 400, "Bad request",
                         "spec.category follows the workload's type (Train, Build, Deploy)"), -1;
    if (restart[0] && strcmp(restart, "Never") && strcmp(restart, "OnFailure") &&
        strcmp(restart, "Always"))
        return api_error(r, 400, "Bad request",
                         "spec.restartPolicy: Always, Never or OnFailure"), -1;
    if (strcmp(restart, "Always") == 0 && type != DB_WORKSPACE && type != DB_INFERENCE)
        return api_error(r, 400, "Bad request",
                         "spec.restartPolicy Always applies to workspaces and inferences: a "
                         "training completes when its pods exit with code 0"), -1;
    if (api_json_int(r, spec, "backoffLimit", 0, 1000, &backoff))
        return -1;
    if (pull[0] && strcmp(pull, "Always") && strcmp(pull, "IfNotPresent") && strcmp(pull, "Never"))
        return api_error(r, 400, "Bad request",
                         "spec.imagePullPolicy: Always, IfNotPresent or Never"), -1;
    return 0;
}

/* ---- scheduling rules ---- */

/* The rules the workload runs under: its project's effective rules now. */
static int rules_in(struct api_req *r, const struct api_project *p, struct db_workload *w)
{
    if (strlen(p->rules) >= sizeof(w->rules))
        return api_error(r, 500, "Internal error", "the project's rules are too large"), -1;
    memcpy(w->rules, p->rules, strlen(p->rules) + 1);
    return 0;
}

/* An empty string ("args": "") says nothing: it is dropped, so the spec
 * stored and answered back holds only values Run:ai's schema allows
 * (its strings have minLength 1). */
static void drop_empty_strings(json_t *o)
{
    const char *key;
    json_t *v;
    void *tmp;

    json_object_foreach_safe(o, tmp, key, v) {
        if (json_is_string(v) && json_string_length(v) == 0)
            json_object_del(o, key);
    }
}

/* ---- the whole submission ---- */

int api_wl_spec_in(struct api_req *r, json_t *top, const struct api_project *project,
                   struct db_workload *w)
{
    json_t *spec = json_object_get(top, "spec"), *v;

    if ((v = json_object_get(top, "masterSpec")) && !json_is_null(v))
        return api_error(r, 400, "Bad request",
                         "masterSpec is not supported: the master runs the workers' spec "
                         "(masterSpecSameAsWorker)"), -1;
    if (!spec || json_is_null(spec))
        return api_error(r, 400, "Bad request", "field 'spec' is required"), -1;
    if (!json_is_object(spec))
        return api_error(r, 400, "Bad request", "field 'spec' must be an object"), -1;
    if (api_policy_submission(r, spec, w->type, project) != 0)
        return -1;
    if (spec_fields_in(r, spec, w->type) ||
        api_json_str(r, spec, "image", w->image, sizeof(w->image), 0) ||
        compute_in(r, json_object_get(spec, "compute"), w) ||
        pools_in(r, json_object_get(spec, "nodePools"), w) ||
        node_types_in(r, spec, project->node_types, w) ||
        affinity_in(r, json_object_get(spec, "nodeAffinityRequired"), w) ||
        topology_in(r, json_object_get(spec, "topology"), w) ||
        priority_in(r, spec, w) || pods_in(r, spec, top, w) || ports_in(r, spec) ||
        env_in(r, spec, project) || storage_in(r, spec) ||
        fixed_in(r, spec, w->type) || rules_in(r, project, w))
        return -1;
    drop_empty_strings(spec);
    drop_empty_strings(json_object_get(spec, "compute"));
    w->spec = json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS);
    if (!w->spec)
        return api_error(r, 500, "Internal error", "out of memory"), -1;
    return 0;
}

int api_wl_spec_part_check(struct api_req *r, json_t *spec, int type)
{
    struct db_workload w;
    json_t *top;
    int rc;

    memset(&w, 0, sizeof(w));
    w.type = type;
    if (!json_is_object(spec))
        return api_error(r, 400, "Bad request", "spec must be an object"), -1;
    top = json_pack("{s:O}", "spec", spec);
    rc = spec_fields_in(r, spec, type) || compute_in(r, json_object_get(spec, "compute"), &w) ||
                 pools_in(r, json_object_get(spec, "nodePools"), &w) ||
                 affinity_in(r, json_object_get(spec, "nodeAffinityRequired"), &w) ||
                 topology_in(r, json_object_get(spec, "topology"), &w) ||
                 priority_in(r, spec, &w) || pods_in(r, spec, top, &w) || ports_in(r, spec) ||
                 env_in(r, spec, NULL) || storage_in(r, spec) || fixed_in(r, spec, type)
             ? -1
             : 0;
    json_decref(top);
    return rc;
}

/* ports_of() from the stored spec's text. */
json_t *api_wl_ports(const char *spec_text)
{
    json_t *spec = spec_text ? json_loads(spec_text, 0, NULL) : NULL;
    json_t *out = ports_of(spec);

    json_decref(spec);
    return out;
}
