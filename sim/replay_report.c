/*
 * replay_report.c: the replay's results for people and for programs.
 *
 *   stdout            the headline tables (Markdown)
 *   DIR/report.md     the tables, per-project tables and the plots
 *   DIR/report.json   every number, with the time series
 *   DIR/alloc.svg     GPU allocation over time, one line per policy
 *   DIR/shares-POLICY.svg   allocated (solid) and fair share (dashed)
 *                     GPUs per project over time (the first 10 projects)
 *   DIR/inflation.svg GPU allocation against arrived demand under
 *                     inflation, one line per policy (the mean over seeds)
 * Inflation runs of one policy (one per seed) are summed up as the mean
 * and range of the unallocated GPUs at 100% arrived; for the openb traces
 * the figures published with the trace's paper stand beside them.
 * Files name the trace by its base name only, and hold no wall times, so
 * the same inputs give the same bytes.
 */
#include "replay_engine.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svg.h"

#define MAX_SHARE_PLOT 10

/* Unallocated GPUs at 100% arrived, mean of 10 seeds, as published by
 * Weng et al., "Beware of Fragmentation", USENIX ATC '23 (their simulator,
 * 6,212 GPUs), for the traces of its repository. */
static const struct published {
    const char *trace;     /* base name without .csv */
    double bestfit, gpupacking, dotprod, fgd;
} published[] = {
    {"openb_pod_list_default", 443, 511, 583, 296},
    {"openb_pod_list_gpushare100", 956, 1110, 1119, 830},
    {"openb_pod_list_multigpu50", 272, 245, 327, 181},
};

static const char *const published_names[] = {"BestFit", "GpuPacking", "DotProd", "FGD"};

/* The runs of one policy, one per seed (contiguous in r->inflations). */
struct infl_group {
    int policy, first, n;
    double at100_mean, at100_min, at100_max;   /* < 0: some seed never reached 100% */
    double alloc100_mean;
    double first_pct_mean;                     /* arrived % at the first failure; < 0: none */
    double arrivals_mean, failures_mean;
    int evictions;
    struct replay_gangs gangs;                 /* summed over the seeds */
    double *x, *y;                             /* [n_curve]: the mean curve, points with data */
    int n_curve;
};

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');

    return slash ? slash + 1 : path;
}

/* ---- Formatting ---- */

static const char *fmt_pct(char *buf, size_t len, double v)
{
    if (v < 0)
        snprintf(buf, len, "n/a");
    else
        snprintf(buf, len, "%.1f%%", v);
    return buf;
}

static const char *fmt_num(char *buf, size_t len, double v, int decimals)
{
    if (v < 0)
        snprintf(buf, len, "n/a");
    else
        snprintf(buf, len, "%.*f", decimals, v);
    return buf;
}

/* Seconds as s, min or h, whichever reads best. */
static const char *fmt_dur(char *buf, size_t len, double s)
{
    if (s < 120)
        snprintf(buf, len, "%.1f s", s);
    else if (s < 7200)
        snprintf(buf, len, "%.1f min", s / 60);
    else
        snprintf(buf, len, "%.1f h", s / 3600);
    return buf;
}

/* ---- Markdown ---- */

static void md_setup(FILE *f, const struct replay_model *m)
{
    const struct replay_opts *o = m->opts;
    int p;

    fprintf(f, "Cluster: %s, %d nodes, %.0f GPUs of %d models (", base_name(o->nodes_file),
            m->t->n_nodes, (double)m->total_gpu_milli / 1000.0, m->t->n_models);
    for (p = 0; p < m->t->n_models; p++)
        fprintf(f, "%s%s", p ? ", " : "", m->t->models[p]);
    fprintf(f, "), %s. Tasks: %s, %d. Projects: %d, GPU quotas %s. Scheduling period %g s, "
            "arrivals x%g, gangs %s, seed %llu.\n\n",
            o->single_pool ? "one node pool (the model is the node type)"
                           : "a node pool per model, tried in this order",
            base_name(o->pods_file), m->t->n_tasks,
            m->n_projects, o->quota_file ? "from the quota file" : "split evenly per pool",
            (double)o->period_ms / 1000.0, o->speedup, o->gangs ? "synthesised" : "off",
            (unsigned long long)o->seed);
    if (o->rack_nodes > 0)
        fprintf(f, "Topology: racks of %d nodes of a pool, blocks of %d racks; %s.\n\n",
                o->rack_nodes, o->block_racks,
                o->topology_blind ? "the pools have none (topology-blind: racks only counted)"
                                  : "every pool's is block, rack, host");
}

