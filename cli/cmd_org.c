/*
 * cmd_org.c: `allot project list|set|describe|create|edit|delete` and
 * `allot department list|describe|create|edit|delete`: the
 * organization's queues, their GPU quota per node pool and what they hold
 * now.
 *
 * Both groups share one table (name, GPU quota, allocated GPUs, the
 * allocation ratio), one create body (a resources[] entry for one node
 * pool with gpu {deserved, limit, overQuotaWeight}) and one edit:
 *
 * Step 1: the flags are read by two tables (fields.h): the queue's own
 *         fields (rank, description, default node pools in order, node
 *         types, scheduling rules) and the quota fields of a pool, which
 *         apply to the pool named by the last --node-pool before them
 *         (default: the pool named default);
 *         (they are checked first with no queue, before any request);
 * Step 2: the queue is read (its id, and what the flags change in part:
 *         a pool's entry keeps its other numbers and its CPU and memory,
 *         nodeTypes and schedulingRules keep the keys no flag names);
 * Step 3: PATCH /api/v1/org-unit/{projects,departments}/{id}, whose
 *         resources[] entries replace those of the same pool; the server
 *         checks the quotas (a limit below the quota, a project above its
 *         department) and says what is wrong.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "fields.h"
#include "table.h"

enum { O_QUOTA = 1, O_POOL, O_WEIGHT, O_LIMIT, O_DEPARTMENT };

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

#define EDIT_USAGE                                                                             \
    "NAME [--node-pool POOL] [--gpu-quota N] [--limit N] [--over-quota-weight W] "             \
    "[--over-quota-priority P] ... [--rank N] [--description TEXT] "                           \
    "[--default-node-pools a,b] [--training-node-types a,b] [--workspace-node-types a,b] "     \
    "[--workspace-time-limit D] [--workspace-idle-limit D] "                                   \
    "[--preemptible-workspace-idle-limit D] [--training-time-limit D] "                        \
    "[--training-idle-limit D] [--json]"
#define EDIT_HELP                                                                              \
    "Changes what the flags name; the rest stays as it is.\n\n"                                \
    "Quotas per node pool (repeat the group for other pools):\n"                               \
    "  --node-pool POOL            the pool of the quota flags after it (default: default)\n"  \
    "  --gpu-quota N               GPUs guaranteed in the pool (fractions allowed; -1:\n"      \
    "                              unlimited; a new pool entry starts at 0)\n"                 \
    "  --limit N                   a hard cap on its GPUs there (-1: none, the default)\n"     \
    "  --over-quota-weight W       its share of idle GPUs beyond the quota (default 1)\n"      \
    "  --over-quota-priority P     None, Low, Normal (the default) or High: who gets idle\n"  \
    "                              GPUs first\n\n"                                             \
    "Scheduling (\"none\" clears a setting):\n"                                                \
    "  --rank N                    a higher rank is served first for spare GPUs (-1000 to\n"   \
    "                              1000; default 0)\n"                                          \
    "  --description TEXT          a line about it\n"                                          \
    "  --default-node-pools a,b    the pools, in order, of workloads that name none\n"        \
    "                              (none: the department's, then any)\n"                        \
    "  --training-node-types a,b   the node types trainings may use (none: any)\n"            \
    "  --workspace-node-types a,b  the node types workspaces may use (none: any)\n"           \
    "  --workspace-time-limit D    the longest a workspace runs: 90s, 30m, 2h, 1d12h\n"       \
    "  --workspace-idle-limit D    a non-preemptible workspace whose GPUs are idle this\n"    \
    "                              long is stopped\n"                                          \
    "  --preemptible-workspace-idle-limit D   the same for preemptible workspaces\n"          \
    "  --training-time-limit D     the longest a training runs\n"                              \
    "  --training-idle-limit D     a training idle this long is stopped\n"                     \
    "  --json                      print the queue as the server answered\n"

/* What tells the two groups apart. */
struct org_kind {
    const char *noun;          /* "project" */
    const char *path;          /* of the list and create routes */
    const char *key;           /* the list's array */
    const struct opt_spec *create_opts;
    struct cli_cmd list, create, edit, describe;
    int (*find)(struct client *c, const char *name, json_t **out);
};

