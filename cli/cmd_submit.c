/*
 * cmd_submit.c: `allot training|workspace|inference|distributed submit`,
 * with the runai CLI's flags, turned into the API's creation request
 * (POST /api/v1/workloads/{trainings,workspaces,inferences,distributed}).
 *
 * Step 1: read the flags into struct submit, refusing what the noun
 *         cannot take (exit 2 before any network);
 * Step 2: build the request and post it to POST /api/v1/workloads/
 *         submissions, which takes the project by its name (no list of
 *         projects per call) and, with --count N, makes N workloads
 *         NAME-0 .. NAME-(N-1) in one commit, each with ALLOT_BATCH_INDEX
 *         and ALLOT_BATCH_COUNT in its environment; the 202 answer lists
 *         the workloads.
 *         With --dry-run the project's id is found by its name and the
 *         request goes to the typed route with ?dryRun=true instead:
 *         nothing is submitted, and the answer (where it would run, whom
 *         it would evict, or why it would wait) is printed by cmd_whatif.c.
 *
 * The words after "--" are the container's arguments; with --command the
 * first of them is the command instead (runai's convention). The API
 * wants each as one string, so the words are joined with shell quoting.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quantity.h"
#include "wl.h"

#define MAX_GPUS 64
#define MAX_ENV 256
#define MAX_PORTS 16
#define MAX_ASSETS 16

enum {
    O_IMAGE = 1, O_GPUS, O_PORTION, O_CPU, O_MEMORY, O_PROJECT, O_COMMAND, O_ENV, O_POOLS,
    O_NODE_TYPE, O_PRIORITY, O_PREEMPTIBILITY, O_WORKDIR, O_PREFIX, O_PARALLELISM, O_WORKERS,
    O_FRAMEWORK, O_NO_MASTER, O_MIN_REPLICAS, O_MAX_REPLICAS, O_JSON, O_GPU_MEMORY, O_PORT,
    O_DRY_RUN, O_COUNT, O_NAME, O_ENV_OR_ASSET, O_COMPUTE, O_DATA_SOURCE, O_CREDENTIAL, O_TEMPLATE,
    O_TOPOLOGY, O_TOPO_REQUIRED, O_TOPO_PREFERRED,
};

#define MAX_COUNT 1000

static const struct opt_spec submit_opts[] = {
    {"image", 'i', OPT_VALUE, O_IMAGE},
    {"gpu-devices-request", 'g', OPT_VALUE, O_GPUS},
    {"gpu-portion-request", 0, OPT_VALUE, O_PORTION}, {"gpu-portion", 0, OPT_VALUE, O_PORTION},
    {"gpu-memory-request", 0, OPT_VALUE, O_GPU_MEMORY}, {"gpu-memory", 0, OPT_VALUE, O_GPU_MEMORY},
    {"port", 0, OPT_VALUE, O_PORT},
    {"cpu-core-request", 0, OPT_VALUE, O_CPU}, {"cpu-memory-request", 0, OPT_VALUE, O_MEMORY},
    {"project", 'p', OPT_VALUE, O_PROJECT},
    {"command", 0, OPT_FLAG, O_COMMAND},
    {"environment", 0, OPT_VALUE, O_ENV_OR_ASSET},
    {"environment-variable", 'e', OPT_VALUE, O_ENV},
    {"node-pools", 0, OPT_VALUE, O_POOLS}, {"node-type", 0, OPT_VALUE, O_NODE_TYPE},
    {"topology", 0, OPT_VALUE, O_TOPOLOGY}, {"required-placement", 0, OPT_VALUE, O_TOPO_REQUIRED},
    {"preferred-placement", 0, OPT_VALUE, O_TOPO_PREFERRED},
    {"priority", 0, OPT_VALUE, O_PRIORITY}, {"preemptibility", 0, OPT_VALUE, O_PREEMPTIBILITY},
    {"working-dir", 0, OPT_VALUE, O_WORKDIR},
    {"name-prefix", 0, OPT_VALUE, O_PREFIX}, {"name", 0, OPT_VALUE, O_NAME},
    {"parallelism", 0, OPT_VALUE, O_PARALLELISM}, {"workers", 0, OPT_VALUE, O_WORKERS},
    {"framework", 0, OPT_VALUE, O_FRAMEWORK}, {"no-master", 0, OPT_FLAG, O_NO_MASTER},
    {"min-replicas", 0, OPT_VALUE, O_MIN_REPLICAS}, {"max-replicas", 0, OPT_VALUE, O_MAX_REPLICAS},
    {"json", 0, OPT_FLAG, O_JSON}, {"dry-run", 0, OPT_FLAG, O_DRY_RUN},
    {"count", 0, OPT_VALUE, O_COUNT},
    {"compute", 0, OPT_VALUE, O_COMPUTE}, {"data-source", 0, OPT_VALUE, O_DATA_SOURCE},
    {"credential", 0, OPT_VALUE, O_CREDENTIAL}, {"template", 0, OPT_VALUE, O_TEMPLATE},
    {NULL, 0, 0, 0},
};

static const char submit_usage[] =
    "NAME -i IMAGE [-g N] [-p PROJECT] [flags] [--command] [-- ARGS...]   (or --name NAME;\n"
    "       -i may come from --environment ENV or --template NAME)";

static const char submit_help[] =
    "Submits a workload to a project (-p, else the default project).\n\n"
    "  -i, --image IMAGE               the container image (required)\n"
    "  -g, --gpu-devices-request N     whole GPUs per pod (with a portion: that many shared\n"
    "                                  GPUs)\n"
    "  --gpu-portion-request F         a part of each GPU, 0 < F <= 1\n"
    "  --gpu-memory-request Q          GPU memory of one GPU: 20G, 40Gi (also --gpu-memory)\n"
    "  --cpu-core-request N            CPU cores per pod\n"
    "  --cpu-memory-request Q          memory per pod: 500M, 1G, 2Gi\n"
    "  -p, --project NAME              the project\n"
    "  -e, --environment NAME=VALUE    an environment variable (repeatable)\n"
    "  --environment ENV               an environment asset (a name without '='): its image,\n"
    "                                  command and variables, under the flags given\n"
    "  --compute NAME                  a compute resource asset, under the flags given\n"
    "  --data-source NAME              a data source asset (host path, git; repeatable)\n"
    "  --credential NAME               a credential: NAME_FIELD variables (repeatable)\n"
    "  --template NAME                 a workload template of this type, under the rest\n"
    "  --port C[:N]                    container port C, reached on node port N (default C;\n"
    "                                  repeatable)\n"
    "  --command                       the words after -- are the command, not its args\n"
    "  --node-pools a,b                node pools in order of preference\n"
    "  --node-type TYPE                only nodes of this type\n"
    "  --required-placement LEVEL      every pod inside one domain of this topology level\n"
    "                                  (a node label key of its pool's network topology)\n"
    "  --preferred-placement LEVEL     inside one domain of this level if it can\n"
    "  --topology NAME                 the network topology those levels are of\n"
    "  --priority CLASS                very-low, low, medium-low, medium, medium-high, high,\n"
    "                                  very-high, or train, build, interactive-preemptible,\n"
    "                                  inference\n"
    "  --preemptibility P              preemptible or non-preemptible\n"
    "  --working-dir DIR               the container's working directory\n"
    "  --name NAME                     the same as NAME\n"
    "  --name-prefix PREFIX            let the server name it PREFIX-xxxxx (no NAME)\n"
    "  --parallelism N                 training: pods that run together (also --workers)\n"
    "  --workers N                     distributed: worker pods (plus a master)\n"
    "  --framework F                   distributed: PyTorch, MPI, TF, XGBoost or JAX\n"
    "  --no-master                     distributed: workers only\n"
    "  --min-replicas N                distributed (elastic) or inference\n"
    "  --max-replicas N                distributed (elastic) or inference\n"
    "  --dry-run                       submit nothing: say where it would run now and whom it\n"
    "                                  would evict, or why it would wait\n"
    "  --count N                       N workloads NAME-0 .. NAME-(N-1) (1 to 1000) in one\n"
    "                                  request, each with ALLOT_BATCH_INDEX (its index) and\n"
    "                                  ALLOT_BATCH_COUNT (N) in its environment\n"
    "  --json                          print the API's answer\n\n"
    "  allot training submit a1 -i runai.jfrog.io/demo/quickstart -g 1 -p team-a\n"
    "  allot training submit t1 -i ubuntu --command -- sleep 100\n"
    "  allot training submit sweep -i ubuntu --count 100 -- sh -c 'run $ALLOT_BATCH_INDEX'\n";

struct submit {
    const struct wl_noun *noun;
    const char *name, *prefix, *image, *project, *memory, *pools, *node_type, *gpu_memory;
    const char *priority, *preemptibility, *workdir, *framework;
    const char *environment, *compute, *template;   /* assets, by name */
    const char *data_sources[MAX_ASSETS], *credentials[MAX_ASSETS];
    int n_data_sources, n_credentials;
    const char *topology, *required, *preferred;   /* spec.topology; NULL: not given */
    long gpus, parallelism, workers, min_replicas, max_replicas;   /* -1: not given */
    long count;                                                     /* 0: not given */
    double portion, cpu;                                            /* -1: not given */
    int command, no_master, json, dry_run;
    const char *env[MAX_ENV];
    int n_env;
    long ports[MAX_PORTS][2];                                       /* container, node */
    int n_ports;
    char **words;                                                   /* after -- */
    int n_words;
};

