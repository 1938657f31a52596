/*
 * agent.c: agent tokens, node registration, and the reads the API serves
 * about agents (their nodes, the runs of their pods, the workloads that
 * projects' time and idle limits apply to).
 *
 * Invariants:
 *   1. Only the SHA-256 of a token's secret is stored.
 *   2. A token runs at most one node: the first registration binds the
 *      token to its node name, and later ones must name the same node.
 *   3. A node name belongs to one live token: a simulated node, or a node
 *      whose agent holds another unrevoked token, is never taken over.
 *   4. Registration writes the node, its agent row and the token binding
 *      in one savepoint.
 *   5. A node's pool and GPU count change only by an admin: the figures
 *      set on its token, db_agent_node_approve(), or (for a node never seen
 *      before with no figures set) its first registration. A registration
 *      asking for others records them as asked and changes nothing, except
 *      that a node reporting fewer GPUs than approved uses only those.
 *   6. A known node's approval belongs to the token it was given to. A
 *      different token (the old one revoked, invariant 3) that was made
 *      neither for this node (--node) nor with figures of its own gets
 *      none of it: the node has the pool it asks for and no GPUs until an
 *      admin approves again, so an unused token cannot take over a revoked
 *      node's pool and GPUs.
 */
#include "db_agent.h"
#include "db_int.h"
#include "db_ha.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- tokens ---- */

#define TOKEN_COLS "seq, id, name, secret_hash, node_name, created_at, created_by," \
                   " last_used_at, revoked_at, pool_name, n_gpus"

static void token_fix(void *row)
{
    struct db_agent_token *t = row;

    t->has_gpus = t->n_gpus >= 0;
}

/* A token's row: TOKEN_COLS. An insert names id .. created_by, then
 * pool_name and n_gpus. */
DB__TABLE(token_cols, token_shape, struct db_agent_token, token_fix, seq, id, name, secret_hash,
          node_name, created_at, created_by, last_used_at, revoked_at, pool, n_gpus);

static int token_insert_fn(struct db__conn *c, void *arg)
{
    static const char sql[] =
        "INSERT INTO agent_tokens (id, name, secret_hash, node_name, created_at, created_by,"
        " pool_name, n_gpus) VALUES (?, ?, ?, ?, ?, ?, ?, ?)";
    struct db_agent_token *t = arg;
    const struct db__arg args[] = {
        DB__S(t->id), DB__S(t->name), DB__S(t->secret_hash), DB__S(t->node_name),
        DB__I(t->created_at), DB__S(t->created_by), DB__S(t->pool),
        DB__I(t->has_gpus ? t->n_gpus : -1),
    };
    int rc = db__exec_args(c, sql, args, DB__NARGS(args));

    if (rc == DB_OK)
        t->seq = db__last_id(c);
    return rc;
}

int db_agent_token_insert(struct db *db, struct db_agent_token *t)
{
    t->created_at = db__now_ms();
    return db__write(db, token_insert_fn, t);
}

struct token_arg {
    const char *id;
    int64_t now;
    struct db_agent_token *one;
    struct db_agent_token **list;
    int *n;
};

int db_agent_token_get(struct db *db, const char *id, struct db_agent_token *out)
{
    static const char sql[] = "SELECT " TOKEN_COLS " FROM agent_tokens WHERE id = ?";

    return db__read_row(db, sql, (struct db__key){.text = id}, &token_shape, out);
}

int db_agent_token_list(struct db *db, struct db_agent_token **out, int *n)
{
    static const char sql[] = "SELECT " TOKEN_COLS " FROM agent_tokens ORDER BY seq";

    return db__read_rows(db, sql, NULL, &token_shape, out, n);
}

static int token_revoke_fn(struct db__conn *c, void *arg)
{
    static const char sql[] =
        "UPDATE agent_tokens SET revoked_at = ? WHERE id = ? AND revoked_at = 0";
    struct token_arg *a = arg;
    const struct db__arg args[] = {DB__I(a->now), DB__S(a->id)};
    int rc = db__exec_args(c, sql, args, DB__NARGS(args));

    if (rc == DB_OK && db__changes(c) == 0)
        rc = DB_ENOTFOUND;
    return rc;
}

