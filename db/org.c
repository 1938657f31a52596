/*
 * org.c: node pools, nodes, and the queue tree (departments and projects
 * with their quotas per node pool), plus what a queue holds and asks.
 *
 * Invariants:
 *   1. Names are unique per kind (pools, nodes, departments, projects).
 *   2. A project's parent is a department; departments have no parent.
 *   3. A queue's quotas are replaced as a whole (db_queue_update), in one
 *      savepoint, so a reader never sees half of an update.
 *   4. A queue with children, live workloads or workloads still being
 *      deleted cannot be deleted; its deleted workloads go with it.
 */
#include "db_int.h"
#include "db_ha.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- node pools ---- */

const char *const db_placement_words[DB_N_PLACEMENTS] = {"binpack", "spread", "fragmentation"};

#define POOL_COLS "seq, name, label_key, label_value, gpu_placement, cpu_placement," \
                  " min_runtime_ms, created_at, updated_at, created_by, tbf_enabled," \
                  " tbf_window_ms, tbf_half_life_ms, tbf_k_milli, updated_by, topology_id," \
                  " topology_levels"

/* A pool's row: POOL_COLS, in order. An insert names every column but
 * the first (seq); updated_by starts as created_by (db_pool_insert). */
DB__TABLE(pool_cols, pool_shape, struct db_pool, NULL, seq, name, label_key, label_value,
          gpu_placement, cpu_placement, min_runtime_ms, created_at, updated_at, created_by,
          tbf_enabled, tbf_window_ms, tbf_half_life_ms, tbf_k_milli, updated_by, topology_id,
          topology_levels);

/* What an admin changes of a pool, in pool_update_fn's order. */
static const struct db__col pool_update_cols[] = {
    DB__COLS(struct db_pool, label_key, label_value, gpu_placement, cpu_placement, min_runtime_ms,
        tbf_enabled, tbf_window_ms, tbf_half_life_ms, tbf_k_milli, updated_at, updated_by,
        topology_id, topology_levels, seq),
};

/* A pool's label takes, at once, the nodes of the default pool that carry
 * it and whose pool nobody named (an agent's --pool, a simulated node's
 * pool): the same rule an agent's registration follows, applied to the
 * nodes that are there already. Sets *moved to their number. */
static int pool_take_labelled(struct db__conn *c, const struct db_pool *p, int *moved)
{
    static const char sql[] =
        "UPDATE nodes SET pool_seq = ?1, updated_at = ?4 WHERE pool_pinned = 0"
        " AND pool_seq = (SELECT seq FROM node_pools WHERE name = 'default') AND pool_seq != ?1"
        " AND EXISTS (SELECT 1 FROM json_each(nodes.labels) WHERE key = ?2 AND value = ?3)";
    const struct db__arg args[] = {DB__I(p->seq), DB__S(p->label_key), DB__S(p->label_value),
                                   DB__I(p->updated_at)};
    int rc;

    *moved = 0;
    if (!p->label_key[0])
        return DB_OK;
    rc = db__exec_args(c, sql, args, DB__NARGS(args));
    if (rc == DB_OK)
        *moved = db__changes(c);
    return rc;
}

static int pool_insert_fn(struct db__conn *c, void *arg)
{
    static const char sql[] =
        "INSERT INTO node_pools (name, label_key, label_value, gpu_placement, cpu_placement,"
        " min_runtime_ms, created_at, updated_at, created_by, tbf_enabled, tbf_window_ms,"
        " tbf_half_life_ms, tbf_k_milli, updated_by, topology_id, topology_levels)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
    struct db_pool *p = arg;
    int rc = db__insert_cols(c, sql, pool_cols + 1, DB__NCOLS(pool_cols) - 1, p, &p->seq);

    if (rc == DB_OK)
        rc = pool_take_labelled(c, p, &p->nodes_taken);
    return rc;
}

int db_pool_insert(struct db *db, struct db_pool *p)
{
    p->created_at = p->updated_at = db__now_ms();
    if (p->tbf_window_ms <= 0)
        p->tbf_window_ms = 7LL * 24 * 3600 * 1000;
    if (p->tbf_k_milli <= 0)
        p->tbf_k_milli = 1000;
    snprintf(p->updated_by, sizeof(p->updated_by), "%s", p->created_by);
    return db__write_noted(db, DB_CHANGE_ORG, pool_insert_fn, p);
}

