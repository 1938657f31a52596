/*
 * ratelimit.c: a token bucket per client address.
 *
 * Each bucket holds up to 2 x rate tokens and refills at `rate` tokens
 * per second; a request takes `cost` tokens or is refused with the
 * seconds until it could pass. Buckets live in a fixed open table keyed
 * by address; when the table is full the stalest bucket is reused, so
 * memory stays bounded whatever the number of clients.
 *
 * Invariant: tokens never exceed the burst, never go below zero.
 */
#include "api.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define RL_SLOTS 4096
#define RL_PROBE 16

struct bucket {
    char addr[48];
    int64_t last_ms;
    int64_t milli_tokens;
};

struct api_ratelimit {
    pthread_mutex_t mu;
    int rate;
    struct bucket slots[RL_SLOTS];
};

struct api_ratelimit *api_ratelimit_new(int rate_per_s)
{
    struct api_ratelimit *rl = calloc(1, sizeof(*rl));

    if (!rl)
        return NULL;
    pthread_mutex_init(&rl->mu, NULL);
    rl->rate = rate_per_s;
    return rl;
}

void api_ratelimit_free(struct api_ratelimit *rl)
{
    if (!rl)
        return;
    pthread_mutex_destroy(&rl->mu);
    free(rl);
}

static uint32_t hash(const char *s)
{
    uint32_t h = 2166136261u;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static struct bucket *find(struct api_ratelimit *rl, const char *client, int64_t now_ms)
{
    uint32_t h = hash(client);
    struct bucket *stalest = NULL;
    int i;

    for (i = 0; i < RL_PROBE; i++) {
        struct bucket *b = &rl->slots[(h + (uint32_t)i) % RL_SLOTS];
        if (strcmp(b->addr, client) == 0)
            return b;
        if (!stalest || b->last_ms < stalest->last_ms)
            stalest = b;
    }
    strncpy(stalest->addr, client, sizeof(stalest->addr) - 1);
    stalest->addr[sizeof(stalest->addr) - 1] = 0;
    stalest->last_ms = now_ms;
    stalest->milli_tokens = (int64_t)rl->rate * 2000;
    return stalest;
}

int api_ratelimit_take(struct api_ratelimit *rl, const char *client, int cost, int64_t now_ms)
{
    struct bucket *b;
    int64_t burst, need = (int64_t)cost * 1000;
    int wait = 0;

    if (!rl || rl->rate <= 0)
        return 0;
    burst = (int64_t)rl->rate * 2000;
    pthread_mutex_lock(&rl->mu);
    b = find(rl, client ? client : "", now_ms);
    if (now_ms > b->last_ms) {
        b->milli_tokens += (now_ms - b->last_ms) * rl->rate;
        if (b->milli_tokens > burst)
            b->milli_tokens = burst;
        b->last_ms = now_ms;
    }
    if (b->milli_tokens >= need)
        b->milli_tokens -= need;
    else
        wait = (int)((need - b->milli_tokens) / ((int64_t)rl->rate * 1000)) + 1;
    pthread_mutex_unlock(&rl->mu);
    return wait;
}
