/*
 * control.h: allotd's control loop, the one header the rest of allotd
 * (api/, the HTTP side) reaches it through: the scheduler thread that
 * keeps the cluster's model in memory and drives the scheduling core
 * (sched_loop.c, sched_model.c), leadership among replicas (leader.c),
 * the change feed of what other replicas wrote (changefeed.c), the metrics
 * series it records (series_rec.c), what-if runs on a copy of its model
 * (whatif.c, whatif.h), and the checks it runs each turn on what agents
 * reported (enforce.c).
 *
 * Layering (docs/architecture.md): control/ includes the scheduling core
 * (scheduler/), the store (db/) and common/, never an api/ header; what
 * it must tell the server (purged workloads, changed principals) goes
 * through the hooks of struct ctl_sched_opts.
 */
#ifndef ALLOT_CONTROL_H
#define ALLOT_CONTROL_H

#include <stdint.h>

#include "db.h"
#include "sched_model.h"
#include "whatif.h"

/* The one cluster allotd runs: Run:ai's clusterId in the API, and the
 * entity of the cluster-wide series rows. */
#define CTL_CLUSTER_ID "6a4e5f3c-1b2d-4c8e-9f00-a11070000001"

/* ---- the scheduler thread (sched_loop.c) ----
 * The thread keeps the scheduling state in memory. Whoever changes rows
 * it schedules from must say so once the change has committed:
 * ctl_sched_touch() for a workload (deleted, suspended, resumed,
 * finished), ctl_sched_org_changed() for pools, nodes (a node
 * registered, lost or back), departments and projects. Both wake it. A
 * submission's workloads need no call: the thread hears of them from the
 * database's writer as their commit returns (db_on_submitted(), set from
 * ctl_sched_start() to ctl_sched_stop()). */
struct ctl_sched;
struct ctl_share {
    int64_t queue_seq, pool_seq;
    int kind;                          /* enum db_queue_kind */
    char queue[DB_NAME_LEN], pool[DB_NAME_LEN];
    int64_t deserved[3], fair[3], allocated[3], requested[3];
};
#define CTL_HIST_BUCKETS 12
/* The locks a request can wait on while the scheduler thread holds them:
 * its state (wake flags, touched workloads, shares, these stats), the
 * model (what-if runs copy it under this lock, which the scheduler
 * thread holds while it changes the model) and the database writer (a
 * cycle's write is one op of a group commit; writes queued behind it
 * wait for it). */
enum ctl_lock { CTL_LOCK_STATE, CTL_LOCK_MODEL, CTL_LOCK_WRITE, CTL_LOCKS };
#define CTL_HOLD_BUCKETS 13
struct ctl_sched_stats {
    int64_t cycles, decisions, last_cycle_us, max_cycle_us, pending, running;
    int64_t cycle_us_total;
    int64_t hist[CTL_HIST_BUCKETS];    /* cycles per duration bucket (not cumulative) */
    int64_t evictions[3];              /* by reason: reclaim, preempt, stale gang */
    int64_t failures;                  /* cycles that could not be stored */
    int64_t fenced;                    /* turns whose writes the leader's fence refused */
    int64_t cycles_full, cycles_reused; /* cycles the core ran in full; answered from its memo */
    int64_t cycles_kept;               /* cycles it ran on its kept session (a departure with pods) */
    /* the scheduler thread's holds of each lock (enum ctl_lock) */
    int64_t holds[CTL_LOCKS], hold_us_total[CTL_LOCKS], hold_max_us[CTL_LOCKS];
    int64_t hold_cpu_max_us[CTL_LOCKS]; /* the most CPU time the holder ran in one hold
                                           (model and write: state's is not read) */
    int64_t hold_hist[CTL_LOCKS][CTL_HOLD_BUCKETS];   /* per bucket, not cumulative */
};
extern const double ctl_hist_bounds[CTL_HIST_BUCKETS - 1];   /* seconds; last is +Inf */
extern const double ctl_hold_bounds[CTL_HOLD_BUCKETS - 1];   /* seconds; last is +Inf */
extern const char *const ctl_lock_names[CTL_LOCKS];
extern const char *const ctl_eviction_reasons[3];
/* ---- leadership among replicas (leader.c) ---- */
#define CTL_LEADER_TTL_MS 3000
#define CTL_LEADER_RENEW_MS 1000
#define CTL_LEADER_ASK_MS 500
/* The leader's own deadline: this share of the lease after its ask (the
 * database's expiry is later, whatever the clocks say, as long as they
 * tick at the same rate give or take a tenth); a renewal period must be
 * shorter, or the leadership lapses between renewals. */
