/*
 * audit.c: the audit log's recording side. Every mutating request (POST,
 * PUT, PATCH, DELETE) whose route's handler ran is noted after its answer
 * (api_audit_note, from the dispatcher): when, who (the signed-in
 * principal, or the login a token grant named), the method, path and the
 * Run:ai entity its route names, the answer's status, the client's
 * address. Agents' routes (register, heartbeat, logs: an agent's reports,
 * about one a second per node) are not audited.
 *
 * Notes go into a queue in memory; the thread allot-audit takes the
 * queue whole as a batch, which leaves the queue empty for the notes that
 * come meanwhile, and writes it (db_audit_insert: one write; on SQLite in
 * turns of about 0.5 ms, so that the submissions queued behind a batch of
 * thousands of rows wait for one turn, not for all of it) every
 * AUDIT_FLUSH_MS, or at once when half of it is full, and deletes the rows
 * past the retention in the same write, at most once every AUDIT_PURGE_MS
 * (the retention counts in days; the delete's index scan costs a batch
 * about as much as its rows on PostgreSQL). Each note's id is given
 * before its first try and kept, so a batch written again after a failure
 * skips the rows that had landed.
 *
 * Invariants:
 *   1. No note is dropped while the store takes writes: a request that
 *      finds the queue full waits for the thread to write it (up to
 *      AUDIT_WAIT_S; a store that refuses writes that long, a full disk,
 *      drops the note, counted and said on stderr, rather than hold every
 *      worker); at stop the thread writes what is left.
 *   2. A note costs the request a lock and a copy, never a write of its
 *      own: the hot path stays one database write per request.
 *   3. A batch the store refuses (a full disk, a store that cannot take
 *      writes) is kept and tried again at the next turn, before the notes
 *      queued behind it; the requests that find the queue full meanwhile
 *      wait for it (invariant 1).
 *   4. A batch being written holds no room of the queue. When the batch's
 *      rows stayed in the queue until written, a batch of half the queue
 *      that took longer to write than the other half took to fill (7,000
 *      submissions a second, the writer sharing its turns with the
 *      scheduler's) stopped every request for the rest of it, and the next
 *      batch was the whole queue: every submission waited 0.5-0.9 s.
 */
#include "api.h"
#include "db_audit.h"
#include "thread_role.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define AUDIT_QUEUE 4096
#define AUDIT_FLUSH_MS 200
#define AUDIT_WAIT_S 10
#define AUDIT_PURGE_MS 60000

struct api_audit {
    struct db *db;
    int64_t retention_ms;
    pthread_mutex_t mu;
    pthread_cond_t wake, room;
    struct db_audit *rows, *batch;
    int n;                    /* notes queued in rows */
    int n_batch;              /* rows of batch not yet written; the thread's */
    int stopping, started;
    long long dropped;
    int64_t purged_ms;        /* when a batch last deleted old rows; the thread's */
    pthread_t thread;
};

/* The queue taken out whole as the batch, each note given its id
 * (here, not on the request's thread: invariant 2). */
static void take(struct api_audit *a)
{
    int i;

    pthread_mutex_lock(&a->mu);
    a->n_batch = a->n;
    memcpy(a->batch, a->rows, (size_t)a->n * sizeof(*a->rows));
    a->n = 0;
    pthread_cond_broadcast(&a->room);
    pthread_mutex_unlock(&a->mu);
    for (i = 0; i < a->n_batch; i++)
        db_uuid_new(a->batch[i].id);
}

/* Writes the batch, a new one taken from the queue unless one the store
 * refused is still held (invariant 3: its ids kept, so the rows that
 * landed are not written twice); 0 written (or nothing to write). */
static int flush(struct api_audit *a)
{
    int64_t retention, now = api_now_ms(), purge_before = 0;
    int rc;

    if (a->n_batch == 0)
        take(a);
    if (a->n_batch == 0)
        return 0;
    retention = __atomic_load_n(&a->retention_ms, __ATOMIC_RELAXED);
    if (retention > 0 && now - a->purged_ms >= AUDIT_PURGE_MS)
        purge_before = now - retention;
    rc = db_audit_insert(a->db, a->batch, a->n_batch, purge_before);
    if (rc != DB_OK) {
        fprintf(stderr, "allotd: audit: cannot write %d rows (%s); trying again\n", a->n_batch,
                db_strerror(rc));
        return -1;
    }
    if (purge_before > 0)
        a->purged_ms = now;
    a->n_batch = 0;
    return 0;
}

static void *audit_main(void *arg)
{
    struct api_audit *a = arg;
    int stopping = 0, rc;

    thread_role_name("allot-audit");
    while (!stopping) {
        struct timespec until;
        pthread_mutex_lock(&a->mu);
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += AUDIT_FLUSH_MS * 1000000L;
        until.tv_sec += until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        while (!a->stopping && a->n < AUDIT_QUEUE / 2 &&
               pthread_cond_timedwait(&a->wake, &a->mu, &until) == 0)
            ;
        stopping = a->stopping;
        pthread_mutex_unlock(&a->mu);
        rc = flush(a);
        if (rc == 0 && stopping)
            flush(a); /* a batch tried again, then the notes queued behind it */
        else if (rc != 0 && !stopping) {
            struct timespec pause = {0, AUDIT_FLUSH_MS * 1000000L};
            nanosleep(&pause, NULL);
        }
    }
    return NULL;
}

struct api_audit *api_audit_start(struct db *db, int retention_days)
{
    struct api_audit *a = calloc(1, sizeof(*a));

