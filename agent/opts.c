/*
 * opts.c: allot-agent's command line (one table of the options, read by
 * common/config_file.c), and reading its token file.
 *
 * Invariant: after a successful parse every field is set and in range: a
 * server URL, a token file, a node name, a work directory and a heartbeat
 * of 100 ms to 60 s.
 */
#include "agent.h"
#include "config_file.h"
#include "servers.h"
#include "allot_version.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(void)
{
    printf("usage: allot-agent --server URL --token-file FILE [options]\n"
           "  --server URL[,URL...]    allotd's address, e.g. http://10.0.0.1:8080; several\n"
           "                           (replicas): the next is tried when one cannot be\n"
           "                           reached or answers 503\n"
           "  --token-file FILE        the agent token (POST /api/v1/agent/tokens); mode 0600\n"
           "  --name NODE              node name (default: the host name)\n"
           "  --node-pool POOL         node pool to join (default: by labels, else default)\n"
           "  --labels k=v,...         node labels (run.ai/type=... sets the node type)\n"
           "  --address HOST           where pods' ports are reached (default: the address\n"
           "                           allotd sees the agent connect from)\n"
           "  --gpus N | auto          declare N GPUs, or ask NVML, else nvidia-smi\n"
           "                           (default auto)\n"
           "  --work-dir DIR           pods' directories and logs (default /var/lib/allot-agent)\n"
           "  --heartbeat-ms N         heartbeat period (default 2000); at most a third of\n"
           "                           the lease allotd grants: pods stop when no heartbeat\n"
           "                           is answered for that long\n"
           "  --runtime auto|docker|podman|none\n"
           "                           how to run workloads that name an image (default auto)\n"
           "  --nvml PATH | none       NVML's library (default libnvidia-ml.so.1, found\n"
           "                           the way the dynamic loader finds libraries);\n"
           "                           none: nvidia-smi only\n"
           "  --nvidia-smi PATH        the nvidia-smi to run without NVML (default: from PATH)\n"
           "  --version                print the version and exit\n");
}

/* --gpus N, or auto: ask NVML, else nvidia-smi. */
static int set_gpus(void *target, const char *v)
{
    struct agent_opts *o = target;

    if (strcmp(v, "auto") == 0) {
        o->gpus = -1;
        return 0;
    }
    return cf_set_int(v, 0, AGENT_MAX_GPUS, &o->gpus);
}

static int set_runtime(void *target, const char *v)
{
    struct agent_opts *o = target;

    if (strcmp(v, "auto") && strcmp(v, "docker") && strcmp(v, "podman") && strcmp(v, "none"))
        return -1;
    return cf_set_str(v, o->runtime, sizeof(o->runtime));
}

static int refuse_orphan_timeout(void *target, const char *v)
{
    (void)target, (void)v;
    fprintf(stderr, "allot-agent: --orphan-timeout-ms is no longer an option: pods stop"
            " when the lease allotd grants ends (allotd --agent-lease-ms)\n");
    return -1;
}

#define O struct agent_opts
/* allot-agent's options, each "--name VALUE" on the command line. */
static const struct cf_option options[] = {
    CF_STR_ROW(O, "server", server, 0),
    CF_STR_ROW(O, "token-file", token_file, 0),
    CF_STR_ROW(O, "name", name, 0),
    CF_STR_ROW(O, "node-pool", pool, 0),
    CF_STR_ROW(O, "labels", labels, 0),
    CF_STR_ROW(O, "address", address, 0),
    CF_PARSE_ROW("gpus", set_gpus),
    CF_STR_ROW(O, "work-dir", work_dir, 0),
    CF_INT_ROW(O, "heartbeat-ms", heartbeat_ms, 2000, 100, 60000),
    CF_PARSE_ROW("orphan-timeout-ms", refuse_orphan_timeout),
    CF_PARSE_ROW("runtime", set_runtime),
    CF_STR_ROW(O, "nvidia-smi", nvidia_smi, 0),
    CF_STR_ROW(O, "nvml", nvml, 0),
};
#undef O

/* Applies one option; key with its dashes. */
static int apply(struct agent_opts *o, const char *key, const char *v)
{
    if (strncmp(key, "--", 2) != 0)
        return -1;
    return cf_apply(options, sizeof(options) / sizeof(options[0]), o, key + 2, v);
}

static int finish(struct agent_opts *o)
{
    struct servers s;
    char why[256];

    if (!o->server[0] || !o->token_file[0]) {
        fprintf(stderr, "allot-agent: --server and --token-file are required (see --help)\n");
        return -1;
    }
    if (servers_parse(o->server, &s, why, sizeof(why)) != 0) {
        fprintf(stderr, "allot-agent: --server %s\n", why);
        return -1;
    }
    if (!o->name[0] && gethostname(o->name, sizeof(o->name) - 1) != 0) {
        fprintf(stderr, "allot-agent: no host name: give --name\n");
        return -1;
    }
    return 0;
}

int agent_opts_parse(struct agent_opts *o, int argc, char **argv)
{
    int i;

    memset(o, 0, sizeof(*o));
    cf_defaults(options, sizeof(options) / sizeof(options[0]), o);
    o->gpus = -1;
    snprintf(o->work_dir, sizeof(o->work_dir), "/var/lib/allot-agent");
    snprintf(o->runtime, sizeof(o->runtime), "auto");
    snprintf(o->nvidia_smi, sizeof(o->nvidia_smi), "nvidia-smi");
    snprintf(o->nvml, sizeof(o->nvml), "libnvidia-ml.so.1");
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage();
            return 1;
        }
        if (strcmp(argv[i], "--version") == 0) {
            printf("allot-agent %s\n", ALLOT_VERSION_STRING);
            return 1;
        }
        if (i + 1 >= argc || apply(o, argv[i], argv[i + 1]) != 0) {
            fprintf(stderr, "allot-agent: bad option %s (see --help)\n", argv[i]);
            return -1;
        }
        i++;
    }
    return finish(o);
}

int agent_read_token(const char *path, char *out, size_t len)
{
    struct stat sb;
    char *text;
    size_t n;

    if (stat(path, &sb) != 0) {
        fprintf(stderr, "allot-agent: cannot read the token file %s\n", path);
        return -1;
    }
    if (sb.st_mode & (S_IRWXG | S_IRWXO)) {
        fprintf(stderr, "allot-agent: the token file %s must have mode 0600\n", path);
        return -1;
    }
    text = file_read(path, 4096);
    if (!text) {
        fprintf(stderr, "allot-agent: cannot read the token file %s\n", path);
        return -1;
    }
    n = strcspn(text, " \t\r\n");
    if (n == 0 || n >= len) {
        fprintf(stderr, "allot-agent: the token file %s holds no token\n", path);
        free(text);
        return -1;
    }
    memcpy(out, text, n);
    out[n] = 0;
    memset(text, 0, strlen(text));
    free(text);
    return 0;
}
