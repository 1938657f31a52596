/*
 * loginguard.c: what slows password guessing whatever addresses it comes
 * from, and keeps secret checks from starving other clients.
 *
 * 1. Per login name and client address together (known names or not:
 *    both answer alike), failed grants in a row earn a wait. The first
 *    API_LG_FREE_FAILURES cost nothing; after failure k past them the pair
 *    waits 2^(k-1) seconds, at most API_LG_MAX_WAIT_S. While it waits, a
 *    grant for that name from that client is refused (429, Retry-After)
 *    before any hash runs, the right secret included; a grant that
 *    succeeds clears the pair. The wait is the pair's, not the name's:
 *    guesses at `admin` from one address never lock `admin` out for the
 *    other clients (keyed by the name alone, one wrong password per wait
 *    would do that).
 * 2. A budget of failed sign-ins for the whole server: a token bucket of
 *    API_LG_GLOBAL_PER_S failures a second, API_LG_GLOBAL_BURST at most.
 *    While it is empty, a client that failed a grant (any name) within
 *    the last API_LG_MAX_WAIT_S seconds, and has not signed in since, is
 *    refused before any hash runs (429, Retry-After); a client that has
 *    not failed still gets its secret checked. So guesses spread over many
 *    names and many addresses run at most the budget's hashes a second,
 *    plus one per new address, and other clients keep their latency.
 * 3. At most `max_hashes` secret checks (yescrypt, tens of milliseconds of
 *    CPU each) run at once. A grant that finds none free within
 *    LG_HASH_WAIT_MS is refused (503, Retry-After: 1), so guesses never
 *    hold every worker thread and core.
 * Pairs and clients live in fixed keyed tables (keytable.c); a new key
 * takes the stalest entry of its probe, so memory stays bounded.
 *
 * Invariants: 0 <= hashes in use <= max_hashes;
 *             0 <= the budget <= API_LG_GLOBAL_BURST (in thousandths).
 */
#include "api.h"
#include "agent_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LG_SLOTS 4096
#define LG_HASH_WAIT_MS 5000

struct pair_entry {
    struct api_kt_head head; /* sha256(client, name); last_ms: its last grant */
    int failures;            /* in a row */
    int64_t until_ms;        /* refused until then */
};

struct client_entry {
    struct api_kt_head head; /* the client's address */
    int64_t failed_ms;       /* its last failed grant; 0: none since it signed in */
};

struct api_loginguard {
    pthread_mutex_t mu;
    pthread_cond_t hash_free;
    int max_hashes, hashes;
    int64_t budget_milli, budget_ms; /* the failure budget and when it was filled */
    struct api_keytable pairs, clients;
};

struct api_loginguard *api_loginguard_new(int max_hashes)
{
    struct api_loginguard *g = calloc(1, sizeof(*g));

    if (!g)
        return NULL;
    if (api_keytable_init(&g->pairs, LG_SLOTS, sizeof(struct pair_entry)) != 0) {
        free(g);
        return NULL;
    }
    if (api_keytable_init(&g->clients, LG_SLOTS, sizeof(struct client_entry)) != 0) {
        api_keytable_fini(&g->pairs);
        free(g);
        return NULL;
    }
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->hash_free, NULL);
    g->max_hashes = max_hashes > 0 ? max_hashes : 1;
    g->budget_milli = API_LG_GLOBAL_BURST * 1000LL;
    return g;
}

void api_loginguard_free(struct api_loginguard *g)
{
    if (!g)
        return;
    pthread_cond_destroy(&g->hash_free);
    pthread_mutex_destroy(&g->mu);
    api_keytable_fini(&g->pairs);
    api_keytable_fini(&g->clients);
    free(g);
}

/* The entry of a name from a client, a fresh one (the stalest of its
 * probe) if none. The key is a hash: a name and an address together may
 * not fit a table key. */
static struct pair_entry *find_pair(struct api_loginguard *g, const char *name,
                                    const char *client, int64_t now_ms)
{
    char buf[DB_NAME_LEN + 80], key[65];
    int fresh, n;

    n = snprintf(buf, sizeof(buf), "%s\n%s", client ? client : "", name ? name : "");
    api_sha256_hex(buf, n < (int)sizeof(buf) ? (size_t)n : sizeof(buf) - 1, key);
    return api_keytable_find(&g->pairs, key, now_ms, &fresh);
}

static struct client_entry *find_client(struct api_loginguard *g, const char *client,
                                        int64_t now_ms)
{
    int fresh;

    return api_keytable_find(&g->clients, client ? client : "", now_ms, &fresh);
}

/* The budget refilled to now_ms. */
static void budget_fill(struct api_loginguard *g, int64_t now_ms)
{
    if (now_ms > g->budget_ms) {
        g->budget_milli += (now_ms - g->budget_ms) * API_LG_GLOBAL_PER_S;
        if (g->budget_milli > API_LG_GLOBAL_BURST * 1000LL)
            g->budget_milli = API_LG_GLOBAL_BURST * 1000LL;
        g->budget_ms = now_ms;
    }
}

int api_loginguard_wait_s(struct api_loginguard *g, const char *name, const char *client,
                          int64_t now_ms)
{
    struct pair_entry *e;
    struct client_entry *c;
    int wait = 0;

    if (!g)
        return 0;
    pthread_mutex_lock(&g->mu);
    e = find_pair(g, name, client, now_ms);
    if (e->until_ms > now_ms)
        wait = (int)((e->until_ms - now_ms + 999) / 1000);
    budget_fill(g, now_ms);
    c = find_client(g, client, now_ms);
    if (wait == 0 && g->budget_milli < 1000 && c->failed_ms &&
        now_ms - c->failed_ms < API_LG_MAX_WAIT_S * 1000LL) /* until one failure fits */
        wait = (int)(((1000 - g->budget_milli) / API_LG_GLOBAL_PER_S + 999) / 1000);
    if (wait == 0 && g->budget_milli < 1000 && c->failed_ms &&
        now_ms - c->failed_ms < API_LG_MAX_WAIT_S * 1000LL)
        wait = 1;
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

void api_loginguard_result(struct api_loginguard *g, const char *name, const char *client,
                           int ok, int64_t now_ms)
{
    struct pair_entry *e;
    struct client_entry *c;
    int past;

    if (!g)
        return;
    pthread_mutex_lock(&g->mu);
    e = find_pair(g, name, client, now_ms);
    e->head.last_ms = now_ms;
    c = find_client(g, client, now_ms);
    c->head.last_ms = now_ms;
    if (ok) {
        e->failures = 0;
        e->until_ms = 0;
        c->failed_ms = 0;
    } else {
        if (e->failures < API_LG_FREE_FAILURES + 64)
            e->failures++;
        past = e->failures - API_LG_FREE_FAILURES;
        if (past > 0)
            e->until_ms = now_ms + 1000LL * wait_s(past);
        c->failed_ms = now_ms;
        budget_fill(g, now_ms);
        g->budget_milli = g->budget_milli >= 1000 ? g->budget_milli - 1000 : 0;
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
