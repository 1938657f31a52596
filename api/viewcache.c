/*
 * viewcache.c: the rendered generic views of workloads (the JSON a list
 * of workloads writes for each row), kept by the row they were rendered
 * from, so a list whose rows did not change copies their text instead of
 * writing about 100 values a row.
 *
 * Design:
 *   1. A view is a function of the row (struct db_workload, as the list
 *      reads it) and of the clock, which moves one field only
 *      (totalRunningTimeSeconds). An entry keeps the text before that
 *      field and the text after it; the caller gives the field's key and
 *      value, written fresh between the two.
 *   2. An entry is found by the row's seq (one slot per seq modulo
 *      VC_SLOTS) and used only if the row read now equals, byte for byte,
 *      the row it was rendered from: the struct up to its spec (the rows
 *      come from one reader, which zeroes the struct before filling it,
 *      so equal rows are equal bytes) and the spec's text. Nothing has to
 *      say that a row changed: a change by the API, the scheduler (phase,
 *      pods), an agent, another replica on the same database, or a rename
 *      of the workload's project or department reads differently and
 *      misses; the next rendering replaces the entry.
 *   3. A slot has its own mutex: a hit copies the text into the reply
 *      under it; a put builds its entry outside it and swaps it in.
 *
 * Invariants:
 *   1. An entry is used only for a row equal in every byte, spec included,
 *      to the row it was rendered from (invariant of correctness: nothing
 *      else decides whether a kept view is current).
 *   2. Memory is bounded: at most VC_SLOTS entries, each at most
 *      VC_ENTRY_MAX bytes (a larger view is not kept).
 *   3. A NULL cache keeps nothing: every get misses, every put is a no-op.
 */
#include "api.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define VC_SLOTS 1024                /* a power of two: seq & (VC_SLOTS - 1) */
#define VC_ENTRY_MAX (16 * 1024)     /* the largest entry kept, row and text */

/* The bytes of a row compared: everything before its spec pointer (the
 * spec's text is compared on its own). The spec must stay the last
 * member, so that no field escapes the comparison. */
#define VC_ROW_BYTES offsetof(struct db_workload, spec)
_Static_assert(offsetof(struct db_workload, spec) + sizeof(char *) == sizeof(struct db_workload),
               "the spec is the last member of struct db_workload (viewcache.c compares the rest)");

/* One allocation: the row's bytes, the spec (with its NUL), the text
 * before the fresh field, the text after it. */
struct vc_entry {
    size_t spec_len, before_len, after_len;
    char data[];
};

struct vc_slot {
    pthread_mutex_t mu;
    struct vc_entry *e;              /* NULL: empty */
};

struct api_viewcache {
    struct vc_slot slots[VC_SLOTS];
};

struct api_viewcache *api_viewcache_new(void)
{
    struct api_viewcache *vc = calloc(1, sizeof(*vc));
    int i;

    if (!vc)
        return NULL;
    for (i = 0; i < VC_SLOTS; i++)
        pthread_mutex_init(&vc->slots[i].mu, NULL);
    return vc;
}

void api_viewcache_free(struct api_viewcache *vc)
{
    int i;

    if (!vc)
        return;
    for (i = 0; i < VC_SLOTS; i++) {
        free(vc->slots[i].e);
        pthread_mutex_destroy(&vc->slots[i].mu);
    }
    free(vc);
}

static struct vc_slot *slot_of(struct api_viewcache *vc, const struct db_workload *w)
{
    return &vc->slots[(uint64_t)w->seq & (VC_SLOTS - 1)];
}

/* Is e the entry of row w (invariant 1)? spec_len: strlen of w's spec. */
static int same_row(const struct vc_entry *e, const struct db_workload *w, size_t spec_len)
{
    return e->spec_len == spec_len && memcmp(e->data, w, VC_ROW_BYTES) == 0 &&
           memcmp(e->data + VC_ROW_BYTES, w->spec ? w->spec : "", spec_len) == 0;
}

int api_viewcache_get(struct api_viewcache *vc, const struct db_workload *w, struct jw *j,
                      const char *fresh_key, int64_t fresh_value)
{
    struct vc_slot *s;
    const char *text;
    size_t spec_len;
    int hit = 0;

    if (!vc)
        return 0;
    s = slot_of(vc, w);
    spec_len = w->spec ? strlen(w->spec) : 0;
    pthread_mutex_lock(&s->mu);
    if (s->e && same_row(s->e, w, spec_len)) {
        text = s->e->data + VC_ROW_BYTES + spec_len + 1;
        jw_raw(j, text, s->e->before_len);
        j->need_comma = 1;
        jw_int(j, fresh_key, fresh_value);
        jw_raw(j, text + s->e->before_len, s->e->after_len);
        j->need_comma = 1;
        hit = 1;
    }
    pthread_mutex_unlock(&s->mu);
    return hit;
}

void api_viewcache_put(struct api_viewcache *vc, const struct db_workload *w, const char *before,
                       size_t before_len, const char *after, size_t after_len)
{
    struct vc_entry *e, *old;
    struct vc_slot *s;
    size_t spec_len, size;
    char *p;

    if (!vc)
        return;
    spec_len = w->spec ? strlen(w->spec) : 0;
    size = sizeof(*e) + VC_ROW_BYTES + spec_len + 1 + before_len + after_len;
    if (size > VC_ENTRY_MAX || !(e = malloc(size)))
        return; /* not kept: the next list renders it again */
    e->spec_len = spec_len;
    e->before_len = before_len;
    e->after_len = after_len;
    p = e->data;
    memcpy(p, w, VC_ROW_BYTES);
    p += VC_ROW_BYTES;
    memcpy(p, w->spec ? w->spec : "", spec_len + 1);
    p += spec_len + 1;
    memcpy(p, before, before_len);
    memcpy(p + before_len, after, after_len);
    s = slot_of(vc, w);
    pthread_mutex_lock(&s->mu);
    old = s->e;
    s->e = e;
    pthread_mutex_unlock(&s->mu);
    free(old);
}
