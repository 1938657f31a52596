/*
 * affinity.c: which nodes a workload may use, and in what order of
 * preference: its node types ("any of these, the first preferred", or
 * "any of these" alike when node_types_alike is set) and
 * its required node affinity (Kubernetes' nodeSelectorTerms over the
 * node's labels).
 *
 * Step 1  sched__build_classes() gives every constrained workload a class:
 *         workloads with equal constraints share one (a hash table over
 *         their contents), so a cycle with many alike workloads evaluates
 *         each node once per kind of constraint, not once per workload.
 * Step 2  per class, rank[node]: 0 where the node is not allowed, else
 *         1 + the position of the node's type in the workload's list
 *         (1 for every allowed node when it names no types or ranks them
 *         alike); rank[n_nodes]
 *         is 1 when every node has rank 1 (a class of topology levels
 *         alone: no node is excluded).
 * Step 3  placement and the victim search ask sched__node_rank(), O(1).
 * Step 4  sched__class_extend(): a workload appended to a kept session
 *         (session.c's Step 4) finds its class among the existing ones,
 *         or adds the next.
 *
 * Invariants:
 *   1. Class 0 is "no constraint": rank 1 on every node, no table.
 *   2. Two workloads share a class only if their constraints are equal
 *      (same types in the same order, ranked alike or not, same terms; in a session with
 *      topologies, the same topology levels asked, topology.c), so
 *      signatures that compare classes compare constraints.
 */
#include "sched_int.h"

#include <string.h>

/* ---- One node against one workload (pure, public) ---- */

const char *sched__label_of(const struct sched_node *n, const char *key)
{
    int i;

    for (i = 0; i < n->n_labels; i++)
        if (n->labels[i].key && strcmp(n->labels[i].key, key) == 0)
            return n->labels[i].value ? n->labels[i].value : "";
    if (strcmp(key, "node-type") == 0 && n->node_type)
        return n->node_type;
    if (strcmp(key, SCHED_HOSTNAME_LABEL) == 0)
        return n->name;
    return NULL;
}

/* A decimal integer, optionally signed; 0 when s is not one. */
static int parse_int(const char *s, int64_t *out)
{
    int64_t v = 0;
    int neg = 0, digits = 0;

    if (!s)
        return 0;
    if (*s == '-' || *s == '+')
        neg = *s++ == '-';
    for (; *s >= '0' && *s <= '9' && digits < 18; s++, digits++)
        v = v * 10 + (*s - '0');
    if (digits == 0 || *s)
        return 0;
    *out = neg ? -v : v;
    return 1;
}

static int match_holds(const struct sched_match *m, const struct sched_node *n)
{
    const char *value = m->key ? sched__label_of(n, m->key) : NULL;
    int64_t have, bound;
    int i, in = 0;

    switch (m->op) {
    case SCHED_OP_EXISTS:
        return value != NULL;
    case SCHED_OP_DOES_NOT_EXIST:
        return value == NULL;
    case SCHED_OP_IN:
    case SCHED_OP_NOT_IN:
        for (i = 0; value && i < m->n_values && !in; i++)
            in = m->values[i] && strcmp(m->values[i], value) == 0;
        return m->op == SCHED_OP_IN ? in : !in;
    case SCHED_OP_GT:
    case SCHED_OP_LT:
        if (m->n_values != 1 || !parse_int(value, &have) || !parse_int(m->values[0], &bound))
            return 0;
        return m->op == SCHED_OP_GT ? have > bound : have < bound;
    default:
        return 0;
    }
}

static int affinity_holds(const struct sched_workload *w, const struct sched_node *n)
{
    int t, k;

    if (w->n_affinity <= 0)
        return 1;
    for (t = 0; t < w->n_affinity; t++) {
        const struct sched_term *term = &w->affinity[t];
        int ok = term->n_matches > 0;
        for (k = 0; ok && k < term->n_matches; k++)
            ok = match_holds(&term->matches[k], n);
        if (ok)
            return 1;
    }
    return 0;
}

/* 1 + position of the node's type among w's types (1 for any of them when
 * w ranks its types alike); 1 if w names none; 0 if the node's type is not
 * among them. */
