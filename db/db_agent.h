/*
 * db_agent.h: the storage of allot-agent's side of allotd: agent tokens,
 * the nodes agents run (registration, heartbeats, readiness), and the runs
 * of the pods they start (started, exited, lost).
 *
 * A pod binding (a row of pods, written by the scheduler) carries a uid,
 * new whenever the binding changes; an agent runs the pod under that uid
 * and reports on it by uid. A run (pod_runs) is the agent's account of one
 * uid: when it started, when and how it ended.
 *
 * Workload transitions written here (each bumps the workload's version,
 * so a scheduling cycle that read it earlier cannot overwrite it, and
 * writes an event in the same savepoint):
 *   Initializing -> Running    every pod placed on an agent's node started
 *   Initializing|Running -> Completed   every pod exited 0
 *   Initializing|Running -> Failed      a pod exited non-zero or was killed
 *   Initializing|Running|Pending -> Pending   a pod lost, or its node lost
 *                                             (missed heartbeats), pods freed
 *
 * Units and conventions follow db.h: times in ms since the epoch.
 */
#ifndef ALLOT_DB_AGENT_H
#define ALLOT_DB_AGENT_H

#include "db.h"

/* ---- tokens ---- */
struct db_agent_token {
    int64_t seq;
    char id[DB_ID_LEN];           /* public: the part before the '.' */
    char name[DB_NAME_LEN];
    char secret_hash[72];         /* SHA-256 of the secret part, hex */
    char node_name[DB_NAME_LEN];  /* "" until an agent registers with it */
    char pool[DB_NAME_LEN];       /* the pool an admin set for its node; "" none */
    int has_gpus, n_gpus;         /* the GPU count an admin set for it, if has_gpus */
    int64_t created_at, last_used_at, revoked_at;
    char created_by[DB_NAME_LEN];
};

/* Inserts; fills seq and created_at. DB_ECONFLICT if the id exists. */
int db_agent_token_insert(struct db *db, struct db_agent_token *t);
int db_agent_token_get(struct db *db, const char *id, struct db_agent_token *out);
/* Every token, oldest first; *out malloc'd (free()). */
int db_agent_token_list(struct db *db, struct db_agent_token **out, int *n);
/* DB_ENOTFOUND if no such token or revoked already. */
int db_agent_token_revoke(struct db *db, const char *id, int64_t now_ms);

/* ---- registration ---- */
struct db_agent_reg {
    int64_t token_seq;
    char name[DB_NAME_LEN];
    char pool[DB_NAME_LEN];       /* the node pool it joins; must exist */
    int pool_pinned;              /* the agent named the pool (else it came from labels) */
    char node_type[64];
    int64_t gpu_memory_mib;       /* memory of its smallest device; 0 unknown */
    char address[64];             /* where pods' ports are reached */
    int n_gpus;
    char gpu_type[64];
    int64_t cpu_milli, mem_mib;   /* -1: plenty */
    int64_t heartbeat_ms;
    const char *labels;           /* JSON object, borrowed */
    const char *gpus;             /* JSON array, borrowed */
    char version[64], runtime[64];
    int64_t now_ms;
    /* filled by db_agent_register() */
    int64_t node_seq;
    char node_id[DB_ID_LEN];
    char approved_pool[DB_NAME_LEN];  /* the pool the node is in */
    int approved_gpus;            /* the GPU count it may use at most */
    int effective_gpus;           /* min(approved, what it reports) */
    int pending;                  /* it asked for other figures: they wait for an admin */
    int known;                    /* it had registered before (figures approved then) */
    char why[DB_MSG_LEN];         /* what a DB_ECONFLICT or DB_ENOTFOUND is about */
};

/* Creates or updates the node (Ready, not simulated) and binds the token
 * to it. The node's pool and GPU count are the approved ones: set by an
 * admin (on the token, or later: db_agent_node_approve()), else those of
 * its first registration. A later registration asking for others changes
 * nothing but what is recorded as asked (pending approval), except that
 * fewer GPUs than approved are used at once (a device gone is gone).
 * DB_ENOTFOUND: the token is revoked or the pool does not exist;
 * DB_ECONFLICT: the token belongs to another node, or the name is taken
 * by a simulated node or by the agent of another live token. */
int db_agent_register(struct db *db, struct db_agent_reg *r);

