/*
 * restarts.c: what a pod that ended is owed before its workload's fate is
 * decided: a restart, as Run:ai's restartPolicy and backoffLimit say
 * (docs/agent.md, "Restarts"). Called from a heartbeat's write
 * (agent_pods.c) when a bound pod's run ends with an outcome.
 *
 * A pod whose command could not be run at all (no command, not found,
 * its data or working directory not ready) is not restarted: the same spec
 * would fail the same way.
 *
 *   outcome     inference             training, workspace, distributed
 *   Failed      restart that replica  restart while restarts < backoffLimit
 *               (no limit)            (default 6), then Failed with the
 *                                     limit in its message
 *   Succeeded   restart that replica  counted towards Completed, unless
 *               if restartPolicy is   restartPolicy is Always (a workspace):
 *               Always (the default)  then restarted
 *
 * A restart gives the pod a new uid (the name its agent runs it under), so
 * its agent starts it again; a gang (a workload of several pods that is
 * not an inference) restarts every pod together: their old uids are no
 * longer assigned and their agents stop them. The new uids may start
 * after a back-off: none for the first restart, then 1 s, 2 s, 4 s ...
 * up to 5 min (pods.start_after), so a pod that crashes at once does not
 * spin. Each restart is an event (Restarting) and counts in the
 * workload's restarts.
 *
 * Invariants:
 *   1. Only a pod still bound is restarted, and only inside the heartbeat
 *      that ended its run: a restart and the run's end commit together.
 *   2. A restart never changes where pods run (node, devices): the
 *      scheduler's placement stands; only the uids change.
 */
#include "db_agent.h"
#include "db_int.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define DEFAULT_BACKOFF_LIMIT 6
#define BACKOFF_MAX_MS 300000

struct restart_row {
    int type;                     /* enum db_wl_type */
    int n_pods;
    int64_t restarts;
    char *spec;
};

static const struct db__col restart_cols[] = {
    DB__COLS(struct restart_row, type, n_pods, restarts),
    DB__COL(struct restart_row, spec, DB__DUP_NULL),
};
static const struct db__shape restart_shape = DB__SHAPE(struct restart_row, restart_cols, NULL);

/* A new pod uid: 32 hex digits, as the schema's trigger makes them. */
static int new_uid(char out[33])
{
    unsigned char raw[16];
    int i;

    if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
        return DB_EIO;
    for (i = 0; i < 16; i++)
        snprintf(out + i * 2, 3, "%02x", raw[i]);
    return DB_OK;
}

/* The back-off before restart number n (1-based) may start. */
int64_t db_restart_backoff_ms(int64_t n)
{
    int64_t ms = 1000;

    if (n <= 1)
        return 0;
    while (n-- > 2 && ms < BACKOFF_MAX_MS)
        ms *= 2;
    return ms < BACKOFF_MAX_MS ? ms : BACKOFF_MAX_MS;
}

/* The spec's restart settings: *limit (-1: none), *always. */
static void policy_of(const struct restart_row *w, int64_t *limit, int *always)
{
    json_t *spec = w->spec ? json_loads(w->spec, 0, NULL) : NULL;
    json_t *bl = json_object_get(spec, "backoffLimit");
    const char *rp = json_string_value(json_object_get(spec, "restartPolicy"));

    if (w->type == DB_INFERENCE)
        *limit = -1;
    else
        *limit = json_is_integer(bl) ? json_integer_value(bl) : DEFAULT_BACKOFF_LIMIT;
    *always = rp ? strcmp(rp, "Always") == 0 : w->type == DB_INFERENCE;
    json_decref(spec);
}

/* The pod indexes of a workload, read into a growing array. */
struct idx_list {
    int *v;
    int n, cap;
};

static int read_idx(struct db__stmt *st, void *arg)
{
    struct idx_list *l = arg;
    int rc = db__grow(&l->v, l->n, &l->cap, sizeof(*l->v));

    if (rc == DB_OK)
        l->v[l->n++] = db__col_int(st, 0);
    return rc;
}

/* A new uid for pod idx of the workload, startable after start_after. */
static int renew_uid(struct db__conn *c, int64_t wl_seq, int idx, int64_t start_after)
{
    static const char sql[] =
        "UPDATE pods SET uid = ?, start_after = ? WHERE workload_seq = ? AND idx = ?";
    char uid[33];
    const struct db__arg args[] = {DB__S(uid), DB__I(start_after), DB__I(wl_seq), DB__I(idx)};
    int rc = new_uid(uid);

    return rc == DB_OK ? db__exec_args(c, sql, args, DB__NARGS(args)) : rc;
}

