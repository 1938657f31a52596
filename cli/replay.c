/*
 * replay.c: `allot replay`, the command line and the order of the runs.
 *
 * Step 1: read the options; a bad one is a usage error (exit 2).
 * Step 2: read the node, task and quota files (trace.c); a bad row is
 *         "FILE:LINE: problem" on stderr (exit 2).
 * Step 3: build the model (replay_model.c), shared by every run.
 * Step 4: for each policy asked, in the order fifo, allot, allot-spread:
 *         the time replay when the task file has times, then the
 *         inflation runs when --inflate is given. Runs are independent
 *         (each has its own world; the model is only read), so up to
 *         --jobs of them go at once, one thread each; each writes only its
 *         own result, so the output does not depend on the threads. A run
 *         that fails says why on stderr (exit 1).
 * Step 5: the report (replay_report.c): the headline tables on stdout,
 *         and the files with --report DIR. --timing adds wall times on
 *         stderr (never in the report, which depends only on the inputs).
 */
#include "replay.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "replay_engine.h"

enum { RP_EXIT_OK = 0, RP_EXIT_FAILED = 1, RP_EXIT_USAGE = 2 };

#define RP_MAX_JOBS 64   /* threads */
#define RP_MAX_SEEDS 1000
#define POLICY_WORDS "fifo, bestfit, allot or allot-spread, separated by commas"

static const char usage_text[] =
    "usage: allot replay --nodes NODES.csv --pods PODS.csv [--projects N] [--quota-file F]\n"
    "                    [--policy fifo,bestfit,allot,allot-spread] [--inflate X]\n"
    "                    [--seeds S[-T]]\n"
    "                    [--period-s P] [--speedup F] [--gangs] [--pools model|single]\n"
    "                    [--racks N [--blocks M] [--topology aware|blind]]\n"
    "                    [--report DIR] [--jobs N] [--timing]\n"
    "       allot replay --protocol paper ... (allot replay --protocol paper --help)\n";

static const char help_text[] =
    "Replays a GPU cluster trace (Alibaba GPU 2023 format) through the scheduling core and a\n"
    "FIFO first-fit baseline, and reports allocation, waits, fairness and preemptions.\n"
    "  --nodes FILE       node list: sn, cpu_milli, memory_mib, gpu, model\n"
    "  --pods FILE        task list: name, cpu_milli, memory_mib, num_gpu, gpu_milli\n"
    "                     [, gpu_spec] [, creation_time, deletion_time, scheduled_time]\n"
    "  --projects N       tasks go to N projects by FNV-1a of their name (default 4)\n"
    "  --quota-file F     GPU quotas: project, pool, gpu [, limit] [, weight]\n"
    "                     (default: each pool's GPUs split evenly)\n"
    "  --policy LIST      fifo (FIFO + first fit), bestfit (the core, bin-packing: KAI's\n"
    "                     default), allot (the core, allot's default placement:\n"
    "                     fragmentation), allot-spread (the core, spreading);\n"
    "                     default all four\n"
    "  --inflate X        also run inflation as the trace's paper does: the tasks in a\n"
    "                     random order, more drawn until their GPUs reach X times the\n"
    "                     cluster's, nothing leaving; report the GPUs left unallocated\n"
    "                     when the arrived demand reaches 100% (1.3 gives the paper's\n"
    "                     curve up to 130%)\n"
    "  --seeds S[-T]      inflation once per seed from S to T, reported as mean and\n"
    "                     range (default 1; --seed S is the same as --seeds S)\n"
    "  --period-s P       trace seconds between scheduling cycles (default 10; 0: at\n"
    "                     every event)\n"
    "  --speedup F        arrivals F times faster, run times unchanged (default 1)\n"
    "  --gangs            tasks of k > 1 GPUs become gangs of k one-GPU pods\n"
    "  --pools model|single  a node pool per GPU model (default), or one pool with\n"
    "                     the model as node type (a gpu_spec's models: any of them)\n"
    "  --racks N          a synthetic topology: each pool's nodes in file order make\n"
    "                     racks of N nodes (labels replay/rack, replay/block), and every\n"
    "                     pool's topology is block, rack, host; the report counts the\n"
    "                     gangs that start inside one rack and one block\n"
    "  --blocks M         racks per block (default 8)\n"
    "  --topology blind   the racks and blocks are counted but the pools have no\n"
    "                     topology: the run to compare against (default aware)\n"
    "  --report DIR       write report.md, report.json and SVG plots into DIR\n"
    "  --jobs N           runs at once, one thread each (default: the CPUs online)\n"
    "  --timing           wall time of every run on stderr\n"
    "  --check            verify the simulated cluster after every cycle (slow)\n";

