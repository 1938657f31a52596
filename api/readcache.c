/*
 * readcache.c: the workloads the API reads most (GET of one workload, a
 * page of a list of workloads) kept in memory, so that a read repeated
 * while nothing changed does not wait for the database server
 * (PostgreSQL) nor run its statements again (SQLite: a GET of one
 * workload read its row and its pods in a read transaction, a third of
 * allotd's CPU under GETs; from memory about 1.6 times as many GETs a
 * second).
 *
 * Design:
 *   1. An entry is one read's result: a workload with its pods
 *      (db_workload_get_pods), or a page of a list (db_workload_list) for
 *      one query, stamped before the read began with the database's data
 *      generation (db_data_generation) and the monotonic clock.
 *   2. An entry answers only while the generation is still its stamp and
 *      it is younger than max_age_ms. The generation moves after each
 *      transaction of this process's writer ends, before any caller of it
 *      is told (db/db.c), and when the change feed reads a row another
 *      replica wrote (control/changefeed.c, at each turn of the scheduler
 *      thread). So this replica's own writes are seen by every read that
 *      starts after they were answered; another replica's change through
 *      the API drops the entries at this replica's next turn; a change
 *      that writes no row of the change feed (the leader's placements and
 *      phases as a follower sees them, a program writing the database
 *      directly) is seen once the entry's age passes max_age_ms.
 *   3. Entries are shared and never written after they are made: a hit
 *      takes a reference under its slot's mutex, the last reference frees
 *      the entry. A GET copies its one row out; a list's rows are lent to
 *      the caller until api_rows_release().
 *   4. A key is the read's whole input: "1" and the workload's id, or "L"
 *      and every field of the list query, the projects the caller may
 *      read included, so a hit returns the rows the same read would have,
 *      and the caller filters them as it would have (authz unchanged).
 *      A list filtered or sorted by totalRunningTimeSeconds (computed
 *      from the database's clock) is not kept.
 *
 * Invariants:
 *   1. A read answered from an entry holds every write this process
 *      committed before the read began, and every write of another
 *      process committed max_age_ms before it or whose change-feed row
 *      this process read before it.
 *   2. An entry answers only its own key (design 4).
 *   3. Memory is bounded: RC_ONE_SLOTS + RC_LIST_SLOTS entries, RC_BYTES
 *      in all (a read that would pass it is answered, not kept).
 *   4. A NULL cache keeps nothing: every read goes to the database.
 */
#include "api.h"
#include "clock.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define RC_ONE_SLOTS 1024            /* workloads by id */
#define RC_LIST_SLOTS 64             /* pages of lists by query */
#define RC_LIST_ROWS 201             /* the longest page kept */
#define RC_BYTES (48L * 1024 * 1024) /* every entry's rows together */

struct api_rc_entry {
    int refs;                        /* the slot's and each reader's (atomic) */
    uint64_t gen;                    /* the data generation before the read */
    int64_t at_us;                   /* the monotonic clock before the read */
    size_t bytes;                    /* counted against RC_BYTES */
    struct db_workload *rows;
    int n;
    struct db_pod *pods;
    int n_pods;
    size_t key_len;
    char key[];
};

struct rc_slot {
    pthread_mutex_t mu;
    struct api_rc_entry *e;              /* NULL: empty */
};

struct api_readcache {
    struct db *db;
    int64_t max_age_us;
    long bytes;                      /* held by entries (atomic) */
    int64_t hits, misses;            /* atomic */
    struct rc_slot one[RC_ONE_SLOTS];
    struct rc_slot list[RC_LIST_SLOTS];
};

struct api_readcache *api_readcache_new(struct db *db, int max_age_ms)
{
    struct api_readcache *rc;
    int i;

    if (max_age_ms <= 0 || !(rc = calloc(1, sizeof(*rc))))
        return NULL;
    rc->db = db;
    rc->max_age_us = (int64_t)max_age_ms * 1000;
    for (i = 0; i < RC_ONE_SLOTS; i++)
        pthread_mutex_init(&rc->one[i].mu, NULL);
    for (i = 0; i < RC_LIST_SLOTS; i++)
        pthread_mutex_init(&rc->list[i].mu, NULL);
    return rc;
}

