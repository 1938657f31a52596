/*
 * bench_cycle.c: allot-bench-cycle, the scheduling cycle at scale
 * (bench/README.md, Targets, rows 1-3; bench/README.md says how to read it).
 *
 *   full   N full cycles on the same generated state (arena reset between
 *          them): p50, p99, min, max of the sched_cycle() wall time.
 *   placement  with --placement fragmentation, the same full cycles
 *          once more with every pool bin-packing: what measuring
 *          fragmentation adds to a cycle.
 *   event  the first cycle's decisions applied, then one submission, and
 *          separately one completion: the next cycle's time (median of a
 *          few runs on that same state). Then the same after the cluster
 *          has settled (passes applied until one decides nothing). The
 *          submission is timed twice: a full cycle, and sched_cycle_next()
 *          with a memo of the cycle before it and the delta "one
 *          submission" (its digest must be the full cycle's); so is a
 *          pending workload cancelled (COMPLETED in place, the delta
 *          "one left"). An incremental cycle that decided something is
 *          followed by the next one: its decisions applied, an empty
 *          delta (its digest must be a full cycle's on that state).
 *   cold   an empty cluster and W one-GPU workloads: passes applied until
 *          nothing changes; placements per second of cycle time.
 *   memory the arena's peak and the process's peak RSS (getrusage).
 *
 * Every number is the core alone: no database, no I/O in the timed part.
 * Generation is deterministic (--seed); sizes are flags, so a tiny run
 * (the ctest entry) checks that the benchmark still builds and runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#ifdef BENCH_CALLGRIND
#include <valgrind/callgrind.h>
#endif

#include "cow.h"
#include "gen.h"
#include "sched.h"

struct options {
    struct gen_opts gen;
    int cycles;          /* timed full cycles */
    int event_runs;      /* runs per event measurement */
    int settle;          /* at most this many passes to settle */
    int cold;            /* one-GPU workloads for the cold fill; 0: skip */
    int dry_runs;        /* dry runs of a submission on the settled cluster; 0: skip */
    int quota_runs;      /* what-ifs of a quota on the settled cluster; 0: skip */
    int drain_runs;      /* what-ifs of a node drained on the settled cluster; 0: skip */
};

/* ---- What the run measured, for the targets' verdicts (print_targets()) ---- */

static struct {
    double full_p50, full_p99;  /* ms */
    double event_settled;       /* the slowest settled incremental event, ms; < 0: none */
    double rss_mib;
    double cold_rate;           /* placements/s; < 0: not run */
    double dry_p99;             /* a dry run on the kept session, ms; < 0: not run */
    double quota_p99;           /* a quota's what-if on the kept session, ms; < 0: not run */
    double drain_p99;           /* a drain's what-if on the kept session, ms; < 0: not run */
} measured = {0, 0, -1, 0, -1, -1, -1, -1};

/* ---- Options: a table of integer flags ---- */

struct flag {
    const char *name;
    int offset;          /* into struct options */
    int min, max;
    const char *help;
};

#define OPT(field) (int)offsetof(struct options, field)

static const struct flag flags[] = {
    {"--nodes", OPT(gen.nodes), 1, 1000000, "nodes"},
    {"--gpus", OPT(gen.gpus), 1, 8, "GPUs per node"},
    {"--pools", OPT(gen.pools), 1, GEN_MAX_POOLS, "node pools"},
    {"--departments", OPT(gen.departments), 1, 10000, "departments"},
    {"--projects", OPT(gen.projects), 1, 10000, "projects per department"},
    {"--fill", OPT(gen.fill_pct), 0, 100, "percent of GPUs held by running workloads"},
    {"--pending", OPT(gen.pending), 0, 10000000, "pending workloads"},
    {"--gangs", OPT(gen.gang_pct), 0, 100, "percent of pending workloads that are gangs"},
    {"--interactive", OPT(gen.interactive_pct), 0, 100,
     "percent of pending workloads that are interactive-preemptible workspaces"},
    {"--ranks", OPT(gen.ranks), 0, 10000, "departments ranked d % N (0: all equal)"},
    {"--cycles", OPT(cycles), 1, 100000, "timed full cycles"},
    {"--event-runs", OPT(event_runs), 1, 1000, "runs per event measurement"},
    {"--dry-runs", OPT(dry_runs), 0, 100000,
     "dry runs of a submission on the settled cluster (0: none)"},
    {"--quota-runs", OPT(quota_runs), 0, 100000,
     "what-ifs of a project's GPU quota on the settled cluster (0: none)"},
    {"--drain-runs", OPT(drain_runs), 0, 100000,
     "what-ifs of a node drained on the settled cluster (0: none)"},
    {"--settle", OPT(settle), 0, 1000, "most passes to settle before the settled event"},
    {"--cold", OPT(cold), 0, 10000000, "one-GPU workloads for the cold fill (0: skip)"},
    {"--racks", OPT(gen.rack_nodes), 0, 1000000,
     "nodes per rack: a block, rack, host topology, half the gangs requiring a rack (0: none)"},
};

static void defaults(struct options *o)
{
    memset(o, 0, sizeof(*o));
    o->gen.nodes = 1000;
    o->gen.gpus = 8;
    o->gen.pools = 4;
    o->gen.departments = 10;
    o->gen.projects = 10;
    o->gen.fill_pct = 90;
    o->gen.pending = 50000;
    o->gen.gang_pct = 10;
    o->gen.extra = 4;
    o->gen.seed = 42;
    o->gen.placement = SCHED_BINPACK;
    o->cycles = 20;
    o->event_runs = 5;
    o->settle = 30;
    o->cold = 8000;
}

static void usage(FILE *out)
{
    size_t i;

    fprintf(out, "usage: allot-bench-cycle [--seed N] [--placement binpack|spread|"
            "fragmentation]");
    for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
        fprintf(out, " [%s N]", flags[i].name);
    fprintf(out, "\n");
    for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
        fprintf(out, "  %-14s %s (%d..%d)\n", flags[i].name, flags[i].help, flags[i].min,
                flags[i].max);
    fprintf(out, "  %-14s every pool's strategy (default binpack)\n", "--placement");
}

static int set_flag(struct options *o, const char *name, const char *value)
{
    char *end;
    long v;
    size_t i;

    if (strcmp(name, "--placement") == 0)
        return sched_placement_parse(value, &o->gen.placement) == SCHED_OK ? 0 : -1;
    v = strtol(value, &end, 10);
    if (*end || end == value)
        return -1;
    if (strcmp(name, "--seed") == 0) {
        o->gen.seed = (uint64_t)v;
        return 0;
    }
    for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
        if (strcmp(flags[i].name, name) != 0)
            continue;
        if (v < flags[i].min || v > flags[i].max)
            return -1;
        *(int *)((char *)o + flags[i].offset) = (int)v;
        return 0;
    }
    return -1;
}