static int pool_update_fn(struct db__conn *c, void *arg)
{
    static const char sql[] =
        "UPDATE node_pools SET label_key = ?, label_value = ?, gpu_placement = ?,"
        " cpu_placement = ?, min_runtime_ms = ?, tbf_enabled = ?, tbf_window_ms = ?,"
        " tbf_half_life_ms = ?, tbf_k_milli = ?, updated_at = ?, updated_by = ?,"
        " topology_id = ?, topology_levels = ? WHERE seq = ?";
    struct db_pool *p = arg;
    int rc = db__exec_cols(c, sql, pool_update_cols, DB__NCOLS(pool_update_cols), p);

    if (rc == DB_OK && db__changes(c) == 0)
        rc = DB_ENOTFOUND;
    if (rc == DB_OK)
        rc = pool_take_labelled(c, p, &p->nodes_taken);
    return rc;
}

int db_pool_update(struct db *db, struct db_pool *p)
{
    p->updated_at = db__now_ms();
    return db__write_noted(db, DB_CHANGE_ORG, pool_update_fn, p);
}

/* DB_ECONFLICT if the count sql gives for key (?1) is not 0: something
 * still uses what is to be deleted. */
static int in_use(struct db__conn *c, const char *sql, int64_t key)
{
    int64_t n = 0;
    int rc = db__int_of(c, sql, key, &n);

    return rc == DB_OK && n > 0 ? DB_ECONFLICT : rc;
}

static int pool_delete_fn(struct db__conn *c, void *arg)
{
    static const char busy[] = "SELECT count(*) FROM nodes WHERE pool_seq = ?";
    static const char quotas[] = "DELETE FROM queue_quotas WHERE pool_seq = ?";
    static const char samples[] = "DELETE FROM samples WHERE pool_seq = ?";
    static const char del[] = "DELETE FROM node_pools WHERE seq = ?";
    static const char *const steps[] = {quotas, samples, del};
    const int64_t *seq = arg;
    int rc = in_use(c, busy, *seq), i;

    for (i = 0; rc == DB_OK && i < 3; i++) {
        rc = db__run_key(c, steps[i], *seq);
        if (rc == DB_OK && i == 2 && db__changes(c) == 0)
            rc = DB_ENOTFOUND;
    }
    return rc;
}

int db_pool_delete(struct db *db, int64_t seq)
{
    return db__write_noted(db, DB_CHANGE_ORG, pool_delete_fn, &seq);
}

struct get_arg {
    int64_t seq;
    const char *text;
    int kind;
    void *one;
    void *list;
    int *n;
};

static const char pool_by_seq[] = "SELECT " POOL_COLS " FROM node_pools WHERE seq = ?";
static const char pool_by_name[] = "SELECT " POOL_COLS " FROM node_pools WHERE name = ?";

int db_pool_get(struct db *db, int64_t seq, struct db_pool *out)
{
    return db__read_row(db, pool_by_seq, (struct db__key){.i = seq}, &pool_shape, out);
}

int db_pool_by_name(struct db *db, const char *name, struct db_pool *out)
{
    return db__read_row(db, pool_by_name, (struct db__key){.text = name}, &pool_shape, out);
}

/* Reads every pool, oldest first, into a malloc'd array. */
int db__pools(struct db__conn *c, struct db_pool **out, int *n)
{
    static const char sql[] = "SELECT " POOL_COLS " FROM node_pools ORDER BY seq";

    return db__rows_of(c, sql, &pool_shape, out, n);
}

static int pool_list_fn(struct db__conn *c, void *arg)
{
    struct get_arg *a = arg;

    return db__pools(c, a->list, a->n);
}

int db_pool_list(struct db *db, struct db_pool **out, int *n)
{
    struct get_arg a = {.list = out, .n = n};

    return db__read_list(db, pool_list_fn, &a, out, n);
}

/* ---- nodes ---- */