int db_agent_token_revoke(struct db *db, const char *id, int64_t now_ms)
{
    struct token_arg a = {.id = id, .now = now_ms};

    return db__write(db, token_revoke_fn, &a);
}

/* ---- registration ---- */

/* What one registration decides on its way (invariant 5). */
struct reg_state {
    char set_pool[DB_NAME_LEN];   /* set on the token; "" none */
    int set_gpus;                 /* set on the token; -1 none */
    int named;                    /* the token was made for this node (--node) */
    int64_t asked_pool;           /* the pool the registration asks for */
    int64_t pool_seq;             /* the approved pool */
};

/* A registration's own figures and what it decides (the readers' arg). */
struct reg_pair {
    struct db_agent_reg *r;
    struct reg_state *s;
    int known, token_new;
};

static int reg_token_read(struct db__stmt *st, void *arg)
{
    struct reg_pair *p = arg;
    char bound[DB_NAME_LEN];

    if (db__col_int64(st, 1) != 0)
        return DB_ENOTFOUND; /* revoked */
    db__copy(bound, sizeof(bound), st, 0);
    db__copy(p->s->set_pool, sizeof(p->s->set_pool), st, 2);
    p->s->set_gpus = db__col_int(st, 3);
    p->s->named = bound[0] != 0;
    if (bound[0] && strcmp(bound, p->r->name) != 0) {
        snprintf(p->r->why, sizeof(p->r->why), "this agent token belongs to node %s", bound);
        return DB_ECONFLICT;
    }
    return DB_OK;
}

/* Step 1: the token may register this name (invariant 2); the figures an
 * admin set on it. */
static int reg_token(struct db__conn *c, struct db_agent_reg *r, struct reg_state *s)
{
    static const char sql[] =
        "SELECT node_name, revoked_at, pool_name, n_gpus FROM agent_tokens WHERE seq = ?";
    const struct db__arg args[] = {DB__I(r->token_seq)};
    struct reg_pair p = {r, s, 0, 0};
    int rc = db__query_one(c, sql, args, DB__NARGS(args), reg_token_read, &p);

    if (rc == DB_ENOTFOUND || rc == DB_EIO)
        snprintf(r->why, sizeof(r->why), "the agent token is revoked");
    return rc;
}

/* The seq of pool `name`; DB_ENOTFOUND (with why) if there is none. */
static int pool_seq_of(struct db__conn *c, const char *name, int64_t *seq, char *why,
                       size_t len)
{
    static const char sql[] = "SELECT seq FROM node_pools WHERE name = ?";
    const struct db__arg args[] = {DB__S(name)};
    int rc = db__query_one(c, sql, args, DB__NARGS(args), db__read_int64, seq);

    if (rc != DB_OK)
        snprintf(why, len, "no node pool named %s", name);
    return rc;
}

/* Step 2: the pool asked for exists. */
static int reg_pool(struct db__conn *c, struct db_agent_reg *r, struct reg_state *s)
{
    return pool_seq_of(c, r->pool, &s->asked_pool, r->why, sizeof(r->why));
}

/* The figures approved before for this node, if any. */
static int reg_approved_read(struct db__stmt *st, void *arg)
{
    struct reg_pair *p = arg;

    if (db__col_int(st, 1) < 0)
        return DB_OK;
    p->known = 1;
    p->s->pool_seq = db__col_int64(st, 0);
    p->r->approved_gpus = db__col_int(st, 1);
    db__copy(p->r->approved_pool, sizeof(p->r->approved_pool), st, 2);
    p->token_new = db__col_int64(st, 3) != p->r->token_seq;
    return DB_OK;
}

/* Step 3b: the approved figures (invariant 5): those set on the token
 * when it first registers its node, else those approved before for this
 * node, else what it asks for now. A token's figures count once: an
 * admin's later approval is not undone by the next registration. */
