/*
 * cmd_workload.c: the workload groups (`allot training|workspace|
 * inference|distributed|workload VERB`) and their verbs list, delete,
 * suspend, resume and logs. submit and describe have their own files.
 *
 * Grammar, as the runai CLI has it: `allot training submit`, with the
 * subtypes `allot training standard ...` (the same) and `allot training
 * pytorch|mpi|tensorflow|xgboost|jax ...` (distributed training with that
 * framework). `allot workload` sees every type and cannot submit.
 *
 * A workload is named by NAME and its project: -p, else the default
 * project (allot project set), else any project the caller may read, as
 * long as only one of them has a workload of that name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"
#include "wl.h"

enum { O_ALL = 1, O_PROJECT, O_STATUS, O_TYPE, O_YES, O_FOLLOW, O_TAIL, O_POD };

void wl_cmd_init(struct wl_cmd *w, const struct wl_noun *n, const char *verb, const char *usage,
                 const char *help)
{
    snprintf(w->name, sizeof(w->name), "allot %s %s", n->words, verb);
    w->cmd.name = w->name;
    w->cmd.usage = usage;
    w->cmd.help = help;
}

const char *wl_project(struct client *c, const char *flag)
{
    return flag ? flag : client_config(c)->project;
}

/* ---- list ---- */

static const struct opt_spec list_opts[] = {
    {"all", 'A', OPT_FLAG, O_ALL},
    {"project", 'p', OPT_VALUE, O_PROJECT},
    {"status", 0, OPT_VALUE, O_STATUS},
    {"type", 0, OPT_VALUE, O_TYPE},
    FORMAT_OPTIONS,
    {NULL, 0, 0, 0},
};

static const char list_usage[] =
    "[-A | -p PROJECT] [--status STATUS] [--type TYPE] " FORMAT_USAGE;
static const char list_help[] =
    "Lists workloads: of -p PROJECT, of every project you may see with -A, else\n"
    "of the default project (allot project set), else of every project.\n\n"
    "  -A, --all             every project\n"
    "  -p, --project NAME    one project\n"
    "  --status STATUS       only this phase: Pending, Running, Stopped, Completed, ...\n"
    "  --type TYPE           allot workload list only: training, workspace, inference\n"
    "                        or distributed\n"
    FORMAT_HELP;

static const char *const phases[] = {
    "Creating", "Initializing", "Resuming", "Pending", "Deleting", "Running", "Updating",
    "Stopped", "Stopping", "Degraded", "Failed", "Completed", "Terminating", "Unknown", NULL,
};

static const char *const types[] = {"Training", "Workspace", "Inference", "Distributed", NULL};

static const char *canonical(const char *const *words, const char *s)
{
    for (; *words; words++)
        if (cli_eq_nocase(*words, s))
            return *words;
    return NULL;
}

struct list_args {
    int all, format;
    const char *project, *status, *type;
};

static int list_hit(const struct cli_cmd *cmd, const struct wl_noun *n, const struct opt_hit *h,
                    struct list_args *a)
{
    switch (h->id) {
    case O_ALL: a->all = 1; break;
    case O_PROJECT: a->project = h->val; break;
    case O_STATUS:
        a->status = canonical(phases, h->val);
        if (!a->status)
            return cli_usage_error(cmd, "unknown status '%s' (Pending, Running, Stopped, "
                                        "Completed, Failed, ...)", h->val);
        break;
    case O_TYPE:
        a->type = canonical(types, h->val);
        if (n->type)
            return cli_usage_error(cmd, "--type is for allot workload list");
        if (!a->type)
            return cli_usage_error(cmd, "unknown type '%s' (training, workspace, inference, "
                                        "distributed)", h->val);
        break;
    default: take_format(h, &a->format); break;
    }
    return CLI_OK;
}

static int list_args_in(const struct cli_cmd *cmd, const struct wl_noun *n, const struct opts *o,
                        struct list_args *a)
{
    int i, rc = CLI_OK;