/* New uids for pod idx of the workload (idx < 0: every pod). */
static int renew_uids(struct db__conn *c, int64_t wl_seq, int idx, int64_t start_after)
{
    static const char idxs[] = "SELECT idx FROM pods WHERE workload_seq = ? ORDER BY idx";
    const struct db__arg key[] = {DB__I(wl_seq)};
    struct idx_list l = {NULL, 0, 0};
    int i, rc;

    if (idx >= 0)
        return renew_uid(c, wl_seq, idx, start_after);
    rc = db__query_each(c, idxs, key, DB__NARGS(key), read_idx, &l);
    for (i = 0; rc == DB_OK && i < l.n; i++)
        rc = renew_uid(c, wl_seq, l.v[i], start_after);
    free(l.v);
    return rc;
}

int db__pod_restart(struct db__conn *c, int64_t wl_seq, int idx, const char *why, int failed,
                    int never_ran, int64_t now, int *restarted, char *limit_note, size_t len)
{
    static const char get[] = "SELECT type, n_pods, restarts, spec FROM workloads WHERE seq = ?";
    static const char count[] =
        "UPDATE workloads SET restarts = restarts + 1, updated_at = ?, version = version + 1"
        " WHERE seq = ?";
    const struct db__arg key[] = {DB__I(wl_seq)}, counted[] = {DB__I(now), DB__I(wl_seq)};
    struct restart_row w;
    char msg[DB_MSG_LEN];
    int64_t limit;
    int always, gang, rc;

    *restarted = 0;
    limit_note[0] = '\0';
    memset(&w, 0, sizeof(w));
    rc = db__query_row(c, get, key, DB__NARGS(key), &restart_shape, &w);
    if (rc != DB_OK)
        return rc == DB_ENOTFOUND ? DB_OK : rc;
    policy_of(&w, &limit, &always);
    if (!failed && !always)
        goto out;
    if (failed && never_ran) {
        snprintf(limit_note, len, "; not restarted: its command could not run");
        goto out;
    }
    if (failed && limit >= 0 && w.restarts >= limit) {
        snprintf(limit_note, len, "; backoffLimit %lld reached", (long long)limit);
        goto out;
    }
    gang = w.type != DB_INFERENCE && w.n_pods > 1;
    rc = renew_uids(c, wl_seq, gang ? -1 : idx, now + db_restart_backoff_ms(w.restarts + 1));
    if (rc == DB_OK)
        rc = db__exec_args(c, count, counted, DB__NARGS(counted));
    if (rc != DB_OK)
        goto out;
    if (limit >= 0)
        snprintf(msg, sizeof(msg), "%.300s: restarting %s (restart %lld of %lld)", why,
                 gang ? "every pod of the gang" : "the pod", (long long)w.restarts + 1,
                 (long long)limit);
    else
        snprintf(msg, sizeof(msg), "%.300s: restarting %s (restart %lld)", why,
                 gang ? "every pod of the gang" : "the pod", (long long)w.restarts + 1);
    rc = db__event(c, wl_seq, now, failed ? "Warning" : "Normal", "Restarting", msg);
    *restarted = rc == DB_OK;
out:
    free(w.spec);
    return rc;
}

int db__mpi_launcher(struct db__conn *c, int64_t wl_seq, int idx, int *yes)
{
    static const char get[] = "SELECT type, n_pods, restarts, spec FROM workloads WHERE seq = ?";
    const struct db__arg key[] = {DB__I(wl_seq)};
    struct restart_row w;
    json_t *spec, *workers;
    const char *fw;
    int rc;

    *yes = 0;
    memset(&w, 0, sizeof(w));
    rc = db__query_row(c, get, key, DB__NARGS(key), &restart_shape, &w);
    if (rc != DB_OK || idx != 0 || w.type != DB_DISTRIBUTED || w.n_pods < 2)
        goto out;
    spec = w.spec ? json_loads(w.spec, 0, NULL) : NULL;
    fw = json_string_value(json_object_get(spec, "distributedFramework"));
    workers = json_object_get(spec, "numWorkers");
    *yes = fw && strcmp(fw, "MPI") == 0 &&
           !(json_is_integer(workers) && json_integer_value(workers) >= w.n_pods);
    json_decref(spec);
out:
    free(w.spec);
    return rc == DB_ENOTFOUND ? DB_OK : rc;
}
