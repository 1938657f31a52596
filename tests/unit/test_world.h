/*
 * test_world.h: a tiny builder of scheduler states for the unit tests.
 * Fixed-size arrays, one pool unless told, everything else defaults as
 * the scenario format does (binpack, deserved 0, limit -1, weight 1).
 * A test states its world in one description (tw_build) and its expected
 * phases in another (tw_phases); the per-item calls below stay for what
 * a description does not say.
 */
#ifndef ALLOT_TEST_WORLD_H
#define ALLOT_TEST_WORLD_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sched.h"

#define TW_MAX 32
#define TW_PODS 8

struct tw {
    struct sched_pool pools[4];
    struct sched_node nodes[TW_MAX];
    struct sched_queue queues[TW_MAX];
    struct sched_quota quota[TW_MAX][4][SCHED_NRES];
    struct sched_workload wl[TW_MAX];
    struct sched_pod pods[TW_MAX][TW_PODS];
    struct sched_state st;
    struct sched_arena *arena;
    struct sched_result res;
    int64_t seq;
    int pool_lists[2][TW_MAX][4]; /* pools= of queues [0] and workloads [1] */
    char text[2048]; /* tw_build()'s copies of its descriptions: the names point into them */
    size_t text_used;
    char why[256];   /* tw_phases()'s answer */
};

static inline void tw_init(struct tw *w, int n_pools)
{
    int p;

    memset(w, 0, sizeof(*w));
    for (p = 0; p < n_pools; p++) {
        w->pools[p].name = p == 0 ? "default" : p == 1 ? "pool-b" : p == 2 ? "pool-c" : "pool-d";
        w->pools[p].tbf_k_milli = 1000;
    }
    w->st.pools = w->pools;
    w->st.n_pools = n_pools;
    w->st.nodes = w->nodes;
    w->st.queues = w->queues;
    w->st.workloads = w->wl;
    w->arena = sched_arena_new();
}

static inline void tw_free(struct tw *w)
{
    sched_arena_free(w->arena);
}

static inline int tw_node(struct tw *w, const char *name, int pool, int gpus)
{
    struct sched_node *n = &w->nodes[w->st.n_nodes];

    n->name = name;
    n->pool = pool;
    n->ready = 1;
    n->n_gpus = gpus;
    n->cpu_milli = n->mem_mib = SCHED_UNLIMITED;
    return w->st.n_nodes++;
}

/* A queue with GPU deserved/limit in whole GPUs (-1 as is) and weight in units. */
static inline int tw_queue(struct tw *w, const char *name, int parent, double deserved,
                           double limit, int weight)
{
    int q = w->st.n_queues++, p, r;

    w->queues[q].name = name;
    w->queues[q].parent = parent;
    w->queues[q].quota = &w->quota[q][0][0];
    for (p = 0; p < 4; p++)
        for (r = 0; r < SCHED_NRES; r++) {
            struct sched_quota *x = &w->quota[q][p][r];
            x->deserved = r == SCHED_GPU && deserved >= 0 ? (int64_t)(deserved * 1000) : r == SCHED_GPU ? -1 : 0;
            x->limit = r == SCHED_GPU && limit >= 0 ? (int64_t)(limit * 1000) : -1;
            x->weight = r == SCHED_GPU ? weight * 1000 : 1000;
        }
    return q;
}

/* A training-like workload: pods x gpus (whole) or a portion in milli. */
static inline int tw_workload(struct tw *w, const char *name, int queue, int pods, int gpus,
                              int64_t portion, int priority)
{
    int i = w->st.n_workloads++, k;
    struct sched_workload *x = &w->wl[i];

    x->name = name;
    x->queue = queue;
    x->type = SCHED_TRAINING;
    x->priority = priority;
    x->preemptible = sched_default_preemptible(priority);
    x->phase = SCHED_PENDING;
    x->n_pods = x->min_pods = pods;
    x->gpu_devices = gpus;
    x->gpu_portion = portion;
    x->queued_seq = ++w->seq;
    x->started_ms = x->stale_since_ms = SCHED_NO_TIME;
    x->pods = w->pods[i];
    for (k = 0; k < TW_PODS; k++)
        w->pods[i][k].node = -1;
    return i;
}

