/*
 * cmd_agent.c: `allot agent token create|list|revoke`: the tokens an admin
 * hands to allot-agent, one per machine (POST/GET/DELETE
 * /api/v1/agent/tokens). The token is in the answer to create, once; the
 * server keeps only its hash. `allot agent approve|set NODE`: an agent
 * node's pool and GPU count, which only an admin changes (POST
 * /api/v1/agent/nodes/{name}/approve, PATCH /api/v1/agent/nodes/{name}).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "table.h"

enum { O_NODE = 1, O_JSON, O_POOL, O_GPUS };

static const struct opt_spec create_opts[] = {
    {"node", 0, OPT_VALUE, O_NODE}, {"node-pool", 0, OPT_VALUE, O_POOL},
    {"gpus", 0, OPT_VALUE, O_GPUS}, {"json", 0, OPT_FLAG, O_JSON}, {NULL, 0, 0, 0}};
static const struct opt_spec approve_opts[] = {{"json", 0, OPT_FLAG, O_JSON}, {NULL, 0, 0, 0}};
static const struct opt_spec set_opts[] = {
    {"node-pool", 0, OPT_VALUE, O_POOL}, {"gpus", 0, OPT_VALUE, O_GPUS},
    {"json", 0, OPT_FLAG, O_JSON}, {NULL, 0, 0, 0}};
static const struct opt_spec revoke_opts[] = {{NULL, 0, 0, 0}};

static const struct cli_cmd create_cmd = {
    "allot agent token create", "NAME [--node NODE] [--node-pool POOL] [--gpus N] [--json]",
    "Creates an agent token and prints it, once: write it to the agent's --token-file.\n"
    "  --node NODE        bind the token to this node name (default: the first node\n"
    "                     that registers with it)\n"
    "  --node-pool POOL   the pool its node joins, whatever the agent asks for\n"
    "  --gpus N           the most GPUs its node may use, whatever the agent reports\n"
    "Without --node-pool and --gpus, the node's first registration sets them; later\n"
    "ones change them only once an admin approves (allot agent approve).\n"};
static const struct cli_cmd approve_cmd = {
    "allot agent approve", "NODE [--json]",
    "Approves the pool and GPU count NODE's agent asked for when it last registered\n"
    "(\"requested\" in GET /api/v1/agent/nodes): they take effect at once.\n"};
static const struct cli_cmd set_cmd = {
    "allot agent set", "NODE [--node-pool POOL] [--gpus N] [--json]",
    "Sets the pool NODE is in and the most GPUs it may use, whatever its agent asks\n"
    "for (it uses fewer if the agent reports fewer).\n"};
static const struct cli_cmd revoke_cmd = {
    "allot agent token revoke", "ID",
    "Revokes an agent token: its agent is refused and its node goes NotReady.\n"};

/* --node-pool POOL or --gpus N into a request body. */
static int figure(const struct cli_cmd *cmd, json_t *body, int id, const char *val)
{
    char *end;
    long n;

    if (!body)
        return cli_fail("out of memory");
    if (id == O_POOL) {
        json_object_set_new(body, "nodePool", json_string(val));
        return CLI_OK;
    }
    n = strtol(val, &end, 10);
    if (end == val || *end || n < 0 || n > 64)
        return cli_usage_error(cmd, "--gpus wants a number from 0 to 64, not '%s'", val);
    json_object_set_new(body, "gpus", json_integer(n));
    return CLI_OK;
}

