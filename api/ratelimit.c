/*
 * ratelimit.c: a token bucket per key: per client address before a
 * request is authenticated, per principal after (http.c).
 *
 * Each bucket holds up to 2 x rate tokens and refills at `rate` tokens
 * per second; a request takes `cost` tokens or is refused with the
 * seconds until it could pass. Buckets live in a fixed keyed table
 * (keytable.c): a new key takes the stalest bucket of its probe, full,
 * so memory stays bounded whatever the number of clients.
 *
 * Invariant: tokens never exceed the burst, never go below zero.
 */
#include "api.h"

#include <pthread.h>
#include <stdlib.h>

#define RL_SLOTS 4096

struct bucket {
    struct api_kt_head head;  /* head.last_ms: when it was last filled */
    int64_t milli_tokens;
};

struct api_ratelimit {
    pthread_mutex_t mu;
    int rate;
    struct api_keytable buckets;
};

struct api_ratelimit *api_ratelimit_new(int rate_per_s)
{
    struct api_ratelimit *rl = calloc(1, sizeof(*rl));

    if (!rl)
        return NULL;
    if (api_keytable_init(&rl->buckets, RL_SLOTS, sizeof(struct bucket)) != 0) {
        free(rl);
        return NULL;
    }
    pthread_mutex_init(&rl->mu, NULL);
    rl->rate = rate_per_s;
    return rl;
}

void api_ratelimit_free(struct api_ratelimit *rl)
{
    if (!rl)
        return;
    pthread_mutex_destroy(&rl->mu);
    api_keytable_fini(&rl->buckets);
    free(rl);
}

int api_ratelimit_take(struct api_ratelimit *rl, const char *key, int cost, int64_t now_ms)
{
    struct bucket *b;
    int64_t burst, need = (int64_t)cost * 1000;
    int wait = 0, fresh;

    if (!rl || rl->rate <= 0)
        return 0;
    burst = (int64_t)rl->rate * 2000;
    pthread_mutex_lock(&rl->mu);
    b = api_keytable_find(&rl->buckets, key ? key : "", now_ms, &fresh);
    if (fresh)
        b->milli_tokens = burst;
    if (now_ms > b->head.last_ms) {
        b->milli_tokens += (now_ms - b->head.last_ms) * rl->rate;
        if (b->milli_tokens > burst)
            b->milli_tokens = burst;
        b->head.last_ms = now_ms;
    }
    if (b->milli_tokens >= need)
        b->milli_tokens -= need;
    else
        wait = (int)((need - b->milli_tokens) / ((int64_t)rl->rate * 1000)) + 1;
    pthread_mutex_unlock(&rl->mu);
    return wait;
}