static int parse(int argc, char **argv, struct options *o)
{
    int i;

    defaults(o);
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            exit(0);
        }
        if (i + 1 >= argc || set_flag(o, argv[i], argv[i + 1]) != 0) {
            fprintf(stderr, "allot-bench-cycle: bad option %s\n", argv[i]);
            usage(stderr);
            return -1;
        }
        i++;
    }
    return 0;
}

/* ---- Timing ---- */

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* CPU time of this process, in ms. */
static double cpu_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* Nearest-rank percentile of n sorted values. */
static double percentile(const double *sorted, int n, int pct)
{
    int rank = (n * pct + 99) / 100;

    return sorted[rank > 0 ? rank - 1 : 0];
}

/* One sched_cycle() on the world, its wall time in *ms. */
static int timed_cycle(const struct gen_world *w, struct sched_arena *arena,
                       struct sched_result *res, double *ms)
{
    struct sched_state st;
    struct sched_config cfg;
    double t0;
    int rc;

    sched_config_default(&cfg);
    gen_world_state(w, &st);
    sched_arena_reset(arena);
    t0 = now_ms();
    rc = sched_cycle(&st, &cfg, arena, res);
    *ms = now_ms() - t0;
    if (rc != SCHED_OK)
        fprintf(stderr, "allot-bench-cycle: sched_cycle() failed (%d)\n", rc);
    return rc;
}

/* Applies a result's decisions as a driver does; returns the BINDs. */
static int apply(struct gen_world *w, const struct sched_result *res)
{
    int k, binds = 0;

    for (k = 0; k < res->n_decisions; k++) {
        sched_apply_decision(w->wls, w->n_wls, &res->decisions[k], w->now_ms);
        binds += res->decisions[k].kind == SCHED_BIND;
    }
    for (k = 0; k < w->n_wls; k++)
        w->wls[k].stale_since_ms = res->stale_since_ms[k];
    return binds;
}

/* apply(), writing a stale time only where it moved: a forked child
 * copies every page it writes, and the workloads are 8 MiB at 50,000. */
static void apply_moved(struct gen_world *w, const struct sched_result *res)
{
    int k;

    for (k = 0; k < res->n_decisions; k++)
        sched_apply_decision(w->wls, w->n_wls, &res->decisions[k], w->now_ms);
    for (k = 0; k < w->n_wls; k++)
        if (w->wls[k].stale_since_ms != res->stale_since_ms[k])
            w->wls[k].stale_since_ms = res->stale_since_ms[k];
}

/* FNV-1a over a result's decisions, pending reasons and staleness, field by
 * field: two builds of the core that print the same digest on the same
 * state decided the same things, so a change meant to be faster can be
 * checked for equal decisions at full scale. */
static uint64_t fnv(uint64_t h, int64_t v)
{
    int i;

    for (i = 0; i < 8; i++)
        h = (h ^ (uint64_t)((v >> (8 * i)) & 0xff)) * 1099511628211ULL;
    return h;
}

static uint64_t result_digest(const struct sched_result *res, int n_workloads)
{
    uint64_t h = 1469598103934665603ULL;
    int k;

    for (k = 0; k < res->n_decisions; k++) {
        const struct sched_decision *d = &res->decisions[k];
        int64_t f[] = {d->kind, d->action, d->workload, d->pod, d->node, (int64_t)d->devices,
                       d->by_workload};
        for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
            h = fnv(h, f[i]);
    }
    for (k = 0; k < res->n_pending; k++) {
        const struct sched_pending *p = &res->pending[k];
        int64_t f[] = {p->workload, p->reason,   p->detail, p->other_queue, p->wait_ms, p->queue,
                       p->pool,     p->res,      p->would_use, p->bound,    p->request};
        for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
            h = fnv(h, f[i]);
    }
    for (k = 0; k < n_workloads; k++)
        h = fnv(h, res->stale_since_ms[k]);
    return h;
}

/* ---- full ---- */

/* o->cycles full cycles (after one that warms the arena): sorted times in
 * t, the last result in *res. */
static int full_cycles(const struct options *o, struct gen_world *w, struct sched_arena *arena,
                       double *t, struct sched_result *res)
{
    int i, rc = timed_cycle(w, arena, res, &t[0]);

    for (i = 0; rc == 0 && i < o->cycles; i++)
        rc = timed_cycle(w, arena, res, &t[i]);
    qsort(t, (size_t)o->cycles, sizeof(double), cmp_double);
    return rc;
}

static double mean(const double *t, int n)
{
    double sum = 0;
    int i;

    for (i = 0; i < n; i++)
        sum += t[i];
    return sum / n;
}

/* The same cycles with every pool bin-packing (the world is put back). */
static int bench_placement(const struct options *o, struct gen_world *w,
                           struct sched_arena *arena, double frag_p50)
{
    struct sched_result res;
    double *t = calloc((size_t)o->cycles, sizeof(double));
    int p, rc;

    if (!t)
        return -1;
    for (p = 0; p < w->n_pools; p++)
        w->pools[p].gpu_placement = w->pools[p].cpu_placement = SCHED_BINPACK;
    rc = full_cycles(o, w, arena, t, &res);
    for (p = 0; p < w->n_pools; p++)
        w->pools[p].gpu_placement = w->pools[p].cpu_placement = (uint8_t)o->gen.placement;
    if (rc == 0)
        printf("placement      bin-packing pools instead: p50 %.2f ms (fragmentation %+.2f ms); "
               "%d decisions, %d pending\n",
               percentile(t, o->cycles, 50), frag_p50 - percentile(t, o->cycles, 50),
               res.n_decisions, res.n_pending);
    free(t);
    return rc;
}

static int bench_full(const struct options *o, struct gen_world *w, struct sched_arena *arena)
{
    struct sched_result res;
    double *t = calloc((size_t)o->cycles, sizeof(double));
    int rc;

    if (!t)
        return -1;
    rc = full_cycles(o, w, arena, t, &res);
    if (rc == 0) {
        measured.full_p50 = percentile(t, o->cycles, 50);
        measured.full_p99 = percentile(t, o->cycles, 99);
    }
    if (rc == 0)
        printf("full cycle     %d runs: p50 %.2f ms, p99 %.2f ms, min %.2f, max %.2f, "
               "mean %.2f; %d decisions, %d pending; digest %016llx\n",
               o->cycles, percentile(t, o->cycles, 50), percentile(t, o->cycles, 99), t[0],
               t[o->cycles - 1], mean(t, o->cycles), res.n_decisions, res.n_pending,
               (unsigned long long)result_digest(&res, w->n_wls));
    if (rc == 0 && o->gen.placement == SCHED_FRAGMENTATION)
        rc = bench_placement(o, w, arena, percentile(t, o->cycles, 50));
    free(t);
    return rc;
}

