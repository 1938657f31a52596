/*
 * shim.c: the supervisor of one pod: `allot-agent --shim DIR LEASE
 * RUNTIME`, started by the agent in its own session. It starts the
 * workload, waits for it, stops it when asked or when the node's lease
 * ends, and writes how it ended; it outlives an agent restart, so the new
 * agent finds the pod.
 *
 *   start:   the workload in its own process group (its pid is the group
 *            id, written to DIR/pid), stdout and stderr appended to
 *            DIR/log, cwd DIR/work, the environment of the agent plus the
 *            workload's variables, CUDA_VISIBLE_DEVICES and
 *            NVIDIA_VISIBLE_DEVICES set to the pod's devices,
 *            ALLOT_POD_UID (how leftovers are found), and for each port
 *            ALLOT_PORT_<container>=<node port> (PORT: the first); with a
 *            container runtime and an image, `<runtime> run` with the
 *            same devices, each port published on the node (-p), the
 *            image pulled as imagePullPolicy says, and the container's id
 *            written to DIR/cid (usage.c finds its processes by it);
 *   stop:    on SIGTERM (the agent), or when the lease in the file LEASE
 *            ends (allotd has not answered the agent, or the agent is
 *            gone; lease.c): SIGTERM to the group, SIGKILL after
 *            terminationGracePeriodSeconds, and once the lease has ended
 *            at its kill_by at the latest (allotd may run the pod
 *            elsewhere soon after);
 *   end:     when the workload's process exits: SIGKILL to whatever is
 *            left of the pod (its group, and any process carrying its
 *            ALLOT_POD_UID), reap, then DIR/exit.json, written once.
 *
 * Invariants:
 *   1. The supervisor is a child subreaper: orphaned descendants of the
 *      workload become its children, so nothing of the pod outlives it.
 *   2. exit.json exists only once the pod's processes are gone.
 */
#define _GNU_SOURCE
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define POLL_MS 100
#define REAP_MS 5000
#define CONTAINER_EXTRA_S 5

struct shim {
    const char *dir, *lease, *runtime;
    int64_t kill_by;                /* lease_now_ms: the lease ended; kill by then */
    json_t *spec;
    char uid[AGENT_UID_LEN];
    char cname[AGENT_UID_LEN + 8];  /* the container's name */
    int container;
    int grace_s;
    int log_fd;
    pid_t child;
    int64_t stop_at;                /* when the stop began; 0: not stopping */
    int killed;
    int status, done;
    int ran;                        /* the workload's command was executed */
    char message[300];
};

static void note(struct shim *s, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (n > (int)sizeof(line) - 2)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    if (s->log_fd >= 0 && write(s->log_fd, "[allot-agent] ", 14) == 14 &&
        write(s->log_fd, line, (size_t)n) < 0)
        return;
}

static int write_in(const struct shim *s, const char *name, const char *text)
{
    char path[AGENT_PATH_MAX];

    if (snprintf(path, sizeof(path), "%s/%s", s->dir, name) >= (int)sizeof(path))
        return -1;
    return file_write_atomic(path, text, strlen(text));
}

static const char *spec_str(const struct shim *s, const char *key)
{
    json_t *v = json_object_get(s->spec, key);

    return json_is_string(v) ? json_string_value(v) : "";
}

/* "0,1" for devices [0, 1]; "" for none. */
static void device_list(const struct shim *s, char *out, size_t len)
{
    json_t *d;
    size_t i, used = 0;

    out[0] = 0;
    json_array_foreach(json_object_get(s->spec, "devices"), i, d)
        if (json_is_integer(d) && used < len)
            used += (size_t)snprintf(out + used, len - used, "%s%lld", used ? "," : "",
                                     (long long)json_integer_value(d));
}

/* ---- the command ---- */

static int add(char ***argv, int *argc, const char *word)
{
    char *w = strdup(word);
    char **nv = w ? realloc(*argv, sizeof(*nv) * (size_t)(*argc + 2)) : NULL;

    if (!nv) {
        free(w);
        return -1;
    }
    nv[(*argc)++] = w;
    nv[*argc] = NULL;
    *argv = nv;
    return 0;
}