static const struct org_kind project_kind = {
    "project", "/api/v1/org-unit/projects", "projects", project_create_opts,
    {"allot project list", FORMAT_USAGE,
     "Lists the projects you may see: GPU quota, GPUs allocated now, and their ratio.\n\n"
     FORMAT_HELP},
    {"allot project create", "NAME --gpu-quota N [--node-pool POOL] [--over-quota-weight W] "
                             "[--limit N] [--department DEPT] [--json]",
     "Creates a project with a GPU quota (deserved GPUs) in one node pool.\n\n"
     "  --gpu-quota N            GPUs the project is guaranteed (fractions allowed)\n"
     "  --node-pool POOL         the pool of the quota (default: default)\n"
     "  --over-quota-weight W    its share of idle GPUs beyond the quota (default 1)\n"
     "  --limit N                a hard cap on its GPUs (default: none)\n"
     "  --department DEPT        its department (default: default)\n"
     "  --json                   print the created project\n"},
    {"allot project edit", EDIT_USAGE, EDIT_HELP},
    {"allot project describe", "NAME [-o table|json|yaml]",
     "Shows one project: its department, rank and default node pools; per node pool\n"
     "its GPU quota, limit, over-quota weight and priority, fair share, and the GPUs\n"
     "allocated and requested now; and its workloads by status.\n\n"
     "  -o, --output FORMAT     table (the default), json or yaml (the API's object)\n"},
    find_project,
};

static const struct org_kind department_kind = {
    "department", "/api/v1/org-unit/departments", "departments", department_create_opts,
    {"allot department list", FORMAT_USAGE,
     "Lists the departments you may see: GPU quota, GPUs allocated now, and their ratio.\n\n"
     FORMAT_HELP},
    {"allot department create", "NAME --gpu-quota N [--node-pool POOL] "
                                "[--over-quota-weight W] [--limit N] [--json]",
     "Creates a department with a GPU quota in one node pool; its projects share it.\n\n"
     "  --gpu-quota N            GPUs the department is guaranteed\n"
     "  --node-pool POOL         the pool of the quota (default: default)\n"
     "  --over-quota-weight W    its share of idle GPUs beyond the quota (default 1)\n"
     "  --limit N                a hard cap on its GPUs (default: none)\n"
     "  --json                   print the created department\n"},
    {"allot department edit", EDIT_USAGE, EDIT_HELP},
    {"allot department describe", "NAME [-o table|json|yaml]",
     "Shows one department: its rank and default node pools; per node pool its GPU\n"
     "quota, limit, over-quota weight and priority, fair share, and the GPUs allocated\n"
     "and requested now; and its projects.\n\n"
     "  -o, --output FORMAT     table (the default), json or yaml (the API's object)\n"},
    find_department,
};

static const struct cli_cmd set_cmd = {
    "allot project set", "NAME",
    "Makes NAME the default project of submit, list, describe and the rest.\n",
};

/* ---- list ---- */

/* A project's Quota Backed cell: "yes", or "no: POOL DESERVED>DEPARTMENT'S"
 * for each pool where its department deserves fewer GPUs than it does
 * (status.additionalStatusData.quotaNotBacked, allotd's extension). */
static void backed_cell(struct table *t, const json_t *q)
{
    json_t *a = json_object_get(json_object_get(json_object_get(q, "status"),
                                                "additionalStatusData"), "quotaNotBacked");
    char cell[512] = "no:";
    size_t i, used = 3;
    json_t *e;

    if (!json_is_array(a) || json_array_size(a) == 0) {
        table_add(t, "yes");
        return;
    }
    json_array_foreach(a, i, e) {
        int n = snprintf(cell + used, sizeof(cell) - used, " %s %.2f>%.2f",
                         jstr(e, "nodePoolName", "?"), jnum(e, "deserved", 0),
                         jnum(e, "departmentDeserved", 0));
        if (n < 0 || (size_t)n >= sizeof(cell) - used)
            break;
        used += (size_t)n;
    }
    table_add(t, "%s", cell);
}

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
    if (with_parent)
        backed_cell(t, q);
}

