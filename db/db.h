/*
 * db.h: allot's storage, the only interface to the SQLite database.
 *
 * Owns: the schema (numbered migrations), every SQL statement, the
 * connections, and the group-commit writer. Nothing outside db/ includes
 * sqlite3.h or writes SQL.
 *
 * Invariants the callers rely on:
 *   1. Durability: every write function returns only after the transaction
 *      holding its change has committed with synchronous=FULL in WAL mode.
 *      A caller that answers 2xx after DB_OK never acknowledges a change a
 *      crash can lose.
 *   2. One writer: all writes run on one thread that batches the pending
 *      writes of many callers into one transaction (group commit). Each
 *      write runs inside its own savepoint, so one failing write never
 *      undoes another's.
 *   3. Reads run on a pool of read connections and see a consistent
 *      snapshot per call (one read transaction).
 *   4. A scheduling cycle's decisions are applied by db_cycle_apply() in one
 *      savepoint: all of them or none. A decision about a workload whose
 *      version changed since the snapshot (deleted, suspended) is dropped.
 *
 * Units follow the scheduling core: GPU in milli-GPU, CPU in millicores,
 * memory in MiB, times in milliseconds since the epoch. Strings are fixed
 * arrays in the row structs so rows need no freeing, except where a
 * function says otherwise.
 */
#ifndef ALLOT_DB_H
#define ALLOT_DB_H

#include <stddef.h>
#include <stdint.h>

#define DB_OK 0
#define DB_ENOTFOUND (-1) /* no such row */
#define DB_ECONFLICT (-2) /* a unique name is taken, or the row changed */
#define DB_EIO (-3)       /* SQLite failed; the server cannot go on safely */
#define DB_ENOMEM (-4)
#define DB_EINVAL (-5) /* the request breaks a rule of the schema */
#define DB_ECLOSED (-6) /* the database is closing */
/* The store cannot take writes now (db_health() says why; reads work): */
#define DB_EBUSY (-7)     /* locked by another process, or in use by another server */
#define DB_EFULL (-8)     /* no space left on its disk */
#define DB_EREADONLY (-9) /* the file or its file system is read-only */
#define DB_EGONE (-10)    /* the file was removed or replaced while open: final */
#define DB_ELIMIT (-11)   /* a cap on pending workloads is reached (db_workload_submit) */
#define DB_EFENCED (-12)  /* a fenced write of a leader that lost its lease (db_ha.h) */
#define DB_EUNAVAIL (-13) /* the database server cannot be reached (PostgreSQL): retried */

#define DB_MAX_POOLS 32
#define DB_NAME_LEN 128
#define DB_ID_LEN 40
#define DB_TOPOLOGY_LEVELS_LEN 640   /* a network topology's levels as JSON (8 x 63 chars) */
#define DB_MSG_LEN 512

/* The fields of a named row kept in a scope, with its description, who
 * wrote it and when (struct db_asset, struct db_secret): name unique in
 * the scope, description "" none. */
#define DB_SCOPED_ROW_FIELDS(desc_len)                                              \
    char name[DB_NAME_LEN];                                                         \
    char scope[16];           /* "project", "department" or "tenant" */             \
    char scope_id[DB_ID_LEN]; /* the project's or department's id; "" for tenant */ \
    char description[desc_len];                                                     \
    char created_by[DB_NAME_LEN], updated_by[DB_NAME_LEN];                          \
    int64_t created_at, updated_at, update_count

struct db;

enum db_open_mode {
    DB_OPEN_EXISTING = 0, /* the database must exist: DB_ENOTFOUND if not */
    DB_OPEN_CREATE,       /* creates a new database: DB_ECONFLICT if one exists */
    DB_OPEN_FRESH,        /* removes any database there, then creates one (demo) */
};
/* Takes the database for this process (DB_EBUSY while another process has
 * it: two servers never share one), opens or creates it by mode (a new
 * database is readable by its owner only), checks integrity, applies
 * pending migrations and starts the writer thread. Says on stderr why it
 * fails. Nothing else ever creates a database. */
int db_open(const char *path, int mode, struct db **out);
/* On a database server (PostgreSQL), the longest one statement may run
 * before the server cancels it (statement_timeout; 0: no limit), for the
 * sessions opened after the call: a statement that hangs fails instead
 * of holding the writers' lock that every replica's writes wait for.
 * Migrations at open run without it. Default DB_STATEMENT_TIMEOUT_MS. */
#define DB_STATEMENT_TIMEOUT_MS 30000
void db_set_statement_timeout(int ms);
/* Whether a --db value names a database server (a PostgreSQL connection
 * URI: postgresql:// or postgres://) rather than a SQLite file. */
int db_is_server(const char *path);
/* The store in words for messages: the file's path, or "PostgreSQL
 * database D on H" (never a password). */
