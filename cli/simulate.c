/*
 * simulate.c: `allot simulate [--json] [--timing] [--incremental] FILE...`.
 *
 * For each file, in the order given:
 * Step 1: read and validate the whole file (scenario.c); a bad file gets
 *         one line on stderr, "FILE: PATH: problem", and no run.
 * Step 2: build the world and run the steps in order (world.c); a step
 *         that cannot be carried out (a runningOn pod with no room, a
 *         core decision that breaks the world's invariants) stops the
 *         file with one line on stderr, "FILE: $.steps[N]...: problem".
 * Step 3: each expect step is checked (expect.c) and counted as passed
 *         or failed; a failed check prints "SCENARIO step N: what
 *         differed" (text) or goes into the file's JSON report (--json).
 * After the last file, the text output ends with "N passed, M failed".
 *
 * A schedule step runs passes until one decides nothing (at most
 * MAX_PASSES), or exactly `cycles` passes; --timing reports the wall time
 * of those passes (sched_cycle plus applying its decisions).
 * --incremental runs every pass a second time through sched_cycle_next()
 * with a memo and the changes since the previous pass (world_pass.c): a
 * result that differs from sched_cycle()'s by one byte stops the file.
 *
 * Exit status: 2 if any usage error or file error, else 1 if any expect
 * step failed, else 0. The output depends only on the files (and, with
 * --timing, on the clock).
 */
#include "simulate.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "expect.h"
#include "scenario.h"
#include "world.h"

#define MAX_PASSES 100

enum { SIM_OK = 0, SIM_FAILED = 1, SIM_ERROR = 2 };

struct sim_opts {
    int json;
    int timing;
    int incremental;
};

struct sim_totals {
    int passed, failed;
};

/* One scenario being run. */
struct sim_run {
    const struct sim_opts *opts;
    const struct scenario *s;
    struct world *w;
    struct sched_config cfg;
    struct failures f;
    json_t *steps;     /* --json: one report per expect step */
    json_t *timing;    /* --json --timing: one entry per schedule step */
    int passed, failed;
};

static void usage(FILE *to)
{
    fprintf(to, "usage: allot simulate [--json] [--timing] [--incremental] FILE...\n");
}

