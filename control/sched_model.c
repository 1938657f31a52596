/*
 * sched_model.c: the scheduler thread's in-memory copy of the cluster:
 * topology (pools, nodes, queues with their quotas and default pools) and
 * every live Pending or Running workload with its pods, in the core's own
 * types, so a cycle costs no database read.
 *
 * Transitions:
 *   sm_load()          empty -> loaded: one read transaction (start,
 *                      or after a failed write of a cycle), then
 *                      sm_build() from what it read;
 *   sm_load_topology() pools/nodes/queues replaced (sm_set_topology());
 *                      every workload's queue, pool list and pod nodes
 *                      are re-resolved by seq (a workload whose project
 *                      is gone is dropped);
 *   sm_refresh()       the named workloads re-read: replaced in place,
 *                      merged in by seq, or dropped (sm_apply_rows(),
 *                      which is sm_rows_build(), reading the model only,
 *                      then sm_rows_take(), changing it: the scheduler
 *                      thread builds before it takes the model lock);
 *   sm_clone()         a deep copy that shares nothing with the model
 *                      (what-if runs change and schedule it on their own
 *                      thread, whatif.c);
 *   the scheduler      applies its own decisions to wls[] directly.
 *
 * Invariants:
 *   1. wls[] and meta[] are parallel and ordered by seq, so a workload is
 *      found by binary search and the core's input order is stable.
 *   2. Every wls[i].queue, .pools[] and .pods[].node is an index into the
 *      current topology; a pod's node is -1 or a node of that topology.
 *   3. The strings a sched_workload points at live in meta[i].strs, its
 *      pods and pool list in their own blocks, freed with the entry; the
 *      topology's rows (m->topo) are read only: models may hold the same
 *      snapshot (db_snapshot_share(): a clone, a what-if's answer), and
 *      the last to let go frees it; a changed topology is a new one
 *      (sm_set_topology()).
 *   4. mix has noted every workload loaded (in seq order), then every one
 *      merged in by sm_apply_rows() as it arrived: the workload mix of the
 *      snapshot (fragmentation placement) is the last SCHED_MIX_WINDOW
 *      pods requested. A reload starts it again from the live workloads;
 *      a clone has a copy of it.
 *   5. With keep_left, a workload that stops being live (suspended,
 *      stopped, cancelled, deleted, completed, failed), pending or
 *      holding pods, keeps its index as a left entry (SCHED_COMPLETED,
 *      every pod off its node, no stale time, meta.left) until
 *      sm_drop_left(); a clone leaves such entries out.
 *   6. Between sm_rows_build() and sm_rows_take() of one sm_built, the
 *      model does not change (one thread changes it, and takes what it
 *      built at once): entries that build staged past the model's length
 *      are still there, and only the length moves under the lock; so is
 *      the mix window, which build copies and notes the new entries in
 *      (note_aside()), and which take swaps in. So the lock is held for
 *      the rows replaced and the new entries counted, not for copying or
 *      noting thousands of them.
 *   7. A workload read again and replaced in place is marked
 *      reread_changed unless it is the same to the core as the entry it
 *      replaces (sched_workload_same(): a heartbeat that started its pods
 *      changes only meta.initializing); the mark stays through later
 *      reads until the scheduler thread has told the core of the change
 *      (sched_loop.c, note_changes(): a full delta).
 */
#include "sched_model.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* ---- topology ---- */

