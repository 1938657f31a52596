/*
 * agent_pods.c: heartbeats (what an agent says about its pods, what their
 * workloads become, which pods its node should run) and the loss of nodes
 * that stop heartbeating.
 *
 * One heartbeat, db_agent_heartbeat(), in one savepoint:
 *   Step 1: the node is the one the token registered; last_seen (and the
 *           GPU metrics, and since when each device is idle) are written;
 *           a NotReady node is Ready again;
 *   Step 2: each pod the agent reports, by uid, against its binding (the
 *           pods row with that uid on this node) and its run (pod_runs):
 *             RUNNING  bound and no run yet: the run starts (event
 *                      Started); the workload is Running once every pod
 *                      placed on agents' nodes has started; bound with an
 *                      open run: its GPU figures (gpu_usage.c);
 *             EXITED   the run ends; still bound: the pod is restarted if
 *                      its workload's restartPolicy and backoffLimit say
 *                      so (restarts.c); else code 0 -> the pod succeeded
 *                      and the workload Completes when all did (an MPI
 *                      workload: when its launcher did); a
 *                      non-zero code or a signal -> the workload Failed;
 *                      stopped by allot itself -> lost; no longer bound
 *                      (preempted, suspended, deleted): Stopped, and a
 *                      deleted workload none of whose runs is open any
 *                      more is done (Deleting -> Stopped, event Deleted);
 *             LOST     the run ends; still bound: the workload goes back to
 *                      Pending without that pod;
 *   Step 3: bound pods with an open run the agent did not mention are lost;
 *           Initializing workloads with pods here whose placed pods have
 *           all started are Running;
 *   Step 4: the answer: the pods bound here whose run has not ended (a
 *           restarted pod once its back-off is over).
 * db_agent_expire() marks NotReady the nodes past their heartbeat timeout
 * and sends the workloads with pods there back to Pending (event NodeLost).
 *
 * Invariants:
 *   1. A report only touches pods bound to the reporting node and runs
 *      started there; anything else it names is ignored.
 *   2. Every workload transition bumps the version and writes an event.
 *   3. A run ends once: a later report about it changes nothing.
 */
#include "db_agent.h"
#include "db_int.h"
#include "db_ha.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct binding {
    int found;
    int64_t wl_seq;
    int idx;
    uint64_t devices;
    char wl_name[DB_NAME_LEN];
};

/* A binding's columns: the pod's workload, index, name and devices. */
DB__TABLE(binding_cols, binding_shape, struct binding, NULL, wl_seq, idx, wl_name, devices);
/* A run's: its workload, index and name. */
static const struct db__shape binding_shape3 = {binding_cols, 3, sizeof(struct binding), NULL};

/* A node or a workload by seq and name (and, for a node, whether it is
 * Ready). */
struct named {
    int64_t seq;
    char name[DB_NAME_LEN];
    int ready;
};
static const struct db__col named_cols[] = {
    DB__COLS(struct named, seq, name, ready),
};
/* seq, name; seq, name, ready */
static const struct db__shape named_shape = {named_cols, 2, sizeof(struct named), NULL};
static const struct db__shape node_shape = DB__SHAPE(struct named, named_cols, NULL);

struct run_state {
    int64_t node_seq;             /* the reporting node's */
    int exists;
    int open;
};

/* The workloads a heartbeat changed, for the scheduler to re-read. */
struct touched {
    int64_t *seqs;
    int n, cap;
};

static int touch(struct touched *t, int64_t seq)
{
    int i;

    if (!t)
        return DB_OK;
    for (i = 0; i < t->n; i++)
        if (t->seqs[i] == seq)
            return DB_OK;
    if (db__grow(&t->seqs, t->n, &t->cap, sizeof(*t->seqs)) != DB_OK)
        return DB_ENOMEM;
    t->seqs[t->n++] = seq;
    return DB_OK;
}

/* ---- workload transitions ---- */

/* What a workload becomes, and the event saying so. */
struct change {
    const char *phase;
    int completed;                /* stamp completed_at */
    const char *type, *reason;
    const char *message;
};

/* Sets a live workload's phase with an event, and notes it in t (may be
 * NULL). Bumps the version (invariant 2). */
