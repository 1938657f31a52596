/*
 * main.c: allot-agent: options, start, and the loop that keeps this node's
 * pods in line with what allotd assigns.
 *
 * Start:
 *   Step 1: options and the token; the work directory and the lease a
 *           previous agent held (lease.c);
 *   Step 2: the container runtime, the GPUs (NVML, else nvidia-smi, or
 *           --gpus N);
 *   Step 3: the pods a previous agent left (pods_scan());
 * then every tick (at most TICK_MS, sooner when a supervisor exits):
 *   watch the pods; when due, register (until it works) or heartbeat:
 *   report every pod and the GPUs' utilisation and memory, each pod's
 *   share of them and the devices it uses (usage.c), start and stop pods
 *   as the answer says, upload new log bytes, forget what is finished.
 *   Once an answer gave a generation, each heartbeat asks allotd to wait
 *   up to one period for the node's pods to change after it
 *   (control/assign_watch.c); an answer that waited brings the next
 *   heartbeat at once, so a pod bound here starts within milliseconds and
 *   a node with nothing new still reports once a period.
 *   Every answer extends the lease (leaseMs from when the request was
 *   sent). A request that fails waits a backoff before the next: from one
 *   heartbeat, doubling, with jitter, up to a quarter of the lease (so an
 *   agent whose server restarts is back within it); a 409 to a heartbeat
 *   means the server no longer knows the node: register again; a 401
 *   means its token was revoked: the pods stop (the server gives them to
 *   others). A first registration answered 400 (an unknown --node-pool,
 *   bad labels) cannot succeed by retrying: the agent says why and exits 2.
 * Fencing: while allotd does not answer, pods keep running until the
 *   lease ends; then they stop (the agent asks, and every supervisor sees
 *   the lease file itself, even with the agent gone), before allotd may
 *   call the node lost and run them elsewhere (lostAfterMs, the lease plus
 *   a margin). An answer after that starts whatever allotd assigns again.
 * Stop (SIGTERM, SIGINT): the agent exits and leaves its pods running:
 *   an agent started again that reaches allotd within the lease takes
 *   them back; otherwise their supervisors stop them when it ends.
 *
 * `allot-agent --shim ...` is the per-pod supervisor instead (shim.c);
 * `--mpi-serve` and `--mpi-rsh` are an MPI workload's exec endpoint and
 * remote shell (mpi_exec.c).
 */
#include "agent.h"
#include "allot_version.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define TICK_MS 100
#define PROBE_MAX_MS 10000     /* nvidia-smi, container runtimes, requests */
#define PROBE_MIN_MS 1000
#define LEASE_DEFAULT_MS 10000 /* allotd's default, until it says */
#define AGENT_VERSION ALLOT_VERSION

struct loop {
    int registered;
    int ever_registered;
    int refused;             /* the first registration was a 400: exit 2 */
    int64_t next_at;         /* next register or heartbeat (agent_now_ms) */
    int64_t generation;      /* the last answer's, for the next heartbeat to wait after; */
    int watched;             /* 0 until an answer gave one (an allotd that cannot wait) */
    int backoff_ms;
    int fenced;              /* the lease ended and the pods were stopped */
    char last_error[256];
};

/* ---- Steps 1 and 2 ---- */

/* How long a probe or request may block the loop: a few tries must fit in
 * the lease (allotd's default until it says). */
static int probe_ms(const struct agent *a)
{
    int64_t t = a->lease_ms / 4;

    return (int)(t < PROBE_MIN_MS ? PROBE_MIN_MS : t < PROBE_MAX_MS ? t : PROBE_MAX_MS);
}

static int work_dirs(struct agent *a)
{
    char pods[AGENT_PATH_MAX + 8];

    snprintf(pods, sizeof(pods), "%s/pods", a->o.work_dir);
    if ((mkdir(a->o.work_dir, 0700) != 0 && errno != EEXIST) ||
        (mkdir(pods, 0700) != 0 && errno != EEXIST)) {
        fprintf(stderr, "allot-agent: cannot create %s: %s\n", pods, strerror(errno));
        return -1;
    }
    snprintf(a->lease_path, sizeof(a->lease_path), "%s/agent.lease", a->o.work_dir);
    lease_read(a->lease_path, &a->lease); /* a previous agent's pods run under it */
    return 0;
}