    memset(a, 0, sizeof(*a));
    a->type = n->type;
    for (i = 0; rc == CLI_OK && i < o->n_hits; i++)
        rc = list_hit(cmd, n, &o->hits[i], a);
    if (rc != CLI_OK)
        return rc;
    if (a->format == FORMAT_CONFLICT)
        return cli_usage_error(cmd, FORMAT_CONFLICT_MSG);
    if (a->all && a->project)
        return cli_usage_error(cmd, "-A and -p exclude each other");
    if (o->n_pos || o->has_rest)
        return cli_usage_error(cmd, "unexpected argument '%s'", o->n_pos ? o->pos[0] : "--");
    return CLI_OK;
}

static char *list_path(const struct list_args *a, const char *project)
{
    char *filter = NULL, *path = NULL;

    if (filter_add(&filter, "projectName", project) == 0 &&
        filter_add(&filter, "phase", a->status) == 0 && filter_add(&filter, "type", a->type) == 0)
        path = workloads_path(filter);
    free(filter);
    return path;
}

/* The GPU columns: what the workload asks (GPU memory, for a memory
 * request) and what its pods hold now, as the API and the dashboard have
 * them (a pending workload holds 0). */
static void gpu_cells(struct table *t, const json_t *w)
{
    if (strcmp(jstr(w, "workloadRequestedResources.gpuRequestType", ""), "memory") == 0)
        table_add(t, "%s", jstr(w, "workloadRequestedResources.gpuMemory.request", "-"));
    else
        table_add(t, "%.2f", jnum(w, "workloadRequestedResources.gpu.request", 0));
    table_add(t, "%.2f", jnum(w, "allocatedResources.gpu", 0));
}

/* A list's row of a workload (w); ctx unused. */
static void workload_row(struct table *t, const void *ctx, const json_t *w)
{
    long running = (long)jnum(w, "runningPods", 0);
    long number = (long)jnum(w, "requestedPods.number", 0);
    long min = (long)jnum(w, "requestedPods.min", (double)number);
    long max = (long)jnum(w, "requestedPods.max", (double)number);

    (void)ctx;

    table_add(t, "%s", jstr(w, "name", "?"));
    table_add(t, "%s", jstr(w, "type", "?"));
    table_add(t, "%s", jstr(w, "phase", "?"));
    table_add(t, "%s", jstr(w, "projectName", "?"));
    table_add(t, "%s", json_is_true(json_object_get(w, "preemptible")) ? "Yes" : "No");
    if (min != max)
        table_add(t, "%ld/%ld-%ld", running, min, max);
    else
        table_add(t, "%ld/%ld", running, number);
    gpu_cells(t, w);
}

static int print_workloads(const json_t *all, int format)
{
    static const char *const heads[] = {"Workload", "Type", "Status", "Project", "Preemptible",
                                        "Running/Requested Pods", "GPU Request",
                                        "GPU Allocation"};

    return print_items(format, 8, heads, all, workload_row, NULL);
}

static int do_list(struct client *c, const struct list_args *a)
{
    const char *project = a->all ? NULL : wl_project(c, a->project);
    char *path = list_path(a, project);
    json_t *all = NULL;
    int rc;

    if (!path)
        return cli_fail("out of memory");
    rc = client_list_all(c, path, "workloads", &all);
    if (rc == CLI_OK && project && json_array_size(all) == 0) {
        json_t *p = NULL; /* no rows: a project that does not exist says so, exit 1 */

        rc = find_project(c, project, &p);
        json_decref(p);
    }
    if (rc == CLI_OK)
        rc = print_workloads(all, a->format);
    json_decref(all);
    free(path);
    return rc;
}

static int wl_list(const struct wl_noun *n, int argc, char **argv)
{
    struct wl_cmd w;
    struct list_args a;
    struct client *c = NULL;
    struct opts o;
    int rc;

    wl_cmd_init(&w, n, "list", n->type ? "[-A | -p PROJECT] [--status STATUS] "
                                         FORMAT_USAGE : list_usage,
                list_help);
    rc = cmd_parse(&w.cmd, list_opts, argc, argv, &o);
    if (rc == CLI_OK && o.help)
        rc = cli_help(&w.cmd);
    else if (rc == CLI_OK && (rc = list_args_in(&w.cmd, n, &o, &a)) == CLI_OK &&
             (rc = client_open(&c, CLIENT_LOGGED_IN)) == CLI_OK)
        rc = do_list(c, &a);
    client_close(c);
    opts_free(&o);
    return rc;
}