/* ---- Step 1: options ---- */

static int bad_value(const char *opt, const char *v, const char *want)
{
    fprintf(stderr, "allot replay: %s '%s': expected %s\n", opt, v, want);
    return -1;
}

static int parse_double(const char *opt, const char *v, double min, double max, double *out)
{
    char *end;

    errno = 0;
    *out = strtod(v, &end);
    if (errno || end == v || *end || !isfinite(*out) || *out < min || *out > max) {
        char want[96];
        snprintf(want, sizeof(want), "a number from %g to %g", min, max);
        return bad_value(opt, v, want);
    }
    return 0;
}

static int parse_policies(const char *v, unsigned *out)
{
    char buf[256], *tok, *save = NULL;
    int p;

    *out = 0;
    if (strlen(v) >= sizeof(buf))
        return bad_value("--policy", v, POLICY_WORDS);
    strcpy(buf, v);
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        for (p = 0; p < RP_NPOLICIES && strcmp(tok, replay_policy_name(p)) != 0; p++)
            ;
        if (p == RP_NPOLICIES && strcmp(tok, "all") != 0)
            return bad_value("--policy", v, POLICY_WORDS);
        *out |= p == RP_NPOLICIES ? (1u << RP_NPOLICIES) - 1 : 1u << p;
    }
    return *out ? 0 : bad_value("--policy", v, "at least one policy");
}

static int takes_value(const char *opt)
{
    static const char *const names[] = {"--nodes", "--pods", "--quota-file", "--report",
                                        "--policy", "--projects", "--inflate", "--speedup",
                                        "--period-s", "--jobs", "--seed", "--seeds",
                                        "--pools", "--racks", "--blocks", "--topology",
                                        NULL};
    int k;

    for (k = 0; names[k]; k++)
        if (strcmp(opt, names[k]) == 0)
            return 1;
    return 0;
}

/* A whole number in [min, max]. */
static int parse_whole(const char *opt, const char *v, double min, double max, double *out)
{
    char want[96];

    if (parse_double(opt, v, min, max, out) != 0)
        return -1;
    if (*out == floor(*out))
        return 0;
    snprintf(want, sizeof(want), "a whole number from %.0f to %.0f", min, max);
    return bad_value(opt, v, want);
}

/* --seeds S or S-T (--seed S): at most RP_MAX_SEEDS of them. */
static int parse_seeds(const char *opt, const char *v, struct replay_opts *o)
{
    const char *dash = strchr(v, '-');
    char first[64];
    double a, b;

    if (!dash || strcmp(opt, "--seed") == 0) {
        if (parse_whole(opt, v, 0, 9007199254740992.0, &a) != 0)
            return -1;
        o->seed = o->last_seed = (uint64_t)a;
        return 0;
    }
    snprintf(first, sizeof(first), "%.*s", (int)(dash - v) < 63 ? (int)(dash - v) : 63, v);
    if (parse_whole(opt, first, 0, 9007199254740992.0, &a) != 0 ||
        parse_whole(opt, dash + 1, a, a + RP_MAX_SEEDS - 1, &b) != 0)
        return -1;
    o->seed = (uint64_t)a;
    o->last_seed = (uint64_t)b;
    return 0;
}

/* Options that name a file, a folder or the policies; 1 if opt is one. */
static int text_option(struct replay_opts *o, const char *opt, const char *v, int *rc)
{
    *rc = 0;
    if (strcmp(opt, "--nodes") == 0)
        o->nodes_file = v;
    else if (strcmp(opt, "--pods") == 0)
        o->pods_file = v;
    else if (strcmp(opt, "--quota-file") == 0)
        o->quota_file = v;
    else if (strcmp(opt, "--report") == 0)
        o->report_dir = v;
    else if (strcmp(opt, "--policy") == 0)
        *rc = parse_policies(v, &o->policies);
    else if (strcmp(opt, "--pools") == 0 && (strcmp(v, "model") == 0 || strcmp(v, "single") == 0))
        o->single_pool = strcmp(v, "single") == 0;
    else if (strcmp(opt, "--pools") == 0)
        *rc = bad_value(opt, v, "model or single");
    else if (strcmp(opt, "--topology") == 0 && (strcmp(v, "aware") == 0 || strcmp(v, "blind") == 0))
        o->topology_blind = strcmp(v, "blind") == 0;
    else if (strcmp(opt, "--topology") == 0)
        *rc = bad_value(opt, v, "aware or blind");
    else
        return 0;
    return 1;
}