/* A project's row has its department and Quota Backed; a department's
 * has neither. */
static void project_row(struct table *t, const json_t *q)
{
    queue_row(t, q, 1);
}

static void department_row(struct table *t, const json_t *q)
{
    queue_row(t, q, 0);
}

static int org_list(const void *ctx, int argc, char **argv)
{
    static const char *const heads[] = {"Project", "Department", "GPU Quota", "Allocated GPUs",
                                        "GPU Allocation Ratio", "Quota Backed"};
    const struct org_kind *k = ctx;
    int projects = k == &project_kind;
    /* departments have no Department column */
    const struct list_kind list = {k->list, k->path, k->key, projects ? 6 : 4,
                                   projects ? heads : heads + 1,
                                   projects ? project_row : department_row};

    return list_verb(&list, argc, argv);
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

/* ---- describe ---- */

static const struct opt_spec describe_opts[] = {{"output", 'o', OPT_VALUE, 1}, {NULL, 0, 0, 0}};

static void add_field(struct table *t, const char *key, const char *value)
{
    table_add(t, "%s:", key);
    table_add(t, "%s", value && value[0] ? value : "-");
}

/* "a,b" of a JSON array of strings, or def. */
static void add_list(struct table *t, const char *key, const json_t *list, const char *def)
{
    char buf[256] = "";
    size_t i, used = 0;
    json_t *v;

    json_array_foreach(list, i, v) {
        int n = snprintf(buf + used, sizeof(buf) - used, "%s%s", i ? "," : "",
                         json_string_value(v) ? json_string_value(v) : "?");
        if (n < 0 || (size_t)n >= sizeof(buf) - used)
            break;
        used += (size_t)n;
    }
    add_field(t, key, used ? buf : def);
}

static void queue_general(const struct org_kind *k, const json_t *q)
{
    static const char *const none[] = {"", ""};
    struct table t;

    table_init(&t, 2, none);
    add_field(&t, "Name", jstr(q, "name", NULL));
    add_field(&t, "Id", jstr(q, "id", NULL));
    if (k == &project_kind)
        add_field(&t, "Department", jstr(q, "parent.name", NULL));
    add_field(&t, "Description", jstr(q, "description", NULL));
    table_add(&t, "Rank:");
    table_add(&t, "%.0f", jnum(q, "rank", 0));
    add_list(&t, "Default node pools", json_object_get(q, "defaultNodePools"), "any");
    add_field(&t, "Created by", jstr(q, "createdBy", NULL));
    printf("General\n");
    table_print(&t, stdout, 0, "  ");
    table_free(&t);
}

/* The status entry of pool name, or NULL. */
static const json_t *pool_status(const json_t *q, const char *name)
{
    const json_t *all = json_object_get(json_object_get(q, "status"), "nodePoolQuotaStatuses");
    json_t *st;
    size_t i;

    json_array_foreach(all, i, st)
        if (strcmp(jstr(st, "nodePoolName", ""), name) == 0)
            return st;
    return NULL;
}

static void add_gpus(struct table *t, double v, const char *below_zero)
{
    if (v < 0)
        table_add(t, "%s", below_zero);
    else
        table_add(t, "%.2f", v);
}

static void queue_pools(const json_t *q)
{
    static const char *const heads[] = {"Node Pool", "GPU Quota", "Limit", "Over-quota Weight",
                                        "Over-quota Priority", "Fair Share", "Allocated GPUs",
                                        "Requested GPUs"};
    const json_t *res = json_object_get(q, "resources"), *st;
    struct table t;
    json_t *r;
    size_t i;

    table_init(&t, 8, heads);
    json_array_foreach(res, i, r) {
        const char *pool = jstr(r, "nodePool.name", "?");
        st = pool_status(q, pool);
        table_add(&t, "%s", pool);
        add_gpus(&t, jnum(r, "gpu.deserved", 0), "unlimited");
        add_gpus(&t, jnum(r, "gpu.limit", -1), "none");
        table_add(&t, "%g", jnum(r, "gpu.overQuotaWeight", 1));
        table_add(&t, "%s", jstr(r, "priority", "Normal"));
        add_gpus(&t, jnum(st, "fairShare.gpu", 0), "-");
        add_gpus(&t, jnum(st, "allocated.gpu", 0), "-");
        add_gpus(&t, jnum(st, "requested.gpu", 0), "-");
    }
    printf("\nNode Pools\n");
    if (json_array_size(res) == 0)
        printf("  none\n");
    else
        table_print(&t, stdout, 1, "  ");
    table_free(&t);
}

/* A project's workloads by phase, in the order the list gives them:
 * "3: 2 Running, 1 Pending". */
static int project_workloads(struct client *c, const json_t *q)
{
    char *filter = NULL, *path = NULL;
    json_t *all = NULL, *w, *by = json_object(), *n;
    const char *phase;
    size_t i;
    int rc = by ? CLI_OK : cli_fail("out of memory");

    if (rc == CLI_OK && (filter_add(&filter, "projectName", jstr(q, "name", "")) != 0 ||
                         !(path = workloads_path(filter))))
        rc = cli_fail("out of memory");
    if (rc == CLI_OK)
        rc = client_list_all(c, path, "workloads", &all);
    json_array_foreach(all, i, w) {
        phase = jstr(w, "phase", "Unknown");
        n = json_object_get(by, phase);
        json_object_set_new(by, phase, json_integer(json_integer_value(n) + 1));
    }
    if (rc == CLI_OK) {
        printf("\nWorkloads\n  %zu", json_array_size(all));
        i = 0;
        json_object_foreach(by, phase, n)
            printf("%s%lld %s", i++ ? ", " : ": ", (long long)json_integer_value(n), phase);
        printf("   (allot workload list -p %s)\n", jstr(q, "name", "?"));
    }
    json_decref(by);
    json_decref(all);
    free(filter);
    free(path);
    return rc;
}

/* A department's projects: "team-a, team-b". */
static int department_projects(struct client *c, const json_t *d)
{
    json_t *all = NULL, *p;
    size_t i, shown = 0;
    int rc = client_list_all(c, project_kind.path, project_kind.key, &all);

    if (rc == CLI_OK) {
        printf("\nProjects\n  ");
        json_array_foreach(all, i, p)
            if (strcmp(jstr(p, "parentId", ""), jstr(d, "id", "?")) == 0)
                printf("%s%s", shown++ ? ", " : "", jstr(p, "name", "?"));
        printf("%s\n", shown ? "" : "none");
    }
    json_decref(all);
    return rc;
}

static int org_describe(const void *ctx, int argc, char **argv)
{
    const struct org_kind *k = ctx;
    struct client *c = NULL;
    json_t *q = NULL;
    struct opts o;
    int format = OUT_TABLE, i, rc = cmd_parse(&k->describe, describe_opts, argc, argv, &o);

    for (i = 0; rc == CLI_OK && i < o.n_hits; i++) {
        if (strcmp(o.hits[i].val, "json") == 0)
            format = OUT_JSON;
        else if (strcmp(o.hits[i].val, "yaml") == 0)
            format = OUT_YAML;
        else if (strcmp(o.hits[i].val, "table") != 0)
            rc = cli_usage_error(&k->describe, "-o is table, json or yaml");
    }
    if (rc == CLI_OK && o.help)
        rc = cli_help(&k->describe);
    else if (rc == CLI_OK && (rc = cmd_one_operand(&k->describe, &o, "NAME")) == CLI_OK &&
             (rc = client_open(&c, CLIENT_LOGGED_IN)) == CLI_OK &&
             (rc = k->find(c, o.pos[0], &q)) == CLI_OK) {
        if (format != OUT_TABLE) {
            out_document(stdout, format, q);
        } else {
            queue_general(k, q);
            queue_pools(q);
            fflush(stdout);
            rc = k == &project_kind ? project_workloads(c, q) : department_projects(c, q);
        }
    }
    json_decref(q);
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
    if ((rc = cmd_one_operand(cmd, o, "NAME")) != CLI_OK)
        return rc;
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

/* ---- edit ---- */

#define RULE(flag, id, key)                                                                    \
    {flag, FIELD_ID_BASE + (id), F_SECONDS, "schedulingRules." key, 1, 366.0 * 86400, NULL,     \
     CLEAR_REMOVE}

/* The queue's own fields. */
static const struct field_flag queue_fields[] = {
    {"rank", FIELD_ID_BASE, F_INT, "rank", -1000, 1000, NULL, CLEAR_NO},
    {"description", FIELD_ID_BASE + 1, F_TEXT, "description", 0, 0, NULL, CLEAR_NO},
    {"default-node-pools", FIELD_ID_BASE + 2, F_LIST, "defaultNodePools", 0, 0, NULL,
     CLEAR_NULL},
    {"training-node-types", FIELD_ID_BASE + 3, F_LIST, "nodeTypes.training", 0, 0, NULL,
     CLEAR_REMOVE},
    {"workspace-node-types", FIELD_ID_BASE + 4, F_LIST, "nodeTypes.workspace", 0, 0, NULL,
     CLEAR_REMOVE},
    RULE("workspace-time-limit", 5, "interactiveJobTimeLimitSeconds"),
    RULE("workspace-idle-limit", 6, "interactiveJobMaxIdleDurationSeconds"),
    RULE("preemptible-workspace-idle-limit", 7, "interactiveJobPreemptIdleDurationSeconds"),
    RULE("training-time-limit", 8, "trainingJobTimeLimitSeconds"),
    RULE("training-idle-limit", 9, "trainingJobMaxIdleDurationSeconds"),
    {NULL, 0, 0, NULL, 0, 0, NULL, 0},
};

/* The fields of one pool's resources[] entry. */
static const struct field_flag quota_fields[] = {
    {"gpu-quota", FIELD_ID_BASE + 20, F_NUMBER, "gpu.deserved", -1, 1e6, NULL, CLEAR_NO},
    {"limit", FIELD_ID_BASE + 21, F_NUMBER, "gpu.limit", -1, 1e6, NULL, CLEAR_NO},
    {"over-quota-weight", FIELD_ID_BASE + 22, F_NUMBER, "gpu.overQuotaWeight", 0, 1e6, NULL,
     CLEAR_NO},
    {"over-quota-priority", FIELD_ID_BASE + 23, F_WORD, "priority", 0, 0,
     "None Low Normal High", CLEAR_NO},
    {NULL, 0, 0, NULL, 0, 0, NULL, 0},
};

static const struct field_flag *const edit_tables[] = {queue_fields, quota_fields, NULL};
static const struct opt_spec edit_extra[] = {
    {"node-pool", 0, OPT_VALUE, O_POOL},
    {"json", 0, OPT_FLAG, O_FORMAT_JSON},
    {NULL, 0, 0, 0},
};

/* The objects an edit patches whole: what the queue has, for the flags
 * to change in part. */
static const char *const whole_fields[] = {"nodeTypes", "schedulingRules", NULL};

/* The resources[] entry of pool in the list `changed` (made from the
 * queue's own entry, or a new one with quota 0, when first met). */
static json_t *pool_entry(json_t *changed, const json_t *queue, const char *pool)
{
    json_t *e, *own = NULL;
    size_t i;

    json_array_foreach(changed, i, e)
        if (strcmp(jstr(e, "nodePool.name", ""), pool) == 0)
            return e;
    json_array_foreach(json_object_get(queue, "resources"), i, e)
        if (!own && strcmp(jstr(e, "nodePool.name", ""), pool) == 0)
            own = e;
    e = own ? json_deep_copy(own)
            : json_pack("{s:{s:s}, s:{s:i, s:i, s:i}}", "nodePool", "name", pool, "gpu",
                        "deserved", 0, "limit", -1, "overQuotaWeight", 1);
    if (e && json_array_append_new(changed, e) == 0)
        return e;
    return NULL;
}

/* Steps 1 and 2: the PATCH body of the flags in o; CLI_OK or an error. */
static int edit_body(const struct org_kind *k, const struct opts *o, const json_t *queue,
                     json_t *body, int *json)
{
    const char *pool = "default";
    const char *const *w;
    json_t *changed = json_array(), *entry = NULL, *v;
    const struct field_flag *f;
    int i, rc = changed ? CLI_OK : cli_fail("out of memory"), pending = 0;

    for (w = whole_fields; rc == CLI_OK && *w; w++)
        if (json_is_object(v = json_object_get(queue, *w)))
            json_object_set_new(body, *w, json_deep_copy(v));
    for (i = 0; rc == CLI_OK && i < o->n_hits; i++) {
        const struct opt_hit *h = &o->hits[i];
        if (h->id == O_POOL && pending)
            break;
        if (h->id == O_POOL) {
            pool = h->val;
            pending = 1;
        } else if (h->id == O_FORMAT_JSON)
            *json = 1;
        else if ((f = field_of(queue_fields, h->id)))
            rc = field_apply(&k->edit, f, h->val, body);
        else if (!(entry = pool_entry(changed, queue, pool)))
            rc = cli_fail("out of memory");
        else {
            rc = field_apply(&k->edit, field_of(quota_fields, h->id), h->val, entry);
            pending = 0;
        }
    }
    if (rc == CLI_OK && pending)
        rc = cli_usage_error(&k->edit, "--node-pool %s is followed by no quota flag "
                                       "(--gpu-quota, --limit, ...)", pool);
    for (w = whole_fields; rc == CLI_OK && *w; w++)
        if (json_object_size(json_object_get(body, *w)) == 0)
            json_object_set_new(body, *w, json_null());
    if (rc == CLI_OK && json_array_size(changed))
        json_object_set(body, "resources", changed);
    json_decref(changed);
    return rc;
}

/* What the queue holds after the edit, in one line. */
static void print_edited(const struct org_kind *k, const json_t *q)
{
    json_t *e;
    size_t i;
    double limit;

    printf("%s %s saved:", k->noun, jstr(q, "name", "?"));
    json_array_foreach(json_object_get(q, "resources"), i, e) {
        limit = jnum(e, "gpu.limit", -1);
        printf("%s %s quota %.2f GPUs, limit ", i ? ";" : "", jstr(e, "nodePool.name", "?"),
               jnum(e, "gpu.deserved", 0));
        if (limit < 0)
            printf("none");
        else
            printf("%.2f", limit);
        printf(", weight %g, priority %s", jnum(e, "gpu.overQuotaWeight", 1),
               jstr(e, "priority", "Normal"));
    }
    printf("; rank %.0f\n", jnum(q, "rank", 0));
}

static int do_edit(struct client *c, const struct org_kind *k, const struct opts *o)
{
    json_t *queue = NULL, *body = json_object(), *made = NULL;
    char *path = NULL;
    int json = 0, rc = body ? k->find(c, o->pos[0], &queue) : cli_fail("out of memory");

    if (rc == CLI_OK)
        rc = edit_body(k, o, queue, body, &json);
    if (rc == CLI_OK) {
        path = cli_strf("%s/%s", k->path, jstr(queue, "id", ""));
        rc = path ? client_json(c, "PATCH", path, body, &made) : cli_fail("out of memory");
    }
    if (rc == CLI_OK && json)
        out_json(stdout, made);
    else if (rc == CLI_OK)
        print_edited(k, made);
    json_decref(made);
    json_decref(body);
    json_decref(queue);
    free(path);
    return rc;
}

/* The command line alone, before any request: the operand, a change,
 * and every value (read once into a body that is thrown away). */
static int edit_args_ok(const struct org_kind *k, const struct opts *o)
{
    json_t *scratch;
    int i, json, rc, changes = 0;

    for (i = 0; i < o->n_hits; i++)
        changes += o->hits[i].id != O_FORMAT_JSON && o->hits[i].id != O_POOL;
    if ((rc = cmd_one_operand(&k->edit, o, "NAME")) != CLI_OK)
        return rc;
    if (!changes)
        return cli_usage_error(&k->edit, "nothing to change: name a setting, such as "
                                         "--gpu-quota 2");
    scratch = json_object();
    rc = scratch ? edit_body(k, o, NULL, scratch, &json) : cli_fail("out of memory");
    json_decref(scratch);
    return rc;
}

static int org_edit(const void *ctx, int argc, char **argv)
{
    const struct org_kind *k = ctx;
    struct opt_spec spec[24];
    struct client *c = NULL;
    struct opts o = {0};
    int rc = field_specs(edit_tables, edit_extra, spec, 24)
                 ? cli_fail("out of memory") : cmd_parse(&k->edit, spec, argc, argv, &o);

    if (rc == CLI_OK && o.help)
        rc = cli_help(&k->edit);
    else if (rc == CLI_OK && (rc = edit_args_ok(k, &o)) == CLI_OK &&
             (rc = client_open(&c, CLIENT_LOGGED_IN)) == CLI_OK)
        rc = do_edit(c, k, &o);
    client_close(c);
    opts_free(&o);
    return rc;
}

/* ---- delete ---- */

static const struct delete_kind project_delete = {
    {"allot project delete", "NAME [-y]",
     "Deletes a project that holds no workloads (delete them first). On a terminal it\n"
     "asks first; elsewhere -y is required.\n"},
    "project", "/api/v1/org-unit/projects", find_project,
};

static const struct delete_kind department_delete = {
    {"allot department delete", "NAME [-y]",
     "Deletes a department that holds no projects (delete them first). On a terminal it\n"
     "asks first; elsewhere -y is required.\n"},
    "department", "/api/v1/org-unit/departments", find_department,
};

/* ---- the groups ---- */

int cmd_project_main(int argc, char **argv)
{
    static const struct verb verbs[] = {
        {"list", org_list, &project_kind, "the projects, their quotas and allocated GPUs"},
        {"set", project_set, NULL, "choose the default project"},
        {"describe", org_describe, &project_kind,
         "one project: quotas, fair share and GPUs per pool, its workloads"},
        {"create", org_create, &project_kind, "create a project with a GPU quota"},
        {"edit", org_edit, &project_kind,
         "change quotas per pool, rank, node pools, node types, rules"},
        {"delete", delete_verb, &project_delete, "delete a project that holds no workloads"},
        {NULL, NULL, NULL, NULL},
    };
    static const struct cli_cmd cmd = {"allot project",
                                       "list|set|describe|create|edit|delete ...", NULL};

    return verb_dispatch(&cmd, verbs, argc, argv);
}

int cmd_department_main(int argc, char **argv)
{
    static const struct verb verbs[] = {
        {"list", org_list, &department_kind, "the departments, their quotas and allocated GPUs"},
        {"describe", org_describe, &department_kind,
         "one department: quotas, fair share and GPUs per pool, its projects"},
        {"create", org_create, &department_kind, "create a department with a GPU quota"},
        {"edit", org_edit, &department_kind,
         "change quotas per pool, rank, node pools, node types, rules"},
        {"delete", delete_verb, &department_delete, "delete a department that holds no projects"},
        {NULL, NULL, NULL, NULL},
    };
    static const struct cli_cmd cmd = {"allot department",
                                       "list|describe|create|edit|delete ...", NULL};

    return verb_dispatch(&cmd, verbs, argc, argv);
}