static int wl_phase(struct db__conn *c, struct touched *t, int64_t wl_seq,
                    const struct change *ch, int64_t now)
{
    static const char sql[] =
        "UPDATE workloads SET phase_updated_at = CASE WHEN phase = ?2 THEN phase_updated_at"
        " ELSE ?4 END, phase = ?2, phase_reason = '', phase_message = ?3, updated_at = ?4,"
        " completed_at = CASE WHEN ?5 != 0 THEN ?4 ELSE completed_at END, version = version + 1"
        " WHERE seq = ?1 AND deleted_at = 0";
    const struct db__arg args[] = {DB__I(wl_seq), DB__S(ch->phase), DB__S(ch->message),
                                   DB__I(now), DB__I(ch->completed)};
    int rc = db__exec_args(c, sql, args, DB__NARGS(args));

    if (rc != DB_OK || db__changes(c) == 0)
        return rc;
    rc = touch(t, wl_seq);
    if (rc == DB_OK)
        rc = db__event(c, wl_seq, now, ch->type, ch->reason, ch->message);
    return rc;
}

static int wl_free_pods(struct db__conn *c, int64_t wl_seq)
{
    return db__run_key(c, "DELETE FROM pods WHERE workload_seq = ?", wl_seq);
}

/* One heartbeat's context. */
struct hb {
    struct db_heartbeat *h;
    char node[DB_NAME_LEN];
    struct touched t;
};

/* Initializing -> Running once no pod placed on an agent's node waits. */
static int wl_promote(struct db__conn *c, struct hb *b, int64_t wl_seq, const char *wl_name)
{
    static const char initializing[] =
        "SELECT count(*) FROM workloads WHERE seq = ? AND phase = 'Initializing'";
    static const char waiting[] =
        "SELECT count(*) FROM pods p JOIN nodes n ON n.seq = p.node_seq"
        " WHERE p.workload_seq = ? AND n.simulated = 0"
        " AND NOT EXISTS (SELECT 1 FROM pod_runs r WHERE r.uid = p.uid)";
    char msg[DB_MSG_LEN];
    struct change ch = {"Running", 0, "Normal", "Running", msg};
    int64_t n = 0;
    int rc;

    rc = db__int_of(c, initializing, wl_seq, &n);
    if (rc != DB_OK || n == 0)
        return rc;
    rc = db__int_of(c, waiting, wl_seq, &n);
    if (rc != DB_OK || n > 0)
        return rc;
    snprintf(msg, sizeof(msg), "%s is running: every pod started", wl_name);
    return wl_phase(c, &b->t, wl_seq, &ch, b->h->now_ms);
}

/* A pod succeeded: the workload Completes when every bound pod did, or an
 * MPI workload when its launcher did (its workers are then stopped). */
static int wl_succeeded(struct db__conn *c, struct hb *b, const struct binding *bd)
{
    static const char left[] =
        "SELECT count(*) FROM pods p WHERE p.workload_seq = ? AND NOT EXISTS"
        " (SELECT 1 FROM pod_runs r WHERE r.uid = p.uid AND r.outcome = 'Succeeded')";
    char msg[DB_MSG_LEN];
    struct change ch = {"Completed", 1, "Normal", "Completed", msg};
    int64_t n = 0;
    int launcher = 0, rc;

    rc = db__mpi_launcher(c, bd->wl_seq, bd->idx, &launcher);
    if (rc == DB_OK && !launcher)
        rc = db__int_of(c, left, bd->wl_seq, &n);
    if (rc != DB_OK || n > 0)
        return rc;
    rc = wl_free_pods(c, bd->wl_seq);
    if (rc != DB_OK)
        return rc;
    snprintf(msg, sizeof(msg), "%s completed: %s", bd->wl_name,
             launcher ? "its MPI launcher exited with code 0 (its workers are stopped)"
                      : "every pod exited with code 0");
    return wl_phase(c, &b->t, bd->wl_seq, &ch, b->h->now_ms);
}

/* How a pod's run ended, in words: "pod 0 of w exited with code 3 on n". */
static void exit_text(const struct hb *b, const struct binding *bd,
                      const struct db_pod_report *p, char *out, size_t len)
{
    if (p->signal)
        snprintf(out, len, "pod %d of %s was killed by signal %d on %s%s%.150s", bd->idx,
                 bd->wl_name, p->signal, b->node, p->message[0] ? ": " : "", p->message);
    else
        snprintf(out, len, "pod %d of %s exited with code %d on %s%s%.150s", bd->idx,
                 bd->wl_name, p->exit_code, b->node, p->message[0] ? ": " : "", p->message);
}