/* ---- event ---- */

/* Median of `runs` cycles on the world as it is. */
static int median_cycle(const struct options *o, struct gen_world *w, struct sched_arena *arena,
                        double *median, int *decisions, uint64_t *digest)
{
    struct sched_result res;
    double t[1000];
    int i, rc = 0;

    for (i = 0; rc == 0 && i < o->event_runs; i++)
        rc = timed_cycle(w, arena, &res, &t[i]);
    qsort(t, (size_t)o->event_runs, sizeof(double), cmp_double);
    *median = t[o->event_runs / 2];
    *decisions = res.n_decisions;
    *digest = rc == 0 ? result_digest(&res, w->n_wls) : 0;
    return rc;
}

/* An event as sched_cycle_next() sees it: undo() gives the world as it
 * was, redo() makes the event again and fills its delta. */
struct event {
    const char *what;
    void (*undo)(struct gen_world *w, struct event *ev);
    void (*redo)(struct gen_world *w, struct event *ev, struct sched_delta *d);
    int workload;          /* the one it is about */
    struct sched_pod pod;  /* a completion's pod as it ran */
};

#ifdef BENCH_CALLGRIND
/* Built with -DBENCH_CALLGRIND and run under valgrind --tool=callgrind
 * --instr-atstart=no, only the timed cycle of each settled event is
 * counted, each event in a file of its own, and the cycle after the
 * event's decisions are applied in the next (bench/README.md, "One
 * event's instructions"). */
static void profile_start(const char *when)
{
    if (strcmp(when, "(settled)") == 0)
        CALLGRIND_START_INSTRUMENTATION;
}

static void profile_stop(const char *when, const char *what)
{
    if (strcmp(when, "(settled)") == 0) {
        CALLGRIND_STOP_INSTRUMENTATION;
        CALLGRIND_DUMP_STATS_AT(what);
    }
}
#else
static void profile_start(const char *when) { (void)when; }
static void profile_stop(const char *when, const char *what) { (void)when; (void)what; }
#endif

/* What applying a result changes in the world, to put it back: each
 * decided workload as it was, its pods and its place (a decision changes
 * only its own workload and pods, sched_apply_decision()), and each stale
 * time the result moves. */
struct world_undo {
    struct sched_workload *wl;   /* [n_decided] */
    struct sched_pod *pods;      /* every decided workload's pods, in turn */
    int *decided, n_decided;
    int *stale_w, n_stale;       /* workloads whose stale time moves */
    int64_t *stale;
};

static void world_undo_free(struct world_undo *u)
{
    free(u->wl);
    free(u->pods);
    free(u->decided);
    free(u->stale_w);
    free(u->stale);
}

/* Notes what apply() will change, then applies res as apply_moved() does
 * (a stale time written only where it moves): nothing else of the world
 * is read or copied, so the next cycle finds the caches as a driver's
 * would leave them. -1: out of memory (nothing applied). */
static int apply_noted(struct gen_world *w, const struct sched_result *res, struct world_undo *u)
{
    size_t n_pods = 0, at = 0;
    int k, i, d;

    memset(u, 0, sizeof(*u));
    for (k = 0; k < res->n_decisions; k++)
        n_pods += (size_t)w->wls[res->decisions[k].workload].n_pods;
    u->wl = malloc(sizeof(*u->wl) * ((size_t)res->n_decisions + 1));
    u->pods = malloc(sizeof(*u->pods) * (n_pods + 1));
    u->decided = malloc(sizeof(int) * ((size_t)res->n_decisions + 1));
    u->stale_w = malloc(sizeof(int) * ((size_t)w->n_wls + 1));
    u->stale = malloc(sizeof(int64_t) * ((size_t)w->n_wls + 1));
    if (!u->wl || !u->pods || !u->decided || !u->stale_w || !u->stale)
        return -1;
    for (k = 0; k < res->n_decisions; k++) {
        d = res->decisions[k].workload;
        for (i = 0; i < u->n_decided && u->decided[i] != d; i++)
            ;
        if (i < u->n_decided)
            continue;   /* a workload named twice is kept once, as it first was */
        u->decided[u->n_decided] = d;
        u->wl[u->n_decided++] = w->wls[d];
        memcpy(u->pods + at, w->wls[d].pods, sizeof(*u->pods) * (size_t)w->wls[d].n_pods);
        at += (size_t)w->wls[d].n_pods;
    }
    for (k = 0; k < w->n_wls; k++)
        if (w->wls[k].stale_since_ms != res->stale_since_ms[k]) {
            u->stale_w[u->n_stale] = k;
            u->stale[u->n_stale++] = w->wls[k].stale_since_ms;
        }
    apply_moved(w, res);
    return 0;
}

/* The world as it was before apply_noted(). */
static void world_put_back(struct gen_world *w, const struct world_undo *u)
{
    size_t at = 0;
    int i;

    for (i = 0; i < u->n_stale; i++)
        w->wls[u->stale_w[i]].stale_since_ms = u->stale[i];
    for (i = 0; i < u->n_decided; i++) {
        w->wls[u->decided[i]] = u->wl[i];
        memcpy(w->wls[u->decided[i]].pods, u->pods + at,
               sizeof(*u->pods) * (size_t)u->wl[i].n_pods);
        at += (size_t)u->wl[i].n_pods;
    }
}

/* After an event cycle that decided something (the memo as that cycle
 * left it): its decisions applied as a driver does, then the next cycle
 * through sched_cycle_next() with an empty delta (nothing was submitted
 * and nothing left; the scheduler's own decisions are not a delta), timed
 * once, and its digest checked against a full cycle on the same state.
 * The world is put back as it was. */
