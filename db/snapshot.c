/*
 * snapshot.c: what the scheduler thread reads before a cycle and writes
 * after it.
 *
 * db_snapshot_load() reads, in one read transaction, the pools, nodes and
 * queues (with quotas) in age order and every live workload that is
 * Pending or Running, with its pods, in queue order (queued_seq, seq);
 * Initializing (placed on an agent's node, not yet reported started)
 * counts as Running.
 * All of it lives in one block of chunks freed by db_snapshot_free().
 * db_snapshot_copy_topology() copies the pools, nodes and queues of one
 * (a topology to change without touching the original: what-if runs);
 * db_snapshot_share() gives one more holder the same snapshot, read only
 * (the last db_snapshot_free() frees it).
 * db_topology_load() reads only the pools, nodes and queues, and
 * db_workloads_load() only the named workloads that are still live and
 * Pending or Running: together they let the scheduler keep its state in
 * memory and re-read only what changed.
 *
 * db_cycle_apply() writes a cycle's results in one savepoint of the
 * writer's group transaction:
 *   for each update: UPDATE ... WHERE seq = ? AND version = ? AND live;
 *     if no row matched, the workload changed through the API since the
 *     snapshot: the update, its pods and its events are dropped;
 *     otherwise its pods are replaced when they changed (rows of pods
 *     that stay where they were are kept; a workload the cycle only
 *     placed more pods of, pods_added_only, has none of its rows looked
 *     up to go: on PostgreSQL that lookup was a scan of every pod);
 *   then the events of the updates that applied.
 * So a cycle's decisions land all together or not at all, and never undo
 * a delete or suspend that happened while the cycle ran.
 *
 * db_cycle_apply_turns() writes the same in turns, so that the writes
 * queued behind a cycle that places thousands of workloads (a fill) wait
 * for one turn, not for the whole cycle:
 *   Turn 1: every update before the last n_after (evictions, moves,
 *           shrinks, phase and time changes: whatever frees or moves
 *           pods), with their events;
 *   Turns 2..: the last n_after updates, which only place pods of their
 *           own on what is free once every update of turn 1 applied, in
 *           turns of t->rows (each turn's pace sets the next one's rows,
 *           so that one runs about t->turn_us), each with its events.
 * Each turn is one call of the op (db.c): its own savepoint, the same
 * version check per workload. The writer commits between turns only when
 * other writes wait; otherwise all turns share one transaction. On
 * PostgreSQL a turn runs PQ_TURN_SCALE times t->turn_us: each of its
 * statements pays a round trip and a plan (set_run) however few its rows,
 * and each turn the leader's fence, so turns of 1 ms carried a few rows
 * each and cost more server CPU per submission than turns of 8 ms
 * (bench/NOTES.md).
 * Invariants of the turns:
 *   1. A workload's update, all its pods (a gang's pods together) and its
 *      events land in one turn.
 *   2. Any prefix of the turns is a state the cluster can hold: turn 1
 *      frees and moves; a later turn only adds pods on capacity that the
 *      whole cycle leaves free once turn 1 applied, so a subset of them
 *      fits too (no node overcommitted, no quota past what the cycle
 *      gave).
 *   3. A turn that fails rolls back alone and ends the op with its code;
 *      the turns committed before stay. The caller then reloads its
 *      state from the database (sched_loop.c), and so does a restart
 *      after a crash between turns: the workloads whose turn did not
 *      land are Pending there, with no pod, and the next cycle places
 *      them again.
 *
 * db_reasons_apply() writes what a cycle says about workloads it left as
 * they were (a pending reason and its message: no phase, pod or time
 * changes, no events) in bounded pieces: each piece is one write of the
 * group transaction that stops once it has run for its budget, so the
 * writes queued behind it wait that long at most, and the caller queues
 * the rest as further pieces. The same version check applies row by row
 * (on PostgreSQL, in statements of REASON_ROWS rows, the budget checked
 * between them).
 */
#include "db_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHUNK (64 * 1024)
#define TURN_ROWS_START 32  /* a turn's placements before any turn was timed */
#define TURN_ROWS_MIN 4
#define TURN_ROWS_MAX 4096
#define PQ_TURN_SCALE 8     /* a turn's target on PostgreSQL, in t->turn_us */

struct chunk {
    struct chunk *next;
    size_t used, size;
    max_align_t data[];
};

static void *chunk_alloc(struct chunk **head, size_t n)
{
    struct chunk *c = *head;
    size_t need = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
    void *p;

    if (!c || c->size - c->used < need) {
        size_t size = need > CHUNK ? need : CHUNK;
        c = malloc(sizeof(*c) + size);
        if (!c)
            return NULL;
        c->next = *head;
        c->used = 0;
        c->size = size;
        *head = c;
    }
    p = (char *)c->data + c->used;
    c->used += need;
    return p;
}

static const char *chunk_str(struct chunk **head, struct db__stmt *st, int col)
{
    const char *s = db__col_text(st, col);
    size_t n = s ? strlen(s) : 0;
    char *p = chunk_alloc(head, n + 1);

    if (!p)
        return NULL;
    if (n)
        memcpy(p, s, n);
    p[n] = 0;
    return p;
}

void db_snapshot_free(struct db_snapshot *s)
{
    struct chunk *c, *next;

    if (!s || __atomic_fetch_sub(&s->holders__, 1, __ATOMIC_ACQ_REL) > 0)
        return;   /* another holder has it still */
    for (c = s->block__; c; c = next) {
        next = c->next;
        free(c);
    }
    free(s->pools);
    free(s->nodes);
    free(s->queues);
    free(s);
}

struct db_snapshot *db_snapshot_share(struct db_snapshot *s)
{
    if (s)
        __atomic_fetch_add(&s->holders__, 1, __ATOMIC_RELAXED);
    return s;
}