static int wl_failed(struct db__conn *c, struct hb *b, const struct binding *bd,
                     const struct db_pod_report *p, const char *note)
{
    char msg[DB_MSG_LEN];
    struct change ch = {"Failed", 1, "Warning", "Failed", msg};
    size_t n;
    int rc = wl_free_pods(c, bd->wl_seq);

    if (rc != DB_OK)
        return rc;
    exit_text(b, bd, p, msg, sizeof(msg));
    n = strlen(msg);
    snprintf(msg + n, sizeof(msg) - n, "%s", note);
    return wl_phase(c, &b->t, bd->wl_seq, &ch, b->h->now_ms);
}

/* A bound pod's run ended with an outcome: restarted (restarts.c), or its
 * workload Completes (when every pod succeeded) or Fails. */
static int wl_pod_ended(struct db__conn *c, struct hb *b, const struct binding *bd,
                        const struct db_pod_report *p, int failed)
{
    char why[DB_MSG_LEN], note[64];
    int restarted = 0, rc;

    exit_text(b, bd, p, why, sizeof(why));
    rc = db__pod_restart(c, bd->wl_seq, bd->idx, why, failed, p->never_ran, b->h->now_ms,
                         &restarted, note, sizeof(note));
    if (rc != DB_OK)
        return rc;
    if (restarted)
        return touch(&b->t, bd->wl_seq);
    return failed ? wl_failed(c, b, bd, p, note) : wl_succeeded(c, b, bd);
}

/* A bound pod is gone without an outcome: back to Pending without it. */
static int wl_lost(struct db__conn *c, struct hb *b, const struct binding *bd, const char *uid,
                   const char *why)
{
    char msg[DB_MSG_LEN];
    struct change ch = {"Pending", 0, "Warning", "PodLost", msg};
    int rc = db__run_text_key(c, "DELETE FROM pods WHERE uid = ?", uid);

    if (rc != DB_OK)
        return rc;
    snprintf(msg, sizeof(msg), "pod %d of %s was lost on %s (%.200s); it goes back to Pending",
             bd->idx, bd->wl_name, b->node, why);
    return wl_phase(c, &b->t, bd->wl_seq, &ch, b->h->now_ms);
}

/* ---- runs ---- */

static int run_read(struct db__stmt *st, void *arg)
{
    struct run_state *r = arg;

    r->exists = 1;
    r->open = db__col_int64(st, 0) == 0;
    /* another node's run (invariant 1) */
    return db__col_int64(st, 1) != r->node_seq ? DB_ENOTFOUND : DB_OK;
}

static int run_find(struct db__conn *c, const char *uid, int64_t node_seq, struct run_state *out)
{
    static const char sql[] = "SELECT finished_at, node_seq FROM pod_runs WHERE uid = ?";
    const struct db__arg args[] = {DB__S(uid)};
    int rc;

    memset(out, 0, sizeof(*out));
    out->node_seq = node_seq;
    rc = db__query_one(c, sql, args, DB__NARGS(args), run_read, out);
    if (rc == DB_ENOTFOUND && !out->exists)
        rc = DB_OK; /* no run yet */
    return rc;
}

static int run_start(struct db__conn *c, const char *uid, const struct binding *b,
                     int64_t node_seq, int64_t at)
{
    static const char sql[] =
        "INSERT OR IGNORE INTO pod_runs (uid, workload_seq, idx, node_seq, started_at)"
        " VALUES (?, ?, ?, ?, ?)";
    const struct db__arg args[] = {DB__S(uid), DB__I(b->wl_seq), DB__I(b->idx),
                                   DB__I(node_seq), DB__I(at)};

    return db__exec_args(c, sql, args, DB__NARGS(args));
}

static int run_end(struct db__conn *c, const char *uid, const struct db_pod_report *p,
                   int64_t at, const char *outcome)
{
    static const char sql[] =
        "UPDATE pod_runs SET finished_at = ?2, exit_code = ?3, signal = ?4, outcome = ?5"
        " WHERE uid = ?1 AND finished_at = 0";
    const struct db__arg args[] = {DB__S(uid), DB__I(at > 0 ? at : 1),
                                   DB__I(p ? p->exit_code : 0), DB__I(p ? p->signal : 0),
                                   DB__S(outcome)};
    int rc = db__exec_args(c, sql, args, DB__NARGS(args));

    return rc == DB_OK ? db__pod_gpu_forget(c, uid) : rc;
}

