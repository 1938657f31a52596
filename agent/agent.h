/*
 * agent.h: what the files of allot-agent share: its options, the pods it
 * runs, the server client, GPU discovery, process helpers and the per-pod
 * supervisor.
 *
 * The work directory holds, per pod uid, pods/<uid>/ with
 *   spec.json  what the server asked for (written before the pod starts);
 *   work/      the pod's working directory for direct runs;
 *   log        its stdout and stderr;
 *   shim.pid   "<pid> <start time>" of its supervisor (shim.c);
 *   pid        the process group of the workload, once started;
 *   exit.json  how it ended, written once by the supervisor;
 * and agent.lease, the lease allotd granted the node (lease.c): renewed by
 * every answer allotd gives the agent; when it ends (the agent is cut off
 * from allotd, or gone) every supervisor stops its pod, before allotd may
 * give the pod to another node, and a restarted agent that reaches allotd
 * within the lease finds its pods again through these files.
 */
#ifndef ALLOT_AGENT_H
#define ALLOT_AGENT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <sys/types.h>

#define AGENT_PATH_MAX 1024
#define AGENT_DIR_MAX 512     /* the work directory's path */
#define AGENT_POD_DIR_MAX 600 /* a pod's directory: work dir, "/pods/", uid */
#define AGENT_UID_LEN 40
#define AGENT_MAX_GPUS 64

/* ---- options (opts.c) ---- */
struct agent_opts {
    char server[4096];           /* base URLs, comma-separated (servers.h) */
    char token_file[AGENT_PATH_MAX];
    char name[64];               /* node name; default: the host name */
    char pool[128];              /* "" : let the server pick by labels */
    char labels[1024];           /* k=v,k=v */
    char address[64];            /* where pods' ports are reached; "": as allotd sees it */
    int gpus;                    /* declared devices; -1: auto (NVML, else nvidia-smi) */
    char work_dir[AGENT_DIR_MAX];
    int heartbeat_ms;
    char runtime[16];            /* auto | docker | podman | none */
    char nvidia_smi[AGENT_PATH_MAX];
    char nvml[AGENT_PATH_MAX];   /* NVML's library; "none": nvidia-smi only */
};

/* 0 ok, 1 printed help, -1 error (printed). */
int agent_opts_parse(struct agent_opts *o, int argc, char **argv);
/* Reads the token file (one line; must not be readable by group or
 * others) into out; -1 with a message on failure. */
int agent_read_token(const char *path, char *out, size_t len);

/* ---- the lease (lease.c) ---- */
struct lease {
    int64_t until;                /* CLOCK_BOOTTIME ms: the pods stop; 0 none */
    int64_t kill_by;              /* CLOCK_BOOTTIME ms: what is left is killed */
};
int64_t lease_now_ms(void);
/* 0 and the lease in the file; -1 (and an ended lease) if there is none. */
int lease_read(const char *path, struct lease *out);
/* Extends *l to sent_ms + lease_ms (never shortens it) and writes the
 * file; margin_ms is how much later allotd may call the node lost. */
int lease_extend(const char *path, struct lease *l, int64_t sent_ms, int64_t lease_ms,
                 int64_t margin_ms);
int lease_ended(const struct lease *l, int64_t now_ms);

/* ---- processes and files (proc.c) ---- */
int64_t agent_now_ms(void);
/* The start time of a process (field 22 of /proc/pid/stat); 0 if gone. */
uint64_t proc_start_time(pid_t pid);
/* Is pid alive with this start time (not a recycled pid)? */
int proc_alive(pid_t pid, uint64_t start_time);
/* The parent of pid; 0 if gone. */
pid_t proc_parent(pid_t pid);
/* The value of variable `name` in the environment of pid (if this user
 * may read it); 0 ok, -1 if absent, unreadable or longer than len. */
int proc_env_value(pid_t pid, const char *name, char *out, size_t len);
/* SIGKILLs every process whose environment holds ALLOT_POD_UID=uid;
 * returns how many were signalled. */
int proc_kill_pod(const char *uid);
/* Closes every descriptor from 3 up (in a child before exec). */
void proc_close_from_3(void);
/* *set: the signals the agent and the shim wait for with sigtimedwait()
 * (SIGTERM, SIGINT, SIGHUP, SIGCHLD). */
void proc_signal_set(sigset_t *set);
/* Blocks those signals (filling *set) and ignores SIGPIPE. */
void proc_block_signals(sigset_t *set);
/* Restores default dispositions and an empty mask (in a child before exec). */
void proc_reset_signals(void);
/* Runs argv (PATH lookup), waits at most timeout_ms, and gives its
 * stdout (at most cap bytes, malloc'd, NUL-terminated) if out is not NULL.
 * Returns the exit status (0..255), or -1 if it could not run or timed
 * out (it is killed then). */
