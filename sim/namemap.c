/*
 * namemap.c: the string -> int map of namemap.h.
 *
 * Invariants:
 *   1. cap is 0 or a power of two, and n <= cap / 2 after every put.
 *   2. A key sits in the run of occupied slots that starts at
 *      hash(key) & (cap - 1); a lookup stops at the first empty slot.
 */
#include "namemap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* FNV-1a, 64 bits. */
static uint64_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ULL;

    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

void namemap_init(struct namemap *m)
{
    m->keys = NULL;
    m->values = NULL;
    m->cap = 0;
    m->n = 0;
}

void namemap_free(struct namemap *m)
{
    free(m->keys);
    free(m->values);
    namemap_init(m);
}

/* The slot holding key, or the empty slot where it would go. */
static size_t find_slot(const struct namemap *m, const char *key)
{
    size_t mask = m->cap - 1;
    size_t i = (size_t)hash_name(key) & mask;

    while (m->keys[i] && strcmp(m->keys[i], key) != 0)
        i = (i + 1) & mask;
    return i;
}

static int grow(struct namemap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 16;
    struct namemap bigger;
    size_t i, slot;

    bigger.keys = calloc(cap, sizeof(*bigger.keys));
    bigger.values = calloc(cap, sizeof(*bigger.values));
    bigger.cap = cap;
    bigger.n = m->n;
    if (!bigger.keys || !bigger.values) {
        free(bigger.keys);
        free(bigger.values);
        return -1;
    }
    for (i = 0; i < m->cap; i++) {
        if (!m->keys[i])
            continue;
        slot = find_slot(&bigger, m->keys[i]);
        bigger.keys[slot] = m->keys[i];
        bigger.values[slot] = m->values[i];
    }
    free(m->keys);
    free(m->values);
    *m = bigger;
    return 0;
}

int namemap_put(struct namemap *m, const char *key, int value)
{
    size_t slot;

    if ((m->n + 1) * 2 > m->cap && grow(m) != 0)
        return -1;
    slot = find_slot(m, key);
    if (!m->keys[slot]) {
        m->keys[slot] = key;
        m->n++;
    }
    m->values[slot] = value;
    return 0;
}

int namemap_get(const struct namemap *m, const char *key, int *value)
{
    size_t slot;

    if (m->cap == 0)
        return 0;
    slot = find_slot(m, key);
    if (!m->keys[slot])
        return 0;
    *value = m->values[slot];
    return 1;
}