static double elapsed_ms(const struct timespec *t0)
{
    struct timespec t1;

    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* ---- Steps ---- */

static int report_timing(struct sim_run *run, int step, int passes, double first, double total)
{
    json_t *t;

    if (!run->opts->timing)
        return 0;
    if (!run->opts->json) {
        printf("timing: %s step %d: %d passes, first pass %.3f ms, total %.3f ms\n", run->s->name,
               step, passes, first, total);
        return 0;
    }
    t = json_pack("{s:i, s:i, s:f, s:f}", "index", step, "passes", passes, "firstPassMs", first,
                  "totalMs", total);
    return t ? json_array_append_new(run->timing, t) : -1;
}

static int run_schedule(struct sim_run *run, int step, struct world_err *e)
{
    int cycles = run->s->steps[step].u.cycles;
    int limit = cycles ? cycles : MAX_PASSES, passes = 0;
    double first = 0, total = 0, ms;
    struct sched_result res;
    struct timespec t0;

    while (passes < limit) {
        clock_gettime(CLOCK_MONOTONIC, &t0);
        if (world_pass(run->w, &run->cfg, &res, e) != 0)
            return -1;
        ms = elapsed_ms(&t0);
        first = passes == 0 ? ms : first;
        total += ms;
        passes++;
        if (world_check(run->w, e) != 0) {
            e->pass = passes;
            return -1;
        }
        if (!cycles && res.n_decisions == 0)
            break;
    }
    if (world_keep(run->w, &res, e) != 0)
        return -1;
    return report_timing(run, step, passes, first, total);
}

static int report_step(struct sim_run *run, int step)
{
    json_t *failures, *report;
    int k;

    if (!run->opts->json) {
        for (k = 0; k < run->f.n; k++)
            printf("%s step %d: %s\n", run->s->name, step, run->f.items[k]);
        return 0;
    }
    failures = json_array();
    for (k = 0; failures && k < run->f.n; k++)
        if (json_array_append_new(failures, json_string(run->f.items[k])) != 0)
            break;
    report = json_pack("{s:i, s:b, s:o}", "index", step, "ok", run->f.n == 0, "failures",
                       failures);
    return report ? json_array_append_new(run->steps, report) : -1;
}

static int run_expect(struct sim_run *run, int step)
{
    failures_clear(&run->f);
    if (expect_run(run->w, &run->s->steps[step], &run->f) != 0)
        return -1;
    world_clear_marks(run->w);
    if (run->f.n == 0)
        run->passed++;
    else
        run->failed++;
    return report_step(run, step);
}

/* delete, complete, suspend, resume. */
static int run_workload_step(struct sim_run *run, const struct scn_step *st, struct world_err *e)
{
    int i = world_find(run->w, st->u.workload);

    if (i < 0) {
        snprintf(e->msg, sizeof(e->msg), "no such workload \"%s\"", st->u.workload);
        return -1;
    }
    if (st->kind == SCN_DELETE)
        world_delete(run->w, i);
    else if (st->kind == SCN_COMPLETE)
        world_finish(run->w, i, SCHED_COMPLETED);
    else if (st->kind == SCN_SUSPEND)
        world_finish(run->w, i, SCHED_STOPPED);
    else
        world_resume(run->w, i);
    return 0;
}

static int run_step(struct sim_run *run, int step, struct world_err *e)
{
    const struct scn_step *st = &run->s->steps[step];

    switch (st->kind) {
    case SCN_SUBMIT:    return world_submit(run->w, &st->u.submit, e);
    case SCN_NODE_DOWN: world_node_down(run->w, st->u.node); return 0;
    case SCN_NODE_UP:   world_node_up(run->w, st->u.node); return 0;
    case SCN_SET_QUOTA: world_set_quota(run->w, &st->u.quota); return 0;
    case SCN_ADVANCE:   return world_advance(run->w, st->u.advance_ms, e);
    case SCN_SCHEDULE:  return run_schedule(run, step, e);
    case SCN_EXPECT:
        if (run_expect(run, step) == 0)
            return 0;
        snprintf(e->msg, sizeof(e->msg), "out of memory");
        return -1;
    default:            return run_workload_step(run, st, e);
    }
}

/* ---- A file ---- */

static int print_report(struct sim_run *run)
{
    json_t *report;
    char *text;

    report = json_pack("{s:s, s:O, s:i, s:i}", "scenario", run->s->name, "steps", run->steps,
                       "passed", run->passed, "failed", run->failed);
    if (report && run->opts->timing)
        json_object_set(report, "timing", run->timing);
    text = report ? json_dumps(report, JSON_COMPACT | JSON_REAL_PRECISION(6)) : NULL;
    json_decref(report);
    if (!text)
        return -1;
    puts(text);
    free(text);
    return 0;
}

static int run_scenario(struct sim_run *run)
{
    struct world_err e;
    int i;

    for (i = 0; i < run->s->n_steps; i++) {
        memset(&e, 0, sizeof(e));
        if (run_step(run, i, &e) == 0)
            continue;
        if (e.pass)
            fprintf(stderr, "%s: $.steps[%d]: after scheduling pass %d: %s\n", run->s->file, i,
                    e.pass, e.msg);
        else
            fprintf(stderr, "%s: $.steps[%d]%s: %s\n", run->s->file, i, e.where, e.msg);
        return SIM_ERROR;
    }
    if (run->opts->json && print_report(run) != 0) {
        fprintf(stderr, "%s: out of memory\n", run->s->file);
        return SIM_ERROR;
    }
    return run->failed ? SIM_FAILED : SIM_OK;
}

static int run_file(const struct sim_opts *opts, const char *file, struct sim_totals *totals)
{
    struct scenario *s = NULL;
    struct sim_run run;
    char err[1024];
    int status = SIM_ERROR;

    if (scenario_load(file, &s, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s\n", err);
        return SIM_ERROR;
    }
    memset(&run, 0, sizeof(run));
    run.opts = opts;
    run.s = s;
    sched_config_default(&run.cfg);
    failures_init(&run.f);
    run.steps = json_array();
    run.timing = json_array();
    if (!run.steps || !run.timing || world_new(s, &run.w) != 0 ||
        (opts->incremental && world_check_incremental(run.w) != 0)) {
        fprintf(stderr, "%s: out of memory\n", file);
        goto out_free;
    }
    status = run_scenario(&run);
    totals->passed += run.passed;
    totals->failed += run.failed;
out_free:
    world_free(run.w);
    json_decref(run.timing);
    json_decref(run.steps);
    failures_free(&run.f);
    scenario_free(s);
    return status;
}

/* ---- Arguments ---- */

/* Options and files; files are collected into *files (owned by the caller). */
static int parse_args(int argc, char **argv, struct sim_opts *opts, char ***files, int *n_files)
{
    int i, only_files = 0;

    *files = calloc((size_t)argc + 1, sizeof(char *));
    if (!*files)
        return -1;
    *n_files = 0;
    for (i = 1; i < argc; i++) {
        if (only_files || argv[i][0] != '-' || strcmp(argv[i], "-") == 0)
            (*files)[(*n_files)++] = argv[i];
        else if (strcmp(argv[i], "--") == 0)
            only_files = 1;
        else if (strcmp(argv[i], "--json") == 0)
            opts->json = 1;
        else if (strcmp(argv[i], "--timing") == 0)
            opts->timing = 1;
        else if (strcmp(argv[i], "--incremental") == 0)
            opts->incremental = 1;
        else {
            fprintf(stderr, "allot simulate: unknown option '%s'\n", argv[i]);
            return -1;
        }
    }
    if (*n_files == 0) {
        fprintf(stderr, "allot simulate: no scenario file given\n");
        return -1;
    }
    return 0;
}

static int wants_help(int argc, char **argv)
{
    int i;

    for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return 1;
    return 0;
}

int simulate_main(int argc, char **argv)
{
    struct sim_opts opts = {0, 0, 0};
    struct sim_totals totals = {0, 0};
    char **files = NULL;
    int n_files, i, status = SIM_OK, rc;

    if (wants_help(argc, argv)) {
        usage(stdout);
        printf("Runs scenario files through the scheduling core and checks their expectations.\n"
               "  --json    one JSON report per scenario instead of text\n"
               "  --timing  the wall time of every schedule step\n"
               "  --incremental  every pass also through the incremental path, which\n"
               "            must decide the same bytes\n");
        return SIM_OK;
    }
    if (parse_args(argc, argv, &opts, &files, &n_files) != 0) {
        usage(stderr);
        free(files);
        return SIM_ERROR;
    }
    for (i = 0; i < n_files; i++) {
        rc = run_file(&opts, files[i], &totals);
        status = rc > status ? rc : status;
    }
    if (!opts.json)
        printf("%d passed, %d failed\n", totals.passed, totals.failed);
    free(files);
    return status;
}