int db_snapshot_copy_topology(const struct db_snapshot *s, const struct db_node *add, int n_add,
                              struct db_snapshot **out)
{
    struct db_snapshot *c = calloc(1, sizeof(*c));
    int n_nodes = s->n_nodes + n_add;

    *out = NULL;
    if (!c)
        return DB_ENOMEM;
    c->pools = malloc(sizeof(*c->pools) * ((size_t)s->n_pools + 1));
    c->nodes = malloc(sizeof(*c->nodes) * ((size_t)n_nodes + 1));
    c->queues = malloc(sizeof(*c->queues) * ((size_t)s->n_queues + 1));
    if (!c->pools || !c->nodes || !c->queues) {
        db_snapshot_free(c);
        return DB_ENOMEM;
    }
    if (s->n_pools)
        memcpy(c->pools, s->pools, sizeof(*c->pools) * (size_t)s->n_pools);
    if (s->n_nodes)
        memcpy(c->nodes, s->nodes, sizeof(*c->nodes) * (size_t)s->n_nodes);
    if (n_add)
        memcpy(c->nodes + s->n_nodes, add, sizeof(*c->nodes) * (size_t)n_add);
    if (s->n_queues)
        memcpy(c->queues, s->queues, sizeof(*c->queues) * (size_t)s->n_queues);
    c->n_pools = s->n_pools;
    c->n_nodes = n_nodes;
    c->n_queues = s->n_queues;
    *out = c;
    return DB_OK;
}

struct snap_arg {
    struct db_snapshot *s;
    struct chunk *chunks;
    const int64_t *seqs;   /* db_workloads_load: the seqs to read */
    int n_seqs;
};

/* A workload's row in the snapshot, in the order of WL_SNAP_COLS. Its
 * strings (the char * columns, DB__DUP) are copied into the snapshot's
 * chunks rather than malloc'd one by one. */
#define WL_SNAP_COLS                                                                       \
    "seq, version, project_seq, name, pools, node_type, phase, phase_reason, type,"      \
    " priority, preemptible, n_pods, min_pods, gpu_devices, gpu_portion, cpu_milli,"     \
    " mem_mib, queued_seq, started_ms, stale_since_ms, phase_message, affinity,"         \
    " gpu_memory_mib, topology"
static const struct db__col wl_snap_cols[] = {
    DB__COLS(struct db_sched_wl, seq, version, project_seq, name, pools, node_type, phase,
        phase_reason, type, priority, preemptible, n_pods, min_pods, gpu_devices, gpu_portion,
        cpu_milli, mem_mib, queued_seq, started_ms, stale_since_ms, phase_message, affinity,
        gpu_memory_mib, topology),
};

static int wl_snap_row(struct snap_arg *a, struct db__stmt *st, struct db_sched_wl *w)
{
    int i, rc = DB_OK;

    for (i = 0; i < DB__NCOLS(wl_snap_cols); i++) {
        const struct db__col *k = &wl_snap_cols[i];
        const char *str;

        if (k->type != DB__DUP) {
            db__cols_read(st, i, k, 1, w);
            continue;
        }
        str = chunk_str(&a->chunks, st, i);
        memcpy((char *)w + k->off, &str, sizeof(str));
        if (!str)
            rc = DB_ENOMEM;
    }
    w->pods = chunk_alloc(&a->chunks, sizeof(*w->pods) * (size_t)w->n_pods);
    if (rc != DB_OK || !w->pods)
        return DB_ENOMEM;
    for (i = 0; i < w->n_pods; i++) {
        w->pods[i].node_seq = 0;
        w->pods[i].devices = 0;
    }
    return DB_OK;
}

static int load_workloads(struct db__conn *c, struct snap_arg *a)
{
    static const char count[] =
        "SELECT count(*) FROM workloads"
        " WHERE deleted_at = 0 AND phase IN ('Pending', 'Initializing', 'Running')";
    static const char sql[] =
        "SELECT " WL_SNAP_COLS " FROM workloads"
        " WHERE deleted_at = 0 AND phase IN ('Pending', 'Initializing', 'Running')"
        " ORDER BY queued_seq, seq";
    struct db_snapshot *s = a->s;
    int rc = DB_OK, n = 0;
    struct db__stmt *st = db__prep(c, count, &rc);

    if (!st)
        return rc;
    rc = db__step(st) == DB__ROW ? DB_OK : DB_EIO;
    if (rc == DB_OK)
        n = db__col_int(st, 0);
    db__done(st, rc);
    if (rc != DB_OK)
        return rc;
    s->workloads = chunk_alloc(&a->chunks, sizeof(*s->workloads) * (size_t)(n + 1));
    if (!s->workloads)
        return DB_ENOMEM;
    st = db__prep(c, sql, &rc);
    if (!st)
        return rc;
    while (rc == DB_OK && s->n_workloads < n && db__step(st) == DB__ROW)
        rc = wl_snap_row(a, st, &s->workloads[s->n_workloads++]);
    return db__done(st, rc);
}

static int cmp_seq(const void *a, const void *b)
{
    const struct db_sched_wl *x = *(const struct db_sched_wl *const *)a;
    const struct db_sched_wl *y = *(const struct db_sched_wl *const *)b;

    return (x->seq > y->seq) - (x->seq < y->seq);
}

