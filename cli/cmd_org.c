/*
 * cmd_org.c: `allot project list|set|create` and `allot department
 * list|create`: the organization's queues, their GPU quota per node pool
 * and what they hold now.
 *
 * Both groups share one table (name, GPU quota, allocated GPUs, the
 * allocation ratio) and one create body: a resources[] entry for one node
 * pool with gpu {deserved, limit, overQuotaWeight}.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "table.h"

enum { O_QUOTA = 1, O_POOL, O_WEIGHT, O_LIMIT, O_DEPARTMENT };

static const struct opt_spec list_opts[] = {FORMAT_OPTIONS, {NULL, 0, 0, 0}};
static const struct opt_spec set_opts[] = {{NULL, 0, 0, 0}};
#define QUOTA_OPTIONS                                                                          \
    {"gpu-quota", 0, OPT_VALUE, O_QUOTA}, {"node-pool", 0, OPT_VALUE, O_POOL},                 \
    {"over-quota-weight", 0, OPT_VALUE, O_WEIGHT}, {"limit", 0, OPT_VALUE, O_LIMIT},           \
    {"json", 0, OPT_FLAG, O_FORMAT_JSON}

static const struct opt_spec project_create_opts[] = {
    QUOTA_OPTIONS,
    {"department", 0, OPT_VALUE, O_DEPARTMENT},
    {NULL, 0, 0, 0},
};
static const struct opt_spec department_create_opts[] = {QUOTA_OPTIONS, {NULL, 0, 0, 0}};

/* What tells the two groups apart. */
struct org_kind {
    const char *noun;          /* "project" */
    const char *path;          /* of the list and create routes */
    const char *key;           /* the list's array */
    const struct opt_spec *create_opts;
    struct cli_cmd list, create;
};

static const struct org_kind project_kind = {
    "project", "/api/v1/org-unit/projects", "projects", project_create_opts,
    {"allot project list", "[--json | --yaml | --no-headers]",
     "Lists the projects you may see: GPU quota, GPUs allocated now, and their ratio.\n"},
    {"allot project create", "NAME --gpu-quota N [--node-pool POOL] [--over-quota-weight W] "
                             "[--limit N] [--department DEPT] [--json]",
     "Creates a project with a GPU quota (deserved GPUs) in one node pool.\n\n"
     "  --gpu-quota N            GPUs the project is guaranteed (fractions allowed)\n"
     "  --node-pool POOL         the pool of the quota (default: default)\n"
     "  --over-quota-weight W    its share of idle GPUs beyond the quota (default 1)\n"
     "  --limit N                a hard cap on its GPUs (default: none)\n"
     "  --department DEPT        its department (default: default)\n"
     "  --json                   print the created project\n"},
};

static const struct org_kind department_kind = {
    "department", "/api/v1/org-unit/departments", "departments", department_create_opts,
    {"allot department list", "[--json | --yaml | --no-headers]",
     "Lists the departments you may see: GPU quota, GPUs allocated now, and their ratio.\n"},
    {"allot department create", "NAME --gpu-quota N [--node-pool POOL] "
                                "[--over-quota-weight W] [--limit N] [--json]",
     "Creates a department with a GPU quota in one node pool; its projects share it.\n\n"
     "  --gpu-quota N            GPUs the department is guaranteed\n"
     "  --node-pool POOL         the pool of the quota (default: default)\n"
     "  --over-quota-weight W    its share of idle GPUs beyond the quota (default 1)\n"
     "  --limit N                a hard cap on its GPUs (default: none)\n"
     "  --json                   print the created department\n"},
};

static const struct cli_cmd set_cmd = {
    "allot project set", "NAME",
    "Makes NAME the default project of submit, list, describe and the rest.\n",
};

/* ---- list ---- */

static void queue_row(struct table *t, const json_t *q, int with_parent)
{
    double quota = jnum(q, "totalResources.gpuQuota", 0);
    double alloc = jnum(q, "status.quotaStatus.allocated.gpu", 0);

    table_add(t, "%s", jstr(q, "name", "?"));
    if (with_parent)
        table_add(t, "%s", jstr(q, "parent.name", "-"));
    if (quota < 0)
        table_add(t, "unlimited");
    else
        table_add(t, "%.2f", quota);
    table_add(t, "%.2f", alloc);
    if (quota > 0)
        table_add(t, "%.2f%%", alloc * 100.0 / quota);
    else
        table_add(t, "-");
}

