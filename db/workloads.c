/*
 * workloads.c: workloads, their pods and their events, and the list query
 * behind GET /api/v1/workloads (filterBy, sortBy, paging).
 *
 * Workload states written here (the scheduler's own transitions are in
 * snapshot.c):
 *   insert                 -> Pending     (desired Running), event Submitted
 *   Pending|Running|...    -> Stopped     db_workload_act(SUSPEND), pods freed
 *   Stopped                -> Pending     db_workload_act(RESUME)
 *   any live               -> Deleting    db_workload_act(DELETE), pods freed,
 *                                         deleted_at set (kept for history);
 *                                         Completed and Failed keep their phase
 *   Deleting               -> Stopped     db__deletion_finish: no run of its
 *                                         pods is open any more (at once on
 *                                         simulated nodes; when agents report
 *                                         them stopped, or their node is lost);
 *                                         event Deleted
 *   deleted, not Deleting  -> (gone)      db_workloads_purge after the retention,
 *                                         or when its project is deleted
 *   Pending|Running|...    -> Pending     db_workload_respec (new image, spec or
 *                                         replicas), pods freed; Stopped stays
 *
 * Invariants:
 *   1. Every API change bumps `version`, so a scheduling cycle that read
 *      the workload earlier cannot overwrite the change (snapshot.c).
 *   2. A live workload's name is unique in its project (partial index).
 *   3. Every transition writes an event in the same savepoint.
 *   4. The list query is built only from a fixed table of fields and
 *      operators; values are always bound, never spliced into SQL.
 */
#include "db_int.h"
#include "db_ha.h"
#include "decimal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WL_COLS                                                                          \
    "w.seq, w.id, w.name, w.project_seq, q.id, q.name, coalesce(d.id, ''),"              \
    " coalesce(d.name, ''), w.type, w.priority_class, w.priority, w.preemptible,"         \
    " w.desired_phase, w.phase, w.phase_reason, w.phase_message, w.n_pods, w.min_pods,"   \
    " w.gpu_devices, w.gpu_portion, w.cpu_milli, w.mem_mib, w.pools, w.node_type,"        \
    " w.image, w.created_by, w.queued_seq, w.started_ms, w.stale_since_ms, w.created_at," \
    " w.updated_at, w.phase_updated_at, w.deleted_at, w.completed_at, w.version,"         \
    " (SELECT count(*) FROM pods WHERE workload_seq = w.seq), w.spec, w.affinity,"        \
    " w.gpu_memory_mib, w.rules, CASE WHEN w.gpu_memory_mib > 0 THEN (SELECT"              \
    " coalesce(sum(" DB_POD_GPU_ON("w", "n") "), 0) FROM pods p JOIN nodes n"                \
    " ON n.seq = p.node_seq WHERE p.workload_seq = w.seq) END, w.run_ms, w.topology"
#define WL_NCOLS 43 /* the columns of WL_COLS (wl_cols) */
#define WL_FROM                                                  \
    " FROM workloads w JOIN queues q ON q.seq = w.project_seq" \
    " LEFT JOIN queues d ON d.seq = q.parent_seq"

const char *db_type_name(int type)
{
    static const char *const names[] = {"Training", "Workspace", "Inference", "Distributed"};

    return type >= 0 && type < 4 ? names[type] : "Training";
}

/* The GPU its pods hold, in thousandths (DB_POD_GPU_ON summed over its
 * pods). Only a GPU-memory request's depends on each pod's node, so only
 * that one is read with the row (`mem_sum`, column 40, NULL otherwise: a
 * subquery joining every pod to its node was a fifth of a list's
 * statement); the others are a constant per pod (every pod has a node:
 * a foreign key). */
static int64_t wl_alloc_gpu(const struct db_workload *w, int64_t mem_sum)
{
    if (w->gpu_memory_mib > 0)
        return mem_sum;
    if (w->gpu_portion > 0)
        return (int64_t)w->running_pods * (w->gpu_devices > 1 ? w->gpu_devices : 1) *
               w->gpu_portion;
    return (int64_t)w->running_pods * w->gpu_devices * 1000;
}

/* The GPU its pods hold, read after the row from mem_sum (column 40,
 * read into alloc_gpu_milli). */
static void wl_fix(void *row)
{
    struct db_workload *w = row;

    w->alloc_gpu_milli = wl_alloc_gpu(w, w->alloc_gpu_milli);
}

/* A workload's row: WL_COLS, in order. */
static const struct db__col wl_cols[] = {
    DB__COLS(struct db_workload, seq, id, name, project_seq, project_id, project_name,
        department_id, department_name, type, priority_class, priority, preemptible, desired_phase,
        phase, phase_reason, phase_message, n_pods, min_pods, gpu_devices, gpu_portion, cpu_milli,
        mem_mib, pools, node_type, image, created_by, queued_seq, started_ms, stale_since_ms,
        created_at, updated_at, phase_updated_at, deleted_at, completed_at, version, running_pods),
    DB__COL(struct db_workload, spec, DB__DUP_NULL),
    DB__COLS(struct db_workload, affinity, gpu_memory_mib, rules, alloc_gpu_milli, run_ms,
        topology),
};
static const struct db__shape wl_shape = DB__SHAPE(struct db_workload, wl_cols, wl_fix);

void db_workload_clear(struct db_workload *w)
{
    db__row_clear(&wl_shape, w);
}

void db_workloads_free(struct db_workload *w, int n)
{
    db__rows_free(&wl_shape, w, n);
}

/* An event of a workload; pool_seq: the node pool an eviction took its
 * pods from (0: none). */
int db__event_in_pool(struct db__conn *c, int64_t wl_seq, int64_t now_ms, const char *type,
                      const char *reason, const char *message, int64_t pool_seq)
{
    static const char sql[] =
        "INSERT INTO events (workload_seq, created_at, type, reason, message, pool_seq)"
        " VALUES (?, ?, ?, ?, ?, ?)";
    const struct db__arg args[] = {DB__I(wl_seq), DB__I(now_ms), DB__S(type), DB__S(reason),
                                   DB__S(message), DB__I(pool_seq)};

    return db__exec_args(c, sql, args, DB__NARGS(args));
}

int db__event(struct db__conn *c, int64_t wl_seq, int64_t now_ms, const char *type,
              const char *reason, const char *message)
{
    return db__event_in_pool(c, wl_seq, now_ms, type, reason, message, 0);
}

/* ---- insert ---- */

/* Who a cap check counts for: n more Pending workloads of one project and
 * one submitter. */
struct pending_check {
    const struct db_pending_caps *caps;  /* NULL: none */
    int64_t project_seq;
    const char *created_by;
    int n;
    char *why;
    size_t len;
};

/* The Pending workloads of the project and of the user, each counted up
 * to its cap (0: not counted), so a check reads at most that many entries
 * of the partial indexes of migration 92 and nothing else; and the
 * project's name, for the refusal. */
struct pending_counts {
    int64_t project, user;
    char name[DB_NAME_LEN];
};
DB__TABLE(counts_cols, counts_shape, struct pending_counts, NULL, project, user, name);

static int pending_counts(struct db__conn *c, const struct pending_check *p,
                          struct pending_counts *out)
{
    static const char sql[] =
        "SELECT (SELECT count(*) FROM (SELECT 1 FROM workloads WHERE deleted_at = 0"
        " AND phase = 'Pending' AND project_seq = ?1 LIMIT ?3) AS p),"
        " (SELECT count(*) FROM (SELECT 1 FROM workloads WHERE deleted_at = 0"
        " AND phase = 'Pending' AND created_by = ?2 LIMIT ?4) AS u),"
        " coalesce((SELECT name FROM queues WHERE seq = ?1), '')";
    const struct db__arg args[] = {
        DB__I(p->project_seq), DB__S(p->created_by),
        DB__I(p->caps->per_project > 0 ? p->caps->per_project : 0),
        DB__I(p->caps->per_user > 0 && p->created_by[0] ? p->caps->per_user : 0)};

    return db__query_row(c, sql, args, DB__NARGS(args), &counts_shape, out);
}

static int caps_on(const struct pending_check *p)
{
    return p->caps && (p->caps->per_project > 0 || p->caps->per_user > 0);
}

/* DB_ELIMIT (with why) if p's n more Pending workloads would pass a cap,
 * given the counts pending_counts() read. */
static int caps_verdict(const struct pending_check *p, int64_t project, int64_t user,
                        const char *name)
{
    char more[64] = "";

    if (p->n > 1)
        snprintf(more, sizeof(more), "; %d more would pass it", p->n);
    if (p->caps->per_project > 0 && project + p->n > p->caps->per_project) {
        snprintf(p->why, p->len, "project %s has %lld pending workloads, and %d is the most this"
                 " server takes per project (allotd --max-pending-per-project)%s: delete some or"
                 " wait until they run", name, (long long)project, p->caps->per_project, more);
        return DB_ELIMIT;
    }
    if (p->caps->per_user > 0 && p->created_by[0] && user + p->n > p->caps->per_user) {
        snprintf(p->why, p->len, "%s has %lld pending workloads, and %d is the most this server"
                 " takes per user (allotd --max-pending-per-user)%s: delete some or wait until"
                 " they run", p->created_by, (long long)user, p->caps->per_user, more);
        return DB_ELIMIT;
    }
    return DB_OK;
}