/* imagePullPolicy as a run flag (docker and podman): NULL when unset. */
static const char *pull_flag(const char *policy)
{
    if (strcmp(policy, "Always") == 0)
        return "--pull=always";
    if (strcmp(policy, "IfNotPresent") == 0)
        return "--pull=missing";
    if (strcmp(policy, "Never") == 0)
        return "--pull=never";
    return NULL;
}

/* Where a container finds MPI's host file. */
#define CONTAINER_HOSTFILE "/etc/allot/hostfile"

/* `-e NAME=VALUE`, whatever the value's length. */
static int add_env(char ***argv, int *argc, const char *name, const char *value)
{
    size_t len = strlen(name ? name : "") + strlen(value ? value : "") + 2;
    char *opt = malloc(len);
    int rc;

    if (!opt)
        return -1;
    snprintf(opt, len, "%s=%s", name ? name : "", value ? value : "");
    rc = add(argv, argc, "-e") | add(argv, argc, opt);
    free(opt);
    return rc;
}

/* The words of a container's command line being built, for storage.c's
 * callbacks. */
struct words {
    char ***argv;
    int *argc;
    int rc;
};

static void word_env(void *arg, const char *name, const char *value)
{
    struct words *w = arg;

    w->rc |= add_env(w->argv, w->argc, name, value);
}

static void word_mount(void *arg, const char *host, const char *target, int read_only)
{
    struct words *w = arg;
    size_t len = strlen(host) + strlen(target) + 5;
    char *opt = malloc(len);

    if (!opt) {
        w->rc = -1;
        return;
    }
    snprintf(opt, len, "%s:%s%s", host, target, read_only ? ":ro" : "");
    w->rc |= add(w->argv, w->argc, "-v") | add(w->argv, w->argc, opt);
    free(opt);
}

/* `<runtime> run --rm --name allot-<uid> --cidfile DIR/cid -e ... [-p host:container]
 * [-v DIR/hostfile:...] [--network host] [--pull=...] <devices> [-w dir]
 * [--entrypoint cmd] image [cmd words] [args]` */
