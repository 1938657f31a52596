/*
 * gpu_usage.c: what agents measure of each pod's GPUs. A heartbeat
 * carries, for every running pod, its devices with their utilisation and
 * the memory its processes hold there (agent/usage.c); this file keeps the
 * latest figures per run (pod_gpu), the events they call for, the samples
 * behind the workloads' metrics time series (gpu_samples), and the reads
 * the API serves.
 *
 * db__pod_gpu_record(), inside a heartbeat's savepoint, for a pod the
 * agent reports Running with its binding on the reporting node:
 *   Step 1: the run's previous rows, to see which devices are new to it;
 *   Step 2: its rows replaced by the report: given = the device is one of
 *           the binding's; a report without figures clears them (the agent
 *           has none: its figures are unknown, not idle);
 *   Step 3: the run is idle from the first report in which every device
 *           it was given shows 0% (gpu_idle_since), busy (0) otherwise;
 *   Step 4: each device it uses without being given it, newly, writes a
 *           Warning event (GpuOutsideAllocation) on the workload.
 *
 * Invariants:
 *   1. Rows exist only for runs that are open; a run's end deletes them
 *      (db__pod_gpu_forget()).
 *   2. Samples older than the retention the caller names are deleted in
 *      the same transaction that adds new ones.
 *   3. Memory is in MiB, utilisation in percent (0 to 100); either is -1
 *      where the agent could not say. Unknown utilisation is never idle.
 */
#include "db_agent.h"
#include "db_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a heartbeat's figures ---- */

/* Step 1: the devices the run already used without being given them. */
static int previous_outside(struct db__conn *c, const char *uid, uint64_t *mask)
{
    static const char sql[] = "SELECT gpu FROM pod_gpu WHERE uid = ? AND given = 0";
    int rc = DB_OK, src;
    struct db__stmt *st = db__prep(c, sql, &rc);

    *mask = 0;
    if (!st)
        return rc;
    db__bind_text(st, 1, uid);
    while ((src = db__step(st)) == DB__ROW)
        *mask |= (uint64_t)1 << (db__col_int(st, 0) & 63);
    return db__done(st, src == DB__DONE ? DB_OK : DB_EIO);
}

int db__pod_gpu_forget(struct db__conn *c, const char *uid)
{
    static const char sql[] = "DELETE FROM pod_gpu WHERE uid = ?";

    return db__run_text_key(c, sql, uid);
}

/* Step 2 */
static int write_rows(struct db__conn *c, const struct db_pod_report *p, uint64_t given,
                      int64_t now)
{
    static const char sql[] =
        "INSERT INTO pod_gpu (uid, gpu, given, utilization, memory_mib, pid, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)";
    int rc = db__pod_gpu_forget(c, p->uid), i;
    struct db__stmt *st;

    for (i = 0; rc == DB_OK && i < p->n_gpus; i++) {
        const struct db_pod_gpu *g = &p->gpus[i];
        st = db__prep(c, sql, &rc);
        if (!st)
            return rc;
        db__bind_text(st, 1, p->uid);
        db__bind_int(st, 2, g->gpu);
        db__bind_int(st, 3, (int)(given >> g->gpu & 1));
        db__bind_int(st, 4, g->utilization);
        db__bind_int64(st, 5, g->mem_mib);
        db__bind_int(st, 6, g->pid);
        db__bind_int64(st, 7, now);
        rc = db__done(st, db__step_done(st));
    }
    return rc;
}

/* Step 3 */
static int mark_idle(struct db__conn *c, const struct db_pod_report *p, uint64_t given,
                     int64_t now)
{
    static const char sql[] =
        "UPDATE pod_runs SET gpu_idle_since = CASE WHEN ?2 = 0 THEN 0"
        " WHEN gpu_idle_since = 0 THEN ?2 ELSE gpu_idle_since END WHERE uid = ?1";
    int i, n_given = 0, n_idle = 0, rc = DB_OK;
    struct db__stmt *st = db__prep(c, sql, &rc);

    if (!st)
        return rc;
    for (i = 0; p->has_gpus && i < p->n_gpus; i++)
        if (given >> p->gpus[i].gpu & 1) {
            n_given++;
            n_idle += p->gpus[i].utilization == 0;
        }
    db__bind_text(st, 1, p->uid);
    db__bind_int64(st, 2, n_given > 0 && n_idle == n_given ? now : 0);
    return db__done(st, db__step_done(st));
}

/* "0,1" for a device mask; "none" for none. */
static void mask_text(uint64_t mask, char *out, size_t len)
{
    size_t used = 0;
    int d;

    out[0] = 0;
    for (d = 0; d < 64 && used < len; d++)
        if (mask >> d & 1)
            used += (size_t)snprintf(out + used, len - used, "%s%d", used ? "," : "", d);
    if (!out[0])
        snprintf(out, len, "none");
}

/* Step 4 */
static int outside_events(struct db__conn *c, const struct db_pod_gpu_ctx *x,
                          const struct db_pod_report *p, uint64_t before)
{
    char msg[DB_MSG_LEN], devs[200], mem[48];
    int i, rc = DB_OK;

    mask_text(x->given, devs, sizeof(devs));
    for (i = 0; rc == DB_OK && i < p->n_gpus; i++) {
        const struct db_pod_gpu *g = &p->gpus[i];
        if (x->given >> g->gpu & 1 || before >> g->gpu & 1)
            continue;
        if (g->mem_mib >= 0)
            snprintf(mem, sizeof(mem), ", %lld MiB", (long long)g->mem_mib);
        else
            mem[0] = 0;
        snprintf(msg, sizeof(msg),
                 "pod %d of %s uses GPU %d on %s (process %d%s), which it was not given:"
                 " its devices are %s (CUDA_VISIBLE_DEVICES=%s)", x->idx, x->wl_name, g->gpu,
                 x->node, g->pid, mem, devs, x->given ? devs : "");
        rc = db__event(c, x->wl_seq, x->now_ms, "Warning", "GpuOutsideAllocation", msg);
    }
    return rc;
}

