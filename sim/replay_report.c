/*
 * replay_report.c: the replay's results for people and for programs.
 *
 *   stdout            the headline tables (Markdown)
 *   DIR/report.md     the tables, per-project tables and the plots
 *   DIR/report.json   every number, with the time series
 *   DIR/alloc.svg     GPU allocation over time, one line per policy
 *   DIR/shares-POLICY.svg   allocated (solid) and fair share (dashed)
 *                     GPUs per project over time (the first 10 projects)
 *   DIR/inflation.svg unallocated GPUs against arrived demand
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

static void md_inflations(FILE *f, const struct replay_results *r)
{
    const struct replay_inflation *x;
    char a[32], b[32], c[32], d[32];
    int n;

    fprintf(f, "| policy | placed before the first failure | arrived GPUs at it | GPU "
            "allocation at it | unallocated GPUs at it | arrivals | failures | evictions | "
            "unallocated GPUs at x%g |\n|---|---|---|---|---|---|---|---|---|\n",
            r->m->opts->inflate);
    for (n = 0; n < r->n_inflations; n++) {
        x = &r->inflations[n];
        fprintf(f, "| %s | %d | %s | %s | %s | %d | %d | %d | %s |\n",
                replay_policy_name(x->policy), x->placed_before_failure,
                x->first_idle_gpus < 0 ? "n/a" : fmt_pct(a, 32, x->first_arrived_pct),
                x->first_idle_gpus < 0 ? "n/a" : fmt_pct(b, 32, x->first_alloc_pct),
                fmt_num(c, 32, x->first_idle_gpus, 1), x->arrivals, x->failures,
                x->preemptions, fmt_num(d, 32, x->end_idle_gpus, 1));
    }
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

static void md_body(FILE *f, const struct replay_results *r)
{
    int n;

    if (r->n_runs) {
        fprintf(f, "## Time replay\n\n");
        md_runs(f, r);
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
        fprintf(f, "\n## Inflation\n\nTasks drawn from the trace (seed %llu) arrive until "
                "their GPUs reach x%g of the cluster's; nothing leaves; a failure is a task left "
                "pending (the new one, or one evicted for it), which is then withdrawn.\n\n",
                (unsigned long long)r->m->opts->seed, r->m->opts->inflate);
        md_inflations(f, r);
        fprintf(f, "\n![Unallocated GPUs under inflation](inflation.svg)\n");
    }
}

static void headline(FILE *f, const struct replay_results *r)
{
    if (r->n_runs)
        md_runs(f, r);
    if (r->n_runs && r->n_inflations)
        fputc('\n', f);
    if (r->n_inflations)
        md_inflations(f, r);
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

static int write_md(const struct replay_results *r, char *err, size_t len)
{
    char path[4096];
    FILE *f = open_in(r->m->opts->report_dir, "report.md", path, sizeof(path), err, len);

    if (!f)
        return -1;
    fprintf(f, "# Trace replay\n\n");
    md_setup(f, r->m);
    md_body(f, r);
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

static int plot_inflation(const struct replay_results *r, char *err, size_t len)
{
    struct svg_series s[RP_NPOLICIES];
    struct svg_chart c = {"Unallocated GPUs under inflation", "arrived GPU demand (% of the "
                          "cluster)", "unallocated GPUs", 0, 0, s, 0};
    char path[4096];
    int n;

    for (n = 0; n < r->n_inflations && n < RP_NPOLICIES; n++) {
        s[n].name = replay_policy_name(r->inflations[n].policy);
        s[n].x = r->inflations[n].curve_x;
        s[n].y = r->inflations[n].curve_y;
        s[n].n = r->inflations[n].n_curve;
        s[n].color = r->inflations[n].policy;
        s[n].dashed = 0;
    }
    c.n_series = n;
    snprintf(path, sizeof(path), "%s/inflation.svg", r->m->opts->report_dir);
    return svg_write(path, &c, err, len);
}

static int write_plots(const struct replay_results *r, char *err, size_t len)
{
    int n;

    if (r->n_runs && plot_alloc(r, err, len) != 0)
        return -1;
    for (n = 0; n < r->n_runs; n++)
        if (plot_shares(r, &r->runs[n], err, len) != 0)
            return -1;
    if (r->n_inflations && plot_inflation(r, err, len) != 0)
        return -1;
    return 0;
}

/* ---- JSON ---- */