static int container_argv(const struct shim *s, char ***argv, int *argc)
{
    char devs[256], opt[300], *d, *save = NULL;
    char **cmd = NULL;
    json_t *e;
    size_t i;
    int n = 0, k, rc = 0;

    rc |= add(argv, argc, s->runtime);
    rc |= add(argv, argc, "run");
    rc |= add(argv, argc, "--rm");
    rc |= add(argv, argc, "--name");
    rc |= add(argv, argc, s->cname);
    snprintf(opt, sizeof(opt), "%.280s/cid", s->dir);
    unlink(opt); /* the runtime refuses to overwrite one */
    rc |= add(argv, argc, "--cidfile");
    rc |= add(argv, argc, opt);
    /* the workload's variables by name only: the runtime takes their
     * values from its own environment (child_env()), so no value (a
     * secret's) shows on a command line */
    json_array_foreach(json_object_get(s->spec, "env"), i, e) {
        const char *var = json_string_value(json_object_get(e, "name"));
        if (var && var[0] && !strchr(var, '='))
            rc |= add(argv, argc, "-e") | add(argv, argc, var);
    }
    rc |= add_env(argv, argc, "ALLOT_POD_UID", s->uid);
    if (json_is_string(json_object_get(s->spec, "hostfile"))) {
        snprintf(opt, sizeof(opt), "%.200s/hostfile:" CONTAINER_HOSTFILE ":ro", s->dir);
        rc |= add(argv, argc, "-v");
        rc |= add(argv, argc, opt);
        rc |= add_env(argv, argc, "ALLOT_MPI_HOSTFILE", CONTAINER_HOSTFILE);
        rc |= add_env(argv, argc, "OMPI_MCA_orte_default_hostfile", CONTAINER_HOSTFILE);
    }
    {
        struct words w = {argv, argc, 0};
        storage_mounts(s->spec, s->dir, word_mount, &w);
        storage_env(s->spec, s->dir, 1, word_env, &w);
        rc |= w.rc;
    }
    /* a distributed pod's ranks open ports of their own besides the
     * rendezvous port: it shares the node's network, as a process would */
    if (strcmp(spec_str(s, "type"), "Distributed") == 0) {
        rc |= add(argv, argc, "--network");
        rc |= add(argv, argc, "host");
    }
    json_array_foreach(json_object_get(s->spec, "ports"), i, e) {
        snprintf(opt, sizeof(opt), "%lld:%lld",
                 (long long)json_integer_value(json_object_get(e, "host")),
                 (long long)json_integer_value(json_object_get(e, "container")));
        rc |= add(argv, argc, "-p");
        rc |= add(argv, argc, opt);
    }
    if (pull_flag(spec_str(s, "imagePullPolicy")))
        rc |= add(argv, argc, pull_flag(spec_str(s, "imagePullPolicy")));
    device_list(s, devs, sizeof(devs));
    if (devs[0] && strcmp(s->runtime, "docker") == 0) {
        snprintf(opt, sizeof(opt), "\"device=%s\"", devs);
        rc |= add(argv, argc, "--gpus");
        rc |= add(argv, argc, opt);
    }
    for (d = strtok_r(devs, ",", &save); d && strcmp(s->runtime, "podman") == 0;
         d = strtok_r(NULL, ",", &save)) {
        snprintf(opt, sizeof(opt), "nvidia.com/gpu=%s", d);
        rc |= add(argv, argc, "--device");
        rc |= add(argv, argc, opt);
    }
    if (spec_str(s, "workingDir")[0]) {
        rc |= add(argv, argc, "-w");
        rc |= add(argv, argc, spec_str(s, "workingDir"));
    }
    if (split_words(spec_str(s, "command"), &cmd, &n) != 0)
        rc = -1;
    if (n > 0) {
        rc |= add(argv, argc, "--entrypoint");
        rc |= add(argv, argc, cmd[0]);
    }
    rc |= add(argv, argc, spec_str(s, "image"));
    for (k = 1; k < n; k++)
        rc |= add(argv, argc, cmd[k]);
    free_words(cmd);
    return rc;
}

/* The pod's role in an MPI workload ("launcher", "worker"), or "". */
static const char *mpi_role(const struct shim *s)
{
    const char *role = json_string_value(json_object_get(json_object_get(s->spec, "mpi"), "role"));

    return role ? role : "";
}

static int build_argv(const struct shim *s, char ***argv)
{
    char self[AGENT_PATH_MAX];
    ssize_t n;
    int argc = 0;

    *argv = NULL;
    if (strcmp(mpi_role(s), "worker") == 0) {
        /* an MPI worker runs the launcher's exec endpoint (mpi_exec.c) */
        n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (n <= 0)
            return -1;
        self[n] = '\0';
        return add(argv, &argc, self) | add(argv, &argc, "--mpi-serve");
    }
    if (s->container) {
        if (container_argv(s, argv, &argc) != 0)
            return -1;
    } else if (split_words(spec_str(s, "command"), argv, &argc) != 0) {
        return -1;
    }
    if (split_words(spec_str(s, "args"), argv, &argc) != 0)
        return -1;
    return argc > 0 ? 0 : -1;
}

/* In the child: where each of its ports is to listen on the node, as
 * ALLOT_PORT_<container>=<host>, and PORT for the first. */
static void ports_env(const struct shim *s)
{
    char name[32], value[16];
    json_t *e;
    size_t i;

    json_array_foreach(json_object_get(s->spec, "ports"), i, e) {
        snprintf(name, sizeof(name), "ALLOT_PORT_%lld",
                 (long long)json_integer_value(json_object_get(e, "container")));
        snprintf(value, sizeof(value), "%lld",
                 (long long)json_integer_value(json_object_get(e, "host")));
        setenv(name, value, 1);
        if (i == 0)
            setenv("PORT", value, 1);
    }
}

static void set_env(void *arg, const char *name, const char *value)
{
    (void)arg;
    setenv(name, value, 1);
}