#define CTL_LEADER_LOCAL(ttl) ((ttl) * 9 / 10)
struct ctl_leader;
struct ctl_leader_opts {
    int64_t ttl_ms;                    /* the lease; 0: CTL_LEADER_TTL_MS */
    int64_t renew_ms;                  /* the leader extends it this often; 0: CTL_LEADER_RENEW_MS */
    int64_t ask_ms;                    /* a follower asks for it this often; 0: CTL_LEADER_ASK_MS */
    const char *holder;                /* this replica's name; NULL: host:pid:random */
};
struct ctl_leader_info {
    int leading;
    int64_t epoch;                     /* this replica's, while it leads; else 0 */
    char holder[96];                   /* this replica */
    char leader[96];                   /* who holds the lease as last read; "" nobody */
    int64_t leader_epoch;
    int db_ok;                         /* the database answered the last ask */
    int64_t gained;                    /* leaderships this replica took */
    int64_t ttl_ms;
};
/* Starts the thread that holds or waits for the lease (after one ask, so
 * a replica that can lead does from the start). 0 or -1. */
int ctl_leader_start(struct db *db, const struct ctl_leader_opts *o, struct ctl_leader **out);
/* Stops the thread and gives the lease back. NULL is a no-op. */
void ctl_leader_stop(struct ctl_leader *l);
/* Called (on the leader's thread) whenever this replica starts or stops leading. */
void ctl_leader_hook(struct ctl_leader *l, void (*hook)(void *), void *arg);
/* The epoch while this replica leads, else 0 (NULL: 0). */
int64_t ctl_leader_epoch(struct ctl_leader *l);
/* A write fenced by epoch was refused: this replica leads no more. */
void ctl_leader_lost(struct ctl_leader *l, int64_t epoch);
void ctl_leader_get(struct ctl_leader *l, struct ctl_leader_info *out);

/* ---- the change log's reader (changefeed.c) ---- */
struct ctl_feed;
struct db_change;
typedef void (*ctl_feed_fn)(void *arg, const struct db_change *ch);
struct ctl_feed *ctl_feed_new(void);
void ctl_feed_free(struct ctl_feed *f);
/* Hands fn each change other processes made since the last poll (the
 * first poll only notes where the log is). 0, or -1 if the database
 * could not be read (the next poll goes on from where this one stopped). */
int ctl_feed_poll(struct ctl_feed *f, struct db *db, int64_t now_ms, ctl_feed_fn fn, void *arg);

struct ctl_sched_opts {
    int period_ms;                     /* default 1000 */
    int sample_period_ms;              /* allocation samples; default 15000 */
    int64_t agent_lost_after_ms;       /* the agents' lease plus its margin */
    int64_t retention_ms;              /* purge deleted workloads after; 0: never */
    struct ctl_leader *leader;         /* cycles and liveness checks run only while
                                          it leads; NULL: always */
    /* What the loop tells the server it drives (each may be NULL; called
     * on the scheduler thread with hook_arg): */
    void (*purged)(void *arg, const int64_t *seqs, int n);  /* workloads purged:
                                                               drop what they left */
    void (*principals_changed)(void *arg);  /* another replica changed users,
                                               tokens or access rules */
    void (*settings_changed)(void *arg);    /* another replica changed the
                                               tenant's settings */
    void *hook_arg;
    struct ctl_watch *watch;           /* marked with the agents' nodes each write gave or
                                          took pods (assign_watch.c); NULL: none */
};
int ctl_sched_start(struct db *db, const struct ctl_sched_opts *o, struct ctl_sched **out);