static int find_gpus(struct agent *a)
{
    char why[256];
    int i, kind;

    a->n_now = -1;
    if (a->o.gpus >= 0) {
        a->n_gpus = a->o.gpus;
        for (i = 0; i < a->n_gpus; i++) {
            a->gpus[i].index = i;
            snprintf(a->gpus[i].model, sizeof(a->gpus[i].model), "declared");
        }
        return 0;
    }
    kind = gpu_open(&a->src, a->o.nvml, a->o.nvidia_smi, why, sizeof(why));
    if (kind == GPU_SMI && strcmp(a->o.nvml, "none") != 0)
        fprintf(stderr, "allot-agent: NVML: %s; asking %s instead\n", why, a->o.nvidia_smi);
    a->n_gpus = gpu_query(&a->src, probe_ms(a), a->gpus, AGENT_MAX_GPUS, 0);
    if (a->n_gpus < 0) {
        fprintf(stderr, "allot-agent: %s did not answer: give --gpus N for a machine"
                " without NVIDIA GPUs\n", kind == GPU_NVML ? "NVML" : a->o.nvidia_smi);
        return -1;
    }
    fprintf(stderr, "allot-agent: %d GPU%s%s%s (%s)\n", a->n_gpus, a->n_gpus == 1 ? "" : "s",
            a->n_gpus ? ": " : "", a->n_gpus ? a->gpus[0].model : "",
            kind == GPU_NVML ? "NVML" : "nvidia-smi");
    return 0;
}

static int setup(struct agent *a, int argc, char **argv)
{
    char token[256];
    ssize_t n;
    int rc;

    rc = agent_opts_parse(&a->o, argc, argv);
    if (rc != 0)
        return rc;
    if (agent_read_token(a->o.token_file, token, sizeof(token)) != 0)
        return -1;
    n = readlink("/proc/self/exe", a->self, sizeof(a->self) - 1);
    if (n <= 0) {
        fprintf(stderr, "allot-agent: cannot find its own program\n");
        return -1;
    }
    a->self[n] = 0;
    a->lease_ms = LEASE_DEFAULT_MS;
    a->cl = client_new(a->o.server, token, probe_ms(a));
    memset(token, 0, sizeof(token));
    if (!a->cl || work_dirs(a) != 0 || find_gpus(a) != 0)
        return -1;
    runtime_pick(a->o.runtime, probe_ms(a), a->runtime, sizeof(a->runtime));
    fprintf(stderr, "allot-agent: node %s, %s\n", a->o.name,
            a->runtime[0] ? a->runtime : "no container runtime: commands run directly");
    return pods_scan(a) == 0 ? 0 : -1;
}

/* ---- requests ---- */

static json_t *labels_json(const char *s)
{
    json_t *o = json_object();
    char buf[1024], *item, *save = NULL;

    snprintf(buf, sizeof(buf), "%s", s);
    for (item = strtok_r(buf, ",", &save); o && item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq || eq == item)
            continue;
        *eq = 0;
        json_object_set_new(o, item, json_string(eq + 1));
    }
    return o;
}

static json_t *inventory_json(const struct agent *a)
{
    json_t *arr = json_array();
    int i;

    for (i = 0; arr && i < a->n_gpus; i++)
        json_array_append_new(arr, json_pack("{s:i, s:s, s:s, s:I}", "index", i, "uuid",
                                             a->gpus[i].uuid, "model", a->gpus[i].model,
                                             "memoryMiB",
                                             (json_int_t)a->gpus[i].mem_total_mib));
    return arr;
}

