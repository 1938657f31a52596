/*
 * scenario.c: reading a scenario file: the document, its top level, node
 * pools and nodes, the name references every part uses, and freeing.
 * Queues are read in scenario_queue.c, steps in scenario_step.c and
 * expectations in scenario_expect.c.
 *
 * Step 1: open and parse the file (duplicate keys are a JSON error).
 * Step 2: the top level: only known fields; `name` and `steps` required.
 * Step 3: pools, then nodes, then queues, then steps, each resolving its
 *         references against what the earlier parts defined.
 * The first problem met stops the reading; it is the one reported.
 */
#include "scenario_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const step_keys[SCN_NKINDS + 1] = {
    [SCN_SUBMIT] = "submit",       [SCN_DELETE] = "delete",     [SCN_COMPLETE] = "complete",
    [SCN_SUSPEND] = "suspend",     [SCN_RESUME] = "resume",     [SCN_NODE_DOWN] = "nodeDown",
    [SCN_NODE_UP] = "nodeUp",      [SCN_SET_QUOTA] = "setQuota", [SCN_ADVANCE] = "advance",
    [SCN_SCHEDULE] = "schedule",   [SCN_EXPECT] = "expect",     [SCN_NKINDS] = NULL,
};

const char *scenario_step_key(int kind)
{
    return kind >= 0 && kind < SCN_NKINDS ? step_keys[kind] : "";
}

/* ---- References ---- */

static int name_ref(struct scn_parser *p, const struct namemap *m, const char *what,
                    const json_t *v, int *out)
{
    const char *name;

    if (jr_string(&p->jr, v, &name) != 0)
        return -1;
    if (!namemap_get(m, name, out))
        return jr_fail(&p->jr, "unknown %s \"%s\"", what, name);
    return 0;
}

int scn__pool_ref(struct scn_parser *p, const json_t *v, int *out)
{
    return name_ref(p, &p->pools, "node pool", v, out);
}

int scn__node_ref(struct scn_parser *p, const json_t *v, int *out)
{
    return name_ref(p, &p->nodes, "node", v, out);
}

int scn__pool_list(struct scn_parser *p, const json_t *v, int *out, int *n)
{
    size_t i, mark;
    int j, pool;

    if (jr_array(&p->jr, v) != 0)
        return -1;
    *n = 0;
    for (i = 0; i < json_array_size(v); i++) {
        mark = jr_index(&p->jr, i);
        if (scn__pool_ref(p, json_array_get(v, i), &pool) != 0)
            return -1;
        for (j = 0; j < *n; j++)
            if (out[j] == pool)
                return jr_fail(&p->jr, "node pool \"%s\" is listed twice",
                               p->s->pools[pool].name);
        out[(*n)++] = pool;
        jr_pop(&p->jr, mark);
    }
    return 0;
}

int scn__seconds(struct scn_parser *p, const json_t *v, int64_t *ms)
{
    double sec;

    if (jr_number(&p->jr, v, 0, SCN_MAX_AMOUNT, "a non-negative number of seconds", &sec) != 0)
        return -1;
    *ms = llround(sec * 1000.0);
    return 0;
}

/* ---- Node pools ---- */

static const char *const placement_names[] = {"binpack", "spread", "fragmentation", NULL};

static int parse_placement(struct scn_parser *p, const json_t *pool, struct sched_pool *out)
{
    static const char *const keys[] = {"gpu", "cpu", NULL};
    const json_t *v = NULL;
    size_t mark;
    int gpu = -1, cpu = -1, rc, placement;

    if (jr_get_object(&p->jr, pool, "placementStrategy", JR_OPTIONAL, keys, &v) != 0)
        return -1;
    if (!v)
        return 0;
    mark = jr_key(&p->jr, "placementStrategy");
    rc = jr_get_enum(&p->jr, v, "gpu", placement_names, &gpu);
    if (rc == 0)
        rc = jr_get_enum(&p->jr, v, "cpu", placement_names, &cpu);
    jr_pop(&p->jr, mark);
    /* a strategy left out keeps the pool's default (pool_defaults()) */
    if (gpu >= 0 && sched_placement_parse(placement_names[gpu], &placement) == SCHED_OK)
        out->gpu_placement = (uint8_t)placement;
    if (cpu >= 0 && sched_placement_parse(placement_names[cpu], &placement) == SCHED_OK)
        out->cpu_placement = (uint8_t)placement;
    return rc;
}