/* ---- one heartbeat ---- */

/* The pods row with this uid on the reporting node (invariant 1). */
static int hb_binding(struct db__conn *c, struct hb *b, const char *uid, struct binding *out)
{
    static const char sql[] =
        "SELECT p.workload_seq, p.idx, w.name, p.devices FROM pods p"
        " JOIN workloads w ON w.seq = p.workload_seq WHERE p.uid = ? AND p.node_seq = ?";
    const struct db__arg args[] = {DB__S(uid), DB__I(b->h->node_seq)};
    int rc;

    memset(out, 0, sizeof(*out));
    rc = db__query_row(c, sql, args, DB__NARGS(args), &binding_shape, out);

    out->found = rc == DB_OK;
    return rc == DB_ENOTFOUND ? DB_OK : rc;
}

/* Step 1 */
static int hb_node(struct db__conn *c, struct hb *b)
{
    static const char node[] =
        "SELECT n.seq, n.name, n.ready FROM agent_nodes a JOIN nodes n ON n.seq = a.node_seq"
        " WHERE a.token_seq = ?";
    static const char seen[] =
        "UPDATE agent_nodes SET last_seen = ?2, gpus = coalesce(?3, gpus) WHERE node_seq = ?1";
    static const char ready[] = "UPDATE nodes SET ready = 1, updated_at = ?2 WHERE seq = ?1";
    static const char used[] = "UPDATE agent_tokens SET last_used_at = ?2 WHERE seq = ?1";
    struct db_heartbeat *h = b->h;
    const struct db__arg node_args[] = {DB__I(h->token_seq)};
    struct named n;
    int rc = db__query_row(c, node, node_args, DB__NARGS(node_args), &node_shape, &n), was_ready;

    if (rc != DB_OK)
        return rc;
    h->node_seq = n.seq;
    snprintf(b->node, sizeof(b->node), "%s", n.name);
    was_ready = n.ready;
    {
        const struct db__arg args[] = {DB__I(h->node_seq), DB__I(h->now_ms), DB__S_NULL(h->gpus)};

        rc = db__exec_args(c, seen, args, DB__NARGS(args));
    }
    if (rc == DB_OK) {
        const struct db__arg args[] = {DB__I(was_ready ? h->token_seq : h->node_seq),
                                       DB__I(h->now_ms)};

        rc = db__exec_args(c, was_ready ? used : ready, args, DB__NARGS(args));
    }
    if (!was_ready) {
        fprintf(stderr, "allotd: agent: node %s is Ready again\n", b->node);
        h->node_changed = 1;
    }
    return rc;
}

/* Step 1, continued: since when each device has been idle (utilisation 0). */
static int hb_idle(struct db__conn *c, struct hb *b)
{
    static const char sql[] =
        "INSERT INTO gpu_idle (node_seq, idx, idle_since) VALUES (?1, ?2, ?3)"
        " ON CONFLICT (node_seq, idx) DO UPDATE SET idle_since = CASE"
        " WHEN excluded.idle_since = 0 THEN 0 WHEN gpu_idle.idle_since = 0"
        " THEN excluded.idle_since ELSE gpu_idle.idle_since END";
    int rc = DB_OK, i;

    for (i = 0; rc == DB_OK && i < b->h->n_util; i++) {
        const struct db__arg args[] = {DB__I(b->h->node_seq), DB__I(i),
                                       DB__I(b->h->utilization[i] == 0 ? b->h->now_ms : 0)};

        if (b->h->utilization[i] >= 0)
            rc = db__exec_args(c, sql, args, DB__NARGS(args));
    }
    return rc;
}

/* A bound pod that runs: its GPU figures (gpu_usage.c). */
static int hb_gpu(struct db__conn *c, struct hb *b, const struct db_pod_report *p,
                  const struct binding *bd)
{
    struct db_pod_gpu_ctx x;

    memset(&x, 0, sizeof(x));
    x.wl_seq = bd->wl_seq;
    snprintf(x.wl_name, sizeof(x.wl_name), "%s", bd->wl_name);
    x.idx = bd->idx;
    x.given = bd->devices;
    x.node = b->node;
    x.now_ms = b->h->now_ms;
    return db__pod_gpu_record(c, &x, p);
}

