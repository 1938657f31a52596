/*
 * mix.c: a window of recent requests, the workload mix a driver passes in
 * struct sched_state for fragmentation placement (sched.h, frag.c).
 *
 * The window remembers the shape of each of the last `cap` GPU pods
 * noted, oldest first in a ring; a shape (requests and node types) is a
 * slot with a count of the pods of the ring that have it.
 *   note:  each pod of the workload enters the ring (the oldest leaves
 *          once it is full); its shape's slot is found, or made, and
 *          counted.
 *   get:   the mix last computed, unless the pods noted since reach
 *          1/SCHED_MIX_STEP of the pods in the window (at least one): then
 *          it is computed again: the live slots by count, ties by the
 *          order their shape first came (of the pods still in the window),
 *          the first SCHED_MIX_MAX.
 * The mix moves in steps so that a driver's snapshots carry the same mix
 * from one submission to the next: a pool placing by fragmentation
 * measures with the mix, and the incremental path (memo.c) keeps its
 * session only while the mix is the one it measured with. Between steps
 * at most 2 in SCHED_MIX_STEP of the weights have moved (a pod noted
 * adds one to a shape and takes one from the oldest's).
 *
 * Invariants:
 *   1. A slot is live (count > 0) or pinned (an entry of the mix given
 *      points at its shape) or free; only free slots are cleared or
 *      reused, so the mix given stays valid until it is computed again.
 *   2. The window owns the node-type strings of its shapes, so the mix
 *      outlives the workloads it came from. It does not keep required
 *      affinity.
 *
 * This is the drivers' side of the contract (allotd's scheduler loop, the
 * simulated world, trace replay): pure and deterministic, but it
 * allocates with malloc, unlike a cycle, and its state lives between
 * cycles.
 */
#include "sched_int.h"

#include <stdlib.h>
#include <string.h>

struct mix_slot {
    struct sched_workload shape;   /* requests and node_types (owned); the rest zero */
    char **types;                  /* owned copies; shape.node_types points here */
    int64_t count;                 /* pods in the ring */
    uint64_t since;                /* note number that made it live */
    int pinned;                    /* the mix given points at it (Invariant 1) */
};

struct sched_mix_window {
    int cap;
    int *ring;                     /* [cap] slot of each pod, oldest at head */
    int head, n;
    struct mix_slot *slots;
    int n_slots, cap_slots;
    uint64_t notes;
    struct sched_mix_entry out[SCHED_MIX_MAX];   /* the mix given */
    int out_slot[SCHED_MIX_MAX];                 /* the slot of each entry */
    int n_out;
    int given;                                   /* out[] has been computed */
    int64_t since_given;                         /* pods noted since */
};

struct sched_mix_window *sched_mix_window_new(int pods)
{
    struct sched_mix_window *win = calloc(1, sizeof(*win));

    if (!win || pods < 1)
        goto out_free;
    win->cap = pods;
    win->ring = calloc((size_t)pods, sizeof(int));
    if (!win->ring)
        goto out_free;
    return win;
out_free:
    sched_mix_window_free(win);
    return NULL;
}

static void slot_clear(struct mix_slot *s)
{
    int i;

    for (i = 0; s->types && i < s->shape.n_node_types; i++)
        free(s->types[i]);
    free(s->types);
    memset(s, 0, sizeof(*s));
}

void sched_mix_window_free(struct sched_mix_window *win)
{
    int i;

    if (!win)
        return;
    for (i = 0; i < win->n_slots; i++)
        slot_clear(&win->slots[i]);
    free(win->slots);
    free(win->ring);
    free(win);
}

/* Slot src into the cleared slot dst, with copies of its node types; -1:
 * out of memory (dst is left cleared). */
static int slot_copy(const struct mix_slot *src, struct mix_slot *dst)
{
    int n = src->shape.n_node_types;

    *dst = *src;
    dst->types = NULL;
    dst->shape.node_types = NULL;
    dst->shape.n_node_types = 0;
    if ((src->count <= 0 && !src->pinned) || n == 0)
        return 0;
    if (!(dst->types = calloc((size_t)n, sizeof(char *))))
        return -1;
    for (dst->shape.n_node_types = 0; dst->shape.n_node_types < n; dst->shape.n_node_types++)
        if (!(dst->types[dst->shape.n_node_types] = strdup(src->types[dst->shape.n_node_types]))) {
            slot_clear(dst);
            return -1;
        }
    dst->shape.node_types = (const char *const *)dst->types;
    return 0;
}

struct sched_mix_window *sched_mix_window_copy(const struct sched_mix_window *src)
{
    struct sched_mix_window *win = sched_mix_window_new(src->cap);
    int k;

    if (!win)
        return NULL;
    memcpy(win->ring, src->ring, (size_t)src->cap * sizeof(int));
    win->head = src->head;
    win->n = src->n;
    win->notes = src->notes;
    if (src->cap_slots > 0) {
        win->slots = calloc((size_t)src->cap_slots, sizeof(*win->slots));
        if (!win->slots)
            goto out_free;
        win->cap_slots = src->cap_slots;
    }
    for (k = 0; k < src->n_slots; k++, win->n_slots++)
        if (slot_copy(&src->slots[k], &win->slots[k]) != 0)
            goto out_free;
    win->n_out = src->n_out;
    win->given = src->given;
    win->since_given = src->since_given;
    for (k = 0; k < src->n_out; k++) {
        win->out_slot[k] = src->out_slot[k];
        win->out[k].shape = win->slots[src->out_slot[k]].shape;
        win->out[k].weight = src->out[k].weight;
    }
    return win;
out_free:
    sched_mix_window_free(win);
    return NULL;
}

