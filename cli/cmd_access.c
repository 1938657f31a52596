/*
 * cmd_access.c: `allot access-rule list|create|delete`: who may do what
 * where. A rule gives a subject (a user's login, or a service account)
 * a role (System administrator, Department administrator, Editor, L1
 * researcher, ML engineer, Viewer) on a scope (the system, a department
 * or a project), through the dashboard's routes:
 * /api/v1/authorization/access-rules (GET, POST) and .../{id} (DELETE).
 *
 * create reads its flags by a table (fields.h) for the subject, then
 * finds the role by its name (GET /api/v1/authorization/roles) and the
 * scope's id by its name, as users type names and the API wants ids.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "fields.h"
#include "table.h"

enum { O_ROLE = 1, O_SYSTEM, O_DEPARTMENT, O_PROJECT, O_JSON, O_YES };

#define RULES_PATH "/api/v1/authorization/access-rules"

static const struct field_flag rule_fields[] = {
    {"subject", FIELD_ID_BASE, F_TEXT, "subjectId", 0, 0, NULL, CLEAR_NO},
    {"subject-type", FIELD_ID_BASE + 1, F_WORD, "subjectType", 0, 0, "user service-account",
     CLEAR_NO},
    {NULL, 0, 0, NULL, 0, 0, NULL, 0},
};
static const struct field_flag *const rule_tables[] = {rule_fields, NULL};

static const struct opt_spec create_extra[] = {
    {"role", 0, OPT_VALUE, O_ROLE},
    {"system", 0, OPT_FLAG, O_SYSTEM},
    {"department", 0, OPT_VALUE, O_DEPARTMENT},
    {"project", 'p', OPT_VALUE, O_PROJECT},
    {"json", 0, OPT_FLAG, O_JSON},
    {NULL, 0, 0, 0},
};
static const struct opt_spec delete_opts[] = {{"yes", 'y', OPT_FLAG, O_YES}, {NULL, 0, 0, 0}};


static const struct cli_cmd create_cmd = {
    "allot access-rule create",
    "--subject LOGIN --role ROLE (--system | --department NAME | -p PROJECT) "
    "[--subject-type user|service-account] [--json]",
    "Gives a user (or a service account) a role on a scope.\n\n"
    "  --subject LOGIN             the user's login (an email) or the service account's\n"
    "  --subject-type T            user (the default) or service-account\n"
    "  --role ROLE                 a role's name or id: System administrator, Department\n"
    "                              administrator, Editor, L1 researcher, ML engineer, Viewer\n"
    "  --system                    the scope is the whole system\n"
    "  --department NAME           the scope is a department and its projects\n"
    "  -p, --project NAME          the scope is one project\n"
    "  --json                      print the rule as the server answered\n",
};

static const struct cli_cmd delete_cmd = {
    "allot access-rule delete", "ID [-y]",
    "Deletes an access rule (allot access-rule list shows the ids). On a terminal it asks\n"
    "first; elsewhere -y is required.\n",
};

/* ---- list ---- */

static void rule_row(struct table *t, const json_t *r)
{
    const char *scope = jstr(r, "scopeType", "?");

    table_add(t, "%.0f", jnum(r, "id", 0));
    table_add(t, "%s", jstr(r, "subjectId", "?"));
    table_add(t, "%s", jstr(r, "subjectType", "?"));
    table_add(t, "%s", jstr(r, "roleName", "?"));
    if (strcmp(scope, "department") == 0 || strcmp(scope, "project") == 0)
        table_add(t, "%s %s", scope, jstr(r, "scopeName", "?"));
    else
        table_add(t, "%s", scope);
}

static const char *const rule_heads[] = {"ID", "Subject", "Subject Type", "Role", "Scope"};
static const struct list_kind rules = {
    {"allot access-rule list", FORMAT_USAGE,
     "Lists the access rules you may manage: id, subject, role and scope.\n\n" FORMAT_HELP},
    RULES_PATH, "accessRules", 5, rule_heads, rule_row,
};

