/*
 * samples.c: the allocation samples the scheduler thread records every
 * sample period: per queue and node pool, what the queue held and its
 * deserved quota. They answer the per-entity metrics time series
 * (GET /api/v1/org-unit/projects/{id}/metrics) and, averaged per bucket,
 * give time-based fairshare its usage history.
 *
 * Invariants:
 *   1. Samples older than the retention the caller names are deleted in
 *      the same transaction that adds new ones, so the table stays bounded.
 *   2. A sample is keyed by (queue, pool, time): recording twice at the
 *      same millisecond keeps the later one.
 *   3. Summed over pools, a quota is -1 (unlimited) if any pool's is.
 */
#include "db_int.h"

#include <stdlib.h>
#include <string.h>

/* A sample's row, as the insert binds it and every read gives it. */
DB__TABLE(sample_cols, sample_shape, struct db_sample, NULL, queue_seq, pool_seq, ts, alloc[0],
          quota[0], alloc[1], quota[1], alloc[2], quota[2]);

struct add_arg {
    const struct db_sample *s;
    int n;
    int64_t keep_after;
};

static int add_fn(struct db__conn *c, void *arg)
{
    static const char ins[] =
        "INSERT OR REPLACE INTO samples (queue_seq, pool_seq, ts, gpu_alloc, gpu_quota,"
        " cpu_alloc, cpu_quota, mem_alloc, mem_quota) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";
    static const char prune[] = "DELETE FROM samples WHERE ts < ?";
    struct add_arg *a = arg;
    int rc = DB_OK, i;

    for (i = 0; rc == DB_OK && i < a->n; i++)
        rc = db__exec_cols(c, ins, sample_cols, DB__NCOLS(sample_cols), &a->s[i]);
    return rc == DB_OK ? db__run_key(c, prune, a->keep_after) : rc;
}

int db_samples_add(struct db *db, const struct db_sample *s, int n, int64_t keep_after_ms)
{
    struct add_arg a = {s, n, keep_after_ms};

    return db__write(db, add_fn, &a);
}

/* The reads. A statement's parameters are the queue (?1; NULL for one
 * that reads every project), the pool (?2) and the times from start (?3,
 * ?4); the buckets' read, the time from which (?1) and the bucket (?2). */
static const char queue_sum_sql[] =
    "SELECT queue_seq, 0, ts, sum(gpu_alloc),"
    " CASE WHEN min(gpu_quota) < 0 THEN -1 ELSE sum(gpu_quota) END, sum(cpu_alloc),"
    " CASE WHEN min(cpu_quota) < 0 THEN -1 ELSE sum(cpu_quota) END, sum(mem_alloc),"
    " CASE WHEN min(mem_quota) < 0 THEN -1 ELSE sum(mem_quota) END FROM samples"
    " WHERE queue_seq = ?1 AND ts BETWEEN ?3 AND ?4 AND ?2 = 0 GROUP BY queue_seq, ts"
    " ORDER BY ts";
static const char queue_pool_sql[] =
    "SELECT queue_seq, pool_seq, ts, gpu_alloc, gpu_quota, cpu_alloc, cpu_quota,"
    " mem_alloc, mem_quota FROM samples"
    " WHERE queue_seq = ?1 AND pool_seq = ?2 AND ts BETWEEN ?3 AND ?4 ORDER BY ts";
/* Every project's samples summed per time (of one pool, or of all with
 * pool_seq 0): the cluster's allocation and quota over time. */
static const char projects_sql[] =
    "SELECT 0, ?2, s.ts, sum(s.gpu_alloc),"
    " CASE WHEN min(s.gpu_quota) < 0 THEN -1 ELSE sum(s.gpu_quota) END, sum(s.cpu_alloc),"
    " CASE WHEN min(s.cpu_quota) < 0 THEN -1 ELSE sum(s.cpu_quota) END, sum(s.mem_alloc),"
    " CASE WHEN min(s.mem_quota) < 0 THEN -1 ELSE sum(s.mem_quota) END"
    " FROM samples s JOIN queues q ON q.seq = s.queue_seq AND q.kind = 1" /* DB_PROJECT */
    " WHERE s.ts BETWEEN ?3 AND ?4 AND (?2 = 0 OR s.pool_seq = ?2)"
    " GROUP BY s.ts ORDER BY s.ts";
static const char buckets_sql[] =
    "SELECT queue_seq, pool_seq, (ts / ?2) * ?2 AS b, avg(gpu_alloc), 0, avg(cpu_alloc), 0,"
    " avg(mem_alloc), 0 FROM samples WHERE ts >= ?1"
    " GROUP BY queue_seq, pool_seq, b ORDER BY queue_seq, pool_seq, b";

struct get_arg {
    const char *sql;
    struct db__arg args[4];
    int n_args;
    struct db_sample **out;
    int *n;
};

static int get_fn(struct db__conn *c, void *arg)
{
    struct get_arg *a = arg;

    return db__query_rows(c, a->sql, a->args, a->n_args, &sample_shape, a->out, a->n);
}

int db_samples_get(struct db *db, int64_t queue_seq, int64_t pool_seq, int64_t start,
                   int64_t end, struct db_sample **out, int *n)
{
    struct get_arg a = {pool_seq ? queue_pool_sql : queue_sum_sql,
                        {DB__I(queue_seq), DB__I(pool_seq), DB__I(start), DB__I(end)}, 4, out, n};

    return db__read_list(db, get_fn, &a, out, n);
}

int db_samples_projects(struct db *db, int64_t pool_seq, int64_t start, int64_t end,
                        struct db_sample **out, int *n)
{
    struct get_arg a = {projects_sql, {DB__NULL_ARG, DB__I(pool_seq), DB__I(start), DB__I(end)},
                        4, out, n};

    return db__read_list(db, get_fn, &a, out, n);
}

int db_samples_buckets(struct db *db, int64_t since, int64_t bucket_ms, struct db_sample **out,
                       int *n)
{
    struct get_arg a = {buckets_sql, {DB__I(since), DB__I(bucket_ms > 0 ? bucket_ms : 1)}, 2,
                        out, n};

    return db__read_list(db, get_fn, &a, out, n);
}