static double share_pct(int part, int whole)
{
    return whole > 0 ? 100.0 * part / whole : -1;
}

/* One row of a gang table: the gangs started, the shares inside one rack
 * and one block, and the unallocated GPUs the table names. */
static void md_gang_row(FILE *f, int policy, const struct replay_gangs *g, double idle)
{
    char a[32], b[32], c[32];

    fprintf(f, "| %s | %d | %s | %s | %s |\n", replay_policy_name(policy), g->placed,
            fmt_pct(a, 32, share_pct(g->one_rack, g->placed)),
            fmt_pct(b, 32, share_pct(g->one_block, g->placed)), fmt_num(c, 32, idle, 1));
}

/* With --racks: where the gangs started (every start of a gang counts). */
static void md_gangs(FILE *f, const struct replay_results *r)
{
    int n;

    if (r->m->opts->rack_nodes <= 0)
        return;
    fprintf(f, "\n| policy | gangs started | inside one rack | inside one block | idle GPUs when "
            "busy |\n|---|---|---|---|---|\n");
    for (n = 0; n < r->n_runs; n++)
        md_gang_row(f, r->runs[n].policy, &r->runs[n].gangs, r->runs[n].sat_idle_gpus);
}

static void md_runs(FILE *f, const struct replay_results *r)
{
    const struct replay_summary *s;
    char a[32], b[32], c[32], d[32], e[32], g[32], h[32], i[32], j[32], k[32];
    int n;

    fprintf(f, "| policy | GPU allocation | allocation when busy | idle GPUs when busy | busy "
            "time | wait avg | wait p95 | JCT avg | JCT p95 | Jain when busy | preemptions "
            "| GPU-h lost |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (n = 0; n < r->n_runs; n++) {
        s = &r->runs[n];
        fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d | %s |\n",
                replay_policy_name(s->policy), fmt_pct(a, 32, s->alloc_pct),
                fmt_pct(b, 32, s->sat_alloc_pct), fmt_num(c, 32, s->sat_idle_gpus, 1),
                fmt_pct(d, 32, s->busy_pct), fmt_dur(e, 32, s->wait_avg_s),
                fmt_dur(g, 32, s->wait_p95_s), fmt_dur(h, 32, s->jct_avg_s),
                fmt_dur(i, 32, s->jct_p95_s), fmt_num(j, 32, s->jain_avg, 3),
                s->preemptions, fmt_num(k, 32, s->lost_gpu_h, 1));
    }
}

static const struct published *published_for(const struct replay_model *m)
{
    const char *name = base_name(m->opts->pods_file);
    size_t n = strlen(name), k;

    if (n > 4 && strcmp(name + n - 4, ".csv") == 0)
        n -= 4;
    for (k = 0; k < sizeof(published) / sizeof(published[0]); k++)
        if (strlen(published[k].trace) == n && strncmp(published[k].trace, name, n) == 0)
            return &published[k];
    return NULL;
}

/* The groups of r->inflations: one per policy, in run order. */
static int group_inflations(const struct replay_results *r, struct infl_group *g)
{
    int n = 0, i;

    for (i = 0; i < r->n_inflations; i++) {
        if (n == 0 || r->inflations[i].policy != g[n - 1].policy) {
            memset(&g[n], 0, sizeof(g[n]));
            g[n].policy = r->inflations[i].policy;
            g[n].first = i;
            n++;
        }
        g[n - 1].n++;
    }
    return n;
}

