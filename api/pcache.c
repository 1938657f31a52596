/*
 * pcache.c: the principal cache: a verified access token's principal (the
 * user row without its secret, and its access rules), so an authenticated
 * request touches neither libjwt nor the database while its token is in
 * the cache.
 *
 * An entry is keyed by the token's exact text (hash, then a full compare)
 * and holds the token's exp and nbf, the user's token version as the
 * database had it, and the cache generation it was loaded under.
 *
 * Invariants:
 *   1. An entry is used only while its generation equals the current one.
 *      Every change to principals, token versions or access rules calls
 *      api_pcache_invalidate() after it commits, so a logout, a password
 *      change, a deleted user or a revoked rule takes effect on the next
 *      request.
 *   2. A hit still checks exp and nbf against the clock, as a miss would.
 *   3. The generation is read before the database, so an entry loaded
 *      while an invalidation ran is already stale when stored.
 *   4. Memory is bounded: a fixed table; a new entry replaces the one in
 *      its slot.
 */
#include "api.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define PC_SLOTS 1024

struct pc_entry {
    char *token;                 /* malloc'd; NULL: empty slot */
    uint64_t hash;
    int64_t exp_s, nbf_s;
    uint64_t generation;
    struct db_user user;         /* secret_hash cleared */
    struct db_rule *rules;       /* malloc'd */
    int n_rules;
};

struct api_pcache {
    pthread_mutex_t mu;
    atomic_ullong generation;
    struct pc_entry slots[PC_SLOTS];
};

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

struct api_pcache *api_pcache_new(void)
{
    struct api_pcache *pc = calloc(1, sizeof(*pc));

    if (!pc)
        return NULL;
    pthread_mutex_init(&pc->mu, NULL);
    atomic_init(&pc->generation, 1);
    return pc;
}

static void entry_clear(struct pc_entry *e)
{
    free(e->token);
    free(e->rules);
    memset(e, 0, sizeof(*e));
}

void api_pcache_free(struct api_pcache *pc)
{
    int i;

    if (!pc)
        return;
    for (i = 0; i < PC_SLOTS; i++)
        entry_clear(&pc->slots[i]);
    pthread_mutex_destroy(&pc->mu);
    free(pc);
}

void api_pcache_invalidate(struct api_pcache *pc)
{
    if (pc)
        atomic_fetch_add(&pc->generation, 1);
}

uint64_t api_pcache_generation(struct api_pcache *pc)
{
    return pc ? atomic_load(&pc->generation) : 0;
}

/* Copies the rules; 0 ok. */
static int copy_rules(const struct db_rule *in, int n, struct db_rule **out)
{
    *out = malloc(sizeof(**out) * ((size_t)n + 1));
    if (!*out)
        return -1;
    if (n)
        memcpy(*out, in, sizeof(**out) * (size_t)n);
    return 0;
}

int api_pcache_get(struct api_pcache *pc, const char *token, int64_t now_s,
                   struct api_principal *out)
{
    uint64_t h = hash(token);
    struct pc_entry *e;
    int rc = -1;

    if (!pc)
        return -1;
    pthread_mutex_lock(&pc->mu);
    e = &pc->slots[h % PC_SLOTS];
    if (!e->token || e->hash != h || strcmp(e->token, token) != 0)
        goto out;
    if (e->generation != atomic_load(&pc->generation) || now_s > e->exp_s ||
        now_s < e->nbf_s) {
        entry_clear(e);
        goto out;
    }
    if (copy_rules(e->rules, e->n_rules, &out->rules) != 0)
        goto out;
    out->user = e->user;
    out->n_rules = e->n_rules;
    rc = 0;
out:
    pthread_mutex_unlock(&pc->mu);
    return rc;
}

void api_pcache_put(struct api_pcache *pc, const char *token, int64_t exp_s, int64_t nbf_s,
                    uint64_t generation, const struct api_principal *p)
{
    uint64_t h = hash(token);
    struct pc_entry next, *e;

    if (!pc)
        return;
    memset(&next, 0, sizeof(next));
    next.token = strdup(token);
    if (!next.token || copy_rules(p->rules, p->n_rules, &next.rules) != 0) {
        entry_clear(&next);
        return;
    }
    next.hash = h;
    next.exp_s = exp_s;
    next.nbf_s = nbf_s;
    next.generation = generation;
    next.user = p->user;
    memset(next.user.secret_hash, 0, sizeof(next.user.secret_hash));
    next.n_rules = p->n_rules;
    pthread_mutex_lock(&pc->mu);
    e = &pc->slots[h % PC_SLOTS];
    entry_clear(e);
    *e = next;
    pthread_mutex_unlock(&pc->mu);
}