/* ---- heartbeats that wait for their node's pods (assign_watch.c) ----
 * The scheduler thread marks the nodes its committed decisions bound pods
 * to or took pods from; a heartbeat takes ctl_watch_now() before it reads
 * its node's pods, answers it as its generation, and the agent's next
 * heartbeat waits with ctl_watch_wait() for a mark after it. */
struct ctl_watch;
struct ctl_watch *ctl_watch_new(int max_waiting);   /* NULL: out of memory */
void ctl_watch_free(struct ctl_watch *w);           /* NULL is a no-op */
int64_t ctl_watch_now(struct ctl_watch *w);         /* the marks so far */
void ctl_watch_mark(struct ctl_watch *w, const int64_t *node_seqs, int n);
/* 1 once node_seq is marked after `after` (at once if it was), 0 when
 * wait_ms passed first, -1 without waiting: max_waiting wait already, or
 * the watch is closed (or NULL). */
int ctl_watch_wait(struct ctl_watch *w, int64_t node_seq, int64_t after, int wait_ms);
/* Wakes every waiter and lets none wait again (allotd stopping). */
void ctl_watch_close(struct ctl_watch *w);

/* The metrics time series the scheduler thread records every sample
 * period (series_rec.c): it remembers the last values to write only
 * changes. */
struct ctl_series_rec;
struct sched_model;
struct ctl_series_rec *ctl_series_rec_new(void);
void ctl_series_rec_free(struct ctl_series_rec *rec);      /* NULL is a no-op */
/* The next sample written compares with what is stored, not with the last
 * this recorder wrote (a leadership that starts). NULL is a no-op. */
void ctl_series_rec_reseed(struct ctl_series_rec *rec);
/* Takes one sample of the model's cluster, pools, nodes, workloads and
 * queues at now_ms and hands it to the recorder's own thread, which
 * writes its changes in turns of about turn_us (db_series_add_turn),
 * prunes points older than keep_after_ms, and tells held(arg, us, cpu_us)
 * how long each turn held the writer (cpu_us of it on the writer's CPU); returns without waiting for the write
 * (a sample not yet begun when the next comes is replaced by it).
 * ctl_series_rec_free() writes what waits first. 0 or -1. */
int ctl_series_record(struct ctl_series_rec *rec, struct db *db, const struct sched_model *m,
                      int64_t now_ms, int64_t keep_after_ms, int64_t turn_us,
                      void (*held)(void *arg, int64_t us, int64_t cpu_us), void *arg);
void ctl_sched_wake(struct ctl_sched *s);
void ctl_sched_touch(struct ctl_sched *s, int64_t workload_seq);
void ctl_sched_org_changed(struct ctl_sched *s);
/* Advances on every ctl_sched_org_changed(); caches of org rows compare it. */
uint64_t ctl_sched_org_generation(struct ctl_sched *s);
/* Lets the running cycle finish, then joins the thread. NULL is a no-op. */
void ctl_sched_stop(struct ctl_sched *s);
/* The last cycle's fair share of a queue in a pool; 0 if none recorded. */
int ctl_sched_share(struct ctl_sched *s, int64_t queue_seq, int64_t pool_seq,
                    struct ctl_share *out);
/* Every (queue, pool) of the last cycle; *out malloc'd (free()). */
int ctl_sched_shares(struct ctl_sched *s, struct ctl_share **out, int *n);
void ctl_sched_get_stats(struct ctl_sched *s, struct ctl_sched_stats *out);
/* 1 once the state is loaded and a cycle has completed. */
int ctl_sched_ready(struct ctl_sched *s);
/* Runs one cycle now on the calling thread (tests); decisions count out. */
int ctl_sched_run_once(struct ctl_sched *s, int *n_decisions);

/* ---- what agents reported, enforced (enforce.c) ---- */
/* Nodes silent longer than lost_after_ms (the lease plus its margin,
 * counted from started_ms at the earliest) are lost and their workloads
 * requeued; Running workloads past their project's time or idle-GPU
 * limits are suspended. Returns how many changed, -1 on error. */
int ctl_agents_enforce(struct db *db, int64_t now_ms, int64_t started_ms, int64_t lost_after_ms);

#endif /* ALLOT_CONTROL_H */
