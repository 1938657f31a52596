/*
 * scenario_expect.c: reading an `expect` step into a flat list of checks,
 * in the order the file gives them (so failures are reported in that
 * order).
 *
 *   phases, pendingReason  {workload: name}       one check per workload
 *   nodes                  {workload: [node...]}  node indices, sorted
 *   evicted, notEvicted,   [workload...]          one check per workload
 *   moved
 *   allocatedGpus,         {queue or queue/pool:  milli-GPU; pool -1 sums
 *   fairShareGpus           GPUs}                 over every pool
 *   domains                {workload: {label:     one check per label: the
 *                           value or count}}      value, or how many values
 *
 * A workload must have been submitted by an earlier step; phase and
 * reason names are the core's (sched_phase_name, sched_reason_name). An
 * expect step that checks nothing ({} or only empty parts) is an error: a
 * scenario must not pass by checking nothing.
 */
#include "scenario_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;

    return (x > y) - (x < y);
}

static int seen_workload(struct scn_parser *p, const char *name)
{
    int state;

    if (!namemap_get(&p->workloads, name, &state))
        return jr_fail(&p->jr, "unknown workload \"%s\"", name);
    return 0;
}

static int parse_phase(struct scn_parser *p, const json_t *v, int *phase)
{
    const char *names[SCHED_FAILED + 2];
    int i;

    for (i = 0; i <= SCHED_FAILED; i++)
        names[i] = sched_phase_name(i);
    names[i] = NULL;
    return jr_enum(&p->jr, v, names, phase);
}

static int parse_reason(struct scn_parser *p, const json_t *v, int *reason)
{
    const char *names[SCHED_R_QUEUE_FAIR_SHARE_REACHED + 1];
    int i;

    for (i = 1; i <= SCHED_R_QUEUE_FAIR_SHARE_REACHED; i++)
        names[i - 1] = sched_reason_name(i);
    names[i - 1] = NULL;
    if (jr_enum(&p->jr, v, names, reason) != 0)
        return -1;
    (*reason)++;
    return 0;
}

static int parse_nodes(struct scn_parser *p, const json_t *v, struct scn_check *c)
{
    size_t i, mark;

    if (jr_array(&p->jr, v) != 0)
        return -1;
    c->nodes = calloc(json_array_size(v) + 1, sizeof(int));
    if (!c->nodes)
        return jr_fail_file(&p->jr, "out of memory");
    for (i = 0; i < json_array_size(v); i++) {
        mark = jr_index(&p->jr, i);
        if (scn__node_ref(p, json_array_get(v, i), &c->nodes[c->n_nodes]) != 0)
            return -1;
        c->n_nodes++;
        jr_pop(&p->jr, mark);
    }
    qsort(c->nodes, (size_t)c->n_nodes, sizeof(int), cmp_int);
    return 0;
}

/* Reads one member of a map of checks into c (kind and name set). */
typedef int (*scn_member_fn)(struct scn_parser *p, const char *key, const json_t *value,
                             struct scn_check *c);

/* A map {key: value} of checks of kind, one a member, each read by fn. */
static int parse_map(struct scn_parser *p, const json_t *v, int kind, struct scn_step *st,
                     scn_member_fn fn)
{
    struct scn_check *c;
    const char *key;
    json_t *value;
    size_t mark;

    if (jr_object(&p->jr, v, NULL) != 0)
        return -1;
    json_object_foreach((json_t *)v, key, value) {
        c = &st->u.expect.checks[st->u.expect.n_checks++];
        c->kind = kind;
        c->name = key;
        mark = jr_key(&p->jr, key);
        if (fn(p, key, value, c) != 0)
            return -1;
        jr_pop(&p->jr, mark);
    }
    return 0;
}

/* phases, pendingReason, nodes: {workload: value}. */
static int workload_member(struct scn_parser *p, const char *key, const json_t *value,
                           struct scn_check *c)
{
    if (seen_workload(p, key) != 0)
        return -1;
    if (c->kind == SCN_PHASE)
        return parse_phase(p, value, &c->value);
    if (c->kind == SCN_REASON)
        return parse_reason(p, value, &c->value);
    return parse_nodes(p, value, c);
}

/* evicted, notEvicted, moved: [workload...]. */
static int parse_name_list(struct scn_parser *p, const json_t *v, int kind, struct scn_step *st)
{
    struct scn_check *c;
    size_t i, mark;

    if (jr_array(&p->jr, v) != 0)
        return -1;
    for (i = 0; i < json_array_size(v); i++) {
        c = &st->u.expect.checks[st->u.expect.n_checks++];
        c->kind = kind;
        mark = jr_index(&p->jr, i);
        if (jr_string(&p->jr, json_array_get(v, i), &c->name) != 0 ||
            seen_workload(p, c->name) != 0)
            return -1;
        jr_pop(&p->jr, mark);
    }
    return 0;
}