static json_t *register_json(const struct agent *a)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN), pages = sysconf(_SC_PHYS_PAGES);
    long page = sysconf(_SC_PAGESIZE);
    json_t *o = json_pack("{s:s, s:o, s:o, s:I, s:I, s:i, s:s, s:s}", "name", a->o.name,
                          "labels", labels_json(a->o.labels), "gpus", inventory_json(a),
                          "cpuMillis", (json_int_t)(cpus > 0 ? cpus * 1000 : -1), "memoryMiB",
                          (json_int_t)(pages > 0 && page > 0
                                           ? (int64_t)pages * page / (1024 * 1024) : -1),
                          "heartbeatMs", a->o.heartbeat_ms, "version", AGENT_VERSION,
                          "runtime", a->runtime);

    if (o && a->o.pool[0])
        json_object_set_new(o, "nodePool", json_string(a->o.pool));
    if (o && a->o.address[0])
        json_object_set_new(o, "address", json_string(a->o.address));
    return o;
}

/* The devices' utilisation and memory now, and whose processes use them
 * (usage.c; asked only while pods run); null when GPUs are declared or the
 * source failed. */
static json_t *metrics_json(struct agent *a)
{
    json_t *arr;
    int i;

    if (a->o.gpus >= 0)
        return json_null();
    a->n_now = gpu_query(&a->src, probe_ms(a), a->now, AGENT_MAX_GPUS, pods_live(a));
    if (a->n_now < 0)
        return json_null();
    usage_scan(a);
    arr = json_array();
    for (i = 0; arr && i < a->n_now; i++) {
        json_t *d = json_pack("{s:i, s:s, s:s, s:I, s:I, s:i}", "index", i, "uuid",
                              a->now[i].uuid, "model", a->now[i].model, "memoryUsedMiB",
                              (json_int_t)a->now[i].mem_used_mib, "memoryTotalMiB",
                              (json_int_t)a->now[i].mem_total_mib, "processes",
                              a->now[i].n_procs);
        if (d && a->now[i].utilization >= 0) /* unknown: left out */
            json_object_set_new(d, "utilization", json_integer(a->now[i].utilization));
        json_array_append_new(arr, d);
    }
    return arr;
}

/* Says what went wrong, once per distinct trouble. */
static void trouble(struct loop *l, const char *what, long status, const json_t *reply)
{
    const char *details = json_string_value(json_object_get(reply, "details"));
    char msg[256];

    if (status)
        snprintf(msg, sizeof(msg), "%s: HTTP %ld%s%.180s", what, status, details ? ": " : "",
                 details ? details : "");
    else
        snprintf(msg, sizeof(msg), "%s: the server does not answer", what);
    if (strcmp(msg, l->last_error) != 0)
        fprintf(stderr, "allot-agent: %s; retrying\n", msg);
    snprintf(l->last_error, sizeof(l->last_error), "%s", msg);
}

static void backoff(const struct agent *a, struct loop *l)
{
    int jitter = l->backoff_ms / 5, max = (int)(a->lease_ms / 4);

    if (max < a->o.heartbeat_ms)
        max = a->o.heartbeat_ms;
    l->next_at = agent_now_ms() + l->backoff_ms + (jitter ? rand() % (2 * jitter) - jitter : 0);
    l->backoff_ms = l->backoff_ms * 2 > max ? max : l->backoff_ms * 2;
}

static void went_well(struct agent *a, struct loop *l)
{
    if (l->last_error[0])
        fprintf(stderr, "allot-agent: connected to %s again\n", client_server(a->cl));
    l->last_error[0] = 0;
    l->backoff_ms = a->o.heartbeat_ms;
    l->next_at = agent_now_ms() + a->o.heartbeat_ms;
}

/* An answer from allotd, to a request sent at sent_ms (lease_now_ms):
 * the lease runs leaseMs from then (lease.c). */
static void renewed(struct agent *a, struct loop *l, const json_t *reply, int64_t sent_ms)
{
    json_int_t lease = json_integer_value(json_object_get(reply, "leaseMs"));
    json_int_t lost = json_integer_value(json_object_get(reply, "lostAfterMs"));

    if (lease <= 0 || lost < lease)
        return; /* no lease in the answer: nothing granted */
    if (lease != a->lease_ms) {
        a->lease_ms = lease;
        client_set_timeout(a->cl, probe_ms(a));
    }
    a->margin_ms = lost - lease;
    if (lease_extend(a->lease_path, &a->lease, sent_ms, a->lease_ms, a->margin_ms) != 0)
        fprintf(stderr, "allot-agent: cannot write %s\n", a->lease_path);
    if (l->fenced && !lease_ended(&a->lease, lease_now_ms())) {
        fprintf(stderr, "allot-agent: allotd answers again: the lease is renewed\n");
        l->fenced = 0;
    }
}