static struct db_sched_wl *find_seq(struct db_sched_wl **by_seq, int n, int64_t seq)
{
    int lo = 0, hi = n - 1;

    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (by_seq[mid]->seq == seq)
            return by_seq[mid];
        if (by_seq[mid]->seq < seq)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

static int load_pods(struct db__conn *c, struct snap_arg *a)
{
    static const char sql[] =
        "SELECT d.workload_seq, d.idx, d.node_seq, d.devices FROM pods d"
        " JOIN workloads w ON w.seq = d.workload_seq"
        " WHERE w.deleted_at = 0 AND w.phase IN ('Pending', 'Initializing', 'Running')";
    struct db_snapshot *s = a->s;
    struct db_sched_wl **by_seq;
    int rc = DB_OK, i;
    struct db__stmt *st;

    by_seq = malloc(sizeof(*by_seq) * (size_t)(s->n_workloads + 1));
    if (!by_seq)
        return DB_ENOMEM;
    for (i = 0; i < s->n_workloads; i++)
        by_seq[i] = &s->workloads[i];
    qsort(by_seq, (size_t)s->n_workloads, sizeof(*by_seq), cmp_seq);
    st = db__prep(c, sql, &rc);
    if (!st)
        goto out_free;
    while ((rc = db__step(st)) == DB__ROW) {
        struct db_sched_wl *w = find_seq(by_seq, s->n_workloads, db__col_int64(st, 0));
        int idx = db__col_int(st, 1);
        if (!w || idx < 0 || idx >= w->n_pods)
            continue;
        w->pods[idx].node_seq = db__col_int64(st, 2);
        w->pods[idx].devices = (uint64_t)db__col_int64(st, 3);
    }
    rc = db__done(st, rc == DB__DONE ? DB_OK : DB_EIO);
out_free:
    free(by_seq);
    return rc;
}

static int topology_fn(struct db__conn *c, void *arg)
{
    struct snap_arg *a = arg;
    int rc;

    rc = db__pools(c, &a->s->pools, &a->s->n_pools);
    if (rc == DB_OK)
        rc = db__nodes(c, 0, &a->s->nodes, &a->s->n_nodes);
    if (rc == DB_OK)
        rc = db__queues(c, -1, &a->s->queues, &a->s->n_queues);
    return rc;
}

static int snapshot_fn(struct db__conn *c, void *arg)
{
    int rc = topology_fn(c, arg);

    if (rc == DB_OK)
        rc = load_workloads(c, arg);
    if (rc == DB_OK)
        rc = load_pods(c, arg);
    return rc;
}

/* The seqs as a JSON array ("[1,2,3]"), malloc'd; NULL if out of memory. */
static char *seqs_json(const int64_t *seqs, int n)
{
    size_t cap = (size_t)n * 21 + 3, len = 1;
    char *s = malloc(cap);
    int i;

    if (!s)
        return NULL;
    s[0] = '[';
    for (i = 0; i < n; i++)
        len += (size_t)snprintf(s + len, cap - len, i ? ",%lld" : "%lld", (long long)seqs[i]);
    snprintf(s + len, cap - len, "]");
    return s;
}

/* The named workloads (seqs ascending) that are live and Pending or
 * Running, with their pods: two statements whatever their number (a
 * statement per workload costs a round trip each on a database server). */
static int some_fn(struct db__conn *c, void *arg)
{
    static const char sql[] =
        "SELECT " WL_SNAP_COLS " FROM workloads"
        " WHERE seq IN (SELECT CAST(value AS INTEGER) FROM json_each(?1)) AND deleted_at = 0"
        " AND phase IN ('Pending', 'Initializing', 'Running') ORDER BY seq";
    static const char pods[] =
        "SELECT workload_seq, idx, node_seq, devices FROM pods"
        " WHERE workload_seq IN (SELECT CAST(value AS INTEGER) FROM json_each(?1))"
        " ORDER BY workload_seq";
    struct snap_arg *a = arg;
    struct db_sched_wl *w;
    char *list = seqs_json(a->seqs, a->n_seqs);
    int rc = DB_OK, src = DB__DONE, idx, k = 0;
    struct db__stmt *st;

    a->s->workloads = chunk_alloc(&a->chunks, sizeof(*a->s->workloads) * (size_t)(a->n_seqs + 1));
    if (!a->s->workloads || !list) {
        free(list);
        return DB_ENOMEM;
    }
    st = db__prep(c, sql, &rc);
    if (!st) {
        free(list);
        return rc;
    }
    db__bind_static(st, 1, list);
    while (rc == DB_OK && a->s->n_workloads < a->n_seqs && (src = db__step(st)) == DB__ROW) {
        rc = wl_snap_row(a, st, &a->s->workloads[a->s->n_workloads]);
        if (rc == DB_OK)
            a->s->n_workloads++;
    }
    rc = db__done(st, rc == DB_OK && src != DB__DONE && src != DB__ROW ? DB_EIO : rc);
    st = rc == DB_OK ? db__prep(c, pods, &rc) : NULL;
    if (st) {
        db__bind_static(st, 1, list);
        while ((src = db__step(st)) == DB__ROW) {
            int64_t seq = db__col_int64(st, 0);
            while (k < a->s->n_workloads && a->s->workloads[k].seq < seq)
                k++; /* both in seq order */
            if (k == a->s->n_workloads || a->s->workloads[k].seq != seq)
                continue;
            w = &a->s->workloads[k];
            idx = db__col_int(st, 1);
            if (idx < 0 || idx >= w->n_pods)
                continue;
            w->pods[idx].node_seq = db__col_int64(st, 2);
            w->pods[idx].devices = (uint64_t)db__col_int64(st, 3);
        }
        rc = db__done(st, src == DB__DONE ? DB_OK : DB_EIO);
    }
    free(list);
    return rc;
}

static int load_with(struct db *db, db__fn fn, struct snap_arg *a, struct db_snapshot **out)
{
    int rc;

    *out = NULL;
    a->s = calloc(1, sizeof(*a->s));
    if (!a->s)
        return DB_ENOMEM;
    rc = db__read(db, fn, a);
    a->s->block__ = a->chunks;
    if (rc != DB_OK) {
        db_snapshot_free(a->s);
        return rc;
    }
    *out = a->s;
    return DB_OK;
}

int db_snapshot_load(struct db *db, struct db_snapshot **out)
{
    struct snap_arg a = {NULL, NULL, NULL, 0};

    return load_with(db, snapshot_fn, &a, out);
}

int db_topology_load(struct db *db, struct db_snapshot **out)
{
    struct snap_arg a = {NULL, NULL, NULL, 0};

    return load_with(db, topology_fn, &a, out);
}

int db_workloads_load(struct db *db, const int64_t *seqs, int n, struct db_snapshot **out)
{
    struct snap_arg a = {NULL, NULL, seqs, n};

    return load_with(db, some_fn, &a, out);
}

/* ---- applying a cycle ---- */

struct apply_arg {
    const struct db_cycle *c;
    int *n_applied;
    int64_t *skipped;   /* seqs of updates that did not apply, sorted */
    int n_skipped;
    int64_t held_us;    /* how long apply_fn ran on the writer */
    int64_t held_cpu_us; /* how much of it on the writer's CPU */
    int64_t budget_us;  /* reasons_fn: stop after this long (at least one row) */
    int n_done;         /* reasons_fn: the rows it got to */
    int from, to;       /* apply_fn: this turn's updates */
    int *ev_upd;        /* [n_events]: the update each event goes with (-1: none);
                         * NULL: every event goes with the one turn */
    struct db_turns *t; /* apply_fn: the turns (NULL: one) */
    int repeats;        /* apply_fn: a workload has two updates in the cycle
                         * (seqs_repeat(), once per cycle, before the writer) */
};

/* Rewrites the pods of u that changed. A pod left on the same node and
 * devices keeps its row, and with it the uid an agent runs it under. */
/* Runs sql (pods' delete or insert) for pod i of the update: ?1 the
 * workload, ?2 the index, ?3 the node, ?4 the devices. */
static int pod_write(struct db__conn *c, const char *sql, const struct db_wl_update *u, int i)
{
    int rc = DB_OK;
    struct db__stmt *st = db__prep(c, sql, &rc);

    if (!st)
        return rc;
    db__bind_int64(st, 1, u->seq);
    db__bind_int(st, 2, i);
    db__bind_int64(st, 3, u->pods[i].node_seq);
    db__bind_int64(st, 4, (int64_t)u->pods[i].devices);
    return db__done(st, db__step_done(st));
}

static int replace_pods(struct db__conn *c, const struct db_wl_update *u)
{
    static const char del[] =
        "DELETE FROM pods WHERE workload_seq = ?1 AND idx = ?2"
        " AND (?3 <= 0 OR node_seq != ?3 OR devices != ?4)";
    static const char ins[] =
        "INSERT OR IGNORE INTO pods (workload_seq, idx, node_seq, devices) VALUES (?, ?, ?, ?)";
    int rc = DB_OK, i;

    for (i = 0; rc == DB_OK && i < u->n_pods; i++) {
        rc = pod_write(c, del, u, i);
        if (rc == DB_OK && u->pods[i].node_seq > 0)
            rc = pod_write(c, ins, u, i);
    }
    return rc;
}

/* What a cycle writes of a workload (char * fields: DB__DUP), in
 * apply_update's order; apply_reason writes the reason and message. */
static const struct db__col update_cols[] = {
    DB__COLS(struct db_wl_update, phase, phase_reason, phase_message, started_ms, stale_since_ms),
};
#define UPDATE_REASON 1 /* phase_reason, phase_message */

/* Runs sql, a cycle's UPDATE of one workload: n of update_cols from
 * `first` on, then the time, the seq and the version the snapshot read.
 * *applied: the row still had that version. */
static int apply_cols(struct db__conn *c, const char *sql, const struct db_wl_update *u,
                      int first, int n, int64_t now, int *applied)
{
    int rc = DB_OK;
    struct db__stmt *st = db__prep(c, sql, &rc);

    *applied = 0;
    if (!st)
        return rc;
    db__cols_bind(st, 1, update_cols + first, n, u);
    db__bind_int64(st, n + 1, now);
    db__bind_int64(st, n + 2, u->seq);
    db__bind_int64(st, n + 3, u->version);
    rc = db__done(st, db__step_done(st));
    *applied = rc == DB_OK && db__changes(c) == 1;
    return rc;
}

static int apply_update(struct db__conn *c, const struct db_wl_update *u, int64_t now,
                        int *applied)
{
    static const char sql[] =
        "UPDATE workloads SET phase_updated_at = CASE WHEN phase = ?1 THEN phase_updated_at"
        " ELSE ?6 END, phase = ?1, phase_reason = ?2, phase_message = ?3, started_ms = ?4,"
        " stale_since_ms = ?5, updated_at = ?6"
        " WHERE seq = ?7 AND version = ?8 AND deleted_at = 0";
    int rc = apply_cols(c, sql, u, 0, DB__NCOLS(update_cols), now, applied);

    if (rc == DB_OK && *applied && u->pods_changed) {
        rc = replace_pods(c, u);
        if (rc == DB_OK && u->n_pods > 0 && u->pods[0].node_seq > 0)
            db__fault("cycle-pod"); /* a placement written, the cycle not committed */
    }
    return rc;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

/* ---- the same, set-based ----
 * Each statement takes its rows as one JSON array (?1) and walks it
 * (SQLite json_each, PostgreSQL jsonb_array_elements): one UPDATE ... FROM
 * for the workloads (RETURNING the seqs that matched their version), one
 * DELETE and one INSERT for the pods, one INSERT for the events, in the
 * arrays' order. A statement per row paid SQLite's per-statement work (a
 * statement journal, the AUTOINCREMENT lookup, trigger frames) four times
 * per placement: 43 us of CPU each; PostgreSQL's, an executor start with
 * every CHECK of the table planned again, as often. */

/* Runs sql with ?1 the JSON array and ?2 now; with seqs, collects the
 * rows' first column there (RETURNING). On PostgreSQL the statement is
 * planned at each run (made for one use): a plan kept on the session was
 * made when the tables were small, and the server kept the one of its
 * first runs (a scan of every workload, hash-joined to the rows: 8-14 ms
 * for 4 rows on 6,400 workloads) as the tables grew, since nothing
 * analyzed them meanwhile; planned again, the rows are looked up by key. */
static int set_run(struct db__conn *c, const char *sql, struct db__text *b, int64_t now,
                   int64_t *seqs, int *n_seqs)
{
    int rc = DB_OK, src, pq = db__is_pq(c);
    struct db__stmt *st = NULL;

    if (b->failed)
        return DB_ENOMEM;
    if (pq ? (rc = db__prep_once(c, sql, &st)) != DB_OK : !(st = db__prep(c, sql, &rc)))
        return rc;
    db__bind_static(st, 1, b->s ? b->s : "[]");
    db__bind_int64(st, 2, now);
    while ((src = db__step(st)) == DB__ROW)
        if (seqs)
            seqs[(*n_seqs)++] = db__col_int64(st, 0);
    rc = src == DB__DONE ? DB_OK : src < 0 ? src : DB_EIO;
    if (!pq)
        return db__done(st, rc);
    db__finalize(st);
    return rc;
}

static int has_i64(const int64_t *sorted, int n, int64_t v)
{
    return bsearch(&v, sorted, (size_t)n, sizeof(int64_t), cmp_i64) != NULL;
}

/* The four statements of a cycle, per engine: [0] SQLite (json_each,
 * rowid), [1] PostgreSQL (jsonb_array_elements WITH ORDINALITY; no rowid:
 * DELETE ... USING). Same rows, same order, same version check. */
struct set_sql {
    const char *upd, *del, *ins, *evs;
};

/* jsonb, parsed once per statement: on json each ->> parses its row again up
 * to the value it reads (13 us a row of 7 values against 8 us, psql) */
#define PQ_ROWS(cols) \
    "SELECT " cols " FROM jsonb_array_elements(?1::jsonb) WITH ORDINALITY AS j (v, k)"
#define PQ_I(n) "(v ->> " #n ")::bigint"
/* The same rows as a subquery to join to a table, told how many they are:
 * the planner takes a function's rows for 100, and for those a hash join
 * over a scan of the whole table looked cheaper than 100 lookups by key
 * (EXPLAIN ANALYZE: 6.5 ms for 8 rows against 7,702 workloads, 0.16 ms
 * looked up). The statement is planned at each run with its parameters
 * (set_run), so the LIMIT is the array's length, a constant there. */
#define PQ_ROWS_JOIN(cols) PQ_ROWS(cols) " LIMIT jsonb_array_length(?1::jsonb)"
/* A workload not deleted, said so that no index serves it: on a table not
 * analyzed yet (a database minutes old) the planner takes `deleted_at =
 * 0` for a rare value, and joined the rows to every live workload through
 * the index of live ones (a hash join: 26-30 ms for 64 rows on 22,858
 * workloads) instead of looking each up by its seq (4 ms). */
#define PQ_LIVE "workloads.deleted_at + 0 = 0"

/* A new pod's uid, as the pods_new_uid trigger makes it (schema.c), given
 * in the insert: the trigger then does not run, which on SQLite is one
 * more UPDATE a pod and on PostgreSQL a PL/pgSQL call a pod. */
#define LITE_UID "lower(hex(randomblob(16)))"
#define PQ_UID "replace(gen_random_uuid()::text, '-', '')"

static const struct set_sql set_sql[2] = {
    {"UPDATE workloads SET phase_updated_at = CASE WHEN workloads.phase = u.phase THEN"
     " workloads.phase_updated_at ELSE ?2 END, phase = u.phase, phase_reason = u.reason,"
     " phase_message = u.message, started_ms = u.started, stale_since_ms = u.stale,"
     " updated_at = ?2"
     " FROM (SELECT value ->> 0 AS seq, value ->> 1 AS version, value ->> 2 AS phase,"
     " value ->> 3 AS reason, value ->> 4 AS message, value ->> 5 AS started,"
     " value ->> 6 AS stale FROM json_each(?1)) AS u"
     " WHERE workloads.seq = u.seq AND workloads.version = u.version"
     " AND workloads.deleted_at = 0 RETURNING workloads.seq",
     "DELETE FROM pods WHERE rowid IN (SELECT d.rowid FROM json_each(?1) AS j"
     " JOIN pods AS d ON d.workload_seq = j.value ->> 0 AND d.idx = j.value ->> 1"
     " WHERE j.value ->> 2 <= 0 OR d.node_seq != j.value ->> 2"
     " OR d.devices != j.value ->> 3) AND ?2 = ?2",
     "INSERT OR IGNORE INTO pods (workload_seq, idx, node_seq, devices, uid)"
     " SELECT j.value ->> 0, j.value ->> 1, j.value ->> 2, j.value ->> 3, " LITE_UID
     " FROM json_each(?1) AS j WHERE j.value ->> 2 > 0 AND ?2 = ?2 ORDER BY j.key",
     "INSERT INTO events (workload_seq, created_at, type, reason, message, pool_seq)"
     " SELECT j.value ->> 0, ?2, j.value ->> 1, j.value ->> 2, j.value ->> 3, j.value ->> 4"
     " FROM json_each(?1) AS j ORDER BY j.key"},
    {"UPDATE workloads SET phase_updated_at = CASE WHEN workloads.phase = u.phase THEN"
     " workloads.phase_updated_at ELSE ?2 END, phase = u.phase, phase_reason = u.reason,"
     " phase_message = u.message, started_ms = u.started, stale_since_ms = u.stale,"
     " updated_at = ?2"
     " FROM (" PQ_ROWS_JOIN(PQ_I(0) " AS seq, " PQ_I(1) " AS version, v ->> 2 AS phase,"
                       " v ->> 3 AS reason, v ->> 4 AS message, " PQ_I(5) " AS started, "
                       PQ_I(6) " AS stale") ") AS u"
     " WHERE workloads.seq = u.seq AND workloads.version = u.version"
     " AND " PQ_LIVE " RETURNING workloads.seq",
     "DELETE FROM pods AS d USING (" PQ_ROWS_JOIN(PQ_I(0) " AS seq, " PQ_I(1) " AS idx, " PQ_I(2)
                                           " AS node, " PQ_I(3) " AS devices") ") AS p"
     " WHERE d.workload_seq = p.seq AND d.idx = p.idx"
     " AND (p.node <= 0 OR d.node_seq != p.node OR d.devices != p.devices) AND ?2 = ?2",
     "INSERT INTO pods (workload_seq, idx, node_seq, devices, uid) "
     PQ_ROWS(PQ_I(0) ", " PQ_I(1) ", " PQ_I(2) ", " PQ_I(3) ", " PQ_UID)
     " WHERE " PQ_I(2) " > 0 AND ?2 = ?2 ORDER BY k ON CONFLICT DO NOTHING",
     "INSERT INTO events (workload_seq, created_at, type, reason, message, pool_seq) "
     PQ_ROWS(PQ_I(0) ", ?2, v ->> 1, v ->> 2, v ->> 3, " PQ_I(4)) " ORDER BY k"},
};

/* Does event i go with this turn? (One that names no update goes with
 * the first.) */
static int in_turn(const struct apply_arg *a, int i)
{
    int u = a->ev_upd ? a->ev_upd[i] : 0;

    if (!a->ev_upd)
        return 1;
    return u < 0 ? a->from == 0 : u >= a->from && u < a->to;
}

/* Pod k of u as a row of the pods' statements: [seq, idx, node, devices]. */
static void pod_row(struct db__text *b, const struct db_wl_update *u, int k)
{
    db__text_add(b, b->n > 1 ? ",[" : "[", b->n > 1 ? 2 : 1);
    db__json_int(b, 0, u->seq);
    db__json_int(b, 1, k);
    db__json_int(b, 1, u->pods[k].node_seq);
    db__json_int(b, 1, (int64_t)u->pods[k].devices);
    db__text_add(b, "]", 1);
}

static int apply_set(struct db__conn *c, struct apply_arg *a)
{
    const struct db_cycle *cy = a->c;
    const struct set_sql *q = &set_sql[db__is_pq(c)];
    struct db__text b = {0}, pods = {0}, gone = {0};
    int64_t *done = malloc(sizeof(int64_t) * (size_t)(a->to - a->from + 1));
    int n_done = 0, i, k, rc;

    if (!done)
        return DB_ENOMEM;
    /* Step 1: the workloads; the ones that matched come back */
    db__text_add(&b, "[", 1);
    for (i = a->from; i < a->to; i++) {
        const struct db_wl_update *u = &cy->updates[i];
        db__text_add(&b, i > a->from ? ",[" : "[", i > a->from ? 2 : 1);
        db__json_int(&b, 0, u->seq);
        db__json_int(&b, 1, u->version);
        db__json_str(&b, u->phase);
        db__json_str(&b, u->phase_reason);
        db__json_str(&b, u->phase_message);
        db__json_int(&b, 1, u->started_ms);
        db__json_int(&b, 1, u->stale_since_ms);
        db__text_add(&b, "]", 1);
    }
    db__text_add(&b, "]", 1);
    rc = set_run(c, q->upd, &b, cy->now_ms, done, &n_done);
    qsort(done, (size_t)n_done, sizeof(int64_t), cmp_i64);
    /* Step 2: the pods of those whose pods changed: the changed rows go,
     * the new placements come (a pod left as it was keeps its row). The
     * rows of a workload the cycle only placed more pods of stay, so the
     * delete does not look them up, and runs only when some may go. */
    db__text_add(&pods, "[", 1);
    db__text_add(&gone, "[", 1);
    for (i = a->from; rc == DB_OK && i < a->to; i++) {
        const struct db_wl_update *u = &cy->updates[i];
        if (!has_i64(done, n_done, u->seq)) {
            a->skipped[a->n_skipped++] = u->seq;
            continue;
        }
        (*a->n_applied)++;
        for (k = 0; u->pods_changed && k < u->n_pods; k++) {
            pod_row(&pods, u, k);
            if (!u->pods_added_only)
                pod_row(&gone, u, k);
        }
    }
    db__text_add(&pods, "]", 1);
    db__text_add(&gone, "]", 1);
    if (rc == DB_OK && (pods.failed || gone.failed))
        rc = DB_ENOMEM; /* not a skip: a text that failed may look empty */
    if (rc == DB_OK && gone.n > 2)
        rc = set_run(c, q->del, &gone, cy->now_ms, NULL, NULL);
    if (rc == DB_OK && pods.n > 2)
        rc = set_run(c, q->ins, &pods, cy->now_ms, NULL, NULL);
    for (i = a->from; rc == DB_OK && i < a->to; i++) {
        const struct db_wl_update *u = &cy->updates[i];
        if (u->pods_changed && u->n_pods > 0 && u->pods[0].node_seq > 0 &&
            has_i64(done, n_done, u->seq))
            db__fault("cycle-pod"); /* a placement written, the cycle not committed */
    }
    /* Step 3: the events of the updates that applied, in order */
    b.n = 0;
    db__text_add(&b, "[", 1);
    for (i = 0, k = 0; rc == DB_OK && i < cy->n_events; i++) {
        const struct db_wl_event *e = &cy->events[i];
        if (!in_turn(a, i) || !has_i64(done, n_done, e->workload_seq))
            continue;
        db__text_add(&b, k ? ",[" : "[", k ? 2 : 1);
        k++;
        db__json_int(&b, 0, e->workload_seq);
        db__json_str(&b, e->type);
        db__json_str(&b, e->reason);
        db__json_str(&b, e->message);
        db__json_int(&b, 1, e->pool_seq);
        db__text_add(&b, "]", 1);
    }
    db__text_add(&b, "]", 1);
    if (rc == DB_OK && k > 0)
        rc = set_run(c, q->evs, &b, cy->now_ms, NULL, NULL);
    free(b.s);
    free(pods.s);
    free(gone.s);
    free(done);
    return rc;
}

/* Does any workload have two updates in the cycle? (UPDATE ... FROM would
 * apply one of them; row by row, the last wins.) */
static int seqs_repeat(const struct db_cycle *cy)
{
    int64_t *seqs = malloc(sizeof(int64_t) * (size_t)(cy->n_updates + 1));
    int i, rep = seqs == NULL;

    for (i = 0; seqs && i < cy->n_updates; i++)
        seqs[i] = cy->updates[i].seq;
    if (seqs)
        qsort(seqs, (size_t)cy->n_updates, sizeof(int64_t), cmp_i64);
    for (i = 1; seqs && !rep && i < cy->n_updates; i++)
        rep = seqs[i] == seqs[i - 1];
    free(seqs);
    return rep;
}

/* This turn's updates, [a->from, a->to), and their events. */
static int apply_range(struct db__conn *c, struct apply_arg *a)
{
    const struct db_cycle *cy = a->c;
    int i, rc = DB_OK, applied = 0;

    /* set-based: a statement per table; row by row only where a workload
     * has two updates (the last one wins) */
    if (!a->repeats)
        return apply_set(c, a);
    for (i = a->from; rc == DB_OK && i < a->to; i++) {
        rc = apply_update(c, &cy->updates[i], cy->now_ms, &applied);
        if (rc == DB_OK && applied)
            (*a->n_applied)++;
        else if (rc == DB_OK)
            a->skipped[a->n_skipped++] = cy->updates[i].seq;
    }
    qsort(a->skipped, (size_t)a->n_skipped, sizeof(int64_t), cmp_i64);
    for (i = 0; rc == DB_OK && i < cy->n_events; i++) {
        const struct db_wl_event *e = &cy->events[i];
        if (!in_turn(a, i) || bsearch(&e->workload_seq, a->skipped, (size_t)a->n_skipped,
                                      sizeof(int64_t), cmp_i64))
            continue;
        rc = db__event_in_pool(c, e->workload_seq, cy->now_ms, e->type, e->reason, e->message,
                               e->pool_seq);
    }
    return rc;
}

/* One turn: the updates before the last n_after at once, then n_after in
 * turns of t->rows, which each turn's pace sets for the next so that one
 * runs about t->turn_us. DB__MORE while updates remain. */
static int apply_fn(struct db__conn *c, void *arg)
{
    struct apply_arg *a = arg;
    struct db_turns *t = a->t;
    int n = a->c->n_updates, first = t ? n - t->n_after : n, rows, rc;
    int64_t turn_us = t ? t->turn_us * (db__is_pq(c) ? PQ_TURN_SCALE : 1) : 0;
    int64_t t0 = db__mono_us(), cpu0 = db__thread_cpu_us(), us, cpu;

    if (t && t->rows < TURN_ROWS_MIN)
        t->rows = TURN_ROWS_START;
    rows = a->to < first ? first - a->to : t ? t->rows : n;
    a->from = a->to;
    a->to = rows < n - a->from ? a->from + rows : n;
    rc = apply_range(c, a);
    us = db__mono_us() - t0;
    cpu = db__thread_cpu_us() - cpu0;
    a->held_us = us > a->held_us ? us : a->held_us;
    a->held_cpu_us = cpu > a->held_cpu_us ? cpu : a->held_cpu_us;
    if (!t)
        return rc;
    if (t->held_cpu_us)
        t->held_cpu_us[t->n_turns] = cpu;
    t->held_us[t->n_turns++] = us;
    if (a->from >= first && a->to - a->from == t->rows) {
        /* the pace of this turn, at most doubling or halving the next */
        int64_t fit = (int64_t)t->rows * turn_us / (us > 0 ? us : 1);
        t->rows = fit > 2 * t->rows ? 2 * t->rows : fit < t->rows / 2 ? t->rows / 2 : (int)fit;
        t->rows = t->rows < TURN_ROWS_MIN ? TURN_ROWS_MIN
                  : t->rows > TURN_ROWS_MAX ? TURN_ROWS_MAX : t->rows;
    }
    return rc == DB_OK && a->to < n ? DB__MORE : rc;
}

struct seq_at {
    int64_t seq;
    int at;
};

static int cmp_seq_at(const void *x, const void *y)
{
    const struct seq_at *a = x, *b = y;

    return a->seq != b->seq ? (a->seq > b->seq) - (a->seq < b->seq) : (a->at > b->at) - (a->at < b->at);
}

/* ev_upd[i]: the last update of event i's workload, or -1. */
static int *events_updates(const struct db_cycle *cy)
{
    struct seq_at *by = malloc(sizeof(*by) * ((size_t)cy->n_updates + 1));
    int *ev = malloc(sizeof(int) * ((size_t)cy->n_events + 1));
    int i;

    for (i = 0; by && ev && i < cy->n_updates; i++) {
        by[i].seq = cy->updates[i].seq;
        by[i].at = i;
    }
    if (by && ev)
        qsort(by, (size_t)cy->n_updates, sizeof(*by), cmp_seq_at);
    for (i = 0; by && ev && i < cy->n_events; i++) {
        struct seq_at key = {cy->events[i].workload_seq, -1}, *f;
        int lo = 0, hi = cy->n_updates;
        while (lo < hi) { /* the first entry past (seq, -1) */
            int mid = lo + (hi - lo) / 2;
            if (cmp_seq_at(&by[mid], &key) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (f = NULL; lo < cy->n_updates && by[lo].seq == key.seq; lo++)
            f = &by[lo];
        ev[i] = f ? f->at : -1;
    }
    if (!by) {
        free(ev);
        ev = NULL;
    }
    free(by);
    return ev;
}

/* A pending reason and message alone: the columns no index covers, so a
 * row costs one b-tree write. */
static int apply_reason(struct db__conn *c, const struct db_wl_update *u, int64_t now,
                        int *applied)
{
    static const char sql[] =
        "UPDATE workloads SET phase_reason = ?1, phase_message = ?2, updated_at = ?3"
        " WHERE seq = ?4 AND version = ?5 AND deleted_at = 0";

    return apply_cols(c, sql, u, UPDATE_REASON, 2, now, applied);
}

/* On PostgreSQL, the reasons of up to REASON_ROWS workloads in one
 * statement (a statement a row was a round trip a row: the version check
 * needs its count back), with the same version check; the rows that
 * matched come back. */
#define REASON_ROWS 64
static const char reasons_set_sql[] =
    "UPDATE workloads SET phase_reason = u.reason, phase_message = u.message, updated_at = ?2"
    " FROM (" PQ_ROWS_JOIN(PQ_I(0) " AS seq, " PQ_I(1) " AS version, v ->> 2 AS reason,"
                      " v ->> 3 AS message") ") AS u"
    " WHERE workloads.seq = u.seq AND workloads.version = u.version"
    " AND " PQ_LIVE " RETURNING workloads.seq";

/* The reasons of updates [from, to) as one statement; 1 in *row_by_row
 * instead (nothing run) where a workload repeats among them (UPDATE ...
 * FROM would apply one; row by row, the last wins). */
static int reasons_set(struct db__conn *c, struct apply_arg *a, int from, int to,
                       int *row_by_row)
{
    const struct db_cycle *cy = a->c;
    int64_t seqs[REASON_ROWS];
    struct db__text b = {0};
    int i, n = 0, rc;

    for (i = from; i < to; i++)
        seqs[i - from] = cy->updates[i].seq;
    qsort(seqs, (size_t)(to - from), sizeof(int64_t), cmp_i64);
    for (i = 1, *row_by_row = 0; i < to - from && !*row_by_row; i++)
        *row_by_row = seqs[i] == seqs[i - 1];
    if (*row_by_row)
        return DB_OK;
    db__text_add(&b, "[", 1);
    for (i = from; i < to; i++) {
        const struct db_wl_update *u = &cy->updates[i];
        db__text_add(&b, i > from ? ",[" : "[", i > from ? 2 : 1);
        db__json_int(&b, 0, u->seq);
        db__json_int(&b, 1, u->version);
        db__json_str(&b, u->phase_reason);
        db__json_str(&b, u->phase_message);
        db__text_add(&b, "]", 1);
    }
    db__text_add(&b, "]", 1);
    rc = set_run(c, reasons_set_sql, &b, cy->now_ms, seqs, &n);
    *a->n_applied += rc == DB_OK ? n : 0;
    free(b.s);
    return rc;
}

static int reasons_fn(struct db__conn *c, void *arg)
{
    struct apply_arg *a = arg;
    const struct db_cycle *cy = a->c;
    int pq = db__is_pq(c), rows = pq ? REASON_ROWS : 1; /* SQLite: a row is no round trip */
    int rc = DB_OK, applied = 0, row_by_row = !pq, to;
    int64_t t0 = db__mono_us(), t = t0, cpu0 = db__thread_cpu_us();

    a->n_done = 0;
    while (rc == DB_OK && a->n_done < cy->n_updates && (a->n_done == 0 || t - t0 < a->budget_us)) {
        to = cy->n_updates - a->n_done < rows ? cy->n_updates : a->n_done + rows;
        if (pq)
            rc = reasons_set(c, a, a->n_done, to, &row_by_row);
        if (rc == DB_OK && !row_by_row)
            a->n_done = to;
        for (; rc == DB_OK && row_by_row && a->n_done < to; a->n_done++) {
            rc = apply_reason(c, &cy->updates[a->n_done], cy->now_ms, &applied);
            *a->n_applied += rc == DB_OK && applied;
        }
        t = db__mono_us();
    }
    a->held_us = t - t0;
    a->held_cpu_us = db__thread_cpu_us() - cpu0;
    return rc;
}

int db_reasons_apply(struct db *db, const struct db_cycle *c, int64_t budget_us, int *n_done,
                     int *n_applied, int64_t *held_us, int64_t *held_cpu_us)
{
    struct apply_arg a = {.c = c, .n_applied = n_applied, .budget_us = budget_us};
    int rc;

    *n_done = 0;
    *held_us = *held_cpu_us = 0;
    if (c->n_updates == 0)
        return DB_OK;
    if (c->n_events != 0)
        return DB_EINVAL;
    rc = db__write(db, reasons_fn, &a);
    *n_done = a.n_done;
    *held_us = a.held_us;
    *held_cpu_us = a.held_cpu_us;
    return rc;
}

static int cycle_apply(struct db *db, const struct db_cycle *c, struct db_turns *t,
                       int *n_applied)
{
    struct apply_arg a = {.c = c, .n_applied = n_applied, .t = t};
    int rc = DB_ENOMEM;

    *n_applied = 0;
    if (t)
        t->n_turns = 0;
    if (c->n_updates == 0 && c->n_events == 0)
        return DB_OK;
    if (t && (t->n_after < 0 || t->n_after > c->n_updates))
        return DB_EINVAL;
    a.skipped = malloc(sizeof(int64_t) * (size_t)(c->n_updates + 1));
    if (t && t->n_after > 0)
        a.ev_upd = events_updates(c);
    a.repeats = seqs_repeat(c);
    if (a.skipped && (!t || t->n_after == 0 || a.ev_upd))
        rc = db__write(db, apply_fn, &a);
    if (rc != DB_OK)
        *n_applied = 0;
    free(a.ev_upd);
    free(a.skipped);
    return rc;
}

int db_cycle_apply(struct db *db, const struct db_cycle *c, int *n_applied)
{
    return cycle_apply(db, c, NULL, n_applied);
}

int db_cycle_apply_turns(struct db *db, const struct db_cycle *c, struct db_turns *t,
                         int *n_applied)
{
    return cycle_apply(db, c, t, n_applied);
}