static int after_decisions(struct gen_world *w, struct sched_arena *arena,
                           struct sched_memo *memo, const struct sched_result *event_res,
                           const char *when, const struct event *ev)
{
    struct world_undo undo;
    struct sched_delta none = {0, 0, NULL, 0, 0, NULL, 0};
    struct sched_memo_stats before, after;
    struct sched_result res;
    struct sched_state st;
    struct sched_config cfg;
    uint64_t digest = 0, full_digest = 0;
    double ms = 0, t0;
    int rc = -1, n = 0;

    if (apply_noted(w, event_res, &undo) != 0)
        goto out;
    sched_config_default(&cfg);
    sched_memo_stats(memo, &before);
    gen_world_state(w, &st);
    sched_arena_reset(arena);
    t0 = now_ms();
    profile_start(when);
    rc = sched_cycle_next(memo, &st, &none, &cfg, arena, &res);
    profile_stop(when, "its decisions applied");
    ms = now_ms() - t0;
    if (rc == 0) {
        digest = result_digest(&res, w->n_wls);
        n = res.n_decisions;
        sched_memo_stats(memo, &after);
        sched_arena_reset(arena);
        rc = sched_cycle(&st, &cfg, arena, &res);
    }
    if (rc == 0)
        full_digest = result_digest(&res, w->n_wls);
    world_put_back(w, &undo);
    if (rc != 0)
        goto out;
    printf("event %-8s %s, then its %d decisions applied: next cycle %.3f ms (%s; %d "
           "decisions; digest %016llx)\n",
           when, ev->what, event_res->n_decisions, ms,
           after.reused > before.reused     ? "answered from the memo"
           : after.finished > before.finished ? "run on the kept session"
                                              : "full cycle",
           n, (unsigned long long)digest);
    if (digest != full_digest) {
        fprintf(stderr, "allot-bench-cycle: the cycle after the decisions differs from a full "
                "cycle\n");
        rc = -1;
    }
out:
    world_undo_free(&undo);
    return rc;
}

/* The event through sched_cycle_next(): a memo primed by a full cycle on
 * the world as it was (untimed), then the cycle with the event's delta
 * (timed; median of the runs). Its digest must be the full cycle's: a
 * differing one is an error. */
static int incremental_event(const struct options *o, struct gen_world *w,
                             struct sched_arena *arena, uint64_t full_digest, const char *when,
                             struct event *ev)
{
    struct sched_delta prime = {1, 0, NULL, 0, 0, NULL, 0}, delta;
    struct sched_memo *memo = sched_memo_new();
    struct sched_memo_stats stats;
    struct sched_result res;
    struct sched_state st;
    struct sched_config cfg;
    double t[1000], t0;
    uint64_t digest = 0;
    int i, rc = memo ? 0 : -1, reused = 0, kept = 0;

    sched_config_default(&cfg);
    for (i = 0; rc == 0 && i < o->event_runs; i++) {
        ev->undo(w, ev);
        gen_world_state(w, &st);
        sched_arena_reset(arena);
        rc = sched_cycle_next(memo, &st, &prime, &cfg, arena, &res);
        ev->redo(w, ev, &delta);
        gen_world_state(w, &st);
        sched_arena_reset(arena);
        t0 = now_ms();
        profile_start(when);
        if (rc == 0)
            rc = sched_cycle_next(memo, &st, &delta, &cfg, arena, &res);
        profile_stop(when, ev->what);
        t[i] = now_ms() - t0;
        if (rc == 0)
            digest = result_digest(&res, w->n_wls);
    }
    sched_memo_stats(memo, &stats);
    reused = (int)stats.reused;
    kept = (int)stats.finished;
    if (rc != 0) {
        sched_memo_free(memo);
        return -1;
    }
    qsort(t, (size_t)o->event_runs, sizeof(double), cmp_double);
    if (strcmp(when, "(settled)") == 0 && t[o->event_runs / 2] > measured.event_settled)
        measured.event_settled = t[o->event_runs / 2];
    printf("event %-8s %s, incremental: next cycle %.3f ms (%s; digest %016llx)\n", when,
           ev->what, t[o->event_runs / 2],
           reused == o->event_runs ? "answered from the memo"
           : kept == o->event_runs ? "run on the kept session"
                                   : "full cycle",
           (unsigned long long)digest);
    if (digest != full_digest) {
        fprintf(stderr, "allot-bench-cycle: the incremental cycle's digest differs from the "
                "full cycle's\n");
        rc = -1;
    } else if (res.n_decisions > 0) {
        rc = after_decisions(w, arena, memo, &res, when, ev);
    }
    sched_memo_free(memo);
    return rc;
}

static void unsubmit(struct gen_world *w, struct event *ev)
{
    (void)ev;
    w->n_wls--;
}

static void resubmit(struct gen_world *w, struct event *ev, struct sched_delta *d)
{
    (void)ev;
    w->n_wls++;
    memset(d, 0, sizeof(*d));
    d->n_submitted = 1;
}

static void uncancel(struct gen_world *w, struct event *ev)
{
    w->wls[ev->workload].phase = SCHED_PENDING;
}

static void cancel(struct gen_world *w, struct event *ev, struct sched_delta *d)
{
    w->wls[ev->workload].phase = SCHED_COMPLETED;
    memset(d, 0, sizeof(*d));
    d->left = &ev->workload;
    d->n_left = 1;
}

/* The event (not yet applied to w) through sched_cycle(): applied, the
 * full cycle timed (median of the runs), then through sched_cycle_next()
 * (incremental_event()), and undone. */
static int time_event(const struct options *o, struct gen_world *w, struct sched_arena *arena,
                      const char *when, struct event *ev)
{
    struct sched_delta d;
    uint64_t digest;
    double ms;
    int n, rc;

    ev->redo(w, ev, &d);
    rc = median_cycle(o, w, arena, &ms, &n, &digest);
    printf("event %-8s %s: next cycle %.2f ms (%d decisions; digest %016llx)\n", when,
           ev->what, ms, n, (unsigned long long)digest);
    if (rc == 0)
        rc = incremental_event(o, w, arena, digest, when, ev);
    ev->undo(w, ev);
    return rc;
}

/* A one-GPU workload submitted: added to the world, taken out again
 * (unsubmit()) for time_event() to put back. */
static int time_submission(const struct options *o, struct gen_world *w,
                           struct sched_arena *arena, const char *when)
{
    struct event ev = {"one submission", unsubmit, resubmit, -1, {-1, 0}};
    size_t pods_before = w->n_pods;
    int rc;

    if (gen_world_submit(w, gen_world_project(w, 0), 1, 1) < 0)
        return -1;
    unsubmit(w, &ev);
    rc = time_event(o, w, arena, when, &ev);
    w->n_pods = pods_before;
    return rc;
}

/* The world's last workload made a workspace (its default priority class,
 * not preemptible). */
static void make_workspace(struct gen_world *w)
{
    struct sched_workload *wl = &w->wls[w->n_wls - 1];

    wl->type = SCHED_WORKSPACE;
    sched_priority_class(sched_default_priority_class(wl->type), &wl->priority);
    wl->preemptible = sched_default_preemptible(wl->priority);
}

/* A one-GPU workload that starts: of the first project whose one-GPU
 * training, or else workspace, makes a full cycle place it (probed project
 * by project, at most `most`; none: nothing is timed). */
static int time_starting_submission(const struct options *o, struct gen_world *w,
                                    struct sched_arena *arena, const char *when, int most)
{
    static const char *const what[2] = {"one training that starts", "one workspace that starts"};
    struct event ev = {NULL, unsubmit, resubmit, -1, {-1, 0}};
    size_t pods_before = w->n_pods;
    struct sched_result res;
    double ms;
    int k, i, rc = 0, starts = 0, ws = 0;

