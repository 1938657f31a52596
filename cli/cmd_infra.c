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
    table_add(t, "%s/%s", jstr(p, "placementStrategy.gpu", CLI_DEFAULT_GPU_PLACEMENT),
              jstr(p, "placementStrategy.cpu", "-"));
}

static const char *const node_heads[] = {"Node", "Status", "Node Pool", "GPU Type", "GPUs",
                                         "Allocated GPUs", "Free GPUs"};
static const char *const pool_heads[] = {"Node Pool", "Status", "Nodes", "GPUs",
                                         "Allocated GPUs", "Free GPUs", "Placement (GPU/CPU)"};

static const struct list_kind nodes = {
    {"allot node list", FORMAT_USAGE,
     "Lists the nodes: status, pool, GPU type, and GPUs allocated and free.\n\n"
     FORMAT_HELP},
    "/api/v1/nodes", "nodes", 7, node_heads, node_row,
};

static const struct list_kind pools = {
    {"allot nodepool list", FORMAT_USAGE,
     "Lists the node pools: nodes, GPUs allocated and free, and placement.\n\n"
     FORMAT_HELP},
    "/api/v1/node-pools", "nodepools", 7, pool_heads, pool_row,
};

int cmd_node_main(int argc, char **argv)
{
    static const struct verb verbs[] = {
        {"list", list_verb, &nodes, "the nodes and their free GPUs"},
        {NULL, NULL, NULL, NULL},
    };
    static const struct cli_cmd cmd = {"allot node", "list " FORMAT_USAGE, NULL};

    return verb_dispatch(&cmd, verbs, argc, argv);
}

int cmd_nodepool_main(int argc, char **argv)
{
    static const struct verb verbs[] = {
        {"list", list_verb, &pools, "the node pools and their free GPUs"},
        {"create", nodepool_create, NULL, "create a node pool of the nodes with a label"},
        {"edit", nodepool_edit, NULL,
         "change a pool's label, placement, minimum runtime or time-based\nfairshare"},
        {"delete", delete_verb, &nodepool_delete, "delete an empty node pool"},
        {NULL, NULL, NULL, NULL},
    };
    static const struct cli_cmd cmd = {"allot nodepool", "list|create|edit|delete ...", NULL};

    return verb_dispatch(&cmd, verbs, argc, argv);
}
