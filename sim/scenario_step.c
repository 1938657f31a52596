/*
 * scenario_step.c: reading `steps`: each step is an object with exactly
 * one key naming its kind. Workload names are checked as the steps go:
 *   - submit: the name must not belong to a workload still there
 *     (a deleted workload's name may be used again);
 *   - delete, complete, suspend, resume: the workload must be there;
 *   - expectations (scenario_expect.c): the name must have been submitted
 *     by an earlier step (a deleted one is a failed check, not an error).
 */
#include "scenario_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- submit ---- */

static const char *const preempt_names[] = {"non-preemptible", "preemptible", NULL};

static int parse_priority(struct scn_parser *p, const json_t *w, struct sched_workload *out)
{
    const json_t *v = jr_opt(w, "priorityClass");
    size_t mark;
    int64_t prio;
    int rc = 0;

    if (!v)
        return sched_priority_class(sched_default_priority_class(out->type), &out->priority);
    mark = jr_key(&p->jr, "priorityClass");
    if (json_is_string(v)) {
        if (sched_priority_class(json_string_value(v), &out->priority) != SCHED_OK)
            rc = jr_fail(&p->jr, "unknown priority class \"%s\"", json_string_value(v));
    } else if (json_is_number(v)) {
        rc = jr_int(&p->jr, v, -1000000000, 1000000000, &prio);
        out->priority = (int)prio;
    } else {
        rc = jr_fail(&p->jr, "expected a priority class name or an integer");
    }
    jr_pop(&p->jr, mark);
    return rc;
}

/* gpuPortionRequest: a portion of one device, in milli-GPU 1..999. */
static int parse_portion(struct scn_parser *p, const json_t *v, int64_t *out)
{
    double portion;

    if (jr_number(&p->jr, v, 0, 1, "a number between 0 and 1 (both excluded)", &portion) != 0)
        return -1;
    *out = llround(portion * SCHED_MILLI);
    if (*out < 1 || *out >= SCHED_MILLI)
        return jr_fail(&p->jr, "expected a number between 0 and 1 (both excluded), to a "
                               "thousandth");
    return 0;
}

/* gpuDevicesRequest alone: whole devices; with gpuPortionRequest or
 * gpuMemoryRequestMib (not both): that many shared devices (1 if left out),
 * each giving the pod that portion or that much memory. */
static int parse_gpu(struct scn_parser *p, const json_t *w, struct sched_workload *out)
{
    const json_t *portion = jr_opt(w, "gpuPortionRequest");
    int64_t devices = 0, memory = 0;
    size_t mark;

    if (jr_get_int(&p->jr, w, "gpuDevicesRequest", JR_OPTIONAL, 0, JR_NO_MAX, &devices) != 0 ||
        jr_get_int(&p->jr, w, "gpuMemoryRequestMib", JR_OPTIONAL, 1, JR_NO_MAX, &memory) != 0)
        return -1;
    if (devices > SCHED_MAX_NODE_GPUS) {
        jr_key(&p->jr, "gpuDevicesRequest");
        return jr_fail(&p->jr, "a pod runs on one node and can use at most %d devices",
                       SCHED_MAX_NODE_GPUS);
    }
    out->gpu_devices = (int)devices;
    out->gpu_memory_mib = memory;
    if (!portion)
        return 0;
    mark = jr_key(&p->jr, "gpuPortionRequest");
    if (memory > 0)
        return jr_fail(&p->jr, "gpuMemoryRequestMib is given too; a pod asks for a portion of "
                               "each device or for an amount of its memory");
    if (parse_portion(p, portion, &out->gpu_portion) != 0)
        return -1;
    jr_pop(&p->jr, mark);
    return 0;
}

