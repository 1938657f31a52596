/*
 * cmd_whatif.c: what a change would do, asked of allotd without making it:
 * `allot whatif quota NAME --gpu-quota N`, `allot whatif drain NODE`,
 * `allot whatif delete NAME` and `allot whatif suspend NAME` (POST
 * /api/v1/whatif), and the answer of a dry-run submission
 * (`allot training submit ... --dry-run`, cmd_submit.c), printed here in
 * one short shape:
 *
 *   Change   Workload   Project   GPUs   Reason    Nodes
 *   stop     a1         team-a    1      reclaim   node-1:0
 *
 * A workload of a project the caller may not read has no name in the
 * answer: it shows as "-" of "another project". The quota answer adds the
 * fair share of each project and department it lists, before -> after.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "table.h"
#include "wl.h"

enum { O_QUOTA = 1, O_POOL, O_DEPARTMENT, O_JSON, O_PROJECT };

static const struct opt_spec quota_opts[] = {
    {"gpu-quota", 0, OPT_VALUE, O_QUOTA},
    {"node-pool", 0, OPT_VALUE, O_POOL},
    {"department", 0, OPT_FLAG, O_DEPARTMENT},
    {"json", 0, OPT_FLAG, O_JSON},
    {NULL, 0, 0, 0},
};
static const struct opt_spec drain_opts[] = {
    {"json", 0, OPT_FLAG, O_JSON},
    {NULL, 0, 0, 0},
};
static const struct opt_spec workload_opts[] = {
    {"project", 'p', OPT_VALUE, O_PROJECT},
    {"json", 0, OPT_FLAG, O_JSON},
    {NULL, 0, 0, 0},
};

static const struct cli_cmd quota_cmd = {
    "allot whatif quota", "NAME --gpu-quota N [--node-pool POOL] [--department] [--json]",
    "Shows what the next scheduling turn would do if project NAME's GPU quota in a node\n"
    "pool were N: the workloads that would start, stop or move, and the fair shares\n"
    "before and after. Nothing is changed.\n\n"
    "  --gpu-quota N      the GPUs the project would be guaranteed (fractions allowed)\n"
    "  --node-pool POOL   the pool of the quota (default: default)\n"
    "  --department       NAME is a department, not a project\n"
    "  --json             print the API's answer\n\n"
    "  allot whatif quota team-a --gpu-quota 4\n",
};

static const struct cli_cmd drain_cmd = {
    "allot whatif drain", "NODE [--json]",
    "Shows what the next scheduling turn would do if NODE left the cluster: its\n"
    "workloads stop or move, others may start. Nothing is changed.\n\n"
    "  --json   print the API's answer\n\n"
    "  allot whatif drain node-3\n",
};

/* A change that names one workload: the verb's usage and the API's type. */
struct workload_change {
    struct cli_cmd cmd;
    const char *type;
};

#define WORKLOAD_OPTIONS_HELP \
    "  -p, --project P   the workload's project (default: the configured one, else\n" \
    "                    any project you may read)\n" \
    "  --json            print the API's answer\n\n"

static const struct workload_change delete_change = {
    {"allot whatif delete", "NAME [-p PROJECT] [--json]",
     "Shows what the next scheduling turn would do if workload NAME were deleted:\n"
     "its GPUs freed, the workloads that would start in its room. Nothing is changed.\n\n"
     WORKLOAD_OPTIONS_HELP "  allot whatif delete train-1 -p team-a\n"},
    "deleteWorkload",
};

static const struct workload_change suspend_change = {
    {"allot whatif suspend", "NAME [-p PROJECT] [--json]",
     "Shows what the next scheduling turn would do if workload NAME were suspended:\n"
     "its GPUs freed, the workloads that would start in its room. Nothing is changed.\n\n"
     WORKLOAD_OPTIONS_HELP "  allot whatif suspend train-1 -p team-a\n"},
    "suspendWorkload",
};

/* ---- the answer ---- */

/* "node-1:0,1 node-2:3": where an entry's pods run (or ran). */
static void nodes_text(const json_t *pods, char *buf, size_t len)
{
    const json_t *p, *d;
    size_t i, k, used = 0;

    buf[0] = '\0';
    json_array_foreach(pods, i, p) {
        used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s:", i ? " " : "",
                                 jstr(p, "nodeName", "?"));
        json_array_foreach(json_object_get(p, "gpuDevices"), k, d)
            used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%lld",
                                     k ? "," : "", (long long)json_integer_value(d));
    }
    if (!buf[0])
        snprintf(buf, len, "-");
}

static void effect_row(struct table *t, const char *change, const json_t *e)
{
    const json_t *pods = json_object_get(e, "pods");
    char nodes[256];

    if (json_array_size(pods) == 0)
        pods = json_object_get(e, "previousPods");
    nodes_text(pods, nodes, sizeof(nodes));
    table_add(t, "%s", change);
    table_add(t, "%s", jstr(e, "name", "-"));
    table_add(t, "%s", jstr(e, "projectName", "another project"));
    table_add(t, "%g", jnum(e, "gpu", 0));
    table_add(t, "%s", jstr(e, "reason", "?"));
    table_add(t, "%s", nodes);
}