/* The node types a workload asks, as one list (node_type alone counts as a list of one). */
static int types_of(const struct sched_workload *w, const char *const **types)
{
    if (w->n_node_types > 0) {
        *types = w->node_types;
        return w->n_node_types;
    }
    *types = w->node_type ? &w->node_type : NULL;
    return w->node_type != NULL;
}

static int same_shape(const struct mix_slot *s, const struct sched_workload *w)
{
    const struct sched_workload *a = &s->shape;
    const char *const *types;
    int i, n = types_of(w, &types);

    if (!sched__same_requests(a, w) || a->n_node_types != n)
        return 0;
    for (i = 0; i < n; i++)
        if (strcmp(a->node_types[i], types[i]) != 0)
            return 0;
    return 1;
}

/* A free slot (grown if needed) holding w's shape; -1: out of memory. */
static int slot_new(struct sched_mix_window *win, const struct sched_workload *w)
{
    const char *const *types;
    struct mix_slot *s;
    int i, k, n = types_of(w, &types);

    for (k = 0; k < win->n_slots && (win->slots[k].count > 0 || win->slots[k].pinned); k++)
        ;
    if (k == win->cap_slots) {
        int cap = win->cap_slots ? 2 * win->cap_slots : 16;
        struct mix_slot *grown = realloc(win->slots, (size_t)cap * sizeof(*grown));
        if (!grown)
            return -1;
        memset(grown + win->cap_slots, 0, (size_t)(cap - win->cap_slots) * sizeof(*grown));
        win->slots = grown;
        win->cap_slots = cap;
    }
    s = &win->slots[k];
    slot_clear(s);
    if (n > 0 && !(s->types = calloc((size_t)n, sizeof(char *))))
        return -1;
    for (i = 0; i < n; i++)
        if (!(s->types[i] = strdup(types[i]))) {
            s->shape.n_node_types = i;
            slot_clear(s);
            return -1;
        }
    sched__copy_requests(&s->shape, w);
    s->shape.node_types = (const char *const *)s->types;
    s->shape.n_node_types = n;
    s->since = win->notes;
    win->n_slots = k + 1 > win->n_slots ? k + 1 : win->n_slots;
    return k;
}

int sched_mix_window_note(struct sched_mix_window *win, const struct sched_workload *w)
{
    int k, pod;

    if (w->gpu_devices == 0 && w->gpu_portion == 0 && w->gpu_memory_mib == 0)
        return SCHED_OK;   /* asks no GPU */
    win->notes++;
    for (k = 0; k < win->n_slots && !(win->slots[k].count > 0 && same_shape(&win->slots[k], w));
         k++)
        ;
    if (k == win->n_slots && (k = slot_new(win, w)) < 0)
        return SCHED_ENOMEM;
    for (pod = 0; pod < w->n_pods; pod++) {
        if (win->n == win->cap) {   /* the oldest pod leaves */
            struct mix_slot *old = &win->slots[win->ring[win->head]];
            if (--old->count == 0 && old != &win->slots[k] && !old->pinned)
                slot_clear(old);
            win->head = (win->head + 1) % win->cap;
            win->n--;
        }
        win->ring[(win->head + win->n) % win->cap] = k;
        win->n++;
        win->slots[k].count++;
        win->since_given++;
    }
    return SCHED_OK;
}

/* 1 if slot a goes before slot b in the mix. */
static int slot_before(const struct mix_slot *a, const struct mix_slot *b)
{
    if (a->count != b->count)
        return a->count > b->count;
    return a->since < b->since;
}

/* Whether the mix given is still the one to give: pods noted since it was
 * computed stay under 1/SCHED_MIX_STEP of those in the window. */
static int given_holds(const struct sched_mix_window *win)
{
    int64_t in_window = win->n > 0 ? win->n : 1;

    return win->given && win->since_given * SCHED_MIX_STEP < in_window;
}

/* Unpins the slots of the mix given, clearing those that are no longer
 * live (Invariant 1). */
static void unpin_given(struct sched_mix_window *win)
{
    int i;

    for (i = 0; i < win->n_out; i++) {
        struct mix_slot *s = &win->slots[win->out_slot[i]];
        s->pinned = 0;
        if (s->count <= 0)
            slot_clear(s);
    }
    win->n_out = 0;
}

int sched_mix_window_get(struct sched_mix_window *win, const struct sched_mix_entry **out)
{
    int top[SCHED_MIX_MAX];
    int n = 0, k, i;

    *out = win->out;
    if (given_holds(win))
        return win->n_out;
    unpin_given(win);

    /* top[0..n): the best slots so far, best first (insertion; the last
     * drops out when a better one comes and the list is full) */
    for (k = 0; k < win->n_slots; k++) {
        if (win->slots[k].count <= 0 ||
            (n == SCHED_MIX_MAX && !slot_before(&win->slots[k], &win->slots[top[n - 1]])))
            continue;
        i = n < SCHED_MIX_MAX ? n++ : SCHED_MIX_MAX - 1;
        for (; i > 0 && slot_before(&win->slots[k], &win->slots[top[i - 1]]); i--)
            top[i] = top[i - 1];
        top[i] = k;
    }
    for (i = 0; i < n; i++) {
        win->slots[top[i]].pinned = 1;
        win->out_slot[i] = top[i];
        win->out[i].shape = win->slots[top[i]].shape;
        win->out[i].weight = win->slots[top[i]].count < SCHED_MIX_MAX_WEIGHT
                                 ? win->slots[top[i]].count
                                 : SCHED_MIX_MAX_WEIGHT;
    }
    win->n_out = n;
    win->given = 1;
    win->since_given = 0;
    return n;
}
