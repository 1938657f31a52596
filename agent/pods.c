/*
 * pods.c: the pods this agent runs, as the server assigns them.
 *
 * A pod's life here (the supervisor, shim.c, does the process work):
 *   assigned, unknown here     -> pods/<uid>/ with spec.json, a supervisor
 *                                 started in its own session: STARTING
 *   the supervisor wrote pid   -> RUNNING (reported "Running")
 *   it wrote exit.json         -> EXITED  (reported "Exited")
 *   it is gone without one     -> LOST    (what is left of the pod is
 *                                 killed; reported "Lost")
 *   no longer assigned         -> SIGTERM to the supervisor, once: it stops
 *                                 the pod within its grace period
 *   EXITED or LOST, the end reported and the log uploaded -> forgotten, its
 *                                 directory removed
 *
 * Invariants:
 *   1. A new pod waits while a pod being stopped holds one of its
 *      devices: a device is never used by two pods that were not bound to
 *      it together.
 *   2. Every pod directory under pods/ is in the table (pods_scan() reads
 *      them at start), so no pod is forgotten before its end is reported.
 *   3. A pod's end is reported after its log is uploaded (up to a
 *      round's LOG_ROUND_MAX; a longer log's rest follows its end), so a
 *      workload the server calls ended has every line its pods wrote (a
 *      client reading them then misses none). A pod the server heard start has
 *      its log uploaded before the heartbeat that reports its end
 *      (pods_ship_ended_logs()); one that ended before the server heard
 *      it start, having written something, is reported Running (the
 *      server then holds its run, which a log is uploaded to), and its
 *      end in the heartbeat after, which comes at once (pods_end_held()).
 */
#define _GNU_SOURCE
#include "agent.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define LOG_CHUNK (256 * 1024)
#define LOG_ROUND_MAX (4 * 1024 * 1024)

static struct pod *pod_find(struct agent *a, const char *uid)
{
    int i;

    for (i = 0; i < a->pods.n; i++)
        if (strcmp(a->pods.v[i].uid, uid) == 0)
            return &a->pods.v[i];
    return NULL;
}

static struct pod *pod_add(struct agent *a)
{
    struct pods *p = &a->pods;

    if (p->n == p->cap) {
        int cap = p->cap ? p->cap * 2 : 16;
        struct pod *v = realloc(p->v, sizeof(*v) * (size_t)cap);
        if (!v)
            return NULL;
        p->v = v;
        p->cap = cap;
    }
    memset(&p->v[p->n], 0, sizeof(p->v[p->n]));
    return &p->v[p->n++];
}

void pods_free(struct pods *p)
{
    free(p->v);
    memset(p, 0, sizeof(*p));
}

static void path_in(const struct pod *p, const char *name, char *out, size_t len)
{
    snprintf(out, len, "%s/%s", p->dir, name);
}

static int file_exists(const char *path)
{
    struct stat sb;

    return stat(path, &sb) == 0;
}

static uint64_t devices_of(const json_t *a)
{
    uint64_t d = 0;
    json_t *v;
    size_t i;

    json_array_foreach(a, i, v)
        if (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) < 64)
            d |= (uint64_t)1 << json_integer_value(v);
    return d;
}

/* Fills identity fields from a spec (the server's assignment). */
static void pod_from_spec(struct pod *p, const json_t *spec)
{
    const char *s = json_string_value(json_object_get(spec, "uid"));
    const char *w = json_string_value(json_object_get(spec, "workloadName"));

    snprintf(p->uid, sizeof(p->uid), "%s", s ? s : "");
    snprintf(p->workload, sizeof(p->workload), "%s", w ? w : "");
    p->pod_index = (int)json_integer_value(json_object_get(spec, "podIndex"));
    p->devices = devices_of(json_object_get(spec, "devices"));
}

/* ---- how a pod ended ---- */

