/*
 * expect.c: the checks of an `expect` step (FORMAT.md, EXPECTATION).
 *
 *   phases         sched_phase_name() of the workload
 *   nodes          the multiset of nodes its placed pods are on
 *   evicted,       whether an EVICT (or MOVE) decision named it since the
 *   notEvicted,    previous expect step
 *   moved
 *   allocatedGpus  from placed pods; a department sums its projects
 *   fairShareGpus  the last pass's fair[SCHED_GPU]
 *   pendingReason  the last pass's pending entry, by sched_reason_name()
 *   domains        the values of a label on the nodes of its placed pods:
 *                  one given value, or how many distinct ones (a node
 *                  without the label fails it; kubernetes.io/hostname is
 *                  the node's name when it has no such label)
 *
 * GPU amounts match within 0.01 GPU (10 milli-GPU). A workload deleted
 * by an earlier step fails every check that names it.
 */
#include "expect.h"
#include "grow.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GPU_TOLERANCE 10   /* milli-GPU */

/* ---- Failures ---- */

void failures_init(struct failures *f)
{
    f->items = NULL;
    f->n = 0;
    f->cap = 0;
}

void failures_clear(struct failures *f)
{
    int i;

    for (i = 0; i < f->n; i++)
        free(f->items[i]);
    f->n = 0;
}

void failures_free(struct failures *f)
{
    failures_clear(f);
    free(f->items);
    failures_init(f);
}