static int parse_pods(struct scn_parser *p, const json_t *w, struct sched_workload *out)
{
    double cores = 0;
    int64_t pods = 1, min_pods, mem = 0;

    if (jr_get_number(&p->jr, w, "cpuCoreRequest", 0, SCN_MAX_AMOUNT,
                      "a non-negative number of cores", &cores) != 0 ||
        jr_get_int(&p->jr, w, "cpuMemoryRequestMib", JR_OPTIONAL, 0, JR_NO_MAX, &mem) != 0 ||
        jr_get_int(&p->jr, w, "pods", JR_OPTIONAL, 1, SCN_MAX_PODS, &pods) != 0)
        return -1;
    min_pods = pods;
    if (jr_get_int(&p->jr, w, "minPods", JR_OPTIONAL, 1, pods, &min_pods) != 0)
        return -1;
    out->cpu_milli = llround(cores * 1000.0);
    out->mem_mib = mem;
    out->n_pods = (int)pods;
    out->min_pods = (int)min_pods;
    return 0;
}

/* nodeTypes: node-type values, any of them, the first preferred. */
static int parse_node_types(struct scn_parser *p, const json_t *w, struct scn_submit *sub)
{
    const json_t *list = jr_opt(w, "nodeTypes");
    size_t i, mark, inner;

    if (!list)
        return 0;
    mark = jr_key(&p->jr, "nodeTypes");
    if (jr_array(&p->jr, list) != 0)
        return -1;
    if (json_array_size(list) == 0 || json_array_size(list) > 64)
        return jr_fail(&p->jr, "expected 1 to 64 node types (or leave it out)");
    if (jr_opt(w, "nodeType"))
        return jr_fail(&p->jr, "nodeType is given too; give one of them");
    sub->node_types = calloc(json_array_size(list), sizeof(char *));
    if (!sub->node_types)
        return jr_fail_file(&p->jr, "out of memory");
    for (i = 0; i < json_array_size(list); i++) {
        inner = jr_index(&p->jr, i);
        if (jr_string(&p->jr, json_array_get(list, i), &sub->node_types[i]) != 0)
            return -1;
        jr_pop(&p->jr, inner);
    }
    sub->w.node_types = sub->node_types;
    sub->w.n_node_types = (int)json_array_size(list);
    jr_pop(&p->jr, mark);
    return 0;
}

static int integer_text(const char *s)
{
    char *end;

    errno = 0;
    (void)strtoll(s, &end, 10);
    return *s && !*end && errno == 0;
}

static const char *const match_ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt",
                                        NULL};

/* One matchExpression: {key, operator, values}; values as the operator
 * needs them (In, NotIn: at least one; Exists, DoesNotExist: none; Gt,
 * Lt: one integer). */
static int parse_match(struct scn_parser *p, const json_t *v, struct sched_match *m,
                       const char **values, int *n_values)
{
    static const char *const keys[] = {"key", "operator", "values", NULL};
    const json_t *list = NULL;
    size_t i, mark, inner;
    int want_min, want_max;

    if (jr_object(&p->jr, v, keys) != 0 ||
        jr_get_string(&p->jr, v, "key", JR_REQUIRED, &m->key) != 0 ||
        jr_get_enum(&p->jr, v, "operator", match_ops, &m->op) != 0 ||
        jr_get_array(&p->jr, v, "values", JR_OPTIONAL, &list) != 0)
        return -1;
    if (!jr_opt(v, "operator")) {
        jr_key(&p->jr, "operator");
        return jr_fail(&p->jr, "missing required field");
    }
    want_min = m->op == SCHED_OP_IN || m->op == SCHED_OP_NOT_IN || m->op >= SCHED_OP_GT;
    want_max = m->op >= SCHED_OP_GT ? 1 : m->op == SCHED_OP_EXISTS ||
                                          m->op == SCHED_OP_DOES_NOT_EXIST ? 0 : 1 << 20;
    mark = jr_key(&p->jr, "values");
    if ((int)json_array_size(list) < want_min || (int)json_array_size(list) > want_max)
        return jr_fail(&p->jr, "%s takes %s", match_ops[m->op],
                       want_max == 0 ? "no values" : want_max == 1 ? "one integer value"
                                                                   : "at least one value");
    m->values = values + *n_values;
    for (i = 0; i < json_array_size(list); i++) {
        inner = jr_index(&p->jr, i);
        if (jr_string(&p->jr, json_array_get(list, i), &values[*n_values]) != 0)
            return -1;
        if (m->op >= SCHED_OP_GT && !integer_text(values[*n_values]))
            return jr_fail(&p->jr, "expected an integer, as a string");
        (*n_values)++;
        m->n_values++;
        jr_pop(&p->jr, inner);
    }
    jr_pop(&p->jr, mark);
    return 0;
}

