/*
 * cmd_nodepool.c: `allot nodepool create|edit|delete`: the node pools an
 * admin shapes (the nodes whose label KEY=VALUE they collect, GPU and CPU
 * placement, minimum guaranteed runtime, time-based fairshare), through
 * the dashboard's routes: POST /api/v1/node-pools, PATCH and DELETE
 * /api/v1/node-pools/{id}. `list` is in cmd_infra.c.
 *
 * create and edit share one table of flags (fields.h): create posts the
 * flags given over the server's defaults (placement fragmentation/spread, no
 * minimum runtime, time-based fairshare off with a 7-day window, no
 * half-life and k 1); edit patches only the fields named by its flags.
 * Both print the pool as the server answered.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "fields.h"

enum { O_JSON = 1 };

#define TBF "schedulingConfiguration.timeBasedFairshare."
#define PLACEMENTS "binpack spread fragmentation"

static const struct field_flag pool_fields[] = {
    {"label", FIELD_ID_BASE, F_KEY_VALUE, "labelKey=labelValue", 0, 0, NULL, CLEAR_NO},
    {"placement", FIELD_ID_BASE + 1, F_WORD, "placementStrategy.gpu", 0, 0, PLACEMENTS,
     CLEAR_NO},
    {"cpu-placement", FIELD_ID_BASE + 2, F_WORD, "placementStrategy.cpu", 0, 0, PLACEMENTS,
     CLEAR_NO},
    {"min-runtime", FIELD_ID_BASE + 3, F_TEXT, "schedulingConfiguration.minGuaranteedRuntime", 0,
     0, NULL, CLEAR_NULL},
    {"time-based-fairshare", FIELD_ID_BASE + 4, F_BOOL, TBF "enabled", 0, 0, NULL, CLEAR_NO},
    {"tbf-window", FIELD_ID_BASE + 5, F_SECONDS, TBF "windowSeconds", 1, 366.0 * 86400, NULL,
     CLEAR_NO},
    {"tbf-half-life", FIELD_ID_BASE + 6, F_SECONDS, TBF "halfLifeSeconds", 0, 366.0 * 86400,
     NULL, CLEAR_NO},
    {"tbf-k", FIELD_ID_BASE + 7, F_NUMBER, TBF "kValue", 0, 1000, NULL, CLEAR_NO},
    {NULL, 0, 0, NULL, 0, 0, NULL, 0},
};

static const struct field_flag *const pool_tables[] = {pool_fields, NULL};
static const struct opt_spec write_extra[] = {{"json", 0, OPT_FLAG, O_JSON}, {NULL, 0, 0, 0}};

#define POOL_FLAGS_HELP                                                                        \
    "  --placement P               GPU placement: fragmentation (the default: strand the\n"  \
    "                              fewest GPUs), binpack (fill nodes first) or spread\n"       \
    "  --cpu-placement P           CPU placement, the same words (default spread)\n"          \
    "  --min-runtime D             minimum guaranteed runtime before a preemptible workload\n" \
    "                              may be evicted: 30m, 2h, 1d12h, or none (the default)\n"   \
    "  --time-based-fairshare on|off   count past usage in fair share (default off)\n"        \
    "  --tbf-window D              the usage window: 90s, 30m, 2h, 7d (default 7d)\n"        \
    "  --tbf-half-life D           the decay of past usage, 0 for none (default 0)\n"         \
    "  --tbf-k K                   how much past usage counts, 0 to 1000 (default 1)\n"       \
    "  --json                      print the pool as the server answered\n"

/* create or edit. */
struct pool_verb {
    struct cli_cmd cmd;
    int create;
};

static const struct pool_verb create_verb = {
    {"allot nodepool create", "NAME --label KEY=VALUE [--placement P] [--cpu-placement P] "
                              "[--min-runtime D] [--time-based-fairshare on|off] "
                              "[--tbf-window D] [--tbf-half-life D] [--tbf-k K] [--json]",
     "Creates a node pool: the nodes whose label KEY has VALUE join it.\n\n"
     "  --label KEY=VALUE           the node label of the pool (required)\n" POOL_FLAGS_HELP},
    1,
};

static const struct pool_verb edit_verb = {
    {"allot nodepool edit", "NAME [--label KEY=VALUE] [--placement P] [--cpu-placement P] "
                            "[--min-runtime D] [--time-based-fairshare on|off] "
                            "[--tbf-window D] [--tbf-half-life D] [--tbf-k K] [--json]",
     "Changes the settings named by the flags; the others stay as they are.\n\n"
     "  --label KEY=VALUE           the node label of the pool\n" POOL_FLAGS_HELP},
    0,
};


