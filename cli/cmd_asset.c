/*
 * cmd_asset.c: `allot environment|compute|datasource|credential|template
 * list|describe|create|delete`: Run:ai's assets and workload templates
 * (/api/v1/asset/..., /api/v1/workload-templates/...), by name, through
 * one table of nouns and their kinds (nouns[]).
 *
 * Step 1: the noun's list route answers the assets the caller may read
 *         (with -p PROJECT: those the project sees, by ?projectId=);
 * Step 2: a name picks one of them: the project's own, else its
 *         department's, else the tenant's (an asset of each scope may
 *         share a name); without -p a name held by several is refused;
 * Step 3: describe prints it, delete sends DELETE to its kind's route;
 *         create posts {meta, spec[, assets]} to the kind's route.
 * A secret's value is never printed: the server never answers one.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "table.h"

/* A kind of a noun: the word given to --kind, the server's meta.kind (a
 * template's workloadType), and its route. */
struct asset_kind {
    const char *word, *kind, *path;
};

struct asset_noun {
    const char *noun;           /* "environment" */
    const char *list_path;      /* every kind of the noun */
    int templates;              /* workload templates: meta.scopeType, workloadType */
    const struct asset_kind *kinds;
};

static const struct asset_kind environment_kinds[] = {
    {"environment", "environment", "/api/v1/asset/environment"}, {NULL, NULL, NULL}};
static const struct asset_kind compute_kinds[] = {
    {"compute", "compute", "/api/v1/asset/compute"}, {NULL, NULL, NULL}};
static const struct asset_kind datasource_kinds[] = {
    {"host-path", "hostPath", "/api/v1/asset/datasource/host-path"},
    {"git", "git", "/api/v1/asset/datasource/git"},
    {NULL, NULL, NULL}};
static const struct asset_kind credential_kinds[] = {
    {"password", "password", "/api/v1/asset/credentials/password"},
    {"access-key", "accessKey", "/api/v1/asset/credentials/access-key"},
    {"docker-registry", "dockerRegistry", "/api/v1/asset/credentials/docker-registry"},
    {"ngc-api-key", "ngcApiKey", "/api/v1/asset/credentials/ngc-api-key"},
    {"generic-secret", "genericSecret", "/api/v1/asset/credentials/generic-secret"},
    {NULL, NULL, NULL}};
static const struct asset_kind template_kinds[] = {
    {"training", "Training", "/api/v1/workload-templates/trainings"},
    {"workspace", "Workspace", "/api/v1/workload-templates/workspaces"},
    {"distributed", "Distributed", "/api/v1/workload-templates/distributed"},
    {"inference", "Inference", "/api/v1/workload-templates/inferences"},
    {NULL, NULL, NULL}};

static const struct asset_noun nouns[] = {
    {"environment", "/api/v1/asset/environment", 0, environment_kinds},
    {"compute", "/api/v1/asset/compute", 0, compute_kinds},
    {"datasource", "/api/v1/asset/datasource", 0, datasource_kinds},
    {"credential", "/api/v1/asset/credentials", 0, credential_kinds},
    {"template", "/api/v1/workload-templates", 1, template_kinds},
};

enum { O_PROJECT = 1, O_DEPARTMENT, O_TENANT, O_KIND, O_SPEC, O_ASSETS, O_DESCRIPTION, O_JSON,
       O_YES };

/* ---- fields of an entry ---- */

static const char *kind_of(const struct asset_noun *n, const json_t *e)
{
    return jstr(e, n->templates ? "meta.workloadType" : "meta.kind", "?");
}

static const char *scope_of(const struct asset_noun *n, const json_t *e)
{
    return jstr(e, n->templates ? "meta.scopeType" : "meta.scope", "?");
}

static const struct asset_kind *kind_by(const struct asset_noun *n, const char *word,
                                        int by_word)
{
    int i;

    for (i = 0; n->kinds[i].word; i++)
        if (strcmp(by_word ? n->kinds[i].word : n->kinds[i].kind, word) == 0)
            return &n->kinds[i];
    return NULL;
}

/* Where an entry's scope is: its project's name, its department's id, or
 * "-" for the tenant. */
static const char *where_of(const json_t *e)
{
    const char *p = jstr(e, "meta.projectName", "");

    return p[0] ? p : jstr(e, "meta.departmentId", "")[0] ? jstr(e, "meta.departmentId", "")
                                                          : "-";
}

/* ---- Steps 1 and 2: the list, and one by name ---- */