/* How many terms, matches and values an affinity object holds (0 on a
 * shape error, reported later by the full read). */
static void count_affinity(const json_t *aff, size_t *terms, size_t *matches, size_t *values)
{
    const json_t *t, *m;
    size_t i, k;

    *terms = *matches = *values = 0;
    json_array_foreach(json_object_get(aff, "nodeSelectorTerms"), i, t) {
        (*terms)++;
        json_array_foreach(json_object_get(t, "matchExpressions"), k, m) {
            (*matches)++;
            *values += json_array_size(json_object_get(m, "values"));
        }
    }
}

/* nodeAffinityRequired: {"nodeSelectorTerms": [{"matchExpressions": [...]}]},
 * the shape of the REST API's field. */
static int parse_affinity(struct scn_parser *p, const json_t *w, struct scn_submit *sub)
{
    static const char *const top[] = {"nodeSelectorTerms", NULL};
    static const char *const term_keys[] = {"matchExpressions", NULL};
    const json_t *aff = jr_opt(w, "nodeAffinityRequired"), *terms = NULL, *exprs;
    size_t n_terms, n_matches, n_values, i, k, mark, inner, deeper;
    int used_m = 0, used_v = 0;

    if (!aff)
        return 0;
    mark = jr_key(&p->jr, "nodeAffinityRequired");
    if (jr_object(&p->jr, aff, top) != 0 ||
        jr_get_array(&p->jr, aff, "nodeSelectorTerms", JR_REQUIRED, &terms) != 0)
        return -1;
    count_affinity(aff, &n_terms, &n_matches, &n_values);
    sub->terms = calloc(n_terms + 1, sizeof(*sub->terms));
    sub->matches = calloc(n_matches + 1, sizeof(*sub->matches));
    sub->values = calloc(n_values + 1, sizeof(*sub->values));
    if (!sub->terms || !sub->matches || !sub->values)
        return jr_fail_file(&p->jr, "out of memory");
    jr_key(&p->jr, "nodeSelectorTerms");
    if (n_terms == 0)
        return jr_fail(&p->jr, "expected at least one term (or leave the field out)");
    for (i = 0; i < n_terms; i++) {
        const json_t *t = json_array_get(terms, i);
        inner = jr_index(&p->jr, i);
        exprs = NULL;
        if (jr_object(&p->jr, t, term_keys) != 0 ||
            jr_get_array(&p->jr, t, "matchExpressions", JR_REQUIRED, &exprs) != 0)
            return -1;
        sub->terms[i].matches = sub->matches + used_m;
        for (k = 0; k < json_array_size(exprs); k++) {
            deeper = jr_key(&p->jr, "matchExpressions");
            jr_index(&p->jr, k);
            if (parse_match(p, json_array_get(exprs, k), &sub->matches[used_m], sub->values,
                            &used_v) != 0)
                return -1;
            used_m++;
            sub->terms[i].n_matches++;
            jr_pop(&p->jr, deeper);
        }
        jr_pop(&p->jr, inner);
    }
    sub->w.affinity = sub->terms;
    sub->w.n_affinity = (int)n_terms;
    jr_pop(&p->jr, mark);
    return 0;
}

/* topology: {"requiredPlacement": LEVEL, "preferredPlacement": LEVEL}, label keys. */
static int parse_topology(struct scn_parser *p, const json_t *w, struct scn_submit *sub)
{
    static const char *const keys[] = {"requiredPlacement", "preferredPlacement", NULL};
    const json_t *t = NULL;
    size_t mark;
    int rc;

    if (jr_get_object(&p->jr, w, "topology", JR_OPTIONAL, keys, &t) != 0)
        return -1;
    if (!t)
        return 0;
    mark = jr_key(&p->jr, "topology");
    rc = jr_get_string(&p->jr, t, "requiredPlacement", JR_OPTIONAL, &sub->w.topology_required);
    if (rc == 0)
        rc = jr_get_string(&p->jr, t, "preferredPlacement", JR_OPTIONAL,
                           &sub->w.topology_preferred);
    if (rc == 0)
        jr_pop(&p->jr, mark);
    return rc;
}