static int reg_approved(struct db__conn *c, struct db_agent_reg *r, struct reg_state *s)
{
    static const char sql[] =
        "SELECT n.pool_seq, a.approved_gpus, p.name, a.token_seq FROM nodes n"
        " JOIN agent_nodes a ON a.node_seq = n.seq JOIN node_pools p ON p.seq = n.pool_seq"
        " WHERE n.name = ?";
    const struct db__arg args[] = {DB__S(r->name)};
    struct reg_pair p = {r, s, 0, 1};
    int rc;

    s->pool_seq = s->asked_pool;
    snprintf(r->approved_pool, sizeof(r->approved_pool), "%s", r->pool);
    r->approved_gpus = r->n_gpus;
    rc = db__query_one(c, sql, args, DB__NARGS(args), reg_approved_read, &p);
    if (rc == DB_ENOTFOUND)
        rc = DB_OK;
    if (rc == DB_OK && p.token_new && s->set_pool[0]) {
        rc = pool_seq_of(c, s->set_pool, &s->pool_seq, r->why, sizeof(r->why));
        snprintf(r->approved_pool, sizeof(r->approved_pool), "%s", s->set_pool);
    }
    if (p.token_new && s->set_gpus >= 0)
        r->approved_gpus = s->set_gpus;
    if (p.known && p.token_new && !s->named && !s->set_pool[0] && s->set_gpus < 0) {
        s->pool_seq = s->asked_pool; /* invariant 6: a new approval */
        snprintf(r->approved_pool, sizeof(r->approved_pool), "%s", r->pool);
        r->approved_gpus = 0;
    }
    r->effective_gpus = r->n_gpus < r->approved_gpus ? r->n_gpus : r->approved_gpus;
    r->pending = s->pool_seq != s->asked_pool || r->approved_gpus != r->n_gpus;
    /* a pool an admin chose is no label's to take (db/org.c) */
    r->pool_pinned = r->pool_pinned || s->pool_seq != s->asked_pool;
    r->known = p.known;
    return rc;
}

static int reg_name_read(struct db__stmt *st, void *arg)
{
    struct db_agent_reg *r = arg;

    if (db__col_int(st, 0)) {
        snprintf(r->why, sizeof(r->why), "%s is a simulated node", r->name);
        return DB_ECONFLICT;
    }
    if (db__col_int64(st, 1) != 0 && db__col_int64(st, 1) != r->token_seq &&
        db__col_int64(st, 2) == 0) {
        snprintf(r->why, sizeof(r->why), "node %s is run by the agent of another token",
                 r->name);
        return DB_ECONFLICT;
    }
    return DB_OK;
}

/* Step 3: nobody else holds the name (invariant 3). */
static int reg_name_free(struct db__conn *c, struct db_agent_reg *r)
{
    static const char sql[] =
        "SELECT n.simulated, coalesce(a.token_seq, 0), coalesce(t.revoked_at, 0)"
        " FROM nodes n LEFT JOIN agent_nodes a ON a.node_seq = n.seq"
        " LEFT JOIN agent_tokens t ON t.seq = a.token_seq WHERE n.name = ?";
    const struct db__arg args[] = {DB__S(r->name)};
    int rc = db__query_one(c, sql, args, DB__NARGS(args), reg_name_read, r);

    return rc == DB_ENOTFOUND ? DB_OK : rc;
}

/* Step 4: the node row, Ready, in the approved pool with the usable GPUs
 * (labels: "{}" when it has none). */