/* A number, or null for "does not apply" (< 0). */
static json_t *opt_real(double v)
{
    return v < 0 ? json_null() : json_real(v);
}

static json_t *real_array(const double *v, int n)
{
    json_t *a = json_array();
    int i;

    for (i = 0; a && i < n; i++)
        if (json_array_append_new(a, json_real(v[i])) != 0) {
            json_decref(a);
            return NULL;
        }
    return a;
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
    return json_pack("{s:s, s:s, s:i, s:f, s:s, s:o, s:i, s:o, s:s, s:f, s:f, s:b, s:I, s:f}",
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

static json_t *json_run(const struct replay_model *m, const struct replay_summary *s)
{
    json_t *tasks = json_pack("{s:i, s:i, s:i, s:i, s:i}", "arrived", s->arrived, "completed",
                              s->completed, "withdrawn", s->withdrawn, "rejected", s->rejected,
                              "leftPending", s->left_pending);

    return json_pack(
        "{s:s, s:o, s:f, s:f, s:f, s:o, s:o, s:{s:f, s:f}, s:{s:f, s:f}, s:{s:o, s:o}, s:i, "
        "s:f, s:i, s:i, s:i, s:o, s:o, s:o}",
        "policy", replay_policy_name(s->policy), "tasks", tasks, "windowSeconds", s->span_s,
        "gpuAllocationPct", s->alloc_pct, "busyPct", s->busy_pct, "busyAllocationPct",
        opt_real(s->sat_alloc_pct), "busyUnallocatedGpus", opt_real(s->sat_idle_gpus),
        "waitSeconds", "avg", s->wait_avg_s, "p95", s->wait_p95_s, "jctSeconds", "avg",
        s->jct_avg_s, "p95", s->jct_p95_s, "jainWhenBusy", "avg", opt_real(s->jain_avg), "min",
        opt_real(s->jain_min), "preemptions", s->preemptions, "gpuHoursLost", s->lost_gpu_h,
        "consolidationMoves", s->moves, "cycles", s->cycles, "coreCalls", s->core_calls,
        "projects", json_projects(m, s), "seriesDays", real_array(s->series_t, RP_BUCKETS),
        "gpuAllocationPctSeries", real_array(s->series_alloc, RP_BUCKETS));
}

static json_t *json_inflation(const struct replay_inflation *x)
{
    int failed = x->first_idle_gpus >= 0;

    return json_pack(
        "{s:s, s:i, s:o, s:o, s:o, s:i, s:i, s:i, s:f, s:f, s:o, s:o}", "policy",
        replay_policy_name(x->policy), "placedBeforeFirstFailure", x->placed_before_failure,
        "firstFailureArrivedPct", failed ? json_real(x->first_arrived_pct) : json_null(),
        "firstFailureAllocationPct", failed ? json_real(x->first_alloc_pct) : json_null(),
        "firstFailureUnallocatedGpus", opt_real(x->first_idle_gpus), "arrivals", x->arrivals,
        "failures", x->failures, "evictions", x->preemptions, "endAllocationPct",
        x->end_alloc_pct, "endUnallocatedGpus", x->end_idle_gpus, "curveArrivedPct",
        real_array(x->curve_x, x->n_curve), "curveUnallocatedGpus",
        real_array(x->curve_y, x->n_curve));
}

static json_t *json_report(const struct replay_results *r)
{
    json_t *runs = json_array(), *infl = json_array();
    int n;

    for (n = 0; runs && n < r->n_runs; n++)
        json_array_append_new(runs, json_run(r->m, &r->runs[n]));
    for (n = 0; infl && n < r->n_inflations; n++)
        json_array_append_new(infl, json_inflation(&r->inflations[n]));
    return json_pack("{s:o, s:o, s:o}", "setup", json_setup(r->m), "policies", runs,
                     "inflation", infl);
}

static int write_json(const struct replay_results *r, char *err, size_t len)
{
    char path[4096];
    json_t *doc = json_report(r);
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
    headline(stdout, r);
    if (!r->m->opts->report_dir)
        return 0;
    if (write_md(r, err, len) != 0 || write_json(r, err, len) != 0 ||
        write_plots(r, err, len) != 0)
        return -1;
    return 0;
}
