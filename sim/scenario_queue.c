/*
 * scenario_queue.c: reading departments and projects into the queue tree.
 *
 * Queue order (the queues' age): the department `default` first unless
 * the file lists it, then the file's departments, then its projects.
 * Every queue has a quota triple per pool and resource (pool-major):
 *   - the implicit `default` department: deserved -1, limit -1, weight 1;
 *   - otherwise deserved 0, limit -1, weight 1 for whatever `resources`
 *     does not say.
 * GPU amounts are GPUs in the file (maybe fractional) and milli-GPU in
 * the model; -1 is SCHED_UNLIMITED in every unit; a weight of 1 is 1000.
 * A `resources` entry may give the pool's over-quota `priority` (None,
 * Low, Normal, High; default Normal): the queue's rank in that pool is
 * sched_pool_rank(rank, priority).
 * Names are unique across departments and projects, since expectations
 * name either.
 */
#include "scenario_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const res_keys[SCHED_NRES] = {"gpu", "cpu", "memory"};

/* deserved or limit: -1, or a non-negative amount in the resource's unit. */
static int parse_bound(struct scn_parser *p, const json_t *v, int res, int64_t *out)
{
    double d;

    if (json_is_number(v) && json_number_value(v) == -1) {
        *out = SCHED_UNLIMITED;
        return 0;
    }
    if (res == SCHED_GPU) {
        if (jr_number(&p->jr, v, 0, SCN_MAX_AMOUNT, "-1 or a non-negative number of GPUs",
                      &d) != 0)
            return -1;
        *out = llround(d * SCHED_MILLI);
        return 0;
    }
    if (!json_is_number(v) || json_number_value(v) < 0 ||
        json_number_value(v) != floor(json_number_value(v)))
        return jr_fail(&p->jr, "expected -1 or a non-negative integer");
    return jr_int(&p->jr, v, 0, JR_NO_MAX, out);
}

/* One triple {deserved, limit, overQuotaWeight} of resource res. */
static int parse_triple(struct scn_parser *p, const json_t *v, int res, struct sched_quota *q,
                        unsigned *given)
{
    static const char *const keys[] = {"deserved", "limit", "overQuotaWeight", NULL};
    const json_t *field;
    double weight;
    size_t mark;
    int rc = 0;

    if (jr_object(&p->jr, v, keys) != 0)
        return -1;
    if ((field = jr_opt(v, "deserved")) != NULL) {
        mark = jr_key(&p->jr, "deserved");
        rc = parse_bound(p, field, res, &q->deserved);
        jr_pop(&p->jr, mark);
        *given |= 1u << (res * SCN_NFIELDS + SCN_DESERVED);
    }
    if (rc == 0 && (field = jr_opt(v, "limit")) != NULL) {
        mark = jr_key(&p->jr, "limit");
        rc = parse_bound(p, field, res, &q->limit);
        jr_pop(&p->jr, mark);
        *given |= 1u << (res * SCN_NFIELDS + SCN_LIMIT);
    }
    if (rc == 0 && (field = jr_opt(v, "overQuotaWeight")) != NULL) {
        mark = jr_key(&p->jr, "overQuotaWeight");
        rc = jr_number(&p->jr, field, 0, SCN_MAX_AMOUNT, "a non-negative number", &weight);
        jr_pop(&p->jr, mark);
        q->weight = llround(weight * 1000.0);
        *given |= 1u << (res * SCN_NFIELDS + SCN_WEIGHT);
    }
    return rc;
}

int scn__parse_quota(struct scn_parser *p, const json_t *v, struct sched_quota *q,
                     unsigned *given)
{
    const json_t *triple;
    size_t mark;
    int res;

    for (res = 0; res < SCHED_NRES; res++) {
        if ((triple = jr_opt(v, res_keys[res])) == NULL)
            continue;
        mark = jr_key(&p->jr, res_keys[res]);
        if (parse_triple(p, triple, res, &q[res], given) != 0)
            return -1;
        jr_pop(&p->jr, mark);
    }
    return 0;
}

/* The over-quota priority of a `resources` entry into *level. */
static int parse_priority(struct scn_parser *p, const json_t *v, int *level)
{
    const char *name = NULL;

    if (jr_get_string(&p->jr, v, "priority", JR_OPTIONAL, &name) != 0)
        return -1;
    if (name && sched_overquota_priority(name, level) != SCHED_OK) {
        jr_key(&p->jr, "priority");
        return jr_fail(&p->jr, "expected None, Low, Normal or High");
    }
    return 0;
}