#define NODE_COLS "n.seq, n.id, n.name, n.pool_seq, n.n_gpus, n.gpu_type, n.cpu_milli," \
                  " n.mem_mib, n.ready, n.simulated, n.created_at, n.updated_at, n.node_type," \
                  " n.labels, n.gpu_memory_mib, n.address, n.pool_pinned, p.name"

/* A node's row: NODE_COLS and the GPU bound on it. An upsert names the
 * columns from the second (id) to pool_pinned. */
DB__TABLE(node_cols, node_shape, struct db_node, NULL, seq, id, name, pool_seq, n_gpus, gpu_type,
          cpu_milli, mem_mib, ready, simulated, created_at, updated_at, node_type, labels,
          gpu_memory_mib, address, pool_pinned, pool_name, alloc_gpu_milli);
#define NODE_UPSERT_COLS 16 /* id .. pool_pinned */
/* A node's key: seq, id. */
static const struct db__shape node_key_shape = {node_cols, 2, sizeof(struct db_node), NULL};

static int node_upsert_fn(struct db__conn *c, void *arg)
{
    static const char sql[] =
        "INSERT INTO nodes (id, name, pool_seq, n_gpus, gpu_type, cpu_milli, mem_mib, ready,"
        " simulated, created_at, updated_at, node_type, labels, gpu_memory_mib, address,"
        " pool_pinned) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
        " ON CONFLICT (name) DO UPDATE SET pool_seq = excluded.pool_seq,"
        " n_gpus = excluded.n_gpus, gpu_type = excluded.gpu_type,"
        " cpu_milli = excluded.cpu_milli, mem_mib = excluded.mem_mib,"
        " ready = excluded.ready, simulated = excluded.simulated,"
        " updated_at = excluded.updated_at, node_type = excluded.node_type,"
        " labels = excluded.labels, gpu_memory_mib = excluded.gpu_memory_mib,"
        " address = excluded.address, pool_pinned = excluded.pool_pinned";
    struct db_node *n = arg, row = *n;
    int rc;

    if (!row.labels[0])
        snprintf(row.labels, sizeof(row.labels), "{}");
    rc = db__exec_cols(c, sql, node_cols + 1, NODE_UPSERT_COLS, &row);
    return rc == DB_OK ? db__node_key(c, n->name, &n->seq, n->id) : rc;
}

int db__node_key(struct db__conn *c, const char *name, int64_t *seq, char id[DB_ID_LEN])
{
    static const char sql[] = "SELECT seq, id FROM nodes WHERE name = ?";
    const struct db__arg args[] = {DB__S(name)};
    struct db_node key;
    int rc = db__query_row(c, sql, args, DB__NARGS(args), &node_key_shape, &key);

    if (rc == DB_OK) {
        *seq = key.seq;
        memcpy(id, key.id, DB_ID_LEN);
    }
    return rc;
}

struct upsert_many {
    struct db_node *nodes;
    int n;
};

static int node_upsert_many_fn(struct db__conn *c, void *arg)
{
    struct upsert_many *a = arg;
    int i, rc = DB_OK;

    for (i = 0; rc == DB_OK && i < a->n; i++)
        rc = node_upsert_fn(c, &a->nodes[i]);
    return rc;
}

int db_node_upsert_many(struct db *db, struct db_node *nodes, int n)
{
    struct upsert_many a = {nodes, n};
    int i;

    for (i = 0; i < n; i++) {
        nodes[i].created_at = nodes[i].updated_at = db__now_ms();
        if (!nodes[i].id[0])
            db__uuid(nodes[i].id);
    }
    return db__write_noted(db, DB_CHANGE_ORG, node_upsert_many_fn, &a);
}

int db_node_upsert(struct db *db, struct db_node *n)
{
    n->created_at = n->updated_at = db__now_ms();
    if (!n->id[0])
        db__uuid(n->id);
    return db__write_noted(db, DB_CHANGE_ORG, node_upsert_fn, n);
}

/* Reads every node, oldest first, into a malloc'd array; with_alloc
 * also sums the GPU bound on each (a join over the pods). */