/* DB_ELIMIT (with why) if n more Pending workloads would pass a cap. Run
 * in the savepoint of the write that adds them, so the count cannot go
 * stale before the write commits. */
static int pending_capped(struct db__conn *c, const struct pending_check *p)
{
    struct pending_counts n;
    int rc;

    if (!caps_on(p))
        return DB_OK;
    rc = pending_counts(c, p, &n);
    return rc == DB_OK ? caps_verdict(p, n.project, n.user, n.name) : rc;
}

/* The insert of a submission. queued_seq is its own seq, so the insert
 * writes both, the seq taken first (a second write of the row would cost
 * a statement and check the table's constraints again): on PostgreSQL
 * from the sequence; on SQLite the seq AUTOINCREMENT would hand out
 * (next_seq), read once per savepoint and counted on by each insert in
 * it (an explicit seq moves sqlite_sequence on as AUTOINCREMENT's own
 * would, so a purged seq is still never given again). */
#define INSERT_COLS                                                                       \
    "id, name, project_seq, type, priority_class, priority, preemptible, desired_phase,"   \
    " phase, n_pods, min_pods, gpu_devices, gpu_portion, cpu_milli, mem_mib, pools,"       \
    " node_type, image, created_by, created_at, updated_at, phase_updated_at, spec,"       \
    " affinity, gpu_memory_mib, rules, topology"
#define INSERT_VALUES "?,?,?,?,?,?,?,'Running','Pending',?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?"

/* The parameters of INSERT_VALUES, in order: a new workload's times are
 * its creation's. */
static const struct db__col wl_insert_cols[] = {
    DB__COLS(struct db_workload, id, name, project_seq, type, priority_class, priority,
        preemptible, n_pods, min_pods, gpu_devices, gpu_portion, cpu_milli, mem_mib, pools,
        node_type, image, created_by, created_at, created_at, created_at),
    DB__COL(struct db_workload, spec, DB__DUP_NULL),
    DB__COLS(struct db_workload, affinity, gpu_memory_mib, rules, topology),
};

/* SQLite: the last seq AUTOINCREMENT gave out in workloads, as it reads
 * it (the larger of its counter and the table's largest seq). */
static int last_seq(struct db__conn *c, int64_t *out)
{
    static const char sql[] =
        "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'workloads'), 0),"
        " coalesce((SELECT max(seq) FROM workloads), 0))";

    return db__query_one(c, sql, NULL, 0, db__read_int64, out);
}

/* The message of a submission's event. */
static void submitted_msg(const struct db_workload *w, char *msg, size_t len)
{
    snprintf(msg, len, "%s %s submitted by %s", db_type_name(w->type), w->name,
             w->created_by[0] ? w->created_by : "unknown");
}

/* One workload; *last: SQLite's last seq given in this savepoint (-1: not
 * read yet). */
static int insert_fn(struct db__conn *c, struct db_workload *w, int64_t *last)
{
    static const char sql[] =
        "INSERT INTO workloads (" INSERT_COLS ", seq, queued_seq) VALUES (" INSERT_VALUES
        ", ?26, ?26)";
    static const char sql_pq[] =
        "INSERT INTO workloads (" INSERT_COLS ", seq, queued_seq) SELECT " INSERT_VALUES
        ", s.n, s.n FROM (SELECT nextval(pg_get_serial_sequence('workloads', 'seq')) AS n) AS s";
    char msg[DB_MSG_LEN];
    int rc = DB_OK;
    int pq = db__is_pq(c);
    struct db__stmt *st;

    if (!pq && *last < 0 && (rc = last_seq(c, last)) != DB_OK)
        return rc;
    st = db__prep(c, pq ? sql_pq : sql, &rc);
    if (!st)
        return rc;
    db__cols_bind(st, 1, wl_insert_cols, DB__NCOLS(wl_insert_cols), w);
    if (!pq)
        db__bind_int64(st, DB__NCOLS(wl_insert_cols) + 1, *last + 1);
    rc = db__done(st, db__step_done(st));
    if (rc != DB_OK)
        return rc;
    w->seq = w->queued_seq = pq ? db__last_id(c) : ++*last;
    submitted_msg(w, msg, sizeof(msg));
    rc = db__event(c, w->seq, w->created_at, "Normal", "Submitted", msg);
    if (rc == DB_OK)
        rc = db__change(c, DB_CHANGE_WORKLOAD, w->seq);
    if (rc == DB_OK)
        db__fault_note("submit"); /* tests only (fault.c) */
    return rc;
}

struct insert_many_arg {
    struct db_workload *ws;
    int n;
    struct pending_check check;
};

/* The cap check, then every insert: all or none. */
static int insert_many(struct db__conn *c, struct insert_many_arg *a, int64_t *last)
{
    int i, rc = pending_capped(c, &a->check);

    for (i = 0; i < a->n && rc == DB_OK; i++)
        rc = insert_fn(c, &a->ws[i], last);
    return rc;
}

/* One submission in a savepoint of its own. */
static int insert_many_fn(struct db__conn *c, void *arg)
{
    int64_t last = -1;

    return insert_many(c, arg, &last);
}

/* ---- submissions as a group (SQLite) ----
 * The writer hands the submissions queued together to insert_lite_group
 * in one savepoint, one op after the other as each would run alone (an
 * op past a cap is refused before it writes anything, and the ops after
 * it count what the ones before wrote): a savepoint and its release
 * saved per submission, and the seq read once for the group. Any other
 * failure (a name taken, a bad value) rolls the group back and db.c runs
 * each op alone (insert_many_fn), so only the bad one fails. */
static int insert_lite_group(struct db__conn *c, void *const *args, int *rcs, int n)
{
    int64_t last = -1;
    int i, rc = DB_OK;

    for (i = 0; i < n && rc == DB_OK; i++) {
        rcs[i] = insert_many(c, args[i], &last);
        rc = rcs[i] == DB_ELIMIT ? DB_OK : rcs[i];
    }
    return rc;
}

/* ---- submissions as a set (PostgreSQL) ----
 * The writer hands the submissions queued together to insert_set_group
 * in one savepoint. Step 1: the caps, op by op in queue order, from one
 * count per project and per submitter (the counts insert_many_fn would
 * read, since each op adds its workloads before the next counts); an op
 * past a cap is refused alone and writes nothing. Step 2: one statement
 * writes every accepted workload, its Submitted event and its change-log
 * row (jsonb_array_elements WITH ORDINALITY: seqs from the sequence, rows
 * and events in queue order, as op by op; jsonb, parsed once, since json
 * would parse a row again for each of its 23 values; the sequence looked
 * up once, s, since pg_get_serial_sequence() a row searched the catalog
 * for it each time: 4-8 us a row). A failure of the statement
 * (a name taken, a bad value) rolls the group back, and db.c runs each
 * op alone (insert_many_fn), so only the bad one fails. */
#define SET_ROW(n) "(v ->> " #n ")"
#define SET_INT(n) "(v ->> " #n ")::bigint"
static const char insert_set_sql[] =
    "WITH s AS MATERIALIZED (SELECT pg_get_serial_sequence('workloads', 'seq')::regclass AS r),"
    " a AS MATERIALIZED (SELECT j.v, j.k, nextval(s.r) AS seq"
    " FROM s, jsonb_array_elements(?1::jsonb) WITH ORDINALITY AS j (v, k) ORDER BY j.k),"
    " w AS (INSERT INTO workloads (" INSERT_COLS ", seq, queued_seq) SELECT "
    SET_ROW(1) ", " SET_ROW(2) ", " SET_INT(3) ", " SET_INT(4) ", " SET_ROW(5) ", " SET_INT(6)
    ", " SET_INT(7) ", 'Running', 'Pending', " SET_INT(8) ", " SET_INT(9) ", " SET_INT(10) ", "
    SET_INT(11) ", " SET_INT(12) ", " SET_INT(13) ", " SET_ROW(14) ", " SET_ROW(15) ", "
    SET_ROW(16) ", " SET_ROW(17) ", " SET_INT(0) ", " SET_INT(0) ", " SET_INT(0) ", "
    SET_ROW(18) ", " SET_ROW(19) ", " SET_INT(20) ", " SET_ROW(21) ", " SET_ROW(22)
    ", seq, seq FROM a ORDER BY k"
    " RETURNING seq),"
    " e AS (INSERT INTO events (workload_seq, created_at, type, reason, message)"
    " SELECT seq, " SET_INT(0) ", 'Normal', 'Submitted', " SET_ROW(23) " FROM a ORDER BY k),"
    " ch AS (INSERT INTO changes (kind, workload_seq, origin, at)"
    " SELECT ?2, seq, ?3, ?4 FROM a ORDER BY k)"
    " SELECT seq FROM a ORDER BY k";

/* One workload as a row of insert_set_sql's array. */
static void set_row(struct db__text *b, const struct db_workload *w)
{
    char msg[DB_MSG_LEN];

    submitted_msg(w, msg, sizeof(msg));
    db__text_add(b, b->n > 1 ? ",[" : "[", b->n > 1 ? 2 : 1);
    db__json_int(b, 0, w->created_at);
    db__json_str(b, w->id);
    db__json_str(b, w->name);
    db__json_int(b, 1, w->project_seq);
    db__json_int(b, 1, w->type);
    db__json_str(b, w->priority_class);
    db__json_int(b, 1, w->priority);
    db__json_int(b, 1, w->preemptible);
    db__json_int(b, 1, w->n_pods);
    db__json_int(b, 1, w->min_pods);
    db__json_int(b, 1, w->gpu_devices);
    db__json_int(b, 1, w->gpu_portion);
    db__json_int(b, 1, w->cpu_milli);
    db__json_int(b, 1, w->mem_mib);
    db__json_str(b, w->pools);
    db__json_str(b, w->node_type);
    db__json_str(b, w->image);
    db__json_str(b, w->created_by);
    if (w->spec)
        db__json_str(b, w->spec);
    else
        db__text_add(b, ",null", 5);
    db__json_str(b, w->affinity);
    db__json_int(b, 1, w->gpu_memory_mib);
    db__json_str(b, w->rules);
    db__json_str(b, w->topology);
    db__json_str(b, msg);
    db__text_add(b, "]", 1);
}