/* ---- delete, suspend, resume ---- */

static const struct opt_spec act_opts[] = {
    {"project", 'p', OPT_VALUE, O_PROJECT},
    {"yes", 'y', OPT_FLAG, O_YES},
    {"all", 0, OPT_FLAG, O_ALL},
    {NULL, 0, 0, 0},
};

/* One of delete, suspend, resume. */
struct action {
    const char *verb;
    const char *suffix;        /* of the route after /api/v1/workloads/{id} */
    const char *method;
    int asks;                  /* delete asks first */
};

static const struct action actions[] = {
    {"delete", "", "DELETE", 1},
    {"suspend", "/suspend", "POST", 0},
    {"resume", "/resume", "POST", 0},
};

struct act_args {
    const char *name, *project;
    int yes, all;              /* all: delete --all, every one of the project */
};

static int act_args_in(const struct cli_cmd *cmd, const struct action *act, const struct opts *o,
                       struct act_args *a)
{
    int i;

    memset(a, 0, sizeof(*a));
    for (i = 0; i < o->n_hits; i++) {
        if (o->hits[i].id == O_PROJECT)
            a->project = o->hits[i].val;
        else if (!act->asks)
            return cli_usage_error(cmd, "%s is for delete",
                                   o->hits[i].id == O_ALL ? "--all" : "-y");
        else if (o->hits[i].id == O_ALL)
            a->all = 1;
        else
            a->yes = 1;
    }
    if (a->all && (o->n_pos || o->has_rest))
        return cli_usage_error(cmd, "--all deletes every workload of the project: give no NAME");
    if (a->all)
        return delete_allowed(cmd, a->yes);
    if (o->n_pos != 1 || o->has_rest)
        return cli_usage_error(cmd, o->n_pos > 1 ? "one workload at a time" : "NAME is missing");
    a->name = o->pos[0];
    return act->asks ? delete_allowed(cmd, a->yes) : CLI_OK;
}

/* Asks on the terminal; 1 if the answer is yes. */
static int confirm(const struct wl_noun *n, const json_t *w)
{
    char *q = cli_strf("Delete %s %s of project %s", n->noun, jstr(w, "name", "?"),
                       jstr(w, "projectName", "?"));
    int yes = q && delete_confirmed(0, q);

    free(q);
    return yes;
}

static int do_action(struct client *c, const struct wl_noun *n, const struct action *act,
                     const struct act_args *a)
{
    struct wl_key k = {a->name, wl_project(c, a->project), n->type, n->noun};
    json_t *w = NULL, *answer = NULL;
    char *path = NULL;
    int rc = find_workload(c, &k, &w);

    if (rc != CLI_OK)
        goto out;
    if (act->asks && !a->yes && !confirm(n, w)) {
        printf("%s was not deleted\n", a->name);
        goto out;
    }
    path = cli_strf("/api/v1/workloads/%s%s", jstr(w, "id", ""), act->suffix);
    rc = path ? client_json(c, act->method, path, NULL, &answer) : cli_fail("out of memory");
    if (rc == CLI_OK)
        printf("%s\n", jstr(answer, "message", "done"));
out:
    json_decref(answer);
    json_decref(w);
    free(path);
    return rc;
}

/* delete --all: every workload of the noun's type in the project (-p,
 * else the default one; never every project), after one question that
 * says how many. Each is deleted on its own route; a refusal is reported
 * and the rest go on. */