int db__nodes(struct db__conn *c, int with_alloc, struct db_node **out, int *n)
{
    static const char alloc[] =
        "SELECT " NODE_COLS ", (SELECT coalesce(sum(" DB_POD_GPU_ON("w", "n") "), 0)"
        " FROM pods d JOIN workloads w ON w.seq = d.workload_seq WHERE d.node_seq = n.seq)"
        " FROM nodes n JOIN node_pools p ON p.seq = n.pool_seq ORDER BY n.seq";
    static const char plain[] =
        "SELECT " NODE_COLS ", 0 FROM nodes n JOIN node_pools p ON p.seq = n.pool_seq"
        " ORDER BY n.seq";
    return db__rows_of(c, with_alloc ? alloc : plain, &node_shape, out, n);
}

static int node_list_fn(struct db__conn *c, void *arg)
{
    struct get_arg *a = arg;

    return db__nodes(c, 1, a->list, a->n);
}

int db_node_list(struct db *db, struct db_node **out, int *n)
{
    struct get_arg a = {.list = out, .n = n};

    return db__read_list(db, node_list_fn, &a, out, n);
}

int db_node_get(struct db *db, const char *name, struct db_node *out)
{
    static const char sql[] = "SELECT " NODE_COLS ", 0 FROM nodes n"
                              " JOIN node_pools p ON p.seq = n.pool_seq WHERE n.name = ?";

    return db__read_row(db, sql, (struct db__key){.text = name}, &node_shape, out);
}

int db_pod_places(struct db *db, struct db_pod_place **out, int *n)
{
    static const char sql[] =
        "SELECT d.node_seq, d.devices, " DB_POD_GPU_ON("w", "n") " FROM pods d"
        " JOIN workloads w ON w.seq = d.workload_seq JOIN nodes n ON n.seq = d.node_seq"
        " ORDER BY d.node_seq";
    DB__TABLE(cols, shape, struct db_pod_place, NULL, node_seq, devices, gpu_milli);

    return db__read_rows(db, sql, NULL, &shape, out, n);
}

int db_device_uses(struct db *db, struct db_dev_use **out, int *n)
{
    static const char sql[] =
        "SELECT p.node_seq, g.gpu, max(g.utilization) FROM pod_gpu g JOIN pods p ON p.uid = g.uid"
        " WHERE g.given = 1 AND g.utilization >= 0 GROUP BY p.node_seq, g.gpu";
    DB__TABLE(cols, shape, struct db_dev_use, NULL, node_seq, gpu, utilization);

    return db__read_rows(db, sql, NULL, &shape, out, n);
}

/* ---- queues ---- */

#define QUEUE_COLS "q.seq, q.id, q.kind, q.name, coalesce(q.parent_seq, 0), q.created_at," \
                   " q.updated_at, q.created_by, q.description, q.rank, q.default_pools," \
                   " q.node_types, q.scheduling_rules, coalesce(p.id, ''), coalesce(p.name, '')"

/* A queue's row: QUEUE_COLS. An insert names the columns from the second
 * (id) to scheduling_rules. */
DB__TABLE(queue_cols, queue_shape, struct db_queue, NULL, seq, id, kind, name, parent_seq,
          created_at, updated_at, created_by, description, rank, default_pools, node_types,
          scheduling_rules, parent_id, parent_name);
#define QUEUE_INSERT_COLS 12 /* id .. scheduling_rules */
#define QUEUE_PARENT_PARAM 4 /* parent_seq: NULL for a department */

static void quota_row(struct db__stmt *st, struct db_quota *qt)
{
    int r;

    memset(qt, 0, sizeof(*qt));
    qt->pool_seq = db__col_int64(st, 0);
    db__copy(qt->pool_name, sizeof(qt->pool_name), st, 1);
    for (r = 0; r < 3; r++) {
        qt->has[r] = !db__col_null(st, 2 + 3 * r);
        qt->deserved[r] = qt->has[r] ? db__col_int64(st, 2 + 3 * r) : 0;
        qt->limit[r] = qt->has[r] ? db__col_int64(st, 3 + 3 * r) : -1;
        qt->weight[r] = qt->has[r] ? db__col_int64(st, 4 + 3 * r) : 1000;
    }
    qt->priority = db__col_int(st, 11);
}