/* The list route, with the project's id for -p. */
static char *list_path(const struct asset_noun *n, const json_t *project)
{
    if (!project || n->templates)
        return cli_strf("%s", n->list_path);
    return cli_strf("%s?projectId=%s", n->list_path, jstr(project, "id", ""));
}

/* Does a template's scope hold for the project (its own, its
 * department's, the tenant's)? Asset lists filter on the server. */
static int template_seen(const json_t *e, const json_t *project)
{
    const char *scope = jstr(e, "meta.scopeType", ""), *id = jstr(e, "meta.scopeId", "");

    return strcmp(scope, "tenant") == 0 ||
           (strcmp(scope, "project") == 0 && strcmp(id, jstr(project, "id", "")) == 0) ||
           (strcmp(scope, "department") == 0 && strcmp(id, jstr(project, "parentId", "")) == 0);
}

/* The entries of the noun the caller (and the project, when given) sees. */
static int entries(struct client *c, const struct asset_noun *n, const char *project,
                   json_t **out)
{
    json_t *p = NULL, *all = NULL, *kept, *e;
    char *path = NULL;
    size_t i;
    int rc = project ? find_project(c, project, &p) : CLI_OK;

    *out = NULL;
    if (rc == CLI_OK)
        path = list_path(n, p);
    rc = rc != CLI_OK ? rc : path ? client_list_all(c, path, "entries", &all)
                                  : cli_fail("out of memory");
    kept = json_array();
    json_array_foreach(rc == CLI_OK ? all : NULL, i, e)
        if (!p || !n->templates || template_seen(e, p))
            json_array_append(kept, e);
    if (rc == CLI_OK)
        *out = json_incref(kept);
    json_decref(kept);
    json_decref(all);
    json_decref(p);
    free(path);
    return rc;
}

static int scope_rank(const struct asset_noun *n, const json_t *e)
{
    const char *s = scope_of(n, e);

    return strcmp(s, "project") == 0 ? 0 : strcmp(s, "department") == 0 ? 1 : 2;
}

/* The one named name (Step 2): a new reference in *out. */
static int find_asset(struct client *c, const struct asset_noun *n, const char *project,
                      const char *name, json_t **out)
{
    json_t *all = NULL, *e, *best = NULL;
    size_t i;
    int rc = entries(c, n, project, &all), n_found = 0;

    *out = NULL;
    json_array_foreach(rc == CLI_OK ? all : NULL, i, e) {
        if (strcmp(jstr(e, "meta.name", ""), name) != 0)
            continue;
        if (!project && best) /* no project to say which scope comes first */
            n_found++;
        else if (!best || scope_rank(n, e) < scope_rank(n, best))
            best = e, n_found = 1;
        else if (scope_rank(n, e) == scope_rank(n, best))
            n_found++;
    }
    if (rc == CLI_OK && !best)
        rc = cli_fail("no %s named %s%s%s", n->noun, name, project ? " seen by project " : "",
                      project ? project : "");
    else if (rc == CLI_OK && n_found > 1)
        rc = cli_fail("several %ss are named %s: name the project with -p PROJECT", n->noun,
                      name);
    if (rc == CLI_OK)
        *out = json_incref(best);
    json_decref(all);
    return rc;
}

/* ---- list ---- */

static const char *const heads[] = {"Name", "Kind", "Scope", "Project or department",
                                    "Description", "Created by"};

/* A list's row of an asset (e) of the noun ctx. */
static void row(struct table *t, const void *ctx, const json_t *e)
{
    const struct asset_noun *n = ctx;
    const char *desc = jstr(e, "meta.description", "");

    table_add(t, "%s", jstr(e, "meta.name", "?"));
    table_add(t, "%s", kind_of(n, e));
    table_add(t, "%s", scope_of(n, e));
    table_add(t, "%s", n->templates ? jstr(e, "meta.scopeId", "-")[0] ? jstr(e, "meta.scopeId",
                                                                              "-")
                                                                       : "-"
                                    : where_of(e));
    table_add(t, "%s", desc[0] ? desc : "-");
    table_add(t, "%s", jstr(e, "meta.createdBy", "-"));
}

static const struct opt_spec list_opts[] = {
    {"project", 'p', OPT_VALUE, O_PROJECT}, FORMAT_OPTIONS, {NULL, 0, 0, 0}};

/* -p PROJECT and the format of a list or describe. */
static int read_opts(const struct cli_cmd *cmd, const struct opts *o, const char **project,
                     int *format)
{
    int i;

    *format = OUT_TABLE;
    for (i = 0; i < o->n_hits; i++) {
        if (o->hits[i].id == O_PROJECT)
            *project = o->hits[i].val;
        else if (o->hits[i].id == O_JSON)
            *format = OUT_JSON;
        else
            take_format(&o->hits[i], format);
    }
    if (*format == FORMAT_CONFLICT)
        return cli_usage_error(cmd, FORMAT_CONFLICT_MSG);
    return CLI_OK;
}