/* In the child: where an MPI pod's exec key and peers are (mpi.json);
 * Open MPI told not to look the pods' host names up (they are pod names,
 * not in DNS: where the resolver stalls, each lookup by mpirun or a
 * worker's daemon would wait out its timeout); and for the launcher,
 * mpirun's remote shell: this program's --mpi-rsh, with no tree spawn
 * (only the launcher reaches the workers' endpoints). */
static void mpi_env(const struct shim *s)
{
    char path[AGENT_PATH_MAX + 32], self[AGENT_PATH_MAX];
    ssize_t n;

    snprintf(path, sizeof(path), "%s/mpi.json", s->dir);
    setenv("ALLOT_MPI_EXEC", path, 1);
    setenv("OMPI_MCA_if_base_do_not_resolve", "1", 1);
    if (strcmp(mpi_role(s), "launcher") != 0)
        return;
    n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    self[n > 0 ? n : 0] = '\0';
    snprintf(path, sizeof(path), "%s --mpi-rsh", self);
    setenv("OMPI_MCA_plm_rsh_agent", path, 1);
    setenv("OMPI_MCA_plm_rsh_no_tree_spawn", "1", 1);
}

/* In the child: the workload's variables, then allot's (which win). */
static void child_env(const struct shim *s)
{
    char devs[256], idx[16];
    json_t *e;
    size_t i;

    json_array_foreach(json_object_get(s->spec, "env"), i, e) {
        const char *n = json_string_value(json_object_get(e, "name"));
        const char *v = json_string_value(json_object_get(e, "value"));
        if (n && v && n[0] && !strchr(n, '='))
            setenv(n, v, 1);
    }
    device_list(s, devs, sizeof(devs));
    setenv("CUDA_VISIBLE_DEVICES", devs, 1);
    setenv("NVIDIA_VISIBLE_DEVICES", devs[0] ? devs : "void", 1);
    setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1); /* the order nvidia-smi numbers them in */
    setenv("ALLOT_POD_UID", s->uid, 1);
    setenv("ALLOT_WORKLOAD_ID", spec_str(s, "workloadId"), 1);
    setenv("ALLOT_WORKLOAD_NAME", spec_str(s, "workloadName"), 1);
    setenv("ALLOT_PROJECT", spec_str(s, "project"), 1);
    setenv("ALLOT_NODE", spec_str(s, "node"), 1);
    snprintf(idx, sizeof(idx), "%lld",
             (long long)json_integer_value(json_object_get(s->spec, "podIndex")));
    setenv("ALLOT_POD_INDEX", idx, 1);
    ports_env(s);
    storage_env(s->spec, s->dir, 0, set_env, NULL);
    if (json_is_string(json_object_get(s->spec, "hostfile"))) {
        char path[AGENT_PATH_MAX + 16];
        snprintf(path, sizeof(path), "%s/hostfile", s->dir);
        setenv("ALLOT_MPI_HOSTFILE", path, 1);
        setenv("OMPI_MCA_orte_default_hostfile", path, 1);
    }
    if (mpi_role(s)[0])
        mpi_env(s);
}

/* In the child: never returns. Reports an exec failure's errno on err_fd. */
static void child_exec(const struct shim *s, char **argv, int err_fd)
{
    char work[AGENT_PATH_MAX];
    int null = open("/dev/null", O_RDONLY), e;

    setpgid(0, 0);
    proc_reset_signals();
    dup2(null, 0);
    dup2(s->log_fd, 1);
    dup2(s->log_fd, 2);
    if (!s->container && spec_str(s, "workingDir")[0]) {
        if (chdir(spec_str(s, "workingDir")) != 0) {
            e = -errno; /* negative: the working directory, not the command */
            if (write(err_fd, &e, sizeof(e)) < 0)
                _exit(126);
            _exit(126);
        }
    } else {
        snprintf(work, sizeof(work), "%s/work", s->dir);
        if (chdir(work) != 0 && chdir("/") != 0)
            _exit(126);
    }
    child_env(s);
    execvp(argv[0], argv);
    e = errno;
    if (write(err_fd, &e, sizeof(e)) < 0)
        _exit(127);
    _exit(127);
}