/* The body of the flags met; CLI_OK or a usage error. */
static int pool_body(const struct pool_verb *k, const struct opts *o, json_t *body, int *json)
{
    const struct field_flag *f;
    int i, rc = CLI_OK;

    for (i = 0; rc == CLI_OK && i < o->n_hits; i++) {
        f = field_of(pool_fields, o->hits[i].id);
        if (f)
            rc = field_apply(&k->cmd, f, o->hits[i].val, body);
        else
            *json = 1;
    }
    if (rc != CLI_OK)
        return rc;
    if (o->n_pos != 1 || o->has_rest)
        return cli_usage_error(&k->cmd, o->n_pos > 1 ? "one node pool at a time"
                                                     : "NAME is missing");
    if (k->create && !json_object_get(body, "labelKey"))
        return cli_usage_error(&k->cmd, "--label KEY=VALUE is required");
    if (!k->create && json_object_size(body) == 0)
        return cli_usage_error(&k->cmd, "nothing to change: name a setting, such as "
                                        "--placement spread");
    return CLI_OK;
}

static void print_pool(const struct pool_verb *k, const json_t *p)
{
    const char *mgr = jstr(p, "schedulingConfiguration.minGuaranteedRuntime", NULL);

    printf("node pool %s %s: label %s=%s, placement %s/%s, minimum runtime %s, time-based "
           "fairshare %s\n", jstr(p, "name", "?"), k->create ? "created" : "saved",
           jstr(p, "labelKey", "?"), jstr(p, "labelValue", "?"),
           jstr(p, "placementStrategy.gpu", CLI_DEFAULT_GPU_PLACEMENT), jstr(p, "placementStrategy.cpu", "?"),
           mgr && mgr[0] ? mgr : "none",
           json_is_true(json_object_get(json_object_get(json_object_get(
               p, "schedulingConfiguration"), "timeBasedFairshare"), "enabled")) ? "on" : "off");
}

static int pool_send(struct client *c, const struct pool_verb *k, const char *name, json_t *body,
                     json_t **made)
{
    json_t *pool = NULL;
    char *path = NULL;
    int rc;

    if (k->create) {
        json_object_set_new(body, "name", json_string(name));
        return client_json(c, "POST", "/api/v1/node-pools", body, made);
    }
    rc = find_pool(c, name, &pool);
    if (rc == CLI_OK) {
        path = cli_strf("/api/v1/node-pools/%s", jstr(pool, "id", ""));
        rc = path ? client_json(c, "PATCH", path, body, made) : cli_fail("out of memory");
    }
    free(path);
    json_decref(pool);
    return rc;
}

static int pool_write(const void *ctx, int argc, char **argv)
{
    const struct pool_verb *k = ctx;
    struct opt_spec spec[16];
    struct client *c = NULL;
    json_t *body = json_object(), *made = NULL;
    struct opts o = {0};
    int json = 0, rc = field_specs(pool_tables, write_extra, spec, 16) || !body
                           ? cli_fail("out of memory") : cmd_parse(&k->cmd, spec, argc, argv, &o);

    if (rc == CLI_OK && o.help)
        rc = cli_help(&k->cmd);
    else if (rc == CLI_OK && (rc = pool_body(k, &o, body, &json)) == CLI_OK &&
             (rc = client_open(&c, CLIENT_LOGGED_IN)) == CLI_OK &&
             (rc = pool_send(c, k, o.pos[0], body, &made)) == CLI_OK) {
        if (json)
            out_json(stdout, made);
        else
            print_pool(k, made);
    }
    json_decref(made);
    json_decref(body);
    client_close(c);
    opts_free(&o);
    return rc;
}

int nodepool_create(const void *ctx, int argc, char **argv)
{
    (void)ctx;
    return pool_write(&create_verb, argc, argv);
}

int nodepool_edit(const void *ctx, int argc, char **argv)
{
    (void)ctx;
    return pool_write(&edit_verb, argc, argv);
}

const struct delete_kind nodepool_delete = {
    {"allot nodepool delete", "NAME [-y]",
     "Deletes an empty node pool (the default pool, and a pool that still holds nodes,\n"
     "cannot be deleted). On a terminal it asks first; elsewhere -y is required.\n"},
    "node pool", "/api/v1/node-pools", find_pool,
};