/* Runs one cycle and applies its decisions; returns the decision count. */
static inline int tw_cycle(struct tw *w)
{
    int i;

    sched_arena_reset(w->arena);
    if (sched_cycle(&w->st, NULL, w->arena, &w->res) != SCHED_OK)
        return -1;
    for (i = 0; i < w->res.n_decisions; i++)
        sched_apply_decision(w->wl, w->st.n_workloads, &w->res.decisions[i], w->st.now_ms);
    for (i = 0; i < w->st.n_workloads; i++)
        w->wl[i].stale_since_ms = w->res.stale_since_ms[i];
    return w->res.n_decisions;
}

/* Cycles until nothing changes (at most 20). */
static inline void tw_settle(struct tw *w)
{
    int i;

    for (i = 0; i < 20 && tw_cycle(w) > 0; i++)
        ;
}

static inline int tw_evicted(const struct tw *w, int wl)
{
    int i;

    for (i = 0; i < w->res.n_decisions; i++)
        if (w->res.decisions[i].kind == SCHED_EVICT && w->res.decisions[i].workload == wl)
            return 1;
    return 0;
}

static inline const struct sched_pending *tw_pending(const struct tw *w, int wl)
{
    int i;

    for (i = 0; i < w->res.n_pending; i++)
        if (w->res.pending[i].workload == wl)
            return &w->res.pending[i];
    return NULL;
}

/* Places pod k of wl on node with the given device mask, as already running. */
static inline void tw_running(struct tw *w, int wl, int k, int node, uint64_t devices)
{
    w->pods[wl][k].node = node;
    w->pods[wl][k].devices = devices;
    w->wl[wl].phase = SCHED_RUNNING;
    w->wl[wl].started_ms = w->st.now_ms;
}

/* The index of the element of that name among n elements of size bytes
 * whose name (a const char *) is at offset `at`; -1 if there is none. */
static inline int tw_find(const void *elems, int n, size_t size, size_t at, const char *name)
{
    int i;

    for (i = 0; i < n; i++) {
        const char *is = *(const char *const *)((const char *)elems + (size_t)i * size + at);

        if (strcmp(is, name) == 0)
            return i;
    }
    return -1;
}

/* The index of the workload (tw_wl), queue (tw_q) or node (tw_n) of that
 * name; -1 if there is none. */
static inline int tw_wl(const struct tw *w, const char *name)
{
    return tw_find(w->wl, w->st.n_workloads, sizeof(w->wl[0]),
                   offsetof(struct sched_workload, name), name);
}

static inline int tw_q(const struct tw *w, const char *name)
{
    return tw_find(w->queues, w->st.n_queues, sizeof(w->queues[0]),
                   offsetof(struct sched_queue, name), name);
}

static inline int tw_n(const struct tw *w, const char *name)
{
    return tw_find(w->nodes, w->st.n_nodes, sizeof(w->nodes[0]), offsetof(struct sched_node, name),
                   name);
}

/* The value of option `key=` among words[from..n), or dflt. */
static inline const char *tw_opt(char **words, int from, int n, const char *key, const char *dflt)
{
    size_t len = strlen(key);
    int i;

    for (i = from; i < n; i++)
        if (strncmp(words[i], key, len) == 0 && words[i][len] == '=')
            return words[i] + len + 1;
    return dflt;
}

/* The phase of that name (sched_phase_name()'s), -1 if none. */
static inline int tw_phase_of(const char *name)
{
    int p;

    for (p = SCHED_PENDING; p <= SCHED_FAILED; p++)
        if (strcmp(sched_phase_name(p), name) == 0)
            return p;
    return -1;
}

/* A pools= list ("1,0") into list (at most 4): its length. */
static inline int tw_pools(const char *text, int *list)
{
    char *end;
    int n = 0;

    while (text != NULL && *text && n < 4) {
        list[n++] = (int)strtol(text, &end, 10);
        text = *end == ',' ? end + 1 : NULL;
    }
    return n;
}