/* ---- Step 1: the flags ---- */

static int quantity_ok(const char *s)
{
    int64_t mib;

    return quantity_mib(s, &mib) == 0;
}

/* "8080" or "8080:30080" into {container, node}; -1 if not ports. */
static int port_in(const char *s, long *out)
{
    char *end;

    out[0] = strtol(s, &end, 10);
    out[1] = out[0];
    if (end != s && *end == ':') {
        const char *n = end + 1;
        out[1] = strtol(n, &end, 10);
        if (end == n)
            return -1;
    }
    return end == s || *end || out[0] < 1 || out[0] > 65535 || out[1] < 1 || out[1] > 65535
               ? -1 : 0;
}

static const char *framework_name(const char *s)
{
    static const char *const names[] = {"PyTorch", "MPI", "TF", "XGBoost", "JAX", NULL};
    int i;

    if (cli_eq_nocase(s, "tensorflow"))
        return "TF";
    for (i = 0; names[i]; i++)
        if (cli_eq_nocase(s, names[i]))
            return names[i];
    return NULL;
}

static int count_hit(const struct cli_cmd *cmd, const struct opt_hit *h, const char *flag,
                     long min, long max, long *out)
{
    if (cli_parse_int(h->val, min, max, out) != 0)
        return cli_usage_error(cmd, "%s wants a whole number from %ld to %ld", flag, min, max);
    return CLI_OK;
}

