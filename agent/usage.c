/*
 * usage.c: which pod uses which GPU. The processes NVML or nvidia-smi
 * report on each device are traced to the pod they belong to; that makes
 * each pod's utilisation and memory per device, and shows a pod using a
 * device it was not given (outside its CUDA_VISIBLE_DEVICES).
 *
 * Step 1, usage_scan(): the owner of each process on a device, the first
 *   of:
 *     a. an ancestor is the pod's supervisor (shim.c makes it a child
 *        subreaper, so every process a direct run starts, double forks
 *        included, stays below it);
 *     b. its cgroup names the pod's container (the runtime wrote the
 *        container's id to DIR/cid);
 *     c. its environment holds ALLOT_POD_UID=<uid> (readable when it runs
 *        as the agent's user);
 *   else no pod (-1: a process allot does not run).
 * Step 2, usage_json(): a pod's devices, the ones it was given and the ones
 *   its processes use, each with
 *     utilization  the device's, when the device has one user (one pod,
 *                  or one pod and nobody else); on a shared device the sum
 *                  of its processes' SM utilisation where the device keeps
 *                  per-process samples (NVML), else the device's; left out
 *                  when unknown (the device gives none, e.g. under MIG);
 *     memoryUsedMiB  what its processes hold there; the device's used
 *                  memory when it is its only user and the processes'
 *                  figures are unknown; -1 when unknown.
 *
 * Invariant: owners are pod indices into a->pods.v as they were at the
 * scan; usage_json() is called before the table changes again.
 */
#include "agent.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ANCESTRY_MAX 64
#define PIDS_REPORTED 8

static int live(const struct pod *p)
{
    return p->state == POD_STARTING || p->state == POD_RUNNING;
}

/* a. The pod whose supervisor is an ancestor of pid. */
static int by_ancestry(const struct agent *a, pid_t pid)
{
    int k, i;

    for (k = 0; k < ANCESTRY_MAX && pid > 1; k++) {
        for (i = 0; i < a->pods.n; i++)
            if (live(&a->pods.v[i]) && a->pods.v[i].shim_pid == pid)
                return i;
        pid = proc_parent(pid);
    }
    return -1;
}

/* b. The pod whose container id is in pid's cgroup path. */
static int by_container(const struct agent *a, pid_t pid)
{
    char path[64], *text = NULL;
    int i, found = -1;

    for (i = 0; i < a->pods.n && found < 0; i++) {
        const struct pod *p = &a->pods.v[i];
        if (!live(p) || !p->container_id[0])
            continue;
        if (!text) {
            snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
            text = file_read(path, 16384);
            if (!text)
                return -1;
        }
        if (strstr(text, p->container_id))
            found = i;
    }
    free(text);
    return found;
}

/* c. The pod its environment names. */
static int by_environment(const struct agent *a, pid_t pid)
{
    char uid[AGENT_UID_LEN];
    int i;

    if (proc_env_value(pid, "ALLOT_POD_UID", uid, sizeof(uid)) != 0)
        return -1;
    for (i = 0; i < a->pods.n; i++)
        if (live(&a->pods.v[i]) && strcmp(a->pods.v[i].uid, uid) == 0)
            return i;
    return -1;
}

/* The container ids the runtimes wrote since the last scan. */
static void read_container_ids(struct agent *a)
{
    char path[AGENT_PATH_MAX], *text;
    int i;

    for (i = 0; i < a->pods.n; i++) {
        struct pod *p = &a->pods.v[i];
        if (!live(p) || p->container_id[0])
            continue;
        snprintf(path, sizeof(path), "%s/cid", p->dir);
        text = file_read(path, sizeof(p->container_id) - 1);
        if (text && strlen(text) >= 12 && strspn(text, "0123456789abcdef") >= 12)
            snprintf(p->container_id, sizeof(p->container_id), "%.*s",
                     (int)strspn(text, "0123456789abcdef"), text);
        free(text);
    }
}

/* Step 1 */
void usage_scan(struct agent *a)
{
    int d, k;

    read_container_ids(a);
    for (d = 0; d < a->n_now; d++)
        for (k = 0; k < a->now[d].n_procs; k++) {
            pid_t pid = a->now[d].procs[k].pid;
            int owner = by_ancestry(a, pid);
            if (owner < 0)
                owner = by_container(a, pid);
            if (owner < 0)
                owner = by_environment(a, pid);
            a->owner[d][k] = owner;
        }
}

/* ---- Step 2 ---- */

/* How many users device d has: pods given it, and owners of its
 * processes (other pods, or processes of no pod). */
static int users_of(const struct agent *a, int d)
{
    int seen_none = 0, n = 0, i, k;

    for (i = 0; i < a->pods.n; i++) {
        const struct pod *p = &a->pods.v[i];
        int given = live(p) && (p->devices >> d & 1);
        int has = 0;
        for (k = 0; !given && k < a->now[d].n_procs; k++)
            has = has || a->owner[d][k] == i;
        n += given || has;
    }
    for (k = 0; k < a->now[d].n_procs; k++)
        seen_none = seen_none || a->owner[d][k] < 0;
    return n + seen_none;
}

/* One device's figures for pod i; NULL if the pod neither has it nor
 * uses it. */
static json_t *device_json(const struct agent *a, int i, int d)
{
    const struct gpu_info *g = &a->now[d];
    const struct pod *p = &a->pods.v[i];
    int k, n_pids = 0, sm = 0, sm_known = 1, shared, util;
    int64_t mem = 0;
    int mem_known = 0;
    json_t *pids = json_array(), *o;

    for (k = 0; k < g->n_procs; k++) {
        if (a->owner[d][k] != i)
            continue;
        if (n_pids++ < PIDS_REPORTED)
            json_array_append_new(pids, json_integer(g->procs[k].pid));
        if (g->procs[k].mem_mib >= 0) {
            mem += g->procs[k].mem_mib;
            mem_known = 1;
        }
        if (g->procs[k].sm_util < 0)
            sm_known = 0;
        else
            sm += g->procs[k].sm_util;
    }
    if (!(p->devices >> d & 1) && n_pids == 0) {
        json_decref(pids);
        return NULL;
    }
    shared = users_of(a, d) > 1;
    if (!mem_known)
        mem = n_pids == 0 ? 0 : !shared ? g->mem_used_mib : -1;
    util = shared && g->util_per_process && sm_known ? (sm > 100 ? 100 : sm) : g->utilization;
    o = json_pack("{s:i, s:I, s:o}", "index", d, "memoryUsedMiB", (json_int_t)mem, "pids", pids);
    if (o && util >= 0) /* unknown: left out */
        json_object_set_new(o, "utilization", json_integer(util));
    return o;
}

json_t *usage_json(const struct agent *a, const struct pod *p)
{
    json_t *arr;
    int i = (int)(p - a->pods.v), d;

    if (a->n_now < 0)
        return NULL; /* no figures: declared GPUs, or the source failed */
    arr = json_array();
    for (d = 0; arr && d < a->n_now; d++) {
        json_t *o = device_json(a, i, d);
        if (o)
            json_array_append_new(arr, o);
    }
    return arr;
}