static int parse_tbf(struct scn_parser *p, const json_t *tbf, struct sched_pool *out)
{
    double window = 604800, half_life = 0, k = 1.0;
    int rc;

    rc = jr_get_bool(&p->jr, tbf, "enabled", &out->tbf_enabled);
    if (rc == 0)
        rc = jr_get_number(&p->jr, tbf, "windowSeconds", 0.001, SCN_MAX_AMOUNT,
                           "a positive number of seconds", &window);
    if (rc == 0)
        rc = jr_get_number(&p->jr, tbf, "halfLifeSeconds", 0, SCN_MAX_AMOUNT,
                           "a non-negative number of seconds", &half_life);
    if (rc == 0)
        rc = jr_get_number(&p->jr, tbf, "kValue", 0, SCN_MAX_AMOUNT, "a non-negative number",
                           &k);
    out->tbf_window_ms = llround(window * 1000.0);
    out->tbf_half_life_ms = llround(half_life * 1000.0);
    out->tbf_k_milli = llround(k * 1000.0);
    return rc;
}

static void pool_defaults(struct sched_pool *pool, const char *name)
{
    memset(pool, 0, sizeof(*pool));
    pool->name = name;
    pool->gpu_placement = SCHED_DEFAULT_GPU_PLACEMENT;
    pool->cpu_placement = SCHED_BINPACK;
    pool->tbf_window_ms = 604800000;
    pool->tbf_k_milli = 1000;
}

/* topology: label keys, the widest level first, each once. */
static int parse_topology(struct scn_parser *p, const json_t *pool, struct sched_pool *out)
{
    const json_t *levels = NULL;
    const char **keys;
    size_t i, k, mark, inner;

    if (jr_get_array(&p->jr, pool, "topology", JR_OPTIONAL, &levels) != 0)
        return -1;
    if (!levels)
        return 0;
    mark = jr_key(&p->jr, "topology");
    if (json_array_size(levels) == 0 || json_array_size(levels) > SCHED_MAX_TOPOLOGY)
        return jr_fail(&p->jr, "expected 1 to %d label keys, the widest level first",
                       SCHED_MAX_TOPOLOGY);
    keys = calloc(json_array_size(levels), sizeof(*keys));
    if (!keys)
        return jr_fail_file(&p->jr, "out of memory");
    for (i = 0; i < json_array_size(levels); i++) {
        inner = jr_index(&p->jr, i);
        if (jr_string(&p->jr, json_array_get(levels, i), &keys[i]) != 0)
            break;
        for (k = 0; k < i && strcmp(keys[k], keys[i]) != 0; k++)
            ;
        if (k < i) {
            jr_fail(&p->jr, "level \"%s\" listed twice", keys[i]);
            break;
        }
        jr_pop(&p->jr, inner);
    }
    if (i < json_array_size(levels)) {   /* the pool is not kept: nothing frees it later */
        free(keys);
        return -1;
    }
    out->topology = keys;
    out->n_topology = (int)i;
    jr_pop(&p->jr, mark);
    return 0;
}