static int text_hit(const struct cli_cmd *cmd, const struct opt_hit *h, struct submit *s)
{
    switch (h->id) {
    case O_IMAGE: s->image = h->val; break;
    case O_PROJECT: s->project = h->val; break;
    case O_POOLS: s->pools = h->val; break;
    case O_NODE_TYPE: s->node_type = h->val; break;
    case O_TOPOLOGY: s->topology = h->val; break;
    case O_TOPO_REQUIRED: s->required = h->val; break;
    case O_TOPO_PREFERRED: s->preferred = h->val; break;
    case O_PRIORITY: s->priority = h->val; break;
    case O_WORKDIR: s->workdir = h->val; break;
    case O_PREFIX: s->prefix = h->val; break;
    case O_NAME:
        if (s->name)
            return cli_usage_error(cmd, "give NAME or --name NAME, once");
        s->name = h->val;
        break;
    case O_MEMORY:
        if (!quantity_ok(h->val))
            return cli_usage_error(cmd, "--cpu-memory-request wants a quantity such as 500M, "
                                        "1G or 2Gi");
        s->memory = h->val;
        break;
    case O_GPU_MEMORY:
        if (!quantity_ok(h->val) || strspn(h->val, "0123456789.") == strlen(h->val))
            return cli_usage_error(cmd, "--gpu-memory-request wants a quantity such as 20G or "
                                        "40Gi");
        s->gpu_memory = h->val;
        break;
    case O_PREEMPTIBILITY:
        if (strcmp(h->val, "preemptible") != 0 && strcmp(h->val, "non-preemptible") != 0)
            return cli_usage_error(cmd, "--preemptibility is preemptible or non-preemptible");
        s->preemptibility = h->val;
        break;
    case O_FRAMEWORK:
        s->framework = framework_name(h->val);
        if (!s->framework)
            return cli_usage_error(cmd, "--framework is PyTorch, MPI, TF, XGBoost or JAX");
        break;
    case O_COMPUTE: s->compute = h->val; break;
    case O_TEMPLATE: s->template = h->val; break;
    case O_DATA_SOURCE:
    case O_CREDENTIAL:
        if ((h->id == O_DATA_SOURCE ? s->n_data_sources : s->n_credentials) == MAX_ASSETS)
            return cli_usage_error(cmd, "at most %d data sources and %d credentials",
                                   MAX_ASSETS, MAX_ASSETS);
        if (h->id == O_DATA_SOURCE)
            s->data_sources[s->n_data_sources++] = h->val;
        else
            s->credentials[s->n_credentials++] = h->val;
        break;
    case O_PORT:
        if (s->n_ports == MAX_PORTS || port_in(h->val, s->ports[s->n_ports]) != 0)
            return cli_usage_error(cmd, "--port wants CONTAINER[:NODE] ports (1 to 65535), at "
                                        "most %d of them", MAX_PORTS);
        s->n_ports++;
        break;
    case O_ENV_OR_ASSET: /* --environment NAME=VALUE, or runai's --environment ENV_ASSET */
        if (!strchr(h->val, '=')) {
            if (s->environment || !h->val[0])
                return cli_usage_error(cmd, "--environment names one environment asset (or "
                                            "gives NAME=VALUE)");
            s->environment = h->val;
            break;
        }
        /* fall through */
    case O_ENV:
        if (!strchr(h->val, '=') || h->val[0] == '=')
            return cli_usage_error(cmd, "-e wants NAME=VALUE, not '%s'", h->val);
        if (s->n_env == MAX_ENV)
            return cli_usage_error(cmd, "at most %d environment variables", MAX_ENV);
        s->env[s->n_env++] = h->val;
        break;
    }
    return CLI_OK;
}