/* Starts the workload; -1 with s->message set if it could not. */
static int start(struct shim *s)
{
    char **argv = NULL, pidtext[32];
    int fds[2], e = 0;
    ssize_t k;

    if (storage_prepare(s->spec, s->dir, s->container, s->log_fd, s->message,
                        sizeof(s->message)) != 0)
        return -1;
    if (build_argv(s, &argv) != 0) {
        snprintf(s->message, sizeof(s->message), "the workload names no command to run%s",
                 s->container ? "" : " (or a quote is not closed)");
        free_words(argv);
        return -1;
    }
    if (pipe2(fds, O_CLOEXEC) != 0) {
        free_words(argv);
        return -1;
    }
    s->child = fork();
    if (s->child == 0)
        child_exec(s, argv, fds[1]);
    close(fds[1]);
    if (s->child > 0) {
        setpgid(s->child, s->child);
        while ((k = read(fds[0], &e, sizeof(e))) < 0 && errno == EINTR)
            ;
        s->ran = k == 0; /* the pipe closed on exec: the command runs */
        if (k == (ssize_t)sizeof(e) && e < 0)
            snprintf(s->message, sizeof(s->message), "cannot enter workingDir %.200s: %s",
                     spec_str(s, "workingDir"), strerror(-e));
        else if (k == (ssize_t)sizeof(e))
            snprintf(s->message, sizeof(s->message), "cannot run %.200s: %s", argv[0],
                     strerror(e));
        snprintf(pidtext, sizeof(pidtext), "%d\n", (int)s->child);
        write_in(s, "pid", pidtext);
    }
    close(fds[0]);
    free_words(argv);
    return s->child > 0 ? 0 : -1;
}

/* ---- stop ---- */

/* Runs `<runtime> <verb> ... allot-<uid>` and leaves it to the reaper. */
static void runtime_verb(const struct shim *s, const char *verb, const char *opt,
                         const char *val)
{
    char *argv[] = {(char *)s->runtime, (char *)verb, (char *)opt, (char *)val,
                    (char *)s->cname, NULL};
    pid_t pid;

    if (!opt) {
        argv[2] = (char *)s->cname;
        argv[3] = NULL;
    }
    pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(s->log_fd, 1);
        dup2(s->log_fd, 2);
        proc_close_from_3();
        proc_reset_signals();
        execvp(argv[0], argv);
        _exit(127);
    }
}

static void begin_stop(struct shim *s, const char *why)
{
    char grace[16];

    if (s->stop_at)
        return;
    s->stop_at = agent_now_ms();
    note(s, "stopping the pod: %s (grace period %d s)", why, s->grace_s);
    if (s->container) {
        snprintf(grace, sizeof(grace), "%d", s->grace_s);
        runtime_verb(s, "stop", "--time", grace);
    }
    if (s->child > 0)
        kill(-s->child, SIGTERM);
}

/* SIGKILL once the grace period is over, or the ended lease's kill_by
 * has come, whichever is first. */
static void enforce_grace(struct shim *s)
{
    int64_t limit = (int64_t)(s->grace_s + (s->container ? CONTAINER_EXTRA_S : 0)) * 1000;
    int fenced = s->kill_by > 0 && lease_now_ms() >= s->kill_by;

    if (!s->stop_at || s->killed || (agent_now_ms() - s->stop_at < limit && !fenced))
        return;
    note(s, fenced ? "the node's lease ended: killing the pod before allotd runs it elsewhere"
                   : "the grace period is over: killing the pod");
    if (s->container)
        runtime_verb(s, "kill", NULL, NULL);
    if (s->child > 0)
        kill(-s->child, SIGKILL);
    s->killed = 1;
}

/* Has the node's lease ended? Notes its kill_by (now, if there is no
 * lease to read) the first time. */
static int lease_over(struct shim *s)
{
    struct lease l;
    int64_t now = lease_now_ms();

    if (s->kill_by > 0)
        return 1;
    if (lease_read(s->lease, &l) == 0 && !lease_ended(&l, now))
        return 0;
    s->kill_by = l.until > 0 ? l.kill_by : now;
    return 1;
}

/* ---- the loop ---- */