/* What one project's and one submitter's Pending counts were at a group's
 * start, as pending_counts() read them (each up to its cap). */
struct tally {
    int64_t project_seq;
    const char *user;
    struct pending_counts counts;
};

/* The workloads the ops before `upto` that were accepted add to the
 * project's (user NULL) or the submitter's count. */
static int64_t group_added(void *const *args, const int *rcs, int upto, int64_t project_seq,
                           const char *user)
{
    int64_t n = 0;
    int i;

    for (i = 0; i < upto; i++) {
        const struct insert_many_arg *a = args[i];
        if (rcs[i] == DB_OK && (user ? strcmp(a->check.created_by, user) == 0
                                     : a->check.project_seq == project_seq))
            n += a->n;
    }
    return n;
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* Step 1 for op i: DB_ELIMIT (its why set) if it passes a cap. Its counts
 * are those pending_counts() would read after the ops before it: what the
 * group's start held (read once per project and submitter: t) plus what
 * those ops add, up to the count's limit. */
static int group_caps(struct db__conn *c, void *const *args, const int *rcs, int i,
                      struct tally *t, int *n_t)
{
    const struct pending_check *p = &((const struct insert_many_arg *)args[i])->check;
    struct tally *at = NULL;
    int64_t plim = p->caps->per_project > 0 ? p->caps->per_project : 0;
    int64_t ulim = p->caps->per_user > 0 && p->created_by[0] ? p->caps->per_user : 0;
    int64_t project, user;
    int k, rc;

    for (k = 0; k < *n_t && !at; k++)
        if (t[k].project_seq == p->project_seq && strcmp(t[k].user, p->created_by) == 0)
            at = &t[k];
    if (!at) {
        at = &t[*n_t];
        at->project_seq = p->project_seq;
        at->user = p->created_by;
        rc = pending_counts(c, p, &at->counts);
        if (rc != DB_OK)
            return rc;
        (*n_t)++; /* read before the group's rows: what the ops before i add comes below */
    }
    project = at->counts.project + group_added(args, rcs, i, p->project_seq, NULL);
    user = at->counts.user + group_added(args, rcs, i, 0, p->created_by);
    return caps_verdict(p, min64(project, plim), min64(user, ulim), at->counts.name);
}

static int insert_set_group(struct db__conn *c, void *const *args, int *rcs, int n)
{
    struct db__text b = {0};
    struct tally *t = calloc((size_t)n, sizeof(*t));
    int i, k, n_t = 0, src, rc = t ? DB_OK : DB_ENOMEM;
    struct db__stmt *st = NULL;

    db__text_add(&b, "[", 1);
    for (i = 0; i < n && rc == DB_OK; i++) { /* Step 1 */
        struct insert_many_arg *a = args[i];
        rcs[i] = caps_on(&a->check) ? group_caps(c, args, rcs, i, t, &n_t) : DB_OK;
        if (rcs[i] != DB_OK && rcs[i] != DB_ELIMIT)
            rc = rcs[i];
        for (k = 0; rcs[i] == DB_OK && k < a->n; k++)
            set_row(&b, &a->ws[k]);
    }
    db__text_add(&b, "]", 1);
    if (rc == DB_OK && b.failed)
        rc = DB_ENOMEM;
    if (rc == DB_OK && b.n > 2 && (st = db__prep(c, insert_set_sql, &rc)) != NULL) { /* Step 2 */
        db__bind_static(st, 1, b.s);
        db__bind_int(st, 2, DB_CHANGE_WORKLOAD);
        db__bind_int64(st, 3, db_change_origin());
        db__bind_int64(st, 4, db__now_ms());
        for (i = 0; i < n && rc == DB_OK; i++) {
            struct insert_many_arg *a = args[i];
            for (k = 0; rcs[i] == DB_OK && k < a->n && rc == DB_OK; k++) {
                src = db__step(st);
                if (src != DB__ROW) {
                    rc = src < 0 ? src : DB_EIO;
                    break;
                }
                a->ws[k].seq = a->ws[k].queued_seq = db__col_int64(st, 0);
            }
        }
        if (rc == DB_OK && db__step(st) != DB__DONE)
            rc = DB_EIO;
        rc = db__done(st, rc);
    }
    for (i = 0; i < n && rc == DB_OK; i++) {
        struct insert_many_arg *a = args[i];
        for (k = 0; rcs[i] == DB_OK && k < a->n; k++)
            db__fault_note("submit"); /* tests only (fault.c) */
    }
    free(b.s);
    free(t);
    return rc;
}

static int insert_group(struct db__conn *c, void *const *args, int *rcs, int n)
{
    return db__is_pq(c) ? insert_set_group(c, args, rcs, n) : insert_lite_group(c, args, rcs, n);
}

/* A db__committed_fn: the submission's workloads are on disk. */
static void inserted(struct db *db, void *arg)
{
    const struct insert_many_arg *a = arg;
    int i;

    for (i = 0; i < a->n; i++)
        db__submitted(db, a->ws[i].seq);
}

int db_workloads_submit(struct db *db, struct db_workload *ws, int n,
                        const struct db_pending_caps *caps, char *why, size_t len)
{
    struct insert_many_arg a = {ws, n, {caps, n > 0 ? ws[0].project_seq : 0,
                                        n > 0 ? ws[0].created_by : "", n, why, len}};
    int64_t now = db__now_ms();
    int i;

    if (len)
        why[0] = 0;
    for (i = 1; caps && i < n; i++)
        if (ws[i].project_seq != ws[0].project_seq || strcmp(ws[i].created_by, ws[0].created_by))
            return DB_EINVAL;
    for (i = 0; i < n; i++) {
        ws[i].created_at = ws[i].updated_at = ws[i].phase_updated_at = now;
        db__uuid(ws[i].id);
        snprintf(ws[i].desired_phase, sizeof(ws[i].desired_phase), "Running");
        snprintf(ws[i].phase, sizeof(ws[i].phase), "Pending");
        ws[i].version = 1;
    }
    return db__write_then(db, insert_many_fn, insert_group, inserted, &a);
}

int db_workload_submit(struct db *db, struct db_workload *w, const struct db_pending_caps *caps,
                       char *why, size_t len)
{
    return db_workloads_submit(db, w, 1, caps, why, len);
}

int db_workload_insert(struct db *db, struct db_workload *w)
{
    return db_workloads_submit(db, w, 1, NULL, NULL, 0);
}

int db_workloads_insert(struct db *db, struct db_workload *ws, int n)
{
    return db_workloads_submit(db, ws, n, NULL, NULL, 0);
}

/* ---- get ---- */

struct get_arg {
    const char *id;               /* NULL: by seq */
    int64_t seq;
    struct db_workload *w;
};

static int get_fn(struct db__conn *c, void *arg)
{
    static const char by_id[] = "SELECT " WL_COLS WL_FROM " WHERE w.id = ?";
    static const char by_seq[] = "SELECT " WL_COLS WL_FROM " WHERE w.seq = ?";
    struct get_arg *a = arg;
    int rc = DB_OK, src;
    struct db__stmt *st = db__prep(c, a->id ? by_id : by_seq, &rc);

    if (!st)
        return rc;
    if (a->id)
        db__bind_text(st, 1, a->id);
    else
        db__bind_int64(st, 1, a->seq);
    src = db__step(st);
    if (src == DB__ROW)
        rc = db__row_read(st, 0, &wl_shape, a->w);
    else
        rc = src == DB__DONE ? DB_ENOTFOUND : DB_EIO;
    return db__done(st, rc);
}

int db_workload_get(struct db *db, const char *id, struct db_workload *out)
{
    struct get_arg a = {id, 0, out};

    memset(out, 0, sizeof(*out));
    return db__read(db, get_fn, &a);
}

int db_workload_get_seq(struct db *db, int64_t seq, struct db_workload *out)
{
    struct get_arg a = {NULL, seq, out};

    memset(out, 0, sizeof(*out));
    return db__read(db, get_fn, &a);
}

/* ---- delete, suspend, resume ---- */

struct act_arg {
    int64_t seq;
    int action;
    const char *by;
    int64_t now;
    const struct db_pending_caps *caps;  /* a resume's caps; NULL: none */
    char *why;
    size_t len;
};

static int free_pods(struct db__conn *c, int64_t seq)
{
    static const char sql[] = "DELETE FROM pods WHERE workload_seq = ?";
    int rc = DB_OK;
    struct db__stmt *st = db__prep(c, sql, &rc);

    if (!st)
        return rc;
    db__bind_int64(st, 1, seq);
    return db__done(st, db__step_done(st));
}

/* A live (not deleted) workload's phase, desired phase, project and
 * submitter. */
struct live_row {
    char phase[16], desired[16];
    int64_t project_seq;
    char by[DB_NAME_LEN];
};
DB__TABLE(live_cols, live_shape, struct live_row, NULL, phase, desired, project_seq, by);

/* The live_row of workload seq; DB_ENOTFOUND if gone or deleted. */
static int live_workload(struct db__conn *c, int64_t seq, struct live_row *w)
{
    static const char sql[] =
        "SELECT phase, desired_phase, project_seq, created_by FROM workloads"
        " WHERE seq = ? AND deleted_at = 0";
    const struct db__arg key[] = {DB__I(seq)};

    return db__query_row(c, sql, key, DB__NARGS(key), &live_shape, w);
}

static int act_check(struct db__conn *c, const struct act_arg *a)
{
    struct live_row w;
    struct pending_check check = {a->caps, 0, w.by, 1, a->why, a->len};
    int rc = live_workload(c, a->seq, &w);

    if (rc != DB_OK || a->action != DB_WL_RESUME)
        return rc;
    if (strcmp(w.desired, "Stopped") != 0)
        return DB_ECONFLICT;
    check.project_seq = w.project_seq;
    return pending_capped(c, &check); /* Pending again: a submission's caps */
}

/* A deleted workload whose pods have all stopped (no open run) is done
 * being deleted: Deleting becomes Stopped, with event Deleted. */
int db__deletion_finish(struct db__conn *c, int64_t seq, int64_t now)
{
    static const char sql[] =
        "UPDATE workloads SET phase = 'Stopped', phase_message = 'deleted',"
        " phase_updated_at = ?2, updated_at = ?2, version = version + 1"
        " WHERE seq = ?1 AND deleted_at > 0 AND phase = 'Deleting' AND NOT EXISTS"
        " (SELECT 1 FROM pod_runs r WHERE r.workload_seq = ?1 AND r.finished_at = 0)";
    const struct db__arg args[] = {DB__I(seq), DB__I(now)};
    int rc = db__exec_args(c, sql, args, DB__NARGS(args));

    if (rc != DB_OK || db__changes(c) == 0)
        return rc;
    return db__event(c, seq, now, "Normal", "Deleted", "its pods stopped: the workload is deleted");
}

int db__deletions_finish(struct db__conn *c, int64_t now)
{
    static const char sql[] =
        "SELECT seq FROM workloads WHERE deleted_at > 0 AND phase = 'Deleting' AND NOT EXISTS"
        " (SELECT 1 FROM pod_runs r WHERE r.workload_seq = workloads.seq AND r.finished_at = 0)"
        " ORDER BY seq LIMIT 1";
    int rc = DB_OK, src;
    int64_t seq;
    struct db__stmt *st;

    while (rc == DB_OK && (st = db__prep(c, sql, &rc)) != NULL) {
        src = db__step(st);
        seq = src == DB__ROW ? db__col_int64(st, 0) : 0;
        rc = db__done(st, src == DB__ROW || src == DB__DONE ? DB_OK : DB_EIO);
        if (rc != DB_OK || seq == 0)
            break;
        rc = db__deletion_finish(c, seq, now);
    }
    return rc;
}

static int act_fn(struct db__conn *c, void *arg)
{
    static const char sql[] =
        "UPDATE workloads SET desired_phase = ?2,"
        " phase = CASE WHEN ?6 != 0 AND phase IN ('Completed', 'Failed') THEN phase ELSE ?3 END,"
        " phase_reason = '',"
        " phase_message = '', started_ms = 0, stale_since_ms = 0, phase_updated_at = ?4,"
        " updated_at = ?4, deleted_at = ?5, version = version + 1 WHERE seq = ?1";
    static const char *const desired[] = {"Deleted", "Stopped", "Running"};
    static const char *const phase[] = {"Deleting", "Stopped", "Pending"};
    static const char *const reason[] = {"Deleting", "Suspended", "Resumed"};
    struct act_arg *a = arg;
    char msg[DB_MSG_LEN];
    int rc = act_check(c, a);
    struct db__stmt *st;

    if (rc != DB_OK)
        return rc;
    st = db__prep(c, sql, &rc);
    if (!st)
        return rc;
    db__bind_int64(st, 1, a->seq);
    db__bind_static(st, 2, desired[a->action]);
    db__bind_static(st, 3, phase[a->action]);
    db__bind_int64(st, 4, a->now);
    db__bind_int64(st, 5, a->action == DB_WL_DELETE ? a->now : 0);
    db__bind_int(st, 6, a->action == DB_WL_DELETE);
    rc = db__done(st, db__step_done(st));
    if (rc == DB_OK && a->action != DB_WL_RESUME)
        rc = free_pods(c, a->seq);
    if (rc != DB_OK)
        return rc;
    snprintf(msg, sizeof(msg), "%s by %s", reason[a->action], a->by ? a->by : "unknown");
    rc = db__event(c, a->seq, a->now, "Normal", reason[a->action], msg);
    if (rc == DB_OK)
        rc = db__change(c, DB_CHANGE_WORKLOAD, a->seq);
    if (rc == DB_OK && a->action == DB_WL_DELETE)
        rc = db__deletion_finish(c, a->seq, a->now);
    return rc;
}

int db_workload_act(struct db *db, int64_t seq, int action, const char *by, int64_t now_ms)
{
    struct act_arg a = {seq, action, by, now_ms, NULL, NULL, 0};

    if (action < DB_WL_DELETE || action > DB_WL_RESUME)
        return DB_EINVAL;
    return db__write(db, act_fn, &a);
}

int db_workload_resume(struct db *db, int64_t seq, const char *by, int64_t now_ms,
                       const struct db_pending_caps *caps, char *why, size_t len)
{
    struct act_arg a = {seq, DB_WL_RESUME, by, now_ms, caps, why, len};

    if (len)
        why[0] = 0;
    return db__write(db, act_fn, &a);
}

/* DB_ELIMIT (with why) if the respec would make a workload Pending that
 * is not, past a cap; DB_ENOTFOUND if gone or deleted. */
static int respec_check(struct db__conn *c, const struct db_wl_respec *u)
{
    struct live_row w;
    struct pending_check check = {u->caps, 0, w.by, 1, u->why, u->len};
    int rc = live_workload(c, u->seq, &w);

    if (rc != DB_OK || strcmp(w.desired, "Stopped") == 0 || strcmp(w.phase, "Pending") == 0)
        return rc;
    check.project_seq = w.project_seq;
    return pending_capped(c, &check);
}

static int respec_fn(struct db__conn *c, void *arg)
{
    static const char sql[] =
        "UPDATE workloads SET image = ?2, spec = ?3, n_pods = ?4, min_pods = ?5,"
        " phase = CASE WHEN desired_phase = 'Stopped' THEN phase ELSE 'Pending' END,"
        " phase_reason = '', phase_message = '', started_ms = 0, stale_since_ms = 0,"
        " phase_updated_at = ?6, updated_at = ?6, completed_at = 0, version = version + 1"
        " WHERE seq = ?1 AND deleted_at = 0";
    const struct db_wl_respec *u = arg;
    const struct db__arg args[] = {DB__I(u->seq), DB__S(u->image), DB__S(u->spec),
                                   DB__I(u->n_pods), DB__I(u->min_pods), DB__I(u->now_ms)};
    char msg[DB_MSG_LEN];
    int rc = respec_check(c, u);

    if (rc == DB_OK)
        rc = db__revision_next(c, u);
    if (rc == DB_OK)
        rc = db__exec_args(c, sql, args, DB__NARGS(args));
    if (rc == DB_OK && db__changes(c) == 0)
        rc = DB_ENOTFOUND;
    if (rc == DB_OK)
        rc = free_pods(c, u->seq);
    if (rc != DB_OK)
        return rc;
    snprintf(msg, sizeof(msg), "updated by %s: image %s, %d replicas", u->by ? u->by : "unknown",
             u->image, u->n_pods);
    rc = db__event(c, u->seq, u->now_ms, "Normal", "Updated", msg);
    return rc == DB_OK ? db__change(c, DB_CHANGE_WORKLOAD, u->seq) : rc;
}

int db_workload_respec(struct db *db, const struct db_wl_respec *u)
{
    return db__write(db, respec_fn, (void *)u);
}

/* Removes deleted workloads (done being deleted) deleted before `before`,
 * of one project (project_seq 0: of any), with their events, pod runs,
 * measured figures and series; appends their seqs to *seqs (malloc'd). */
int db__workloads_purge(struct db__conn *c, int64_t before, int64_t project_seq, int64_t **seqs,
                        int *n)
{
    static const char pick[] =
        "SELECT seq FROM workloads WHERE deleted_at > 0 AND deleted_at < ?1 AND phase != 'Deleting'"
        " AND (?2 = 0 OR project_seq = ?2) ORDER BY seq LIMIT 1";
    static const char *const drop[] = {
        "DELETE FROM events WHERE workload_seq = ?1",
        "DELETE FROM inference_revisions WHERE workload_seq = ?1",
        "DELETE FROM pod_gpu WHERE uid IN (SELECT uid FROM pod_runs WHERE workload_seq = ?1)",
        "DELETE FROM pod_runs WHERE workload_seq = ?1",
        "DELETE FROM gpu_samples WHERE workload_seq = ?1",
        "DELETE FROM series WHERE kind = 3 AND entity = CAST(?1 AS TEXT)",
        "DELETE FROM pods WHERE workload_seq = ?1",
        "DELETE FROM workloads WHERE seq = ?1",
    };
    int rc = DB_OK, src, cap = *n, i;
    int64_t seq;
    struct db__stmt *st;

    while (rc == DB_OK && (st = db__prep(c, pick, &rc)) != NULL) {
        db__bind_int64(st, 1, before);
        db__bind_int64(st, 2, project_seq);
        src = db__step(st);
        seq = src == DB__ROW ? db__col_int64(st, 0) : 0;
        rc = db__done(st, src == DB__ROW || src == DB__DONE ? DB_OK : DB_EIO);
        if (rc != DB_OK || seq == 0)
            break;
        for (i = 0; rc == DB_OK && i < (int)(sizeof(drop) / sizeof(drop[0])); i++) {
            st = db__prep(c, drop[i], &rc);
            if (!st)
                break;
            db__bind_int64(st, 1, seq);
            rc = db__done(st, db__step_done(st));
        }
        if (rc == DB_OK && seqs) {
            rc = db__grow(seqs, *n, &cap, sizeof(**seqs));
            if (rc == DB_OK)
                (*seqs)[(*n)++] = seq;
        }
    }
    return rc;
}

struct purge_arg {
    int64_t before;
    int64_t **seqs;
    int *n;
};

static int purge_fn(struct db__conn *c, void *arg)
{
    struct purge_arg *a = arg;

    return db__workloads_purge(c, a->before, 0, a->seqs, a->n);
}

int db_workloads_purge(struct db *db, int64_t before_ms, int64_t **seqs, int *n)
{
    struct purge_arg a = {before_ms, seqs, n};
    int rc;

    *seqs = NULL;
    *n = 0;
    rc = db__write(db, purge_fn, &a);
    if (rc != DB_OK) {
        free(*seqs);
        *seqs = NULL;
        *n = 0;
    }
    return rc;
}

struct act_many_arg {
    const int64_t *seqs;
    int n;
    struct act_arg one;
    int *rcs;
};

/* Each action in its own nested savepoint, so one failure undoes only itself. */
static int act_many_fn(struct db__conn *c, void *arg)
{
    struct act_many_arg *a = arg;
    int i, rc = DB_OK;

    for (i = 0; rc == DB_OK && i < a->n; i++) {
        rc = db__exec(c, "SAVEPOINT act");
        if (rc != DB_OK)
            break;
        a->one.seq = a->seqs[i];
        a->rcs[i] = act_fn(c, &a->one);
        if (a->rcs[i] != DB_OK)
            rc = db__exec(c, "ROLLBACK TO act");
        if (rc == DB_OK)
            rc = db__exec(c, "RELEASE act");
    }
    return rc;
}

int db_workload_act_many(struct db *db, const int64_t *seqs, int n, int action, const char *by,
                         int64_t now_ms, const struct db_pending_caps *caps, int *rcs)
{
    char why[DB_MSG_LEN];
    struct act_many_arg a = {seqs, n, {0, action, by, now_ms, caps, why, sizeof(why)}, rcs};
    int i, rc;

    if (action < DB_WL_DELETE || action > DB_WL_RESUME)
        return DB_EINVAL;
    for (i = 0; i < n; i++)
        rcs[i] = DB_EIO;
    rc = db__write(db, act_many_fn, &a);
    for (i = 0; rc != DB_OK && i < n; i++)
        rcs[i] = rc;
    return rc;
}

/* ---- list ---- */

enum field_kind { F_TEXT, F_INT, F_DATE, F_GPU };

struct field {
    const char *name;
    const char *expr;
    int kind;
    const char *then;             /* the sort's second key, or NULL */
};

/* What a workload holds, in milli-GPU, over its placed pods. */
#define WL_ALLOCATED_GPU                                                                  \
    "(SELECT coalesce(sum(" DB_POD_GPU_ON("w", "n") "), 0) FROM pods p"                  \
    " JOIN nodes n ON n.seq = p.node_seq WHERE p.workload_seq = w.seq)"

/* A field's one value for every row, as an expression: PostgreSQL
 * refuses a bare constant in ORDER BY. */
#define WL_EMPTY_TEXT "coalesce(NULL, '')"
#define WL_EMPTY_NUMBER "coalesce(NULL, 0)"

static const struct field fields[] = {
    {"name", "w.name", F_TEXT, NULL},
    {"id", "w.id", F_TEXT, NULL},
    {"type", "CASE w.type WHEN 0 THEN 'Training' WHEN 1 THEN 'Workspace'"
             " WHEN 2 THEN 'Inference' ELSE 'Distributed' END", F_TEXT, NULL},
    {"category", "CASE w.type WHEN 1 THEN 'Build' WHEN 2 THEN 'Deploy' ELSE 'Train' END",
     F_TEXT, NULL},
    {"projectName", "q.name", F_TEXT, NULL},
    {"projectId", "q.id", F_TEXT, NULL},
    {"departmentName", "coalesce(d.name, '')", F_TEXT, NULL},
    {"departmentId", "coalesce(d.id, '')", F_TEXT, NULL},
    {"phase", "w.phase", F_TEXT, NULL},
    {"submittedBy", "w.created_by", F_TEXT, NULL},
    {"priorityClassName", "w.priority_class", F_TEXT, NULL},
    {"nodepool", "w.pools", F_TEXT, NULL},
    {"priority", "w.priority", F_INT, NULL},
    {"createdAt", "w.created_at", F_DATE, NULL},
    {"deletedAt", "w.deleted_at", F_DATE, NULL},
    {"completedAt", "w.completed_at", F_DATE, NULL},
    {"phaseUpdatedAt", "w.phase_updated_at", F_DATE, NULL},
    {"allocatedGPU", WL_ALLOCATED_GPU, F_GPU, NULL},
    /* what it asks over its pods, in milli-GPU (the gpu.request of its
     * workloadRequestedResources); a GPU-memory request asks no count of
     * GPUs: 0; sorted by allocation next */
    {"requestedGPU", "(CASE WHEN w.gpu_memory_mib > 0 THEN 0 WHEN w.gpu_portion > 0 THEN"
                     " (CASE WHEN w.gpu_devices < 1 THEN 1 ELSE w.gpu_devices END)"
                     " * w.gpu_portion * w.n_pods ELSE w.gpu_devices * 1000 * w.n_pods END)",
     F_GPU, WL_ALLOCATED_GPU},
    /* the answer's totalRunningTimeSeconds: the earlier runs, and this
     * one while it runs (h_workloads.c running_seconds()) */
    {"totalRunningTimeSeconds", "((w.run_ms + CASE WHEN w.started_ms > 0 AND w.phase IN"
                                " ('Running', 'Initializing') THEN " DB_NOW " - w.started_ms"
                                " ELSE 0 END) / 1000)", F_INT, NULL},
    /* what the answer leaves empty in allot (no distributed framework in
     * the generic view, no idle GPU metrics, no pending clock, no
     * guaranteed runtime, no AI applications): one value for every row,
     * so the order is the default one's, createdAt */
    {"distributedFramework", WL_EMPTY_TEXT, F_TEXT, "w.created_at"},
    {"aiApplicationId", WL_EMPTY_TEXT, F_TEXT, "w.created_at"},
    {"aiApplicationName", WL_EMPTY_TEXT, F_TEXT, "w.created_at"},
    {"idleGpus", WL_EMPTY_NUMBER, F_INT, "w.created_at"},
    {"idleAllocatedGpus", WL_EMPTY_NUMBER, F_GPU, "w.created_at"},
    {"totalPendingTimeSeconds", WL_EMPTY_NUMBER, F_INT, "w.created_at"},
    {"guaranteedRuntimeEndsAt", WL_EMPTY_NUMBER, F_DATE, "w.created_at"},
};

static const struct field *field_find(const char *name)
{
    size_t i;

    for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
        if (strcmp(fields[i].name, name) == 0)
            return &fields[i];
    return NULL;
}

struct sqlbuf {
    char *s;
    size_t n, cap;
    int failed;                   /* out of memory */
};

static void sb_add(struct sqlbuf *b, const char *s)
{
    size_t l = strlen(s);

    if (b->failed)
        return;
    if (b->n + l + 1 > b->cap) {
        size_t cap = (b->cap ? b->cap * 2 : 1024) + l;
        char *p = realloc(b->s, cap);
        if (!p) {
            b->failed = 1;
            return;
        }
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, l + 1);
    b->n += l;
}

static int filter_sql(struct sqlbuf *b, const struct db_filter *f, int param)
{
    const struct field *fd = field_find(f->field);
    char tmp[64];

    if (!fd)
        return DB_EINVAL;
    sb_add(b, " AND ");
    if (strcmp(f->op, "=@") == 0 || strcmp(f->op, "!@") == 0) {
        if (fd->kind != F_TEXT)
            return DB_EINVAL;
        sb_add(b, "instr(");
        sb_add(b, fd->expr);
        snprintf(tmp, sizeof(tmp), ", ?%d) %s 0", param, f->op[0] == '=' ? ">" : "=");
        sb_add(b, tmp);
        return DB_OK;
    }
    if (strcmp(f->op, "=^") == 0 || strcmp(f->op, "=$") == 0) {
        if (fd->kind != F_TEXT)
            return DB_EINVAL;
        sb_add(b, "substr(");
        sb_add(b, fd->expr);
        snprintf(tmp, sizeof(tmp), f->op[1] == '^' ? ", 1, length(?%d)) = ?%d"
                                                   : ", -length(?%d)) = ?%d",
                 param, param);
        sb_add(b, tmp);
        return DB_OK;
    }
    if (strcmp(f->op, "==") && strcmp(f->op, "!=") && strcmp(f->op, "<=") &&
        strcmp(f->op, ">="))
        return DB_EINVAL;
    sb_add(b, fd->expr);
    snprintf(tmp, sizeof(tmp), " %s ?%d", strcmp(f->op, "==") == 0 ? "=" : f->op, param);
    sb_add(b, tmp);
    return DB_OK;
}

static int filter_bind(struct db__stmt *st, const struct db_filter *f, int param)
{
    const struct field *fd = field_find(f->field);
    int64_t v;
    char *end;
    double g;

    switch (fd->kind) {
    case F_TEXT:
        db__bind_text(st, param, f->value);
        return DB_OK;
    case F_INT:
        v = strtoll(f->value, &end, 10);
        if (end == f->value || *end)
            return DB_EINVAL;
        db__bind_int64(st, param, v);
        return DB_OK;
    case F_DATE:
        if (db_time_parse(f->value, &v) != DB_OK)
            return DB_EINVAL;
        db__bind_int64(st, param, v);
        return DB_OK;
    default:
        g = strtod(f->value, &end);
        if (end == f->value || *end)
            return DB_EINVAL;
        db__bind_int64(st, param, (int64_t)(g * 1000 + (g >= 0 ? 0.5 : -0.5)));
        return DB_OK;
    }
}

/* Builds "FROM ... WHERE ..." for a query; the filters bind to ?1..?n,
 * the projects to the following parameters. */
static int where_sql(struct sqlbuf *b, const struct db_wl_query *q)
{
    int i, rc;
    char tmp[32];

    sb_add(b, WL_FROM);
    sb_add(b, q->include_deleted == DB_WL_DELETED_ONLY ? " WHERE w.deleted_at > 0"
              : q->include_deleted ? " WHERE 1 = 1" : " WHERE w.deleted_at = 0");
    for (i = 0; i < q->n_filters; i++) {
        rc = filter_sql(b, &q->filters[i], i + 1);
        if (rc != DB_OK)
            return rc;
    }
    if (q->projects) {   /* one parameter, a JSON array, however many projects */
        snprintf(tmp, sizeof(tmp), "%d", q->n_filters + 1);
        sb_add(b, " AND w.project_seq IN (SELECT CAST(value AS INTEGER) FROM json_each(?");
        sb_add(b, tmp);
        sb_add(b, "))");
    }
    return b->failed ? DB_ENOMEM : DB_OK;
}

/* The project seqs as a JSON array ("[3,17,...]"), malloc'd; NULL when out of memory. */
static char *projects_json(const struct db_wl_query *q)
{
    struct sqlbuf b = {0};
    char tmp[32];
    int i;

    sb_add(&b, "[");
    for (i = 0; i < q->n_projects; i++) {
        snprintf(tmp, sizeof(tmp), "%s%lld", i ? "," : "", (long long)q->projects[i]);
        sb_add(&b, tmp);
    }
    sb_add(&b, "]");
    if (b.failed) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

static int where_bind(struct db__stmt *st, const struct db_wl_query *q)
{
    char *projects;
    int i, rc;

    for (i = 0; i < q->n_filters; i++) {
        rc = filter_bind(st, &q->filters[i], i + 1);
        if (rc != DB_OK)
            return rc;
    }
    if (!q->projects)
        return DB_OK;
    projects = projects_json(q);
    if (!projects)
        return DB_ENOMEM;
    db__bind_owned(st, q->n_filters + 1, projects);
    return DB_OK;
}

struct list_arg {
    const struct db_wl_query *q;
    struct db_workload **out;
    int *n;
    int64_t *count;
};

static void order_sql(struct sqlbuf *b, const struct field *sort, int desc)
{
    sb_add(b, " ORDER BY ");
    sb_add(b, sort->expr);
    if (sort->then) {
        sb_add(b, desc ? " DESC, " : " ASC, ");
        sb_add(b, sort->then);
    }
    sb_add(b, desc ? " DESC, w.seq DESC" : " ASC, w.seq ASC");
}

/* The page is found first from the workloads' seqs alone (a deferred
 * join): the sort then carries the key and the seq, not whole rows, and
 * the columns of a page (the pod count a subquery each) are read for its
 * rows only. Deep offsets used to sort every row with its columns.
 * On SQLite the page's seqs come from one statement and its rows from a
 * second (page_rows()), in the same read transaction, each put in its
 * place by its seq: joined to the page in one statement with an ORDER BY,
 * SQLite 3.40 sorted the page's rows again with all their columns in a
 * temporary b-tree, a fifth of the statement's work.
 * On PostgreSQL the page's seqs are an array that the outer query looks
 * up by key (`w.seq = ANY(ARRAY(...))`): the plan is the same whatever
 * LIMIT the planner assumes, so one generic plan serves every page (a
 * join to the page as a subquery, planned for a LIMIT it cannot see,
 * read every workload into a hash); one round trip for the page. */
static const struct {
    const char *head, *tail;
} page_sql[2] = {
    {"SELECT w.seq", " LIMIT ? OFFSET ?"},
    {"SELECT " WL_COLS WL_FROM " WHERE w.seq = ANY(ARRAY(SELECT w.seq", " LIMIT ? OFFSET ?))"},
};

static int list_sql(struct sqlbuf *b, const struct db_wl_query *q, int count, int pq)
{
    const struct field *sort = field_find(q->sort_by[0] ? q->sort_by : "createdAt");
    int rc;

    if (!sort)
        return DB_EINVAL;
    sb_add(b, count ? "SELECT count(*)" : page_sql[pq].head);
    rc = where_sql(b, q);
    if (rc != DB_OK || count)
        return rc;
    order_sql(b, sort, q->desc);
    sb_add(b, page_sql[pq].tail);
    if (pq)
        order_sql(b, sort, q->desc);
    return b->failed ? DB_ENOMEM : DB_OK;
}

/* The most rows a list allocates for at once (an API page is at most 500,
 * and one more says whether there is a next). */
#define LIST_PRESIZE_MAX 512

/* PostgreSQL: the list's statement (prepared on the session) runs its
 * generic plan from the first use. Left to choose, the server planned it
 * again at every run (its estimate of a generic plan, with LIMIT unknown,
 * stays above a custom one's), which cost more than running it. The
 * setting lasts until the read's transaction ends; it is sent with the
 * statement, in the same round trip. Only for a list that filters on no
 * value (no filterBy, every project): a generic plan assumes a value of
 * average frequency, so a filter on a rare one (20 Stopped workloads of
 * 29,333) walked the whole index of creation times for them, 24-26 ms,
 * against 0.8-0.9 ms planned for the value. */
static int generic_plan(struct db__conn *c)
{
    static const char sql[] = "SET LOCAL plan_cache_mode = force_generic_plan";
    int rc = DB_OK;
    struct db__stmt *st = db__prep(c, sql, &rc);

    return st ? db__done(st, db__step_done(st)) : rc;
}

/* sep, then v in decimal, at out (24 bytes): what snprintf's "%s%lld"
 * writes, without vfprintf (51 of them were a sixth of a page read from
 * the memo below). */
static void seq_text(char out[24], const char *sep, int64_t v)
{
    size_t k = 0;

    while (*sep)
        out[k++] = *sep++;
    out[k + decimal_i64(out + k, v)] = 0;
}

/* ---- a reader's last page (SQLite) ----
 * A page's rows are a function of its seqs and of the database's content.
 * A reader keeps the rows of the last page it read, with the page's seqs
 * (the JSON array its rows' statement takes) and the data version of the
 * read transaction they came from (db__data_version); a page of the same
 * seqs in a read transaction at the same version is copied from the memo
 * instead of stepped again (SQLite and the rows' copies were about 0.9 M
 * instructions of a page of 51). Any commit to the file, by this server's
 * writer or another process, moves the version: the memo then misses and
 * the page read replaces it. A memo is used for PAGE_MEMO_MS at most (a
 * 32-bit version that came round again would need 2^32 commits in that
 * time), and only pages of at most PAGE_MEMO_ROWS rows are kept. */
#define PAGE_MEMO_ROWS 64
#define PAGE_MEMO_MS 1000

struct db__page_memo {
    uint32_t version;
    int64_t at_ms;                /* when its rows were read */
    char *ids;                    /* the page's seqs, as its rows' statement took them */
    struct db_workload *rows;
    int n;
};

void db__page_memo_free(struct db__page_memo *m)
{
    if (!m)
        return;
    free(m->ids);
    db_workloads_free(m->rows, m->n);
    free(m);
}

/* n rows, their specs copied too, in a new array at *out. */
static int rows_copy(const struct db_workload *src, int n, struct db_workload **out)
{
    struct db_workload *r = malloc(sizeof(*r) * (size_t)n);
    int i, rc = DB_OK;

    if (!r)
        return DB_ENOMEM;
    memcpy(r, src, sizeof(*r) * (size_t)n);
    for (i = 0; i < n; i++) { /* every spec pointer replaced, so a failure frees only copies */
        r[i].spec = src[i].spec ? strdup(src[i].spec) : NULL;
        if (src[i].spec && !r[i].spec)
            rc = DB_ENOMEM;
    }
    if (rc != DB_OK) {
        db_workloads_free(r, n);
        return rc;
    }
    *out = r;
    return DB_OK;
}

/* The memo's rows for page `ids` of n rows at version v, copied to *out:
 * DB_OK; DB_ENOTFOUND when the memo is not that page at that version. */
static int memo_get(struct db__conn *c, uint32_t v, const char *ids, int n,
                    struct db_workload **out)
{
    const struct db__page_memo *m = *db__page_memo_slot(c);

    if (!m || m->version != v || m->n != n || db__now_ms() - m->at_ms >= PAGE_MEMO_MS ||
        strcmp(m->ids, ids) != 0)
        return DB_ENOTFOUND;
    return rows_copy(m->rows, n, out);
}

/* Keeps the page just read (at version v, at_ms) as the reader's memo. */
static void memo_put(struct db__conn *c, uint32_t v, int64_t at_ms, const char *ids,
                     const struct db_workload *rows, int n)
{
    struct db__page_memo **slot = db__page_memo_slot(c), *m;

    if (n > PAGE_MEMO_ROWS || !(m = calloc(1, sizeof(*m))))
        return;
    m->version = v;
    m->at_ms = at_ms;
    m->ids = strdup(ids);
    if (!m->ids || rows_copy(rows, n, &m->rows) != DB_OK) {
        db__page_memo_free(m);
        return; /* not kept: the next page is read again */
    }
    m->n = n;
    db__page_memo_free(*slot);
    *slot = m;
}

/* SQLite: the page's seqs, read from `page` (bound; reset here) as a JSON
 * array, then the page's rows by that array (or from the reader's memo of
 * that page at this data version), one allocation for all (each
 * spec NULL until its row is read: a->out frees whatever was filled if a
 * row fails), each put at its seq's place in the page (json_each's key,
 * the array index: whatever order the rows come in). */
static int page_rows(struct db__conn *c, struct db__stmt *page, struct list_arg *a)
{
    static const char sql[] =
        "SELECT " WL_COLS ", page.key FROM json_each(?1) AS page CROSS JOIN workloads w"
        " ON w.seq = page.value JOIN queues q ON q.seq = w.project_seq"
        " LEFT JOIN queues d ON d.seq = q.parent_seq";
    struct sqlbuf ids = {0};
    int64_t *seqs = NULL;
    struct db__stmt *st = NULL;
    int n = 0, cap = 0, got = 0, i, src = DB__DONE, rc = DB_OK, memo = 0;
    uint32_t version = 0;
    int64_t at_ms = 0;
    char tmp[24];

    sb_add(&ids, "[");
    while (rc == DB_OK && (src = db__step(page)) == DB__ROW) {
        rc = db__grow(&seqs, n, &cap, sizeof(*seqs));
        if (rc != DB_OK)
            break;
        seqs[n] = db__col_int64(page, 0);
        seq_text(tmp, n ? "," : "", seqs[n]);
        sb_add(&ids, tmp);
        n++;
    }
    sb_add(&ids, "]");
    if (rc == DB_OK && src != DB__DONE)
        rc = DB_EIO;
    if (rc == DB_OK && ids.failed)
        rc = DB_ENOMEM;
    rc = db__done(page, rc);
    if (rc != DB_OK || n == 0)
        goto out;
    /* the read transaction's version: the page's statement has begun it */
    memo = db__data_version(c, &version) == DB_OK;
    at_ms = db__now_ms();
    if (memo && (rc = memo_get(c, version, ids.s, n, a->out)) != DB_ENOTFOUND) {
        *a->n = rc == DB_OK ? n : 0;
        goto out;
    }
    rc = DB_OK;
    if (!(*a->out = malloc(sizeof(**a->out) * (size_t)n))) {
        rc = DB_ENOMEM;
        goto out;
    }
    for (i = 0; i < n; i++) /* wl_shape fills the rest */
        (*a->out)[i].spec = NULL;
    *a->n = n;
    if (!(st = db__prep(c, sql, &rc)))
        goto out;
    db__bind_text(st, 1, ids.s);
    while (rc == DB_OK && (src = db__step(st)) == DB__ROW) {
        i = db__col_int(st, WL_NCOLS); /* the seq's index in the array: its place */
        rc = i >= 0 && i < n && seqs[i] == db__col_int64(st, 0) && got < n
                 ? db__row_read(st, 0, &wl_shape, &(*a->out)[i]) : DB_EIO;
        got++;
    }
    if (rc == DB_OK && (src != DB__DONE || got != n))
        rc = DB_EIO; /* each of the page's rows, once, in the same transaction */
    rc = db__done(st, rc);
    if (rc == DB_OK && memo)
        memo_put(c, version, at_ms, ids.s, *a->out, n);
out:
    free(ids.s);
    free(seqs);
    return rc;
}

static int list_fn(struct db__conn *c, void *arg)
{
    struct list_arg *a = arg;
    struct sqlbuf b = {0};
    struct db__stmt *st = NULL;
    int rc, cap = 0, np;

    rc = list_sql(&b, a->q, a->count != NULL, db__is_pq(c));
    if (rc == DB_OK && db__is_pq(c) && a->q->n_filters == 0 && !a->q->projects)
        rc = generic_plan(c);
    if (rc == DB_OK)
        st = db__prep_text(c, b.s, &rc);
    free(b.s);
    if (rc != DB_OK)
        return rc;
    rc = where_bind(st, a->q);
    if (rc != DB_OK)
        goto out_done;
    np = db__params(st);
    if (a->count) {
        rc = db__step(st) == DB__ROW ? DB_OK : DB_EIO;
        if (rc == DB_OK)
            *a->count = db__col_int64(st, 0);
        goto out_done;
    }
    db__bind_int(st, np - 1, a->q->limit);
    db__bind_int(st, np, a->q->offset);
    if (!db__is_pq(c)) {
        rc = page_rows(c, st, a);
        st = NULL; /* page_rows() reset it */
        goto out_done;
    }
    /* a page's rows in one allocation (a page of 51 grew through 16, 32
     * and 64 rows of 4 KB each) */
    cap = a->q->limit > 0 && a->q->limit <= LIST_PRESIZE_MAX ? a->q->limit : 0;
    if (cap && !(*a->out = malloc(sizeof(**a->out) * (size_t)cap))) {
        rc = DB_ENOMEM;
        goto out_done;
    }
    while ((rc = db__step(st)) == DB__ROW) {
        if (db__grow(a->out, *a->n, &cap, sizeof(**a->out)) != DB_OK) {
            rc = DB_ENOMEM;
            goto out_done;
        }
        rc = db__row_read(st, 0, &wl_shape, &(*a->out)[(*a->n)++]);
        if (rc != DB_OK)
            goto out_done;
    }
    rc = rc == DB__DONE ? DB_OK : DB_EIO;
out_done:
    return st ? db__done(st, rc) : rc;
}

int db_workload_list(struct db *db, const struct db_wl_query *q, struct db_workload **out, int *n)
{
    struct list_arg a = {q, out, n, NULL};
    int rc;

    *out = NULL;
    *n = 0;
    rc = db__read(db, list_fn, &a);
    if (rc != DB_OK) {
        db_workloads_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

int db_workload_count(struct db *db, const struct db_wl_query *q, int64_t *count)
{
    struct list_arg a = {q, NULL, NULL, count};

    return db__read(db, list_fn, &a);
}

/* ---- pods and events ---- */

struct sub_arg {
    int64_t seq;
    int desc, offset, limit;
    void *out;
    int *n;
};

/* One workload's pods (a search of the pods' key), or every pod: two
 * statements, since "?1 = 0 OR d.workload_seq = ?1" made SQLite scan
 * every pod for one workload's (a GET of one workload read all of them).
 * POD_COLS(D): a pod's columns, the pods as D, its node as n, the node's
 * pool as p, its workload as w. */
#define POD_COLS(D)                                                                        \
    D ".idx, " D ".node_seq, n.name, p.name, " D ".devices, " DB_POD_GPU_ON("w", "n") ","  \
    " n.address, n.simulated, " D ".workload_seq"
#define PODS_SELECT                                                                        \
    "SELECT " POD_COLS("d") " FROM pods d JOIN workloads w ON w.seq = d.workload_seq"      \
    " JOIN nodes n ON n.seq = d.node_seq JOIN node_pools p ON p.seq = n.pool_seq"

/* The pod of the row's columns from `col` on (POD_COLS). */
/* A pod's row: POD_COLS, in order. */
DB__TABLE(pod_cols, pod_shape, struct db_pod, NULL, idx, node_seq, node_name, pool_name, devices,
          gpu_milli, address, simulated, workload_seq);

static int pods_fn(struct db__conn *c, void *arg)
{
    static const char one[] = PODS_SELECT " WHERE d.workload_seq = ?1 ORDER BY d.idx";
    static const char all[] = PODS_SELECT " ORDER BY d.workload_seq, d.idx";
    struct sub_arg *a = arg;
    const struct db__arg args[] = {DB__I(a->seq)};

    return db__query_rows(c, a->seq ? one : all, args, a->seq ? 1 : 0, &pod_shape, a->out,
                          a->n);
}

int db_pod_list(struct db *db, int64_t workload_seq, struct db_pod **out, int *n)
{
    struct sub_arg a = {.seq = workload_seq, .out = out, .n = n};

    return db__read_list(db, pods_fn, &a, out, n);
}

struct get_pods_arg {
    struct get_arg wl;
    struct sub_arg pods;
};

/* PostgreSQL: the workload and its pods in one statement (one round trip
 * instead of two: the pods' statement waited for the workload's seq), a
 * row per pod (one, its pod columns NULL, for a workload without pods).
 * SQLite keeps the two statements, which cost it no round trip. */
static int get_pods_joined(struct db__conn *c, struct get_pods_arg *a)
{
    static const char sql[] =
        "SELECT " WL_COLS ", " POD_COLS("pd") WL_FROM
        " LEFT JOIN (pods pd JOIN nodes n ON n.seq = pd.node_seq"
        " JOIN node_pools p ON p.seq = n.pool_seq) ON pd.workload_seq = w.seq"
        " WHERE w.id = ?1 ORDER BY pd.idx";
    struct db_pod **out = a->pods.out;
    int rc = DB_OK, src, cap = 0;
    struct db__stmt *st = db__prep(c, sql, &rc);

    if (!st)
        return rc;
    db__bind_text(st, 1, a->wl.id);
    src = db__step(st);
    if (src != DB__ROW)
        return db__done(st, src == DB__DONE ? DB_ENOTFOUND : DB_EIO);
    rc = db__row_read(st, 0, &wl_shape, a->wl.w);
    for (; rc == DB_OK && src == DB__ROW; src = db__step(st)) {
        if (!db__col_text(st, WL_NCOLS))
            continue; /* no pod */
        if (db__grow(out, *a->pods.n, &cap, sizeof(**out)) != DB_OK)
            return db__done(st, DB_ENOMEM);
        db__row_read(st, WL_NCOLS, &pod_shape, &(*out)[(*a->pods.n)++]);
    }
    if (rc == DB_OK && src != DB__DONE)
        rc = DB_EIO;
    return db__done(st, rc);
}

static int get_pods_fn(struct db__conn *c, void *arg)
{
    struct get_pods_arg *a = arg;
    int rc;

    if (db__is_pq(c))
        return get_pods_joined(c, a);
    rc = get_fn(c, &a->wl);
    if (rc != DB_OK)
        return rc;
    a->pods.seq = a->wl.w->seq; /* never 0 (that would read every pod) */
    return a->pods.seq > 0 ? pods_fn(c, &a->pods) : DB_EIO;
}

int db_workload_get_pods(struct db *db, const char *id, struct db_workload *out,
                         struct db_pod **pods, int *n)
{
    struct get_pods_arg a = {{id, 0, out}, {.out = pods, .n = n}};

    memset(out, 0, sizeof(*out));
    return db__read_list(db, get_pods_fn, &a, pods, n);
}

static int events_fn(struct db__conn *c, void *arg)
{
    DB__TABLE(cols, shape, struct db_event, NULL, seq, workload_seq, created_at, type, reason,
              message);
    static const char asc[] =
        "SELECT seq, workload_seq, created_at, type, reason, message FROM events"
        " WHERE workload_seq = ? ORDER BY seq ASC LIMIT ? OFFSET ?";
    static const char desc[] =
        "SELECT seq, workload_seq, created_at, type, reason, message FROM events"
        " WHERE workload_seq = ? ORDER BY seq DESC LIMIT ? OFFSET ?";
    struct sub_arg *a = arg;
    const struct db__arg args[] = {DB__I(a->seq), DB__I(a->limit), DB__I(a->offset)};

    return db__query_rows(c, a->desc ? desc : asc, args, DB__NARGS(args), &shape, a->out,
                          a->n);
}

int db_event_list(struct db *db, int64_t workload_seq, int desc, int offset, int limit,
                  struct db_event **out, int *n)
{
    struct sub_arg a = {workload_seq, desc, offset, limit, out, n};

    return db__read_list(db, events_fn, &a, out, n);
}

/* ---- counts for the workloads telemetry ---- */

struct tally_arg {
    const char *projects_json;
    int64_t now_ms;
    const char *edges_json;
    struct db_wl_tally **out;
    int *n;
};

static int tally_fn(struct db__conn *c, void *arg)
{
    DB__TABLE(cols, shape, struct db_wl_tally, NULL, project_seq, type, phase, pool, bucket, count,
              gpu_milli);
    /* ?1 projects (NULL: all), ?2 now, ?3 the pending-time edges in seconds */
    static const char sql[] =
        "SELECT w.project_seq, w.type, w.phase,"
        " coalesce((SELECT np.name FROM pods d JOIN nodes n ON n.seq = d.node_seq"
        "  JOIN node_pools np ON np.seq = n.pool_seq WHERE d.workload_seq = w.seq"
        "  ORDER BY d.idx LIMIT 1), substr(w.pools, 1, instr(w.pools || ',', ',') - 1)) AS pool,"
        " CASE WHEN w.phase != 'Pending' THEN -1 ELSE"
        "  (SELECT count(*) FROM json_each(?3)"
        "   WHERE CAST(value AS INTEGER) * 1000 <= ?2 - w.phase_updated_at)"
        " END AS bucket, count(*),"
        " sum((SELECT coalesce(sum(" DB_POD_GPU_ON("w", "n") "), 0) FROM pods d"
        "  JOIN nodes n ON n.seq = d.node_seq WHERE d.workload_seq = w.seq))"
        " FROM workloads w WHERE w.deleted_at = 0"
        " AND (?1 IS NULL OR w.project_seq IN (SELECT CAST(value AS INTEGER) FROM json_each(?1)))"
        " GROUP BY w.project_seq, w.type, w.phase, pool, bucket";
    struct tally_arg *a = arg;
    const struct db__arg args[] = {DB__S_NULL(a->projects_json), DB__I(a->now_ms),
                                   DB__S(a->edges_json)};

    return db__query_rows(c, sql, args, DB__NARGS(args), &shape, a->out, a->n);
}

int db_workload_tally(struct db *db, const char *projects_json, int64_t now_ms,
                      const int64_t *pending_edges_s, int n_edges, struct db_wl_tally **out,
                      int *n)
{
    char edges[512];
    size_t used = 1;
    struct tally_arg a = {projects_json, now_ms, edges, out, n};
    int i;

    edges[0] = '[';
    for (i = 0; i < n_edges && used < sizeof(edges) - 24; i++)
        used += (size_t)snprintf(edges + used, sizeof(edges) - used, "%s%lld", i ? "," : "",
                                 (long long)pending_edges_s[i]);
    snprintf(edges + used, sizeof(edges) - used, "]");
    return db__read_list(db, tally_fn, &a, out, n);
}

/* ---- events by time and reason (events_by_time index) ---- */

#define EVQ_WHERE                                                                         \
    " FROM events e JOIN workloads w ON w.seq = e.workload_seq"                           \
    " JOIN queues q ON q.seq = w.project_seq"                                             \
    " WHERE e.created_at >= ?1 AND e.created_at < ?2"                                     \
    " AND e.reason IN (SELECT value FROM json_each(?3))"                                   \
    " AND (?4 IS NULL OR w.project_seq IN (SELECT CAST(value AS INTEGER) FROM json_each(?4)))" \
    " AND (?5 = 0 OR q.parent_seq = ?5) AND (?6 = 0 OR e.pool_seq = ?6)"

struct evq_arg {
    const struct db_event_query *q;
    struct db_event_row **out;
    int *n;
    int64_t *count;
};

/* The parameters of EVQ_WHERE, then the list's limit and offset. */
#define EVQ_ARGS(q)                                                                       \
    DB__I((q)->from_ms), DB__I((q)->to_ms), DB__S((q)->reasons_json),                     \
        DB__S_NULL((q)->projects_json), DB__I((q)->department_seq), DB__I((q)->pool_seq)

static int evq_list_fn(struct db__conn *c, void *arg)
{
    static const char sql[] =
        "SELECT e.seq, e.workload_seq, e.created_at, e.type, e.reason, e.message, w.id, w.name,"
        " w.type, q.id, q.name" EVQ_WHERE " ORDER BY e.created_at DESC, e.seq DESC"
        " LIMIT ?7 OFFSET ?8";
    DB__TABLE(cols, shape, struct db_event_row, NULL, e.seq, e.workload_seq, e.created_at, e.type,
              e.reason, e.message, workload_id, workload_name, workload_type, project_id,
              project_name);
    struct evq_arg *a = arg;
    const struct db__arg args[] = {EVQ_ARGS(a->q), DB__I(a->q->limit), DB__I(a->q->offset)};

    return db__query_rows(c, sql, args, DB__NARGS(args), &shape, a->out, a->n);
}

int db_event_query_list(struct db *db, const struct db_event_query *q, struct db_event_row **out,
                        int *n)
{
    struct evq_arg a = {q, out, n, NULL};

    return db__read_list(db, evq_list_fn, &a, out, n);
}

static int evq_count_fn(struct db__conn *c, void *arg)
{
    static const char sql[] = "SELECT count(*)" EVQ_WHERE;
    struct evq_arg *a = arg;
    const struct db__arg args[] = {EVQ_ARGS(a->q)};
    int rc = db__query_one(c, sql, args, DB__NARGS(args), db__read_int64, a->count);

    return rc == DB_ENOTFOUND ? DB_EIO : rc;
}

int db_event_query_count(struct db *db, const struct db_event_query *q, int64_t *count)
{
    struct evq_arg a = {q, NULL, NULL, count};

    *count = 0;
    return db__read(db, evq_count_fn, &a);
}