/* "team-a" or "team-a/a100": a queue, and a pool or -1. */
static int parse_queue_key(struct scn_parser *p, const char *key, struct scn_check *c)
{
    const char *slash = strrchr(key, '/');
    size_t len = slash ? (size_t)(slash - key) : 0;
    char *name;
    int rc = 0;

    c->pool = -1;
    if (namemap_get(&p->queues, key, &c->value))
        return 0;
    if (!slash)
        return jr_fail(&p->jr, "unknown project or department \"%s\"", key);
    name = malloc(len + 1);
    if (!name)
        return jr_fail_file(&p->jr, "out of memory");
    memcpy(name, key, len);
    name[len] = '\0';
    if (!namemap_get(&p->queues, name, &c->value))
        rc = jr_fail(&p->jr, "unknown project or department \"%s\"", name);
    else if (!namemap_get(&p->pools, slash + 1, &c->pool))
        rc = jr_fail(&p->jr, "unknown node pool \"%s\"", slash + 1);
    free(name);
    return rc;
}

/* allocatedGpus, fairShareGpus: {queue[/pool]: GPUs}. */
static int gpu_member(struct scn_parser *p, const char *key, const json_t *value,
                      struct scn_check *c)
{
    double gpus;

    if (parse_queue_key(p, key, c) != 0 ||
        jr_number(&p->jr, value, 0, SCN_MAX_AMOUNT, "a non-negative number of GPUs", &gpus) != 0)
        return -1;
    c->milli = llround(gpus * SCHED_MILLI);
    return 0;
}

/* domains: {workload: {label: "value" | count}}. */
static int parse_domains(struct scn_parser *p, const json_t *v, struct scn_step *st)
{
    struct scn_check *c;
    const char *name, *label;
    json_t *labels, *value;
    size_t mark, inner;
    int64_t n;

    if (jr_object(&p->jr, v, NULL) != 0)
        return -1;
    json_object_foreach((json_t *)v, name, labels) {
        mark = jr_key(&p->jr, name);
        if (seen_workload(p, name) != 0 || jr_object(&p->jr, labels, NULL) != 0)
            return -1;
        json_object_foreach(labels, label, value) {
            c = &st->u.expect.checks[st->u.expect.n_checks++];
            c->kind = SCN_DOMAINS;
            c->name = name;
            c->label = label;
            inner = jr_key(&p->jr, label);
            if (json_is_string(value))
                c->domain = json_string_value(value);
            else if (jr_int(&p->jr, value, 1, SCHED_MAX_NODE_GPUS * 1024, &n) != 0)
                return jr_fail(&p->jr, "expected a label value or a number of domains");
            else
                c->n_domains = (int)n;
            jr_pop(&p->jr, inner);
        }
        jr_pop(&p->jr, mark);
    }
    return 0;
}

static const char *const expect_keys[] = {"phases",   "nodes",         "evicted",
                                           "notEvicted", "moved",      "allocatedGpus",
                                           "fairShareGpus", "pendingReason", "domains", NULL};
static const int expect_kinds[] = {SCN_PHASE, SCN_NODES,     SCN_EVICTED,    SCN_NOT_EVICTED,
                                   SCN_MOVED, SCN_ALLOCATED, SCN_FAIR_SHARE, SCN_REASON,
                                   SCN_DOMAINS};

static int parse_part(struct scn_parser *p, const char *key, const json_t *v, struct scn_step *st)
{
    int i, kind = SCN_PHASE;

    for (i = 0; expect_keys[i]; i++)
        if (strcmp(expect_keys[i], key) == 0)
            kind = expect_kinds[i];
    switch (kind) {
    case SCN_PHASE:
    case SCN_NODES:
    case SCN_REASON:
        return parse_map(p, v, kind, st, workload_member);
    case SCN_ALLOCATED:
    case SCN_FAIR_SHARE:
        return parse_map(p, v, kind, st, gpu_member);
    case SCN_DOMAINS:
        return parse_domains(p, v, st);
    default:
        return parse_name_list(p, v, kind, st);
    }
}

int scn__parse_expect(struct scn_parser *p, const json_t *v, struct scn_step *st)
{
    const char *key;
    json_t *part;
    size_t n = 0, mark;

    if (jr_object(&p->jr, v, expect_keys) != 0)
        return -1;
    json_object_foreach((json_t *)v, key, part) {
        const char *name;
        json_t *inner;
        n += json_object_size(part) + json_array_size(part);
        if (strcmp(key, "domains") == 0 && json_is_object(part))
            json_object_foreach(part, name, inner)
                n += json_object_size(inner);
    }
    st->u.expect.checks = calloc(n + 1, sizeof(*st->u.expect.checks));
    if (!st->u.expect.checks)
        return jr_fail_file(&p->jr, "out of memory");
    json_object_foreach((json_t *)v, key, part) {
        mark = jr_key(&p->jr, key);
        if (parse_part(p, key, part, st) != 0)
            return -1;
        jr_pop(&p->jr, mark);
    }
    if (st->u.expect.n_checks == 0)
        return jr_fail(&p->jr, "an expect step that checks nothing");
    return 0;
}
