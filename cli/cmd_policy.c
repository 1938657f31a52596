/*
 * cmd_policy.c: `allot policy list|describe`: the workload policies
 * (/api/v2/policy, docs/allotd.md "Policies"). list shows every policy the
 * caller may read; describe prints a scope's own policy and the effective
 * one (the tenant's, the department's and the project's merged) of one
 * workload type: a project's with -p, a department's with -d, else the
 * tenant's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "table.h"

enum { O_PROJECT = 1, O_DEPARTMENT };

/* ---- list ---- */

static void policy_row(struct table *t, const json_t *p)
{
    const char *scope = jstr(p, "meta.scope", "?");
    const json_t *pid = json_object_get(json_object_get(p, "meta"), "projectId");

    table_add(t, "%s", jstr(p, "type", "?"));
    if (strcmp(scope, "project") == 0 && json_is_integer(pid))
        table_add(t, "project %lld", (long long)json_integer_value(pid));
    else if (strcmp(scope, "department") == 0)
        table_add(t, "department %s", jstr(p, "meta.departmentId", "?"));
    else
        table_add(t, "%s", scope);
    table_add(t, "%s", jstr(p, "meta.name", "?"));
    table_add(t, "%s", jstr(p, "meta.updatedBy", "-"));
    table_add(t, "%s", jstr(p, "meta.updatedAt", "-"));
}

static const char *const policy_heads[] = {"Type", "Scope", "Name", "Updated By", "Updated"};
static const struct list_kind policies = {
    {"allot policy list", FORMAT_USAGE,
     "Lists the workload policies you may read: type, scope (a project by its number, a\n"
     "department by its id), name, who changed it last and when.\n\n" FORMAT_HELP},
    "/api/v2/policy", "policies", 5, policy_heads, policy_row,
};

/* ---- describe ---- */

static const char *const type_words[][2] = {
    {"training", "trainings"}, {"workspace", "workspaces"},
    {"distributed", "distributed"}, {"inference", "inferences"},
};

static const struct opt_spec describe_opts[] = {
    {"project", 'p', OPT_VALUE, O_PROJECT}, {"department", 'd', OPT_VALUE, O_DEPARTMENT},
    {"json", 0, OPT_FLAG, O_FORMAT_JSON}, {"yaml", 0, OPT_FLAG, O_FORMAT_YAML},
    {NULL, 0, 0, 0}};

static const struct cli_cmd describe_cmd = {
    "allot policy describe", "TYPE [-p PROJECT | -d DEPARTMENT] [--json | --yaml]",
    "Prints the TYPE policy (training, workspace, distributed or inference) of a scope\n"
    "(YAML, or --json): `policy`, the scope's own when it has one, and `effective`, the\n"
    "tenant's, the department's and the project's merged, each rule with the scope it comes\n"
    "from.\n\n"
    "  -p, --project NAME       a project's\n"
    "  -d, --department NAME    a department's (else the tenant's)\n",
};

/* The route of the TYPE operand, or NULL. */
static const char *type_route(const char *word)
{
    size_t i;

    for (i = 0; i < sizeof(type_words) / sizeof(type_words[0]); i++)
        if (strcmp(type_words[i][0], word) == 0)
            return type_words[i][1];
    return NULL;
}

/* The GET path of the scope -p or -d names (the tenant's without). */
static int scope_path(struct client *c, const char *route, const char *project,
                      const char *dept, char **path)
{
    json_t *found = NULL;
    int rc = CLI_OK;

    if (project)
        rc = find_project(c, project, &found);
    else if (dept)
        rc = find_department(c, dept, &found);
    if (rc != CLI_OK)
        return rc;
    *path = found ? cli_strf("/api/v2/policy/%s?scope=%s&%s=%s", route,
                             project ? "project" : "department",
                             project ? "projectId" : "departmentId", jstr(found, "id", ""))
                  : cli_strf("/api/v2/policy/%s?scope=tenant", route);
    json_decref(found);
    return *path ? CLI_OK : cli_fail("out of memory");
}

static int describe_args(const struct opts *o, const char **project, const char **dept,
                         int *format)
{
    int i;

    *format = OUT_YAML;
    for (i = 0; i < o->n_hits; i++) {
        if (o->hits[i].id == O_PROJECT)
            *project = o->hits[i].val;
        else if (o->hits[i].id == O_DEPARTMENT)
            *dept = o->hits[i].val;
        else
            *format = o->hits[i].id == O_FORMAT_JSON ? OUT_JSON : OUT_YAML;
    }
    if (*project && *dept)
        return cli_usage_error(&describe_cmd, "-p and -d exclude each other");
    if (!type_route(o->pos[0]))
        return cli_usage_error(&describe_cmd, "TYPE is training, workspace, distributed or "
                                              "inference");
    return CLI_OK;
}

static int policy_describe(const void *ctx, int argc, char **argv)
{
    const char *project = NULL, *dept = NULL;
    struct client *c = NULL;
    json_t *doc = NULL;
    char *path = NULL;
    struct opts o;
    int format, rc = cmd_parse(&describe_cmd, describe_opts, argc, argv, &o);

    (void)ctx;
    if (rc == CLI_OK && o.help)
        rc = cli_help(&describe_cmd);
    else if (rc == CLI_OK && (rc = cmd_one_operand(&describe_cmd, &o, "TYPE")) == CLI_OK &&
             (rc = describe_args(&o, &project, &dept, &format)) == CLI_OK &&
             (rc = client_open(&c, CLIENT_LOGGED_IN)) == CLI_OK &&
             (rc = scope_path(c, type_route(o.pos[0]), project, dept, &path)) == CLI_OK &&
             (rc = client_json(c, "GET", path, NULL, &doc)) == CLI_OK)
        out_document(stdout, format, doc);
    free(path);
    json_decref(doc);
    client_close(c);
    opts_free(&o);
    return rc;
}

int cmd_policy_main(int argc, char **argv)
{
    static const struct verb verbs[] = {
        {"list", list_verb, &policies, "the workload policies you may read"},
        {"describe", policy_describe, NULL, "a scope's policy of a type and its effective one"},
        {NULL, NULL, NULL, NULL},
    };
    static const struct cli_cmd cmd = {"allot policy", "list|describe ...", NULL};

    return verb_dispatch(&cmd, verbs, argc, argv);
}