static int find_seq(const void *base, int n, size_t stride, int64_t seq)
{
    int lo = 0, hi = n - 1;

    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        int64_t s = *(const int64_t *)((const char *)base + (size_t)mid * stride);
        if (s == seq)
            return mid;
        if (s < seq)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

int sm_pool_index(const struct sched_model *m, int64_t seq)
{
    return m->topo ? find_seq(m->topo->pools, m->n_pools, sizeof(m->topo->pools[0]), seq) : -1;
}

int sm_queue_index(const struct sched_model *m, int64_t seq)
{
    return m->topo ? find_seq(m->topo->queues, m->n_queues, sizeof(m->topo->queues[0]), seq)
                   : -1;
}

static int node_index(const struct db_snapshot *t, int64_t seq)
{
    return find_seq(t->nodes, t->n_nodes, sizeof(t->nodes[0]), seq);
}

int sm_reason_code(const char *name)
{
    int r;

    for (r = SCHED_R_NONE + 1; name && name[0] && r <= SCHED_R_QUEUE_FAIR_SHARE_REACHED; r++)
        if (strcmp(sched_reason_name(r), name) == 0)
            return r;
    return SCHED_R_NONE;
}

uint64_t sm_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;

    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* Comma-separated pool names to indices of topology t; returns the count. */
static int parse_pools(const struct db_snapshot *t, const char *names, int *out)
{
    int n = 0, i;

    while (names && *names && n < t->n_pools) {
        const char *c = strchr(names, ',');
        size_t len = c ? (size_t)(c - names) : strlen(names);
        for (i = 0; i < t->n_pools; i++)
            if (strlen(t->pools[i].name) == len && strncmp(t->pools[i].name, names, len) == 0)
                out[n++] = i;
        names = c ? c + 1 : NULL;
    }
    return n;
}

/* The strategy of a stored placementStrategy word (binpack if unknown). */
static int placement_of(int word)
{
    int placement = SCHED_BINPACK;

    if (word >= 0 && word < DB_N_PLACEMENTS)
        sched_placement_parse(db_placement_words[word], &placement);
    return placement;
}

static void topo_pools_nodes(struct sched_model *m)
{
    const struct db_snapshot *t = m->topo;
    int i;

    for (i = 0; i < t->n_pools; i++) {
        const struct db_pool *p = &t->pools[i];
        m->pools[i].name = p->name;
        m->pools[i].gpu_placement = (uint8_t)placement_of(p->gpu_placement);
        m->pools[i].cpu_placement = (uint8_t)placement_of(p->cpu_placement);
        m->pools[i].min_guaranteed_runtime_ms = p->min_runtime_ms;
        m->pools[i].tbf_enabled = p->tbf_enabled;
        m->pools[i].tbf_window_ms = p->tbf_window_ms;
        m->pools[i].tbf_half_life_ms = p->tbf_half_life_ms;
        m->pools[i].tbf_k_milli = p->tbf_k_milli;
    }
    for (i = 0; i < t->n_nodes; i++) {
        const struct db_node *n = &t->nodes[i];
        m->nodes[i].name = n->name;
        m->nodes[i].pool = find_seq(t->pools, t->n_pools, sizeof(t->pools[0]), n->pool_seq);
        m->nodes[i].ready = n->ready && m->nodes[i].pool >= 0;
        if (m->nodes[i].pool < 0)
            m->nodes[i].pool = 0; /* a node always names a pool (foreign key) */
        m->nodes[i].n_gpus = n->n_gpus;
        m->nodes[i].cpu_milli = n->cpu_milli;
        m->nodes[i].mem_mib = n->mem_mib;
        m->nodes[i].node_type = n->node_type[0] ? n->node_type : NULL;
        m->nodes[i].gpu_memory_mib = n->gpu_memory_mib;
    }
}

/* Every node's labels (a JSON object per node) as the core's pairs. */
static int topo_labels(struct sched_model *m)
{
    const struct db_snapshot *t = m->topo;
    size_t total = 0, used = 0;
    const char *key;
    json_t *v;
    int i;

    m->label_docs = calloc((size_t)t->n_nodes + 1, sizeof(*m->label_docs));
    if (!m->label_docs)
        return DB_ENOMEM;
    for (i = 0; i < t->n_nodes; i++) {
        m->label_docs[i] = json_loads(t->nodes[i].labels, 0, NULL);
        total += json_object_size(m->label_docs[i]);
    }
    m->labels = calloc(total + 1, sizeof(*m->labels));
    if (!m->labels)
        return DB_ENOMEM;
    for (i = 0; i < t->n_nodes; i++) {
        m->nodes[i].labels = &m->labels[used];
        json_object_foreach(m->label_docs[i], key, v) {
            if (!json_is_string(v))
                continue;
            m->labels[used].key = key;
            m->labels[used++].value = json_string_value(v);
            m->nodes[i].n_labels++;
        }
    }
    return DB_OK;
}

/* Every pool's network topology (its levels, a JSON array, as the pool
 * row keeps them) as the core's list of label keys. */
static int topo_pool_levels(struct sched_model *m)
{
    const struct db_snapshot *t = m->topo;
    int i;
    size_t k;

    m->pool_topo_docs = calloc((size_t)t->n_pools + 1, sizeof(*m->pool_topo_docs));
    m->pool_levels = calloc((size_t)t->n_pools * SCHED_MAX_TOPOLOGY + 1, sizeof(char *));
    if (!m->pool_topo_docs || !m->pool_levels)
        return DB_ENOMEM;
    for (i = 0; i < t->n_pools; i++) {
        const char **levels = &m->pool_levels[(size_t)i * SCHED_MAX_TOPOLOGY];
        json_t *doc = t->pools[i].topology_levels[0]
                          ? json_loads(t->pools[i].topology_levels, 0, NULL)
                          : NULL;
        m->pool_topo_docs[i] = doc;
        for (k = 0; k < json_array_size(doc) && k < SCHED_MAX_TOPOLOGY; k++)
            if (json_is_string(json_array_get(doc, k)))
                levels[m->pools[i].n_topology++] = json_string_value(json_array_get(doc, k));
        m->pools[i].topology = m->pools[i].n_topology ? levels : NULL;
    }
    return DB_OK;
}

/* The department that every project belongs to unless told otherwise;
 * it follows the cluster (topo_queue()). */
#define DEFAULT_DEPARTMENT "default"

/* A queue's quota triples, pool-major. Whatever it does not set (a pool
 * without an entry, CPU or memory left out of one) is deserved 0, no
 * limit, weight 1, for departments and projects alike, except that the
 * `default` department follows the cluster: in a pool where it has no
 * GPU quota of its own it deserves the GPUs of the pool's ready nodes
 * that no other department deserves (pool_gpus), so a fresh install's
 * projects can run non-preemptible work within their own quotas, and the
 * departments' quotas never add up to more than the pool because of it. Its rank in a pool is its rank, then its
 * over-quota priority there (Normal without an entry). Default pools: its
 * own, else its department's. */
static void topo_queue(struct sched_model *m, int qi, const struct db_queue *quotas_of,
                       const int64_t *pool_gpus)
{
    const struct db_snapshot *t = m->topo;
    const struct db_queue *q = &t->queues[qi];
    struct sched_quota *qt = &m->quotas[(size_t)qi * (size_t)t->n_pools * SCHED_NRES];
    int *dp = &m->queue_pools[(size_t)qi * (size_t)t->n_pools];
    int *rk = &m->queue_ranks[(size_t)qi * (size_t)t->n_pools];
    int p, r, k, parent;

    int follows = q->kind == DB_DEPARTMENT && strcmp(q->name, DEFAULT_DEPARTMENT) == 0;

    for (p = 0; p < t->n_pools; p++) {
        rk[p] = sched_pool_rank(q->rank, SCHED_OQ_NORMAL);
        for (r = 0; r < SCHED_NRES; r++) {
            struct sched_quota *x = &qt[p * SCHED_NRES + r];
            x->deserved = follows && r == SCHED_GPU ? pool_gpus[p] : 0;
            x->limit = SCHED_UNLIMITED;
            x->weight = 1000;
        }
    }
    for (k = 0; k < quotas_of->n_quotas; k++) {
        const struct db_quota *e = &quotas_of->quotas[k];
        p = find_seq(t->pools, t->n_pools, sizeof(t->pools[0]), e->pool_seq);
        if (p >= 0)
            rk[p] = sched_pool_rank(q->rank, e->priority);
        for (r = 0; p >= 0 && r < SCHED_NRES; r++) {
            struct sched_quota *x = &qt[p * SCHED_NRES + r];
            if (!e->has[r])
                continue;
            x->deserved = e->deserved[r];
            x->limit = e->limit[r];
            x->weight = e->weight[r];
        }
    }
    parent = q->parent_seq ? find_seq(t->queues, t->n_queues, sizeof(t->queues[0]),
                                      q->parent_seq) : -1;
    m->queues[qi].name = q->name;
    m->queues[qi].parent = parent;
    m->queues[qi].rank = q->rank;
    m->queues[qi].quota = t->n_pools ? qt : NULL;
    m->queues[qi].pool_rank = t->n_pools ? rk : NULL;
    m->queues[qi].n_default_pools = parse_pools(t, q->default_pools, dp);
    if (m->queues[qi].n_default_pools == 0 && parent >= 0)
        m->queues[qi].n_default_pools = parse_pools(t, t->queues[parent].default_pools, dp);
    m->queues[qi].default_pools = m->queues[qi].n_default_pools ? dp : NULL;
}

/* Frees what p points to and sets p NULL. */
#define FREE_CLEAR(p) (free(p), (p) = NULL)

static void topo_free(struct sched_model *m)
{
    int i;

    for (i = 0; m->label_docs && i < m->n_nodes; i++)
        json_decref(m->label_docs[i]);
    for (i = 0; m->pool_topo_docs && i < m->n_pools; i++)
        json_decref(m->pool_topo_docs[i]);
    FREE_CLEAR(m->label_docs);
    FREE_CLEAR(m->labels);
    FREE_CLEAR(m->pool_topo_docs);
    FREE_CLEAR(m->pool_levels);
    db_snapshot_free(m->topo);
    m->topo = NULL;
    FREE_CLEAR(m->pools);
    FREE_CLEAR(m->nodes);
    FREE_CLEAR(m->queues);
    FREE_CLEAR(m->quotas);
    FREE_CLEAR(m->queue_pools);
    FREE_CLEAR(m->queue_ranks);
    m->n_pools = m->n_nodes = m->n_queues = 0;
}

/* The row whose quotas queue i has: rows[k] with its seq, else the
 * topology's own. */
static const struct db_queue *quotas_row(const struct db_snapshot *t, int i,
                                         const struct db_queue *const *rows, int n_rows)
{
    int k;

    for (k = 0; k < n_rows; k++)
        if (rows[k]->seq == t->queues[i].seq)
            return rows[k];
    return &t->queues[i];
}

/* What the other departments do not deserve of each pool's GPUs (never
 * below 0): the `default` department's share where it has no quota. */
static void unclaimed_gpus(const struct db_snapshot *t, const struct db_queue *const *rows,
                           int n_rows, int64_t *pool_gpus)
{
    int i, k, p;

    for (i = 0; i < t->n_queues; i++) {
        const struct db_queue *q = quotas_row(t, i, rows, n_rows);
        if (t->queues[i].kind != DB_DEPARTMENT ||
            strcmp(t->queues[i].name, DEFAULT_DEPARTMENT) == 0)
            continue;
        for (k = 0; k < q->n_quotas; k++) {
            p = find_seq(t->pools, t->n_pools, sizeof(t->pools[0]), q->quotas[k].pool_seq);
            if (p >= 0 && q->quotas[k].has[SCHED_GPU] && q->quotas[k].deserved[SCHED_GPU] > 0)
                pool_gpus[p] -= q->quotas[k].deserved[SCHED_GPU];
        }
    }
    for (p = 0; p < t->n_pools; p++)
        if (pool_gpus[p] < 0)
            pool_gpus[p] = 0;
}

/* Builds the core's topology arrays from m->topo. */
/* The part of the topology that names things: pools, nodes (each with its
 * pool) and room for the queues, with their counts. */
static int topo_names(struct sched_model *m)
{
    const struct db_snapshot *t = m->topo;

    m->pools = calloc((size_t)t->n_pools + 1, sizeof(*m->pools));
    m->nodes = calloc((size_t)t->n_nodes + 1, sizeof(*m->nodes));
    m->queues = calloc((size_t)t->n_queues + 1, sizeof(*m->queues));
    if (!m->pools || !m->nodes || !m->queues)
        return DB_ENOMEM;
    m->n_pools = t->n_pools;
    m->n_nodes = t->n_nodes;
    m->n_queues = t->n_queues;
    topo_pools_nodes(m);
    return DB_OK;
}

/* Every queue's quotas, ranks and default pools, the quotas of those
 * rows[] names (by seq) taken from there. */
static int topo_quotas(struct sched_model *m, const struct db_queue *const *rows, int n_rows)
{
    const struct db_snapshot *t = m->topo;
    int64_t *pool_gpus = calloc((size_t)t->n_pools + 1, sizeof(*pool_gpus));
    int i;

    if (!pool_gpus)
        return DB_ENOMEM;
    for (i = 0; i < m->n_nodes; i++)
        if (m->nodes[i].ready && m->nodes[i].pool >= 0 && m->nodes[i].pool < m->n_pools)
            pool_gpus[m->nodes[i].pool] += (int64_t)m->nodes[i].n_gpus * SCHED_MILLI;
    unclaimed_gpus(t, rows, n_rows, pool_gpus);
    for (i = 0; i < t->n_queues; i++)
        topo_queue(m, i, quotas_row(t, i, rows, n_rows), pool_gpus);
    free(pool_gpus);
    return DB_OK;
}

int sm_quota_rows(struct sched_model *m, const struct db_queue *const *rows, int n_rows)
{
    return m->topo ? topo_quotas(m, rows, n_rows) : DB_OK;
}

static int topo_build(struct sched_model *m)
{
    const struct db_snapshot *t = m->topo;
    int rc;

    if (topo_names(m) != DB_OK)
        return DB_ENOMEM;
    m->quotas = calloc((size_t)t->n_queues * (size_t)t->n_pools * SCHED_NRES + 1,
                       sizeof(*m->quotas));
    m->queue_pools = calloc((size_t)t->n_queues * (size_t)t->n_pools + 1, sizeof(int));
    m->queue_ranks = calloc((size_t)t->n_queues * (size_t)t->n_pools + 1, sizeof(int));
    if (!m->quotas || !m->queue_pools || !m->queue_ranks)
        return DB_ENOMEM;
    if (topo_quotas(m, NULL, 0) != DB_OK)
        return DB_ENOMEM;
    rc = topo_labels(m);
    return rc == DB_OK ? topo_pool_levels(m) : rc;
}

/* ---- workloads ---- */

static void wl_free(struct sched_workload *w, struct sm_meta *mt)
{
    free(mt->node_types);
    json_decref(mt->affinity_doc);
    json_decref(mt->topology_doc);
    free(mt->terms);
    free(mt->matches);
    free(mt->values);
    free(mt->strs);
    free(w->pods);
    free((void *)w->pools);
    memset(w, 0, sizeof(*w));
    memset(mt, 0, sizeof(*mt));
}

/* Resolves a workload's pool names against the current topology. */
static int wl_pools(const struct sched_model *m, struct sched_workload *w, const char *names)
{
    int *idx = NULL;

    free((void *)w->pools);
    w->pools = NULL;
    w->n_pools = 0;
    if (!names[0] || m->n_pools == 0)
        return DB_OK;
    idx = malloc(sizeof(int) * (size_t)m->n_pools);
    if (!idx)
        return DB_ENOMEM;
    w->n_pools = parse_pools(m->topo, names, idx);
    if (w->n_pools == 0) {
        free(idx);
        return DB_OK;
    }
    w->pools = idx;
    return DB_OK;
}

/* The strings of a row, packed: name \0 pools \0 node_type \0. */
static char *pack_strings(const struct db_sched_wl *r)
{
    size_t a = strlen(r->name) + 1, b = strlen(r->pools) + 1, c = strlen(r->node_type) + 1;
    char *s = malloc(a + b + c);

    if (!s)
        return NULL;
    memcpy(s, r->name, a);
    memcpy(s + a, r->pools, b);
    memcpy(s + a + b, r->node_type, c);
    return s;
}

static const char *strs_pools(const struct sm_meta *mt)
{
    return mt->strs + strlen(mt->strs) + 1;
}

/* The node types of a row ("a100,h100" in strs, split in place): any of
 * them, the first preferred. */
static int wl_node_types(struct sched_workload *w, struct sm_meta *mt, char *list)
{
    int n = 1, k = 0;
    char *p, *next;

    if (!list[0])
        return DB_OK;
    for (p = list; *p; p++)
        n += *p == ',';
    mt->node_types = calloc((size_t)n, sizeof(char *));
    if (!mt->node_types)
        return DB_ENOMEM;
    for (p = list; p; p = next) {
        next = strchr(p, ',');
        mt->node_types[k++] = p;
        if (next)
            *next++ = 0;
    }
    w->node_types = mt->node_types;
    w->n_node_types = k;
    return DB_OK;
}

static const char *const match_ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};