/* The workloads an answer starts, stops and moves; 0 rows: says so. */
static int print_effects(const json_t *a, const char *stopped_key)
{
    static const char *const heads[] = {"Change", "Workload", "Project", "GPUs", "Reason",
                                        "Nodes"};
    static const char *const changes[][2] = {{"start", "started"}, {"stop", NULL},
                                             {"move", "moved"}};
    const json_t *e;
    struct table t;
    size_t c, i;
    int rows = 0, oom;

    table_init(&t, 6, heads);
    for (c = 0; c < sizeof(changes) / sizeof(changes[0]); c++)
        json_array_foreach(json_object_get(a, changes[c][1] ? changes[c][1] : stopped_key), i,
                           e) {
            effect_row(&t, changes[c][0], e);
            rows++;
        }
    oom = t.oom;
    if (rows > 0 && !oom)
        table_print(&t, stdout, 1, "");
    else if (!oom)
        printf("no running workload would start, stop or move\n");
    table_free(&t);
    return oom ? cli_fail("out of memory") : CLI_OK;
}

/* One side's figure: "-" when that side has none, "unlimited" for -1. */
static void side_text(const json_t *s, const char *side, const char *key, char *buf, size_t len)
{
    const json_t *f = json_object_get(s, side);
    double v = jnum(f, key, 0);

    if (!json_is_object(f))
        snprintf(buf, len, "-");
    else if (v < 0)
        snprintf(buf, len, "unlimited");
    else
        snprintf(buf, len, "%g", v);
}

static void figure(struct table *t, const json_t *s, const char *key)
{
    char before[32], after[32];

    side_text(s, "before", key, before, sizeof(before));
    side_text(s, "after", key, after, sizeof(after));
    table_add(t, "%s -> %s", before, after);
}

static int print_shares(const json_t *a)
{
    static const char *const heads[] = {"Queue", "Node Pool", "GPU Quota", "Fair Share",
                                        "Allocated"};
    const json_t *s;
    struct table t;
    size_t i;
    int oom;

    table_init(&t, 5, heads);
    json_array_foreach(json_object_get(a, "fairShares"), i, s) {
        table_add(&t, "%s %s", jstr(s, "kind", "?"), jstr(s, "name", "?"));
        table_add(&t, "%s", jstr(s, "nodePool", "?"));
        figure(&t, s, "deserved");
        figure(&t, s, "fairShare");
        figure(&t, s, "allocated");
    }
    oom = t.oom;
    if (!oom && json_array_size(json_object_get(a, "fairShares")) > 0) {
        printf("\n");
        table_print(&t, stdout, 1, "");
    }
    table_free(&t);
    return oom ? cli_fail("out of memory") : CLI_OK;
}

int whatif_print_dry_run(const char *noun, const json_t *a)
{
    char nodes[256];

    if (json_is_true(json_object_get(a, "wouldRun"))) {
        nodes_text(json_object_get(a, "pods"), nodes, sizeof(nodes));
        printf("%s %s would start now in node pool %s on %s (%g GPU%s)\n", noun,
               jstr(a, "name", "?"), jstr(a, "nodePool", "?"), nodes, jnum(a, "gpu", 0),
               jnum(a, "gpu", 0) == 1 ? "" : "s");
    } else {
        printf("%s %s would wait (Pending): %s: %s\n", noun, jstr(a, "name", "?"),
               jstr(a, "pendingReason", "?"), jstr(a, "pendingMessage", ""));
    }
    if (json_array_size(json_object_get(a, "evictions")) +
            json_array_size(json_object_get(a, "moved")) +
            json_array_size(json_object_get(a, "started")) ==
        0)
        return CLI_OK;
    printf("\n");
    return print_effects(a, "evictions");
}

/* ---- the commands ---- */

static int ask(struct client *c, json_t *change, int json)
{
    json_t *body = json_pack("{s:[o]}", "changes", change), *answer = NULL;
    int rc = body ? client_json(c, "POST", "/api/v1/whatif", body, &answer)
                  : cli_fail("out of memory");

    if (rc == CLI_OK && json)
        out_json(stdout, answer);
    else if (rc == CLI_OK && (rc = print_effects(answer, "stopped")) == CLI_OK)
        rc = print_shares(answer);
    json_decref(answer);
    json_decref(body);
    return rc;
}

struct quota_args {
    const char *name, *pool;
    double quota;
    int has_quota, department, json;
};