    for (k = 0; k < 2 * most && rc == 0 && !starts; k++) {
        if (gen_world_submit(w, gen_world_project(w, k / 2), 1, 1) < 0)
            return -1;
        if ((ws = k % 2))
            make_workspace(w);
        rc = timed_cycle(w, arena, &res, &ms);
        for (i = 0; rc == 0 && i < res.n_decisions; i++)
            starts |= res.decisions[i].kind == SCHED_BIND &&
                      res.decisions[i].workload == w->n_wls - 1;
        unsubmit(w, &ev);
        w->n_pods = pods_before;
    }
    if (rc != 0 || !starts)
        return rc;
    if (gen_world_submit(w, gen_world_project(w, (k - 1) / 2), 1, 1) < 0)
        return -1;
    if (ws)
        make_workspace(w);
    ev.what = what[ws];
    unsubmit(w, &ev);
    rc = time_event(o, w, arena, when, &ev);
    w->n_pods = pods_before;
    return rc;
}

/* The middle one of the pending workloads with no pod placed, or -1: its
 * entry lies near the middle of the pending list, the most the memo moves
 * to take one out (it moves the entries on the shorter side). */
static int middle_unplaced(const struct gen_world *w)
{
    int i, k, placed, pass, n = 0, seen = 0;

    for (pass = 0; pass < 2; pass++)
        for (i = 0; i < w->n_wls; i++) {
            if (w->wls[i].phase != SCHED_PENDING)
                continue;
            for (k = placed = 0; k < w->wls[i].n_pods; k++)
                placed += w->wls[i].pods[k].node >= 0;
            if (placed)
                continue;
            if (pass == 0)
                n++;
            else if (seen++ == n / 2)
                return i;
        }
    return -1;
}

/* A pending workload cancelled before it started (it stays in the
 * snapshot, COMPLETED). */
static int time_cancel(const struct options *o, struct gen_world *w, struct sched_arena *arena,
                       const char *when)
{
    struct event ev = {"one cancellation", uncancel, cancel, middle_unplaced(w), {-1, 0}};

    return ev.workload < 0 ? 0 : time_event(o, w, arena, when, &ev);
}

static int first_running(const struct gen_world *w)
{
    int i;

    for (i = 0; i < w->n_wls; i++)
        if (w->wls[i].phase == SCHED_RUNNING && w->wls[i].n_pods == 1)
            return i;
    return -1;
}

static void uncomplete(struct gen_world *w, struct event *ev)
{
    w->wls[ev->workload].pods[0] = ev->pod;
    w->wls[ev->workload].phase = SCHED_RUNNING;
}

static void complete(struct gen_world *w, struct event *ev, struct sched_delta *d)
{
    w->wls[ev->workload].pods[0].node = -1;
    w->wls[ev->workload].pods[0].devices = 0;
    w->wls[ev->workload].phase = SCHED_COMPLETED;
    memset(d, 0, sizeof(*d));
    d->left = &ev->workload;
    d->n_left = 1;
}

/* A running workload of one pod completes (it stays in the snapshot,
 * COMPLETED, its pod gone). */
static int time_completion(const struct options *o, struct gen_world *w,
                           struct sched_arena *arena, const char *when)
{
    struct event ev = {"one completion", uncomplete, complete, first_running(w), {-1, 0}};

    if (ev.workload < 0)
        return 0;
    ev.pod = w->wls[ev.workload].pods[0];
    return time_event(o, w, arena, when, &ev);
}

/* Passes applied until one decides nothing (or `max` passes). */
static int settle(struct gen_world *w, struct sched_arena *arena, int max, int *passes,
                  double *total)
{
    struct sched_result res;
    double ms;
    int rc = 0;

    *passes = 0;
    *total = 0;
    do {
        rc = timed_cycle(w, arena, &res, &ms);
        if (rc != 0)
            return rc;
        *total += ms;
        (*passes)++;
        apply(w, &res);
    } while (res.n_decisions > 0 && *passes < max);
    return 0;
}

static int bench_event(const struct options *o, struct gen_world *w, struct sched_arena *arena)
{
    double total;
    int passes, rc;

    rc = settle(w, arena, 1, &passes, &total);
    if (rc == 0)
        rc = time_submission(o, w, arena, "(first)");
    if (rc == 0)
        rc = time_completion(o, w, arena, "(first)");
    if (rc == 0)
        rc = time_cancel(o, w, arena, "(first)");
    if (rc != 0 || o->settle == 0)
        return rc;
    rc = settle(w, arena, o->settle, &passes, &total);
    printf("settle         %d more passes, %.1f ms in all\n", passes, total);
    if (rc == 0)
        rc = time_submission(o, w, arena, "(settled)");
    if (rc == 0)
        rc = time_starting_submission(o, w, arena, "(settled)",
                                      o->gen.departments * o->gen.projects);
    if (rc == 0)
        rc = time_completion(o, w, arena, "(settled)");
    if (rc == 0)
        rc = time_cancel(o, w, arena, "(settled)");
    return rc;
}


/* ---- dry run ---- */

/* A dry run of a submission (or a what-if of a quota), two ways, each
 * giving the digest of every
 * pass of the turn it foresees (passes until one decides nothing, at most
 * DRY_MAX_PASSES, as a driver's turn):
 *   copy  what a what-if did: the workloads and their pods copied, the
 *         submission appended, full cycles on the copy;
 *   kept  a child forked (cow_run()) from the process that holds the memo
 *         of the last real cycle: the submission appended there, the passes
 *         through sched_cycle_next() (the delta "one submission", or
 *         "quotas moved", then empty ones), the digests sent back; the
 *         parent's memo is never written, nor its world (a quota is set
 *         before both ways and put back after).
 * The two digest lists must be equal, and after every dry run the
 * parent's memo answers a real cycle as a full cycle does. Each way is
 * timed in wall time and in CPU time (kept: the parent's, the fork
 * included, and the child's up to its answer: its exit's teardown runs
 * after the answer, beside the parent), less the digests' own time. */
#define DRY_MAX_PASSES 16

struct dry_turn {
    int passes, decisions;
    double digest_ms, digest_cpu_ms; /* taking the digests: not counted */
    double child_cpu_ms;             /* kept: the child's CPU time up to its answer */
    uint64_t digest[DRY_MAX_PASSES];
    struct sched_memo_stats stats;   /* kept: the memo's after the passes */
};

struct dry_ctx {
    struct gen_world *w;
    struct sched_memo *memo;         /* NULL: full cycles */
    struct sched_arena *arena;
    struct dry_turn turn;
    struct sched_delta first;        /* the first pass's delta, with a memo */
};


