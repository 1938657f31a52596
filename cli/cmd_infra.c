/*
 * cmd_infra.c: `allot node list` and `allot nodepool list`: the machines,
 * the pools they form, and how many GPUs are free in each. Every
 * logged-in role may read these, so researchers can see capacity. The
 * admin's nodepool verbs are in cmd_nodepool.c.
 */
#include <jansson.h>
#include <stdio.h>

#include "cmd.h"
#include "table.h"

static const struct opt_spec list_opts[] = {FORMAT_OPTIONS, {NULL, 0, 0, 0}};

static void node_row(struct table *t, const json_t *n)
{
    double gpus = jnum(n, "gpuInfo.gpuCount", 0), alloc = jnum(n, "allocatedGpus", 0);

    table_add(t, "%s", jstr(n, "name", "?"));
    table_add(t, "%s", jstr(n, "status", "?"));
    table_add(t, "%s", jstr(n, "nodePool", "-"));
    table_add(t, "%s", jstr(n, "gpuInfo.gpuType", "-"));
    table_add(t, "%.0f", gpus);
    table_add(t, "%.2f", alloc);
    table_add(t, "%.2f", jnum(n, "freeGpus", gpus - alloc));
}

static void pool_row(struct table *t, const json_t *p)
{
    double gpus = jnum(p, "gpus", 0), alloc = jnum(p, "allocatedGpus", 0);

    table_add(t, "%s", jstr(p, "name", "?"));
    table_add(t, "%s", jstr(p, "phase", "?"));
    table_add(t, "%zu", json_array_size(json_object_get(json_object_get(p, "status"), "nodes")));
    table_add(t, "%.0f", gpus);
    table_add(t, "%.2f", alloc);
    table_add(t, "%.2f", gpus - alloc);
    table_add(t, "%s/%s", jstr(p, "placementStrategy.gpu", "-"),
              jstr(p, "placementStrategy.cpu", "-"));
}

/* What tells the two lists apart. */
struct infra {
    struct cli_cmd cmd;
    const char *path, *key;
    int n_cols;
    const char *const *heads;
    void (*row)(struct table *t, const json_t *item);
};

static int infra_list(const void *ctx, int argc, char **argv)
{
    const struct infra *k = ctx;
    struct client *c = NULL;
    json_t *all = NULL, *item;
    struct table t;
    struct opts o;
    size_t i;
    int format, rc = cmd_parse(&k->cmd, list_opts, argc, argv, &o);

    table_init(&t, k->n_cols, k->heads);
    if (rc == CLI_OK && o.help)
        rc = cli_help(&k->cmd);
    else if (rc == CLI_OK && (rc = cmd_list_args(&k->cmd, &o, &format)) == CLI_OK &&
             (rc = client_open(&c, CLIENT_LOGGED_IN)) == CLI_OK &&
             (rc = client_list_all(c, k->path, k->key, &all)) == CLI_OK) {
        json_array_foreach(all, i, item)
            k->row(&t, item);
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

static const char *const node_heads[] = {"Node", "Status", "Node Pool", "GPU Type", "GPUs",
                                         "Allocated GPUs", "Free GPUs"};
static const char *const pool_heads[] = {"Node Pool", "Status", "Nodes", "GPUs",
                                         "Allocated GPUs", "Free GPUs", "Placement (GPU/CPU)"};

static const struct infra nodes = {
    {"allot node list", FORMAT_USAGE,
     "Lists the nodes: status, pool, GPU type, and GPUs allocated and free.\n\n"
     FORMAT_HELP},
    "/api/v1/nodes", "nodes", 7, node_heads, node_row,
};

static const struct infra pools = {
    {"allot nodepool list", FORMAT_USAGE,
     "Lists the node pools: nodes, GPUs allocated and free, and placement.\n\n"
     FORMAT_HELP},
    "/api/v1/node-pools", "nodepools", 7, pool_heads, pool_row,
};

int cmd_node_main(int argc, char **argv)
{
    static const struct verb verbs[] = {{"list", infra_list, &nodes}, {NULL, NULL, NULL}};
    static const struct cli_cmd cmd = {"allot node", "list " FORMAT_USAGE,
                                       "  list      the nodes and their free GPUs\n"};

    return verb_dispatch(&cmd, verbs, argc, argv);
}

int cmd_nodepool_main(int argc, char **argv)
{
    static const struct verb verbs[] = {
        {"list", infra_list, &pools},
        {"create", nodepool_create, NULL},
        {"edit", nodepool_edit, NULL},
        {"delete", nodepool_delete, NULL},
        {NULL, NULL, NULL},
    };
    static const struct cli_cmd cmd = {
        "allot nodepool", "list|create|edit|delete ...",
        "  list      the node pools and their free GPUs\n"
        "  create    create a node pool of the nodes with a label\n"
        "  edit      change a pool's label, placement, minimum runtime or time-based\n"
        "            fairshare\n"
        "  delete    delete an empty node pool\n",
    };

    return verb_dispatch(&cmd, verbs, argc, argv);
}