static inline void tw_item_node(struct tw *w, char **a, int n)
{
    int i = tw_node(w, a[1], atoi(tw_opt(a, 3, n, "pool", "0")), atoi(a[2]));

    w->nodes[i].node_type = tw_opt(a, 3, n, "type", NULL);
    w->nodes[i].cpu_milli = atoll(tw_opt(a, 3, n, "cpu", "-1"));
    w->nodes[i].mem_mib = atoll(tw_opt(a, 3, n, "mem", "-1"));
    w->nodes[i].gpu_memory_mib = atoll(tw_opt(a, 3, n, "gpumem", "0"));
    w->nodes[i].ready = atoi(tw_opt(a, 3, n, "ready", "1"));
}

static inline void tw_item_wl(struct tw *w, char **a, int n)
{
    const char *on = tw_opt(a, 5, n, "on", NULL), *seq = tw_opt(a, 5, n, "seq", NULL);
    const char *pre = tw_opt(a, 5, n, "preemptible", NULL);
    int i = tw_workload(w, a[1], tw_q(w, a[2]), atoi(a[3]), atoi(a[4]),
                        atoll(tw_opt(a, 5, n, "portion", "0")),
                        atoi(tw_opt(a, 5, n, "prio", "50")));

    sched_type_parse(tw_opt(a, 5, n, "kind", "training"), &w->wl[i].type);
    w->wl[i].min_pods = atoi(tw_opt(a, 5, n, "min", a[3]));
    w->wl[i].node_type = tw_opt(a, 5, n, "type", NULL);
    w->wl[i].cpu_milli = atoll(tw_opt(a, 5, n, "cpu", "0"));
    w->wl[i].mem_mib = atoll(tw_opt(a, 5, n, "mem", "0"));
    w->wl[i].gpu_memory_mib = atoll(tw_opt(a, 5, n, "gpumem", "0"));
    w->wl[i].n_pools = tw_pools(tw_opt(a, 5, n, "pools", NULL), w->pool_lists[1][i]);
    w->wl[i].pools = w->wl[i].n_pools ? w->pool_lists[1][i] : NULL;
    w->wl[i].phase = tw_phase_of(tw_opt(a, 5, n, "phase", "Pending"));
    if (seq != NULL)
        w->wl[i].queued_seq = atoll(seq);
    if (pre != NULL)
        w->wl[i].preemptible = atoi(pre);
    if (on != NULL) { /* on=NODE:DEVICES, pod 0 running there */
        char node[64];

        snprintf(node, sizeof(node), "%.*s", (int)strcspn(on, ":"), on);
        tw_running(w, i, 0, tw_n(w, node), strtoull(on + strcspn(on, ":") + 1, NULL, 0));
    }
}

/* Where pod 0 of workload i is, as "NODE:0xDEVICES" in buf. */
static inline const char *tw_pod_at(const struct tw *w, int i, char *buf, size_t size)
{
    const struct sched_pod *p = &w->pods[i][0];

    snprintf(buf, size, "%s:0x%llx", p->node < 0 ? "nowhere" : w->nodes[p->node].name,
             (unsigned long long)p->devices);
    return buf;
}

/* How the last cycle evicted workload i, as "pods-evicted=N" in buf (N
 * pods one by one; "whole" where it evicted the whole workload). */
static inline const char *tw_pods_evicted(const struct tw *w, int i, char *buf, size_t size)
{
    int k, pods = 0, whole = 0;

    for (k = 0; k < w->res.n_decisions; k++)
        if (w->res.decisions[k].kind == SCHED_EVICT && w->res.decisions[k].workload == i) {
            pods += w->res.decisions[k].pod >= 0;
            whole += w->res.decisions[k].pod < 0;
        }
    if (whole)
        snprintf(buf, size, "whole");
    else
        snprintf(buf, size, "pods-evicted=%d", pods);
    return buf;
}

/* Says in w->why (when nothing is said there yet) the first of the n
 * workloads named that is not as `is` says: a phase ("Running"),
 * "evicted" or "kept" (whether the last cycle evicted it), "@NODE" (its
 * pod 0 is on NODE), "@NODE:DEVICES" (on NODE's devices of that mask, as
 * on= gives them), "pods-evicted=N" (the last cycle evicted N of its
 * pods one by one, and not the whole workload) or "why=REASON" (it waits
 * for that reason). */