static void read_exit(struct pod *p)
{
    char path[AGENT_PATH_MAX];
    json_t *o;
    const char *m;

    path_in(p, "exit.json", path, sizeof(path));
    o = json_load_file(path, 0, NULL);
    p->state = POD_EXITED;
    p->exit_code = (int)json_integer_value(json_object_get(o, "exitCode"));
    p->signal = (int)json_integer_value(json_object_get(o, "signal"));
    p->stopped = json_is_true(json_object_get(o, "stopped"));
    p->never_ran = json_is_false(json_object_get(o, "ran"));
    p->at_ms = json_integer_value(json_object_get(o, "at"));
    m = json_string_value(json_object_get(o, "message"));
    snprintf(p->message, sizeof(p->message), "%s", m ? m : "");
    if (!o) {
        p->exit_code = -1;
        snprintf(p->message, sizeof(p->message), "its exit.json is unreadable");
    }
    json_decref(o);
}

static void mark_lost(struct pod *p, const char *why)
{
    int n = proc_kill_pod(p->uid); /* what is left of it must not run on */

    p->state = POD_LOST;
    p->at_ms = agent_now_ms();
    snprintf(p->message, sizeof(p->message), "%s%s", why,
             n ? "; its remaining processes were killed" : "");
    fprintf(stderr, "allot-agent: pod %s (%s) lost: %s\n", p->uid, p->workload, p->message);
}

/* ---- finding pods after a restart ---- */

static void adopt(struct agent *a, const char *dir, const char *name)
{
    char path[AGENT_PATH_MAX], *text;
    struct pod *p;
    json_t *spec;
    long pid = 0;
    unsigned long long start = 0;

    if (strlen(name) >= AGENT_UID_LEN || strspn(name, "0123456789abcdef") != strlen(name))
        return; /* not a pod's directory */
    snprintf(path, sizeof(path), "%s/%s/spec.json", dir, name);
    spec = json_load_file(path, 0, NULL);
    p = spec ? pod_add(a) : NULL;
    if (!p) {
        json_decref(spec);
        return;
    }
    snprintf(p->dir, sizeof(p->dir), "%.520s/%.39s", dir, name);
    pod_from_spec(p, spec);
    json_decref(spec);
    p->assigned = 1; /* until the server says otherwise */
    path_in(p, "shim.pid", path, sizeof(path));
    text = file_read(path, 128);
    if (text && sscanf(text, "%ld %llu", &pid, &start) == 2) {
        p->shim_pid = (pid_t)pid;
        p->shim_start = start;
    }
    free(text);
    path_in(p, "exit.json", path, sizeof(path));
    if (file_exists(path))
        read_exit(p);
    else if (!proc_alive(p->shim_pid, p->shim_start))
        mark_lost(p, "its supervisor was gone when the agent started");
    else {
        path_in(p, "pid", path, sizeof(path));
        p->state = file_exists(path) ? POD_RUNNING : POD_STARTING;
    }
}

int pods_scan(struct agent *a)
{
    char dir[AGENT_DIR_MAX + 8];
    struct dirent *e;
    DIR *d;

    snprintf(dir, sizeof(dir), "%s/pods", a->o.work_dir);
    d = opendir(dir);
    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            adopt(a, dir, e->d_name);
    closedir(d);
    if (a->pods.n)
        fprintf(stderr, "allot-agent: found %d pod%s from before\n", a->pods.n,
                a->pods.n == 1 ? "" : "s");
    return 0;
}

/* ---- watching ---- */

void pods_poll(struct agent *a)
{
    char path[AGENT_PATH_MAX];
    int i;

    while (waitpid(-1, NULL, WNOHANG) > 0)
        ; /* supervisors this agent started; their exit.json tells the rest */
    for (i = 0; i < a->pods.n; i++) {
        struct pod *p = &a->pods.v[i];
        if (p->state != POD_STARTING && p->state != POD_RUNNING)
            continue;
        path_in(p, "exit.json", path, sizeof(path));
        if (file_exists(path)) {
            read_exit(p);
            continue;
        }
        if (!proc_alive(p->shim_pid, p->shim_start)) {
            mark_lost(p, "its supervisor died");
            continue;
        }
        path_in(p, "pid", path, sizeof(path));
        if (p->state == POD_STARTING && file_exists(path)) {
            p->state = POD_RUNNING;
            p->at_ms = p->started_ms = agent_now_ms();
        }
    }
}