    if (!a)
        return NULL;
    a->db = db;
    a->retention_ms = (int64_t)retention_days * 86400000LL;
    a->rows = calloc(AUDIT_QUEUE, sizeof(*a->rows));
    a->batch = calloc(AUDIT_QUEUE, sizeof(*a->batch));
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->wake, NULL);
    pthread_cond_init(&a->room, NULL);
    if (!a->rows || !a->batch || pthread_create(&a->thread, NULL, audit_main, a) != 0) {
        api_audit_stop(a);
        return NULL;
    }
    a->started = 1;
    return a;
}

void api_audit_set_retention(struct api_audit *a, int days)
{
    if (a)
        __atomic_store_n(&a->retention_ms, (int64_t)days * 86400000LL, __ATOMIC_RELAXED);
}

void api_audit_stop(struct api_audit *a)
{
    if (!a)
        return;
    if (a->started) {
        pthread_mutex_lock(&a->mu);
        a->stopping = 1;
        pthread_cond_signal(&a->wake);
        pthread_mutex_unlock(&a->mu);
        pthread_join(a->thread, NULL);
    }
    pthread_mutex_destroy(&a->mu);
    pthread_cond_destroy(&a->wake);
    pthread_cond_destroy(&a->room);
    free(a->rows);
    free(a->batch);
    free(a);
}

/* Last segments that name what is done, not to what. */
static const char *const verbs[] = {"batch", "batch-create", "submissions", NULL};

static int is_verb(const char *seg, size_t n)
{
    int i;

    for (i = 0; verbs[i]; i++)
        if (strlen(verbs[i]) == n && strncmp(verbs[i], seg, n) == 0)
            return 1;
    return 0;
}

/* The Run:ai entity a route names: the last fixed segment before its
 * first {param} (else its last fixed segment, or the one before it when
 * that one is a verb), made singular ("/api/v1/org-unit/projects/{id}/
 * resources" -> project, "/api/v1/authorization/access-rules/batch" ->
 * access-rule). */
static void entity_type(const char *pattern, char *out, size_t len)
{
    const char *seg, *last = pattern, *before = pattern, *p;
    size_t n;

    for (p = pattern; *p; p++) {
        if (*p != '/')
            continue;
        if (p[1] == '{')
            break;
        if (p[1]) {
            before = last;
            last = p + 1;
        }
    }
    seg = is_verb(last, strcspn(last, "/")) && !*p ? before : last;
    n = strcspn(seg, "/");
    if (n > 1 && seg[n - 1] == 's' && seg[n - 2] != 's')
        n--;
    snprintf(out, len, "%.*s", (int)n, seg);
}

static const char *action_of(const char *method, api_handler h)
{
    if (h == api_h_token_v1 || h == api_h_token_v2 || h == api_h_app_token)
        return "sign-in";
    if (h == api_h_user_logout)
        return "sign-out";
    if (h == api_h_user_password || h == api_h_me_password)
        return "reset-password";
    if (strcmp(method, "POST") == 0)
        return "create";
    return strcmp(method, "DELETE") == 0 ? "delete" : "update";
}

/* Fills the row of request r, which route rt answered. */
static void note_row(const struct api_req *r, const struct api_route *rt, struct db_audit *x)
{
    const char *brace = strchr(rt->pattern, '{');

    memset(x, 0, sizeof(*x));
    x->at_ms = api_now_ms();
    snprintf(x->subject, sizeof(x->subject), "%s",
             r->who.user.login[0] ? r->who.user.login : r->subject);
    snprintf(x->subject_type, sizeof(x->subject_type), "%s",
             r->who.user.login[0] && r->who.user.kind == DB_SERVICE_ACCOUNT ? "App" : "User");
    snprintf(x->source_ip, sizeof(x->source_ip), "%s", r->remote ? r->remote : "");
    snprintf(x->action, sizeof(x->action), "%s", action_of(r->method, rt->handler));
    snprintf(x->method, sizeof(x->method), "%s", r->method);
    snprintf(x->url, sizeof(x->url), "%s", r->path);
    entity_type(rt->pattern, x->entity_type, sizeof(x->entity_type));
    if (brace && (strncmp(brace, "{name}", 6) == 0 || strncmp(brace, "{key}", 5) == 0))
        snprintf(x->entity_name, sizeof(x->entity_name), "%s", r->params[0]);
    else if (brace)
        snprintf(x->entity_id, sizeof(x->entity_id), "%s", r->params[0]);
    x->status = r->status;
}

int api_audit_mutating(const char *method)
{
    return strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0 ||
           strcmp(method, "PATCH") == 0 || strcmp(method, "DELETE") == 0;
}

void api_audit_note(struct api_req *r, const struct api_route *rt)
{
    struct api_audit *a = r->app->audit;
    struct timespec until;
    struct db_audit x;
    long long dropped = 0;

    if (!a || rt->perm == API_AGENT || !api_audit_mutating(r->method))
        return;
    note_row(r, rt, &x);
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += AUDIT_WAIT_S;
    pthread_mutex_lock(&a->mu);
    while (a->n == AUDIT_QUEUE && /* invariant 1 */
           pthread_cond_timedwait(&a->room, &a->mu, &until) == 0)
        ;
    if (a->n < AUDIT_QUEUE)
        a->rows[a->n++] = x;
    else
        dropped = ++a->dropped;
    if (a->n == AUDIT_QUEUE / 2)
        pthread_cond_signal(&a->wake);
    pthread_mutex_unlock(&a->mu);
    if (dropped)
        fprintf(stderr, "allotd: audit: the store takes no writes: %s %s not recorded (%lld so"
                " far)\n", r->method, r->path, dropped);
}