static inline void tw_expect(struct tw *w, const char *is, char *const *names, int n)
{
    int k;

    for (k = 0; k < n && !w->why[0]; k++) {
        int i = tw_wl(w, names[k]);
        char here[96];
        const char *was;

        if (i < 0)
            was = "absent";
        else if (strcmp(is, "evicted") == 0 || strcmp(is, "kept") == 0)
            was = tw_evicted(w, i) ? "evicted" : "kept";
        else if (is[0] == '@' && strchr(is, ':') != NULL) /* @NODE:DEVICES */
            was = tw_pod_at(w, i, here, sizeof(here));
        else if (is[0] == '@')
            was = w->pods[i][0].node < 0 ? "nowhere" : w->nodes[w->pods[i][0].node].name;
        else if (strncmp(is, "pods-evicted=", 13) == 0)
            was = tw_pods_evicted(w, i, here, sizeof(here));
        else if (strncmp(is, "why=", 4) == 0)
            was = tw_pending(w, i) ? sched_reason_name(tw_pending(w, i)->reason) : "not waiting";
        else
            was = sched_phase_name(w->wl[i].phase);
        if (strcmp(is[0] == '@' ? is + 1 : strncmp(is, "why=", 4) == 0 ? is + 4 : is, was) != 0)
            snprintf(w->why, sizeof(w->why), "%s is %s, not %s", names[k], was, is);
    }
}

/* One item of a description, split into its words (see tw_build). */
static inline void tw_item(struct tw *w, char **a, int n)
{
    if (strcmp(a[0], "node") == 0 && n >= 3) {
        tw_item_node(w, a, n);
    } else if (strcmp(a[0], "queue") == 0 && n >= 3) {
        int q = tw_queue(w, a[1], tw_q(w, tw_opt(a, 3, n, "parent", "")), atof(a[2]),
                         atof(tw_opt(a, 3, n, "limit", "-1")),
                         atoi(tw_opt(a, 3, n, "weight", "1")));

        w->queues[q].rank = atoi(tw_opt(a, 3, n, "rank", "0"));
        w->queues[q].n_default_pools =
            tw_pools(tw_opt(a, 3, n, "pools", NULL), w->pool_lists[0][q]);
        w->queues[q].default_pools = w->queues[q].n_default_pools ? w->pool_lists[0][q] : NULL;
    } else if (strcmp(a[0], "wl") == 0 && n >= 5) {
        tw_item_wl(w, a, n);
    } else if (strcmp(a[0], "pool") == 0 && n >= 2) {
        struct sched_pool *p = &w->pools[atoi(a[1])];

        if (strcmp(tw_opt(a, 2, n, "placement", "binpack"), "spread") == 0)
            p->gpu_placement = SCHED_SPREAD;
        p->min_guaranteed_runtime_ms = atoll(tw_opt(a, 2, n, "minruntime", "0"));
    } else if (strcmp(a[0], "now") == 0 && n >= 2) { /* now MS, or now +MS */
        w->st.now_ms = (a[1][0] == '+' ? w->st.now_ms : 0) + atoll(a[1]);
    } else if (strcmp(a[0], "expect") == 0 && n >= 2) {
        tw_expect(w, a[1], a + 2, n - 2);
    } else if (strcmp(a[0], "phase") == 0 && n >= 3) { /* phase NAME PHASE */
        w->wl[tw_wl(w, a[1])].phase = tw_phase_of(a[2]);
    } else if (strcmp(a[0], "cycle") == 0) {
        tw_cycle(w);
    } else if (strcmp(a[0], "settle") == 0) {
        tw_settle(w);
    } else {
        fprintf(stderr, "test_world: cannot read the item \"%s\"\n", a[0]);
        abort();
    }
}

/* More items (as tw_build's, below) for a world already built. */
static inline void tw_more(struct tw *w, const char *description)
{
    char *text = w->text + w->text_used, *item, *save = NULL, *words[16];
    int n;

    n = snprintf(text, sizeof(w->text) - w->text_used, "%s", description);
    if (n < 0 || (size_t)n >= sizeof(w->text) - w->text_used) {
        fprintf(stderr, "test_world: descriptions longer than %zu bytes\n", sizeof(w->text));
        abort();
    }
    w->text_used += (size_t)n + 1;
    for (item = strtok_r(text, ";", &save); item != NULL; item = strtok_r(NULL, ";", &save)) {
        char *word, *in = NULL;

        for (n = 0, word = strtok_r(item, " ", &in); word != NULL && n < 16;
             word = strtok_r(NULL, " ", &in))
            words[n++] = word;
        if (n > 0 && strcmp(words[0], "pools") != 0)
            tw_item(w, words, n);
    }
}