/* One entry of `resources`: the pool it is about, its triples and its
 * over-quota priority (levels[pool]). */
static int parse_resource(struct scn_parser *p, const json_t *v, struct sched_quota *quota,
                          int *levels, unsigned char *seen)
{
    static const char *const keys[] = {"nodePool", "gpu", "cpu", "memory", "priority", NULL};
    const json_t *pool_name;
    unsigned given = 0;
    size_t mark;
    int pool = 0;

    if (jr_object(&p->jr, v, keys) != 0)
        return -1;
    namemap_get(&p->pools, "default", &pool);   /* always there */
    if ((pool_name = jr_opt(v, "nodePool")) != NULL) {
        mark = jr_key(&p->jr, "nodePool");
        if (scn__pool_ref(p, pool_name, &pool) != 0)
            return -1;
        jr_pop(&p->jr, mark);
    }
    mark = jr_key(&p->jr, "nodePool");
    if (seen[pool])
        return jr_fail(&p->jr, "node pool \"%s\" is given twice", p->s->pools[pool].name);
    jr_pop(&p->jr, mark);
    seen[pool] = 1;
    if (parse_priority(p, v, &levels[pool]) != 0)
        return -1;
    return scn__parse_quota(p, v, &quota[pool * SCHED_NRES], &given);
}

static int parse_resources(struct scn_parser *p, const json_t *v, struct sched_quota *quota,
                           int *levels)
{
    const json_t *list = NULL;
    unsigned char *seen;
    size_t i, mark;
    int rc = 0;

    if (jr_get_array(&p->jr, v, "resources", JR_OPTIONAL, &list) != 0)
        return -1;
    seen = calloc((size_t)p->s->n_pools, 1);
    if (!seen)
        return jr_fail_file(&p->jr, "out of memory");
    for (i = 0; rc == 0 && i < json_array_size(list); i++) {
        mark = jr_key(&p->jr, "resources");
        jr_index(&p->jr, i);
        rc = parse_resource(p, json_array_get(list, i), quota, levels, seen);
        if (rc == 0)
            jr_pop(&p->jr, mark);
    }
    free(seen);
    return rc;
}

static void quota_defaults(struct sched_quota *quota, int n_pools, int64_t deserved)
{
    int i;

    for (i = 0; i < n_pools * SCHED_NRES; i++) {
        quota[i].deserved = deserved;
        quota[i].limit = SCHED_UNLIMITED;
        quota[i].weight = 1000;
    }
}

static int add_queue_name(struct scn_parser *p, const char *name, int q)
{
    int dup;

    if (namemap_get(&p->queues, name, &dup))
        return jr_fail(&p->jr, "duplicate project or department name \"%s\"", name);
    if (namemap_put(&p->queues, name, q) != 0)
        return jr_fail_file(&p->jr, "out of memory");
    return 0;
}

/* The department a project belongs to (default: `default`). */
static int parse_parent(struct scn_parser *p, const json_t *v, int *parent)
{
    const char *name = "default";

    if (jr_get_string(&p->jr, v, "department", JR_OPTIONAL, &name) != 0)
        return -1;
    if (!namemap_get(&p->queues, name, parent) || p->s->queues[*parent].parent >= 0) {
        jr_key(&p->jr, "department");
        return jr_fail(&p->jr, "unknown department \"%s\"", name);
    }
    return 0;
}