/* ---- reporting ---- */

/* Invariant 3: an ended pod the server never heard start, whose log holds
 * something, is reported Running this once. */
static int end_held(const struct pod *p)
{
    char path[AGENT_PATH_MAX];
    struct stat sb;

    if (p->state != POD_EXITED || p->reported_running || p->never_ran || p->log_done)
        return 0;
    path_in(p, "log", path, sizeof(path));
    return stat(path, &sb) == 0 && sb.st_size > 0;
}

static json_t *pod_json(const struct agent *a, const struct pod *p)
{
    json_t *o;

    if (p->end_held) /* started at started_ms, or (never seen running) when it ended */
        return json_pack("{s:s, s:s, s:I, s:s}", "uid", p->uid, "state", "Running", "at",
                         (json_int_t)(p->started_ms ? p->started_ms : p->at_ms), "message",
                         "");
    switch (p->state) {
    case POD_RUNNING:
        o = json_pack("{s:s, s:s, s:I, s:s}", "uid", p->uid, "state", "Running", "at",
                      (json_int_t)p->at_ms, "message", p->message);
        if (o && a->n_now >= 0)
            json_object_set_new(o, "gpus", usage_json(a, p));
        return o;
    case POD_EXITED:
        return json_pack("{s:s, s:s, s:i, s:i, s:b, s:b, s:I, s:s}", "uid", p->uid, "state",
                         "Exited", "exitCode", p->exit_code < -1 || p->exit_code > 255
                                                   ? -1 : p->exit_code,
                         "signal", p->signal, "stopped", p->stopped, "ran", !p->never_ran,
                         "at", (json_int_t)p->at_ms, "message", p->message);
    case POD_LOST:
        return json_pack("{s:s, s:s, s:s}", "uid", p->uid, "state", "Lost", "message",
                         p->message);
    default:
        return NULL; /* STARTING: nothing to say yet */
    }
}

json_t *pods_report(struct agent *a)
{
    json_t *arr = json_array();
    int i;

    for (i = 0; arr && i < a->pods.n; i++) {
        json_t *o;
        a->pods.v[i].end_held = end_held(&a->pods.v[i]);
        o = pod_json(a, &a->pods.v[i]);
        if (o)
            json_array_append_new(arr, o);
    }
    return arr;
}

int pods_live(const struct agent *a)
{
    int i;

    for (i = 0; i < a->pods.n; i++)
        if (a->pods.v[i].state == POD_STARTING || a->pods.v[i].state == POD_RUNNING)
            return 1;
    return 0;
}

void pods_reported(struct agent *a)
{
    int i;

    for (i = 0; i < a->pods.n; i++) {
        struct pod *p = &a->pods.v[i];
        if (p->state == POD_RUNNING || p->end_held)
            p->reported_running = 1;
        else if (p->state == POD_EXITED || p->state == POD_LOST)
            p->reported_end = 1;
    }
}

int pods_end_held(const struct agent *a)
{
    int i;

    for (i = 0; i < a->pods.n; i++)
        if (a->pods.v[i].end_held && !a->pods.v[i].reported_end)
            return 1;
    return 0;
}

/* ---- starting and stopping ---- */

/* Invariant 1: does a pod being stopped hold one of these devices? */
static int devices_busy(const struct agent *a, uint64_t devices)
{
    int i;

    for (i = 0; i < a->pods.n; i++) {
        const struct pod *p = &a->pods.v[i];
        if (!p->assigned && (p->state == POD_STARTING || p->state == POD_RUNNING) &&
            (p->devices & devices))
            return 1;
    }
    return 0;
}

static void start_message(const struct agent *a, const json_t *spec, char *out, size_t len)
{
    const char *image = json_string_value(json_object_get(spec, "image"));
    const char *role = json_string_value(json_object_get(json_object_get(spec, "mpi"), "role"));

    if (role)
        snprintf(out, len, "ran %s directly (an MPI pod's exec endpoint runs on the node)",
                 strcmp(role, "worker") == 0 ? "the MPI launcher's exec endpoint"
                                             : "the command");
    else if (image && image[0] && a->runtime[0])
        snprintf(out, len, "ran image %.200s with %s", image, a->runtime);
    else if (image && image[0])
        snprintf(out, len, "no container runtime on this node: ran the command directly,"
                 " without image %.200s", image);
    else
        snprintf(out, len, "ran the command directly");
}