const char *db_name(struct db *db);
/* Stops the writer after its queue drains and closes every connection.
 * NULL is a no-op. */
void db_close(struct db *db);
const char *db_strerror(int rc);
/* Whether this process alone can reach the database (SQLite: its lock
 * file keeps every other server out), so that it may take the leader
 * lease without waiting for a previous holder's to expire. */
int db_exclusive(struct db *db);
/* Latest schema version this build knows (the number of migrations). */
int db_schema_version(void);
/* Counters of the group-commit writer. */
void db_writer_stats(struct db *db, int64_t *commits, int64_t *writes);
/* What a copy of data read from the database is current against: a
 * number that moves after every transaction of this process's writer
 * ends (committed or not), before its callers are told, and at each
 * db_data_changed(). A read stamped with it before it began holds what
 * this process committed before the stamp; while the number is unchanged
 * nothing this process wrote, nor anything told by db_data_changed(), came
 * since. */
uint64_t db_data_generation(struct db *db);
/* Another process changed the database (the change feed read its row). */
void db_data_changed(struct db *db);
/* Whether writes work: DB_OK, or DB_EFULL, DB_EBUSY, DB_EREADONLY,
 * DB_EGONE or DB_EIO with a sentence for people in msg. Notices a removed
 * file itself; the other conditions are those of the last write, and
 * clear by themselves once writes work again (the writer retries). */
int db_health(struct db *db, char *msg, size_t len);
/* One line on the store and its durability settings as the database
 * reports them (e.g. "SQLite 3.40.1, journal_mode=wal, synchronous=FULL"). */
const char *db_describe(struct db *db);
/* Test-only: the environment variable ALLOT_FAULT=POINT:N kills the
 * process at the N-th pass of a fault point of the storage code (commit,
 * submit, cycle-pod: fault.c says where they are), for the crash tests. */

/* ---- Principals: users, service accounts and users' access keys ---- */
/* DB_SERVICE_ACCOUNT: a principal that signs in with client credentials;
 * one with an owner_id is that user's access key (Run:ai's access keys,
 * and its user applications by their earlier name), which acts as its
 * owner and is listed apart from the service accounts. */
enum db_principal_kind { DB_USER = 0, DB_SERVICE_ACCOUNT = 1 };

struct db_user {
    int64_t id;
    int kind;                     /* enum db_principal_kind */
    char login[DB_NAME_LEN];      /* username, or a service account's clientId */
    char name[DB_NAME_LEN];       /* display name (service account name) */
    char secret_hash[256];        /* crypt(3) string */
    int64_t token_version;        /* bumped to revoke every token */
    int64_t created_at, updated_at, last_login;
    char created_by[DB_NAME_LEN];
    int enabled;                  /* 0: may not sign in (service accounts) */
    int64_t owner_id;             /* an access key's user; 0: not an access key */
};

int db_user_count(struct db *db, int64_t *count);
/* Inserts; fills u->id and the timestamps. DB_ECONFLICT if the login
 * exists, or for an access key, if its owner has one of that name. */
int db_user_insert(struct db *db, struct db_user *u);
int db_user_get(struct db *db, int64_t id, struct db_user *out);
int db_user_by_login(struct db *db, const char *login, struct db_user *out);
/* Lists principals of one kind, oldest first, access keys left out;
 * *out is malloc'd (free()). */
int db_user_list(struct db *db, int kind, struct db_user **out, int *n);
/* Lists the access keys of user owner_id (0: everyone's), oldest first. */
int db_key_list(struct db *db, int64_t owner_id, struct db_user **out, int *n);
/* Deletes a principal, with its access rules and (a user) its access keys. */
int db_user_delete(struct db *db, int64_t id);
int db_user_set_secret(struct db *db, int64_t id, const char *secret_hash);
int db_user_bump_token_version(struct db *db, int64_t id);
int db_user_touch_login(struct db *db, int64_t id, int64_t now_ms);

/* Refresh-token families (refresh.c): a sign-in starts one (generation 1,
 * family gets its id); a refresh moves it from gen to gen + 1 and keeps
 * it until expires_at (ms). db_refresh_rotate: DB_OK, DB_ENOTFOUND (no
 * such live family), or DB_ECONFLICT (gen is not the current one: a
 * token used twice; the family is revoked). Logging a user out revokes
 * all of theirs. */
int db_refresh_start(struct db *db, int64_t user_id, int64_t expires_at, int64_t now,
                     char family[DB_ID_LEN]);
int db_refresh_rotate(struct db *db, const char *family, int64_t user_id, int64_t gen,
                      int64_t expires_at, int64_t now);
int db_refresh_revoke_user(struct db *db, int64_t user_id);
/* DB_OK while the user's family lives (its access tokens are good),
 * DB_ENOTFOUND once it is revoked, logged out or expired. */