static int load_quotas(struct db__conn *c, struct db_queue *q)
{
    static const char sql[] =
        "SELECT t.pool_seq, p.name, gpu_deserved, gpu_limit, gpu_weight, cpu_deserved,"
        " cpu_limit, cpu_weight, mem_deserved, mem_limit, mem_weight, priority"
        " FROM queue_quotas t JOIN node_pools p ON p.seq = t.pool_seq"
        " WHERE t.queue_seq = ? ORDER BY t.pool_seq";
    int rc = DB_OK;
    struct db__stmt *st = db__prep(c, sql, &rc);

    if (!st)
        return rc;
    db__bind_int64(st, 1, q->seq);
    q->n_quotas = 0;
    while ((rc = db__step(st)) == DB__ROW && q->n_quotas < DB_MAX_POOLS)
        quota_row(st, &q->quotas[q->n_quotas++]);
    return db__done(st, rc == DB__DONE || rc == DB__ROW ? DB_OK : DB_EIO);
}

static int save_quotas(struct db__conn *c, const struct db_queue *q)
{
    static const char del[] = "DELETE FROM queue_quotas WHERE queue_seq = ?";
    static const char ins[] =
        "INSERT INTO queue_quotas (queue_seq, pool_seq, gpu_deserved, gpu_limit, gpu_weight,"
        " cpu_deserved, cpu_limit, cpu_weight, mem_deserved, mem_limit, mem_weight, priority)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    int rc = db__run_key(c, del, q->seq), i, r;

    for (i = 0; rc == DB_OK && i < q->n_quotas; i++) {
        const struct db_quota *qt = &q->quotas[i];
        struct db__arg args[12] = {DB__I(q->seq), DB__I(qt->pool_seq)};

        for (r = 0; r < 3; r++) {
            if (r > 0 && !qt->has[r]) {
                args[2 + 3 * r] = args[3 + 3 * r] = args[4 + 3 * r] =
                    (struct db__arg)DB__NULL_ARG;
                continue;
            }
            args[2 + 3 * r] = (struct db__arg)DB__I(qt->deserved[r]);
            args[3 + 3 * r] = (struct db__arg)DB__I(qt->limit[r]);
            args[4 + 3 * r] = (struct db__arg)DB__I(qt->weight[r]);
        }
        args[11] = (struct db__arg)DB__I(qt->priority);
        rc = db__exec_args(c, ins, args, DB__NARGS(args));
    }
    return rc;
}

static int queue_insert_fn(struct db__conn *c, void *arg)
{
    static const char sql[] =
        "INSERT INTO queues (id, kind, name, parent_seq, created_at, updated_at, created_by,"
        " description, rank, default_pools, node_types, scheduling_rules)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    struct db_queue *q = arg;
    int rc = DB_OK;
    struct db__stmt *st = db__prep(c, sql, &rc);

    if (!st)
        return rc;
    db__cols_bind(st, 1, queue_cols + 1, QUEUE_INSERT_COLS, q);
    if (q->parent_seq <= 0)
        db__bind_null(st, QUEUE_PARENT_PARAM);
    rc = db__done(st, db__step_done(st));
    if (rc != DB_OK)
        return rc;
    q->seq = db__last_id(c);
    return save_quotas(c, q);
}

int db_queue_insert(struct db *db, struct db_queue *q)
{
    q->created_at = q->updated_at = db__now_ms();
    db__uuid(q->id);
    return db__write_noted(db, DB_CHANGE_ORG, queue_insert_fn, q);
}

static int queue_update_fn(struct db__conn *c, void *arg)
{
    static const char sql[] =
        "UPDATE queues SET description = ?, rank = ?, default_pools = ?, node_types = ?,"
        " scheduling_rules = ?, updated_at = ? WHERE seq = ?";
    const struct db_queue *q = arg;
    const struct db__arg args[] = {DB__S(q->description), DB__I(q->rank),
                                   DB__S(q->default_pools), DB__S(q->node_types),
                                   DB__S(q->scheduling_rules), DB__I(db__now_ms()),
                                   DB__I(q->seq)};
    int rc = db__exec_args(c, sql, args, DB__NARGS(args));

    if (rc == DB_OK && db__changes(c) == 0)
        rc = DB_ENOTFOUND;
    return rc == DB_OK ? save_quotas(c, q) : rc;
}