/* The passes on the world as it is (the submission already appended). */
static int dry_passes(struct dry_ctx *c)
{
    struct sched_delta d = c->first;
    struct sched_result res;
    struct sched_state st;
    struct sched_config cfg;
    double t0, c0;
    int rc = SCHED_OK;

    sched_config_default(&cfg);
    memset(&c->turn, 0, sizeof(c->turn));
    while (rc == SCHED_OK && c->turn.passes < DRY_MAX_PASSES) {
        gen_world_state(c->w, &st);
        sched_arena_reset(c->arena);
        rc = c->memo ? sched_cycle_next(c->memo, &st, &d, &cfg, c->arena, &res)
                     : sched_cycle(&st, &cfg, c->arena, &res);
        if (rc != SCHED_OK)
            break;
        t0 = now_ms();
        c0 = cpu_ms();
        c->turn.digest[c->turn.passes++] = result_digest(&res, c->w->n_wls);
        c->turn.digest_cpu_ms += cpu_ms() - c0;
        c->turn.digest_ms += now_ms() - t0;
        c->turn.decisions += res.n_decisions;
        apply_moved(c->w, &res);
        memset(&d, 0, sizeof(d));
        if (res.n_decisions == 0)
            break;
    }
    if (c->memo)
        sched_memo_stats(c->memo, &c->turn.stats);
    return rc == SCHED_OK ? 0 : -1;
}

/* In the forked child: the passes on the memo, the turn sent back. */
static int dry_child(void *arg, struct cow_out *out)
{
    struct dry_ctx *c = arg;

    if (dry_passes(c) != 0)
        return -1;
    c->turn.child_cpu_ms = cpu_ms();   /* a new process: its clock began at the fork */
    return cow_put(out, &c->turn, sizeof(c->turn));
}

/* copy: the workloads and pods copied (the world's pointers swapped to the
 * copies for the passes, then back). */
static int dry_copy(struct dry_ctx *c, struct dry_turn *turn)
{
    struct gen_world *w = c->w;
    struct sched_workload *wls = malloc(sizeof(*wls) * ((size_t)w->cap_wls + 1)), *own = w->wls;
    struct sched_pod *pods = malloc(sizeof(*pods) * (w->n_pods + 1)), *own_pods = w->pods;
    int i, rc = -1;

    if (wls && pods) {
        memcpy(wls, w->wls, sizeof(*wls) * (size_t)w->n_wls);
        memcpy(pods, w->pods, sizeof(*pods) * w->n_pods);
        for (i = 0; i < w->n_wls; i++)
            wls[i].pods = pods + (w->wls[i].pods - w->pods);
        w->wls = wls;
        w->pods = pods;
        c->memo = NULL;
        rc = dry_passes(c);
        *turn = c->turn;
        w->wls = own;
        w->pods = own_pods;
    }
    free(wls);
    free(pods);
    return rc;
}

/* kept: the passes in a child; its turn read back. */
static int dry_kept(struct dry_ctx *c, struct sched_memo *memo, struct dry_turn *turn)
{
    char *buf = NULL;
    size_t len = 0, at = 0;
    int rc;

    c->memo = memo;
    rc = cow_run(dry_child, c, &buf, &len);
    if (rc == 0)
        rc = cow_get(buf, len, &at, turn, sizeof(*turn));
    free(buf);
    return rc;
}

/* The parent's memo after the dry runs: a real cycle (empty delta) must be
 * a full cycle's, digest for digest. */
static int dry_memo_intact(struct gen_world *w, struct sched_memo *memo,
                           struct sched_arena *arena)
{
    struct sched_delta none = {0, 0, NULL, 0, 0, NULL, 0};
    struct sched_result res;
    struct sched_state st;
    struct sched_config cfg;
    uint64_t digest;

    sched_config_default(&cfg);
    gen_world_state(w, &st);
    sched_arena_reset(arena);
    if (sched_cycle_next(memo, &st, &none, &cfg, arena, &res) != SCHED_OK)
        return -1;
    digest = result_digest(&res, w->n_wls);
    sched_arena_reset(arena);
    if (sched_cycle(&st, &cfg, arena, &res) != SCHED_OK)
        return -1;
    return digest == result_digest(&res, w->n_wls) ? 0 : -1;
}

static void dry_print(const char *what, double *t, int n)
{
    qsort(t, (size_t)n, sizeof(double), cmp_double);
    printf("dry run        %s: p50 %.2f ms, p99 %.2f ms, min %.2f, max %.2f\n", what,
           percentile(t, n, 50), percentile(t, n, 99), t[0], t[n - 1]);
}

/* One series of what-ifs, each foreseen both ways: its times (wall and
 * CPU, each way), how many decided something and how many ran no full
 * cycle. */
struct dry_series {
    double *tc, *cc, *tk, *ck;
    int n, decided, fast;
};

static int series_new(struct dry_series *s, int n)
{
    memset(s, 0, sizeof(*s));
    s->tc = calloc((size_t)n + 1, sizeof(double));
    s->cc = calloc((size_t)n + 1, sizeof(double));
    s->tk = calloc((size_t)n + 1, sizeof(double));
    s->ck = calloc((size_t)n + 1, sizeof(double));
    return s->tc && s->cc && s->tk && s->ck ? 0 : -1;
}

static void series_free(struct dry_series *s)
{
    free(s->tc);
    free(s->cc);
    free(s->tk);
    free(s->ck);
}

/* The world as the what-if has it: both ways timed into run i of s, and
 * their digests compared. */
static int dry_both(struct dry_ctx *c, struct sched_memo *memo, struct dry_series *s, int i)
{
    struct dry_turn copy, kept;
    double t0 = now_ms(), c0 = cpu_ms();
    int rc = dry_copy(c, &copy);

    memset(&kept, 0, sizeof(kept));
    s->cc[i] = cpu_ms() - c0 - copy.digest_cpu_ms;
    s->tc[i] = now_ms() - t0 - copy.digest_ms;
    t0 = now_ms();
    c0 = cpu_ms();
    if (rc == 0)
        rc = dry_kept(c, memo, &kept);
    s->ck[i] = cpu_ms() - c0 + kept.child_cpu_ms - kept.digest_cpu_ms;
    s->tk[i] = now_ms() - t0 - kept.digest_ms;
    if (rc == 0 && (copy.passes != kept.passes ||
                    memcmp(copy.digest, kept.digest, sizeof(copy.digest)) != 0)) {
        fprintf(stderr, "allot-bench-cycle: what-if %d: the kept session's passes differ "
                "from full cycles on a copy\n", i);
        rc = -1;
    }
    s->fast += kept.stats.full == 1;   /* only the priming cycle ran in full */
    s->decided += kept.decisions > 0;
    s->n += rc == 0;
    return rc;
}