static int do_delete_all(struct client *c, const struct wl_noun *n, const struct act_args *a)
{
    const char *project = wl_project(c, a->project), *kind = n->type ? n->noun : "";
    char *filter = NULL, *path = NULL, *q = NULL, *one;
    json_t *all = NULL, *w, *answer;
    size_t i, todo = 0, done = 0;
    int rc = CLI_OK, r;

    if (!project)
        return cli_fail("delete --all deletes the workloads of one project: give -p PROJECT "
                        "(or set a default with allot project set NAME)");
    if (filter_add(&filter, "projectName", project) != 0 ||
        filter_add(&filter, "type", n->type) != 0 || !(path = workloads_path(filter)))
        rc = cli_fail("out of memory");
    if (rc == CLI_OK)
        rc = client_list_all(c, path, "workloads", &all);
    json_array_foreach(all, i, w)
        todo += strcmp(jstr(w, "phase", ""), "Deleting") != 0;
    if (rc == CLI_OK && todo == 0)
        printf("project %s has no %s%sworkloads to delete\n", project, kind, kind[0] ? " " : "");
    else if (rc == CLI_OK &&
             !(q = cli_strf("Delete %zu %s%sworkload%s of project %s", todo, kind,
                            kind[0] ? " " : "", todo == 1 ? "" : "s", project)))
        rc = cli_fail("out of memory");
    else if (rc == CLI_OK && !delete_confirmed(a->yes, q))
        printf("nothing was deleted\n");
    else if (rc == CLI_OK) {
        json_array_foreach(all, i, w) {
            if (strcmp(jstr(w, "phase", ""), "Deleting") == 0)
                continue;
            answer = NULL;
            one = cli_strf("/api/v1/workloads/%s", jstr(w, "id", ""));
            r = one ? client_json(c, "DELETE", one, NULL, &answer) : cli_fail("out of memory");
            done += r == CLI_OK;
            rc = r != CLI_OK ? r : rc;
            json_decref(answer);
            free(one);
        }
        printf("deleted %zu of %zu %s%sworkloads of project %s\n", done, todo, kind,
               kind[0] ? " " : "", project);
    }
    json_decref(all);
    free(filter);
    free(path);
    free(q);
    return rc;
}

static int wl_act(const struct wl_noun *n, const struct action *act, int argc, char **argv)
{
    struct wl_cmd w;
    struct act_args a;
    struct client *c = NULL;
    struct opts o;
    int rc;

    wl_cmd_init(&w, n, act->verb,
                act->asks ? "NAME [-p PROJECT] [-y] | --all [-p PROJECT] [-y]" : "NAME [-p PROJECT]",
                act->asks ? "Deletes a workload, or with --all every one of the project. On a\n"
                            "terminal it asks first; elsewhere -y is required.\n\n"
                            "  -p, --project NAME    the workload's project\n"
                            "  --all                 every workload (of this type) of the project:\n"
                            "                        -p, else the default project\n"
                            "  -y, --yes             do not ask\n"
                          : "  -p, --project NAME    the workload's project\n");
    rc = cmd_parse(&w.cmd, act_opts, argc, argv, &o);
    if (rc == CLI_OK && o.help)
        rc = cli_help(&w.cmd);
    else if (rc == CLI_OK && (rc = act_args_in(&w.cmd, act, &o, &a)) == CLI_OK &&
             (rc = client_open(&c, CLIENT_LOGGED_IN)) == CLI_OK)
        rc = a.all ? do_delete_all(c, n, &a) : do_action(c, n, act, &a);
    client_close(c);
    opts_free(&o);
    return rc;
}

static int wl_delete(const struct wl_noun *n, int argc, char **argv)
{
    return wl_act(n, &actions[0], argc, argv);
}

static int wl_suspend(const struct wl_noun *n, int argc, char **argv)
{
    return wl_act(n, &actions[1], argc, argv);
}

static int wl_resume(const struct wl_noun *n, int argc, char **argv)
{
    return wl_act(n, &actions[2], argc, argv);
}

/* ---- logs ---- */

static const struct opt_spec logs_opts[] = {
    {"project", 'p', OPT_VALUE, O_PROJECT},
    {"follow", 'f', OPT_FLAG, O_FOLLOW},
    {"tail", 0, OPT_VALUE, O_TAIL},
    {"pod", 0, OPT_VALUE, O_POD},
    {NULL, 0, 0, 0},
};

