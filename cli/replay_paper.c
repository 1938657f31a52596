/*
 * replay_paper.c: `allot replay --protocol paper`, the command line of the
 * FGD paper's protocol (sim/replay_paper.h says what it is).
 *
 * Step 1: options; --pods may be given once per trace.
 * Step 2: for each trace: read it, build what its runs share (typical
 *         shapes; allot's model with one pool and one project when allot
 *         is asked), run every (policy, seed) on up to --jobs threads (each
 *         run writes only its own result), print its report.
 * Step 3: with more than one trace, the table across traces.
 * Everything on stdout depends only on the inputs; --timing puts wall times
 * on stderr. With --report DIR, the same text also goes to DIR/paper.md.
 */
#include "replay.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "replay_paper.h"

#define MAX_TRACES 32
#define MAX_SEEDS 1000
#define MAX_JOBS 64

static const char usage_text[] =
    "usage: allot replay --protocol paper --nodes NODES.csv --pods PODS.csv [--pods ...]\n"
    "                    [--policy random,dotprod,gpuclustering,gpupacking,bestfit,fgd,allot\n"
    "                              [,allot-moves,fgd-moves]]\n"
    "                    [--seeds S[-T]] [--jobs N] [--report DIR] [--timing]\n";

static const char help_text[] =
    "Replays traces under the FGD paper's protocol: pods one at a time in arrival order,\n"
    "no moves, no evictions, one project, a pod that fits nowhere dropped, score ties\n"
    "to a random node order per seed; reports the unallocated GPUs when the arrived\n"
    "demand reaches 100% of the cluster's, beside the paper's published means.\n"
    "  --policy LIST   the paper's policies (random, dotprod, gpuclustering, gpupacking,\n"
    "                  bestfit: the paper's BestFit, fgd) and allot (allot's core,\n"
    "                  fragmentation placement, consolidation off); default all seven.\n"
    "                  allot-moves: allot's core with consolidation on (up to 16 moves\n"
    "                  per pending pod, each a restart): not placement alone, reported\n"
    "                  apart (protocol paper+moves) with its moves\n"
    "  fgd-moves:      FGD places each pod as fgd does; where it finds no node,\n"
    "                  allot's consolidation (the same budget) moves running pods and\n"
    "                  FGD tries again (protocol paper+moves)\n"
    "  --seeds S[-T]   one run per seed and policy (default 1-10)\n"
    "  --jobs N        runs at once (default: the CPUs online)\n";

struct popts {
    const char *nodes, *pods[MAX_TRACES], *report_dir;
    int n_pods, policies[RPP_NPOLICIES], n_policies, jobs, timing;
    uint64_t seed, last_seed;
};

static int bad(const char *opt, const char *v, const char *want)
{
    fprintf(stderr, "allot replay: %s '%s': expected %s\n", opt, v, want);
    return -1;
}

static int parse_policies(const char *v, struct popts *o)
{
    char buf[256], *tok, *save = NULL;
    int p, k;

    o->n_policies = 0;
    if (strlen(v) >= sizeof(buf))
        return bad("--policy", v, "policies separated by commas");
    strcpy(buf, v);
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        p = rpp_policy_parse(tok);
        if (p < 0)
            return bad("--policy", v, "random, dotprod, gpuclustering, gpupacking, bestfit, "
                                      "fgd, allot, allot-moves or fgd-moves, separated "
                                      "by commas");
        for (k = 0; k < o->n_policies && o->policies[k] != p; k++)
            ;
        if (k == o->n_policies)
            o->policies[o->n_policies++] = p;
    }
    return o->n_policies ? 0 : bad("--policy", v, "at least one policy");
}

static int parse_seeds(const char *v, struct popts *o)
{
    char *end;
    unsigned long long a, b;

    errno = 0;
    a = strtoull(v, &end, 10);
    b = a;
    if (!errno && end != v && *end == '-')
        b = strtoull(end + 1, &end, 10);
    if (errno || end == v || *end || b < a || b - a >= MAX_SEEDS)
        return bad("--seeds", v, "S or S-T, at most 1000 seeds");
    o->seed = a;
    o->last_seed = b;
    return 0;
}