static int parse_placement(struct scn_parser *p, const json_t *w, struct scn_submit *sub)
{
    const json_t *pools = jr_opt(w, "nodePools");
    double runtime = -1;
    size_t mark;

    if (parse_node_types(p, w, sub) != 0 || parse_affinity(p, w, sub) != 0 ||
        parse_topology(p, w, sub) != 0 ||
        jr_get_string(&p->jr, w, "nodeType", JR_OPTIONAL, &sub->w.node_type) != 0 ||
        jr_get_number(&p->jr, w, "runtimeSeconds", 0, SCN_MAX_AMOUNT,
                      "a non-negative number of seconds", &runtime) != 0)
        return -1;
    sub->runtime_ms = runtime < 0 ? SCHED_NO_TIME : llround(runtime * 1000.0);
    if (!pools)
        return 0;
    mark = jr_key(&p->jr, "nodePools");
    sub->pools = calloc((size_t)p->s->n_pools, sizeof(int));
    if (!sub->pools)
        return jr_fail_file(&p->jr, "out of memory");
    if (scn__pool_list(p, pools, sub->pools, &sub->w.n_pools) != 0)
        return -1;
    if (sub->w.n_pools == 0)
        return jr_fail(&p->jr, "expected at least one node pool (or null for the defaults)");
    sub->w.pools = sub->pools;
    jr_pop(&p->jr, mark);
    return 0;
}

static int parse_running_on(struct scn_parser *p, const json_t *w, struct scn_submit *sub)
{
    const json_t *list = jr_opt(w, "runningOn"), *v;
    size_t i, mark, inner;

    if (!list)
        return 0;
    mark = jr_key(&p->jr, "runningOn");
    if (jr_array(&p->jr, list) != 0)
        return -1;
    if (json_array_size(list) != (size_t)sub->w.n_pods)
        return jr_fail(&p->jr, "expected one entry per pod (%d), a node name or null",
                       sub->w.n_pods);
    sub->running_on = calloc((size_t)sub->w.n_pods, sizeof(int));
    if (!sub->running_on)
        return jr_fail_file(&p->jr, "out of memory");
    for (i = 0; i < json_array_size(list); i++) {
        v = json_array_get(list, i);
        sub->running_on[i] = -1;
        inner = jr_index(&p->jr, i);
        if (!json_is_null(v) && scn__node_ref(p, v, &sub->running_on[i]) != 0)
            return -1;
        jr_pop(&p->jr, inner);
    }
    jr_pop(&p->jr, mark);
    return 0;
}

/* `type`: required; the core's workload type names. */
static int parse_type(struct scn_parser *p, const json_t *w, int *type)
{
    const json_t *v = json_object_get(w, "type");
    size_t mark = jr_key(&p->jr, "type");

    if (!v)
        return jr_fail(&p->jr, "missing required field");
    if (!json_is_string(v) || sched_type_parse(json_string_value(v), type) != SCHED_OK)
        return jr_fail(&p->jr, "expected one of %s, %s, %s, %s", sched_type_name(SCHED_TRAINING),
                       sched_type_name(SCHED_WORKSPACE), sched_type_name(SCHED_INFERENCE),
                       sched_type_name(SCHED_DISTRIBUTED));
    jr_pop(&p->jr, mark);
    return 0;
}

/* The project a workload goes to: a leaf queue. */
static int parse_project(struct scn_parser *p, const json_t *w, int *queue)
{
    const char *name;

    if (jr_get_string(&p->jr, w, "project", JR_REQUIRED, &name) != 0)
        return -1;
    if (namemap_get(&p->queues, name, queue) && p->s->queues[*queue].parent >= 0)
        return 0;
    jr_key(&p->jr, "project");
    if (namemap_get(&p->queues, name, queue))
        return jr_fail(&p->jr, "\"%s\" is a department; workloads go to projects", name);
    return jr_fail(&p->jr, "unknown project \"%s\"", name);
}