int db__pod_gpu_record(struct db__conn *c, const struct db_pod_gpu_ctx *x,
                       const struct db_pod_report *p)
{
    uint64_t before = 0;
    int rc;

    rc = previous_outside(c, p->uid, &before);
    if (rc == DB_OK)
        rc = p->has_gpus ? write_rows(c, p, x->given, x->now_ms)
                         : db__pod_gpu_forget(c, p->uid);
    if (rc == DB_OK)
        rc = mark_idle(c, p, x->given, x->now_ms);
    if (rc == DB_OK && p->has_gpus)
        rc = outside_events(c, x, p, before);
    return rc;
}

/* ---- reads ---- */

#define ROW_COLS "p.workload_seq, p.idx, p.uid, w.id, w.name, q.name, coalesce(n.name, ''),"  \
                 " g.gpu, g.given, g.utilization, g.memory_mib, g.pid, g.updated_at"
#define ROW_FROM " FROM pod_gpu g JOIN pods p ON p.uid = g.uid"                               \
                 " JOIN pod_runs r ON r.uid = g.uid AND r.finished_at = 0"                    \
                 " JOIN workloads w ON w.seq = p.workload_seq AND w.deleted_at = 0"           \
                 " JOIN queues q ON q.seq = w.project_seq LEFT JOIN nodes n ON n.seq = p.node_seq"

struct list_arg {
    int64_t workload_seq;
    struct db_pod_gpu_row **out;
    int *n;
};

static int list_fn(struct db__conn *c, void *arg)
{
    DB__TABLE(cols, shape, struct db_pod_gpu_row, NULL, workload_seq, idx, uid, workload_id,
              workload_name, project_name, node_name, gpu, given, utilization, mem_mib, pid,
              updated_at);
    static const char one[] = "SELECT " ROW_COLS ROW_FROM " WHERE p.workload_seq = ?"
                              " ORDER BY p.idx, g.gpu";
    static const char all[] = "SELECT " ROW_COLS ROW_FROM " WHERE ? = 0"
                              " ORDER BY p.workload_seq, p.idx, g.gpu";
    struct list_arg *a = arg;
    int rc = DB_OK;
    struct db__stmt *st = db__prep(c, a->workload_seq ? one : all, &rc);

    if (!st)
        return rc;
    db__bind_int64(st, 1, a->workload_seq);
    return db__row_list(st, &shape, a->out, a->n);
}

int db_pod_gpu_list(struct db *db, int64_t workload_seq, struct db_pod_gpu_row **out, int *n)
{
    struct list_arg a = {workload_seq, out, n};

    return db__read_list(db, list_fn, &a, out, n);
}

/* ---- samples ---- */

struct record_arg {
    int64_t now, keep_after;
};

static int record_fn(struct db__conn *c, void *arg)
{
    static const char ins[] =
        "INSERT OR REPLACE INTO gpu_samples (workload_seq, ts, idx, gpu, given, utilization,"
        " memory_mib) SELECT p.workload_seq, ?1, p.idx, g.gpu, g.given, g.utilization,"
        " g.memory_mib"
        " FROM pod_gpu g JOIN pods p ON p.uid = g.uid"
        " JOIN pod_runs r ON r.uid = g.uid AND r.finished_at = 0";
    static const char prune[] = "DELETE FROM gpu_samples WHERE ts < ?";
    struct record_arg *a = arg;
    int rc = db__run_key(c, ins, a->now);

    return rc == DB_OK ? db__run_key(c, prune, a->keep_after) : rc;
}

int db_gpu_samples_record(struct db *db, int64_t now_ms, int64_t keep_after_ms)
{
    struct record_arg a = {now_ms, keep_after_ms};

    return db__write(db, record_fn, &a);
}

struct samples_arg {
    int64_t workload_seq, start, end;
    int idx;
    struct db_gpu_sample **out;
    int *n;
};

static int samples_fn(struct db__conn *c, void *arg)
{
    DB__TABLE(cols, shape, struct db_gpu_sample, NULL, ts, idx, gpu, given, utilization, mem_mib);
    static const char sql[] =
        "SELECT ts, idx, gpu, given, utilization, memory_mib FROM gpu_samples"
        " WHERE workload_seq = ?1 AND ts BETWEEN ?2 AND ?3 AND (?4 < 0 OR idx = ?4)"
        " ORDER BY ts, idx, gpu";
    struct samples_arg *a = arg;
    const struct db__arg args[] = {DB__I(a->workload_seq), DB__I(a->start), DB__I(a->end),
                                   DB__I(a->idx)};

    return db__query_rows(c, sql, args, DB__NARGS(args), &shape, a->out, a->n);
}

int db_gpu_samples_get(struct db *db, int64_t workload_seq, int idx, int64_t start, int64_t end,
                       struct db_gpu_sample **out, int *n)
{
    struct samples_arg a = {workload_seq, start, end, idx, out, n};

    return db__read_list(db, samples_fn, &a, out, n);
}