static int parse_pool(struct scn_parser *p, const json_t *v, struct sched_pool *out)
{
    static const char *const keys[] = {"name", "placementStrategy", "minGuaranteedRuntimeSeconds",
                                       "timeBasedFairshare", "topology", NULL};
    static const char *const tbf_keys[] = {"enabled", "windowSeconds", "halfLifeSeconds",
                                           "kValue", NULL};
    const json_t *tbf = NULL;
    const char *name;
    double min_runtime = 0;
    size_t mark;
    int dup;

    if (jr_object(&p->jr, v, keys) != 0 ||
        jr_get_string(&p->jr, v, "name", JR_REQUIRED, &name) != 0)
        return -1;
    if (namemap_get(&p->pools, name, &dup)) {
        jr_key(&p->jr, "name");
        return jr_fail(&p->jr, "duplicate node pool \"%s\"", name);
    }
    pool_defaults(out, name);
    if (parse_placement(p, v, out) != 0 ||
        jr_get_number(&p->jr, v, "minGuaranteedRuntimeSeconds", 0, SCN_MAX_AMOUNT,
                      "a non-negative number of seconds", &min_runtime) != 0 ||
        jr_get_object(&p->jr, v, "timeBasedFairshare", JR_OPTIONAL, tbf_keys, &tbf) != 0)
        return -1;
    out->min_guaranteed_runtime_ms = llround(min_runtime * 1000.0);
    if (tbf) {
        mark = jr_key(&p->jr, "timeBasedFairshare");
        if (parse_tbf(p, tbf, out) != 0)
            return -1;
        jr_pop(&p->jr, mark);
    }
    return parse_topology(p, v, out);   /* last: a pool that fails is not kept */
}

/* Whether the file's pool list names `default` (a malformed entry is
 * reported later, when it is read). */
static int lists_default(const json_t *pools)
{
    const json_t *name;
    size_t i;

    for (i = 0; i < json_array_size(pools); i++) {
        name = json_object_get(json_array_get(pools, i), "name");
        if (json_is_string(name) && strcmp(json_string_value(name), "default") == 0)
            return 1;
    }
    return 0;
}

static int add_pool_name(struct scn_parser *p, int i)
{
    if (namemap_put(&p->pools, p->s->pools[i].name, i) != 0)
        return jr_fail_file(&p->jr, "out of memory");
    return 0;
}

static int parse_pools(struct scn_parser *p, const json_t *doc)
{
    struct scenario *s = p->s;
    const json_t *pools = NULL;
    size_t i, mark;

    if (jr_get_array(&p->jr, doc, "nodePools", JR_OPTIONAL, &pools) != 0)
        return -1;
    s->pools = calloc(json_array_size(pools) + 1, sizeof(*s->pools));
    if (!s->pools)
        return jr_fail_file(&p->jr, "out of memory");
    if (!lists_default(pools)) {
        pool_defaults(&s->pools[0], "default");
        s->n_pools = 1;
        if (add_pool_name(p, 0) != 0)
            return -1;
    }
    for (i = 0; i < json_array_size(pools); i++) {
        mark = jr_key(&p->jr, "nodePools");
        jr_index(&p->jr, i);
        if (parse_pool(p, json_array_get(pools, i), &s->pools[s->n_pools]) != 0)
            return -1;
        jr_pop(&p->jr, mark);
        if (add_pool_name(p, s->n_pools++) != 0)
            return -1;
    }
    return 0;
}

/* ---- Nodes ---- */

/* labels: every one is kept (required node affinity matches them); the
 * label node-type is also the node's type. */
static int parse_labels(struct scn_parser *p, const json_t *node, struct sched_node *out)
{
    const json_t *labels = NULL;
    struct sched_label *kept;
    const char *key;
    json_t *value;
    size_t mark, inner;

    if (jr_get_object(&p->jr, node, "labels", JR_OPTIONAL, NULL, &labels) != 0)
        return -1;
    if (!labels || json_object_size(labels) == 0)
        return 0;
    kept = calloc(json_object_size(labels), sizeof(*kept));
    if (!kept)
        return jr_fail_file(&p->jr, "out of memory");
    out->labels = kept;
    mark = jr_key(&p->jr, "labels");
    json_object_foreach((json_t *)labels, key, value) {
        inner = jr_key(&p->jr, key);
        if (!json_is_string(value))
            return jr_fail(&p->jr, "expected a string");
        if (strcmp(key, "node-type") == 0)
            out->node_type = json_string_value(value);
        kept[out->n_labels].key = key;
        kept[out->n_labels++].value = json_string_value(value);
        jr_pop(&p->jr, inner);
    }
    jr_pop(&p->jr, mark);
    return 0;
}