int db_refresh_live(struct db *db, const char *family, int64_t user_id);
/* Enables or disables a principal; disabling voids its tokens. */
int db_user_set_enabled(struct db *db, int64_t id, int enabled);

/* ---- Access rules ---- */
struct db_rule {
    int64_t id;
    char subject_type[24];        /* user | service-account */
    char subject_id[DB_NAME_LEN]; /* the principal's login */
    int role_id;
    char scope_type[16];          /* system | department | project */
    char scope_id[DB_ID_LEN];     /* the department or project id; "" for system
                                     (the cluster's uuid or the tenant's id when
                                     scope_named says so) */
    int64_t created_at;
    char created_by[DB_NAME_LEN];
    char scope_named[16];         /* a system rule asked for on the tenant or on
                                     the cluster: "tenant" | "cluster"; "" */
};

int db_rule_insert(struct db *db, struct db_rule *r);
int db_rule_get(struct db *db, int64_t id, struct db_rule *out);
int db_rule_delete(struct db *db, int64_t id);
/* The rules[0..n) in one write (each one's id set), or none of them. */
int db_rules_insert(struct db *db, struct db_rule *rules, int n);
/* Deletes the rules of ids[0..n) in one write, or none of them
 * (DB_ENOTFOUND when one is not there). */
int db_rules_delete(struct db *db, const int64_t *ids, int n);
/* Rules of one subject (subject_id NULL: every rule); malloc'd. */
int db_rule_list(struct db *db, const char *subject_id, struct db_rule **out, int *n);

/* ---- Node pools and nodes ---- */
struct db_pool {
    int64_t seq;                  /* the pool's id */
    char name[DB_NAME_LEN];
    char label_key[DB_NAME_LEN], label_value[DB_NAME_LEN];
    int gpu_placement, cpu_placement;  /* the word given: db_placement_words[] */
    int64_t min_runtime_ms;
    int tbf_enabled;              /* time-based fairshare */
    int64_t tbf_window_ms, tbf_half_life_ms, tbf_k_milli;
    int64_t created_at, updated_at;
    char created_by[DB_NAME_LEN];
    char updated_by[DB_NAME_LEN];
    int nodes_taken;              /* set by insert and update: nodes its label took */
    char topology_id[DB_ID_LEN];  /* the network topology it names; "" none */
    char topology_levels[DB_TOPOLOGY_LEVELS_LEN]; /* that topology's levels (JSON array); "" */
};

/* The placementStrategy words a pool stores by index (what they mean for
 * scheduling: sched_placement_parse()). */
#define DB_N_PLACEMENTS 3
extern const char *const db_placement_words[DB_N_PLACEMENTS];

/* Inserts; a window or kValue of 0 takes the default (7 days, 1.0). The
 * pool takes at once the default pool's nodes that carry its label and
 * whose pool was not named for them (p->nodes_taken). */
int db_pool_insert(struct db *db, struct db_pool *p);
/* Rewrites the settings of pool p->seq (not its name), and takes nodes by
 * its label as insert does; fills updated_at. */
int db_pool_update(struct db *db, struct db_pool *p);
/* Deletes a pool and the quotas naming it. DB_ECONFLICT while nodes are in it. */
int db_pool_delete(struct db *db, int64_t seq);
int db_pool_get(struct db *db, int64_t seq, struct db_pool *out);
int db_pool_by_name(struct db *db, const char *name, struct db_pool *out);
int db_pool_list(struct db *db, struct db_pool **out, int *n);

struct db_node {
    int64_t seq;
    char id[DB_ID_LEN];
    char name[DB_NAME_LEN];
    int64_t pool_seq;
    char pool_name[DB_NAME_LEN];
    int n_gpus;
    char gpu_type[64];
    char node_type[64];           /* the node-type label; "" none */
    int64_t cpu_milli, mem_mib;   /* -1: plenty */
    int ready;
    int simulated;
    char labels[1024];            /* every label, a JSON object ("{}": none) */
    int64_t gpu_memory_mib;       /* memory of each device (the smallest); 0: unknown */
    char address[64];             /* where its agent is reached; "" (simulated) */
    int pool_pinned;              /* its pool was named for it: no pool takes it by label */
    int64_t alloc_gpu_milli;      /* filled by db_node_list */
    int64_t created_at, updated_at;
};

/* Inserts, or updates the node of the same name. */
int db_node_upsert(struct db *db, struct db_node *n);
/* The same for n nodes in one transaction. */
int db_node_upsert_many(struct db *db, struct db_node *nodes, int n);
int db_node_list(struct db *db, struct db_node **out, int *n);
/* The node of that name, alloc_gpu_milli 0 (DB_ENOTFOUND: none). */
int db_node_get(struct db *db, const char *name, struct db_node *out);
/* Every placed pod's node, devices and the GPU it holds there (milli):
 * what each node's devices hold, from the pods' own device indices. */
