/*
 * enforce.c: what the control loop runs before each turn, on what the
 * agents reported: the nodes of agents that stopped heartbeating are lost
 * (their workloads requeued, db_agent_expire()), and Running workloads
 * past their time or idle-GPU limit (the rules of their project when they
 * were submitted) are suspended.
 *
 * Invariants:
 *   1. A node is lost only after lost_after_ms of silence counted from the
 *      later of its last heartbeat and this process's start, so a restart
 *      of allotd never loses a node that heartbeats.
 *   2. A workload's time is all of its runs; it is idle only when every
 *      device its pods hold is measured at 0%, and never from before it
 *      started.
 */
#include "control.h"
#include "db_agent.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

/* The seconds a project's rule sets (> 0), or 0 for none. */
static int64_t rule_s(json_t *rules, const char *key)
{
    json_t *v = key ? json_object_get(rules, key) : NULL;

    return json_is_integer(v) && json_integer_value(v) > 0 ? json_integer_value(v) : 0;
}

static const char *time_rule(int type)
{
    return type == DB_WORKSPACE ? "interactiveJobTimeLimitSeconds"
           : type == DB_INFERENCE ? NULL : "trainingJobTimeLimitSeconds";
}

/* The idle-GPU rule of a workload: workspaces have one for preemptible
 * and one for non-preemptible ones. */
static const char *idle_rule(int type, int preemptible)
{
    if (type == DB_WORKSPACE)
        return preemptible ? "interactiveJobPreemptIdleDurationSeconds"
                           : "interactiveJobMaxIdleDurationSeconds";
    return type == DB_INFERENCE ? NULL : "trainingJobMaxIdleDurationSeconds";
}

/* Is l past its time or idle limit? Says which in why. Its time is all of
 * its runs (earlier ones and this one). The workload is idle when every
 * device its pods were given is measured (agent/usage.c: the pod's share
 * of it) at 0%; it counts as idle from the last of its pods'
 * zero-utilisation streaks' start, and never from before the workload
 * started. */
static int over_limit(const struct db_limited *l, int64_t now, char *why, size_t len)
{
    json_t *rules = json_loads(l->rules, 0, NULL);
    const char *idle = idle_rule(l->type, l->preemptible);
    int64_t t = rule_s(rules, time_rule(l->type)), i = rule_s(rules, idle);
    int64_t idle_from = l->idle_since > l->started_ms ? l->idle_since : l->started_ms;
    int64_t ran = l->run_ms + (l->started_ms > 0 ? now - l->started_ms : 0);
    int over = 0;

    if (t > 0 && l->started_ms > 0 && ran >= t * 1000) {
        snprintf(why, len, "%s: %s ran %lld s, the limit is %lld s", time_rule(l->type),
                 l->name, (long long)(ran / 1000), (long long)t);
        over = 1;
    } else if (i > 0 && l->n_devices > 0 && l->n_idle == l->n_devices &&
               l->n_unmeasured == 0 && now - idle_from >= i * 1000) {
        snprintf(why, len, "%s: the GPUs of %s were idle for %lld s, the limit is %lld s",
                 idle, l->name, (long long)((now - idle_from) / 1000),
                 (long long)i);
        over = 1;
    }
    json_decref(rules);
    return over;
}

/* Suspends the Running workloads past their project's limits. */
static int enforce_limits(struct db *db, int64_t now_ms)
{
    struct db_limited *ls = NULL;
    char why[DB_MSG_LEN];
    int n = 0, i, done = 0;

    if (db_agent_limited(db, &ls, &n) != DB_OK)
        return -1;
    for (i = 0; i < n; i++)
        if (over_limit(&ls[i], now_ms, why, sizeof(why)) &&
            db_workload_act(db, ls[i].seq, DB_WL_SUSPEND, why, now_ms) == DB_OK)
            done++;
    free(ls);
    return done;
}

int ctl_agents_enforce(struct db *db, int64_t now_ms, int64_t started_ms, int64_t lost_after_ms)
{
    int lost = 0, limited;

    if (db_agent_expire(db, now_ms, started_ms, lost_after_ms, &lost) != DB_OK)
        return -1;
    limited = enforce_limits(db, now_ms);
    return limited < 0 ? -1 : lost + limited;
}