static int parse_submit(struct scn_parser *p, const json_t *w, struct scn_submit *sub)
{
    static const char *const keys[] = {
        "name", "project", "type", "gpuDevicesRequest", "gpuPortionRequest", "cpuCoreRequest",
        "cpuMemoryRequestMib", "pods", "minPods", "priorityClass", "preemptibility",
        "nodePools", "nodeType", "runtimeSeconds", "runningOn", "gpuMemoryRequestMib",
        "nodeTypes", "nodeAffinityRequired", "topology", NULL};
    struct sched_workload *out = &sub->w;
    int state, preemptible = -1;

    if (jr_object(&p->jr, w, keys) != 0 ||
        jr_get_string(&p->jr, w, "name", JR_REQUIRED, &out->name) != 0)
        return -1;
    if (namemap_get(&p->workloads, out->name, &state) && state == SCN_WL_LIVE) {
        jr_key(&p->jr, "name");
        return jr_fail(&p->jr, "duplicate workload \"%s\"", out->name);
    }
    if (parse_project(p, w, &out->queue) != 0)
        return -1;
    if (parse_type(p, w, &out->type) != 0 || parse_priority(p, w, out) != 0 ||
        jr_get_enum(&p->jr, w, "preemptibility", preempt_names, &preemptible) != 0 ||
        parse_gpu(p, w, out) != 0 || parse_pods(p, w, out) != 0 ||
        parse_placement(p, w, sub) != 0 || parse_running_on(p, w, sub) != 0)
        return -1;
    out->preemptible = preemptible >= 0 ? preemptible : sched_default_preemptible(out->priority);
    if (namemap_put(&p->workloads, out->name, SCN_WL_LIVE) != 0)
        return jr_fail_file(&p->jr, "out of memory");
    return 0;
}

/* ---- Steps that name a workload or a node ---- */

static int parse_workload_step(struct scn_parser *p, const json_t *v, struct scn_step *st)
{
    int state;

    if (jr_string(&p->jr, v, &st->u.workload) != 0)
        return -1;
    if (!namemap_get(&p->workloads, st->u.workload, &state))
        return jr_fail(&p->jr, "unknown workload \"%s\"", st->u.workload);
    if (state != SCN_WL_LIVE)
        return jr_fail(&p->jr, "workload \"%s\" was deleted by an earlier step", st->u.workload);
    if (st->kind == SCN_DELETE && namemap_put(&p->workloads, st->u.workload, SCN_WL_DELETED) != 0)
        return jr_fail_file(&p->jr, "out of memory");
    return 0;
}

/* ---- setQuota ---- */

static int parse_quota_target(struct scn_parser *p, const json_t *v, struct scn_set_quota *out)
{
    const json_t *proj = jr_opt(v, "project"), *dept = jr_opt(v, "department");
    const char *key = proj ? "project" : "department", *name;
    int is_dept;

    if ((proj != NULL) == (dept != NULL))
        return jr_fail(&p->jr, "expected exactly one of project, department");
    if (jr_get_string(&p->jr, v, key, JR_REQUIRED, &name) != 0)
        return -1;
    if (namemap_get(&p->queues, name, &out->queue)) {
        is_dept = p->s->queues[out->queue].parent < 0;
        if (is_dept == (dept != NULL))
            return 0;
    }
    jr_key(&p->jr, key);
    return jr_fail(&p->jr, "unknown %s \"%s\"", key, name);
}

static int parse_set_quota(struct scn_parser *p, const json_t *v, struct scn_set_quota *out)
{
    static const char *const keys[] = {"project", "department", "nodePool", "gpu", "cpu",
                                       "memory", NULL};
    const json_t *pool;
    size_t mark;

    if (jr_object(&p->jr, v, keys) != 0 || parse_quota_target(p, v, out) != 0)
        return -1;
    namemap_get(&p->pools, "default", &out->pool);   /* always there */
    if ((pool = jr_opt(v, "nodePool")) != NULL) {
        mark = jr_key(&p->jr, "nodePool");
        if (scn__pool_ref(p, pool, &out->pool) != 0)
            return -1;
        jr_pop(&p->jr, mark);
    }
    return scn__parse_quota(p, v, out->value, &out->given);
}