/* ---- create ---- */

struct rule_args {
    const char *role;
    int scope_flag;            /* O_SYSTEM, O_DEPARTMENT or O_PROJECT */
    const char *scope_name;
    int json;
};

static int create_hit(const struct opt_hit *h, json_t *body, struct rule_args *a)
{
    const struct field_flag *f = field_of(rule_fields, h->id);

    if (f)
        return field_apply(&create_cmd, f, h->val, body);
    if (h->id == O_ROLE)
        a->role = h->val;
    else if (h->id == O_JSON)
        a->json = 1;
    else if (a->scope_flag && a->scope_flag != h->id)
        return cli_usage_error(&create_cmd, "--system, --department and --project exclude "
                                            "each other");
    else {
        a->scope_flag = h->id;
        a->scope_name = h->val;
    }
    return CLI_OK;
}

static int create_args_in(const struct opts *o, json_t *body, struct rule_args *a)
{
    int i, rc = CLI_OK;

    memset(a, 0, sizeof(*a));
    for (i = 0; rc == CLI_OK && i < o->n_hits; i++)
        rc = create_hit(&o->hits[i], body, a);
    if (rc != CLI_OK)
        return rc;
    if (o->n_pos || o->has_rest)
        return cli_usage_error(&create_cmd, "unexpected argument '%s'",
                               o->n_pos ? o->pos[0] : "--");
    if (!json_object_get(body, "subjectId") || !a->role)
        return cli_usage_error(&create_cmd, "--subject and --role are required");
    if (!a->scope_flag)
        return cli_usage_error(&create_cmd, "a scope is required: --system, --department NAME "
                                            "or --project NAME");
    if (!json_object_get(body, "subjectType"))
        json_object_set_new(body, "subjectType", json_string("user"));
    return CLI_OK;
}

/* The id of the role named (or numbered) name. */
static int find_role(struct client *c, const char *name, long *id)
{
    json_t *roles = NULL, *r;
    size_t i;
    int rc = client_json(c, "GET", "/api/v1/authorization/roles", NULL, &roles);

    *id = -1;
    json_array_foreach(roles, i, r)
        if (cli_eq_nocase(jstr(r, "name", ""), name) ||
            (cli_parse_int(name, 1, 1000, id) == 0 && jnum(r, "id", -1) == (double)*id))
            break;
    if (rc == CLI_OK && i < json_array_size(roles))
        *id = (long)jnum(json_array_get(roles, i), "id", -1);
    else if (rc == CLI_OK)
        rc = cli_fail("no role named %s: the roles are System administrator, Department "
                      "administrator, Editor, L1 researcher, ML engineer and Viewer", name);
    json_decref(roles);
    return rc;
}

/* scopeType and scopeId of the scope flag. */
static int scope_in(struct client *c, const struct rule_args *a, json_t *body)
{
    json_t *q = NULL;
    int rc = CLI_OK;

    if (a->scope_flag == O_SYSTEM)
        return json_object_set_new(body, "scopeType", json_string("system")) ? CLI_FAIL : CLI_OK;
    rc = a->scope_flag == O_PROJECT ? find_project(c, a->scope_name, &q)
                                    : find_department(c, a->scope_name, &q);
    if (rc == CLI_OK) {
        json_object_set_new(body, "scopeType",
                            json_string(a->scope_flag == O_PROJECT ? "project" : "department"));
        json_object_set_new(body, "scopeId", json_string(jstr(q, "id", "")));
    }
    json_decref(q);
    return rc;
}