static int number_option(struct replay_opts *o, const char *opt, const char *v)
{
    double d;

    if (strcmp(opt, "--inflate") == 0)
        return parse_double(opt, v, 0.001, 100, &o->inflate);
    if (strcmp(opt, "--speedup") == 0)
        return parse_double(opt, v, 0.001, 1e9, &o->speedup);
    if (strcmp(opt, "--period-s") == 0) {
        if (parse_double(opt, v, 0, 86400, &d) != 0)
            return -1;
        o->period_ms = (int64_t)llround(d * 1000.0);
    } else if (strcmp(opt, "--projects") == 0) {
        if (parse_whole(opt, v, 1, RP_MAX_PROJECTS, &d) != 0)
            return -1;
        o->n_projects = (int)d;
    } else if (strcmp(opt, "--racks") == 0 || strcmp(opt, "--blocks") == 0) {
        if (parse_whole(opt, v, 1, 1000000, &d) != 0)
            return -1;
        *(strcmp(opt, "--racks") == 0 ? &o->rack_nodes : &o->block_racks) = (int)d;
    } else if (strcmp(opt, "--jobs") == 0) {
        if (parse_whole(opt, v, 1, RP_MAX_JOBS, &d) != 0)
            return -1;
        o->jobs = (int)d;
    } else {
        return parse_seeds(opt, v, o);
    }
    return 0;
}

/* One option with a value at argv[*i]; *i moves past the value. */
static int parse_valued(struct replay_opts *o, int argc, char **argv, int *i)
{
    const char *opt = argv[*i];
    int rc;

    if (!takes_value(opt)) {
        fprintf(stderr, "allot replay: unknown option '%s'\n", opt);
        return -1;
    }
    if (*i + 1 >= argc) {
        fprintf(stderr, "allot replay: %s needs a value\n", opt);
        return -1;
    }
    ++*i;
    if (text_option(o, opt, argv[*i], &rc))
        return rc;
    return number_option(o, opt, argv[*i]);
}

static int parse_args(int argc, char **argv, struct replay_opts *o)
{
    int i, rc = 0;

    memset(o, 0, sizeof(*o));
    o->policies = (1u << RP_NPOLICIES) - 1;
    o->seed = o->last_seed = 1;
    o->period_ms = 10000;
    o->speedup = 1;
    o->topology_blind = -1;
    for (i = 1; rc == 0 && i < argc; i++) {
        if (strcmp(argv[i], "--gangs") == 0)
            o->gangs = 1;
        else if (strcmp(argv[i], "--timing") == 0)
            o->timing = 1;
        else if (strcmp(argv[i], "--check") == 0)
            o->check = 1;
        else
            rc = parse_valued(o, argc, argv, &i);
    }
    if (rc == 0 && (!o->nodes_file || !o->pods_file)) {
        fprintf(stderr, "allot replay: --nodes and --pods are required\n");
        rc = -1;
    }
    if (rc == 0 && o->rack_nodes == 0 && (o->block_racks > 0 || o->topology_blind >= 0)) {
        fprintf(stderr, "allot replay: --blocks and --topology describe --racks' topology: "
                        "give --racks too\n");
        rc = -1;
    }
    if (o->block_racks == 0)
        o->block_racks = 8;
    if (o->topology_blind < 0)
        o->topology_blind = 0;
    return rc;
}

/* ---- Step 2: files, and what the options ask of them ---- */

static int load(const struct replay_opts *o, struct trace **t)
{
    char err[1024];

    if (trace_load(o->nodes_file, o->pods_file, t, err, sizeof(err)) != 0 ||
        (o->quota_file && trace_load_quotas(*t, o->quota_file, err, sizeof(err)) != 0)) {
        fprintf(stderr, "allot replay: %s\n", err);
        return -1;
    }
    return 0;
}