/* The supervisor, in its own session, with nothing of the agent open. */
static pid_t spawn_shim(const struct agent *a, const char *dir)
{
    pid_t pid;

    pid = fork();
    if (pid == 0) {
        char *argv[] = {"allot-agent", "--shim", (char *)dir, (char *)a->lease_path,
                        (char *)a->runtime, NULL};
        int null = open("/dev/null", O_RDWR);
        setsid();
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
        proc_close_from_3();
        proc_reset_signals();
        execv(a->self, argv);
        _exit(127);
    }
    return pid;
}

static int prepare_dir(const struct agent *a, const json_t *spec, const char *dir)
{
    char path[AGENT_PATH_MAX + 16], *text;
    json_t *full = json_deep_copy(spec);
    int rc = -1;

    if (!full)
        return -1;
    json_object_set_new(full, "node", json_string(a->o.name));
    text = json_dumps(full, JSON_COMPACT);
    snprintf(path, sizeof(path), "%s/work", dir);
    if (text && (mkdir(dir, 0700) == 0 || errno == EEXIST) &&
        (mkdir(path, 0700) == 0 || errno == EEXIST)) {
        /* the spec holds the values of the pod's secrets: the owner's only */
        snprintf(path, sizeof(path), "%s/spec.json", dir);
        rc = file_write_atomic(path, text, strlen(text));
        if (rc == 0)
            rc = chmod(path, 0600);
    }
    if (rc == 0 && json_is_object(json_object_get(spec, "mpi"))) {
        /* the workload's exec key: the owner's only (mpi_exec.c) */
        char *mpi = json_dumps(json_object_get(spec, "mpi"), JSON_COMPACT);
        snprintf(path, sizeof(path), "%s/mpi.json", dir);
        rc = mpi ? file_write_atomic(path, mpi, strlen(mpi)) : -1;
        if (rc == 0)
            rc = chmod(path, 0600);
        free(mpi);
    }
    if (rc == 0 && json_is_string(json_object_get(spec, "hostfile"))) {
        const char *hosts = json_string_value(json_object_get(spec, "hostfile"));
        snprintf(path, sizeof(path), "%s/hostfile", dir);
        rc = file_write_atomic(path, hosts, strlen(hosts));
    }
    free(text);
    json_decref(full);
    return rc;
}

static void start_pod(struct agent *a, const json_t *spec)
{
    const char *uid = json_string_value(json_object_get(spec, "uid"));
    struct pod *p;

    if (!uid || !uid[0] || strspn(uid, "0123456789abcdef") != strlen(uid) ||
        devices_busy(a, devices_of(json_object_get(spec, "devices"))))
        return; /* a bad uid never names a directory; busy devices: next time */
    p = pod_add(a);
    if (!p)
        return;
    pod_from_spec(p, spec);
    snprintf(p->dir, sizeof(p->dir), "%s/pods/%.39s", a->o.work_dir, uid);
    p->assigned = 1;
    start_message(a, spec, p->message, sizeof(p->message));
    if (prepare_dir(a, spec, p->dir) != 0 || (p->shim_pid = spawn_shim(a, p->dir)) <= 0) {
        fprintf(stderr, "allot-agent: cannot start pod %s of %s\n", uid, p->workload);
        file_remove_tree(p->dir);
        a->pods.n--;
        return;
    }
    p->shim_start = proc_start_time(p->shim_pid);
    p->state = POD_STARTING;
    fprintf(stderr, "allot-agent: starting pod %d of %s (%s)\n", p->pod_index, p->workload,
            uid);
}

static void stop_pod(struct pod *p)
{
    if (p->stop_sent || (p->state != POD_STARTING && p->state != POD_RUNNING))
        return;
    if (proc_alive(p->shim_pid, p->shim_start))
        kill(p->shim_pid, SIGTERM);
    p->stop_sent = 1;
    fprintf(stderr, "allot-agent: stopping pod %d of %s (%s)\n", p->pod_index, p->workload,
            p->uid);
}