static int hb_running(struct db__conn *c, struct hb *b, const struct db_pod_report *p,
                      const struct binding *bd, const struct run_state *rs)
{
    char msg[DB_MSG_LEN];
    int rc;

    if (!bd->found || (rs->exists && !rs->open))
        return DB_OK;
    if (rs->exists)
        return hb_gpu(c, b, p, bd);
    rc = run_start(c, p->uid, bd, b->h->node_seq, p->at_ms > 0 ? p->at_ms : b->h->now_ms);
    if (rc != DB_OK)
        return rc;
    snprintf(msg, sizeof(msg), "pod %d of %s started on %s%s%.200s", bd->idx, bd->wl_name,
             b->node, p->message[0] ? ": " : "", p->message);
    rc = db__event(c, bd->wl_seq, b->h->now_ms, "Normal", "Started", msg);
    if (rc == DB_OK)
        rc = wl_promote(c, b, bd->wl_seq, bd->wl_name);
    if (rc == DB_OK)
        rc = hb_gpu(c, b, p, bd);
    return rc;
}

static const char *exit_outcome(const struct db_pod_report *p, int bound)
{
    if (!bound)
        return "Stopped";
    if (p->stopped)
        return "Lost";
    return p->signal == 0 && p->exit_code == 0 ? "Succeeded" : "Failed";
}

/* A run that ended while no longer bound: the server stopped it. */
static int stopped_event(struct db__conn *c, struct hb *b, const char *uid,
                         const struct db_pod_report *p)
{
    static const char sql[] =
        "SELECT r.workload_seq, r.idx, w.name FROM pod_runs r"
        " JOIN workloads w ON w.seq = r.workload_seq WHERE r.uid = ?";
    const struct db__arg args[] = {DB__S(uid)};
    struct binding r;
    char msg[DB_MSG_LEN];
    int rc = db__query_row(c, sql, args, DB__NARGS(args), &binding_shape3, &r);

    if (rc != DB_OK)
        return rc == DB_ENOTFOUND || rc == DB_EIO ? DB_OK : rc; /* no run, or no row read */
    if (p->signal)
        snprintf(msg, sizeof(msg), "pod %d of %s stopped on %s (signal %d)", r.idx, r.wl_name,
                 b->node, p->signal);
    else
        snprintf(msg, sizeof(msg), "pod %d of %s stopped on %s (exit code %d)", r.idx,
                 r.wl_name, b->node, p->exit_code);
    rc = db__event(c, r.wl_seq, b->h->now_ms, "Normal", "Stopped", msg);
    return rc == DB_OK ? db__deletion_finish(c, r.wl_seq, b->h->now_ms) : rc;
}

/* A run that no longer bound pod was lost: a deleted workload may be done. */
static int unbound_lost(struct db__conn *c, struct hb *b, const char *uid)
{
    static const char sql[] = "SELECT workload_seq FROM pod_runs WHERE uid = ?";
    const struct db__arg args[] = {DB__S(uid)};
    int64_t wl = 0;
    int rc = db__query_one(c, sql, args, DB__NARGS(args), db__read_int64, &wl);

    if (rc == DB_ENOTFOUND)
        rc = DB_OK;
    return rc == DB_OK && wl ? db__deletion_finish(c, wl, b->h->now_ms) : rc;
}

static int hb_exited(struct db__conn *c, struct hb *b, const struct db_pod_report *p,
                     const struct binding *bd, const struct run_state *rs)
{
    const char *outcome = exit_outcome(p, bd->found);
    int64_t at = p->at_ms > 0 ? p->at_ms : b->h->now_ms;
    int rc = DB_OK;

    if (rs->exists && !rs->open)
        return DB_OK; /* invariant 3 */
    if (!rs->exists && !bd->found)
        return DB_OK; /* never started as far as allot knows, and unwanted */
    if (!rs->exists)
        rc = run_start(c, p->uid, bd, b->h->node_seq, at);
    if (rc == DB_OK)
        rc = run_end(c, p->uid, p, at, outcome);
    if (rc != DB_OK)
        return rc;
    if (!bd->found)
        return stopped_event(c, b, p->uid, p);
    if (strcmp(outcome, "Succeeded") == 0 || strcmp(outcome, "Failed") == 0)
        return wl_pod_ended(c, b, bd, p, strcmp(outcome, "Failed") == 0);
    return wl_lost(c, b, bd, p->uid, p->message[0] ? p->message : "stopped by its agent");
}