static int check_fit(struct replay_opts *o, const struct trace *t)
{
    int i;

    if (t->n_models > RP_MAX_POOLS) {
        fprintf(stderr, "allot replay: %s: %d GPU models, at most %d are supported\n",
                o->nodes_file, t->n_models, RP_MAX_POOLS);
        return -1;
    }
    if (t->n_projects && o->n_projects && o->n_projects != t->n_projects) {
        fprintf(stderr, "allot replay: --projects %d, but %s names %d projects\n",
                o->n_projects, o->quota_file, t->n_projects);
        return -1;
    }
    if (t->n_projects > RP_MAX_PROJECTS) {
        fprintf(stderr, "allot replay: %s: %d projects, at most %d are supported\n",
                o->quota_file, t->n_projects, RP_MAX_PROJECTS);
        return -1;
    }
    for (i = 0; o->single_pool && i < t->n_quotas; i++)
        if (t->quotas[i].model >= 0) {
            fprintf(stderr, "allot replay: %s: with --pools single there is one pool: write * "
                    "as the pool of %s\n", o->quota_file, t->projects[t->quotas[i].project]);
            return -1;
        }
    if (!t->has_times && o->inflate <= 0) {
        fprintf(stderr, "allot replay: %s has no creation_time, deletion_time and "
                "scheduled_time columns: only --inflate can use it\n", o->pods_file);
        return -1;
    }
    o->n_projects = o->n_projects ? o->n_projects : 4;
    return 0;
}

static int has_placeable(const struct replay_model *m)
{
    int i;

    for (i = 0; i < m->t->n_tasks; i++)
        if (!m->unplaceable[i])
            return 1;
    fprintf(stderr, "allot replay: %s: no task fits any node, nothing to inflate\n",
            m->opts->pods_file);
    return 0;
}

static int make_dir(const char *dir)
{
    struct stat sb;

    if (!dir || (stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode)))
        return 0;
    if (mkdir(dir, 0777) == 0)
        return 0;
    fprintf(stderr, "allot replay: %s: %s\n", dir, strerror(errno));
    return -1;
}

/* ---- Step 4: runs ---- */

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One run: a time replay of one policy, or an inflation of one policy
 * with one seed. */
struct job {
    const struct replay_model *m;
    int inflation, policy;
    uint64_t seed;
    void *out;           /* struct replay_summary or struct replay_inflation */
    double *wall_s;
    int rc;
    char err[1024];
};

struct pool {
    struct job *jobs;
    int n_jobs, next;
    pthread_mutex_t mu;
};

static void run_job(struct job *j)
{
    double t0 = now_s();

    if (j->inflation)
        j->rc = replay_inflate(j->m, j->policy, j->seed, j->out, j->err, sizeof(j->err));
    else
        j->rc = replay_run(j->m, j->policy, j->out, j->err, sizeof(j->err));
    *j->wall_s = now_s() - t0;
}

static void *worker(void *arg)
{
    struct pool *p = arg;
    int k;

    for (;;) {
        pthread_mutex_lock(&p->mu);
        k = p->next < p->n_jobs ? p->next++ : -1;
        pthread_mutex_unlock(&p->mu);
        if (k < 0)
            return NULL;
        run_job(&p->jobs[k]);
    }
}

/* Runs every job on up to n_threads threads (the calling one included). */
static int run_jobs(struct pool *p, int n_threads)
{
    pthread_t th[RP_MAX_JOBS];
    int n = 0, k, rc = 0;

    if (pthread_mutex_init(&p->mu, NULL) != 0)
        return -1;
    while (n + 1 < n_threads && n < RP_MAX_JOBS && pthread_create(&th[n], NULL, worker, p) == 0)
        n++;
    worker(p);
    for (k = 0; k < n; k++)
        pthread_join(th[k], NULL);
    pthread_mutex_destroy(&p->mu);
    for (k = 0; rc == 0 && k < p->n_jobs; k++)
        if (p->jobs[k].rc != 0) {
            fprintf(stderr, "allot replay: %s\n", p->jobs[k].err);
            rc = -1;
        }
    return rc;
}

static void add_job(struct pool *p, const struct replay_model *m, int inflation, int policy,
                    void *out, double *wall_s)
{
    struct job *j = &p->jobs[p->n_jobs++];

    memset(j, 0, sizeof(*j));
    j->m = m;
    j->inflation = inflation;
    j->policy = policy;
    j->out = out;
    j->wall_s = wall_s;
}