int db_queue_update(struct db *db, const struct db_queue *q)
{
    return db__write_noted(db, DB_CHANGE_ORG, queue_update_fn, (void *)q);
}

struct queue_delete_arg {
    int64_t seq;
    int64_t **purged;
    int *n_purged;
};

/* A queue with children, live workloads or workloads still being deleted
 * stays; else its deleted workloads go with it (db__workloads_purge). */
static int queue_delete_fn(struct db__conn *c, void *arg)
{
    static const char busy[] =
        "SELECT (SELECT count(*) FROM queues WHERE parent_seq = ?1)"
        " + (SELECT count(*) FROM workloads WHERE project_seq = ?1"
        "    AND (deleted_at = 0 OR phase = 'Deleting'))";
    static const char del[] = "DELETE FROM queues WHERE seq = ?";
    /* the queue's own policies (policies.c) go with it */
    static const char del_policies[] =
        "DELETE FROM policies WHERE scope IN ('department', 'project')"
        " AND scope_id = (SELECT id FROM queues WHERE seq = ?)";
    struct queue_delete_arg *a = arg;
    int rc = in_use(c, busy, a->seq);

    if (rc == DB_OK)
        rc = db__workloads_purge(c, INT64_MAX, a->seq, a->purged, a->n_purged);
    if (rc == DB_OK)
        rc = db__run_key(c, del_policies, a->seq);
    if (rc == DB_OK)
        rc = db__run_key(c, del, a->seq);
    if (rc == DB_OK && db__changes(c) == 0)
        rc = DB_ENOTFOUND;
    return rc;
}

int db_queue_delete(struct db *db, int64_t seq, int64_t **purged, int *n_purged)
{
    struct queue_delete_arg a = {seq, purged, n_purged};
    int rc;

    *purged = NULL;
    *n_purged = 0;
    rc = db__write_noted(db, DB_CHANGE_ORG, queue_delete_fn, &a);
    if (rc != DB_OK) {
        free(*purged);
        *purged = NULL;
        *n_purged = 0;
    }
    return rc;
}

static int queue_get_fn(struct db__conn *c, void *arg)
{
    static const char by_id[] =
        "SELECT " QUEUE_COLS " FROM queues q LEFT JOIN queues p ON p.seq = q.parent_seq"
        " WHERE q.id = ?";
    static const char by_name[] =
        "SELECT " QUEUE_COLS " FROM queues q LEFT JOIN queues p ON p.seq = q.parent_seq"
        " WHERE q.name = ? AND q.kind = ?";
    struct get_arg *a = arg;
    const struct db__arg args[] = {DB__S(a->text), DB__I(a->kind)};
    int rc = db__query_row(c, a->kind < 0 ? by_id : by_name, args, a->kind < 0 ? 1 : 2,
                           &queue_shape, a->one);

    return rc == DB_OK ? load_quotas(c, a->one) : rc;
}

int db_queue_get(struct db *db, const char *id, struct db_queue *out)
{
    struct get_arg a = {.text = id, .kind = -1, .one = out};

    return db__read(db, queue_get_fn, &a);
}

int db_queue_by_name(struct db *db, int kind, const char *name, struct db_queue *out)
{
    struct get_arg a = {.text = name, .kind = kind, .one = out};

    return db__read(db, queue_get_fn, &a);
}

/* Reads the queues of one kind (kind < 0: all), oldest first, with quotas. */
int db__queues(struct db__conn *c, int kind, struct db_queue **out, int *n)
{
    static const char sql[] =
        "SELECT " QUEUE_COLS " FROM queues q LEFT JOIN queues p ON p.seq = q.parent_seq"
        " WHERE ?1 < 0 OR q.kind = ?1 ORDER BY q.seq";
    const struct db__arg args[] = {DB__I(kind)};
    int i, rc = db__query_rows(c, sql, args, DB__NARGS(args), &queue_shape, out, n);

    for (i = 0; rc == DB_OK && i < *n; i++)
        rc = load_quotas(c, &(*out)[i]);
    return rc;
}

