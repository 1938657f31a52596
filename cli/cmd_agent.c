/*
 * cmd_agent.c: `allot agent token create|list|revoke`: the tokens an admin
 * hands to allot-agent, one per machine (POST/GET/DELETE
 * /api/v1/agent/tokens). The token is in the answer to create, once; the
 * server keeps only its hash.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "table.h"

enum { O_NODE = 1, O_JSON };

static const struct opt_spec create_opts[] = {
    {"node", 0, OPT_VALUE, O_NODE}, {"json", 0, OPT_FLAG, O_JSON}, {NULL, 0, 0, 0}};
static const struct opt_spec list_opts[] = {FORMAT_OPTIONS, {NULL, 0, 0, 0}};
static const struct opt_spec revoke_opts[] = {{NULL, 0, 0, 0}};

static const struct cli_cmd create_cmd = {
    "allot agent token create", "NAME [--node NODE] [--json]",
    "Creates an agent token and prints it, once: write it to the agent's --token-file.\n"
    "  --node NODE   bind the token to this node name (default: the first node that\n"
    "                registers with it)\n"};
static const struct cli_cmd list_cmd = {
    "allot agent token list", "[--json | --yaml | --no-headers]",
    "Lists the agent tokens (never their secrets): node, creation, last use, revocation.\n"};
static const struct cli_cmd revoke_cmd = {
    "allot agent token revoke", "ID",
    "Revokes an agent token: its agent is refused and its node goes NotReady.\n"};

static int token_create(const void *ctx, int argc, char **argv)
{
    struct client *c = NULL;
    json_t *body = NULL, *made = NULL;
    const char *node = NULL;
    struct opts o;
    int i, json = 0, rc = cmd_parse(&create_cmd, create_opts, argc, argv, &o);

    (void)ctx;
    for (i = 0; rc == CLI_OK && i < o.n_hits; i++) {
        if (o.hits[i].id == O_NODE)
            node = o.hits[i].val;
        else if (o.hits[i].id == O_JSON)
            json = 1;
    }
    if (rc == CLI_OK && o.help) {
        rc = cli_help(&create_cmd);
        goto out;
    }
    if (rc == CLI_OK && (o.n_pos != 1 || o.has_rest))
        rc = cli_usage_error(&create_cmd, o.n_pos > 1 ? "unexpected argument '%s'" : "NAME is missing",
                             o.n_pos > 1 ? o.pos[1] : "");
    if (rc != CLI_OK)
        goto out;
    body = json_pack("{s:s}", "name", o.pos[0]);
    if (body && node)
        json_object_set_new(body, "nodeName", json_string(node));
    rc = body ? client_open(&c, CLIENT_LOGGED_IN) : cli_fail("out of memory");
    if (rc == CLI_OK)
        rc = client_json(c, "POST", "/api/v1/agent/tokens", body, &made);
    if (rc == CLI_OK && json)
        out_json(stdout, made);
    else if (rc == CLI_OK)
        printf("%s\n", json_string_value(json_object_get(made, "token")) ?
                           json_string_value(json_object_get(made, "token")) : "");
out:
    json_decref(made);
    json_decref(body);
    client_close(c);
    opts_free(&o);
    return rc;
}

static const char *time_or_dash(const json_t *v)
{
    return json_is_string(v) ? json_string_value(v) : "-";
}

static void token_row(struct table *t, const json_t *k)
{
    table_add(t, "%s", jstr(k, "id", "?"));
    table_add(t, "%s", jstr(k, "name", "?"));
    table_add(t, "%s", jstr(k, "nodeName", "-")[0] ? jstr(k, "nodeName", "-") : "-");
    table_add(t, "%s", time_or_dash(json_object_get(k, "createdAt")));
    table_add(t, "%s", time_or_dash(json_object_get(k, "lastUsedAt")));
    table_add(t, "%s", json_is_true(json_object_get(k, "revoked")) ? "yes" : "no");
}

static int token_list(const void *ctx, int argc, char **argv)
{
    static const char *const heads[] = {"ID", "Name", "Node", "Created", "Last used", "Revoked"};
    struct client *c = NULL;
    json_t *all = NULL, *item;
    struct table t;
    struct opts o;
    size_t i;
    int format, rc = cmd_parse(&list_cmd, list_opts, argc, argv, &o);

    (void)ctx;
    table_init(&t, 6, heads);
    if (rc == CLI_OK && o.help)
        rc = cli_help(&list_cmd);
    else if (rc == CLI_OK && (rc = cmd_list_args(&list_cmd, &o, &format)) == CLI_OK &&
             (rc = client_open(&c, CLIENT_LOGGED_IN)) == CLI_OK &&
             (rc = client_list_all(c, "/api/v1/agent/tokens", "tokens", &all)) == CLI_OK) {
        json_array_foreach(all, i, item)
            token_row(&t, item);
        rc = t.oom ? cli_fail("out of memory") : CLI_OK;
        if (rc == CLI_OK)
            print_listing(format, &t, all);
    }
    table_free(&t);
    json_decref(all);
    client_close(c);
    opts_free(&o);
    return rc;
}

static int token_revoke(const void *ctx, int argc, char **argv)
{
    struct client *c = NULL;
    char *id = NULL, *path = NULL;
    json_t *answer = NULL;
    struct opts o;
    int rc = cmd_parse(&revoke_cmd, revoke_opts, argc, argv, &o);

    (void)ctx;
    if (rc == CLI_OK && o.help) {
        rc = cli_help(&revoke_cmd);
        goto out;
    }
    if (rc == CLI_OK && (o.n_pos != 1 || o.has_rest))
        rc = cli_usage_error(&revoke_cmd, o.n_pos > 1 ? "unexpected argument '%s'" : "ID is missing",
                             o.n_pos > 1 ? o.pos[1] : "");
    if (rc != CLI_OK)
        goto out;
    id = client_escape(o.pos[0]);
    path = id ? cli_strf("/api/v1/agent/tokens/%s", id) : NULL;
    rc = path ? client_open(&c, CLIENT_LOGGED_IN) : cli_fail("out of memory");
    if (rc == CLI_OK)
        rc = client_json(c, "DELETE", path, NULL, &answer);
    if (rc == CLI_OK)
        printf("agent token %s revoked\n", o.pos[0]);
out:
    json_decref(answer);
    free(path);
    free(id);
    client_close(c);
    opts_free(&o);
    return rc;
}

int cmd_agent_main(int argc, char **argv)
{
    static const struct verb tokens[] = {
        {"create", token_create, NULL},
        {"list", token_list, NULL},
        {"revoke", token_revoke, NULL},
        {NULL, NULL, NULL},
    };
    static const struct cli_cmd token_cmd = {
        "allot agent token", "create|list|revoke ...",
        "  create    create a token for allot-agent (printed once)\n"
        "  list      the tokens and the nodes they run\n"
        "  revoke    revoke a token\n"};
    static const struct cli_cmd cmd = {"allot agent", "token create|list|revoke ...",
                                       "  token     the tokens agents authenticate with\n"};

    if (argc >= 2 && strcmp(argv[1], "token") == 0)
        return verb_dispatch(&token_cmd, tokens, argc - 1, argv + 1);
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
        return cli_help(&cmd);
    return cli_usage_error(&cmd, argc >= 2 ? "unknown subcommand '%s'" : "a subcommand is missing",
                           argc >= 2 ? argv[1] : "");
}