static void sum_at100(const struct replay_results *r, struct infl_group *g)
{
    int i;

    g->at100_min = g->at100_max = g->at100_mean = g->alloc100_mean = 0;
    for (i = g->first; i < g->first + g->n; i++) {
        const struct replay_inflation *x = &r->inflations[i];
        if (x->at100_idle_gpus < 0) {
            g->at100_mean = g->at100_min = g->at100_max = g->alloc100_mean = -1;
            return;
        }
        g->at100_mean += x->at100_idle_gpus / g->n;
        g->alloc100_mean += x->at100_alloc_pct / g->n;
        if (i == g->first || x->at100_idle_gpus < g->at100_min)
            g->at100_min = x->at100_idle_gpus;
        if (i == g->first || x->at100_idle_gpus > g->at100_max)
            g->at100_max = x->at100_idle_gpus;
    }
}

/* The mean curve: at each arrived percent, the mean over the seeds that
 * have a point there. */
static int sum_curve(const struct replay_results *r, struct infl_group *g)
{
    int n = r->inflations[g->first].n_curve, k, i, seen;
    double sum;

    g->x = calloc((size_t)n + 1, sizeof(double));
    g->y = calloc((size_t)n + 1, sizeof(double));
    if (!g->x || !g->y)
        return -1;
    for (k = 0; k < n; k++) {
        for (sum = 0, seen = 0, i = g->first; i < g->first + g->n; i++)
            if (r->inflations[i].curve[k] >= 0) {
                sum += r->inflations[i].curve[k];
                seen++;
            }
        if (seen) {
            g->x[g->n_curve] = k;
            g->y[g->n_curve++] = sum / seen;
        }
    }
    return 0;
}

static int summarize_group(const struct replay_results *r, struct infl_group *g)
{
    int i, failed = 0;

    sum_at100(r, g);
    g->first_pct_mean = 0;
    for (i = g->first; i < g->first + g->n; i++) {
        const struct replay_inflation *x = &r->inflations[i];
        g->arrivals_mean += (double)x->arrivals / g->n;
        g->failures_mean += (double)x->failures / g->n;
        g->evictions += x->preemptions;
        g->gangs.placed += x->gangs.placed;
        g->gangs.one_rack += x->gangs.one_rack;
        g->gangs.one_block += x->gangs.one_block;
        if (x->first_idle_gpus >= 0) {
            g->first_pct_mean += x->first_arrived_pct;
            failed++;
        }
    }
    g->first_pct_mean = failed ? g->first_pct_mean / failed : -1;
    return sum_curve(r, g);
}

static void free_groups(struct infl_group *g, int n)
{
    int i;

    for (i = 0; i < n; i++) {
        free(g[i].x);
        free(g[i].y);
    }
}

/* The groups, summed up; -1: out of memory (err set). */
static int make_groups(const struct replay_results *r, struct infl_group *g, int *n, char *err,
                       size_t len)
{
    int i;

    *n = group_inflations(r, g);
    for (i = 0; i < *n; i++)
        if (summarize_group(r, &g[i]) != 0) {
            free_groups(g, *n);
            snprintf(err, len, "out of memory");
            return -1;
        }
    return 0;
}

static void md_inflations(FILE *f, const struct replay_results *r, const struct infl_group *g,
                          int n_groups)
{
    const struct published *pub = published_for(r->m);
    const double *figures = pub ? &pub->bestfit : NULL;
    char a[32], b[32], c[32], d[32], e[32];
    int n;

    fprintf(f, "| policy | unallocated GPUs at 100%% arrived: mean | min | max | GPU allocation "
            "at 100%% | first failure at (arrived) | arrivals | failures | evictions |\n"
            "|---|---|---|---|---|---|---|---|---|\n");
    for (n = 0; n < n_groups; n++)
        fprintf(f, "| %s | %s | %s | %s | %s | %s | %.0f | %.0f | %d |\n",
                replay_policy_name(g[n].policy), fmt_num(a, 32, g[n].at100_mean, 1),
                fmt_num(b, 32, g[n].at100_min, 1), fmt_num(c, 32, g[n].at100_max, 1),
                fmt_pct(d, 32, g[n].alloc100_mean), fmt_pct(e, 32, g[n].first_pct_mean),
                g[n].arrivals_mean, g[n].failures_mean, g[n].evictions);
    for (n = 0; figures && n < 4; n++)
        fprintf(f, "| %s (published) | %.0f | | | | | | | |\n", published_names[n], figures[n]);
}