/* ---- advance, schedule ---- */

static int parse_advance(struct scn_parser *p, const json_t *v, int64_t *ms)
{
    static const char *const keys[] = {"seconds", NULL};
    size_t mark;

    if (jr_object(&p->jr, v, keys) != 0)
        return -1;
    mark = jr_key(&p->jr, "seconds");
    if (!json_object_get(v, "seconds"))
        return jr_fail(&p->jr, "missing required field");
    if (scn__seconds(p, json_object_get(v, "seconds"), ms) != 0)
        return -1;
    jr_pop(&p->jr, mark);
    return 0;
}

static int parse_schedule(struct scn_parser *p, const json_t *v, int *cycles)
{
    static const char *const keys[] = {"cycles", NULL};
    int64_t n = 0;

    if (jr_object(&p->jr, v, keys) != 0 ||
        jr_get_int(&p->jr, v, "cycles", JR_OPTIONAL, 1, SCN_MAX_CYCLES, &n) != 0)
        return -1;
    *cycles = (int)n;
    return 0;
}

/* ---- A step ---- */

static int step_kind(struct scn_parser *p, const json_t *v, int *kind, const json_t **body)
{
    const char *key;
    json_t *member;
    int k;

    if (jr_object(&p->jr, v, NULL) != 0)
        return -1;
    if (json_object_size(v) != 1)
        return jr_fail(&p->jr, "a step has exactly one key: submit, delete, complete, "
                               "suspend, resume, nodeDown, nodeUp, setQuota, advance, "
                               "schedule or expect");
    json_object_foreach((json_t *)v, key, member) {
        for (k = 0; k < SCN_NKINDS; k++) {
            if (strcmp(key, scenario_step_key(k)) == 0) {
                *kind = k;
                *body = member;
                return 0;
            }
        }
        jr_key(&p->jr, key);
    }
    return jr_fail(&p->jr, "unknown step");
}

static int parse_step(struct scn_parser *p, const json_t *v, struct scn_step *st)
{
    const json_t *body = NULL;
    size_t mark;
    int rc;

    if (step_kind(p, v, &st->kind, &body) != 0)
        return -1;
    mark = jr_key(&p->jr, scenario_step_key(st->kind));
    switch (st->kind) {
    case SCN_SUBMIT:    rc = parse_submit(p, body, &st->u.submit); break;
    case SCN_NODE_DOWN:
    case SCN_NODE_UP:   rc = scn__node_ref(p, body, &st->u.node); break;
    case SCN_SET_QUOTA: rc = parse_set_quota(p, body, &st->u.quota); break;
    case SCN_ADVANCE:   rc = parse_advance(p, body, &st->u.advance_ms); break;
    case SCN_SCHEDULE:  rc = parse_schedule(p, body, &st->u.cycles); break;
    case SCN_EXPECT:    rc = scn__parse_expect(p, body, st); break;
    default:            rc = parse_workload_step(p, body, st); break;
    }
    if (rc == 0)
        jr_pop(&p->jr, mark);
    return rc;
}

int scn__parse_steps(struct scn_parser *p, const json_t *steps)
{
    struct scenario *s = p->s;
    size_t i, mark;
    int expects = 0;

    s->steps = calloc(json_array_size(steps) + 1, sizeof(*s->steps));
    if (!s->steps)
        return jr_fail_file(&p->jr, "out of memory");
    for (i = 0; i < json_array_size(steps); i++) {
        mark = jr_key(&p->jr, "steps");
        jr_index(&p->jr, i);
        s->n_steps++;
        if (parse_step(p, json_array_get(steps, i), &s->steps[i]) != 0)
            return -1;
        expects += s->steps[i].kind == SCN_EXPECT;
        jr_pop(&p->jr, mark);
    }
    if (expects == 0) {
        jr_key(&p->jr, "steps");
        return jr_fail(&p->jr, "the scenario checks nothing: it has no expect step");
    }
    return 0;
}