static int asset_list(const void *ctx, int argc, char **argv)
{
    const struct asset_noun *n = ctx;
    char title[64], usage[96];
    struct cli_cmd cmd = {title, usage,
                          "Lists them: every one the caller may read, or with -p the ones the\n"
                          "project sees (its own, its department's, the tenant's).\n\n"
                          "  -p, --project NAME    the ones this project sees\n" FORMAT_HELP};
    const char *project = NULL;
    struct client *c = NULL;
    json_t *all = NULL;
    struct opts o;
    int format, rc;

    snprintf(title, sizeof(title), "allot %s list", n->noun);
    snprintf(usage, sizeof(usage), "[-p PROJECT] " FORMAT_USAGE);
    rc = cmd_parse(&cmd, list_opts, argc, argv, &o);
    if (rc == CLI_OK && o.help)
        rc = cli_help(&cmd);
    else if (rc == CLI_OK && o.n_pos)
        rc = cli_usage_error(&cmd, "unexpected argument '%s'", o.pos[0]);
    else if (rc == CLI_OK && (rc = read_opts(&cmd, &o, &project, &format)) == CLI_OK &&
             (rc = client_open(&c, CLIENT_LOGGED_IN)) == CLI_OK &&
             (rc = entries(c, n, project, &all)) == CLI_OK)
        rc = print_items(format, 6, heads, all, row, n);
    json_decref(all);
    client_close(c);
    opts_free(&o);
    return rc;
}

/* ---- describe ---- */

static const struct opt_spec describe_opts[] = {
    {"project", 'p', OPT_VALUE, O_PROJECT},
    {"json", 0, OPT_FLAG, O_JSON},
    {"yaml", 0, OPT_FLAG, O_FORMAT_YAML},
    {NULL, 0, 0, 0}};

static int asset_describe(const void *ctx, int argc, char **argv)
{
    const struct asset_noun *n = ctx;
    char title[64];
    struct cli_cmd cmd = {title, "NAME [-p PROJECT] [--json | --yaml]",
                          "Prints one (YAML, or --json): its meta and spec; a secret's value is\n"
                          "never shown (the server never answers one).\n\n"
                          "  -p, --project NAME    the one this project sees by that name\n"};
    const char *project = NULL;
    struct client *c = NULL;
    json_t *found = NULL;
    struct opts o;
    int format, rc;

    snprintf(title, sizeof(title), "allot %s describe", n->noun);
    rc = cmd_parse(&cmd, describe_opts, argc, argv, &o);
    if (rc == CLI_OK && o.help)
        rc = cli_help(&cmd);
    else if (rc == CLI_OK && (rc = cmd_one_operand(&cmd, &o, "NAME")) == CLI_OK &&
             (rc = read_opts(&cmd, &o, &project, &format)) == CLI_OK &&
             (rc = client_open(&c, CLIENT_LOGGED_IN)) == CLI_OK &&
             (rc = find_asset(c, n, project, o.pos[0], &found)) == CLI_OK)
        out_document(stdout, format == OUT_JSON ? OUT_JSON : OUT_YAML, found);
    json_decref(found);
    client_close(c);
    opts_free(&o);
    return rc;
}

/* ---- delete ---- */

static const struct opt_spec delete_opts[] = {
    {"project", 'p', OPT_VALUE, O_PROJECT}, {"yes", 'y', OPT_FLAG, O_YES}, {NULL, 0, 0, 0}};

/* The route of one found entry: its kind's path and its id. */
static char *entry_path(const struct asset_noun *n, const json_t *e)
{
    const struct asset_kind *k = kind_by(n, kind_of(n, e), 0);

    return k ? cli_strf("%s/%s", k->path, jstr(e, "meta.id", "")) : NULL;
}