static int quota_in(const struct opts *o, struct quota_args *a)
{
    int i, rc;

    memset(a, 0, sizeof(*a));
    a->pool = "default";
    for (i = 0; i < o->n_hits; i++)
        switch (o->hits[i].id) {
        case O_QUOTA:
            a->has_quota = 1;
            if (cli_parse_real(o->hits[i].val, 0, 1e6, &a->quota) != 0)
                return cli_usage_error(&quota_cmd, "--gpu-quota wants a number of GPUs, such "
                                                   "as 2");
            break;
        case O_POOL: a->pool = o->hits[i].val; break;
        case O_DEPARTMENT: a->department = 1; break;
        case O_JSON: a->json = 1; break;
        }
    if ((rc = cmd_one_operand(&quota_cmd, o, "NAME")) != CLI_OK)
        return rc;
    if (!a->has_quota)
        return cli_usage_error(&quota_cmd, "--gpu-quota N is required");
    a->name = o->pos[0];
    return CLI_OK;
}

static int whatif_quota(const void *ctx, int argc, char **argv)
{
    struct client *c = NULL;
    struct quota_args a;
    json_t *q = NULL, *change;
    struct opts o;
    int rc = cmd_parse(&quota_cmd, quota_opts, argc, argv, &o);

    (void)ctx;
    if (rc == CLI_OK && o.help)
        rc = cli_help(&quota_cmd);
    else if (rc == CLI_OK && (rc = quota_in(&o, &a)) == CLI_OK &&
             (rc = client_open(&c, CLIENT_LOGGED_IN)) == CLI_OK &&
             (rc = a.department ? find_department(c, a.name, &q) : find_project(c, a.name, &q)) ==
                 CLI_OK) {
        change = json_pack("{s:s, s:s, s:[{s:{s:s}, s:{s:f}}]}", "type", "quota",
                           a.department ? "departmentId" : "projectId", jstr(q, "id", ""),
                           "resources", "nodePool", "name", a.pool, "gpu", "deserved", a.quota);
        rc = change ? ask(c, change, a.json) : cli_fail("out of memory");
    }
    json_decref(q);
    client_close(c);
    opts_free(&o);
    return rc;
}

static int whatif_drain(const void *ctx, int argc, char **argv)
{
    struct client *c = NULL;
    json_t *change;
    struct opts o;
    int rc = cmd_parse(&drain_cmd, drain_opts, argc, argv, &o);

    (void)ctx;
    if (rc == CLI_OK && o.help)
        rc = cli_help(&drain_cmd);
    else if (rc == CLI_OK && (o.n_pos != 1 || o.has_rest))
        rc = cli_usage_error(&drain_cmd, o.n_pos > 1 ? "one node at a time" : "NODE is missing");
    else if (rc == CLI_OK && (rc = client_open(&c, CLIENT_LOGGED_IN)) == CLI_OK) {
        change = json_pack("{s:s, s:s}", "type", "drainNode", "nodeName", o.pos[0]);
        rc = change ? ask(c, change, o.n_hits > 0) : cli_fail("out of memory");
    }
    client_close(c);
    opts_free(&o);
    return rc;
}

/* delete and suspend (ctx: struct workload_change): the workload found by
 * name as other workload verbs find it, then one change naming its id. */
static int whatif_workload(const void *ctx, int argc, char **argv)
{
    const struct workload_change *wc = ctx;
    struct client *c = NULL;
    const char *project = NULL;
    json_t *w = NULL, *change;
    struct opts o;
    int i, json = 0, rc = cmd_parse(&wc->cmd, workload_opts, argc, argv, &o);

    for (i = 0; rc == CLI_OK && i < o.n_hits; i++) {
        if (o.hits[i].id == O_PROJECT)
            project = o.hits[i].val;
        json |= o.hits[i].id == O_JSON;
    }
    if (rc == CLI_OK && o.help)
        rc = cli_help(&wc->cmd);
    else if (rc == CLI_OK && (rc = cmd_one_operand(&wc->cmd, &o, "NAME")) == CLI_OK &&
             (rc = client_open(&c, CLIENT_LOGGED_IN)) == CLI_OK) {
        struct wl_key k = {o.pos[0], wl_project(c, project), NULL, "workload"};
        if ((rc = find_workload(c, &k, &w)) == CLI_OK) {
            change = json_pack("{s:s, s:s}", "type", wc->type, "workloadId", jstr(w, "id", ""));
            rc = change ? ask(c, change, json) : cli_fail("out of memory");
        }
    }
    json_decref(w);
    client_close(c);
    opts_free(&o);
    return rc;
}

int cmd_whatif_main(int argc, char **argv)
{
    static const struct verb verbs[] = {
        {"quota", whatif_quota, NULL, NULL},
        {"drain", whatif_drain, NULL, NULL},
        {"delete", whatif_workload, &delete_change, NULL},
        {"suspend", whatif_workload, &suspend_change, NULL},
        {NULL, NULL, NULL, NULL},
    };
    static const struct cli_cmd cmd = {
        "allot whatif", "quota|drain|delete|suspend ...",
        "What the next scheduling turn would do after a change, without making it:\n"
        "  quota     a project's (or department's) GPU quota in a node pool\n"
        "  drain     a node leaving the cluster\n"
        "  delete    a workload deleted\n"
        "  suspend   a workload suspended\n"
        "(a submission's: allot training submit ... --dry-run)\n",
    };

    return verb_dispatch(&cmd, verbs, argc, argv);
}
