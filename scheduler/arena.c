/*
 * arena.c: the memory of one scheduling cycle.
 *
 * Every allocation the core makes during sched_cycle() comes from an arena
 * that the caller owns; the arena hands out pointers from large blocks and
 * frees them all at once. sched_arena_reset() keeps the blocks, so a
 * driver that runs cycle after cycle stops calling malloc once warm.
 *
 * Invariants:
 *   1. Every pointer returned is aligned to 16 bytes; sched__alloc() and
 *      sched__calloc() zero-fill it, the _raw forms do not (Invariant 5).
 *   2. Blocks are never moved: a pointer stays valid until reset or free.
 *   3. `used` counts the bytes handed out since the last reset; `peak` is
 *      the largest `used` ever seen (for the benchmark's memory figure).
 *   4. A block that turned a request away with less than 1/64 of it left
 *      moves from `head` to `full` until the reset, so an allocation walks
 *      the blocks that still have room, not every block of a large cycle
 *      (at most 1/64 of a block is left unused).
 *   5. sched__alloc_raw() / sched__array_raw() hand out memory holding
 *      whatever the block held before (a reset keeps the blocks). Only a
 *      caller that writes every element it will ever read before reading
 *      it may use them, and only where no padding byte is compared or
 *      hashed (struct sched_pod's and struct ss_wl's are only copied);
 *      its call site says why. They are:
 *      sort.c's merge scratch (each merge writes tmp[0..n) before copying
 *      it back), session.c build_workloads()'s pools lists and pods (each
 *      workload's n_pools entries are written by sched_workload_pools(),
 *      its pods by build_workload(); nothing reads past n_pools or n_pods),
 *      the session's ss->wl and ss->pods (build_workload() writes workload
 *      i's before anything reads them), cycle.c's stale_since_ms
 *      (sched__stale_gangs() writes every workload's entry) and the
 *      result's shares (sched__record_shares() writes every field of the
 *      n_queues x n_pools, int64 arrays only; the one past them is never
 *      read). Zeroing all but the last
 *      was 106 of the 199 MB the arena zeroed in a 1,000-node bench run.
 */
#include "sched_int.h"

#include <stdlib.h>
#include <string.h>

#define ARENA_BLOCK (1u << 20)
#define ARENA_ALIGN 16u

struct arena_block {
    struct arena_block *next;
    size_t size;   /* usable bytes after the header */
    size_t off;    /* bytes handed out */
    max_align_t data[];
};

struct sched_arena {
    struct arena_block *head;   /* block in use first, then the spares */
    struct arena_block *full;   /* blocks with (almost) no room left (Invariant 4) */
    size_t used;
    size_t peak;
};

struct sched_arena *sched_arena_new(void)
{
    return calloc(1, sizeof(struct sched_arena));
}

static void blocks_free(struct arena_block *b)
{
    struct arena_block *next;

    for (; b; b = next) {
        next = b->next;
        free(b);
    }
}

void sched_arena_free(struct sched_arena *arena)
{
    if (!arena)
        return;
    blocks_free(arena->head);
    blocks_free(arena->full);
    free(arena);
}

void sched_arena_reset(struct sched_arena *arena)
{
    struct arena_block *b, **tail = &arena->head;

    for (b = arena->head; b; b = b->next) {
        b->off = 0;
        tail = &b->next;
    }
    for (b = arena->full; b; b = b->next)
        b->off = 0;
    *tail = arena->full;   /* the full blocks become spares again */
    arena->full = NULL;
    arena->used = 0;
}

size_t sched_arena_peak(const struct sched_arena *arena)
{
    return arena->peak;
}

size_t sched__arena_used(const struct sched_arena *arena)
{
    return arena->used;
}

static struct arena_block *block_new(size_t want)
{
    size_t size = want > ARENA_BLOCK ? want : ARENA_BLOCK;
    struct arena_block *b = malloc(sizeof(*b) + size);

    if (!b)
        return NULL;
    b->next = NULL;
    b->size = size;
    b->off = 0;
    return b;
}

void *sched__alloc_raw(struct sched_arena *arena, size_t n)
{
    struct arena_block *b, *prev = NULL, *next;
    void *p;

    n = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (n == 0)
        n = ARENA_ALIGN;
    /* First block with room; blocks before it stay as they are, but for
     * those nearly full, which move to `full` (Invariant 4). */
    for (b = arena->head; b; b = next) {
        next = b->next;
        if (b->size - b->off >= n)
            break;
        if (b->size - b->off < b->size / 64) {
            if (prev)
                prev->next = next;
            else
                arena->head = next;
            b->next = arena->full;
            arena->full = b;
            continue;
        }
        prev = b;
    }
    if (!b) {
        b = block_new(n);
        if (!b)
            return NULL;
        if (prev)
            prev->next = b;
        else
            arena->head = b;
    }
    p = (char *)b->data + b->off;
    b->off += n;
    arena->used += n;
    if (arena->used > arena->peak)
        arena->peak = arena->used;
    return p;
}

void *sched__alloc(struct sched_arena *arena, size_t n)
{
    void *p = sched__alloc_raw(arena, n);

    if (p)
        memset(p, 0, n);
    return p;
}

void *sched__calloc(struct sched_arena *arena, size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        return NULL;
    return sched__alloc(arena, count * size);
}

void *sched__array_raw(struct sched_arena *arena, size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        return NULL;
    return sched__alloc_raw(arena, count * size);
}

int sched__ints_room(struct sched_arena *arena, int **arr, int *cap, int n, int need, int least)
{
    int room = *cap > 0 ? *cap : least, *grown;

    if (need <= *cap)
        return SCHED_OK;
    while (room < need)
        room = room > INT32_MAX / 2 ? need : 2 * room;
    grown = sched__calloc(arena, (size_t)room, sizeof(int));
    if (!grown)
        return SCHED_ENOMEM;
    if (n > 0)
        memcpy(grown, *arr, sizeof(int) * (size_t)n);
    *arr = grown;
    *cap = room;
    return SCHED_OK;
}