static void entry_drop(struct api_readcache *rc, struct api_rc_entry *e)
{
    if (!e || __atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    __atomic_sub_fetch(&rc->bytes, (long)e->bytes, __ATOMIC_RELAXED);
    db_workloads_free(e->rows, e->n);
    free(e->pods);
    free(e);
}

static void slots_free(struct api_readcache *rc, struct rc_slot *s, int n)
{
    int i;

    for (i = 0; i < n; i++) {
        entry_drop(rc, s[i].e);
        pthread_mutex_destroy(&s[i].mu);
    }
}

void api_readcache_free(struct api_readcache *rc)
{
    if (!rc)
        return;
    slots_free(rc, rc->one, RC_ONE_SLOTS);
    slots_free(rc, rc->list, RC_LIST_SLOTS);
    free(rc);
}

void api_readcache_stats(struct api_readcache *rc, int64_t *hits, int64_t *misses)
{
    *hits = rc ? __atomic_load_n(&rc->hits, __ATOMIC_RELAXED) : 0;
    *misses = rc ? __atomic_load_n(&rc->misses, __ATOMIC_RELAXED) : 0;
}

/* ---- keys and slots ---- */

struct rc_key {
    char *s;
    size_t n, cap;
    int failed;
};

static void key_add(struct rc_key *k, const void *p, size_t len)
{
    if (k->failed)
        return;
    if (k->n + len > k->cap) {
        size_t cap = (k->cap ? k->cap * 2 : 256) + len;
        char *s = realloc(k->s, cap);
        if (!s) {
            k->failed = 1;
            return;
        }
        k->s = s;
        k->cap = cap;
    }
    memcpy(k->s + k->n, p, len);
    k->n += len;
}

static void key_str(struct rc_key *k, const char *s)
{
    key_add(k, s, strlen(s) + 1);
}

static uint32_t key_hash(const struct rc_key *k)
{
    uint32_t h = 2166136261u;
    size_t i;

    for (i = 0; i < k->n; i++)
        h = (h ^ (unsigned char)k->s[i]) * 16777619u;
    return h;
}

/* Design 4: every field of the query; 0 when it is not kept (a clock
 * field) or out of memory. */
static int list_key(const struct db_wl_query *q, struct rc_key *k)
{
    static const char clock_field[] = "totalRunningTimeSeconds";
    const int head[] = {q->n_filters, q->desc, q->offset, q->limit, q->include_deleted,
                        q->projects ? q->n_projects : -1};
    int i;

    if (strcmp(q->sort_by, clock_field) == 0)
        return 0;
    key_add(k, "L", 1);
    key_add(k, head, sizeof(head));
    key_str(k, q->sort_by);
    for (i = 0; i < q->n_filters; i++) {
        if (strcmp(q->filters[i].field, clock_field) == 0)
            return 0;
        key_str(k, q->filters[i].field);
        key_str(k, q->filters[i].op);
        key_str(k, q->filters[i].value);
    }
    if (q->projects && q->n_projects > 0)
        key_add(k, q->projects, sizeof(q->projects[0]) * (size_t)q->n_projects);
    return !k->failed;
}

/* The entry of key k in slot s if it is current (design 2), with a
 * reference for the caller; NULL otherwise. */
static struct api_rc_entry *lookup(struct api_readcache *rc, struct rc_slot *s, const struct rc_key *k)
{
    uint64_t gen = db_data_generation(rc->db);
    int64_t now = clock_mono_us();
    struct api_rc_entry *e;

    pthread_mutex_lock(&s->mu);
    e = s->e;
    if (e && (e->gen != gen || now - e->at_us >= rc->max_age_us || e->key_len != k->n ||
              memcmp(e->key, k->s, k->n) != 0))
        e = NULL;
    if (e)
        __atomic_add_fetch(&e->refs, 1, __ATOMIC_ACQ_REL);
    pthread_mutex_unlock(&s->mu);
    __atomic_add_fetch(e ? &rc->hits : &rc->misses, 1, __ATOMIC_RELAXED);
    return e;
}

/* A new entry for key k stamped (gen, at_us), holding rows and pods (taken
 * over either way), with one reference for the caller; NULL when it may
 * not be kept (invariant 3) or out of memory. */
static struct api_rc_entry *entry_new(struct api_readcache *rc, const struct rc_key *k, uint64_t gen,
                                  int64_t at_us, struct db_workload *rows, int n,
                                  struct db_pod *pods, int n_pods)
{
    size_t bytes = sizeof(struct api_rc_entry) + k->n + sizeof(*rows) * (size_t)n +
                   sizeof(*pods) * (size_t)n_pods;
    struct api_rc_entry *e = NULL;
    int i;

    for (i = 0; i < n; i++)
        bytes += rows[i].spec ? strlen(rows[i].spec) + 1 : 0;
    if (__atomic_add_fetch(&rc->bytes, (long)bytes, __ATOMIC_RELAXED) > RC_BYTES ||
        !(e = malloc(sizeof(*e) + k->n))) {
        __atomic_sub_fetch(&rc->bytes, (long)bytes, __ATOMIC_RELAXED);
        db_workloads_free(rows, n);
        free(pods);
        return NULL;
    }
    *e = (struct api_rc_entry){.refs = 1, .gen = gen, .at_us = at_us, .bytes = bytes, .rows = rows,
                           .n = n, .pods = pods, .n_pods = n_pods, .key_len = k->n};
    memcpy(e->key, k->s, k->n);
    return e;
}

/* Puts e in slot s (one more reference: the slot's); the entry it
 * replaces is dropped. */
static void store(struct api_readcache *rc, struct rc_slot *s, struct api_rc_entry *e)
{
    struct api_rc_entry *old;

    __atomic_add_fetch(&e->refs, 1, __ATOMIC_ACQ_REL);
    pthread_mutex_lock(&s->mu);
    old = s->e;
    s->e = e;
    pthread_mutex_unlock(&s->mu);
    entry_drop(rc, old);
}

/* ---- one workload ---- */

/* The entry's row and pods copied to the caller (db_workload_get_pods()'s
 * answer); pods NULL: the row only. */
static int copy_out(const struct api_rc_entry *e, struct db_workload *out, struct db_pod **pods,
                    int *n)
{
    *out = e->rows[0];
    out->spec = e->rows[0].spec ? strdup(e->rows[0].spec) : NULL;
    if (e->rows[0].spec && !out->spec)
        return DB_ENOMEM;
    if (!pods)
        return DB_OK;
    *pods = NULL;
    *n = e->n_pods;
    if (e->n_pods > 0 && !(*pods = malloc(sizeof(**pods) * (size_t)e->n_pods))) {
        *n = 0;
        return DB_ENOMEM;
    }
    if (e->n_pods > 0)
        memcpy(*pods, e->pods, sizeof(**pods) * (size_t)e->n_pods);
    return DB_OK;
}

/* A miss: the database's read, stamped before it, then kept. */
static int one_read(struct api_readcache *rc, struct rc_slot *s, const struct rc_key *k,
                    const char *id, struct db_workload *out, struct db_pod **pods, int *n)
{
    uint64_t gen = db_data_generation(rc->db);
    int64_t at_us = clock_mono_us();
    struct db_workload *row = malloc(sizeof(*row));
    struct db_pod *got = NULL;
    struct api_rc_entry *e;
    int n_got = 0, rc_db;

    if (!row)
        return DB_ENOMEM;
    rc_db = db_workload_get_pods(rc->db, id, row, &got, &n_got);
    if (rc_db != DB_OK) {
        db_workloads_free(row, 1);
        free(got);
        return rc_db;
    }
    e = entry_new(rc, k, gen, at_us, row, 1, got, n_got);
    if (!e) /* not kept: read again for the caller */
        return pods ? db_workload_get_pods(rc->db, id, out, pods, n)
                    : db_workload_get(rc->db, id, out);
    rc_db = copy_out(e, out, pods, n);
    store(rc, s, e);
    entry_drop(rc, e);
    return rc_db;
}

int api_readcache_workload(struct api_readcache *rc, struct db *db, const char *id,
                           struct db_workload *out, struct db_pod **pods, int *n)
{
    struct rc_key k = {0};
    struct rc_slot *s;
    struct api_rc_entry *e;
    int rc_db;

    if (pods) {
        *pods = NULL;
        *n = 0;
    }
    memset(out, 0, sizeof(*out));
    key_add(&k, "1", 1);
    key_str(&k, id);
    if (!rc || k.failed) {
        free(k.s);
        return pods ? db_workload_get_pods(db, id, out, pods, n) : db_workload_get(db, id, out);
    }
    s = &rc->one[key_hash(&k) % RC_ONE_SLOTS];
    e = lookup(rc, s, &k);
    if (e) {
        rc_db = copy_out(e, out, pods, n);
        entry_drop(rc, e);
    } else {
        rc_db = one_read(rc, s, &k, id, out, pods, n);
    }
    free(k.s);
    if (rc_db != DB_OK) {
        db_workload_clear(out);
        if (pods) {
            free(*pods);
            *pods = NULL;
            *n = 0;
        }
    }
    return rc_db;
}

/* ---- lists ---- */

static void rows_lend(struct api_rows *out, struct api_rc_entry *e)
{
    out->w = e->rows;
    out->n = e->n;
    out->held = e;
}

int api_readcache_list(struct api_readcache *rc, struct db *db, const struct db_wl_query *q,
                       struct api_rows *out)
{
    struct rc_key k = {0};
    struct db_workload *rows = NULL;
    struct rc_slot *s = NULL;
    struct api_rc_entry *e = NULL;
    uint64_t gen = 0;
    int64_t at_us = 0;
    int n = 0, rc_db;

    memset(out, 0, sizeof(*out));
    out->cache = rc;
    if (rc && list_key(q, &k)) {
        s = &rc->list[key_hash(&k) % RC_LIST_SLOTS];
        e = lookup(rc, s, &k);
        gen = db_data_generation(rc->db);
        at_us = clock_mono_us();
    }
    if (e) {
        rows_lend(out, e);
        free(k.s);
        return DB_OK;
    }
    rc_db = db_workload_list(db, q, &rows, &n);
    if (rc_db == DB_OK && s && n <= RC_LIST_ROWS &&
        (e = entry_new(rc, &k, gen, at_us, rows, n, NULL, 0))) {
        store(rc, s, e);
        rows_lend(out, e);
    } else if (rc_db == DB_OK && s && n <= RC_LIST_ROWS) {
        rc_db = db_workload_list(db, q, &rows, &n); /* entry_new took the rows */
    }
    if (rc_db == DB_OK && !e) {
        out->w = rows;
        out->n = n;
        out->own = rows;
    }
    free(k.s);
    return rc_db;
}

void api_rows_release(struct api_rows *r)
{
    if (r->held)
        entry_drop(r->cache, r->held);
    else
        db_workloads_free(r->own, r->n);
    memset(r, 0, sizeof(*r));
}