static int parse_node(struct scn_parser *p, const json_t *v, struct sched_node *out)
{
    static const char *const keys[] = {"name", "nodePool", "gpus", "gpuType", "cpuMillicores",
                                       "memoryMib", "labels", "gpuMemoryMib", NULL};
    const char *pool = "default", *gpu_type;
    int64_t gpus = 0, cpu = SCHED_UNLIMITED, mem = SCHED_UNLIMITED, gpu_mem = 0;
    int dup;

    if (jr_object(&p->jr, v, keys) != 0 ||
        jr_get_string(&p->jr, v, "name", JR_REQUIRED, &out->name) != 0)
        return -1;
    if (namemap_get(&p->nodes, out->name, &dup)) {
        jr_key(&p->jr, "name");
        return jr_fail(&p->jr, "duplicate node \"%s\"", out->name);
    }
    if (jr_get_string(&p->jr, v, "nodePool", JR_OPTIONAL, &pool) != 0 ||
        jr_get_int(&p->jr, v, "gpus", JR_REQUIRED, 0, SCHED_MAX_NODE_GPUS, &gpus) != 0 ||
        jr_get_string(&p->jr, v, "gpuType", JR_OPTIONAL, &gpu_type) != 0 ||
        jr_get_int(&p->jr, v, "cpuMillicores", JR_OPTIONAL, 0, JR_NO_MAX, &cpu) != 0 ||
        jr_get_int(&p->jr, v, "memoryMib", JR_OPTIONAL, 0, JR_NO_MAX, &mem) != 0 ||
        jr_get_int(&p->jr, v, "gpuMemoryMib", JR_OPTIONAL, 0, JR_NO_MAX, &gpu_mem) != 0 ||
        parse_labels(p, v, out) != 0)
        return -1;
    if (!namemap_get(&p->pools, pool, &out->pool)) {
        jr_key(&p->jr, "nodePool");
        return jr_fail(&p->jr, "unknown node pool \"%s\"", pool);
    }
    out->ready = 1;
    out->n_gpus = (int)gpus;
    out->cpu_milli = cpu;
    out->mem_mib = mem;
    out->gpu_memory_mib = gpu_mem;
    return 0;
}

static int parse_nodes(struct scn_parser *p, const json_t *doc)
{
    struct scenario *s = p->s;
    const json_t *nodes = NULL;
    size_t i, mark;

    if (jr_get_array(&p->jr, doc, "nodes", JR_OPTIONAL, &nodes) != 0)
        return -1;
    s->nodes = calloc(json_array_size(nodes) + 1, sizeof(*s->nodes));
    if (!s->nodes)
        return jr_fail_file(&p->jr, "out of memory");
    for (i = 0; i < json_array_size(nodes); i++) {
        mark = jr_key(&p->jr, "nodes");
        jr_index(&p->jr, i);
        if (parse_node(p, json_array_get(nodes, i), &s->nodes[i]) != 0)
            return -1;
        jr_pop(&p->jr, mark);
        if (namemap_put(&p->nodes, s->nodes[i].name, (int)i) != 0)
            return jr_fail_file(&p->jr, "out of memory");
        s->n_nodes++;
    }
    return 0;
}

/* ---- The document ---- */