static void series_print(const char *what, struct dry_series *s)
{
    printf("dry run        %d %s on the settled cluster, %d of them deciding something; %d "
           "without a full cycle; every turn's digests equal\n", s->n, what, s->decided, s->fast);
    dry_print("copy + full passes, wall", s->tc, s->n);
    dry_print("copy + full passes, CPU", s->cc, s->n);
    dry_print("kept session, forked, wall", s->tk, s->n);
    dry_print("kept session, forked, CPU (parent and child)", s->ck, s->n);
}

/* o->dry_runs submissions (project i mod projects, one GPU; every other
 * one a workspace, which may preempt), each dry-run both ways on the world
 * as it is, then taken out again. */
static int dry_submissions(const struct options *o, struct dry_ctx *c, struct sched_memo *memo,
                           struct dry_series *s)
{
    struct gen_world *w = c->w;
    size_t pods_before = w->n_pods;
    int i, rc = 0;

    c->first = (struct sched_delta){0, 1, NULL, 0, 0, NULL, 0};
    for (i = 0; rc == 0 && i < o->dry_runs; i++) {
        if (gen_world_submit(w, gen_world_project(w, i % w->n_projects), 1, 1) < 0)
            return -1;
        if (i % 2)
            make_workspace(w);
        rc = dry_both(c, memo, s, i);
        w->n_wls--;
        w->n_pods = pods_before;
    }
    return rc;
}

/* o->quota_runs what-ifs of a quota: project i mod projects's deserved
 * GPUs in pool i mod pools doubled (odd i: it may reclaim) or halved,
 * each foreseen both ways, then put back. */
static int dry_quotas(const struct options *o, struct dry_ctx *c, struct sched_memo *memo,
                      struct dry_series *s)
{
    struct gen_world *w = c->w;
    int i, rc = 0;

    c->first = (struct sched_delta){0, 0, NULL, 0, 1, NULL, 0};
    for (i = 0; rc == 0 && i < o->quota_runs; i++) {
        int q = gen_world_project(w, i % w->n_projects), p = i % w->n_pools;
        struct sched_quota *qt = &w->quotas[((size_t)q * (size_t)w->n_pools + (size_t)p) *
                                            SCHED_NRES + SCHED_GPU], was = *qt;
        qt->deserved = i % 2 ? was.deserved * 2 + SCHED_MILLI : was.deserved / 2;
        rc = dry_both(c, memo, s, i);
        *qt = was;
    }
    return rc;
}

/* The pods bound to node freed, their workloads pending (what allotd's
 * what-if of a drain does, control/whatif.c); the node not ready. */
static void drain_node(struct gen_world *w, int node)
{
    int i, k;

    w->nodes[node].ready = 0;
    for (i = 0; i < w->n_wls; i++)
        for (k = 0; k < w->wls[i].n_pods; k++)
            if (w->wls[i].pods[k].node == node) {
                w->wls[i].pods[k].node = -1;
                w->wls[i].pods[k].devices = 0;
                w->wls[i].phase = SCHED_PENDING;
            }
}

/* o->drain_runs what-ifs of a drain: node (i x 7919) mod nodes drained
 * (drain_node()), told as a node gone down with quotas that may have
 * moved (as allotd tells it), each foreseen both ways, then put back. */
static int dry_drains(const struct options *o, struct dry_ctx *c, struct sched_memo *memo,
                      struct dry_series *s)
{
    struct gen_world *w = c->w;
    struct sched_workload *wls = malloc(sizeof(*wls) * ((size_t)w->n_wls + 1));
    struct sched_pod *pods = malloc(sizeof(*pods) * (w->n_pods + 1));
    int i, node, rc = wls && pods ? 0 : -1;

    for (i = 0; rc == 0 && i < o->drain_runs; i++) {
        node = (int)((int64_t)i * 7919 % w->n_nodes);
        memcpy(wls, w->wls, sizeof(*wls) * (size_t)w->n_wls);
        memcpy(pods, w->pods, sizeof(*pods) * w->n_pods);
        c->first = (struct sched_delta){0, 0, NULL, 0, 1, &node, 1};
        drain_node(w, node);
        rc = dry_both(c, memo, s, i);
        memcpy(w->wls, wls, sizeof(*wls) * (size_t)w->n_wls);   /* pods point at w->pods */
        memcpy(w->pods, pods, sizeof(*pods) * w->n_pods);
        w->nodes[node].ready = 1;
    }
    free(wls);
    free(pods);
    return rc;
}

static int bench_dry(const struct options *o, struct gen_world *w, struct sched_arena *arena)
{
    struct sched_delta full = {1, 0, NULL, 0, 0, NULL, 0};
    struct sched_memo *memo = sched_memo_new();
    struct sched_result res;
    struct sched_state st;
    struct sched_config cfg;
    struct dry_ctx c = {w, NULL, arena, {0}, {0}};
    struct dry_series sub, quota, drain;
    int rc = memo && series_new(&sub, o->dry_runs) == 0 &&
                     series_new(&quota, o->quota_runs) == 0 &&
                     series_new(&drain, o->drain_runs) == 0
                 ? 0 : -1;

    sched_config_default(&cfg);
    gen_world_state(w, &st);
    if (rc == 0)
        rc = sched_cycle_next(memo, &st, &full, &cfg, arena, &res) == SCHED_OK ? 0 : -1;
    if (rc == 0)
        rc = dry_submissions(o, &c, memo, &sub);
    if (rc == 0)
        rc = dry_quotas(o, &c, memo, &quota);
    if (rc == 0)
        rc = dry_drains(o, &c, memo, &drain);
    if (rc == 0 && dry_memo_intact(w, memo, arena) != 0) {
        fprintf(stderr, "allot-bench-cycle: the memo changed under the dry runs\n");
        rc = -1;
    }
    if (rc == 0 && o->dry_runs > 0) {
        series_print("submissions", &sub);
        measured.dry_p99 = percentile(sub.tk, sub.n, 99);
    }
    if (rc == 0 && o->quota_runs > 0) {
        series_print("quotas moved (what-ifs)", &quota);
        measured.quota_p99 = percentile(quota.tk, quota.n, 99);
    }
    if (rc == 0 && o->drain_runs > 0) {
        series_print("nodes drained (what-ifs)", &drain);
        measured.drain_p99 = percentile(drain.tk, drain.n, 99);
    }
    series_free(&sub);
    series_free(&quota);
    series_free(&drain);
    sched_memo_free(memo);
    return rc;
}

/* ---- cold fill ---- */