struct db_pod_place {
    int64_t node_seq;
    uint64_t devices;
    int64_t gpu_milli;
};
int db_pod_places(struct db *db, struct db_pod_place **out, int *n);
/* The devices running pods were given that their agents measure (a
 * utilisation of 0 or more), with the highest utilisation any pod on the
 * device reports: 0 is an idle allocated device. */
struct db_dev_use {
    int64_t node_seq;
    int gpu;
    int utilization;
};
int db_device_uses(struct db *db, struct db_dev_use **out, int *n);

/* ---- Departments and projects (the queue tree) ---- */
enum db_queue_kind { DB_DEPARTMENT = 0, DB_PROJECT = 1 };

struct db_quota {
    int64_t pool_seq;
    char pool_name[DB_NAME_LEN];
    int64_t deserved[3], limit[3], weight[3];  /* gpu milli, cpu milli, mem MiB; weight x1000 */
    int has[3];                                /* 0: the resource was left out (null) */
    int priority;                              /* over-quota priority in the pool, 0..3
                                                  (None, Low, Normal, High) */
};

struct db_queue {
    int64_t seq;
    char id[DB_ID_LEN];
    int kind;                     /* enum db_queue_kind */
    char name[DB_NAME_LEN];
    int64_t parent_seq;           /* 0: none */
    char parent_id[DB_ID_LEN];
    char parent_name[DB_NAME_LEN];
    char description[DB_MSG_LEN];
    int rank;
    char default_pools[256];      /* comma-separated pool names, in order; "" none */
    char node_types[1024];        /* JSON {"training": [...], "workspace": [...]} or "" */
    char scheduling_rules[1024];  /* JSON object or "" */
    int64_t created_at, updated_at;
    char created_by[DB_NAME_LEN];
    int n_quotas;
    struct db_quota quotas[DB_MAX_POOLS];
};

/* Inserts the queue and its quotas; fills seq, id and timestamps. */
int db_queue_insert(struct db *db, struct db_queue *q);
/* Replaces the quotas, description, rank, default pools, node types and
 * scheduling rules of a queue. */
int db_queue_update(struct db *db, const struct db_queue *q);
/* DB_ECONFLICT if it still has children, live workloads or workloads
 * being deleted (pods not yet stopped). Its deleted workloads are purged
 * with it: *purged (malloc'd) names them, for their logs. */
int db_queue_delete(struct db *db, int64_t seq, int64_t **purged, int *n_purged);
int db_queue_get(struct db *db, const char *id, struct db_queue *out);
int db_queue_by_name(struct db *db, int kind, const char *name, struct db_queue *out);
/* Queues of one kind, oldest first (kind < 0: all); malloc'd. */
int db_queue_list(struct db *db, int kind, struct db_queue **out, int *n);

/* Per pool: GPU allocated to (bound pods) and requested by (bound plus
 * pending) the live workloads of a queue and its descendants. */
struct db_usage {
    int64_t pool_seq;
    int64_t allocated[3];
    int64_t allocated_np[3];      /* non-preemptible part */
    int64_t requested[3];
};
int db_queue_usage(struct db *db, int64_t queue_seq, struct db_usage *out, int max, int *n);

/* ---- Workloads ---- */
enum db_wl_type { DB_TRAINING = 0, DB_WORKSPACE, DB_INFERENCE, DB_DISTRIBUTED };

struct db_workload {
    int64_t seq;
    char id[DB_ID_LEN];
    char name[DB_NAME_LEN];
    int64_t project_seq;
    char project_id[DB_ID_LEN], project_name[DB_NAME_LEN];
    char department_id[DB_ID_LEN], department_name[DB_NAME_LEN];
    int type;                     /* enum db_wl_type */
    char priority_class[32];
    int priority;
    int preemptible;
    char desired_phase[16];       /* Running | Stopped | Deleted */
    char phase[16];               /* the Run:ai Phase enum */
    char phase_reason[48];
    char phase_message[DB_MSG_LEN];
    int n_pods, min_pods, gpu_devices;
    int64_t gpu_portion, cpu_milli, mem_mib;
    char pools[256];              /* comma-separated pool names, in order; "" none */
    char node_type[256];          /* comma-separated node types, any of them, the first
                                     preferred; "" any */
    char affinity[1024];          /* nodeAffinityRequired as JSON; "" none */
    char topology[512];           /* {name, requiredPlacement, preferredPlacement} as JSON;
                                     "" none */
    int64_t gpu_memory_mib;       /* per shared device per pod; 0 none */
    char rules[1024];             /* the schedulingRules it was submitted under (JSON) */
    int64_t run_ms;               /* placed before it last started (earlier runs) */
    char image[256];
    char created_by[DB_NAME_LEN];
    int64_t queued_seq, started_ms, stale_since_ms;
    int64_t created_at, updated_at, phase_updated_at, deleted_at, completed_at;
    int64_t version;              /* bumped by every change made through the API */
    int running_pods;
    int64_t alloc_gpu_milli;
    char *spec;                   /* the submitted spec as JSON; malloc'd, may be NULL */
};