static int read_document(struct scn_parser *p)
{
    struct stat st;
    json_error_t jerr;
    FILE *fp;

    fp = fopen(p->jr.file, "r");
    if (!fp)
        return jr_fail_file(&p->jr, "%s", strerror(errno));
    if (fstat(fileno(fp), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(fp);
        return jr_fail_file(&p->jr, "%s", strerror(EISDIR));
    }
    p->s->doc = json_loadf(fp, JSON_REJECT_DUPLICATES, &jerr);
    fclose(fp);
    if (!p->s->doc)
        return jr_fail(&p->jr, "invalid JSON (line %d, column %d): %s", jerr.line, jerr.column,
                       jerr.text);
    return 0;
}

static int parse_top(struct scn_parser *p)
{
    static const char *const keys[] = {"name", "description", "nodePools", "nodes",
                                       "departments", "projects", "steps", NULL};
    const json_t *doc = p->s->doc, *steps = NULL, *desc;

    if (jr_object(&p->jr, doc, keys) != 0 ||
        jr_get_string(&p->jr, doc, "name", JR_REQUIRED, &p->s->name) != 0)
        return -1;
    desc = json_object_get(doc, "description");
    if (desc && !json_is_string(desc)) {
        jr_key(&p->jr, "description");
        return jr_fail(&p->jr, "expected a string");
    }
    if (parse_pools(p, doc) != 0 || parse_nodes(p, doc) != 0 ||
        scn__parse_queues(p, doc) != 0 ||
        jr_get_array(&p->jr, doc, "steps", JR_REQUIRED, &steps) != 0)
        return -1;
    return scn__parse_steps(p, steps);
}

static void parser_init(struct scn_parser *p, const char *file, struct scenario *s)
{
    jr_init(&p->jr, file);
    p->s = s;
    namemap_init(&p->pools);
    namemap_init(&p->nodes);
    namemap_init(&p->queues);
    namemap_init(&p->workloads);
}

static void parser_free(struct scn_parser *p)
{
    namemap_free(&p->pools);
    namemap_free(&p->nodes);
    namemap_free(&p->queues);
    namemap_free(&p->workloads);
}

int scenario_load(const char *file, struct scenario **out, char *err, size_t len)
{
    struct scn_parser p;
    struct scenario *s;
    int rc = -1;

    *out = NULL;
    s = calloc(1, sizeof(*s));
    if (!s) {
        snprintf(err, len, "%s: out of memory", file);
        return -1;
    }
    s->file = file;
    parser_init(&p, file, s);
    if (read_document(&p) != 0 || parse_top(&p) != 0)
        goto out_free;
    *out = s;
    s = NULL;
    rc = 0;
out_free:
    if (rc != 0)
        snprintf(err, len, "%s", p.jr.error);
    parser_free(&p);
    scenario_free(s);
    return rc;
}

/* ---- Freeing ---- */

static void step_free(struct scn_step *st)
{
    int i;

    switch (st->kind) {
    case SCN_SUBMIT:
        free(st->u.submit.pools);
        free(st->u.submit.running_on);
        free(st->u.submit.node_types);
        free(st->u.submit.terms);
        free(st->u.submit.matches);
        free(st->u.submit.values);
        break;
    case SCN_EXPECT:
        for (i = 0; i < st->u.expect.n_checks; i++)
            free(st->u.expect.checks[i].nodes);
        free(st->u.expect.checks);
        break;
    default:
        break;
    }
}

void scenario_free(struct scenario *s)
{
    int i;

    if (!s)
        return;
    for (i = 0; i < s->n_steps; i++)
        step_free(&s->steps[i]);
    free(s->steps);
    free(s->default_pools);
    free(s->pool_ranks);
    free(s->quotas);
    free(s->queues);
    for (i = 0; s->nodes && i <= s->n_nodes; i++) /* the node being read when it failed too */
        free((void *)s->nodes[i].labels);
    free(s->nodes);
    for (i = 0; s->pools && i < s->n_pools; i++)
        free((void *)s->pools[i].topology);
    free(s->pools);
    json_decref(s->doc);
    free(s);
}