static int queue_list_fn(struct db__conn *c, void *arg)
{
    struct get_arg *a = arg;

    return db__queues(c, a->kind, a->list, a->n);
}

int db_queue_list(struct db *db, int kind, struct db_queue **out, int *n)
{
    struct get_arg a = {.kind = kind, .list = out, .n = n};

    return db__read_list(db, queue_list_fn, &a, out, n);
}

/* ---- usage ---- */

struct usage_arg {
    int64_t seq;
    struct db_usage *out;
    int max;
    int *n;
};

static struct db_usage *usage_slot(struct usage_arg *a, int64_t pool_seq)
{
    int i;

    for (i = 0; i < *a->n; i++)
        if (a->out[i].pool_seq == pool_seq)
            return &a->out[i];
    if (*a->n >= a->max)
        return NULL;
    memset(&a->out[*a->n], 0, sizeof(a->out[0]));
    a->out[*a->n].pool_seq = pool_seq;
    return &a->out[(*a->n)++];
}

/* Adds the rows of sql (?1 the queue) to the pools' figures: column 0
 * the pool, 1..3 GPU, CPU and memory. Allocated rows count as allocated
 * and requested (and, column 4 0: not preemptible, in allocated_np);
 * pending ones as requested only. */
static int usage_add(struct db__conn *c, struct usage_arg *a, const char *sql, int allocated)
{
    int rc = DB_OK, r;
    struct db__stmt *st = db__prep(c, sql, &rc);

    if (!st)
        return rc;
    db__bind_int64(st, 1, a->seq);
    while ((rc = db__step(st)) == DB__ROW) {
        struct db_usage *u = usage_slot(a, db__col_int64(st, 0));
        if (!u)
            continue;
        for (r = 0; r < 3; r++) {
            int64_t v = db__col_int64(st, 1 + r);
            u->requested[r] += v;
            if (!allocated)
                continue;
            u->allocated[r] += v;
            if (!db__col_int(st, 4))
                u->allocated_np[r] += v;
        }
    }
    return db__done(st, rc == DB__DONE ? DB_OK : DB_EIO);
}

static const char usage_allocated_sql[] =
    "SELECT n.pool_seq, " DB_POD_GPU_ON("w", "n") ", w.cpu_milli, w.mem_mib,"
    " w.preemptible FROM pods d JOIN workloads w ON w.seq = d.workload_seq"
    " JOIN nodes n ON n.seq = d.node_seq JOIN queues q ON q.seq = w.project_seq"
    " WHERE w.deleted_at = 0 AND (q.seq = ?1 OR q.parent_seq = ?1)";

/* Pending demand counts in the workload's first pool, else the oldest pool. */
static const char usage_pending_sql[] =
    "SELECT coalesce((SELECT seq FROM node_pools WHERE name = CASE"
    " WHEN instr(w.pools, ',') > 0 THEN substr(w.pools, 1, instr(w.pools, ',') - 1)"
    " ELSE w.pools END), (SELECT min(seq) FROM node_pools)),"
    " w.n_pods * " DB_POD_GPU_ASKED("w") ", w.n_pods * w.cpu_milli,"
    " w.n_pods * w.mem_mib FROM workloads w JOIN queues q ON q.seq = w.project_seq"
    " WHERE w.deleted_at = 0 AND w.phase = 'Pending' AND (q.seq = ?1 OR q.parent_seq = ?1)";

static int usage_fn(struct db__conn *c, void *arg)
{
    int rc = usage_add(c, arg, usage_allocated_sql, 1);

    return rc == DB_OK ? usage_add(c, arg, usage_pending_sql, 0) : rc;
}

int db_queue_usage(struct db *db, int64_t queue_seq, struct db_usage *out, int max, int *n)
{
    struct usage_arg a = {.seq = queue_seq, .out = out, .max = max, .n = n};

    *n = 0;
    return db__read(db, usage_fn, &a);
}