static int match_op(const char *s)
{
    int op;

    for (op = 0; op < 6 && !(s && strcmp(s, match_ops[op]) == 0); op++)
        ;
    return op;
}

/* The required node affinity in mt->affinity_doc (nodeSelectorTerms JSON,
 * checked when it was submitted) as the core's terms; the strings stay in
 * the document. */
static int wl_affinity_terms(struct sched_workload *w, struct sm_meta *mt)
{
    json_t *terms, *t, *e, *v;
    size_t i, k, j, n_m = 0, n_v = 0, used_m = 0, used_v = 0;

    terms = json_object_get(mt->affinity_doc, "nodeSelectorTerms");
    json_array_foreach(terms, i, t)
        json_array_foreach(json_object_get(t, "matchExpressions"), k, e) {
            n_m++;
            n_v += json_array_size(json_object_get(e, "values"));
        }
    mt->terms = calloc(json_array_size(terms) + 1, sizeof(*mt->terms));
    mt->matches = calloc(n_m + 1, sizeof(*mt->matches));
    mt->values = calloc(n_v + 1, sizeof(*mt->values));
    if (!mt->affinity_doc || !mt->terms || !mt->matches || !mt->values)
        return DB_ENOMEM;
    json_array_foreach(terms, i, t) {
        mt->terms[i].matches = &mt->matches[used_m];
        json_array_foreach(json_object_get(t, "matchExpressions"), k, e) {
            struct sched_match *m = &mt->matches[used_m++];
            m->key = json_string_value(json_object_get(e, "key"));
            m->op = match_op(json_string_value(json_object_get(e, "operator")));
            m->values = &mt->values[used_v];
            json_array_foreach(json_object_get(e, "values"), j, v)
                mt->values[used_v + (size_t)m->n_values++] = json_string_value(v);
            used_v += (size_t)m->n_values;
            mt->terms[i].n_matches++;
        }
    }
    w->affinity = mt->terms;
    w->n_affinity = (int)json_array_size(terms);
    return DB_OK;
}