static int hb_lost(struct db__conn *c, struct hb *b, const struct db_pod_report *p,
                   const struct binding *bd, const struct run_state *rs)
{
    int rc = DB_OK;

    if (rs->exists && !rs->open)
        return DB_OK;
    if (rs->exists)
        rc = run_end(c, p->uid, NULL, b->h->now_ms, "Lost");
    if (rc == DB_OK && rs->exists && !bd->found)
        return unbound_lost(c, b, p->uid);
    if (rc != DB_OK || !bd->found)
        return rc;
    return wl_lost(c, b, bd, p->uid, p->message[0] ? p->message : "its agent lost it");
}

/* Step 2 */
static int hb_pod(struct db__conn *c, struct hb *b, const struct db_pod_report *p)
{
    struct binding bd;
    struct run_state rs;
    int rc;

    rc = hb_binding(c, b, p->uid, &bd);
    if (rc == DB_OK)
        rc = run_find(c, p->uid, b->h->node_seq, &rs);
    if (rc == DB_ENOTFOUND)
        return DB_OK; /* invariant 1 */
    if (rc != DB_OK)
        return rc;
    switch (p->state) {
    case DB_POD_RUNNING: return hb_running(c, b, p, &bd, &rs);
    case DB_POD_EXITED: return hb_exited(c, b, p, &bd, &rs);
    default: return hb_lost(c, b, p, &bd, &rs);
    }
}

static int reported(const struct db_heartbeat *h, const char *uid)
{
    int i;

    for (i = 0; i < h->n_pods; i++)
        if (strcmp(h->pods[i].uid, uid) == 0)
            return 1;
    return 0;
}

/* The uids of open runs the report left out. */
struct missing {
    const struct db_heartbeat *h;
    char (*uids)[DB_ID_LEN];
    int n, cap;
};

static int missing_read(struct db__stmt *st, void *arg)
{
    struct missing *m = arg;
    const char *uid = db__col_text(st, 0);
    int rc;

    if (!uid || reported(m->h, uid))
        return DB_OK;
    rc = db__grow(&m->uids, m->n, &m->cap, sizeof(*m->uids));
    if (rc == DB_OK)
        snprintf(m->uids[m->n++], DB_ID_LEN, "%s", uid);
    return rc;
}

/* Step 3: bound pods with an open run that the report left out. */
static int hb_missing(struct db__conn *c, struct hb *b)
{
    static const char sql[] =
        "SELECT p.uid FROM pods p JOIN pod_runs r ON r.uid = p.uid"
        " WHERE p.node_seq = ? AND r.finished_at = 0 ORDER BY p.uid";
    const struct db__arg args[] = {DB__I(b->h->node_seq)};
    struct missing m = {b->h, NULL, 0, 0};
    int i, rc = db__query_each(c, sql, args, DB__NARGS(args), missing_read, &m);
    char (*uids)[DB_ID_LEN] = m.uids;
    int n = m.n;

    for (i = 0; rc == DB_OK && i < n; i++) {
        struct db_pod_report p;
        memset(&p, 0, sizeof(p));
        snprintf(p.uid, sizeof(p.uid), "%s", uids[i]);
        p.state = DB_POD_LOST;
        snprintf(p.message, sizeof(p.message), "its agent no longer knows it");
        rc = hb_pod(c, b, &p);
    }
    free(uids);
    return rc;
}

/* Step 3, continued: Initializing workloads with pods here are promoted
 * once all their pods started, whichever report came last. */
static int hb_promote(struct db__conn *c, struct hb *b)
{
    static const char sql[] =
        "SELECT DISTINCT w.seq, w.name FROM pods p JOIN workloads w ON w.seq = p.workload_seq"
        " WHERE p.node_seq = ? AND w.phase = 'Initializing' AND w.deleted_at = 0";
    const struct db__arg args[] = {DB__I(b->h->node_seq)};
    struct named *wls = NULL;
    int n = 0, i;
    int rc = db__query_rows(c, sql, args, DB__NARGS(args), &named_shape, &wls, &n);

    for (i = 0; rc == DB_OK && i < n; i++)
        rc = wl_promote(c, b, wls[i].seq, wls[i].name);
    free(wls);
    return rc;
}