/* Frees the heap fields of n rows, then the array. NULL is a no-op. */
void db_workloads_free(struct db_workload *w, int n);
void db_workload_clear(struct db_workload *w);

/* Inserts a workload (phase Pending) with a "Submitted" event. Fills seq,
 * id, queued_seq and timestamps. DB_ECONFLICT: a live workload of that
 * name exists in the project. */
int db_workload_insert(struct db *db, struct db_workload *w);
/* n workloads as db_workload_insert() does one, in one savepoint: all of
 * them or none (DB_ECONFLICT when a name is taken). */
int db_workloads_insert(struct db *db, struct db_workload *ws, int n);

/* The most Pending workloads (live, not deleted) a project, and a user
 * (created_by), may have; 0: no cap. */
struct db_pending_caps {
    int per_project, per_user;
};
/* db_workload_insert(), unless the workload's project or its submitter
 * already has as many Pending workloads as caps allows: then DB_ELIMIT,
 * with a sentence for people in why. The count and the insert are one
 * savepoint, so concurrent submissions cannot pass a cap together. */
int db_workload_submit(struct db *db, struct db_workload *w, const struct db_pending_caps *caps,
                       char *why, size_t len);
/* db_workloads_insert() under the caps: the n workloads, all of one
 * project and one submitter (DB_EINVAL otherwise, with caps), are stored only if
 * the project and the submitter stay within their caps with all n of
 * them; otherwise DB_ELIMIT, why, and none is stored. */
/* fn(arg, seq) for each workload db_workloads_submit() (and so
 * db_workload_submit(), db_workload_insert(), db_workloads_insert())
 * stores, called on the writer's thread right after the COMMIT that holds
 * it and before its caller is answered, so that whoever acts on new
 * workloads (the scheduler thread) hears of them without waiting for the
 * caller to run again. fn must be quick and must not use db. NULL: none;
 * once db_on_submitted() returns, the fn it replaced is not called again. */
typedef void (*db_submitted_fn)(void *arg, int64_t workload_seq);
void db_on_submitted(struct db *db, db_submitted_fn fn, void *arg);
int db_workloads_submit(struct db *db, struct db_workload *ws, int n,
                        const struct db_pending_caps *caps, char *why, size_t len);
int db_workload_get(struct db *db, const char *id, struct db_workload *out);
/* The same by seq (deleted rows included, as by id). */
int db_workload_get_seq(struct db *db, int64_t seq, struct db_workload *out);

enum db_wl_action { DB_WL_DELETE = 0, DB_WL_SUSPEND, DB_WL_RESUME };
/* Deletes, suspends or resumes: frees its pods, sets the phases, writes an
 * event, bumps the version. DB_ENOTFOUND if gone. */
int db_workload_act(struct db *db, int64_t seq, int action, const char *by, int64_t now_ms);
/* db_workload_act(RESUME) under the caps: a resumed workload is Pending
 * again, so it counts against its project's and its submitter's caps as a
 * submission does (DB_ELIMIT and why when one is reached, in the same
 * savepoint as the change). */
int db_workload_resume(struct db *db, int64_t seq, const char *by, int64_t now_ms,
                       const struct db_pending_caps *caps, char *why, size_t len);
/* Replaces a live workload's image, spec and pod counts (an inference's
 * PATCH): its pods are freed and, unless suspended, it is Pending again,
 * to be placed anew with the new spec; event Updated. DB_ENOTFOUND if
 * gone or deleted. A workload that becomes Pending so (it was not
 * already) counts against caps as a submission does: DB_ELIMIT and why
 * when one is reached, in the same savepoint as the change. */
struct db_wl_respec {
    int64_t seq;
    const char *image, *spec;     /* borrowed */
    int n_pods, min_pods;
    const char *by;
    int64_t now_ms;
    const struct db_pending_caps *caps;  /* NULL: none */
    char *why;
    size_t len;
};
int db_workload_respec(struct db *db, const struct db_wl_respec *u);
/* Removes the workloads deleted before before_ms whose deletion is done,
 * with their events, pod runs, measured figures and series (the retention
 * of deleted workloads); *seqs (malloc'd) names them, for their logs. */