/* A row's topology (its text, {name, requiredPlacement, preferredPlacement};
 * "" none): the levels the core reads, strings in mt->topology_doc. */
static int wl_topology(struct sched_workload *w, struct sm_meta *mt, const char *text)
{
    json_t *req, *pref;

    w->topology_required = w->topology_preferred = NULL;
    if (!text || !text[0])
        return DB_OK;
    if (!mt->topology_doc && !(mt->topology_doc = json_loads(text, 0, NULL)))
        return DB_ENOMEM;
    req = json_object_get(mt->topology_doc, "requiredPlacement");
    pref = json_object_get(mt->topology_doc, "preferredPlacement");
    w->topology_required = json_is_string(req) ? json_string_value(req) : NULL;
    w->topology_preferred = json_is_string(pref) ? json_string_value(pref) : NULL;
    return DB_OK;
}

/* A row's required node affinity (its text; "" none). */
static int wl_affinity(struct sched_workload *w, struct sm_meta *mt, const char *text)
{
    if (!text[0])
        return DB_OK;
    mt->affinity_doc = json_loads(text, 0, NULL);
    return wl_affinity_terms(w, mt);
}

/* Fills entry (w, mt) from a row; DB_EINVAL if its project is unknown.
 * On failure the entry is left empty. */
static int wl_set(const struct sched_model *m, struct sched_workload *w, struct sm_meta *mt,
                  const struct db_sched_wl *r)
{
    const char *pools;
    int k, q = sm_queue_index(m, r->project_seq);

    memset(w, 0, sizeof(*w));
    memset(mt, 0, sizeof(*mt));
    if (q < 0)
        return DB_EINVAL;
    mt->strs = pack_strings(r);
    w->pods = calloc((size_t)r->n_pods, sizeof(*w->pods));
    if (!mt->strs || !w->pods)
        goto out_free;
    pools = strs_pools(mt);
    if (wl_pools(m, w, pools) != DB_OK)
        goto out_free;
    mt->seq = r->seq;
    mt->version = r->version;
    mt->project_seq = r->project_seq;
    mt->reason = sm_reason_code(r->phase_reason);
    mt->msg_hash = sm_hash(r->phase_message);
    mt->said.reason = -1; /* render the message once to compare with the disk */
    w->name = mt->strs;
    if (wl_node_types(w, mt, (char *)pools + strlen(pools) + 1) != DB_OK ||
        wl_affinity(w, mt, r->affinity) != DB_OK || wl_topology(w, mt, r->topology) != DB_OK)
        goto out_free;
    w->queue = q;
    w->type = r->type;
    w->priority = r->priority;
    w->preemptible = r->preemptible;
    /* Initializing is placed, so Running to the core (db_agent.h) */
    w->phase = strcmp(r->phase, "Pending") == 0 ? SCHED_PENDING : SCHED_RUNNING;
    mt->initializing = strcmp(r->phase, "Initializing") == 0;
    w->n_pods = r->n_pods;
    w->min_pods = r->min_pods;
    w->gpu_devices = r->gpu_devices;
    w->gpu_portion = r->gpu_portion;
    w->cpu_milli = r->cpu_milli;
    w->mem_mib = r->mem_mib;
    w->gpu_memory_mib = r->gpu_memory_mib;
    w->queued_seq = r->queued_seq;
    w->started_ms = r->started_ms ? r->started_ms : SCHED_NO_TIME;
    w->stale_since_ms = r->stale_since_ms ? r->stale_since_ms : SCHED_NO_TIME;
    for (k = 0; k < r->n_pods; k++) {
        w->pods[k].node = r->pods[k].node_seq ? node_index(m->topo, r->pods[k].node_seq) : -1;
        w->pods[k].devices = w->pods[k].node >= 0 ? r->pods[k].devices : 0;
    }
    return DB_OK;
out_free:
    wl_free(w, mt);
    return DB_ENOMEM;
}