static int asset_delete(const void *ctx, int argc, char **argv)
{
    const struct asset_noun *n = ctx;
    char title[64], *question = NULL, *path = NULL;
    struct cli_cmd cmd = {title, "NAME [-p PROJECT] [-y]",
                          "Deletes one, unless a live workload, a template or another asset uses\n"
                          "it (the server names them). Asks first on a terminal; elsewhere -y.\n\n"
                          "  -p, --project NAME    the one this project sees by that name\n"};
    const char *project = NULL;
    struct client *c = NULL;
    json_t *found = NULL, *answer = NULL;
    struct opts o;
    int i, yes = 0, rc;

    snprintf(title, sizeof(title), "allot %s delete", n->noun);
    rc = cmd_parse(&cmd, delete_opts, argc, argv, &o);
    for (i = 0; rc == CLI_OK && i < o.n_hits; i++) {
        if (o.hits[i].id == O_PROJECT)
            project = o.hits[i].val;
        yes |= o.hits[i].id == O_YES;
    }
    if (rc == CLI_OK && o.help)
        rc = cli_help(&cmd);
    else if (rc == CLI_OK && (rc = cmd_one_operand(&cmd, &o, "NAME")) == CLI_OK &&
             (rc = delete_allowed(&cmd, yes)) == CLI_OK &&
             (rc = client_open(&c, CLIENT_LOGGED_IN)) == CLI_OK &&
             (rc = find_asset(c, n, project, o.pos[0], &found)) == CLI_OK) {
        question = cli_strf("Delete %s %s", n->noun, o.pos[0]);
        path = entry_path(n, found);
        if (!question || !path)
            rc = cli_fail("out of memory, or a kind this allot does not know");
        else if (!delete_confirmed(yes, question))
            printf("%s %s was not deleted\n", n->noun, o.pos[0]);
        else if ((rc = client_json(c, "DELETE", path, NULL, &answer)) == CLI_OK)
            printf("%s %s deleted\n", n->noun, o.pos[0]);
    }
    free(question);
    free(path);
    json_decref(answer);
    json_decref(found);
    client_close(c);
    opts_free(&o);
    return rc;
}

/* ---- create ---- */

static const struct opt_spec create_opts[] = {
    {"project", 'p', OPT_VALUE, O_PROJECT},  {"department", 0, OPT_VALUE, O_DEPARTMENT},
    {"tenant", 0, OPT_FLAG, O_TENANT},       {"kind", 0, OPT_VALUE, O_KIND},
    {"spec", 0, OPT_VALUE, O_SPEC},          {"assets", 0, OPT_VALUE, O_ASSETS},
    {"description", 0, OPT_VALUE, O_DESCRIPTION}, {"json", 0, OPT_FLAG, O_JSON},
    {NULL, 0, 0, 0}};

struct create {
    const char *project, *department, *kind, *spec, *assets, *description;
    int tenant, json;
};

/* The scope of meta: {scope, projectId | departmentId} (a template:
 * {scopeType, scopeId}). */
static int scope_in(struct client *c, const struct asset_noun *n, const struct create *w,
                    json_t *meta)
{
    json_t *q = NULL;
    int rc = CLI_OK;

    if (w->project)
        rc = find_project(c, w->project, &q);
    else if (w->department)
        rc = find_department(c, w->department, &q);
    if (rc != CLI_OK)
        return rc;
    json_object_set_new(meta, n->templates ? "scopeType" : "scope",
                        json_string(w->project ? "project" : w->department ? "department"
                                                                           : "tenant"));
    if (q)
        json_object_set_new(meta,
                            n->templates ? "scopeId" : w->project ? "projectId" : "departmentId",
                            json_string(jstr(q, "id", "")));
    json_decref(q);
    return CLI_OK;
}

/* A JSON object from a flag's text. */
static int object_in(const struct cli_cmd *cmd, const char *flag, const char *text, json_t **out)
{
    json_error_t err;

    *out = json_loads(text, 0, &err);
    if (json_is_object(*out))
        return CLI_OK;
    json_decref(*out);
    *out = NULL;
    return cli_usage_error(cmd, "%s wants a JSON object: %s", flag, err.text);
}

static int create_in(const struct cli_cmd *cmd, const struct asset_noun *n, const struct opts *o,
                     struct create *w)
{
    int i;

    for (i = 0; i < o->n_hits; i++) {
        const char *v = o->hits[i].val;
        switch (o->hits[i].id) {
        case O_PROJECT: w->project = v; break;
        case O_DEPARTMENT: w->department = v; break;
        case O_TENANT: w->tenant = 1; break;
        case O_KIND: w->kind = v; break;
        case O_SPEC: w->spec = v; break;
        case O_ASSETS: w->assets = v; break;
        case O_DESCRIPTION: w->description = v; break;
        case O_JSON: w->json = 1; break;
        }
    }
    if (!!w->project + !!w->department + w->tenant != 1)
        return cli_usage_error(cmd, "give one scope: -p PROJECT, --department NAME or --tenant");
    if (!w->kind && n->kinds[1].word)
        return cli_usage_error(cmd, "--kind is required: one of the kinds above");
    if (w->kind && !kind_by(n, w->kind, 1))
        return cli_usage_error(cmd, "--kind '%s' is not a kind of %s", w->kind, n->noun);
    if (w->assets && !n->templates)
        return cli_usage_error(cmd, "--assets is for templates");
    return cmd_one_operand(cmd, o, "NAME");
}