static int parse_args(int argc, char **argv, struct popts *o)
{
    int i, k;
    const char *opt, *v;

    memset(o, 0, sizeof(*o));
    o->seed = 1;
    o->last_seed = 10;
    for (k = 0; k <= RPP_ALLOT; k++)   /* placement alone: not those with moves */
        o->policies[o->n_policies++] = k;
    for (i = 1; i < argc; i++) {
        opt = argv[i];
        if (strcmp(opt, "--timing") == 0) {
            o->timing = 1;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "allot replay: %s needs a value\n", opt);
            return -1;
        }
        v = argv[++i];
        if (strcmp(opt, "--protocol") == 0 && strcmp(v, "paper") != 0)
            return bad(opt, v, "paper");
        else if (strcmp(opt, "--protocol") == 0)
            continue;
        else if (strcmp(opt, "--nodes") == 0)
            o->nodes = v;
        else if (strcmp(opt, "--pods") == 0 && o->n_pods < MAX_TRACES)
            o->pods[o->n_pods++] = v;
        else if (strcmp(opt, "--report") == 0)
            o->report_dir = v;
        else if (strcmp(opt, "--policy") == 0) {
            if (parse_policies(v, o) != 0)
                return -1;
        } else if (strcmp(opt, "--seeds") == 0 || strcmp(opt, "--seed") == 0) {
            if (parse_seeds(v, o) != 0)
                return -1;
        } else if (strcmp(opt, "--jobs") == 0) {
            o->jobs = atoi(v);
            if (o->jobs < 1 || o->jobs > MAX_JOBS)
                return bad(opt, v, "a whole number from 1 to 64");
        } else {
            fprintf(stderr, "allot replay: '%s' is not an option of --protocol paper\n", opt);
            return -1;
        }
    }
    if (!o->nodes || o->n_pods == 0) {
        fprintf(stderr, "allot replay: --nodes and --pods are required\n");
        return -1;
    }
    return 0;
}

/* ---- Runs on threads ---- */

struct pjob {
    const struct rpp_ctx *c;
    int policy;
    uint64_t seed;
    struct rpp_result *out;
    int rc;
    char err[512];
};

struct ppool {
    struct pjob *jobs;
    int n, next;
    pthread_mutex_t mu;
};

static void *worker(void *arg)
{
    struct ppool *p = arg;
    struct pjob *j;
    int k;

    for (;;) {
        pthread_mutex_lock(&p->mu);
        k = p->next < p->n ? p->next++ : -1;
        pthread_mutex_unlock(&p->mu);
        if (k < 0)
            return NULL;
        j = &p->jobs[k];
        j->rc = rpp_run(j->c, j->policy, j->seed, j->out, j->err, sizeof(j->err));
    }
}

static int run_trace(const struct popts *o, const struct rpp_ctx *c, struct rpp_result *res)
{
    int n_seeds = (int)(o->last_seed - o->seed + 1), k, s, n_threads = o->jobs, started = 0;
    pthread_t th[MAX_JOBS];
    struct ppool p;
    int rc = 0;

    memset(&p, 0, sizeof(p));
    p.jobs = calloc((size_t)o->n_policies * (size_t)n_seeds, sizeof(*p.jobs));
    if (!p.jobs || pthread_mutex_init(&p.mu, NULL) != 0) {
        free(p.jobs);
        return -1;
    }
    for (k = 0; k < o->n_policies; k++)
        for (s = 0; s < n_seeds; s++) {
            struct pjob *j = &p.jobs[p.n++];

            j->c = c;
            j->policy = o->policies[k];
            j->seed = o->seed + (uint64_t)s;
            j->out = &res[k * n_seeds + s];
        }
    if (n_threads <= 0)
        n_threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    while (started + 1 < n_threads && started + 1 < p.n &&
           pthread_create(&th[started], NULL, worker, &p) == 0)
        started++;
    worker(&p);
    for (k = 0; k < started; k++)
        pthread_join(th[k], NULL);
    pthread_mutex_destroy(&p.mu);
    for (k = 0; k < p.n; k++) {
        if (p.jobs[k].rc != 0 && rc == 0) {
            fprintf(stderr, "allot replay: %s: %s, seed %llu: %s\n", c->label,
                    rpp_policy_name(p.jobs[k].policy), (unsigned long long)p.jobs[k].seed,
                    p.jobs[k].err);
            rc = -1;
        }
        if (o->timing)
            fprintf(stderr, "timing: %s %s seed %llu: %.2f s, %d arrivals\n", c->label,
                    rpp_policy_name(p.jobs[k].policy), (unsigned long long)p.jobs[k].seed,
                    p.jobs[k].out->wall_s, p.jobs[k].out->arrivals);
    }
    free(p.jobs);
    return rc;
}