static const struct db__col assignment_cols[] = {
    DB__COLS(struct db_assignment, uid, idx, devices, workload_id, workload_name, type, image),
    DB__COL(struct db_assignment, spec, DB__DUP_NULL),
    DB__COLS(struct db_assignment, project_name),
};
static const struct db__shape assignment_shape =
    DB__SHAPE(struct db_assignment, assignment_cols, NULL);

/* Step 4 */
static int hb_assigned(struct db__conn *c, struct hb *b)
{
    static const char sql[] =
        "SELECT p.uid, p.idx, p.devices, w.id, w.name, w.type, w.image, w.spec, q.name"
        " FROM pods p JOIN workloads w ON w.seq = p.workload_seq"
        " JOIN queues q ON q.seq = w.project_seq"
        " WHERE p.node_seq = ? AND w.deleted_at = 0 AND p.start_after <= ? AND NOT EXISTS"
        " (SELECT 1 FROM pod_runs r WHERE r.uid = p.uid AND r.finished_at != 0)"
        " ORDER BY w.queued_seq, p.idx";
    struct db_heartbeat *h = b->h;
    const struct db__arg args[] = {DB__I(h->node_seq), DB__I(h->now_ms)};

    return db__query_rows(c, sql, args, DB__NARGS(args), &assignment_shape, &h->assigned,
                          &h->n_assigned);
}

static int heartbeat_fn(struct db__conn *c, void *arg)
{
    struct hb *b = arg;
    int rc, i;

    rc = hb_node(c, b);
    if (rc == DB_OK)
        rc = hb_idle(c, b);
    for (i = 0; rc == DB_OK && i < b->h->n_pods; i++)
        rc = hb_pod(c, b, &b->h->pods[i]);
    if (rc == DB_OK)
        rc = hb_missing(c, b);
    if (rc == DB_OK)
        rc = hb_promote(c, b);
    if (rc == DB_OK)
        rc = hb_assigned(c, b);
    for (i = 0; rc == DB_OK && i < b->t.n; i++)
        rc = db__change(c, DB_CHANGE_WORKLOAD, b->t.seqs[i]);
    if (rc == DB_OK && b->h->node_changed)
        rc = db__change(c, DB_CHANGE_ORG, 0);
    return rc;
}

void db_heartbeat_clear(struct db_heartbeat *h)
{
    int i;

    for (i = 0; h->assigned && i < h->n_assigned; i++)
        free(h->assigned[i].spec);
    free(h->assigned);
    free(h->touched);
    h->assigned = NULL;
    h->n_assigned = 0;
    h->touched = NULL;
    h->n_touched = 0;
    h->node_changed = 0;
}

int db_agent_heartbeat(struct db *db, struct db_heartbeat *h)
{
    struct hb b;
    int rc;

    memset(&b, 0, sizeof(b));
    b.h = h;
    h->assigned = NULL;
    h->touched = NULL;
    h->n_assigned = h->n_touched = h->node_changed = 0;
    rc = db__write(db, heartbeat_fn, &b);
    h->touched = b.t.seqs;
    h->n_touched = b.t.n;
    if (rc != DB_OK)
        db_heartbeat_clear(h);
    return rc;
}

/* ---- lost nodes ---- */

struct expire_arg {
    int64_t now, not_before, lost_after;
    int n_lost;
};

/* Sends one workload with pods on a lost node back to Pending. */
static int requeue_from(struct db__conn *c, int64_t node_seq, const char *node, int64_t wl_seq,
                        const char *wl_name, int64_t now)
{
    static const char sql[] = "DELETE FROM pods WHERE workload_seq = ? AND node_seq = ?";
    char msg[DB_MSG_LEN];
    struct change ch = {"Pending", 0, "Warning", "NodeLost", msg};
    const struct db__arg args[] = {DB__I(wl_seq), DB__I(node_seq)};
    int rc = db__exec_args(c, sql, args, DB__NARGS(args));

    if (rc != DB_OK)
        return rc;
    snprintf(msg, sizeof(msg), "node %s stopped heartbeating and is NotReady; %s goes back to"
             " Pending", node, wl_name);
    return wl_phase(c, NULL, wl_seq, &ch, now);
}

/* Marks one node NotReady and frees every pod bound there; a workload is
 * handled per turn until none has a pod left on the node. */