/* ---- heartbeats ---- */
enum db_pod_state { DB_POD_RUNNING = 0, DB_POD_EXITED, DB_POD_LOST };

/* One device's share of a running pod, as its agent measured it. */
struct db_pod_gpu {
    int gpu;                      /* device index on the node */
    int utilization;              /* percent; -1 unknown */
    int64_t mem_mib;              /* what its processes hold there; -1 unknown */
    int pid;                      /* one of its processes there; 0 none */
};

struct db_pod_report {
    char uid[DB_ID_LEN];
    int state;                    /* enum db_pod_state */
    int exit_code, signal;        /* EXITED: the code, or the signal that killed it */
    int stopped;                  /* EXITED: allot stopped it, not the workload itself */
    int never_ran;                /* EXITED: its command could not be run at all */
    int64_t at_ms;                /* RUNNING: started; EXITED: finished */
    char message[DB_MSG_LEN];     /* how it was started, or why it ended; may be "" */
    int has_gpus;                 /* RUNNING: the agent measured its GPUs */
    const struct db_pod_gpu *gpus; int n_gpus;  /* borrowed: the devices it has or uses */
};

/* A pod the node should run. */
struct db_assignment {
    char uid[DB_ID_LEN];
    int idx;
    uint64_t devices;
    char workload_id[DB_ID_LEN];
    char workload_name[DB_NAME_LEN];
    char project_name[DB_NAME_LEN];
    int type;
    char image[256];
    char *spec;                   /* the submitted spec (JSON), malloc'd, may be NULL */
};

struct db_heartbeat {
    int64_t token_seq;            /* the node is the one this token registered */
    int64_t now_ms;
    const struct db_pod_report *pods; int n_pods;  /* every pod the agent knows */
    const char *gpus;             /* JSON array of devices with metrics; NULL: unchanged */
    const int *utilization;       /* [n_util]: percent per device index; -1 unknown */
    int n_util;
    /* filled by db_agent_heartbeat() */
    int64_t node_seq;
    struct db_assignment *assigned; int n_assigned;  /* malloc'd: db_assignments_free() */
    int64_t *touched; int n_touched;  /* workloads whose rows changed; malloc'd */
    int node_changed;             /* the node was NotReady and is Ready again */
};

/* Records a heartbeat, the agent's pods, and answers the pods the node
 * should run, all in one savepoint. DB_ENOTFOUND if the token has no node
 * (register first). */
int db_agent_heartbeat(struct db *db, struct db_heartbeat *h);
/* Frees what db_agent_heartbeat() filled in h. */
void db_heartbeat_clear(struct db_heartbeat *h);

/* Marks NotReady every agent node whose last heartbeat (counted from
 * not_before_ms at the latest: the server's start) is older than
 * lost_after_ms, and sends the workloads with pods there back to Pending.
 * The caller makes lost_after_ms longer than the lease its agents hold
 * (they stop their pods when it ends), so a pod is never requeued while
 * it may still run. */
int db_agent_expire(struct db *db, int64_t now_ms, int64_t not_before_ms, int64_t lost_after_ms,
                    int *n_lost);

/* ---- projects' time and idle limits ---- */
/* A Running workload submitted under scheduling rules. */
struct db_limited {
    int64_t seq;
    char name[DB_NAME_LEN];
    int type;                     /* enum db_wl_type */
    int preemptible;
    int64_t started_ms;
    int64_t run_ms;               /* how long it ran before it last started */
    char rules[1024];             /* the schedulingRules it was submitted under (JSON) */
    int n_devices, n_idle;        /* the devices its agents measure, and the idle ones */
    int n_unmeasured;             /* its pods with devices that no agent measures */
    int64_t idle_since;           /* when the last of its pods became idle (all idle) */
};

/* The Running workloads submitted under scheduling rules (a rule set
 * later does not apply to them); *out malloc'd (free()). */
int db_agent_limited(struct db *db, struct db_limited **out, int *n);

/* ---- runs ---- */
struct db_pod_run {
    char uid[DB_ID_LEN];
    int64_t workload_seq;
    int idx;
    int64_t node_seq;
    char node_name[DB_NAME_LEN];
    int64_t started_at, finished_at;
    int exit_code, signal;
    char outcome[16];             /* "" running, Succeeded, Failed, Stopped, Lost */
};