/* allot's model: one pool (the model is the node type), one project. */
static int allot_model(const struct popts *o, struct trace *t, struct replay_opts *ro,
                       struct replay_model **m)
{
    char err[512];
    int k;

    *m = NULL;
    for (k = 0; k < o->n_policies && o->policies[k] != RPP_ALLOT &&
                o->policies[k] != RPP_ALLOT_MOVES && o->policies[k] != RPP_FGD_MOVES;
         k++)
        ;
    if (k == o->n_policies)
        return 0;
    memset(ro, 0, sizeof(*ro));
    ro->nodes_file = o->nodes;
    ro->n_projects = 1;
    ro->single_pool = 1;
    ro->inflate = RPP_INFLATE;
    ro->speedup = 1;
    ro->seed = ro->last_seed = o->seed;
    if (replay_model_new(ro, t, m, err, sizeof(err)) != 0) {
        fprintf(stderr, "allot replay: %s\n", err);
        return -1;
    }
    return 0;
}

static FILE *open_report(const struct popts *o)
{
    char path[4096];
    FILE *f;

    if (!o->report_dir)
        return NULL;
    snprintf(path, sizeof(path), "%s/paper.md", o->report_dir);
    f = fopen(path, "w");
    if (!f)
        fprintf(stderr, "allot replay: %s: %s\n", path, strerror(errno));
    return f;
}

int replay_paper_main(int argc, char **argv)
{
    struct popts o;
    int i, n_seeds, status = 1, done = 0;
    char labels_buf[MAX_TRACES][64];
    const char *labels[MAX_TRACES];
    struct rpp_result *results[MAX_TRACES];
    FILE *rep = NULL;

    for (i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_text, stdout);
            fputs(help_text, stdout);
            return 0;
        }
    if (parse_args(argc, argv, &o) != 0) {
        fputs(usage_text, stderr);
        return 2;
    }
    n_seeds = (int)(o.last_seed - o.seed + 1);
    memset(results, 0, sizeof(results));
    if (o.report_dir && !(rep = open_report(&o)))
        return 1;
    rpp_report_protocol(stdout);
    if (rep)
        rpp_report_protocol(rep);
    for (i = 0; i < o.n_pods; i++) {
        struct trace *t = NULL;
        struct replay_model *m = NULL;
        struct replay_opts ro;
        struct rpp_ctx c;
        char err[1024];
        int rc = -1;

        labels[i] = rpp_label(o.pods[i], labels_buf[i], sizeof(labels_buf[i]));
        results[i] = calloc((size_t)o.n_policies * (size_t)n_seeds, sizeof(**results));
        memset(&c, 0, sizeof(c));
        if (!results[i] || trace_load(o.nodes, o.pods[i], &t, err, sizeof(err)) != 0) {
            fprintf(stderr, "allot replay: %s\n", results[i] ? err : "out of memory");
            status = results[i] ? 2 : 1;
        } else if (allot_model(&o, t, &ro, &m) == 0 && rpp_ctx_init(&c, t, m, labels[i]) == 0) {
            rc = run_trace(&o, &c, results[i]);
            if (rc == 0) {
                rpp_report_trace(stdout, &c, results[i], o.policies, o.n_policies, n_seeds);
                if (rep)
                    rpp_report_trace(rep, &c, results[i], o.policies, o.n_policies, n_seeds);
                fflush(stdout);
            }
        }
        rpp_ctx_free(&c);
        replay_model_free(m);
        trace_free(t);
        if (rc != 0)
            goto out_free;
        done++;
    }
    if (done > 1) {
        rpp_report_summary(stdout, labels, done, (const struct rpp_result *const *)results,
                           o.policies, o.n_policies, n_seeds);
        if (rep)
            rpp_report_summary(rep, labels, done, (const struct rpp_result *const *)results,
                               o.policies, o.n_policies, n_seeds);
    }
    status = 0;
out_free:
    for (i = 0; i < o.n_pods; i++)
        free(results[i]);
    if (rep)
        fclose(rep);
    return status;
}