static void do_register(struct agent *a, struct loop *l)
{
    json_t *body = register_json(a), *reply = NULL;
    int64_t sent = lease_now_ms();
    long status = 0;
    int rc = body ? client_post_json(a->cl, "/api/v1/agent/register", body, &reply, &status)
                  : -1;

    if (rc == -2) {
        /* stopping: the loop takes the signal */
    } else if (rc == 0 && status == 200) {
        fprintf(stderr, "allot-agent: registered node %s in pool %s (lease %lld ms)\n",
                a->o.name, json_string_value(json_object_get(reply, "nodePool")),
                (long long)json_integer_value(json_object_get(reply, "leaseMs")));
        l->registered = l->ever_registered = 1;
        if (json_is_true(json_object_get(reply, "pendingApproval")))
            fprintf(stderr, "allot-agent: allotd keeps this node in pool %s with %lld GPUs:"
                    " what it asks for waits for an admin (allot agent approve %s)\n",
                    json_string_value(json_object_get(reply, "nodePool")),
                    (long long)json_integer_value(json_object_get(reply, "gpuCount")), a->o.name);
        renewed(a, l, reply, sent);
        went_well(a, l);
        l->next_at = agent_now_ms();
    } else if (status == 400 && !l->ever_registered) {
        fprintf(stderr, "allot-agent: allotd refuses to register node %s: %s\n", a->o.name,
                json_string_value(json_object_get(reply, "details"))
                    ? json_string_value(json_object_get(reply, "details")) : "400 Bad request");
        l->refused = 1;
    } else {
        trouble(l, "register", status, reply);
        backoff(a, l);
    }
    json_decref(body);
    json_decref(reply);
}

/* How long a heartbeat asks allotd to wait for this node's pods to change:
 * the heartbeat period, within a third of the lease (allotd's bound). */
static int wait_ms(const struct agent *a)
{
    int64_t most = a->lease_ms / 3;

    return (int)(a->o.heartbeat_ms < most ? a->o.heartbeat_ms : most);
}

/* The answer's generation: the next heartbeat waits for a change after it.
 * An answer that waited (or found a change at once), or the first to give
 * a generation, brings the next heartbeat now: it reads the pods afresh,
 * or waits. One that could not wait (allotd's waiters are all taken)
 * leaves the next a period away. */
static void watch_answer(struct loop *l, const json_t *reply, int asked)
{
    json_t *g = json_object_get(reply, "generation");

    l->watched = json_is_integer(g) && json_integer_value(g) >= 0;
    if (l->watched)
        l->generation = json_integer_value(g);
    if (l->watched && (!asked || json_is_true(json_object_get(reply, "waited"))))
        l->next_at = agent_now_ms();
}

static void do_heartbeat(struct agent *a, struct loop *l)
{
    json_t *gpus, *body, *reply = NULL;
    int64_t sent;
    long status = 0;
    int rc = -1, wait;

    pods_ship_ended_logs(a); /* pods.c, Invariant 3: their logs before their ends */
    sent = lease_now_ms();
    gpus = metrics_json(a); /* first: the pods' report reads its figures */
    body = json_pack("{s:o, s:o}", "pods", pods_report(a), "gpus", gpus);
    wait = l->watched && !pods_end_held(a) ? wait_ms(a) : 0;
    if (body && wait > 0) {
        json_object_set_new(body, "waitMs", json_integer(wait));
        json_object_set_new(body, "generation", json_integer(l->generation));
        client_set_timeout(a->cl, probe_ms(a) + wait);
    }
    if (body)
        rc = client_post_json(a->cl, "/api/v1/agent/heartbeat", body, &reply, &status);
    if (wait > 0)
        client_set_timeout(a->cl, probe_ms(a));
    if (rc == -2) {
        /* stopping: the loop takes the signal */
    } else if (rc == 0 && status == 200 && json_is_array(json_object_get(reply, "pods"))) {
        renewed(a, l, reply, sent);
        went_well(a, l);
        watch_answer(l, reply, wait > 0);
        pods_reported(a);
        pods_reconcile(a, json_object_get(reply, "pods"));
        pods_ship_logs(a);
        if (pods_end_held(a))
            l->next_at = agent_now_ms(); /* the held ends, now that their logs are in */
    } else if (status == 409) {
        l->registered = 0; /* the server does not know the node (any more) */
        l->next_at = agent_now_ms();
    } else if (status == 401) {
        /* the token was revoked: the server takes the node's pods back,
         * so they must not run on here */
        json_t *none = json_array();
        pods_reconcile(a, none);
        json_decref(none);
        trouble(l, "heartbeat (pods stopped)", status, reply);
        backoff(a, l);
    } else {
        trouble(l, "heartbeat", status, reply);
        backoff(a, l);
    }
    json_decref(body);
    json_decref(reply);
}