/* The jobs: time replays, then inflations by policy and seed. */
static int run_all(const struct replay_model *m, struct replay_results *r)
{
    const struct replay_opts *o = m->opts;
    int n_seeds = o->inflate > 0 ? (int)(o->last_seed - o->seed + 1) : 0;
    struct pool p;
    int k, rc, n_threads = o->jobs;
    uint64_t seed;

    memset(&p, 0, sizeof(p));
    p.jobs = calloc((size_t)RP_NPOLICIES * (size_t)(1 + n_seeds), sizeof(*p.jobs));
    if (!p.jobs) {
        fprintf(stderr, "allot replay: out of memory\n");
        return -1;
    }
    for (k = 0; k < RP_NPOLICIES && m->t->has_times; k++)
        if (o->policies & (1u << k)) {
            add_job(&p, m, 0, k, &r->runs[r->n_runs], &r->runs[r->n_runs].wall_s);
            r->n_runs++;
        }
    for (k = 0; k < RP_NPOLICIES && n_seeds > 0; k++)
        for (seed = o->seed; (o->policies & (1u << k)) && seed <= o->last_seed; seed++) {
            add_job(&p, m, 1, k, &r->inflations[r->n_inflations],
                    &r->inflations[r->n_inflations].wall_s);
            p.jobs[p.n_jobs - 1].seed = seed;
            r->n_inflations++;
        }
    if (n_threads <= 0)
        n_threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    n_threads = n_threads < 1 ? 1 : n_threads > p.n_jobs ? p.n_jobs : n_threads;
    rc = run_jobs(&p, n_threads);
    free(p.jobs);
    return rc;
}

static void print_timing(const struct replay_results *r, double total)
{
    const struct replay_summary *s;
    int n;

    for (n = 0; n < r->n_runs; n++) {
        s = &r->runs[n];
        fprintf(stderr, "timing: replay %s: %.3f s, %d cycles, %d core calls\n",
                replay_policy_name(s->policy), s->wall_s, s->cycles, s->core_calls);
    }
    for (n = 0; n < r->n_inflations; n++)
        fprintf(stderr, "timing: inflation %s, seed %llu: %.3f s, %d arrivals\n",
                replay_policy_name(r->inflations[n].policy),
                (unsigned long long)r->inflations[n].seed, r->inflations[n].wall_s,
                r->inflations[n].arrivals);
    fprintf(stderr, "timing: total %.3f s\n", total);
}

/* Steps 3 to 5 on a loaded trace. */
static int replay_trace(const struct replay_opts *o, struct trace *t, double t0)
{
    struct replay_summary runs[RP_NPOLICIES];
    struct replay_results r;
    struct replay_model *m = NULL;
    char err[1024];
    int n, status = RP_EXIT_FAILED;

    memset(&r, 0, sizeof(r));
    memset(runs, 0, sizeof(runs));
    r.runs = runs;
    r.inflations = calloc((size_t)RP_NPOLICIES * (size_t)(o->last_seed - o->seed + 1),
                          sizeof(*r.inflations));
    if (!r.inflations) {
        fprintf(stderr, "allot replay: out of memory\n");
        goto out_free;
    }
    if (replay_model_new(o, t, &m, err, sizeof(err)) != 0) {
        fprintf(stderr, "allot replay: %s\n", err);
        goto out_free;
    }
    r.m = m;
    if (o->inflate > 0 && !has_placeable(m)) {
        status = RP_EXIT_USAGE;
        goto out_free;
    }
    if (run_all(m, &r) != 0)
        goto out_free;
    if (replay_report(&r, err, sizeof(err)) != 0) {
        fprintf(stderr, "allot replay: %s\n", err);
        goto out_free;
    }
    if (o->timing)
        print_timing(&r, now_s() - t0);
    status = RP_EXIT_OK;
out_free:
    for (n = 0; n < RP_NPOLICIES; n++)
        rs_summary_free(&runs[n]);
    for (n = 0; n < r.n_inflations; n++)
        replay_inflation_free(&r.inflations[n]);
    free(r.inflations);
    replay_model_free(m);
    return status;
}

int replay_main(int argc, char **argv)
{
    struct replay_opts o;
    struct trace *t = NULL;
    double t0 = now_s();
    int i, status = RP_EXIT_USAGE;

    for (i = 1; i < argc; i++)
        if (strcmp(argv[i], "--protocol") == 0)
            return replay_paper_main(argc, argv);
    for (i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_text, stdout);
            fputs(help_text, stdout);
            return RP_EXIT_OK;
        }
    if (parse_args(argc, argv, &o) != 0) {
        fputs(usage_text, stderr);
        return RP_EXIT_USAGE;
    }
    if (load(&o, &t) != 0 || check_fit(&o, t) != 0 || make_dir(o.report_dir) != 0)
        goto out_free;
    status = replay_trace(&o, t, t0);
out_free:
    trace_free(t);
    return status;
}