static int grow(struct sched_model *m, int need)
{
    int cap = m->cap ? m->cap : 1024;
    void *a, *b;

    if (need <= m->cap)
        return DB_OK;
    while (cap < need)
        cap *= 2;
    a = realloc(m->wls, sizeof(*m->wls) * (size_t)cap);
    if (a)
        m->wls = a;
    b = realloc(m->meta, sizeof(*m->meta) * (size_t)cap);
    if (b)
        m->meta = b;
    if (!a || !b)
        return DB_ENOMEM;
    m->cap = cap;
    return DB_OK;
}

/* Drops the entries whose seq is 0 (freed), keeping the order; counts
 * the ones left in place. */
static void compact(struct sched_model *m)
{
    int i, o = 0;

    m->n_left = 0;
    for (i = 0; i < m->n; i++) {
        if (m->meta[i].seq == 0)
            continue;
        if (o != i) {
            m->wls[o] = m->wls[i];
            m->meta[o] = m->meta[i];
        }
        m->n_left += m->meta[o].left;
        o++;
    }
    m->n = o;
}

void sm_drop_left(struct sched_model *m)
{
    int i;

    if (m->n_left == 0)
        return;   /* no entry to drop, and no hole: every take compacts its own */
    for (i = 0; m->n_left > 0 && i < m->n; i++)
        if (m->meta[i].left)
            wl_free(&m->wls[i], &m->meta[i]);
    compact(m);
}

/* A workload that is no longer live stays in place as the core's
 * departure (sched.h, struct sched_delta): a SCHED_COMPLETED workload
 * whose pods are taken off their nodes (the API freed them in the
 * database) and without stale time. */
static int leave_in_place(struct sched_model *m, int at)
{
    struct sched_workload *w = &m->wls[at];
    int k;

    if (!m->keep_left)
        return 0;
    for (k = 0; k < w->n_pods; k++) {
        w->pods[k].node = -1;
        w->pods[k].devices = 0;
    }
    w->phase = SCHED_COMPLETED;
    w->stale_since_ms = SCHED_NO_TIME;
    m->n_left += !m->meta[at].left;
    m->meta[at].left = 1;
    return 1;
}

static int find_wl(const struct sched_model *m, int64_t seq)
{
    return find_seq(m->meta, m->n, sizeof(m->meta[0]), seq);
}

int sm_workload_index(const struct sched_model *m, int64_t seq)
{
    return find_wl(m, seq);
}

/* Merges n_add new entries (ordered by seq, none in the model) into the
 * model, whose capacity must already hold them. */
