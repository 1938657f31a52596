/*
 * db_ha.h: what allotd replicas on one database share: the leader lease
 * (lease.c) and the change log (changes.c).
 *
 * One row, leader_lease, names the replica that leads (holder), the
 * epoch of its leadership and when it ends (expires_at), in the
 * database's own clock: the replicas' clocks never enter, so skew
 * between them does not matter. The leader extends the row before it
 * expires; any replica takes it once it has expired, with the epoch
 * plus one.
 *
 * Fencing: a thread that sets its epoch with db_fence_set() has every
 * write it makes checked, inside the write's own savepoint, against the
 * row: same epoch and not expired, or the write is rolled back and fails
 * with DB_EFENCED. So a replica that lost the lease (paused, cut off)
 * can never commit a decision afterwards.
 *
 * The change log (changes.c) is the other half of running replicas:
 * what each one changed, for the others to read; and the leader's fair
 * shares (shares.c) are what its scheduler computed, for the others to
 * show.
 */
#ifndef ALLOT_DB_HA_H
#define ALLOT_DB_HA_H

#include "db.h"

#include <stdint.h>

#define DB_HOLDER_LEN 96

struct db_lease {
    char holder[DB_HOLDER_LEN];   /* "" before anyone took it */
    int64_t epoch;                /* 0 before anyone took it */
    int64_t expires_at;           /* ms, the database's clock */
    int64_t db_now;               /* the database's clock when read */
};

/* Holds the lease for `holder` for ttl_ms more: extends it when holder
 * has it (at epoch *epoch) and it has not expired; otherwise takes it
 * when it expired or `force` (no other process can reach the database:
 * SQLite's lock file), with the epoch plus one. DB_OK with *epoch the
 * epoch held (a new one: leadership starts anew); DB_ECONFLICT when
 * another holder has it (out says who, until when); other codes when the
 * database could not be asked. */
int db_lease_hold(struct db *db, const char *holder, int64_t *epoch, int64_t ttl_ms, int force,
                  struct db_lease *out);
/* Gives the lease up (expires now) if holder still has it at epoch. */
int db_lease_release(struct db *db, const char *holder, int64_t epoch);
/* The row as it is now. */
int db_lease_get(struct db *db, struct db_lease *out);

/* Every write this thread makes from now on is fenced by epoch (0: none). */
void db_fence_set(int64_t epoch);
/* Whether a write of this thread was refused by its fence since the last
 * call; clears the mark. */
int db_fence_refused(void);

/* ---- the change log between replicas (changes.c) ----
 * What one replica changed that the others keep in memory: the leader's
 * scheduler model (workloads, organization) and every replica's caches
 * (organization, principals, the tenant's settings; any row also drops
 * what the API's read cache holds, db_data_changed()). */
enum db_change_kind {
    DB_CHANGE_WORKLOAD = 0,
    DB_CHANGE_ORG = 1,
    DB_CHANGE_PRINCIPALS = 2,
    DB_CHANGE_SETTINGS = 3        /* the tenant's settings (settings.c; migration 380) */
};
struct db_change {
    int64_t seq;
    int kind;                     /* enum db_change_kind */
    int64_t workload_seq;         /* DB_CHANGE_WORKLOAD; else 0 */
    int own;                      /* written by this process */
};
/* This process's name in the log (random, fixed for its life). */
int64_t db_change_origin(void);
/* At most limit rows with seq > after, in seq order; *out malloc'd. */
int db_changes_since(struct db *db, int64_t after, int limit, struct db_change **out, int *n);
/* The highest seq written so far (0: none). */
int db_changes_last(struct db *db, int64_t *seq);
/* Removes the rows written before before_ms (this replica's clock). */
int db_changes_purge(struct db *db, int64_t before_ms);

/* ---- the leader's fair shares, for the other replicas (shares.c) ---- */
struct db_share {
    int64_t queue_seq, pool_seq;
    int kind;                     /* enum db_queue_kind */
    char queue[DB_NAME_LEN], pool[DB_NAME_LEN];
    int64_t deserved[3], fair[3], allocated[3], requested[3];
};
/* Replaces every row with s[0..n). */
int db_shares_put(struct db *db, const struct db_share *s, int n);
/* Every row, by queue and pool; *out malloc'd. */
int db_shares_get(struct db *db, struct db_share **out, int *n);

#endif /* ALLOT_DB_HA_H */
