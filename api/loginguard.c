/*
 * loginguard.c: what slows password guessing whatever addresses it comes
 * from, and keeps secret checks from starving other clients.
 *
 * 1. Per login name (known or not: both answer alike), failed grants in a
 *    row earn a wait. The first API_LG_FREE_FAILURES cost nothing; after
 *    failure k past them the name waits 2^(k-1) seconds, at most
 *    API_LG_MAX_WAIT_S. While it waits, a grant for that name is refused (429,
 *    Retry-After) before any hash runs, the right secret included; a
 *    grant that succeeds clears the name.
 * 2. At most `max_hashes` secret checks (yescrypt, tens of milliseconds of
 *    CPU each) run at once. A grant that finds none free within
 *    LG_HASH_WAIT_MS is refused (503, Retry-After: 1), so guesses never
 *    hold every worker thread and core.
 * Names live in a fixed keyed table (keytable.c); a new name takes the
 * stalest entry of its probe, so memory stays bounded.
 *
 * Invariant: 0 <= hashes in use <= max_hashes.
 */
#include "api.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LG_SLOTS 4096
#define LG_HASH_WAIT_MS 5000

struct name_entry {
    struct api_kt_head head; /* the name; last_ms: its last grant */
    int failures;            /* in a row */
    int64_t until_ms;        /* refused until then */
};

struct api_loginguard {
    pthread_mutex_t mu;
    pthread_cond_t hash_free;
    int max_hashes, hashes;
    struct api_keytable names;
};

struct api_loginguard *api_loginguard_new(int max_hashes)
{
    struct api_loginguard *g = calloc(1, sizeof(*g));

    if (!g)
        return NULL;
    if (api_keytable_init(&g->names, LG_SLOTS, sizeof(struct name_entry)) != 0) {
        free(g);
        return NULL;
    }
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->hash_free, NULL);
    g->max_hashes = max_hashes > 0 ? max_hashes : 1;
    return g;
}

void api_loginguard_free(struct api_loginguard *g)
{
    if (!g)
        return;
    pthread_cond_destroy(&g->hash_free);
    pthread_mutex_destroy(&g->mu);
    api_keytable_fini(&g->names);
    free(g);
}

/* The entry of a name, a fresh one (the stalest of its probe) if none. */
static struct name_entry *find(struct api_loginguard *g, const char *name, int64_t now_ms)
{
    int fresh;

    return api_keytable_find(&g->names, name, now_ms, &fresh);
}

int api_loginguard_wait_s(struct api_loginguard *g, const char *name, int64_t now_ms)
{
    struct name_entry *e;
    int wait = 0;

    if (!g)
        return 0;
    pthread_mutex_lock(&g->mu);
    e = find(g, name, now_ms);
    if (e->until_ms > now_ms)
        wait = (int)((e->until_ms - now_ms + 999) / 1000);
    pthread_mutex_unlock(&g->mu);
    return wait;
}

/* The wait after the k-th failure past the free ones: 2^(k-1) s, capped. */
static int wait_s(int k)
{
    int s = 1;

    while (--k > 0 && s < API_LG_MAX_WAIT_S)
        s *= 2;
    return s < API_LG_MAX_WAIT_S ? s : API_LG_MAX_WAIT_S;
}

void api_loginguard_result(struct api_loginguard *g, const char *name, int ok, int64_t now_ms)
{
    struct name_entry *e;
    int past;

    if (!g)
        return;
    pthread_mutex_lock(&g->mu);
    e = find(g, name, now_ms);
    e->head.last_ms = now_ms;
    if (ok) {
        e->failures = 0;
        e->until_ms = 0;
    } else {
        if (e->failures < API_LG_FREE_FAILURES + 64)
            e->failures++;
        past = e->failures - API_LG_FREE_FAILURES;
        if (past > 0)
            e->until_ms = now_ms + 1000LL * wait_s(past);
    }
    pthread_mutex_unlock(&g->mu);
}

int api_loginguard_hash_begin(struct api_loginguard *g)
{
    struct timespec deadline;
    int rc = 0;

    if (!g)
        return 0;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += LG_HASH_WAIT_MS / 1000;
    pthread_mutex_lock(&g->mu);
    while (g->hashes >= g->max_hashes && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&g->hash_free, &g->mu, &deadline);
    if (g->hashes < g->max_hashes) {
        g->hashes++;
        rc = 0;
    } else {
        rc = -1;
    }
    pthread_mutex_unlock(&g->mu);
    return rc;
}

void api_loginguard_hash_end(struct api_loginguard *g)
{
    if (!g)
        return;
    pthread_mutex_lock(&g->mu);
    if (g->hashes > 0)
        g->hashes--;
    pthread_cond_signal(&g->hash_free);
    pthread_mutex_unlock(&g->mu);
}