static int node_lost(struct db__conn *c, int64_t node_seq, const char *node, int64_t now)
{
    static const char down[] = "UPDATE nodes SET ready = 0, updated_at = ?2 WHERE seq = ?1";
    static const char next[] =
        "SELECT w.seq, w.name FROM pods p JOIN workloads w ON w.seq = p.workload_seq"
        " WHERE p.node_seq = ? ORDER BY w.seq LIMIT 1";
    static const char figures[] =
        "DELETE FROM pod_gpu WHERE uid IN"
        " (SELECT uid FROM pod_runs WHERE node_seq = ? AND finished_at = 0)";
    static const char runs[] =
        "UPDATE pod_runs SET finished_at = ?2, outcome = 'Lost'"
        " WHERE node_seq = ?1 AND finished_at = 0";
    const struct db__arg key[] = {DB__I(node_seq)}, key_now[] = {DB__I(node_seq), DB__I(now)};
    struct named wl;
    int rc = db__exec_args(c, down, key_now, DB__NARGS(key_now));

    while (rc == DB_OK &&
           (rc = db__query_row(c, next, key, DB__NARGS(key), &named_shape, &wl)) == DB_OK)
        rc = requeue_from(c, node_seq, node, wl.seq, wl.name, now);
    if (rc == DB_ENOTFOUND)
        rc = DB_OK; /* no pod left on the node */
    if (rc == DB_OK)
        rc = db__exec_args(c, figures, key, DB__NARGS(key));
    if (rc == DB_OK)
        rc = db__exec_args(c, runs, key_now, DB__NARGS(key_now));
    /* the runs of deleted workloads ended with the node */
    return rc == DB_OK ? db__deletions_finish(c, now) : rc;
}

/* The Ready nodes whose agent was last seen more than ?3 ms before ?1,
 * counted from ?2 at the earliest (this process's start): max(last_seen,
 * ?2) + ?3 < ?1, said so that the index agent_nodes_seen finds them (the
 * scheduler thread asks at every turn; only the late ones are read). */
#define LATE_NODES                                                                         \
    " FROM nodes n JOIN agent_nodes a ON a.node_seq = n.seq"                               \
    " WHERE n.ready = 1 AND ?2 < ?1 - ?3 AND a.last_seen < ?1 - ?3"

static int expire_fn(struct db__conn *c, void *arg)
{
    static const char sql[] = "SELECT n.seq, n.name" LATE_NODES " ORDER BY n.seq LIMIT 1";
    struct expire_arg *a = arg;
    const struct db__arg args[] = {DB__I(a->now), DB__I(a->not_before), DB__I(a->lost_after)};
    struct named node;
    int rc;

    while ((rc = db__query_row(c, sql, args, DB__NARGS(args), &named_shape, &node)) == DB_OK) {
        rc = node_lost(c, node.seq, node.name, a->now);
        if (rc != DB_OK)
            return rc;
        fprintf(stderr, "allotd: agent: node %s missed its heartbeats: NotReady\n", node.name);
        a->n_lost++;
    }
    return rc == DB_ENOTFOUND ? DB_OK : rc; /* no node late any more */
}

/* Reads first: a write (a group commit) only when some node is late. */
static int late_fn(struct db__conn *c, void *arg)
{
    static const char sql[] = "SELECT count(*)" LATE_NODES;
    struct expire_arg *a = arg;
    const struct db__arg args[] = {DB__I(a->now), DB__I(a->not_before), DB__I(a->lost_after)};
    int64_t n = 0;
    int rc = db__query_one(c, sql, args, DB__NARGS(args), db__read_int64, &n);

    a->n_lost = (int)n;
    return rc == DB_ENOTFOUND ? DB_EIO : rc;
}

int db_agent_expire(struct db *db, int64_t now_ms, int64_t not_before_ms, int64_t lost_after_ms,
                    int *n_lost)
{
    struct expire_arg a = {now_ms, not_before_ms, lost_after_ms, 0};
    int rc;

    *n_lost = 0;
    rc = db__read(db, late_fn, &a);
    if (rc != DB_OK || a.n_lost == 0)
        return rc;
    a.n_lost = 0;
    rc = db__write(db, expire_fn, &a);
    *n_lost = rc == DB_OK ? a.n_lost : 0;
    return rc;
}