static int reg_node(struct db__conn *c, struct db_agent_reg *r, int64_t pool_seq)
{
    static const char sql[] =
        "INSERT INTO nodes (id, name, pool_seq, n_gpus, gpu_type, node_type, cpu_milli,"
        " mem_mib, ready, simulated, created_at, updated_at, labels, gpu_memory_mib, address,"
        " pool_pinned)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 1, 0, ?9, ?9, ?10, ?11, ?12, ?13)"
        " ON CONFLICT (name) DO UPDATE SET pool_seq = excluded.pool_seq,"
        " n_gpus = excluded.n_gpus, gpu_type = excluded.gpu_type,"
        " node_type = excluded.node_type, cpu_milli = excluded.cpu_milli,"
        " mem_mib = excluded.mem_mib, ready = 1, updated_at = excluded.updated_at,"
        " labels = excluded.labels, gpu_memory_mib = excluded.gpu_memory_mib,"
        " address = excluded.address,"
        " pool_pinned = max(nodes.pool_pinned, excluded.pool_pinned)";
    char id[DB_ID_LEN];
    const struct db__arg args[] = {
        DB__S(id), DB__S(r->name), DB__I(pool_seq), DB__I(r->effective_gpus),
        DB__S(r->gpu_type), DB__S(r->node_type), DB__I(r->cpu_milli), DB__I(r->mem_mib),
        DB__I(r->now_ms), DB__S(r->labels ? r->labels : "{}"), DB__I(r->gpu_memory_mib),
        DB__S(r->address), DB__I(r->pool_pinned),
    };
    int rc;

    db__uuid(id);
    rc = db__exec_args(c, sql, args, DB__NARGS(args));
    if (rc == DB_OK)
        rc = db__node_key(c, r->name, &r->node_seq, r->node_id);
    return rc == DB_ENOTFOUND ? DB_EIO : rc; /* it was just written */
}

/* Step 5: the agent row (labels: "{}", gpus: "[]" when it has none) and
 * the token binding. */
static int reg_agent(struct db__conn *c, struct db_agent_reg *r)
{
    static const char agent[] =
        "INSERT INTO agent_nodes (node_seq, token_seq, heartbeat_ms, registered_at, last_seen,"
        " labels, gpus, version, runtime, approved_gpus, requested_pool, requested_gpus)"
        " VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"
        " ON CONFLICT (node_seq) DO UPDATE SET token_seq = excluded.token_seq,"
        " heartbeat_ms = excluded.heartbeat_ms, registered_at = excluded.registered_at,"
        " last_seen = excluded.last_seen, labels = excluded.labels, gpus = excluded.gpus,"
        " version = excluded.version, runtime = excluded.runtime,"
        " approved_gpus = excluded.approved_gpus, requested_pool = excluded.requested_pool,"
        " requested_gpus = excluded.requested_gpus";
    static const char bind[] =
        "UPDATE agent_tokens SET node_name = ?, last_used_at = ? WHERE seq = ?";
    const struct db__arg agent_args[] = {
        DB__I(r->node_seq), DB__I(r->token_seq), DB__I(r->heartbeat_ms), DB__I(r->now_ms),
        DB__S(r->labels ? r->labels : "{}"), DB__S(r->gpus ? r->gpus : "[]"),
        DB__S(r->version), DB__S(r->runtime), DB__I(r->approved_gpus), DB__S(r->pool),
        DB__I(r->n_gpus),
    };
    const struct db__arg bind_args[] = {DB__S(r->name), DB__I(r->now_ms), DB__I(r->token_seq)};
    int rc = db__exec_args(c, agent, agent_args, DB__NARGS(agent_args));

    return rc == DB_OK ? db__exec_args(c, bind, bind_args, DB__NARGS(bind_args)) : rc;
}

static int register_fn(struct db__conn *c, void *arg)
{
    struct db_agent_reg *r = arg;
    struct reg_state s;
    int rc;

    memset(&s, 0, sizeof(s));
    rc = reg_token(c, r, &s);
    if (rc == DB_OK)
        rc = reg_pool(c, r, &s);
    if (rc == DB_OK)
        rc = reg_name_free(c, r);
    if (rc == DB_OK)
        rc = reg_approved(c, r, &s);
    if (rc == DB_OK)
        rc = reg_node(c, r, s.pool_seq);
    if (rc == DB_OK)
        rc = reg_agent(c, r);
    return rc;
}