/* With --racks: where the arrivals that started as gangs went, over the seeds. */
static void md_infl_gangs(FILE *f, const struct replay_results *r, const struct infl_group *g,
                          int n_groups)
{
    int n;

    if (r->m->opts->rack_nodes <= 0)
        return;
    fprintf(f, "\n| policy | gangs started (every seed) | inside one rack | inside one block | "
            "unallocated GPUs at 100%% arrived, mean |\n|---|---|---|---|---|\n");
    for (n = 0; n < n_groups; n++)
        md_gang_row(f, g[n].policy, &g[n].gangs, g[n].at100_mean);
}

static void md_tasks(FILE *f, const struct replay_results *r)
{
    const struct replay_summary *s;
    int n;

    fprintf(f, "| policy | arrived | completed | withdrawn | rejected | left pending | cycles "
            "| core calls | consolidation moves |\n|---|---|---|---|---|---|---|---|---|\n");
    for (n = 0; n < r->n_runs; n++) {
        s = &r->runs[n];
        fprintf(f, "| %s | %d | %d | %d | %d | %d | %d | %d | %d |\n",
                replay_policy_name(s->policy), s->arrived, s->completed, s->withdrawn,
                s->rejected, s->left_pending, s->cycles, s->core_calls, s->moves);
    }
}

static void md_projects(FILE *f, const struct replay_results *r)
{
    const struct replay_model *m = r->m;
    const struct replay_summary *s;
    char a[32], b[32], c[32];
    int n, k;

    for (n = 0; n < r->n_runs; n++) {
        s = &r->runs[n];
        fprintf(f, "\n%s:\n\n| project | deserved GPUs | allocated GPUs (avg) | fair share "
                "when busy (avg) | busy time below fair share |\n|---|---|---|---|---|\n",
                replay_policy_name(s->policy));
        for (k = 0; k < m->n_projects; k++)
            fprintf(f, "| %s | %s | %.1f | %s | %s |\n", m->project_names[k],
                    m->deserved_milli[k] < 0 ? "unlimited"
                                             : fmt_num(a, 32, m->deserved_milli[k] / 1000.0, 1),
                    s->proj_alloc[k], fmt_num(b, 32, s->proj_fair[k], 1),
                    fmt_pct(c, 32, s->proj_below_pct[k]));
    }
}

static const char notes[] =
    "Busy: after a scheduling cycle, GPU work was left pending (the policy could not place "
    "what was asked). Allocation and idle GPUs when busy are averaged over busy time; Jain's "
    "index is over allocated / fair share of the projects with a fair share, averaged over "
    "busy time (outside it every project holds what it asks). Wait: first start - arrival; "
    "JCT: completion - arrival, over completed tasks. An eviction loses the run so far "
    "(GPU-h lost).\n";

static void md_body(FILE *f, const struct replay_results *r, const struct infl_group *g,
                    int n_groups)
{
    const struct replay_opts *o = r->m->opts;
    int n;

    if (r->n_runs) {
        fprintf(f, "## Time replay\n\n");
        md_runs(f, r);
        md_gangs(f, r);
        fprintf(f, "\n%s\n", notes);
        md_tasks(f, r);
        fprintf(f, "\n### Projects\n");
        md_projects(f, r);
        fprintf(f, "\n![GPU allocation over time](alloc.svg)\n");
        for (n = 0; n < r->n_runs; n++)
            fprintf(f, "\n![%s: project shares](shares-%s.svg)\n",
                    replay_policy_name(r->runs[n].policy), replay_policy_name(r->runs[n].policy));
    }
    if (r->n_inflations) {
        fprintf(f, "\n## Inflation\n\nAs in the trace's paper: the trace's tasks in a random "
                "order (seeds %llu to %llu), more drawn from it until their GPUs reach x%g of "
                "the cluster's; nothing leaves; a task left pending (the new one, or one "
                "evicted for it) fails and is withdrawn, and the arrivals go on. Unallocated "
                "GPUs at 100%%: once the GPUs asked by the arrived tasks reach the cluster's "
                "(the mean over the arrivals between 99.5%% and 100.5%%), mean and range over "
                "the seeds. Published: the figures of Weng et al., USENIX ATC '23 (their "
                "simulator, mean of 10 seeds).\n\n",
                (unsigned long long)o->seed, (unsigned long long)o->last_seed, o->inflate);
        md_inflations(f, r, g, n_groups);
        md_infl_gangs(f, r, g, n_groups);
        fprintf(f, "\n![GPU allocation under inflation](inflation.svg)\n");
    }
}

