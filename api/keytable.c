/*
 * keytable.c: a fixed open table of entries keyed by a string (a client
 * address, a login name), behind the rate limiter (ratelimit.c) and the
 * guard on password guessing (loginguard.c).
 *
 * A key hashes (FNV-1a) to a slot and is looked for in the
 * API_KT_PROBE slots from there; a key not found takes the stalest entry
 * of its probe, cleared. Memory is fixed at creation whatever the number
 * of keys: a flood of new keys evicts the stalest entries, never grows
 * the table.
 *
 * Invariants:
 *   1. Every entry starts with struct api_kt_head; an entry whose
 *      last_ms is 0 is free.
 *   2. The table does no locking: its owner holds its own lock around
 *      every call.
 */
#include "api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define API_KT_PROBE 16

int api_keytable_init(struct api_keytable *t, size_t n_slots, size_t entry_size)
{
    t->slots = calloc(n_slots, entry_size);
    t->n_slots = t->slots ? n_slots : 0;
    t->entry_size = entry_size;
    return t->slots ? 0 : -1;
}

void api_keytable_fini(struct api_keytable *t)
{
    free(t->slots);
    t->slots = NULL;
    t->n_slots = 0;
}

static uint32_t fnv1a(const char *s)
{
    uint32_t h = 2166136261u;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

void *api_keytable_find(struct api_keytable *t, const char *key, int64_t now_ms, int *fresh)
{
    uint32_t h = fnv1a(key);
    struct api_kt_head *e, *stalest = NULL;
    int i;

    for (i = 0; i < API_KT_PROBE; i++) {
        e = (struct api_kt_head *)(t->slots + ((h + (uint32_t)i) % t->n_slots) * t->entry_size);
        if (e->last_ms && strcmp(e->key, key) == 0) {
            *fresh = 0;
            return e;
        }
        if (!stalest || e->last_ms < stalest->last_ms)
            stalest = e;
    }
    memset(stalest, 0, t->entry_size);
    snprintf(stalest->key, sizeof(stalest->key), "%s", key);
    stalest->last_ms = now_ms > 0 ? now_ms : 1;
    *fresh = 1;
    return stalest;
}