static int type_rank(const struct sched_workload *w, const struct sched_node *n)
{
    const char *type = n->node_type ? n->node_type : sched__label_of(n, "node-type");
    int i;

    if (w->n_node_types <= 0)
        return !w->node_type || (type && strcmp(w->node_type, type) == 0);
    for (i = 0; type && i < w->n_node_types; i++)
        if (w->node_types[i] && strcmp(w->node_types[i], type) == 0)
            return w->node_types_alike ? 1 : i + 1;
    return 0;
}

static int node_rank_of(const struct sched_workload *w, const struct sched_node *n)
{
    int rank = type_rank(w, n);

    return rank > 0 && affinity_holds(w, n) ? rank : 0;
}

int sched_node_allowed(const struct sched_workload *w, const struct sched_node *n)
{
    return node_rank_of(w, n) > 0;
}

/* ---- Classes of equal constraints ---- */

static int constrained(const struct sched_session *ss, const struct sched_workload *w)
{
    return w->node_type || w->n_node_types > 0 || w->n_affinity > 0 || sched__topo_asks(ss, w);
}

static uint64_t mix_str(uint64_t h, const char *s)
{
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return (h ^ 0xff) * 1099511628211ULL;
}

static uint64_t mix_int(uint64_t h, int64_t v)
{
    return (h ^ (uint64_t)v) * 1099511628211ULL;
}

static uint64_t constraint_hash(const struct sched_session *ss, const struct sched_workload *w)
{
    uint64_t h = mix_str(1469598103934665603ULL, w->n_node_types > 0 ? NULL : w->node_type);
    int i, k, v;

    if (sched__topo_asks(ss, w))
        h = mix_int(mix_str(mix_str(h, w->topology_required), w->topology_preferred),
                    w->type == SCHED_DISTRIBUTED);

    h = mix_int(h, w->n_node_types);
    for (i = 0; i < w->n_node_types; i++)
        h = mix_str(h, w->node_types[i]);
    if (w->n_node_types > 0 && w->node_types_alike)
        h = mix_int(h, 1);
    h = mix_int(h, w->n_affinity);
    for (i = 0; i < w->n_affinity; i++) {
        h = mix_int(h, w->affinity[i].n_matches);
        for (k = 0; k < w->affinity[i].n_matches; k++) {
            const struct sched_match *m = &w->affinity[i].matches[k];
            h = mix_int(mix_str(h, m->key), m->op);
            h = mix_int(h, m->n_values);
            for (v = 0; v < m->n_values; v++)
                h = mix_str(h, m->values[v]);
        }
    }
    return h;
}