/* What each policy that ran places by, and which is allot's default. */
static void md_policies(FILE *f, const struct replay_opts *o)
{
    const char *sep = "";
    int p;

    fprintf(f, "Placement:");
    for (p = 0; p < RP_NPOLICIES; p++) {
        if (!(o->policies >> p & 1))
            continue;
        fprintf(f, "%s %s %s%s", sep, replay_policy_name(p), replay_policy_placement_word(p),
                p != RP_FIFO && replay_policy_placement(p) == SCHED_DEFAULT_GPU_PLACEMENT
                    ? " (the default of a pool that names none)"
                    : "");
        sep = ",";
    }
    fprintf(f, ".\n");
}

static void headline(FILE *f, const struct replay_results *r, const struct infl_group *g,
                     int n_groups)
{
    if (r->n_runs) {
        md_runs(f, r);
        md_gangs(f, r);
    }
    if (r->n_runs && r->n_inflations)
        fputc('\n', f);
    if (r->n_inflations) {
        md_inflations(f, r, g, n_groups);
        md_infl_gangs(f, r, g, n_groups);
    }
    fputc('\n', f);
    md_policies(f, r->m->opts);
}

/* ---- Files ---- */

static FILE *open_in(const char *dir, const char *name, char *path, size_t plen, char *err,
                     size_t len)
{
    FILE *f;

    snprintf(path, plen, "%s/%s", dir, name);
    f = fopen(path, "w");
    if (!f)
        snprintf(err, len, "%s: %s", path, strerror(errno));
    return f;
}

static int close_file(FILE *f, const char *path, char *err, size_t len)
{
    int rc = ferror(f) | fclose(f);

    if (rc != 0)
        snprintf(err, len, "%s: write error", path);
    return rc ? -1 : 0;
}

static int write_md(const struct replay_results *r, const struct infl_group *g, int n_groups,
                    char *err, size_t len)
{
    char path[4096];
    FILE *f = open_in(r->m->opts->report_dir, "report.md", path, sizeof(path), err, len);

    if (!f)
        return -1;
    fprintf(f, "# Trace replay\n\n");
    md_setup(f, r->m);
    md_policies(f, r->m->opts);
    fputc('\n', f);
    md_body(f, r, g, n_groups);
    return close_file(f, path, err, len);
}

/* ---- Plots ---- */

static int plot_alloc(const struct replay_results *r, char *err, size_t len)
{
    struct svg_series s[RP_NPOLICIES];
    struct svg_chart c = {"GPU allocation over time", "days since the first arrival",
                          "GPUs allocated (%)", 0, 0, s, 0};
    char path[4096];
    int n;

    for (n = 0; n < r->n_runs && n < RP_NPOLICIES; n++) {
        s[n].name = replay_policy_name(r->runs[n].policy);
        s[n].x = r->runs[n].series_t;
        s[n].y = r->runs[n].series_alloc;
        s[n].n = RP_BUCKETS;
        s[n].color = r->runs[n].policy;
        s[n].dashed = 0;
    }
    c.n_series = n;
    snprintf(path, sizeof(path), "%s/alloc.svg", r->m->opts->report_dir);
    return svg_write(path, &c, err, len);
}