static int print_queues(const struct org_kind *k, const json_t *all, int format)
{
    static const char *const heads[] = {"Project", "Department", "GPU Quota", "Allocated GPUs",
                                        "GPU Allocation Ratio"};
    int projects = k == &project_kind, oom;
    struct table t;
    json_t *q;
    size_t i;

    /* departments have no Department column */
    table_init(&t, projects ? 5 : 4, projects ? heads : heads + 1);
    json_array_foreach(all, i, q)
        queue_row(&t, q, projects);
    oom = t.oom;
    if (!oom)
        print_listing(format, &t, all);
    table_free(&t);
    return oom ? cli_fail("out of memory") : CLI_OK;
}

static int org_list(const void *ctx, int argc, char **argv)
{
    const struct org_kind *k = ctx;
    struct client *c = NULL;
    json_t *all = NULL;
    struct opts o;
    int format, rc = cmd_parse(&k->list, list_opts, argc, argv, &o);

    if (rc == CLI_OK && o.help)
        rc = cli_help(&k->list);
    else if (rc == CLI_OK && (rc = cmd_list_args(&k->list, &o, &format)) == CLI_OK &&
             (rc = client_open(&c, CLIENT_LOGGED_IN)) == CLI_OK &&
             (rc = client_list_all(c, k->path, k->key, &all)) == CLI_OK)
        rc = print_queues(k, all, format);
    json_decref(all);
    client_close(c);
    opts_free(&o);
    return rc;
}

/* ---- set ---- */

static int project_set(const void *ctx, int argc, char **argv)
{
    struct client *c = NULL;
    struct cli_config *cfg;
    json_t *p = NULL;
    struct opts o;
    int rc = cmd_parse(&set_cmd, set_opts, argc, argv, &o);

    (void)ctx;
    if (rc == CLI_OK && o.help)
        rc = cli_help(&set_cmd);
    else if (rc == CLI_OK && (o.n_pos != 1 || o.has_rest))
        rc = cli_usage_error(&set_cmd, o.n_pos ? "one project at a time" : "NAME is missing");
    else if (rc == CLI_OK && (rc = client_open(&c, CLIENT_LOGGED_IN)) == CLI_OK &&
             (rc = find_project(c, o.pos[0], &p)) == CLI_OK) {
        cfg = client_config(c);
        rc = config_set(&cfg->project, o.pos[0]) ? cli_fail("out of memory") : config_save(cfg);
        if (rc == CLI_OK)
            printf("project %s configured successfully\n", o.pos[0]);
    }
    json_decref(p);
    client_close(c);
    opts_free(&o);
    return rc;
}

/* ---- create ---- */

struct quota_args {
    const char *name;
    const char *pool;
    const char *department;
    double quota, limit, weight;
    int has_quota, has_limit, has_weight, json;
};

static int quota_hit(const struct cli_cmd *cmd, const struct opt_hit *h, struct quota_args *a)
{
    switch (h->id) {
    case O_QUOTA:
        a->has_quota = 1;
        if (cli_parse_real(h->val, 0, 1e6, &a->quota) != 0)
            return cli_usage_error(cmd, "--gpu-quota wants a number of GPUs, such as 2");
        break;
    case O_LIMIT:
        a->has_limit = 1;
        if (cli_parse_real(h->val, -1, 1e6, &a->limit) != 0 || (a->limit < 0 && a->limit != -1))
            return cli_usage_error(cmd, "--limit wants a number of GPUs, or -1 for none");
        break;
    case O_WEIGHT:
        a->has_weight = 1;
        if (cli_parse_real(h->val, 0, 1e6, &a->weight) != 0)
            return cli_usage_error(cmd, "--over-quota-weight wants a number >= 0");
        break;
    case O_POOL: a->pool = h->val; break;
    case O_DEPARTMENT: a->department = h->val; break;
    case O_FORMAT_JSON: a->json = 1; break;
    }
    return CLI_OK;
}