int db_pod_run_get(struct db *db, const char *uid, struct db_pod_run *out);
/* The runs of pod idx of a workload (idx < 0: of every pod), oldest first;
 * *out malloc'd (free()). */
int db_pod_run_list(struct db *db, int64_t workload_seq, int idx, struct db_pod_run **out,
                    int *n);

/* ---- GPU figures of pods (gpu_usage.c) ---- */
/* A device of a live pod with its latest figures. */
struct db_pod_gpu_row {
    int64_t workload_seq;
    int idx;
    char uid[DB_ID_LEN];
    char workload_id[DB_ID_LEN];
    char workload_name[DB_NAME_LEN];
    char project_name[DB_NAME_LEN];
    char node_name[DB_NAME_LEN];
    int gpu;                      /* device index on the node */
    int given;                    /* one of the pod's devices (else used without) */
    int utilization;              /* percent; -1 unknown */
    int64_t mem_mib;              /* -1 unknown */
    int pid;
    int64_t updated_at;
};

/* The devices of the live pods of a workload (workload_seq 0: of every
 * workload), by workload, pod and device; *out malloc'd (free()). */
int db_pod_gpu_list(struct db *db, int64_t workload_seq, struct db_pod_gpu_row **out, int *n);

/* One sample of a pod's device. */
struct db_gpu_sample {
    int64_t ts;
    int idx, gpu;
    int given;                    /* one of the pod's devices */
    int utilization;              /* -1 unknown */
    int64_t mem_mib;
};

/* Records the live pods' figures as samples at now_ms and deletes those
 * older than keep_after_ms, in one transaction. */
int db_gpu_samples_record(struct db *db, int64_t now_ms, int64_t keep_after_ms);
/* A workload's samples in [start, end] (pod idx, or every pod if idx < 0),
 * by time, pod and device; *out malloc'd (free()). */
int db_gpu_samples_get(struct db *db, int64_t workload_seq, int idx, int64_t start, int64_t end,
                       struct db_gpu_sample **out, int *n);

/* ---- agent nodes, for the API ---- */
struct db_agent_node {
    int64_t node_seq;
    char node_id[DB_ID_LEN];
    char name[DB_NAME_LEN];
    char pool_name[DB_NAME_LEN];
    int ready, n_gpus;
    char gpu_type[64];
    char token_id[DB_ID_LEN];
    int64_t heartbeat_ms, registered_at, last_seen;
    char version[64], runtime[64];
    char *labels, *gpus;          /* JSON, malloc'd */
    int approved_gpus;            /* n_gpus is min(approved, requested) */
    char requested_pool[DB_NAME_LEN];  /* what its last registration asked for */
    int requested_gpus;
};

int db_agent_node_list(struct db *db, struct db_agent_node **out, int *n);

/* An admin's decision on an agent node's pool and GPU count. */
struct db_agent_approval {
    const char *node;             /* the node's name */
    int take_requested;           /* 1: what its last registration asked for */
    const char *pool;             /* else: the pool to set (NULL keeps it) */
    int n_gpus;                   /* else: the GPU count to set (-1 keeps it) */
    char why[DB_MSG_LEN];         /* what a DB_ENOTFOUND is about */
};
/* Sets the approved figures; the node uses min(approved, reported) GPUs.
 * DB_ENOTFOUND: no agent node of that name, or no such pool. */
int db_agent_node_approve(struct db *db, struct db_agent_approval *a);
void db_agent_nodes_free(struct db_agent_node *a, int n);

/* ---- distributed workloads' rendezvous ports (rendezvous.c) ---- */
/* The default range (allotd's --rendezvous-ports) */
#define DB_RENDEZVOUS_FIRST 30000
#define DB_RENDEZVOUS_LAST 39999
/* The first of n_pods node ports the workload's pods meet on (pod i's is
 * *port + i), taken from [first, last] on the first ask and kept while the
 * workload lives. DB_ELIMIT when no run of n_pods ports is free there. */
int db_rendezvous_ports(struct db *db, int64_t workload_seq, int n_pods, int first, int last,
                        int *port);

/* ---- restarts (restarts.c) ---- */
/* How long restart number n (1-based) of a workload waits before its pods
 * may start: 0 for the first, then 1 s, doubling, at most 5 min. */
int64_t db_restart_backoff_ms(int64_t n);

#endif /* ALLOT_DB_AGENT_H */