static int plot_shares(const struct replay_results *r, const struct replay_summary *sum,
                       char *err, size_t len)
{
    struct svg_series s[2 * MAX_SHARE_PLOT];
    char names[2 * MAX_SHARE_PLOT][80], title[96], path[4096];
    struct svg_chart c = {title, "days since the first arrival", "GPUs", 0, 0, s, 0};
    int k, h, n = 0;

    snprintf(title, sizeof(title), "%s: allocated (solid) and fair share (dashed)",
             replay_policy_name(sum->policy));
    for (k = 0; k < r->m->n_projects && k < MAX_SHARE_PLOT; k++) {
        for (h = 0; h < 2; h++, n++) {
            snprintf(names[n], sizeof(names[n]), "%.60s %s", r->m->project_names[k],
                     h ? "fair" : "allocated");
            s[n].name = names[n];
            s[n].x = sum->series_t;
            s[n].y = &sum->series_proj[((size_t)k + (size_t)h * (size_t)r->m->n_projects) *
                                       RP_BUCKETS];
            s[n].n = RP_BUCKETS;
            s[n].color = k;
            s[n].dashed = h;
        }
    }
    c.n_series = n;
    snprintf(path, sizeof(path), "%s/shares-%s.svg", r->m->opts->report_dir,
             replay_policy_name(sum->policy));
    return svg_write(path, &c, err, len);
}

static int plot_inflation(const struct replay_results *r, const struct infl_group *g,
                          int n_groups, char *err, size_t len)
{
    struct svg_series s[RP_NPOLICIES];
    struct svg_chart c = {"GPU allocation under inflation (mean over seeds)",
                          "arrived GPU demand (% of the cluster)", "GPUs allocated (%)", 0, 0,
                          s, 0};
    char path[4096];
    int n;

    for (n = 0; n < n_groups && n < RP_NPOLICIES; n++) {
        s[n].name = replay_policy_name(g[n].policy);
        s[n].x = g[n].x;
        s[n].y = g[n].y;
        s[n].n = g[n].n_curve;
        s[n].color = g[n].policy;
        s[n].dashed = 0;
    }
    c.n_series = n;
    snprintf(path, sizeof(path), "%s/inflation.svg", r->m->opts->report_dir);
    return svg_write(path, &c, err, len);
}

static int write_plots(const struct replay_results *r, const struct infl_group *g,
                       int n_groups, char *err, size_t len)
{
    int n;

    if (r->n_runs && plot_alloc(r, err, len) != 0)
        return -1;
    for (n = 0; n < r->n_runs; n++)
        if (plot_shares(r, &r->runs[n], err, len) != 0)
            return -1;
    if (r->n_inflations && plot_inflation(r, g, n_groups, err, len) != 0)
        return -1;
    return 0;
}

/* ---- JSON ---- */

/* A number, or null for "does not apply" (< 0). */
static json_t *opt_real(double v)
{
    return v < 0 ? json_null() : json_real(v);
}

/* An array of the n numbers at v, each made by one (json_real, or
 * opt_real where a negative one is null). */