/* A department (is_project 0) or a project, into queue q. */
static int parse_queue(struct scn_parser *p, const json_t *v, int is_project, int q)
{
    static const char *const dept_keys[] = {"name", "rank", "resources", "defaultNodePools",
                                            NULL};
    static const char *const proj_keys[] = {"name", "department", "rank", "resources",
                                            "defaultNodePools", NULL};
    struct scenario *s = p->s;
    struct sched_queue *out = &s->queues[q];
    struct sched_quota *quota = &s->quotas[(size_t)q * (size_t)s->n_pools * SCHED_NRES];
    int *pools = &s->default_pools[(size_t)q * (size_t)s->n_pools];
    int *ranks = &s->pool_ranks[(size_t)q * (size_t)s->n_pools];
    const json_t *list;
    int64_t rank = 0;
    size_t mark;
    int i;

    if (jr_object(&p->jr, v, is_project ? proj_keys : dept_keys) != 0 ||
        jr_get_string(&p->jr, v, "name", JR_REQUIRED, &out->name) != 0)
        return -1;
    mark = jr_key(&p->jr, "name");
    if (add_queue_name(p, out->name, q) != 0)
        return -1;
    jr_pop(&p->jr, mark);
    out->parent = -1;
    if ((is_project && parse_parent(p, v, &out->parent) != 0) ||
        jr_get_int(&p->jr, v, "rank", JR_OPTIONAL, -SCN_MAX_RANK, SCN_MAX_RANK, &rank) != 0)
        return -1;
    out->rank = (int)rank;
    quota_defaults(quota, s->n_pools, 0);
    out->quota = quota;
    out->default_pools = pools;
    for (i = 0; i < s->n_pools; i++)
        ranks[i] = SCHED_OQ_NORMAL;
    if (parse_resources(p, v, quota, ranks) != 0)
        return -1;
    for (i = 0; i < s->n_pools; i++)
        ranks[i] = sched_pool_rank(out->rank, ranks[i]);
    out->pool_rank = ranks;
    if ((list = jr_opt(v, "defaultNodePools")) != NULL) {
        mark = jr_key(&p->jr, "defaultNodePools");
        if (scn__pool_list(p, list, pools, &out->n_default_pools) != 0)
            return -1;
        jr_pop(&p->jr, mark);
    }
    return 0;
}

static int lists_name(const json_t *list, const char *name)
{
    const json_t *v;
    size_t i;

    for (i = 0; i < json_array_size(list); i++) {
        v = json_object_get(json_array_get(list, i), "name");
        if (json_is_string(v) && strcmp(json_string_value(v), name) == 0)
            return 1;
    }
    return 0;
}

static int add_default_department(struct scn_parser *p)
{
    struct scenario *s = p->s;
    struct sched_queue *q = &s->queues[0];
    int i;

    q->name = "default";
    q->parent = -1;
    q->quota = s->quotas;
    q->default_pools = s->default_pools;
    q->pool_rank = s->pool_ranks;
    for (i = 0; i < s->n_pools; i++)
        s->pool_ranks[i] = sched_pool_rank(0, SCHED_OQ_NORMAL);
    quota_defaults(s->quotas, s->n_pools, SCHED_UNLIMITED);
    s->n_queues = 1;
    return add_queue_name(p, q->name, 0);
}

static int parse_list(struct scn_parser *p, const json_t *list, const char *key, int is_project)
{
    size_t i, mark;

    for (i = 0; i < json_array_size(list); i++) {
        mark = jr_key(&p->jr, key);
        jr_index(&p->jr, i);
        if (parse_queue(p, json_array_get(list, i), is_project, p->s->n_queues) != 0)
            return -1;
        jr_pop(&p->jr, mark);
        p->s->n_queues++;
    }
    return 0;
}

int scn__parse_queues(struct scn_parser *p, const json_t *doc)
{
    struct scenario *s = p->s;
    const json_t *depts = NULL, *projs = NULL;
    size_t n;

    if (jr_get_array(&p->jr, doc, "departments", JR_OPTIONAL, &depts) != 0 ||
        jr_get_array(&p->jr, doc, "projects", JR_OPTIONAL, &projs) != 0)
        return -1;
    n = 1 + json_array_size(depts) + json_array_size(projs);
    s->queues = calloc(n, sizeof(*s->queues));
    s->quotas = calloc(n * (size_t)s->n_pools * SCHED_NRES, sizeof(*s->quotas));
    s->default_pools = calloc(n * (size_t)s->n_pools, sizeof(*s->default_pools));
    s->pool_ranks = calloc(n * (size_t)s->n_pools, sizeof(*s->pool_ranks));
    if (!s->queues || !s->quotas || !s->default_pools || !s->pool_ranks)
        return jr_fail_file(&p->jr, "out of memory");
    if (!lists_name(depts, "default") && add_default_department(p) != 0)
        return -1;
    if (parse_list(p, depts, "departments", 0) != 0)
        return -1;
    return parse_list(p, projs, "projects", 1);
}