struct logs_args {
    const char *name, *project;
    const char *pod;           /* a pod's name or index, or NULL: the first */
    int follow;
    long tail;                 /* -1: all */
};

static int logs_args_in(const struct cli_cmd *cmd, const struct opts *o, struct logs_args *a)
{
    int i;

    memset(a, 0, sizeof(*a));
    a->tail = -1;
    for (i = 0; i < o->n_hits; i++) {
        const struct opt_hit *h = &o->hits[i];
        if (h->id == O_PROJECT)
            a->project = h->val;
        else if (h->id == O_FOLLOW)
            a->follow = 1;
        else if (h->id == O_POD)
            a->pod = h->val;
        else if (cli_parse_int(h->val, -1, 1000000L, &a->tail) != 0)
            return cli_usage_error(cmd, "--tail wants a number of lines, or -1 for all");
    }
    if (o->n_pos != 1 || o->has_rest)
        return cli_usage_error(cmd, o->n_pos > 1 ? "one workload at a time" : "NAME is missing");
    a->name = o->pos[0];
    return CLI_OK;
}

/* A 404 whose details are the path itself comes from the router: the
 * server has no such route, as opposed to no such workload. */
static int logs_error(struct client *c, const struct reply *rep, const char *route)
{
    json_t *o = json_loadb(rep->body ? rep->body : "", rep->len, 0, NULL);
    int missing = rep->status == 404 && strcmp(jstr(o, "details", ""), route) == 0;

    json_decref(o);
    if (missing)
        return cli_fail("%s does not serve workload logs (GET %s answered 404 Not found): "
                        "this allotd has no logs route yet", client_config(c)->url, route);
    return client_server_error(c, rep);
}

/* The index of pod a->pod among w's pods (the API numbers them). */
static int pod_index(struct client *c, const json_t *w, const char *pod, long *idx)
{
    json_t *page = NULL, *p;
    char *path;
    size_t i;
    int rc;

    if (cli_parse_int(pod, 0, 100000, idx) == 0)
        return CLI_OK;
    path = cli_strf("/api/v1/workloads/%s/pods", jstr(w, "id", ""));
    rc = path ? client_json(c, "GET", path, NULL, &page) : cli_fail("out of memory");
    *idx = -1;
    json_array_foreach(json_object_get(page, "pods"), i, p)
        if (*idx < 0 && strcmp(jstr(p, "name", ""), pod) == 0)
            *idx = (long)i;
    if (rc == CLI_OK && *idx < 0)
        rc = cli_fail("%s has no pod named %s: allot workload describe %s --pods lists them",
                      jstr(w, "name", "?"), pod, jstr(w, "name", "?"));
    json_decref(page);
    free(path);
    return rc;
}

static char *logs_path(const char *route, const struct logs_args *a, long pod)
{
    char p[32] = "";

    if (pod >= 0)
        snprintf(p, sizeof(p), "&pod=%ld", pod);
    return cli_strf("%s?tailLines=%ld%s%s", route, a->tail, p, a->follow ? "&follow=true" : "");
}

/* After `logs -f`: the stream ended. allotd ends it when the workload has
 * ended, and otherwise when it follows 4 logs already (it then sends what
 * there is without following), after an hour, or when it stops; in those
 * cases say so rather than pass for the workload's end. */
static void note_follow_end(struct client *c, const json_t *w)
{
    static const char *const ended[] = {"Completed", "Failed", "Stopped", "Deleting", NULL};
    char *path = cli_strf("/api/v1/workloads/%s", jstr(w, "id", ""));
    json_t *now = NULL;
    const char *phase;
    int i, over = 0;

    if (path && client_json(c, "GET", path, NULL, &now) == CLI_OK) {
        phase = jstr(now, "phase", "");
        for (i = 0; ended[i]; i++)
            over |= strcmp(phase, ended[i]) == 0;
        if (!over && !json_is_string(json_object_get(now, "deletedAt")))
            fprintf(stderr, "allot: stopped following: %s is still %s, but allotd ended the "
                            "stream (it follows at most 4 logs at once, each for at most an "
                            "hour); run the command again to go on\n",
                    jstr(w, "name", "?"), phase);
    }
    json_decref(now);
    free(path);
}