int db_agent_register(struct db *db, struct db_agent_reg *r)
{
    r->why[0] = 0;
    r->node_seq = 0;
    r->node_id[0] = 0;
    return db__write_noted(db, DB_CHANGE_ORG, register_fn, r);
}

/* ---- runs ---- */

#define RUN_COLS "r.uid, r.workload_seq, r.idx, r.node_seq, coalesce(n.name, ''), r.started_at," \
                 " r.finished_at, r.exit_code, r.signal, r.outcome"
#define RUN_FROM " FROM pod_runs r LEFT JOIN nodes n ON n.seq = r.node_seq"

DB__TABLE(run_cols, run_shape, struct db_pod_run, NULL, uid, workload_seq, idx, node_seq,
          node_name, started_at, finished_at, exit_code, signal, outcome);

struct run_arg {
    const char *uid;
    int64_t workload_seq;
    int idx;
    struct db_pod_run *one;
    struct db_pod_run **list;
    int *n;
};

int db_pod_run_get(struct db *db, const char *uid, struct db_pod_run *out)
{
    static const char sql[] = "SELECT " RUN_COLS RUN_FROM " WHERE r.uid = ?";

    return db__read_row(db, sql, (struct db__key){.text = uid}, &run_shape, out);
}

static int run_list_fn(struct db__conn *c, void *arg)
{
    static const char sql[] =
        "SELECT " RUN_COLS RUN_FROM " WHERE r.workload_seq = ?1 AND (?2 < 0 OR r.idx = ?2)"
        " ORDER BY r.started_at, r.idx, r.uid";
    struct run_arg *a = arg;
    const struct db__arg args[] = {DB__I(a->workload_seq), DB__I(a->idx)};

    return db__query_rows(c, sql, args, DB__NARGS(args), &run_shape, a->list, a->n);
}

int db_pod_run_list(struct db *db, int64_t workload_seq, int idx, struct db_pod_run **out,
                    int *n)
{
    struct run_arg a = {.workload_seq = workload_seq, .idx = idx, .list = out, .n = n};

    return db__read_list(db, run_list_fn, &a, out, n);
}

/* ---- agent nodes ---- */

DB__TABLE(agent_node_cols, agent_node_shape, struct db_agent_node, NULL, node_seq, node_id, name,
          pool_name, ready, n_gpus, gpu_type, token_id, heartbeat_ms, registered_at, last_seen,
          version, runtime, labels, gpus, approved_gpus, requested_pool, requested_gpus);

void db_agent_nodes_free(struct db_agent_node *a, int n)
{
    db__rows_free(&agent_node_shape, a, n);
}

int db_agent_node_list(struct db *db, struct db_agent_node **out, int *n)
{
    static const char sql[] =
        "SELECT n.seq, n.id, n.name, p.name, n.ready, n.n_gpus, n.gpu_type, t.id,"
        " a.heartbeat_ms, a.registered_at, a.last_seen, a.version, a.runtime, a.labels, a.gpus,"
        " a.approved_gpus, a.requested_pool, a.requested_gpus"
        " FROM agent_nodes a JOIN nodes n ON n.seq = a.node_seq"
        " JOIN node_pools p ON p.seq = n.pool_seq JOIN agent_tokens t ON t.seq = a.token_seq"
        " ORDER BY n.seq";

    return db__read_rows(db, sql, NULL, &agent_node_shape, out, n);
}

/* ---- an admin's approval ---- */

/* A node's figures as its approval reads them: approved, then asked for. */
struct approval_row {
    int64_t seq;
    char pool[DB_NAME_LEN];
    int gpus;
    char asked_pool[DB_NAME_LEN];
    int asked_gpus;
};
DB__TABLE(approval_cols, approval_shape, struct approval_row, NULL, seq, pool, gpus, asked_pool,
          asked_gpus);

/* The approved figures: what was asked for, or what the admin says. */
static void approval_take(const struct db_agent_approval *a, struct approval_row *r)
{
    if (a->take_requested) {
        snprintf(r->pool, sizeof(r->pool), "%s", r->asked_pool);
        r->gpus = r->asked_gpus;
        return;
    }
    if (a->pool)
        snprintf(r->pool, sizeof(r->pool), "%s", a->pool);
    if (a->n_gpus >= 0)
        r->gpus = a->n_gpus;
}