static int failures_add(struct failures *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int failures_add(struct failures *f, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (sim_grow(&f->items, f->n, &f->cap, sizeof(*f->items), 8) != 0)
        return -1;
    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    f->items[f->n] = malloc((size_t)n + 1);
    if (!f->items[f->n])
        return -1;
    va_start(ap, fmt);
    vsnprintf(f->items[f->n], (size_t)n + 1, fmt, ap);
    va_end(ap);
    f->n++;
    return 0;
}

void expect_format_gpus(char *buf, size_t len, int64_t milli)
{
    int64_t whole = milli / SCHED_MILLI, frac = milli % SCHED_MILLI;
    int digits = 3;

    if (frac < 0)
        frac = -frac;
    if (frac == 0) {
        snprintf(buf, len, "%lld", (long long)whole);
        return;
    }
    while (frac % 10 == 0) {
        frac /= 10;
        digits--;
    }
    snprintf(buf, len, "%s%lld.%0*lld", milli < 0 && whole == 0 ? "-" : "", (long long)whole,
             digits, (long long)frac);
}

/* ---- The checks ---- */

static const char *const check_keys[] = {
    [SCN_PHASE] = "phases",           [SCN_NODES] = "nodes",
    [SCN_EVICTED] = "evicted",        [SCN_NOT_EVICTED] = "notEvicted",
    [SCN_MOVED] = "moved",            [SCN_ALLOCATED] = "allocatedGpus",
    [SCN_FAIR_SHARE] = "fairShareGpus", [SCN_REASON] = "pendingReason",
    [SCN_DOMAINS] = "domains",
};

static int check_phase(const struct world *w, const struct scn_check *c, int i,
                       struct failures *f)
{
    if (w->wls[i].phase == c->value)
        return 0;
    return failures_add(f, "phases.%s: expected %s, got %s", c->name, sched_phase_name(c->value),
                        sched_phase_name(w->wls[i].phase));
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;

    return (x > y) - (x < y);
}

/* "[node-1, node-2]" into buf (cut short if it does not fit). */
static void format_nodes(const struct world *w, const int *nodes, int n, char *buf, size_t len)
{
    size_t used;
    int k;

    snprintf(buf, len, "[");
    for (k = 0; k < n; k++) {
        used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", k ? ", " : "", w->nodes[nodes[k]].name);
    }
    used = strlen(buf);
    snprintf(buf + used, len - used, "]");
}

static int check_nodes(const struct world *w, const struct scn_check *c, int i,
                       struct failures *f)
{
    const struct sched_workload *wl = &w->wls[i];
    char want[512], got[512];
    int *nodes = malloc(((size_t)wl->n_pods + 1) * sizeof(int));
    int j, n = 0, rc = 0;

    if (!nodes)
        return -1;
    for (j = 0; j < wl->n_pods; j++)
        if (wl->pods[j].node >= 0)
            nodes[n++] = wl->pods[j].node;
    qsort(nodes, (size_t)n, sizeof(int), cmp_int);
    if (n != c->n_nodes || memcmp(nodes, c->nodes, (size_t)n * sizeof(int)) != 0) {
        format_nodes(w, c->nodes, c->n_nodes, want, sizeof(want));
        format_nodes(w, nodes, n, got, sizeof(got));
        rc = failures_add(f, "nodes.%s: expected %s, got %s", c->name, want, got);
    }
    free(nodes);
    return rc;
}

static int check_mark(const struct world *w, const struct scn_check *c, int i,
                      struct failures *f)
{
    int want = c->kind != SCN_NOT_EVICTED;
    int got = c->kind == SCN_MOVED ? w->extra[i].moved : w->extra[i].evicted;
    const char *word = c->kind == SCN_MOVED ? "moved" : "evicted";

    if (want == got)
        return 0;
    return failures_add(f, "%s.%s: expected %s%s, got %s%s", check_keys[c->kind], c->name,
                        want ? "" : "not ", word, got ? "" : "not ", word);
}

static int check_gpus(const struct world *w, const struct scn_check *c, struct failures *f)
{
    char want[32], got[32];
    int64_t actual;

    expect_format_gpus(want, sizeof(want), c->milli);
    if (c->kind == SCN_FAIR_SHARE && w->passes == 0)
        return failures_add(f, "fairShareGpus.%s: expected %s, got nothing: no schedule step "
                            "has run", c->name, want);
    actual = c->kind == SCN_ALLOCATED ? world_allocated_gpu(w, c->value, c->pool)
                                      : world_fair_gpu(w, c->value, c->pool);
    if (actual - c->milli <= GPU_TOLERANCE && c->milli - actual <= GPU_TOLERANCE)
        return 0;
    expect_format_gpus(got, sizeof(got), actual);
    return failures_add(f, "%s.%s: expected %s, got %s", check_keys[c->kind], c->name, want, got);
}

static int check_reason(const struct world *w, const struct scn_check *c, int i,
                        struct failures *f)
{
    const struct world_pending *kp = world_pending_of(w, c->name);
    char msg[512];

    if (!kp)
        return failures_add(f, "pendingReason.%s: expected %s, got none (%s, and not pending "
                            "after the last schedule step)", c->name,
                            sched_reason_name(c->value), sched_phase_name(w->wls[i].phase));
    if (kp->p.reason == c->value)
        return 0;
    world_pending_message(w, kp, msg, sizeof(msg));
    return failures_add(f, "pendingReason.%s: expected %s, got %s (%s)", c->name,
                        sched_reason_name(c->value), sched_reason_name(kp->p.reason), msg);
}

static const char *node_label(const struct sched_node *n, const char *key)
{
    int k;

    for (k = 0; k < n->n_labels; k++)
        if (strcmp(n->labels[k].key, key) == 0)
            return n->labels[k].value;
    return strcmp(key, SCHED_HOSTNAME_LABEL) == 0 ? n->name : NULL;
}

static int check_domains(const struct world *w, const struct scn_check *c, int i,
                         struct failures *f)
{
    const struct sched_workload *wl = &w->wls[i];
    const char *seen[SCHED_MAX_NODE_GPUS], *v;
    int j, k, n = 0, placed = 0;

    for (j = 0; j < wl->n_pods; j++) {
        if (wl->pods[j].node < 0)
            continue;
        placed++;
        v = node_label(&w->nodes[wl->pods[j].node], c->label);
        if (!v)
            return failures_add(f, "domains.%s.%s: node %s has no such label", c->name,
                                c->label, w->nodes[wl->pods[j].node].name);
        if (c->domain && strcmp(v, c->domain) != 0)
            return failures_add(f, "domains.%s.%s: expected %s, got %s on node %s", c->name,
                                c->label, c->domain, v, w->nodes[wl->pods[j].node].name);
        for (k = 0; k < n && strcmp(seen[k], v) != 0; k++)
            ;
        if (k == n && n < SCHED_MAX_NODE_GPUS)
            seen[n++] = v;
    }
    if (placed == 0)
        return failures_add(f, "domains.%s.%s: no pod placed", c->name, c->label);
    if (!c->domain && n != c->n_domains)
        return failures_add(f, "domains.%s.%s: expected %d domains, got %d", c->name, c->label,
                            c->n_domains, n);
    return 0;
}

static int check_one(const struct world *w, const struct scn_check *c, struct failures *f)
{
    int i;

    if (c->kind == SCN_ALLOCATED || c->kind == SCN_FAIR_SHARE)
        return check_gpus(w, c, f);
    i = world_find(w, c->name);
    if (i < 0)
        return failures_add(f, "%s.%s: no such workload (deleted by an earlier step)",
                            check_keys[c->kind], c->name);
    switch (c->kind) {
    case SCN_PHASE:  return check_phase(w, c, i, f);
    case SCN_NODES:  return check_nodes(w, c, i, f);
    case SCN_REASON: return check_reason(w, c, i, f);
    case SCN_DOMAINS: return check_domains(w, c, i, f);
    default:         return check_mark(w, c, i, f);
    }
}

int expect_run(const struct world *w, const struct scn_step *st, struct failures *f)
{
    int k;

    for (k = 0; k < st->u.expect.n_checks; k++)
        if (check_one(w, &st->u.expect.checks[k], f) != 0)
            return -1;
    return 0;
}