int proc_run(char *const argv[], int timeout_ms, char **out, size_t cap);
/* Writes a file through a temporary and a rename; 0 ok. */
int file_write_atomic(const char *path, const char *data, size_t len);
/* Reads a whole small file (at most cap bytes), malloc'd and terminated. */
char *file_read(const char *path, size_t cap);
/* Removes a directory tree (no symlinks followed); 0 ok. */
int file_remove_tree(const char *path);
/* Looks a program up on PATH; 0 and its path in out if found. */
int find_program(const char *name, char *out, size_t len);

/* ---- GPUs (gpu.c, nvml.c) ---- */
#define GPU_MAX_PROCS 64          /* processes read per device */

/* A process using a device. */
struct gpu_proc {
    pid_t pid;
    int64_t mem_mib;              /* the device memory it holds; -1 unknown */
    int sm_util;                  /* its share of the device's time, percent; -1 unknown */
};

struct gpu_info {
    int index;
    char uuid[64];                /* as allotd takes them: at most 63 characters */
    char model[64];
    int64_t mem_total_mib, mem_used_mib;
    int utilization;              /* percent; -1 unknown (e.g. under MIG) */
    int util_per_process;         /* its processes' sm_util are known */
    int n_procs;
    struct gpu_proc procs[GPU_MAX_PROCS];
};

enum gpu_kind { GPU_SMI = 0, GPU_NVML };

/* Where the figures come from: NVML, else nvidia-smi. */
struct gpu_src {
    struct nvml *nvml;            /* NULL: nvidia-smi */
    char smi[AGENT_PATH_MAX];
};

/* Opens NVML's library `nvml` ("none": skip it), else settles for the
 * nvidia-smi program `smi`; returns enum gpu_kind, and in why what NVML
 * said when it could not be opened. */
int gpu_open(struct gpu_src *s, const char *nvml, const char *smi, char *why, size_t len);
/* Every device, with its processes if `processes`, waiting at most
 * timeout_ms (for nvidia-smi); the count, or -1 if the source failed. */
int gpu_query(struct gpu_src *s, int timeout_ms, struct gpu_info *out, int max, int processes);
void gpu_close(struct gpu_src *s);

/* NVML itself (nvml.c): NULL with the reason in why if the library does
 * not open or NVML does not start. */
struct nvml *nvml_open(const char *path, char *why, size_t len);
int nvml_query(struct nvml *n, struct gpu_info *out, int max, int processes);
void nvml_close(struct nvml *n);

/* ---- the server (client.c) ---- */
struct client;
/* server: one URL or several, comma-separated (replicas: servers.h);
 * NULL if the list is malformed or no memory. */
struct client *client_new(const char *server, const char *token, int timeout_ms);
/* The URL the client sends to now (the last that answered). */
const char *client_server(const struct client *c);
void client_free(struct client *c);
/* Bounds every later request to timeout_ms. */
void client_set_timeout(struct client *c, int timeout_ms);
/* POSTs a JSON body (borrowed); *out gets the parsed JSON reply (or NULL)
 * and *status the HTTP status (0: no answer). 0 when a reply came, -2 when
 * the request gave up because SIGTERM or SIGINT is pending, else -1. */
int client_post_json(struct client *c, const char *path, json_t *body, json_t **out,
                     long *status);
/* POSTs raw bytes as application/octet-stream. */
int client_post_bytes(struct client *c, const char *path, const char *data, size_t len,
                      json_t **out, long *status);

/* ---- container runtimes (runtime.c) ---- */
/* The runtime to use ("docker", "podman" or "" for none) for an option
 * value auto|docker|podman|none; auto takes the first that answers within
 * timeout_ms. */
void runtime_pick(const char *opt, int timeout_ms, char *out, size_t len);
/* Splits a command line the way a shell would (quotes, backslashes), with
 * no expansion; appends the words to *argv (malloc'd, NULL-terminated).
 * -1 on an unterminated quote. */
int split_words(const char *s, char ***argv, int *argc);
void free_words(char **argv);

/* ---- pods (pods.c) ---- */
enum pod_state {
    POD_STARTING = 0,             /* supervisor started, workload not yet */
    POD_RUNNING,
    POD_EXITED,                   /* exit.json read */
    POD_LOST                      /* no supervisor and no exit.json */
};

