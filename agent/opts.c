/*
 * opts.c: allot-agent's command line, and reading its token file.
 *
 * Invariant: after a successful parse every field is set and in range: a
 * server URL, a token file, a node name, a work directory and a heartbeat
 * of 100 ms to 60 s.
 */
#include "agent.h"
#include "servers.h"
#include "allot_version.h"

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

static int set_int(const char *v, int min, int max, int *out)
{
    char *end;
    long x = strtol(v, &end, 10);

    if (end == v || *end || x < min || x > max)
        return -1;
    *out = (int)x;
    return 0;
}

static int set_str(const char *v, char *out, size_t len)
{
    if (strlen(v) >= len)
        return -1;
    memcpy(out, v, strlen(v) + 1);
    return 0;
}

static int apply(struct agent_opts *o, const char *key, const char *v)
{
    if (strcmp(key, "--server") == 0)
        return set_str(v, o->server, sizeof(o->server));
    if (strcmp(key, "--token-file") == 0)
        return set_str(v, o->token_file, sizeof(o->token_file));
    if (strcmp(key, "--name") == 0)
        return set_str(v, o->name, sizeof(o->name));
    if (strcmp(key, "--node-pool") == 0)
        return set_str(v, o->pool, sizeof(o->pool));
    if (strcmp(key, "--labels") == 0)
        return set_str(v, o->labels, sizeof(o->labels));
    if (strcmp(key, "--address") == 0)
        return set_str(v, o->address, sizeof(o->address));
    if (strcmp(key, "--gpus") == 0)
        return strcmp(v, "auto") == 0 ? (o->gpus = -1, 0) : set_int(v, 0, AGENT_MAX_GPUS, &o->gpus);
    if (strcmp(key, "--work-dir") == 0)
        return set_str(v, o->work_dir, sizeof(o->work_dir));
    if (strcmp(key, "--heartbeat-ms") == 0)
        return set_int(v, 100, 60000, &o->heartbeat_ms);
    if (strcmp(key, "--orphan-timeout-ms") == 0) {
        fprintf(stderr, "allot-agent: --orphan-timeout-ms is no longer an option: pods stop"
                " when the lease allotd grants ends (allotd --agent-lease-ms)\n");
        return -1;
    }
    if (strcmp(key, "--runtime") == 0)
        return strcmp(v, "auto") && strcmp(v, "docker") && strcmp(v, "podman") &&
                       strcmp(v, "none")
                   ? -1
                   : set_str(v, o->runtime, sizeof(o->runtime));
    if (strcmp(key, "--nvidia-smi") == 0)
        return set_str(v, o->nvidia_smi, sizeof(o->nvidia_smi));
    if (strcmp(key, "--nvml") == 0)
        return set_str(v, o->nvml, sizeof(o->nvml));
    return -1;
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
    o->gpus = -1;
    o->heartbeat_ms = 2000;
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