static void merge_in(struct sched_model *m, const struct sched_workload *aw,
                     const struct sm_meta *am, int n_add)
{
    int i = m->n - 1, j = n_add - 1, o = m->n + n_add - 1;

    for (; j >= 0; o--) {
        if (i >= 0 && m->meta[i].seq > am[j].seq) {
            m->wls[o] = m->wls[i];
            m->meta[o] = m->meta[i];
            i--;
        } else {
            m->wls[o] = aw[j];
            m->meta[o] = am[j];
            j--;
        }
    }
    m->n += n_add;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

void sm_built_free(struct sm_built *b)
{
    int i;

    for (i = 0; b->aw && i < b->n_add; i++)
        wl_free(&b->aw[i], &b->am[i]);
    for (i = 0; b->staged_wls && i < b->n_staged; i++)   /* staged, never taken */
        wl_free(&b->staged_wls[b->stage_at + i], &b->staged_meta[b->stage_at + i]);
    free(b->aw);
    free(b->am);
    free(b->where);
    free(b->row_of);
    free(b->wls);
    free(b->meta);
    sched_mix_window_free(b->mix);
    memset(b, 0, sizeof(*b));
}

/* b->mix: the model's window with b's new entries noted, in take's order
 * (none on failure: sm_rows_take() then notes them itself). */
static void note_aside(const struct sched_model *m, struct sm_built *b)
{
    int i, rc = SCHED_OK;

    if (!m->mix || (b->n_add == 0 && b->n_staged == 0) ||
        !(b->mix = sched_mix_window_copy(m->mix)))
        return;
    for (i = 0; i < b->n_add && rc == SCHED_OK; i++)
        rc = sched_mix_window_note(b->mix, &b->aw[i]);
    for (i = 0; i < b->n_staged && rc == SCHED_OK; i++)
        rc = sched_mix_window_note(b->mix, &b->staged_wls[b->stage_at + i]);
    if (rc != SCHED_OK) {
        sched_mix_window_free(b->mix);
        b->mix = NULL;
        return;
    }
    b->mix_of = m->mix;
}

/* Room for b's new entries, when the model's arrays lack it: larger ones
 * with the model's entries copied in (none on failure: sm_rows_take then
 * grows the arrays itself). */
static void room_aside(const struct sched_model *m, struct sm_built *b)
{
    int cap = m->cap ? m->cap : 1024;

    if (m->n + b->n_add <= m->cap)
        return;
    while (cap < m->n + b->n_add)
        cap *= 2;
    b->wls = malloc(sizeof(*b->wls) * (size_t)cap);
    b->meta = malloc(sizeof(*b->meta) * (size_t)cap);
    if (!b->wls || !b->meta) {
        free(b->wls);
        free(b->meta);
        b->wls = NULL;
        b->meta = NULL;
        return;
    }
    if (m->n > 0) {
        memcpy(b->wls, m->wls, sizeof(*b->wls) * (size_t)m->n);
        memcpy(b->meta, m->meta, sizeof(*b->meta) * (size_t)m->n);
    }
    b->cap = cap;
    b->copied = m->wls;
    b->n_copied = m->n;
}

/* Moves b's new entries whose seqs follow the model's last one (new
 * submissions do; one touched out of order may come a turn late) into
 * the arrays the model will have: the aside arrays, or the model's own
 * past its length (readers copy only up to it), after room for the
 * earlier ones, which stay in b for merge_in(). The model's entries and
 * length stay as they were. */
static void stage_appends(const struct sched_model *m, struct sm_built *b)
{
    int64_t last = m->n > 0 ? m->meta[m->n - 1].seq : INT64_MIN;
    int i, early = 0, base = b->wls ? b->n_copied : m->n;

    for (i = 1; i < b->n_add; i++)
        if (b->am[i].seq <= b->am[i - 1].seq)
            return;
    while (early < b->n_add && b->am[early].seq <= last)
        early++;
    if (early == b->n_add)
        return;
    if (b->wls) {
        b->staged_wls = b->wls;
        b->staged_meta = b->meta;
    } else if (m->n + b->n_add <= m->cap) {
        b->staged_wls = m->wls;
        b->staged_meta = m->meta;
    } else {
        return;
    }
    b->stage_at = base + early;
    b->n_staged = b->n_add - early;
    memcpy(&b->staged_wls[b->stage_at], &b->aw[early], sizeof(*b->aw) * (size_t)b->n_staged);
    memcpy(&b->staged_meta[b->stage_at], &b->am[early], sizeof(*b->am) * (size_t)b->n_staged);
    b->n_add = early;   /* the staged ones are owned by the staged arrays now */
}

/* Reads the model, changes nothing: where each seq is, which row is its,
 * and the entries of the workloads the model does not hold yet. */
int sm_rows_build(const struct sched_model *m, const int64_t *seqs, int n,
                  const struct db_snapshot *rows, struct sm_built *b)
{
    int i, r = 0, rc = DB_OK;

    memset(b, 0, sizeof(*b));
    b->rows = rows;
    b->n = n;
    b->aw = calloc((size_t)rows->n_workloads + 1, sizeof(*b->aw));
    b->am = calloc((size_t)rows->n_workloads + 1, sizeof(*b->am));
    b->where = malloc(sizeof(int) * ((size_t)n + 1));
    b->row_of = malloc(sizeof(int) * ((size_t)n + 1));
    if (!b->aw || !b->am || !b->where || !b->row_of) {
        sm_built_free(b);
        return DB_ENOMEM;
    }
    for (i = 0; i < n && rc != DB_ENOMEM; i++) {
        b->row_of[i] = r < rows->n_workloads && rows->workloads[r].seq == seqs[i] ? r++ : -1;
        b->where[i] = find_wl(m, seqs[i]);
        if (b->where[i] >= 0 || b->row_of[i] < 0)
            continue;
        rc = wl_set(m, &b->aw[b->n_add], &b->am[b->n_add], &rows->workloads[b->row_of[i]]);
        if (rc == DB_OK)
            b->n_add++;
    }
    if (rc == DB_ENOMEM) {
        sm_built_free(b);
    } else {
        room_aside(m, b);
        stage_appends(m, b);
        note_aside(m, b);
    }
    return rc == DB_ENOMEM ? rc : DB_OK;
}

/* The earlier new entries merged in, then the staged ones past them join
 * the model by its length (moved down only when entries were dropped
 * before them). */
static void take_staged(struct sched_model *m, struct sm_built *b, int dropped)
{
    if (dropped)
        compact(m);
    merge_in(m, b->aw, b->am, b->n_add);
    b->n_add = 0;
    if (m->n < b->stage_at) {
        memmove(&m->wls[m->n], &m->wls[b->stage_at], sizeof(*m->wls) * (size_t)b->n_staged);
        memmove(&m->meta[m->n], &m->meta[b->stage_at], sizeof(*m->meta) * (size_t)b->n_staged);
    }
    m->n += b->n_staged;
    b->staged_wls = NULL;   /* the model owns them now */
    b->staged_meta = NULL;
    b->n_staged = 0;
}

/* Takes b in (emptied either way, but for the arrays the model's were
 * replaced by, which sm_built_free() frees after the lock): rows of
 * workloads the model holds replace them in place, the entries built
 * aside are merged in; workloads without a row are dropped, or left in
 * place (keep_left). */
int sm_rows_take(struct sched_model *m, struct sm_built *b)
{
    struct sched_workload *old_wls;
    struct sm_meta *old_meta;
    struct sched_mix_window *old_mix;
    int i, at, dropped = 0, rc = DB_OK;

    /* the arrays made aside, if the model is still what they copied: only
     * the scheduler thread changes it, so it is unless a reload came */
    if (b->wls && b->copied == m->wls && b->n_copied == m->n) {
        old_wls = m->wls;
        old_meta = m->meta;
        m->wls = b->wls;
        m->meta = b->meta;
        m->cap = b->cap;
        b->wls = old_wls;
        b->meta = old_meta;
    }

    for (i = 0; i < b->n && rc != DB_ENOMEM; i++) {
        struct sched_workload nw;
        struct sm_meta nm;
        at = b->where[i];
        if (at < 0 || (b->row_of[i] < 0 && leave_in_place(m, at)))
            continue;
        if (b->row_of[i] >= 0) {   /* read again: replaced in place (Invariant 7) */
            rc = wl_set(m, &nw, &nm, &b->rows->workloads[b->row_of[i]]);
            if (rc == DB_OK) {
                nm.reread_changed = m->meta[at].reread_changed || m->meta[at].left ||
                                    !sched_workload_same(&m->wls[at], &nw);
                wl_free(&m->wls[at], &m->meta[at]);
                m->wls[at] = nw;
                m->meta[at] = nm;
                continue;
            }
        }
        wl_free(&m->wls[at], &m->meta[at]); /* seq 0: dropped */
        dropped = 1;
    }
    /* a workload seen for the first time: a new request, noted aside
     * before the lock, or here */
    if (b->mix && b->mix_of == m->mix) {
        struct sched_mix_window *noted = b->mix;
        b->mix = m->mix;   /* the window replaced: freed after the lock */
        m->mix = noted;
    } else {
        for (i = 0; i < b->n_add && rc != DB_ENOMEM; i++)
            if (sched_mix_window_note(m->mix, &b->aw[i]) != SCHED_OK)
                rc = DB_ENOMEM;
        for (i = 0; i < b->n_staged && rc != DB_ENOMEM; i++)
            if (sched_mix_window_note(m->mix, &b->staged_wls[b->stage_at + i]) != SCHED_OK)
                rc = DB_ENOMEM;
    }
    if (b->n_staged > 0 && b->staged_wls == m->wls && b->stage_at == m->n + b->n_add) {
        take_staged(m, b, dropped);
    } else if (b->n_staged > 0 && b->staged_wls == m->wls) {
        /* the model changed between build and take (Invariant 6 says it
         * cannot): its entries may sit where these were staged */
        b->staged_wls = NULL;
        b->n_staged = 0;
        rc = DB_EIO;
    } else {
        if (dropped)
            compact(m);
        if (rc != DB_ENOMEM && grow(m, m->n + b->n_add + b->n_staged) != DB_OK)
            rc = DB_ENOMEM;
        if (rc != DB_ENOMEM) {
            merge_in(m, b->aw, b->am, b->n_add);
            if (b->n_staged > 0)   /* staged aside, the aside arrays not taken */
                merge_in(m, &b->staged_wls[b->stage_at], &b->staged_meta[b->stage_at],
                         b->n_staged);
            b->n_add = 0;   /* the model owns them now */
            b->n_staged = 0;
            rc = DB_OK;
        }
    }
    old_wls = b->wls;   /* the arrays replaced (or unused): freed after the lock */
    old_meta = b->meta;
    old_mix = b->mix;   /* so is the window replaced */
    b->wls = NULL;
    b->meta = NULL;
    b->mix = NULL;
    sm_built_free(b);
    b->wls = old_wls;
    b->meta = old_meta;
    b->mix = old_mix;
    return rc;
}

int sm_apply_rows(struct sched_model *m, const int64_t *seqs, int n,
                  const struct db_snapshot *rows)
{
    struct sm_built b;
    int rc = sm_rows_build(m, seqs, n, rows, &b);

    if (rc == DB_OK)
        rc = sm_rows_take(m, &b);
    sm_built_free(&b);
    return rc;
}

int sm_refresh(struct sched_model *m, struct db *db, int64_t *seqs, int n)
{
    struct db_snapshot *rows = NULL;
    int i, u = 0, rc;

    if (n == 0)
        return DB_OK;
    qsort(seqs, (size_t)n, sizeof(*seqs), cmp_i64);
    for (i = 0; i < n; i++)
        if (u == 0 || seqs[u - 1] != seqs[i])
            seqs[u++] = seqs[i];
    rc = db_workloads_load(db, seqs, u, &rows);
    if (rc == DB_OK)
        rc = sm_apply_rows(m, seqs, u, rows);
    db_snapshot_free(rows);
    return rc;
}

/* Re-resolves every workload against a new topology; old is the previous
 * one (for the pods' node seqs). */
static void remap(struct sched_model *m, const struct db_snapshot *old)
{
    int i, k, dropped = 0;

    for (i = 0; i < m->n; i++) {
        struct sched_workload *w = &m->wls[i];
        struct sm_meta *mt = &m->meta[i];
        w->queue = sm_queue_index(m, mt->project_seq);
        if (w->queue < 0 || wl_pools(m, w, strs_pools(mt)) != DB_OK) {
            wl_free(w, mt);
            dropped = 1;
            continue;
        }
        for (k = 0; k < w->n_pods; k++) {
            if (w->pods[k].node < 0)
                continue;
            w->pods[k].node = node_index(m->topo, old->nodes[w->pods[k].node].seq);
            if (w->pods[k].node < 0)
                w->pods[k].devices = 0;
        }
    }
    if (dropped)
        compact(m);
}

int sm_set_names(struct sched_model *m, struct db_snapshot *topo)
{
    memset(m, 0, sizeof(*m));
    m->topo = topo;
    if (topo_names(m) != DB_OK) {
        topo_free(m);
        return DB_ENOMEM;
    }
    return DB_OK;
}

int sm_set_topology(struct sched_model *m, struct db_snapshot *topo)
{
    struct sched_model next;
    struct db_snapshot *old;
    int rc;

    memset(&next, 0, sizeof(next));
    next.topo = topo;
    rc = topo_build(&next);
    if (rc != DB_OK) {
        topo_free(&next);
        return rc;
    }
    old = m->topo;
    m->topo = NULL;
    topo_free(m);
    m->topo = next.topo;
    m->pools = next.pools;
    m->nodes = next.nodes;
    m->queues = next.queues;
    m->quotas = next.quotas;
    m->queue_pools = next.queue_pools;
    m->queue_ranks = next.queue_ranks;
    m->labels = next.labels;
    m->label_docs = next.label_docs;
    m->pool_topo_docs = next.pool_topo_docs;
    m->pool_levels = next.pool_levels;
    m->n_pools = next.n_pools;
    m->n_nodes = next.n_nodes;
    m->n_queues = next.n_queues;
    if (old)
        remap(m, old);
    db_snapshot_free(old);
    return DB_OK;
}

int sm_load_topology(struct sched_model *m, struct db *db)
{
    struct db_snapshot *topo = NULL;
    int rc = db_topology_load(db, &topo);

    return rc == DB_OK ? sm_set_topology(m, topo) : rc;
}

struct seq_at {
    int64_t seq;
    int at;
};

static int cmp_seq_at(const void *a, const void *b)
{
    int64_t x = ((const struct seq_at *)a)->seq, y = ((const struct seq_at *)b)->seq;

    return (x > y) - (x < y);
}

/* The indices of rows' workloads in seq order (the snapshot orders them by
 * queue position; the model by seq). */
static int *seq_order(const struct db_snapshot *rows)
{
    struct seq_at *k = malloc(sizeof(*k) * ((size_t)rows->n_workloads + 1));
    int *order = malloc(sizeof(int) * ((size_t)rows->n_workloads + 1));
    int i;

    if (!k || !order) {
        free(k);
        free(order);
        return NULL;
    }
    for (i = 0; i < rows->n_workloads; i++) {
        k[i].seq = rows->workloads[i].seq;
        k[i].at = i;
    }
    qsort(k, (size_t)rows->n_workloads, sizeof(*k), cmp_seq_at);
    for (i = 0; i < rows->n_workloads; i++)
        order[i] = k[i].at;
    free(k);
    return order;
}

int sm_build(struct sched_model *m, const struct db_snapshot *rows)
{
    struct db_snapshot *topo = NULL;
    int *order = NULL;
    int i, rc;

    sm_free(m);
    rc = db_snapshot_copy_topology(rows, NULL, 0, &topo);
    if (rc != DB_OK)
        return rc;
    m->topo = topo;
    m->mix = sched_mix_window_new(SCHED_MIX_WINDOW);
    rc = m->mix ? topo_build(m) : DB_ENOMEM;
    if (rc == DB_OK)
        rc = grow(m, rows->n_workloads);
    if (rc == DB_OK && !(order = seq_order(rows)))
        rc = DB_ENOMEM;
    for (i = 0; rc == DB_OK && i < rows->n_workloads; i++) {
        rc = wl_set(m, &m->wls[m->n], &m->meta[m->n], &rows->workloads[order[i]]);
        if (rc == DB_OK && sched_mix_window_note(m->mix, &m->wls[m->n++]) != SCHED_OK)
            rc = DB_ENOMEM;
        else if (rc == DB_EINVAL)
            rc = DB_OK;
    }
    free(order);
    if (rc != DB_OK)
        sm_free(m);
    return rc;
}

int sm_load(struct sched_model *m, struct db *db)
{
    struct db_snapshot *all = NULL;
    int rc;

    sm_free(m);
    rc = db_snapshot_load(db, &all);
    if (rc == DB_OK)
        rc = sm_build(m, all);
    db_snapshot_free(all);
    return rc;
}

/* ---- copies ---- */

/* Entry (w, mt) into the empty entry (cw, cmt), with blocks of its own:
 * the strings (whose node types point into them), pods, pool list and
 * affinity. On failure the copy is left empty. */
static int wl_copy(const struct sched_workload *w, const struct sm_meta *mt,
                   struct sched_workload *cw, struct sm_meta *cmt)
{
    size_t len = strlen(mt->strs) + 1 + strlen(strs_pools(mt)) + 1, types = 1;
    int k;

    *cw = *w;
    *cmt = *mt;
    cw->pods = NULL;
    cw->pools = NULL;
    cw->node_types = NULL;
    cw->affinity = NULL;
    cw->n_affinity = 0;
    cmt->strs = NULL;
    cmt->node_types = NULL;
    cmt->affinity_doc = NULL;
    cmt->topology_doc = NULL;
    cw->topology_required = cw->topology_preferred = NULL;
    cmt->terms = NULL;
    cmt->matches = NULL;
    cmt->values = NULL;
    /* node types were split in place: as long as the list they came from */
    if (w->n_node_types > 0)
        for (types = 0, k = 0; k < w->n_node_types; k++)
            types += strlen(mt->node_types[k]) + 1;
    cmt->strs = malloc(len + types);
    cw->pods = malloc(sizeof(*cw->pods) * (size_t)w->n_pods);
    cw->pools = w->n_pools ? malloc(sizeof(int) * (size_t)w->n_pools) : NULL;
    cmt->node_types = w->n_node_types ? calloc((size_t)w->n_node_types, sizeof(char *)) : NULL;
    if (!cmt->strs || !cw->pods || (w->n_pools && !cw->pools) ||
        (w->n_node_types && !cmt->node_types))
        goto out_free;
    memcpy(cmt->strs, mt->strs, len + types);
    memcpy(cw->pods, w->pods, sizeof(*cw->pods) * (size_t)w->n_pods);
    if (w->n_pools)
        memcpy((int *)cw->pools, w->pools, sizeof(int) * (size_t)w->n_pools);
    for (k = 0; k < w->n_node_types; k++)
        cmt->node_types[k] = cmt->strs + (mt->node_types[k] - mt->strs);
    cw->name = cmt->strs;
    cw->node_types = cmt->node_types;
    if (mt->affinity_doc) {
        cmt->affinity_doc = json_deep_copy(mt->affinity_doc);
        if (!cmt->affinity_doc || wl_affinity_terms(cw, cmt) != DB_OK)
            goto out_free;
    }
    if (mt->topology_doc) {
        char *text = json_dumps(mt->topology_doc, JSON_COMPACT);
        int rc = text ? wl_topology(cw, cmt, text) : DB_ENOMEM;
        free(text);
        if (rc != DB_OK)
            goto out_free;
    }
    return DB_OK;
out_free:
    wl_free(cw, cmt);
    return DB_ENOMEM;
}

int sm_clone(const struct sched_model *src, struct sched_model *dst)
{
    int i, rc;

    memset(dst, 0, sizeof(*dst));
    if (!src->topo)
        return DB_OK;
    dst->topo = db_snapshot_share(src->topo);   /* Invariant 3 */
    rc = topo_build(dst);
    if (rc == DB_OK && src->mix && !(dst->mix = sched_mix_window_copy(src->mix)))
        rc = DB_ENOMEM;
    if (rc == DB_OK)
        rc = grow(dst, src->n);
    for (i = 0; rc == DB_OK && i < src->n; i++) {
        if (src->meta[i].left)
            continue;
        rc = wl_copy(&src->wls[i], &src->meta[i], &dst->wls[dst->n], &dst->meta[dst->n]);
        if (rc == DB_OK)
            dst->n++;
    }
    if (rc == DB_OK && src->n_usage > 0) {
        dst->usage = malloc(sizeof(*dst->usage) * (size_t)src->n_usage);
        if (dst->usage) {
            memcpy(dst->usage, src->usage, sizeof(*dst->usage) * (size_t)src->n_usage);
            dst->n_usage = src->n_usage;
        } else {
            rc = DB_ENOMEM;
        }
    }
    if (rc != DB_OK)
        sm_free(dst);
    return rc;
}

void sm_state(const struct sched_model *m, int64_t now_ms, struct sched_state *out)
{
    memset(out, 0, sizeof(*out));
    out->now_ms = now_ms;
    out->pools = m->pools;
    out->n_pools = m->n_pools;
    out->nodes = m->nodes;
    out->n_nodes = m->n_nodes;
    out->queues = m->queues;
    out->n_queues = m->n_queues;
    out->workloads = m->wls;
    out->n_workloads = m->n;
    out->usage = m->usage;
    out->n_usage = m->n_usage;
    out->n_mix = m->mix ? sched_mix_window_get(m->mix, &out->mix) : 0;
}

void sm_free(struct sched_model *m)
{
    int i;

    for (i = 0; i < m->n; i++)
        wl_free(&m->wls[i], &m->meta[i]);
    free(m->wls);
    free(m->meta);
    free(m->usage);
    sched_mix_window_free(m->mix);
    topo_free(m);
    memset(m, 0, sizeof(*m));
}