int db_workloads_purge(struct db *db, int64_t before_ms, int64_t **seqs, int *n);
/* Several actions in one savepoint each, one group commit for all:
 * rcs[i] is the code of seqs[i]; resumes count against caps (NULL: none)
 * one after another, DB_ELIMIT for each past a cap. */
int db_workload_act_many(struct db *db, const int64_t *seqs, int n, int action, const char *by,
                         int64_t now_ms, const struct db_pending_caps *caps, int *rcs);

/* List query: an AND of filters, one sort key, a page. The field names
 * are the API's (name, projectName, phase, type, ...); db validates them. */
#define DB_MAX_FILTERS 8
struct db_filter {
    char field[32];
    char op[3];                   /* == != <= >= =@ !@ =^ =$ */
    char value[DB_NAME_LEN];
};
#define DB_WL_DELETED_ONLY 2 /* db_wl_query.include_deleted: only the deleted ones */
struct db_wl_query {
    int n_filters;
    struct db_filter filters[DB_MAX_FILTERS];
    char sort_by[32];             /* "" : createdAt */
    int desc;
    int offset, limit;
    int include_deleted;          /* 0: live ones; 1: deleted ones too; DB_WL_DELETED_ONLY */
    const int64_t *projects;      /* only these project seqs; NULL: all */
    int n_projects;
};
/* DB_EINVAL names a bad filter or sort field. *out malloc'd (db_workloads_free). */
int db_workload_list(struct db *db, const struct db_wl_query *q, struct db_workload **out, int *n);
int db_workload_count(struct db *db, const struct db_wl_query *q, int64_t *count);

/* Live workloads counted per project, type, phase, pool and pending-time
 * bucket (the workloads telemetry): pool is the pool of the workload's
 * first placed pod, else the first pool it asks for, else ""; bucket is
 * how many of pending_edges_s (ascending) the time since it went Pending
 * has reached (0 .. n_edges; -1 when not Pending). */
struct db_wl_tally {
    int64_t project_seq;
    int type;
    char phase[24];
    char pool[DB_NAME_LEN];
    int bucket;
    int64_t count;
    int64_t gpu_milli;            /* GPUs its placed pods hold */
};
int db_workload_tally(struct db *db, const char *projects_json, int64_t now_ms,
                      const int64_t *pending_edges_s, int n_edges, struct db_wl_tally **out,
                      int *n);

struct db_pod {
    int64_t workload_seq;
    int idx;
    int64_t node_seq;             /* 0: not placed */
    char node_name[DB_NAME_LEN];
    char pool_name[DB_NAME_LEN];
    uint64_t devices;
    int64_t gpu_milli;            /* what it holds there (a GPU-memory request's share) */
    char address[64];             /* its node's address ("" simulated) */
    int simulated;                /* its node is simulated */
};
/* The pods bound for a workload (workload_seq 0: of every workload), by
 * workload then index; *out malloc'd. */
int db_pod_list(struct db *db, int64_t workload_seq, struct db_pod **out, int *n);
/* db_workload_get() and that workload's pods (db_pod_list()) in one read
 * transaction (GET of one workload). On failure *pods is NULL and *n 0;
 * *out is cleared with db_workload_clear() either way. */
int db_workload_get_pods(struct db *db, const char *id, struct db_workload *out,
                         struct db_pod **pods, int *n);

struct db_event {
    int64_t seq;
    int64_t workload_seq;
    int64_t created_at;
    char type[16];                /* Normal | Warning */
    char reason[48];
    char message[DB_MSG_LEN];
};
int db_event_list(struct db *db, int64_t workload_seq, int desc, int offset, int limit,
                  struct db_event **out, int *n);

/* Events of given reasons in a time window, across workloads (the
 * Overview's evictions), newest first, each with its workload. */
struct db_event_query {
    int64_t from_ms, to_ms;       /* created_at in [from_ms, to_ms) */
    const char *reasons_json;     /* a JSON array of reasons */
    const char *projects_json;    /* a JSON array of project seqs; NULL: every project */
    int64_t department_seq;       /* the projects of this department only; 0: any */
    int64_t pool_seq;             /* evictions from this node pool only; 0: any */
    int offset, limit;
};
struct db_event_row {
    struct db_event e;
    char workload_id[DB_ID_LEN];
    char workload_name[DB_NAME_LEN];
    int workload_type;
    char project_id[DB_ID_LEN];
    char project_name[DB_NAME_LEN];
};
int db_event_query_list(struct db *db, const struct db_event_query *q, struct db_event_row **out,
                        int *n);
int db_event_query_count(struct db *db, const struct db_event_query *q, int64_t *count);

/* ---- The scheduler's snapshot and its decisions ---- */
struct db_sched_pod {
    int64_t node_seq;             /* 0: not placed */
    uint64_t devices;
};