static int bench_cold(const struct options *o)
{
    struct gen_opts g = o->gen;
    struct sched_arena *arena = sched_arena_new();
    struct gen_world *w = NULL;
    struct sched_result res;
    double ms, total = 0;
    int passes = 0, placed = 0, rc = -1;

    g.fill_pct = 0;
    g.pending = o->cold;
    g.gang_pct = 0;
    g.pending_gpus = 1;
    if (!arena || gen_world_new(&g, &w) != 0)
        goto out;
    do {
        rc = timed_cycle(w, arena, &res, &ms);
        if (rc != 0)
            goto out;
        total += ms;
        placed += apply(w, &res);
        passes++;
    } while (res.n_decisions > 0 && passes < 100);
    measured.cold_rate = total > 0 ? placed / total * 1e3 : 0;
    printf("cold fill      %d one-GPU workloads on %d x %d GPUs: %d placed in %d passes, "
           "%.2f ms: %.0f placements/s\n",
           o->cold, g.nodes, g.gpus, placed, passes, total, total > 0 ? placed / total * 1e3 : 0);
out:
    gen_world_free(w);
    sched_arena_free(arena);
    return rc;
}

/* ---- The targets' verdicts ---- */

/* A figure of bench/README.md's Targets that this run measured: it applies
 * when the run has the target's sizes and mix (8 GPUs a node, 90% full,
 * 10% gangs; interactive-preemptible work and ranks only make it harder).
 * When the 1-minute load average before the run was above MAX_QUIET_LOAD
 * (other work on the machine), a figure is reported as indicative, never
 * as met or not met. */
struct target {
    const char *row;         /* the Targets table's row */
    int nodes, pending;
    const char *what;
    const double *value;     /* < 0: not measured in this run */
    double limit;
    int at_least;            /* 1: value >= limit; 0: value <= limit */
    const char *unit;
};

#define MAX_QUIET_LOAD 1.5

static const struct target targets[] = {
    {"1", 1000, 50000, "full cycle p50", &measured.full_p50, 50, 0, "ms"},
    {"1", 1000, 50000, "full cycle p99", &measured.full_p99, 200, 0, "ms"},
    {"2", 1000, 50000, "settled cycle after one event", &measured.event_settled, 1, 0, "ms"},
    {"3", 1000, 50000, "cold fill", &measured.cold_rate, 16000, 1, "placements/s"},
    {"9", 4000, 200000, "full cycle p50", &measured.full_p50, 150, 0, "ms"},
    {"10", 10000, 500000, "full cycle p50", &measured.full_p50, 500, 0, "ms"},
    {"10", 10000, 500000, "peak RSS", &measured.rss_mib, 2048, 0, "MiB"},
    {"10", 10000, 500000, "settled cycle after one event", &measured.event_settled, 1, 0, "ms"},
    {"11", 1000, 50000, "dry run p99", &measured.dry_p99, 10, 0, "ms"},
    {"11", 4000, 200000, "dry run p99", &measured.dry_p99, 50, 0, "ms"},
    {"11", 1000, 50000, "what-if of a quota p99", &measured.quota_p99, 10, 0, "ms"},
    {"11", 4000, 200000, "what-if of a quota p99", &measured.quota_p99, 50, 0, "ms"},
    {"11", 1000, 50000, "what-if of a drain p99", &measured.drain_p99, 10, 0, "ms"},
    {"11", 4000, 200000, "what-if of a drain p99", &measured.drain_p99, 50, 0, "ms"},
};

/* The 1-minute load average, or -1 when /proc/loadavg cannot be read. */
static double load_average(void)
{
    FILE *f = fopen("/proc/loadavg", "r");
    double load = -1;

    if (f) {
        if (fscanf(f, "%lf", &load) != 1)
            load = -1;
        fclose(f);
    }
    return load;
}

static int default_mix(const struct options *o)
{
    return o->gen.gpus == 8 && o->gen.fill_pct == 90 && o->gen.gang_pct == 10;
}

static void print_targets(const struct options *o, double load)
{
    size_t i;
    int any = 0;

    for (i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
        const struct target *t = &targets[i];
        double v = *t->value;
        int met = t->at_least ? v >= t->limit : v <= t->limit;

        if (t->nodes != o->gen.nodes || t->pending != o->gen.pending || !default_mix(o) ||
            v < 0)
            continue;
        any = 1;
        printf("target %-7s %s %.2f %s (%s %g): %s\n", t->row, t->what, v, t->unit,
               t->at_least ? ">=" : "<=", t->limit,
               load < 0 || load > MAX_QUIET_LOAD ? "indicative only, the machine was not quiet"
               : met                            ? "met"
                                                : "NOT met");
    }
    if (!any)
        printf("targets        none at these sizes (bench/README.md, Targets)\n");
    printf("load average   %.2f before the run (1 minute; above %.1f a figure is indicative)\n",
           load, MAX_QUIET_LOAD);
}

/* ---- main ---- */

static void print_world(const struct gen_world *w, const struct options *o, double ms)
{
    printf("cluster        %d nodes x %d GPUs, %d pools, %d queues (%d departments x %d "
           "projects)\n",
           o->gen.nodes, o->gen.gpus, o->gen.pools, w->n_queues, o->gen.departments,
           o->gen.projects);
    printf("workloads      %d running (%d gangs) on %.0f of %d GPUs, %d pending (%d gangs); "
           "generated in %.0f ms\n",
           w->n_running, w->n_gangs_running, (double)w->gpus_running / SCHED_MILLI,
           o->gen.nodes * o->gen.gpus, w->n_wls - w->n_running, w->n_gangs_pending, ms);
}

static void print_memory(const struct sched_arena *arena)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    measured.rss_mib = (double)ru.ru_maxrss / 1024.0;
    printf("memory         arena peak %.1f MiB, process peak RSS %.1f MiB\n",
           (double)sched_arena_peak(arena) / (1024.0 * 1024.0), (double)ru.ru_maxrss / 1024.0);
}

int main(int argc, char **argv)
{
    struct options o;
    struct gen_world *w = NULL;
    struct sched_arena *arena = NULL;
    double t0, load;
    int rc = 1;

    if (parse(argc, argv, &o) != 0)
        return 2;
    load = load_average();
    t0 = now_ms();
    arena = sched_arena_new();
    if (!arena || gen_world_new(&o.gen, &w) != 0) {
        fprintf(stderr, "allot-bench-cycle: out of memory\n");
        goto out;
    }
    print_world(w, &o, now_ms() - t0);
    if (bench_full(&o, w, arena) != 0 || bench_event(&o, w, arena) != 0)
        goto out;
    if ((o.dry_runs > 0 || o.quota_runs > 0 || o.drain_runs > 0) && bench_dry(&o, w, arena) != 0)
        goto out;
    print_memory(arena);
    if (o.cold > 0 && bench_cold(&o) != 0)
        goto out;
    print_targets(&o, load);
    rc = 0;
out:
    gen_world_free(w);
    sched_arena_free(arena);
    return rc;
}