static int approve_fn(struct db__conn *c, void *arg)
{
    static const char get[] =
        "SELECT n.seq, p.name, a.approved_gpus, a.requested_pool, a.requested_gpus"
        " FROM nodes n JOIN agent_nodes a ON a.node_seq = n.seq"
        " JOIN node_pools p ON p.seq = n.pool_seq WHERE n.name = ?";
    static const char set[] =
        "UPDATE agent_nodes SET approved_gpus = ?2 WHERE node_seq = ?1";
    static const char node[] =
        "UPDATE nodes SET pool_seq = ?2, n_gpus = ?3, pool_pinned = 1, updated_at = ?4"
        " WHERE seq = ?1";
    struct db_agent_approval *a = arg;
    const struct db__arg get_args[] = {DB__S(a->node)};
    struct approval_row r;
    int64_t pool_seq = 0;
    int rc = db__query_row(c, get, get_args, DB__NARGS(get_args), &approval_shape, &r);

    if (rc != DB_OK) {
        snprintf(a->why, sizeof(a->why), "no node %s run by an agent", a->node);
        return rc;
    }
    approval_take(a, &r);
    rc = pool_seq_of(c, r.pool, &pool_seq, a->why, sizeof(a->why));
    if (rc == DB_OK) {
        const struct db__arg args[] = {DB__I(r.seq), DB__I(r.gpus)};

        rc = db__exec_args(c, set, args, DB__NARGS(args));
    }
    if (rc == DB_OK) {
        int use = r.asked_gpus >= 0 && r.asked_gpus < r.gpus ? r.asked_gpus : r.gpus;
        const struct db__arg args[] = {DB__I(r.seq), DB__I(pool_seq), DB__I(use),
                                       DB__I(db__now_ms())};

        rc = db__exec_args(c, node, args, DB__NARGS(args));
    }
    return rc;
}

int db_agent_node_approve(struct db *db, struct db_agent_approval *a)
{
    a->why[0] = 0;
    return db__write_noted(db, DB_CHANGE_ORG, approve_fn, a);
}

/* ---- projects' time and idle limits ---- */

int db_agent_limited(struct db *db, struct db_limited **out, int *n)
{
    /* the measured devices of the workload: the figures of the open runs
     * of its pods, for the devices they were given */
#define DEVICES " FROM pods p JOIN pod_gpu g ON g.uid = p.uid AND g.given = 1" \
                " WHERE p.workload_seq = w.seq"
    static const char sql[] =
        "SELECT w.seq, w.name, w.type, w.started_ms, w.rules,"
        " (SELECT count(*)" DEVICES "), (SELECT count(*)" DEVICES " AND g.utilization = 0),"
        " (SELECT count(*) FROM pods p JOIN nodes n ON n.seq = p.node_seq AND n.simulated = 0"
        "  WHERE p.workload_seq = w.seq AND p.devices != 0 AND NOT EXISTS"
        "  (SELECT 1 FROM pod_gpu g WHERE g.uid = p.uid AND g.given = 1)),"
        " (SELECT coalesce(max(r.gpu_idle_since), 0) FROM pods p"
        "  JOIN pod_runs r ON r.uid = p.uid WHERE p.workload_seq = w.seq), w.preemptible, w.run_ms"
        " FROM workloads w WHERE w.deleted_at = 0 AND w.phase = 'Running' AND w.rules > ''"
        " ORDER BY w.seq"; /* workloads_ruled: only the workloads with limits are read */
#undef DEVICES
    DB__TABLE(cols, shape, struct db_limited, NULL, seq, name, type, started_ms, rules, n_devices,
              n_idle, n_unmeasured, idle_since, preemptible, run_ms);

    return db__read_rows(db, sql, NULL, &shape, out, n);
}