struct db_sched_wl {
    int64_t seq, version, project_seq;
    const char *name;
    const char *pools;            /* comma-separated names; "" none */
    const char *node_type;        /* comma-separated node types; "" none */
    const char *affinity;         /* nodeAffinityRequired as JSON; "" none */
    const char *topology;         /* its topology as JSON ({name, requiredPlacement,
                                     preferredPlacement}); "" none */
    const char *phase;            /* Pending | Running */
    const char *phase_reason;
    const char *phase_message;
    int type, priority, preemptible;
    int n_pods, min_pods, gpu_devices;
    int64_t gpu_portion, cpu_milli, mem_mib, gpu_memory_mib;
    int64_t queued_seq, started_ms, stale_since_ms;
    struct db_sched_pod *pods;    /* [n_pods] */
};

/* Everything one cycle reads, from one read transaction. Pools, nodes and
 * queues are ordered by seq (age); workloads (Pending or Running, live) by
 * queued_seq. One allocation block; free with db_snapshot_free(). */
struct db_snapshot {
    struct db_pool *pools; int n_pools;
    struct db_node *nodes; int n_nodes;
    struct db_queue *queues; int n_queues;
    struct db_sched_wl *workloads; int n_workloads;
    void *block__;
    int holders__;   /* holders beyond the first (db_snapshot_share()) */
};
int db_snapshot_load(struct db *db, struct db_snapshot **out);
/* Only the pools, nodes and queues of a snapshot (no workloads). */
int db_topology_load(struct db *db, struct db_snapshot **out);
/* Only the workloads among seqs[0..n) that are live and Pending or
 * Running, with their pods, in the order of seqs; no pools, nodes, queues. */
int db_workloads_load(struct db *db, const int64_t *seqs, int n, struct db_snapshot **out);
/* Lets go of s: the last holder frees it. */
void db_snapshot_free(struct db_snapshot *s);
/* s with one more holder, who frees it with db_snapshot_free() like the
 * first: no copy. A snapshot once shared is read only for every holder,
 * and holders may be on different threads. */
struct db_snapshot *db_snapshot_share(struct db_snapshot *s);
/* A copy of the pools, nodes and queues of s (none of its workloads),
 * with the nodes add[0..n_add) appended after its own: a topology the
 * caller may change without touching s. Free with db_snapshot_free(). */
int db_snapshot_copy_topology(const struct db_snapshot *s, const struct db_node *add, int n_add,
                              struct db_snapshot **out);

/* One workload's new state after a cycle. */
struct db_wl_update {
    int64_t seq, version;         /* version as read in the snapshot */
    const char *phase;            /* Pending | Running */
    const char *phase_reason;     /* "" none */
    const char *phase_message;
    int64_t started_ms, stale_since_ms;
    int pods_changed;
    /* 1: the cycle only placed more of its pods (every pod it had stays
     * where it was), so none of its pod rows goes and no row is looked up
     * to be taken out; 0: any of its rows may go */
    int pods_added_only;
    const struct db_sched_pod *pods; int n_pods;
};
struct db_wl_event {
    int64_t workload_seq;
    const char *type, *reason, *message;
    int64_t pool_seq;             /* an eviction's node pool; 0: none */
};
struct db_cycle {
    int64_t now_ms;
    const struct db_wl_update *updates; int n_updates;
    const struct db_wl_event *events; int n_events;
};
/* Applies a cycle in one savepoint. Updates whose version no longer
 * matches are skipped with their events; *n_applied counts the others. */
int db_cycle_apply(struct db *db, const struct db_cycle *c, int *n_applied);
/* The same in turns (snapshot.c): updates before the last t->n_after in
 * the first, then the last n_after (each of which only places pods on
 * what is free once the first turn applied) in turns of about t->turn_us;
 * the writer commits between turns when other writes wait. */
struct db_turns {
    int n_after;        /* in */
    int64_t turn_us;    /* in: a turn's target length on the writer */
    int rows;           /* in/out: the next turn's updates (under 4: start at 32),
                         * learnt from each turn's pace: keep it for the next cycle */
    int64_t *held_us;   /* out: each turn's time on the writer; n_after + 2 of room */
    int64_t *held_cpu_us; /* out, or NULL: each turn's CPU time on the writer (its thread's
                           * clock: the part of held_us it ran, not waited for a core) */
    int n_turns;        /* out */
};
int db_cycle_apply_turns(struct db *db, const struct db_cycle *c, struct db_turns *t,
                         int *n_applied);
/* Writes the pending reasons and messages of c->updates from the first
 * (phase, pods and times as they are; c->events must be empty) in one
 * write that stops once its statements have run budget_us (after one row
 * at least): *n_done says how many rows it got to, *n_applied grows by
 * those whose version still matched, *held_us is how long it ran (*held_cpu_us
 * of it on the writer's CPU). A caller writes the rest with further calls
 * from updates + *n_done. */