static int number_hit(const struct cli_cmd *cmd, const struct opt_hit *h, struct submit *s)
{
    switch (h->id) {
    case O_GPUS:
        if (cli_parse_int(h->val, 0, MAX_GPUS, &s->gpus) != 0)
            return cli_usage_error(cmd, "-g wants a whole number of GPUs (0 to %d); "
                                        "--gpu-portion-request 0.5 asks for half of one",
                                   MAX_GPUS);
        return CLI_OK;
    case O_PORTION:
        if (cli_parse_real(h->val, 0, 1, &s->portion) != 0 || s->portion <= 0)
            return cli_usage_error(cmd, "--gpu-portion-request wants a number above 0 and at "
                                        "most 1, such as 0.5");
        return CLI_OK;
    case O_CPU:
        if (cli_parse_real(h->val, 0, 1e6, &s->cpu) != 0)
            return cli_usage_error(cmd, "--cpu-core-request wants a number of cores, such as "
                                        "0.5");
        return CLI_OK;
    case O_PARALLELISM: return count_hit(cmd, h, "--parallelism", 1, 1024, &s->parallelism);
    case O_WORKERS: return count_hit(cmd, h, "--workers", 1, 1024, &s->workers);
    case O_MIN_REPLICAS: return count_hit(cmd, h, "--min-replicas", 1, 1024, &s->min_replicas);
    case O_MAX_REPLICAS: return count_hit(cmd, h, "--max-replicas", 1, 1024, &s->max_replicas);
    case O_COUNT: return count_hit(cmd, h, "--count", 1, MAX_COUNT, &s->count);
    case O_COMMAND: s->command = 1; return CLI_OK;
    case O_NO_MASTER: s->no_master = 1; return CLI_OK;
    case O_JSON: s->json = 1; return CLI_OK;
    case O_DRY_RUN: s->dry_run = 1; return CLI_OK;
    default: return text_hit(cmd, h, s);
    }
}