struct pod {
    char uid[AGENT_UID_LEN];
    char dir[AGENT_POD_DIR_MAX];
    char workload[128];
    int pod_index;
    uint64_t devices;
    int state;                    /* enum pod_state */
    pid_t shim_pid;
    uint64_t shim_start;
    int stop_sent;                /* SIGTERM sent to the supervisor */
    int assigned;                 /* in the server's last answer */
    int exit_code, signal, stopped;
    int never_ran;               /* EXITED: its command never ran (exit.json's ran false) */
    int64_t at_ms;                /* started or ended */
    int64_t started_ms;           /* seen running (0: never) */
    int end_held;                 /* EXITED: the last report said Running (pods.c,
                                     Invariant 3) */
    char message[400];            /* how it started, or how it ended */
    int reported_running;         /* the server heard it started */
    int reported_end;             /* the server heard how it ended */
    int64_t log_sent;             /* bytes of log the server holds */
    int log_done;                 /* nothing more to upload */
    char container_id[80];        /* from DIR/cid, once its runtime wrote it */
};

struct pods {
    struct pod *v;
    int n, cap;
};

struct agent {
    struct agent_opts o;
    char self[AGENT_PATH_MAX];    /* this program, to start supervisors */
    char runtime[16];             /* "docker", "podman" or "" */
    char lease_path[AGENT_POD_DIR_MAX];
    struct lease lease;           /* as granted by allotd's last answer */
    int64_t lease_ms, margin_ms;  /* allotd's figures (until it says: the shortest) */
    struct client *cl;
    struct pods pods;
    struct gpu_src src;           /* with --gpus auto */
    int n_gpus;                   /* the devices registered */
    struct gpu_info gpus[AGENT_MAX_GPUS];
    int n_now;                    /* the latest figures (-1: none) */
    struct gpu_info now[AGENT_MAX_GPUS];
    int owner[AGENT_MAX_GPUS][GPU_MAX_PROCS];  /* pod of now[d].procs[k] (usage.c) */
};

/* Finds the pods a previous agent left (adopts, or marks exited or lost). */
int pods_scan(struct agent *a);
/* Reaps supervisors and reads pid and exit files: states move on. */
void pods_poll(struct agent *a);
/* The heartbeat's "pods" array: every pod this agent knows. */
json_t *pods_report(struct agent *a);
/* Does a pod start or run? */
int pods_live(const struct agent *a);
/* After the server answered a heartbeat: marks what it heard. */
void pods_reported(struct agent *a);
/* Starts what the server assigns and stops what it no longer does. */
void pods_reconcile(struct agent *a, const json_t *assigned);
/* Uploads new log bytes of every pod the server knows. */
void pods_ship_logs(struct agent *a);
/* Before a heartbeat: uploads the rest of the log of every pod that ended
 * and whose end the server has not heard (pods.c, Invariant 3). */
void pods_ship_ended_logs(struct agent *a);
/* Did the last heartbeat hold back a pod's end (reported it Running so
 * that its log is uploaded first)? Then the next one is due at once. */
int pods_end_held(const struct agent *a);
/* Forgets pods whose end the server heard and whose logs are uploaded. */
void pods_forget(struct agent *a);
void pods_free(struct pods *p);

/* ---- which pod uses which GPU (usage.c) ---- */
/* Finds the pod of every process in a->now (a->owner). */
void usage_scan(struct agent *a);
/* Pod p's per-device utilisation and memory ("gpus" of its report), or
 * NULL when the agent has no GPU figures. */
json_t *usage_json(const struct agent *a, const struct pod *p);

/* ---- the supervisor (shim.c) ---- */
/* allot-agent --shim DIR LEASE RUNTIME: runs the pod of DIR until it
 * ends, the agent asks, or the lease in the file LEASE ends. */
int shim_main(int argc, char **argv);
/* allot-agent --mpi-serve: an MPI worker pod's exec endpoint (mpi_exec.c);
 * runs until killed, 1 if it cannot start. */
int mpi_serve_main(void);
/* allot-agent --mpi-rsh HOST COMMAND...: the launcher's remote shell; the
 * command's exit status, or 255. */
int mpi_rsh_main(int argc, char **argv);

/* ---- a pod's data (storage.c) ---- */
typedef void (*storage_set_fn)(void *arg, const char *name, const char *value);
typedef void (*storage_mount_fn)(void *arg, const char *host, const char *target, int read_only);
/* Checks the pod's host paths and clones its git repositories (their
 * output to log_fd); -1 with msg set when the pod cannot start. */
int storage_prepare(const json_t *spec, const char *pod_dir, int container, int log_fd,
                    char *msg, size_t len);
/* The variables that name the pod's data (as the workload sees it). */
void storage_env(const json_t *spec, const char *pod_dir, int container, storage_set_fn set,
                 void *arg);
/* A container's bind mounts: every host path and cloned repository. */
void storage_mounts(const json_t *spec, const char *pod_dir, storage_mount_fn mount, void *arg);

#endif /* ALLOT_AGENT_H */