void pods_reconcile(struct agent *a, const json_t *assigned)
{
    json_t *e;
    size_t k;
    int i;

    for (i = 0; i < a->pods.n; i++)
        a->pods.v[i].assigned = 0;
    json_array_foreach(assigned, k, e) {
        const char *uid = json_string_value(json_object_get(e, "uid"));
        struct pod *p = uid ? pod_find(a, uid) : NULL;
        if (p)
            p->assigned = 1;
    }
    for (i = 0; i < a->pods.n; i++)
        if (!a->pods.v[i].assigned)
            stop_pod(&a->pods.v[i]);
    json_array_foreach(assigned, k, e) {
        const char *uid = json_string_value(json_object_get(e, "uid"));
        if (uid && !pod_find(a, uid) && json_object_get(e, "workloadId"))
            start_pod(a, e);
    }
}

/* ---- logs ---- */

/* Uploads one chunk; 1 to go on, 0 to stop for this round. */
static int ship_chunk(struct agent *a, struct pod *p, const char *path, int64_t size)
{
    char url[128], *buf;
    size_t n = (size_t)(size - p->log_sent < LOG_CHUNK ? size - p->log_sent : LOG_CHUNK);
    json_t *reply = NULL;
    long status = 0;
    ssize_t got;
    int fd, go = 0;

    buf = malloc(n);
    fd = buf ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    got = fd >= 0 ? pread(fd, buf, n, (off_t)p->log_sent) : -1;
    if (fd >= 0)
        close(fd);
    snprintf(url, sizeof(url), "/api/v1/agent/pods/%s/logs?offset=%lld", p->uid,
             (long long)p->log_sent);
    if (got > 0 &&
        client_post_bytes(a->cl, url, buf, (size_t)got, &reply, &status) == 0) {
        json_t *size_j = json_object_get(reply, "size");
        if ((status == 200 || status == 409) && json_is_integer(size_j)) {
            p->log_sent = json_integer_value(size_j);
            go = status == 200;
        } else if (status == 404) {
            p->log_done = 1; /* the server keeps no run of it */
        }
    }
    json_decref(reply);
    free(buf);
    return go;
}

static void ship_pod(struct agent *a, struct pod *p)
{
    char path[AGENT_PATH_MAX];
    struct stat sb;
    int64_t budget = LOG_ROUND_MAX, before;

    path_in(p, "log", path, sizeof(path));
    if (stat(path, &sb) != 0) {
        p->log_done = p->state == POD_EXITED || p->state == POD_LOST;
        return;
    }
    while (!p->log_done && p->log_sent < sb.st_size && budget > 0) {
        before = p->log_sent;
        if (!ship_chunk(a, p, path, sb.st_size))
            break;
        budget -= p->log_sent - before;
    }
    if (p->log_sent >= sb.st_size && (p->state == POD_EXITED || p->state == POD_LOST))
        p->log_done = 1;
}

void pods_ship_ended_logs(struct agent *a)
{
    int i;

    for (i = 0; i < a->pods.n; i++) {
        struct pod *p = &a->pods.v[i];
        if (!p->log_done && p->reported_running && !p->reported_end &&
            (p->state == POD_EXITED || p->state == POD_LOST))
            ship_pod(a, p);
    }
}

void pods_ship_logs(struct agent *a)
{
    int i;

    for (i = 0; i < a->pods.n; i++) {
        struct pod *p = &a->pods.v[i];
        if (!p->log_done && (p->reported_running || p->reported_end))
            ship_pod(a, p);
    }
}

void pods_forget(struct agent *a)
{
    int i = 0;

    while (i < a->pods.n) {
        struct pod *p = &a->pods.v[i];
        if ((p->state == POD_EXITED || p->state == POD_LOST) && p->reported_end &&
            p->log_done) {
            file_remove_tree(p->dir);
            a->pods.v[i] = a->pods.v[--a->pods.n];
            continue;
        }
        i++;
    }
}