/* What a noun does not take. */
static int kind_check(const struct cli_cmd *cmd, const struct submit *s)
{
    int kind = s->noun->kind;

    if (s->workers > 0 && kind != WL_TRAINING && kind != WL_DISTRIBUTED)
        return cli_usage_error(cmd, "--workers is for training and distributed");
    if (s->parallelism > 0 && kind != WL_TRAINING)
        return cli_usage_error(cmd, "--parallelism is for training");
    if ((s->framework || s->no_master) && kind != WL_DISTRIBUTED)
        return cli_usage_error(cmd, "%s is for distributed",
                               s->framework ? "--framework" : "--no-master");
    if ((s->min_replicas > 0 || s->max_replicas > 0) && kind != WL_DISTRIBUTED &&
        kind != WL_INFERENCE)
        return cli_usage_error(cmd, "--min-replicas and --max-replicas are for distributed "
                                    "and inference");
    if (s->min_replicas > 0 && s->max_replicas > 0 && s->min_replicas > s->max_replicas)
        return cli_usage_error(cmd, "--min-replicas is above --max-replicas");
    return CLI_OK;
}

static int shape_check(const struct cli_cmd *cmd, const struct submit *s)
{
    if (!s->name && !s->prefix)
        return cli_usage_error(cmd, "NAME is missing (or give --name-prefix PREFIX)");
    if (s->name && s->prefix)
        return cli_usage_error(cmd, "give NAME or --name-prefix, not both");
    if (s->count > 0 && s->prefix)
        return cli_usage_error(cmd, "--count names the workloads NAME-0 .. NAME-%ld: give NAME, "
                                    "not --name-prefix", s->count - 1);
    if (s->count > 0 && s->dry_run)
        return cli_usage_error(cmd, "--dry-run answers for one workload: drop --count");
    if (!s->image && !s->environment && !s->template)
        return cli_usage_error(cmd, "-i IMAGE is required (or --environment ENV, --template "
                                    "NAME)");
    if (s->gpu_memory && (s->portion > 0 || s->gpus > 1))
        return cli_usage_error(cmd, "--gpu-memory-request asks memory of one GPU: drop "
                                    "--gpu-portion-request and -g");
    if (s->command && s->n_words == 0)
        return cli_usage_error(cmd, "--command needs the command after --, as in "
                                    "--command -- sleep 100");
    if (s->parallelism > 0 && s->workers > 0)
        return cli_usage_error(cmd, "--parallelism and --workers are the same for training");
    return kind_check(cmd, s);
}