static int quota_args_in(const struct cli_cmd *cmd, const struct opts *o, struct quota_args *a)
{
    int i, rc = CLI_OK;

    memset(a, 0, sizeof(*a));
    a->pool = "default";
    for (i = 0; rc == CLI_OK && i < o->n_hits; i++)
        rc = quota_hit(cmd, &o->hits[i], a);
    if (rc != CLI_OK)
        return rc;
    if (o->n_pos != 1 || o->has_rest)
        return cli_usage_error(cmd, o->n_pos > 1 ? "unexpected argument '%s'" : "NAME is missing",
                               o->n_pos > 1 ? o->pos[1] : "");
    if (!a->has_quota)
        return cli_usage_error(cmd, "--gpu-quota N is required");
    if (a->has_limit && a->limit >= 0 && a->limit < a->quota)
        return cli_usage_error(cmd, "--limit is below --gpu-quota");
    a->name = o->pos[0];
    return CLI_OK;
}

static json_t *create_body(const struct quota_args *a, const char *parent_id)
{
    json_t *gpu = json_pack("{s:f}", "deserved", a->quota), *body;

    if (gpu && a->has_limit)
        json_object_set_new(gpu, "limit", json_real(a->limit));
    if (gpu && a->has_weight)
        json_object_set_new(gpu, "overQuotaWeight", json_real(a->weight));
    body = json_pack("{s:s, s:[{s:{s:s}, s:o}]}", "name", a->name, "resources", "nodePool",
                     "name", a->pool, "gpu", gpu);
    if (body && parent_id)
        json_object_set_new(body, "parentId", json_string(parent_id));
    return body;
}

static int do_create(struct client *c, const struct org_kind *k, const struct quota_args *a)
{
    json_t *dept = NULL, *body = NULL, *made = NULL;
    int rc = CLI_OK;

    if (a->department)
        rc = find_department(c, a->department, &dept);
    if (rc == CLI_OK) {
        body = create_body(a, jstr(dept, "id", NULL));
        rc = body ? client_json(c, "POST", k->path, body, &made) : cli_fail("out of memory");
    }
    if (rc == CLI_OK && a->json)
        out_json(stdout, made);
    else if (rc == CLI_OK)
        printf("%s %s created with a quota of %.2f GPUs in node pool %s\n", k->noun, a->name,
               a->quota, a->pool);
    json_decref(made);
    json_decref(body);
    json_decref(dept);
    return rc;
}

static int org_create(const void *ctx, int argc, char **argv)
{
    const struct org_kind *k = ctx;
    struct client *c = NULL;
    struct quota_args a;
    struct opts o;
    int rc = cmd_parse(&k->create, k->create_opts, argc, argv, &o);

    if (rc == CLI_OK && o.help)
        rc = cli_help(&k->create);
    else if (rc == CLI_OK && (rc = quota_args_in(&k->create, &o, &a)) == CLI_OK &&
             (rc = client_open(&c, CLIENT_LOGGED_IN)) == CLI_OK)
        rc = do_create(c, k, &a);
    client_close(c);
    opts_free(&o);
    return rc;
}

/* ---- the groups ---- */

int cmd_project_main(int argc, char **argv)
{
    static const struct verb verbs[] = {
        {"list", org_list, &project_kind},
        {"set", project_set, NULL},
        {"create", org_create, &project_kind},
        {NULL, NULL, NULL},
    };
    static const struct cli_cmd cmd = {
        "allot project", "list|set|create ...",
        "  list      the projects, their quotas and allocated GPUs\n"
        "  set       choose the default project\n"
        "  create    create a project with a GPU quota\n",
    };

    return verb_dispatch(&cmd, verbs, argc, argv);
}

int cmd_department_main(int argc, char **argv)
{
    static const struct verb verbs[] = {
        {"list", org_list, &department_kind},
        {"create", org_create, &department_kind},
        {NULL, NULL, NULL},
    };
    static const struct cli_cmd cmd = {
        "allot department", "list|create ...",
        "  list      the departments, their quotas and allocated GPUs\n"
        "  create    create a department with a GPU quota\n",
    };

    return verb_dispatch(&cmd, verbs, argc, argv);
}