static int do_create(struct client *c, const struct rule_args *a, json_t *body)
{
    json_t *made = NULL;
    long role;
    int rc = find_role(c, a->role, &role);

    if (rc == CLI_OK)
        rc = scope_in(c, a, body);
    if (rc == CLI_OK) {
        json_object_set_new(body, "roleId", json_integer(role));
        rc = client_json(c, "POST", RULES_PATH, body, &made);
    }
    if (rc == CLI_OK && a->json)
        out_json(stdout, made);
    else if (rc == CLI_OK)
        printf("access rule %.0f created: %s is %s on %s%s%s\n", jnum(made, "id", 0),
               jstr(made, "subjectId", "?"), jstr(made, "roleName", "?"),
               jstr(made, "scopeType", "?"), a->scope_name ? " " : "",
               a->scope_name ? a->scope_name : "");
    json_decref(made);
    return rc;
}

static int rule_create(const void *ctx, int argc, char **argv)
{
    struct opt_spec spec[16];
    struct client *c = NULL;
    struct rule_args a;
    json_t *body = json_object();
    struct opts o = {0};
    int rc = field_specs(rule_tables, create_extra, spec, 16) || !body
                 ? cli_fail("out of memory") : cmd_parse(&create_cmd, spec, argc, argv, &o);

    (void)ctx;
    if (rc == CLI_OK && o.help)
        rc = cli_help(&create_cmd);
    else if (rc == CLI_OK && (rc = create_args_in(&o, body, &a)) == CLI_OK &&
             (rc = client_open(&c, CLIENT_LOGGED_IN)) == CLI_OK)
        rc = do_create(c, &a, body);
    json_decref(body);
    client_close(c);
    opts_free(&o);
    return rc;
}

/* ---- delete ---- */

static int do_delete(struct client *c, long id, int yes)
{
    char *path = cli_strf(RULES_PATH "/%ld", id), *question = cli_strf("Delete access rule %ld",
                                                                       id);
    json_t *rule = NULL, *answer = NULL;
    int rc = path && question ? client_json(c, "GET", path, NULL, &rule)
                              : cli_fail("out of memory");

    if (rc == CLI_OK && !delete_confirmed(yes, question))
        printf("access rule %ld was not deleted\n", id);
    else if (rc == CLI_OK && (rc = client_json(c, "DELETE", path, NULL, &answer)) == CLI_OK)
        printf("access rule %ld deleted: %s is no longer %s on %s\n", id,
               jstr(rule, "subjectId", "?"), jstr(rule, "roleName", "?"),
               jstr(rule, "scopeType", "?"));
    json_decref(answer);
    json_decref(rule);
    free(question);
    free(path);
    return rc;
}

static int rule_delete(const void *ctx, int argc, char **argv)
{
    struct client *c = NULL;
    struct opts o;
    long id = 0;
    int rc = cmd_parse(&delete_cmd, delete_opts, argc, argv, &o);

    (void)ctx;
    if (rc == CLI_OK && o.help)
        rc = cli_help(&delete_cmd);
    else if (rc == CLI_OK && (o.n_pos != 1 || o.has_rest))
        rc = cli_usage_error(&delete_cmd, o.n_pos > 1 ? "one rule at a time" : "ID is missing");
    else if (rc == CLI_OK && cli_parse_int(o.pos[0], 1, 2000000000L, &id) != 0)
        rc = cli_usage_error(&delete_cmd, "ID is a rule's number (allot access-rule list)");
    else if (rc == CLI_OK && (rc = delete_allowed(&delete_cmd, o.n_hits > 0)) == CLI_OK &&
             (rc = client_open(&c, CLIENT_LOGGED_IN)) == CLI_OK)
        rc = do_delete(c, id, o.n_hits > 0);
    client_close(c);
    opts_free(&o);
    return rc;
}

int cmd_access_rule_main(int argc, char **argv)
{
    static const struct verb verbs[] = {
        {"list", list_verb, &rules, "the access rules you may manage"},
        {"create", rule_create, NULL,
         "give a user a role on the system, a department or a project"},
        {"delete", rule_delete, NULL, "delete a rule"},
        {NULL, NULL, NULL, NULL},
    };
    static const struct cli_cmd cmd = {"allot access-rule", "list|create|delete ...", NULL};

    return verb_dispatch(&cmd, verbs, argc, argv);
}