/* ---- the loop ---- */

/* Sleeps until the next tick; 1 when asked to stop. */
static int wait_tick(const sigset_t *set, int64_t until)
{
    int64_t left = until - agent_now_ms();
    struct timespec ts;
    int sig;

    if (left > TICK_MS)
        left = TICK_MS;
    if (left < 1)
        left = 1;
    ts.tv_sec = (time_t)(left / 1000);
    ts.tv_nsec = (long)(left % 1000) * 1000000L;
    sig = sigtimedwait(set, NULL, &ts);
    return sig == SIGTERM || sig == SIGINT;
}

/* The lease ended with no answer from allotd: every pod stops (its
 * supervisor kills what is left by the lease's kill_by; it may have seen
 * the end of the lease first), before allotd may give it to another node. */
static void fence(struct agent *a, struct loop *l)
{
    json_t *none;
    int i, held = 0;

    if (l->fenced || !lease_ended(&a->lease, lease_now_ms()))
        return;
    for (i = 0; i < a->pods.n; i++)
        held += !a->pods.v[i].reported_end; /* allotd may still count on it */
    if (held == 0)
        return;
    l->fenced = 1;
    fprintf(stderr, "allot-agent: no answer from allotd within the lease (%lld ms): stopping"
            " %d pod%s before allotd gives them to another node\n", (long long)a->lease_ms,
            held, held == 1 ? "" : "s");
    none = json_array();
    pods_reconcile(a, none);
    json_decref(none);
}

/* The loop, until SIGTERM or SIGINT (0), or a refused registration (2). */
static int run(struct agent *a, const sigset_t *set)
{
    struct loop l;

    memset(&l, 0, sizeof(l));
    l.backoff_ms = a->o.heartbeat_ms;
    l.next_at = agent_now_ms();
    for (;;) {
        pods_poll(a);
        fence(a, &l);
        if (agent_now_ms() >= l.next_at) {
            if (l.registered)
                do_heartbeat(a, &l);
            else
                do_register(a, &l);
        }
        pods_forget(a);
        if (l.refused || wait_tick(set, l.next_at))
            break;
    }
    fprintf(stderr, "allot-agent: stopping; %d pod%s left to %s\n", a->pods.n,
            a->pods.n == 1 ? "" : "s", "their supervisors");
    return l.refused ? 2 : 0;
}

int main(int argc, char **argv)
{
    struct agent *a;
    sigset_t set;
    int rc;

    if (argc > 1 && strcmp(argv[1], "--shim") == 0)
        return shim_main(argc, argv);
    if (argc > 1 && strcmp(argv[1], "--mpi-serve") == 0)
        return mpi_serve_main();
    if (argc > 1 && strcmp(argv[1], "--mpi-rsh") == 0)
        return mpi_rsh_main(argc, argv);
    proc_block_signals(&set);
    srand((unsigned)(getpid() ^ time(NULL)));
    a = calloc(1, sizeof(*a));
    if (!a || curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
        free(a);
        return 1;
    }
    rc = setup(a, argc, argv);
    if (rc == 0)
        rc = run(a, &set);
    pods_free(&a->pods);
    gpu_close(&a->src);
    client_free(a->cl);
    free(a);
    curl_global_cleanup();
    return rc == 0 || rc == 1 ? 0 : 2;
}