static int str_eq(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static int match_eq(const struct sched_match *a, const struct sched_match *b)
{
    int v;

    if (!str_eq(a->key, b->key) || a->op != b->op || a->n_values != b->n_values)
        return 0;
    for (v = 0; v < a->n_values; v++)
        if (!str_eq(a->values[v], b->values[v]))
            return 0;
    return 1;
}

static int constraints_eq(const struct sched_session *ss, const struct sched_workload *a,
                          const struct sched_workload *b)
{
    int i, k, topo = sched__topo_asks(ss, a);

    if (topo != sched__topo_asks(ss, b) ||
        (topo && (!str_eq(a->topology_required, b->topology_required) ||
                  !str_eq(a->topology_preferred, b->topology_preferred) ||
                  (a->type == SCHED_DISTRIBUTED) != (b->type == SCHED_DISTRIBUTED))))
        return 0;

    if (a->n_node_types != b->n_node_types || a->n_affinity != b->n_affinity ||
        (a->n_node_types == 0 && !str_eq(a->node_type, b->node_type)) ||
        (a->n_node_types > 0 && !a->node_types_alike != !b->node_types_alike))
        return 0;
    for (i = 0; i < a->n_node_types; i++)
        if (!str_eq(a->node_types[i], b->node_types[i]))
            return 0;
    for (i = 0; i < a->n_affinity; i++) {
        if (a->affinity[i].n_matches != b->affinity[i].n_matches)
            return 0;
        for (k = 0; k < a->affinity[i].n_matches; k++)
            if (!match_eq(&a->affinity[i].matches[k], &b->affinity[i].matches[k]))
                return 0;
    }
    return 1;
}

/* A new class for workload w: its rank on every node. */
static int class_new(struct sched_session *ss, int w)
{
    const struct sched_workload *wl = ss_w(ss, w);
    int8_t *rank = sched__calloc(ss->arena, (size_t)ss->n_nodes + 1, sizeof(int8_t));
    int n, c = ss->n_classes;

    if (!rank)
        return SCHED_ENOMEM;
    rank[ss->n_nodes] = 1;   /* every node of rank 1 (a topology's class alone) */
    for (n = 0; n < ss->n_nodes; n++) {
        int r = node_rank_of(wl, &ss->in->nodes[n]);
        rank[n] = (int8_t)(r > 127 ? 127 : r);
        if (r != 1)
            rank[ss->n_nodes] = 0;
    }
    ss->class_rank[c] = rank;
    ss->class_first[c] = w;
    ss->n_classes++;
    return c;
}

int sched__build_classes(struct sched_session *ss)
{
    int n = 0, w, cap = 16, mask, *slots;

    for (w = 0; w < ss->n_workloads; w++)
        n += constrained(ss, ss_w(ss, w)) && (ss->wl[w].flags & WL_ACTIVE);
    ss->n_classes = 1;
    if (n == 0)
        return SCHED_OK;
    while (cap < 2 * n)
        cap *= 2;
    mask = cap - 1;
    slots = sched__calloc(ss->arena, (size_t)cap, sizeof(int)); /* class index, 0 = empty */
    ss->class_rank = sched__calloc(ss->arena, (size_t)n + 1, sizeof(int8_t *));
    ss->class_first = sched__calloc(ss->arena, (size_t)n + 1, sizeof(int));
    if (!slots || !ss->class_rank || !ss->class_first)
        return SCHED_ENOMEM;
    ss->cap_classes = n + 1;
    for (w = 0; w < ss->n_workloads; w++) {
        const struct sched_workload *wl = ss_w(ss, w);
        int i;
        if (!constrained(ss, wl) || !(ss->wl[w].flags & WL_ACTIVE))
            continue;
        i = (int)(constraint_hash(ss, wl) & (uint64_t)mask);
        while (slots[i] && !constraints_eq(ss, ss_w(ss, ss->class_first[slots[i]]), wl))
            i = (i + 1) & mask;
        if (!slots[i]) {
            int c = class_new(ss, w);
            if (c < 0)
                return c;
            slots[i] = c;
        }
        ss->wl[w].cls = slots[i];
    }
    return SCHED_OK;
}

/* Step 4: workload w appended to a built session takes the class of the
 * first workload with equal constraints, or the next new one, as Step 1
 * would number it on the whole snapshot. */
int sched__class_extend(struct sched_session *ss, int w)
{
    const struct sched_workload *wl = ss_w(ss, w);
    int c;

    if (!constrained(ss, wl) || !(ss->wl[w].flags & WL_ACTIVE))
        return SCHED_OK;
    for (c = 1; c < ss->n_classes; c++)
        if (constraints_eq(ss, ss_w(ss, ss->class_first[c]), wl)) {
            ss->wl[w].cls = c;
            return SCHED_OK;
        }
    if (ss->n_classes >= ss->cap_classes) {
        int cap = ss->cap_classes > 8 ? 2 * ss->cap_classes : 16;
        int8_t **rank = sched__calloc(ss->arena, (size_t)cap, sizeof(int8_t *));
        int *first = sched__calloc(ss->arena, (size_t)cap, sizeof(int));
        if (!rank || !first)
            return SCHED_ENOMEM;
        if (ss->n_classes > 1) {
            memcpy(rank, ss->class_rank, sizeof(*rank) * (size_t)ss->n_classes);
            memcpy(first, ss->class_first, sizeof(*first) * (size_t)ss->n_classes);
        }
        ss->class_rank = rank;
        ss->class_first = first;
        ss->cap_classes = cap;
    }
    c = class_new(ss, w);
    if (c < 0)
        return c;
    ss->wl[w].cls = c;
    return SCHED_OK;
}