static void reap(struct shim *s)
{
    pid_t w;
    int st;

    while ((w = waitpid(-1, &st, WNOHANG)) > 0)
        if (w == s->child) {
            s->status = st;
            s->done = 1;
        }
}

static void watch(struct shim *s)
{
    struct timespec ts = {0, POLL_MS * 1000000L};
    sigset_t set;
    int sig;

    proc_signal_set(&set);
    while (!s->done) {
        sig = sigtimedwait(&set, NULL, &ts);
        if (sig == SIGTERM || sig == SIGINT)
            begin_stop(s, "asked by the agent");
        reap(s);
        if (!s->done && lease_over(s) && !s->stop_at)
            begin_stop(s, "the node's lease with allotd ended (allotd did not answer the"
                          " agent, or the agent is gone)");
        enforce_grace(s);
    }
}

/* Invariant 1: nothing of the pod is left when this returns. */
static void clean_up(struct shim *s)
{
    int64_t until = agent_now_ms() + REAP_MS;
    char *argv[] = {(char *)s->runtime, "rm", "-f", s->cname, NULL};

    if (s->child > 0)
        kill(-s->child, SIGKILL);
    if (s->container)
        proc_run(argv, 30000, NULL, 0);
    do {
        pid_t w;
        proc_kill_pod(s->uid);
        while ((w = waitpid(-1, NULL, WNOHANG)) > 0)
            ;
        if (w < 0 && errno == ECHILD)
            break;
        usleep(20000);
    } while (agent_now_ms() < until);
}

static void write_exit(struct shim *s)
{
    int code = -1, sig = 0;
    json_t *o;
    char *text;

    if (s->done && WIFEXITED(s->status))
        code = WEXITSTATUS(s->status);
    else if (s->done && WIFSIGNALED(s->status))
        sig = WTERMSIG(s->status);
    else if (!s->done)
        code = 127;
    o = json_pack("{s:i, s:i, s:b, s:b, s:I, s:s}", "exitCode", code, "signal", sig, "stopped",
                  s->stop_at != 0, "ran", s->ran, "at", (json_int_t)agent_now_ms(), "message",
                  s->message);
    text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    if (!text || write_in(s, "exit.json", text) != 0)
        note(s, "cannot write exit.json");
    free(text);
    json_decref(o);
}

static int shim_init(struct shim *s, int argc, char **argv)
{
    char path[AGENT_PATH_MAX], text[64];
    json_t *grace;
    sigset_t set;

    memset(s, 0, sizeof(*s));
    s->log_fd = -1;
    if (argc != 5)
        return -1;
    s->dir = argv[2];
    s->lease = argv[3];
    s->runtime = argv[4];
    proc_block_signals(&set);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    snprintf(path, sizeof(path), "%s/log", s->dir);
    s->log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    snprintf(path, sizeof(path), "%s/spec.json", s->dir);
    s->spec = json_load_file(path, 0, NULL);
    if (s->log_fd < 0 || !json_is_object(s->spec))
        return -1;
    snprintf(s->uid, sizeof(s->uid), "%s", spec_str(s, "uid"));
    snprintf(s->cname, sizeof(s->cname), "allot-%s", s->uid);
    /* an MPI pod runs directly: its endpoint and remote shell are this
     * program's, on the node */
    s->container = s->runtime[0] && spec_str(s, "image")[0] && !mpi_role(s)[0];
    grace = json_object_get(s->spec, "terminationGracePeriodSeconds");
    s->grace_s = json_is_integer(grace) ? (int)json_integer_value(grace) : 30;
    snprintf(text, sizeof(text), "%d %llu\n", (int)getpid(),
             (unsigned long long)proc_start_time(getpid()));
    return write_in(s, "shim.pid", text);
}

int shim_main(int argc, char **argv)
{
    struct shim s;
    int rc = 1;

    if (shim_init(&s, argc, argv) != 0)
        goto out;
    if (start(&s) == 0)
        watch(&s);
    else
        note(&s, "%s", s.message);
    clean_up(&s);
    write_exit(&s);
    rc = 0;
out:
    if (s.log_fd >= 0)
        close(s.log_fd);
    json_decref(s.spec);
    return rc;
}