static int submit_in(const struct cli_cmd *cmd, const struct opts *o, struct submit *s)
{
    int i, rc = CLI_OK;

    s->gpus = s->parallelism = s->workers = s->min_replicas = s->max_replicas = -1;
    s->portion = s->cpu = -1;
    for (i = 0; rc == CLI_OK && i < o->n_hits; i++)
        rc = number_hit(cmd, &o->hits[i], s);
    if (rc != CLI_OK)
        return rc;
    if (s->name && o->n_pos)
        return cli_usage_error(cmd, "give NAME or --name NAME, not both");
    if (o->n_pos > 1)
        return cli_usage_error(cmd, "unexpected argument '%s' (the container's arguments go "
                                    "after --)", o->pos[1]);
    if (o->n_pos)
        s->name = o->pos[0];
    s->words = o->rest;
    s->n_words = o->n_rest;
    if (!s->framework && s->noun->framework)
        s->framework = s->noun->framework;
    return shape_check(cmd, s);
}

/* ---- Step 3: the request ---- */

static int safe_word(const char *w)
{
    if (!w[0])
        return 0;
    for (; *w; w++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=@%+,-",
                    *w))
            return 0;
    return 1;
}

/* The words joined by spaces, each quoted for a POSIX shell if needed. */
static char *join_words(char **words, int n)
{
    size_t len = 1;
    char *s, *p;
    int i;

    for (i = 0; i < n; i++)
        len += strlen(words[i]) * 4 + 3;
    s = p = malloc(len);
    if (!s)
        return NULL;
    for (i = 0; i < n; i++) {
        const char *w = words[i];
        if (i)
            *p++ = ' ';
        if (safe_word(w)) {
            p += sprintf(p, "%s", w);
            continue;
        }
        *p++ = '\'';
        for (; *w; w++)
            p += *w == '\'' ? sprintf(p, "'\\''") : sprintf(p, "%c", *w);
        *p++ = '\'';
    }
    *p = 0;
    return s;
}

static void set_string(json_t *o, const char *key, const char *value)
{
    if (value)
        json_object_set_new(o, key, json_string(value));
}

static void set_count(json_t *o, const char *key, long value)
{
    if (value >= 0)
        json_object_set_new(o, key, json_integer(value));
}

static json_t *compute_json(const struct submit *s)
{
    json_t *c = json_object();

    set_count(c, "gpuDevicesRequest", s->gpus);
    if (s->portion > 0) {
        json_object_set_new(c, "gpuRequestType", json_string("portion"));
        json_object_set_new(c, "gpuPortionRequest", json_real(s->portion));
    }
    if (s->gpu_memory) {
        json_object_set_new(c, "gpuRequestType", json_string("memory"));
        json_object_set_new(c, "gpuMemoryRequest", json_string(s->gpu_memory));
    }
    if (s->cpu >= 0)
        json_object_set_new(c, "cpuCoreRequest", json_real(s->cpu));
    set_string(c, "cpuMemoryRequest", s->memory);
    return c;
}

static json_t *env_json(const struct submit *s)
{
    json_t *a = json_array();
    int i;

    for (i = 0; i < s->n_env; i++) {
        const char *eq = strchr(s->env[i], '=');
        json_array_append_new(a, json_pack("{s:s%, s:s}", "name", s->env[i],
                                           (size_t)(eq - s->env[i]), "value", eq + 1));
    }
    return a;
}

static json_t *ports_json(const struct submit *s)
{
    json_t *a = json_array();
    int i;

    for (i = 0; i < s->n_ports; i++)
        json_array_append_new(a, json_pack("{s:i, s:i}", "container", (int)s->ports[i][0],
                                           "external", (int)s->ports[i][1]));
    return a;
}

static json_t *pools_json(const char *list)
{
    json_t *a = json_array();

    while (list && *list) {
        size_t n = strcspn(list, ",");
        if (n)
            json_array_append_new(a, json_stringn(list, n));
        list += n + (list[n] == ',');
    }
    return a;
}