static int do_logs(struct client *c, const struct wl_noun *n, const struct logs_args *a)
{
    struct wl_key k = {a->name, wl_project(c, a->project), n->type, n->noun};
    struct reply rep = {0};
    json_t *w = NULL;
    char *route = NULL, *path = NULL;
    long pod = -1;
    int rc = find_workload(c, &k, &w);

    if (rc == CLI_OK && a->pod)
        rc = pod_index(c, w, a->pod, &pod);
    if (rc != CLI_OK)
        goto out;
    route = cli_strf("/api/v1/workloads/%s/logs", jstr(w, "id", ""));
    path = route ? logs_path(route, a, pod) : NULL;
    rc = path ? client_stream(c, path, a->follow, stdout, &rep) : cli_fail("out of memory");
    if (rc == CLI_OK && (rep.status < 200 || rep.status > 299))
        rc = logs_error(c, &rep, route);
    else if (rc == CLI_OK && a->follow)
        note_follow_end(c, w);
out:
    reply_clear(&rep);
    json_decref(w);
    free(path);
    free(route);
    return rc;
}

static int wl_logs(const struct wl_noun *n, int argc, char **argv)
{
    struct wl_cmd w;
    struct logs_args a;
    struct client *c = NULL;
    struct opts o;
    int rc;

    wl_cmd_init(&w, n, "logs", "NAME [-p PROJECT] [-f] [--tail N] [--pod POD]",
                "Prints what the workload's pod wrote, as the node agents captured it.\n\n"
                "  -p, --project NAME    the workload's project\n"
                "  -f, --follow          keep printing as lines arrive\n"
                "  --tail N              only the last N lines (-1, the default: all)\n"
                "  --pod POD             which pod: its name (describe lists them) or its\n"
                "                        number from 0 (default: the first)\n");
    rc = cmd_parse(&w.cmd, logs_opts, argc, argv, &o);
    if (rc == CLI_OK && o.help)
        rc = cli_help(&w.cmd);
    else if (rc == CLI_OK && (rc = logs_args_in(&w.cmd, &o, &a)) == CLI_OK &&
             (rc = client_open(&c, CLIENT_LOGGED_IN)) == CLI_OK)
        rc = do_logs(c, n, &a);
    client_close(c);
    opts_free(&o);
    return rc;
}

/* ---- the groups ---- */

struct wl_verb {
    const char *name;
    int (*run)(const struct wl_noun *n, int argc, char **argv);
    unsigned kinds;            /* bit (1 << kind) for each noun that has it */
    const char *summary;
};

#define ALL_KINDS 0x1fu
#define TYPED_KINDS 0x1eu
#define K(kind) (1u << (kind))

static const struct wl_verb wl_verbs[] = {
    {"submit", wl_submit, TYPED_KINDS, "submit a new one"},
    {"list", wl_list, ALL_KINDS, "list them with their status and GPUs"},
    {"describe", wl_describe, ALL_KINDS,
     "details, compute, pods, events, and why it is pending"},
    {"delete", wl_delete, ALL_KINDS, "delete one"},
    {"suspend", wl_suspend, ALL_KINDS & ~K(WL_INFERENCE),
     "stop one and free its GPUs, keeping its definition"},
    {"resume", wl_resume, ALL_KINDS & ~K(WL_INFERENCE), "queue a suspended one again"},
    {"logs", wl_logs, ALL_KINDS, "print what its pods wrote"},
    {NULL, NULL, 0, NULL},
};