static json_t *number_array(const double *v, int n, json_t *(*one)(double))
{
    json_t *a = json_array();
    int i;

    for (i = 0; a && i < n; i++)
        if (json_array_append_new(a, one(v[i])) != 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

static json_t *real_array(const double *v, int n)
{
    return number_array(v, n, json_real);
}

static json_t *json_setup(const struct replay_model *m)
{
    const struct replay_opts *o = m->opts;
    json_t *pools = json_array(), *projects = json_array();
    int p, k;

    for (p = 0; pools && p < m->layout.n_pools; p++)
        json_array_append_new(pools, json_pack("{s:s, s:i}", "name", m->layout.pools[p].name,
                                               "nodes", m->pool_first[p + 1] - m->pool_first[p]));
    for (k = 0; projects && k < m->n_projects; k++)
        json_array_append_new(projects, json_pack("{s:s, s:o}", "name", m->project_names[k],
                                                  "deservedGpus", opt_real(
                                                      m->deserved_milli[k] / 1000.0)));
    return json_pack("{s:s, s:s, s:i, s:f, s:s, s:o, s:i, s:o, s:s, s:f, s:f, s:b, s:I, s:I, "
                     "s:f}",
                     "nodesFile", base_name(o->nodes_file),
                     "podsFile", base_name(o->pods_file),
                     "nodes", m->t->n_nodes,
                     "gpus", (double)m->total_gpu_milli / 1000.0,
                     "poolLayout", o->single_pool ? "single" : "model",
                     "pools", pools,
                     "tasks", m->t->n_tasks,
                     "projects", projects,
                     "quotas", o->quota_file ? "file" : "even-split",
                     "periodSeconds", (double)o->period_ms / 1000.0,
                     "speedup", o->speedup,
                     "gangs", o->gangs,
                     "seed", (json_int_t)o->seed,
                     "lastSeed", (json_int_t)o->last_seed,
                     "inflate", o->inflate);
}

static json_t *json_projects(const struct replay_model *m, const struct replay_summary *s)
{
    json_t *a = json_array();
    int k;

    for (k = 0; a && k < m->n_projects; k++)
        json_array_append_new(a, json_pack(
            "{s:s, s:f, s:o, s:o, s:o, s:o}", "name", m->project_names[k], "allocatedGpus",
            s->proj_alloc[k], "fairShareGpusWhenBusy", opt_real(s->proj_fair[k]),
            "belowFairSharePct", opt_real(s->proj_below_pct[k]), "allocatedSeries",
            real_array(&s->series_proj[(size_t)k * RP_BUCKETS], RP_BUCKETS), "fairSeries",
            real_array(&s->series_proj[((size_t)k + (size_t)m->n_projects) * RP_BUCKETS],
                       RP_BUCKETS)));
    return a;
}

static json_t *json_gangs(const struct replay_gangs *g)
{
    return json_pack("{s:i, s:i, s:i}", "started", g->placed, "oneRack", g->one_rack, "oneBlock",
                     g->one_block);
}

static json_t *json_run(const struct replay_model *m, const struct replay_summary *s)
{
    json_t *tasks = json_pack("{s:i, s:i, s:i, s:i, s:i}", "arrived", s->arrived, "completed",
                              s->completed, "withdrawn", s->withdrawn, "rejected", s->rejected,
                              "leftPending", s->left_pending);
    json_t *run;

    run = json_pack(
        "{s:s, s:s, s:o, s:f, s:f, s:f, s:o, s:o, s:{s:f, s:f}, s:{s:f, s:f}, s:{s:o, s:o}, "
        "s:i, s:f, s:i, s:i, s:i, s:o, s:o, s:o}",
        "policy", replay_policy_name(s->policy), "placement",
        replay_policy_placement_word(s->policy), "tasks", tasks, "windowSeconds", s->span_s,
        "gpuAllocationPct", s->alloc_pct, "busyPct", s->busy_pct, "busyAllocationPct",
        opt_real(s->sat_alloc_pct), "busyUnallocatedGpus", opt_real(s->sat_idle_gpus),
        "waitSeconds", "avg", s->wait_avg_s, "p95", s->wait_p95_s, "jctSeconds", "avg",
        s->jct_avg_s, "p95", s->jct_p95_s, "jainWhenBusy", "avg", opt_real(s->jain_avg), "min",
        opt_real(s->jain_min), "preemptions", s->preemptions, "gpuHoursLost", s->lost_gpu_h,
        "consolidationMoves", s->moves, "cycles", s->cycles, "coreCalls", s->core_calls,
        "projects", json_projects(m, s), "seriesDays", real_array(s->series_t, RP_BUCKETS),
        "gpuAllocationPctSeries", real_array(s->series_alloc, RP_BUCKETS));
    if (run && m->opts->rack_nodes > 0)
        json_object_set_new(run, "gangs", json_gangs(&s->gangs));
    return run;
}


static json_t *json_inflation(const struct replay_inflation *x)
{
    int failed = x->first_idle_gpus >= 0;

    return json_pack(
        "{s:s, s:I, s:i, s:o, s:o, s:o, s:o, s:o, s:i, s:i, s:i, s:f, s:f, s:o}", "policy",
        replay_policy_name(x->policy), "seed", (json_int_t)x->seed, "placedBeforeFirstFailure",
        x->placed_before_failure,
        "firstFailureArrivedPct", failed ? json_real(x->first_arrived_pct) : json_null(),
        "firstFailureAllocationPct", failed ? json_real(x->first_alloc_pct) : json_null(),
        "firstFailureUnallocatedGpus", opt_real(x->first_idle_gpus),
        "unallocatedGpusAt100", opt_real(x->at100_idle_gpus),
        "allocationPctAt100", opt_real(x->at100_alloc_pct), "arrivals", x->arrivals,
        "failures", x->failures, "evictions", x->preemptions, "endAllocationPct",
        x->end_alloc_pct, "endUnallocatedGpus", x->end_idle_gpus,
        /* the curve: null where no arrival fell */
        "allocationPctByArrivedPct", number_array(x->curve, x->n_curve, opt_real));
}

static json_t *json_group(const struct infl_group *g)
{
    return json_pack("{s:s, s:s, s:i, s:{s:o, s:o, s:o}, s:o, s:o, s:o}", "policy",
                     replay_policy_name(g->policy), "placement",
                     replay_policy_placement_word(g->policy), "seeds", g->n,
                     "unallocatedGpusAt100",
                     "mean", opt_real(g->at100_mean), "min", opt_real(g->at100_min), "max",
                     opt_real(g->at100_max), "allocationPctAt100", opt_real(g->alloc100_mean),
                     "curveArrivedPct", real_array(g->x, g->n_curve), "curveAllocationPct",
                     real_array(g->y, g->n_curve));
}

static json_t *json_published(const struct replay_model *m)
{
    const struct published *p = published_for(m);

    if (!p)
        return json_null();
    return json_pack("{s:s, s:{s:f, s:f, s:f, s:f}}", "source",
                     "Weng et al., Beware of Fragmentation, USENIX ATC '23: unallocated GPUs at "
                     "100% arrived, mean of 10 seeds", "unallocatedGpusAt100",
                     published_names[0], p->bestfit, published_names[1], p->gpupacking,
                     published_names[2], p->dotprod, published_names[3], p->fgd);
}

static json_t *json_report(const struct replay_results *r, const struct infl_group *g,
                           int n_groups)
{
    json_t *runs = json_array(), *infl = json_array(), *sum = json_array();
    int n;

    for (n = 0; runs && n < r->n_runs; n++)
        json_array_append_new(runs, json_run(r->m, &r->runs[n]));
    for (n = 0; infl && n < r->n_inflations; n++) {
        json_t *x = json_inflation(&r->inflations[n]);
        if (x && r->m->opts->rack_nodes > 0)
            json_object_set_new(x, "gangs", json_gangs(&r->inflations[n].gangs));
        json_array_append_new(infl, x);
    }
    for (n = 0; sum && n < n_groups; n++)
        json_array_append_new(sum, json_group(&g[n]));
    return json_pack("{s:o, s:o, s:o, s:o, s:o}", "setup", json_setup(r->m), "policies", runs,
                     "inflation", infl, "inflationSummary", sum, "published",
                     json_published(r->m));
}

static int write_json(const struct replay_results *r, const struct infl_group *g, int n_groups,
                      char *err, size_t len)
{
    char path[4096];
    json_t *doc = json_report(r, g, n_groups);
    int rc;

    snprintf(path, sizeof(path), "%s/report.json", r->m->opts->report_dir);
    if (!doc) {
        snprintf(err, len, "%s: out of memory", path);
        return -1;
    }
    rc = json_dump_file(doc, path, JSON_INDENT(1) | JSON_PRESERVE_ORDER |
                                       JSON_REAL_PRECISION(6));
    json_decref(doc);
    if (rc != 0)
        snprintf(err, len, "%s: cannot write", path);
    return rc ? -1 : 0;
}

int replay_report(const struct replay_results *r, char *err, size_t len)
{
    struct infl_group g[RP_NPOLICIES];
    int n_groups, rc = 0;

    if (make_groups(r, g, &n_groups, err, len) != 0)
        return -1;
    headline(stdout, r, g, n_groups);
    if (r->m->opts->report_dir &&
        (write_md(r, g, n_groups, err, len) != 0 || write_json(r, g, n_groups, err, len) != 0 ||
         write_plots(r, g, n_groups, err, len) != 0))
        rc = -1;
    free_groups(g, n_groups);
    return rc;
}