static int words_in(const struct submit *s, json_t *spec)
{
    int skip = s->command ? 1 : 0;
    char *args = NULL;

    if (s->n_words == 0)
        return 0;
    if (s->command)
        set_string(spec, "command", s->words[0]);
    if (s->n_words > skip) {
        args = join_words(s->words + skip, s->n_words - skip);
        if (!args)
            return -1;
        set_string(spec, "args", args);
        free(args);
    }
    return 0;
}

static void kind_in(const struct submit *s, json_t *spec, json_t *body)
{
    if (s->noun->kind == WL_TRAINING)
        set_count(spec, "parallelism", s->parallelism > 0 ? s->parallelism : s->workers);
    if (s->noun->kind == WL_DISTRIBUTED) {
        set_string(spec, "distributedFramework", s->framework ? s->framework : "PyTorch");
        set_count(spec, "numWorkers", s->workers);
        set_count(spec, "minReplicas", s->min_replicas);
        set_count(spec, "maxReplicas", s->max_replicas);
        if (s->no_master)
            json_object_set_new(body, "masterSpecSameAsWorker", json_false());
    }
    if (s->noun->kind == WL_INFERENCE && (s->min_replicas > 0 || s->max_replicas > 0)) {
        json_t *as = json_object();
        set_count(as, "minReplicas", s->min_replicas);
        set_count(as, "maxReplicas", s->max_replicas);
        json_object_set_new(spec, "autoscaling", as);
    }
}

static json_t *names_json(const char *const *names, int n)
{
    json_t *a = json_array();
    int i;

    for (i = 0; i < n; i++)
        json_array_append_new(a, json_string(names[i]));
    return a;
}

/* --template and the asset flags: templateId and assets, by name (the
 * server finds the ones the project sees). */
static void assets_in(const struct submit *s, json_t *body)
{
    json_t *a = json_object(), *ds;
    int i;

    set_string(body, "templateId", s->template);
    set_string(a, "environment", s->environment);
    set_string(a, "compute", s->compute);
    if (s->n_data_sources) {
        ds = json_array();
        for (i = 0; i < s->n_data_sources; i++)
            json_array_append_new(ds, json_pack("{s:s}", "name", s->data_sources[i]));
        json_object_set_new(a, "datasources", ds);
    }
    if (s->n_credentials)
        json_object_set_new(a, "credentials", names_json(s->credentials, s->n_credentials));
    if (json_object_size(a))
        json_object_set(body, "assets", a);
    json_decref(a);
}

/* The typed route's body (project by id), or, with project_name, the body
 * of POST /api/v1/workloads/submissions (type, projectName, count). */
static json_t *request_json(const struct submit *s, const char *project_id,
                            const char *project_name)
{
    json_t *spec = json_object(), *body;

    set_string(spec, "image", s->image);
    if (words_in(s, spec) != 0) {
        json_decref(spec);
        return NULL;
    }
    set_string(spec, "workingDir", s->workdir);
    if (s->n_env)
        json_object_set_new(spec, "environmentVariables", env_json(s));
    if (s->n_ports)
        json_object_set_new(spec, "ports", ports_json(s));
    json_object_set_new(spec, "compute", compute_json(s));
    if (s->pools)
        json_object_set_new(spec, "nodePools", pools_json(s->pools));
    set_string(spec, "nodeType", s->node_type);
    if (s->topology || s->required || s->preferred) {
        json_t *t = json_object();
        set_string(t, "name", s->topology);
        set_string(t, "requiredPlacement", s->required);
        set_string(t, "preferredPlacement", s->preferred);
        json_object_set_new(spec, "topology", t);
    }
    set_string(spec, "priorityClass", s->priority);
    set_string(spec, "preemptibility", s->preemptibility);
    body = json_pack("{s:s, s:o}", "name", s->name ? s->name : s->prefix, "spec", spec);
    if (body && project_name) {
        json_object_set_new(body, "type", json_string(s->noun->type));
        json_object_set_new(body, "projectName", json_string(project_name));
    } else if (body) {
        json_object_set_new(body, "projectId", json_string(project_id));
    }
    if (body && s->prefix)
        json_object_set_new(body, "useGivenNameAsPrefix", json_true());
    if (body && s->count > 0)
        json_object_set_new(body, "count", json_integer(s->count));
    if (body) {
        kind_in(s, spec, body);
        assets_in(s, body);
    }
    return body;
}