static int group_help(const struct wl_noun *n, FILE *to)
{
    const struct wl_verb *v;

    fprintf(to, "usage: allot %s COMMAND [NAME] [flags]   (allot %s COMMAND --help)\n",
            n->words, n->words);
    if (to != stdout)
        return CLI_USAGE;
    printf("\ncommands:\n");
    for (v = wl_verbs; v->name; v++)
        if (v->kinds & K(n->kind))
            printf("  %-10s %s\n", v->name, v->summary);
    if (strcmp(n->words, "training") == 0)
        printf("\nsubtypes: allot training standard COMMAND is the same; allot training\n"
               "pytorch|mpi|tensorflow|xgboost|jax COMMAND is distributed training.\n");
    return CLI_OK;
}

static const struct wl_noun frameworks[] = {
    {"training pytorch", "distributed", "Distributed", "/api/v1/workloads/distributed",
     "PyTorch", WL_DISTRIBUTED},
    {"training mpi", "distributed", "Distributed", "/api/v1/workloads/distributed", "MPI",
     WL_DISTRIBUTED},
    {"training tensorflow", "distributed", "Distributed", "/api/v1/workloads/distributed", "TF",
     WL_DISTRIBUTED},
    {"training xgboost", "distributed", "Distributed", "/api/v1/workloads/distributed",
     "XGBoost", WL_DISTRIBUTED},
    {"training jax", "distributed", "Distributed", "/api/v1/workloads/distributed", "JAX",
     WL_DISTRIBUTED},
    {NULL, NULL, NULL, NULL, NULL, 0},
};

/* argv[0] is the noun (or the subtype), argv[1] the verb. */
static int wl_dispatch(const struct wl_noun *n, int argc, char **argv)
{
    const struct wl_verb *v;
    const char *near;

    if (argc < 2) {
        fprintf(stderr, "allot %s: a command is missing\n", n->words);
        return group_help(n, stderr);
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
        return group_help(n, stdout);
    for (v = wl_verbs; v->name; v++)
        if (strcmp(argv[1], v->name) == 0 && (v->kinds & K(n->kind)))
            return v->run(n, argc - 1, argv + 1);
    near = cli_nearest(argv[1], wl_verbs, sizeof(wl_verbs[0]), -1, NULL);
    for (v = wl_verbs; near && v->name; v++)
        if (v->name == near && !(v->kinds & K(n->kind)))
            near = NULL;       /* not a verb of this noun */
    fprintf(stderr, "allot %s: unknown command '%s'", n->words, argv[1]);
    if (near)
        fprintf(stderr, ": did you mean '%s'?", near);
    fputc('\n', stderr);
    return group_help(n, stderr);
}

int cmd_training_main(int argc, char **argv)
{
    static const struct wl_noun n = {"training", "training", "Training",
                                     "/api/v1/workloads/trainings", NULL, WL_TRAINING};
    const struct wl_noun *f;

    if (argc >= 2 && strcmp(argv[1], "standard") == 0)
        return wl_dispatch(&n, argc - 1, argv + 1);
    for (f = frameworks; argc >= 2 && f->words; f++)
        if (strcmp(argv[1], f->words + strlen("training ")) == 0)
            return wl_dispatch(f, argc - 1, argv + 1);
    return wl_dispatch(&n, argc, argv);
}

int cmd_workspace_main(int argc, char **argv)
{
    static const struct wl_noun n = {"workspace", "workspace", "Workspace",
                                     "/api/v1/workloads/workspaces", NULL, WL_WORKSPACE};

    return wl_dispatch(&n, argc, argv);
}

int cmd_inference_main(int argc, char **argv)
{
    static const struct wl_noun n = {"inference", "inference", "Inference",
                                     "/api/v1/workloads/inferences", NULL, WL_INFERENCE};

    return wl_dispatch(&n, argc, argv);
}

int cmd_distributed_main(int argc, char **argv)
{
    static const struct wl_noun n = {"distributed", "distributed", "Distributed",
                                     "/api/v1/workloads/distributed", NULL, WL_DISTRIBUTED};

    return wl_dispatch(&n, argc, argv);
}

int cmd_workload_main(int argc, char **argv)
{
    static const struct wl_noun n = {"workload", "workload", NULL, NULL, NULL, WL_ANY};

    return wl_dispatch(&n, argc, argv);
}