static int create_post(struct client *c, const struct cli_cmd *cmd, const struct asset_noun *n,
                       const struct create *w, const char *name)
{
    const struct asset_kind *k = w->kind ? kind_by(n, w->kind, 1) : &n->kinds[0];
    json_t *meta = json_pack("{s:s}", "name", name), *body = json_pack("{s:O}", "meta", meta);
    json_t *v = NULL, *made = NULL;
    int rc = CLI_OK;

    if (w->description)
        json_object_set_new(meta, "description", json_string(w->description));
    if (w->spec && (rc = object_in(cmd, "--spec", w->spec, &v)) == CLI_OK)
        json_object_set_new(body, "spec", v);
    if (rc == CLI_OK && w->assets && (rc = object_in(cmd, "--assets", w->assets, &v)) == CLI_OK)
        json_object_set_new(body, "assets", v);
    if (rc == CLI_OK)
        rc = scope_in(c, n, w, meta);
    if (rc == CLI_OK)
        rc = client_json(c, "POST", k->path, body, &made);
    if (rc == CLI_OK && w->json)
        out_json(stdout, made);
    else if (rc == CLI_OK)
        printf("%s %s created (%s)\n", n->noun, name, jstr(made, "meta.id", "?"));
    json_decref(made);
    json_decref(body);
    json_decref(meta);
    return rc;
}

static int asset_create(const void *ctx, int argc, char **argv)
{
    const struct asset_noun *n = ctx;
    char title[64], help[1024];
    struct cli_cmd cmd = {title,
                          "NAME (-p PROJECT | --department NAME | --tenant) [--kind KIND] "
                          "--spec JSON [--assets JSON] [--description TEXT] [--json]",
                          help};
    struct create w;
    struct client *c = NULL;
    struct opts o;
    size_t used;
    int i, rc;

    memset(&w, 0, sizeof(w));
    snprintf(title, sizeof(title), "allot %s create", n->noun);
    used = (size_t)snprintf(help, sizeof(help),
                            "Creates one in a scope, with its spec as Run:ai's API takes it\n"
                            "(docs/allotd.md lists the fields); --assets (templates): the ids of\n"
                            "its assets, {\"environment\": ID, \"compute\": ID, ...}.\n\n"
                            "  --kind KIND           one of:");
    for (i = 0; n->kinds[i].word && used < sizeof(help); i++)
        used += (size_t)snprintf(help + used, sizeof(help) - used, " %s", n->kinds[i].word);
    if (used < sizeof(help))
        snprintf(help + used, sizeof(help) - used, "\n");
    rc = cmd_parse(&cmd, create_opts, argc, argv, &o);
    if (rc == CLI_OK && o.help)
        rc = cli_help(&cmd);
    else if (rc == CLI_OK && (rc = create_in(&cmd, n, &o, &w)) == CLI_OK &&
             (rc = client_open(&c, CLIENT_LOGGED_IN)) == CLI_OK)
        rc = create_post(c, &cmd, n, &w, o.pos[0]);
    client_close(c);
    opts_free(&o);
    return rc;
}

/* ---- the groups ---- */

static int group(const struct asset_noun *n, const char *title, int argc, char **argv)
{
    const struct verb verbs[] = {
        {"list", asset_list, n, "the ones the caller may read (-p: a project sees)"},
        {"describe", asset_describe, n, "one, by name"},
        {"create", asset_create, n, "one, in a project, a department or the tenant"},
        {"delete", asset_delete, n, "one that nothing uses"},
        {NULL, NULL, NULL, NULL},
    };
    const struct cli_cmd cmd = {title, "list|describe|create|delete ...", NULL};

    return verb_dispatch(&cmd, verbs, argc, argv);
}

int cmd_environment_main(int argc, char **argv)
{
    return group(&nouns[0], "allot environment", argc, argv);
}

int cmd_compute_main(int argc, char **argv)
{
    return group(&nouns[1], "allot compute", argc, argv);
}

int cmd_datasource_main(int argc, char **argv)
{
    return group(&nouns[2], "allot datasource", argc, argv);
}

int cmd_credential_main(int argc, char **argv)
{
    return group(&nouns[3], "allot credential", argc, argv);
}

int cmd_template_main(int argc, char **argv)
{
    return group(&nouns[4], "allot template", argc, argv);
}