/* ---- Step 2 ---- */

static void print_submitted(const struct submit *s, const char *project, json_t *made)
{
    json_t *list = json_object_get(made, "workloads");
    size_t n = json_array_size(list);

    if (s->json) /* one workload: its view, as the typed route answers; a batch: the list */
        out_json(stdout, s->count > 0 ? made : json_array_get(list, 0));
    else if (s->count > 0)
        printf("submitted %zu %ss %s .. %s to project %s\n", n, s->noun->noun,
               jstr(json_array_get(list, 0), "name", "?"),
               jstr(json_array_get(list, n ? n - 1 : 0), "name", "?"), project);
    else
        printf("submitted %s %s to project %s\n", s->noun->noun,
               jstr(json_array_get(list, 0), "name", "?"), project);
}

/* --dry-run: the typed route with ?dryRun=true, which takes the project's id. */
static int dry_run(struct client *c, const struct submit *s, const char *project)
{
    json_t *p = NULL, *body = NULL, *made = NULL;
    char route[96];
    int rc = find_project(c, project, &p);

    if (rc == CLI_OK) {
        body = request_json(s, jstr(p, "id", ""), NULL);
        snprintf(route, sizeof(route), "%s?dryRun=true", s->noun->route);
        rc = body ? client_json(c, "POST", route, body, &made) : cli_fail("out of memory");
    }
    if (rc == CLI_OK && s->json)
        out_json(stdout, made);
    else if (rc == CLI_OK)
        rc = whatif_print_dry_run(s->noun->noun, made);
    json_decref(made);
    json_decref(body);
    json_decref(p);
    return rc;
}

static int do_submit(struct client *c, const struct cli_cmd *cmd, const struct submit *s)
{
    const char *project = wl_project(c, s->project);
    json_t *body = NULL, *made = NULL;
    int rc;

    if (!project)
        return cli_usage_error(cmd, "no project: give -p PROJECT, or choose a default with "
                                    "allot project set PROJECT");
    if (s->dry_run)
        return dry_run(c, s, project);
    body = request_json(s, NULL, project);
    rc = body ? client_json(c, "POST", "/api/v1/workloads/submissions", body, &made)
              : cli_fail("out of memory");
    if (rc == CLI_OK && !json_is_array(json_object_get(made, "workloads")))
        rc = cli_fail("the server's answer lists no workloads");
    if (rc == CLI_OK)
        print_submitted(s, project, made);
    json_decref(made);
    json_decref(body);
    return rc;
}

int wl_submit(const struct wl_noun *n, int argc, char **argv)
{
    struct submit *s = calloc(1, sizeof(*s));
    struct client *c = NULL;
    struct wl_cmd w;
    struct opts o;
    int rc;

    if (!s)
        return cli_fail("out of memory");
    s->noun = n;
    wl_cmd_init(&w, n, "submit", submit_usage, submit_help);
    rc = cmd_parse(&w.cmd, submit_opts, argc, argv, &o);
    if (rc == CLI_OK && o.help)
        rc = cli_help(&w.cmd);
    else if (rc == CLI_OK && (rc = submit_in(&w.cmd, &o, s)) == CLI_OK &&
             (rc = client_open(&c, CLIENT_LOGGED_IN)) == CLI_OK)
        rc = do_submit(c, &w.cmd, s);
    client_close(c);
    opts_free(&o);
    free(s);
    return rc;
}