static int token_create(const void *ctx, int argc, char **argv)
{
    struct client *c = NULL;
    json_t *body = NULL, *made = NULL;
    const char *node = NULL;
    struct opts o;
    int i, json = 0, rc = cmd_parse(&create_cmd, create_opts, argc, argv, &o);

    (void)ctx;
    body = json_object();
    for (i = 0; rc == CLI_OK && i < o.n_hits; i++) {
        if (o.hits[i].id == O_NODE)
            node = o.hits[i].val;
        else if (o.hits[i].id == O_JSON)
            json = 1;
        else
            rc = figure(&create_cmd, body, o.hits[i].id, o.hits[i].val);
    }
    if (rc == CLI_OK && o.help) {
        rc = cli_help(&create_cmd);
        goto out;
    }
    if (rc == CLI_OK)
        rc = cmd_one_operand(&create_cmd, &o, "NAME");
    if (rc != CLI_OK)
        goto out;
    if (body)
        json_object_set_new(body, "name", json_string(o.pos[0]));
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

static const char *const token_heads[] = {"ID", "Name", "Node", "Created", "Last used",
                                          "Revoked"};
static const struct list_kind token_list = {
    {"allot agent token list", FORMAT_USAGE,
     "Lists the agent tokens (never their secrets): node, creation, last use, revocation.\n\n"
     FORMAT_HELP},
    "/api/v1/agent/tokens", "tokens", 6, token_heads, token_row,
};

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
    if (rc == CLI_OK)
        rc = cmd_one_operand(&revoke_cmd, &o, "ID");
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

/* approve and set: one node, an optional body, the node as the answer. */
static int node_change(const struct cli_cmd *cmd, const struct opt_spec *spec, int approve,
                       int argc, char **argv)
{
    struct client *c = NULL;
    json_t *body = approve ? NULL : json_object(), *answer = NULL;
    char *name = NULL, *path = NULL;
    struct opts o;
    int i, json = 0, rc = cmd_parse(cmd, spec, argc, argv, &o);

    for (i = 0; rc == CLI_OK && i < o.n_hits; i++) {
        if (o.hits[i].id == O_JSON)
            json = 1;
        else
            rc = figure(cmd, body, o.hits[i].id, o.hits[i].val);
    }
    if (rc == CLI_OK && o.help) {
        rc = cli_help(cmd);
        goto out;
    }
    if (rc == CLI_OK)
        rc = cmd_one_operand(cmd, &o, "NODE");
    if (rc == CLI_OK && body && json_object_size(body) == 0)
        rc = cli_usage_error(cmd, "nothing to set: give --node-pool or --gpus%s", "");
    if (rc != CLI_OK)
        goto out;
    name = client_escape(o.pos[0]);
    path = name ? cli_strf(approve ? "/api/v1/agent/nodes/%s/approve" : "/api/v1/agent/nodes/%s",
                           name) : NULL;
    rc = path ? client_open(&c, CLIENT_LOGGED_IN) : cli_fail("out of memory");
    if (rc == CLI_OK)
        rc = client_json(c, approve ? "POST" : "PATCH", path, body, &answer);
    if (rc == CLI_OK && json)
        out_json(stdout, answer);
    else if (rc == CLI_OK)
        printf("node %s: pool %s, %lld GPUs at most\n", o.pos[0], jstr(answer, "nodePool", "?"),
               (long long)json_integer_value(json_object_get(json_object_get(answer, "approved"),
                                                             "gpus")));
out:
    json_decref(answer);
    json_decref(body);
    free(path);
    free(name);
    client_close(c);
    opts_free(&o);
    return rc;
}

static int node_approve(const void *ctx, int argc, char **argv)
{
    (void)ctx;
    return node_change(&approve_cmd, approve_opts, 1, argc, argv);
}

static int node_set(const void *ctx, int argc, char **argv)
{
    (void)ctx;
    return node_change(&set_cmd, set_opts, 0, argc, argv);
}

int cmd_agent_main(int argc, char **argv)
{
    static const struct verb tokens[] = {
        {"create", token_create, NULL, "create a token for allot-agent (printed once)"},
        {"list", list_verb, &token_list, "the tokens and the nodes they run"},
        {"revoke", token_revoke, NULL, "revoke a token"},
        {NULL, NULL, NULL, NULL},
    };
    static const struct cli_cmd token_cmd = {"allot agent token", "create|list|revoke ...", NULL};
    static const struct cli_cmd cmd = {
        "allot agent", "token create|list|revoke ... | approve NODE | set NODE ...",
        "  token     the tokens agents authenticate with\n"
        "  approve   approve the pool and GPU count a node's agent asked for\n"
        "  set       set a node's pool and GPU count\n"};

    if (argc >= 2 && strcmp(argv[1], "token") == 0)
        return verb_dispatch(&token_cmd, tokens, argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "approve") == 0)
        return node_approve(NULL, argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "set") == 0)
        return node_set(NULL, argc - 1, argv + 1);
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
        return cli_help(&cmd);
    return cli_usage_error(&cmd, argc >= 2 ? "unknown subcommand '%s'" : "a subcommand is missing",
                           argc >= 2 ? argv[1] : "");
}