/* A world from a description, items split by ';', words by spaces:
 *   pools N                              (first, if any; 1 without it)
 *   pool P [placement=spread] [minruntime=MS]
 *   node NAME GPUS [pool=P] [type=T] [cpu=MILLI] [mem=MIB] [gpumem=MIB]
 *      [ready=0|1]
 *   queue NAME DESERVED [limit=L] [weight=W] [rank=R] [parent=QUEUE]
 *      [pools=P,P...]                    (its default pools, in order)
 *   wl NAME QUEUE PODS GPUS [portion=MILLI] [prio=P] [min=PODS] [type=T]
 *      [kind=TYPE] [cpu=MILLI] [mem=MIB] [gpumem=MIB] [pools=P,P...]
 *      [preemptible=0|1] [phase=PHASE] [seq=N] [on=NODE:DEVICES]
 *   now MS | now +MS                     (the state's clock)
 *   phase NAME PHASE                     (the workload's phase set so)
 *   cycle | settle                       (tw_cycle(), tw_settle())
 *   expect IS NAME...                    (tw_expect(): the first miss in w->why)
 * in the order given (a workload's seq is its place unless seq= says).
 * GPU figures are whole GPUs, as tw_queue() and tw_workload() take them. */
static inline void tw_build(struct tw *w, const char *description)
{
    int n_pools = 1;

    if (sscanf(description, " pools %d", &n_pools) != 1)
        n_pools = 1;
    tw_init(w, n_pools);
    tw_more(w, description);
}

/* "" when each workload named is as said before it ("Running a1 a2;
 * Pending b1; evicted c1; @node-1 a1", as tw_expect() reads), else the
 * first that is not (what an `expect` item of its description found
 * first, if any). */
static inline const char *tw_phases(struct tw *w, const char *expect)
{
    char text[512], *item, *save = NULL;

    snprintf(text, sizeof(text), "%s", expect);
    for (item = strtok_r(text, ";", &save); item != NULL; item = strtok_r(NULL, ";", &save)) {
        char *in = NULL, *words[16];
        int n = 0;

        for (words[0] = strtok_r(item, " ", &in); words[n] != NULL && n < 15;)
            words[++n] = strtok_r(NULL, " ", &in);
        if (n > 0)
            tw_expect(w, words[0], words + 1, n - 1);
    }
    return w->why;
}

/* A test as data: a world and its script (tw_build), then the phases
 * and evictions expected after it (tw_phases). */
struct tw_case {
    const char *name, *world, *expect;
};
#define TW_NCASES(cases) ((int)(sizeof(cases) / sizeof((cases)[0])))
/* A table of cases, as the state of a cmocka test of tw_test_cases:
 * cmocka_unit_test_prestate(tw_test_cases, &table). */
struct tw_table {
    const struct tw_case *cases;
    int n;
};
#define TW_TABLE(cases) {cases, TW_NCASES(cases)}

/* Runs each case in a world of its own: "" when all hold, else the
 * first case that does not and why. */
static inline const char *tw_cases(const struct tw_case *cases, int n)
{
    static char why[512];
    int i;

    why[0] = '\0';
    for (i = 0; i < n && !why[0]; i++) {
        struct tw w;

        tw_build(&w, cases[i].world);
        if (*tw_phases(&w, cases[i].expect ? cases[i].expect : ""))
            snprintf(why, sizeof(why), "%s: %s", cases[i].name, w.why);
        tw_free(&w);
    }
    return why;
}

/* The cmocka test of a table of cases (its state, a struct tw_table). */
static inline void tw_test_cases(void **state)
{
    const struct tw_table *t = *state;

    assert_string_equal(tw_cases(t->cases, t->n), "");
}

/* The main() of a test program that is one table of cases. */
static inline int tw_main(const struct tw_case *cases, int n)
{
    struct tw_table table = {cases, n};
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_prestate(tw_test_cases, &table),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