int db_reasons_apply(struct db *db, const struct db_cycle *c, int64_t budget_us, int *n_done,
                     int *n_applied, int64_t *held_us, int64_t *held_cpu_us);

/* ---- Allocation samples (metrics time series, time-based fairshare) ----
 * One row per queue, pool and sample time: what the queue held and its
 * deserved quota (GPU milli, CPU milli, memory MiB). */
struct db_sample {
    int64_t queue_seq, pool_seq, ts;
    int64_t alloc[3], quota[3];
};
/* Inserts n samples and deletes every sample older than keep_after_ms. */
int db_samples_add(struct db *db, const struct db_sample *s, int n, int64_t keep_after_ms);
/* Samples of one queue between start and end (inclusive), summed over
 * pools (pool_seq 0) or of one pool, ordered by time; malloc'd. */
int db_samples_get(struct db *db, int64_t queue_seq, int64_t pool_seq, int64_t start,
                   int64_t end, struct db_sample **out, int *n);
/* Every project's samples summed per time, of one pool (pool_seq) or of
 * all (0), between start and end (inclusive); malloc'd. */
int db_samples_projects(struct db *db, int64_t pool_seq, int64_t start, int64_t end,
                        struct db_sample **out, int *n);
/* Average allocation per queue, pool and bucket of bucket_ms since
 * `since`; each row's ts is the bucket start. malloc'd. */
int db_samples_buckets(struct db *db, int64_t since, int64_t bucket_ms, struct db_sample **out,
                       int *n);

/* An ISO-8601 date or date-time in ms since the epoch: "2021-01-01",
 * "2021-01-01T10:00:00[.sss]" followed by "Z", an offset ("+02:00",
 * "-0530", "+02") or nothing (UTC). A space where the offset's sign goes
 * is a '+' that a query string decoded. DB_OK or DB_EINVAL. */
int db_time_parse(const char *s, int64_t *ms);

/* A new UUID (RFC 9562 version 7) for an object that is not a row. */
void db_uuid_new(char out[DB_ID_LEN]);

/* ---- Metrics time series (series.c) ----
 * Points of the series the scheduler thread records every sample period,
 * written only when a value changes: a series is a step function. */
enum db_series_kind { DB_SERIES_CLUSTER = 0, DB_SERIES_POOL, DB_SERIES_NODE,
                      DB_SERIES_WORKLOAD, DB_SERIES_QUEUE };
struct db_point {
    int kind;                     /* enum db_series_kind */
    char entity[DB_NAME_LEN];     /* cluster uuid, pool name, node id, workload seq; a
                                     project's or department's id, alone (every pool) or
                                     "<id>/<pool seq>" */
    char metric[48];              /* Run:ai's metricType */
    char label[16];               /* a device's index for the _PER_GPU metrics; "" */
    int64_t ts;
    double value;
};
/* A sample's points written in turns, each one write of the writer:
 * db_series_add_turn() writes points from `done` on until budget_us has
 * run (at least one statement's; <= 0: all of them), and in the turn
 * that writes the last of them, the sample's mark (readers read nothing
 * after the latest mark: a sample is read whole or not at all) and the
 * prune of points older than keep_after_ms (0: no pruning), which keeps
 * each series' latest point unless it is 0. Call it again until whole;
 * held_us: how long the writer ran the turn (the writes queued behind it
 * waited that long), held_cpu_us of it on the writer's CPU. On failure the turns written stay unread, and the
 * next sample's first turn deletes them. */
struct db_series_turns {
    const struct db_point *p;
    int n;
    int64_t keep_after_ms;
    int64_t budget_us;
    int done;                     /* points written; 0 before the first turn */
    int whole;                    /* the last turn was written */
    int64_t held_us;
    int64_t held_cpu_us;
};
int db_series_add_turn(struct db *db, struct db_series_turns *t);
/* One series (every label) between start and end, with the point in force
 * at start; ordered by label then time; *out malloc'd. */
int db_series_get(struct db *db, int kind, const char *entity, const char *metric, int64_t start,
                  int64_t end, struct db_point **out, int *n);
/* Every series' point in force after the last sample written whole (what
 * a recorder that starts compares its first sample with), the sample's
 * mark left out; *out malloc'd. */
int db_series_latest(struct db *db, struct db_point **out, int *n);
/* Every live Pending workload's seq and the time it became Pending, by
 * seq; *out malloc'd. */
struct db_pending {
    int64_t seq, since_ms;
};
int db_pending_since(struct db *db, struct db_pending **out, int *n);

/* Run:ai type names ("Training", ...) and back. */
const char *db_type_name(int type);

#endif /* ALLOT_DB_H */
