/*
 * gpu.c: where the node's GPU figures come from: NVML (nvml.c) when its
 * library opens, else nvidia-smi's CSV output:
 *   nvidia-smi --query-gpu=index,uuid,name,memory.total,memory.used,
 *              utilization.gpu --format=csv,noheader,nounits
 *     one line per device, "0, GPU-8f..., NVIDIA H100 80GB HBM3, 81559, 3, 0";
 *   nvidia-smi --query-compute-apps=gpu_uuid,pid,used_memory
 *              --format=csv,noheader,nounits
 *     one line per process on a device, "GPU-8f..., 4242, 1024".
 * A field nvidia-smi cannot give ("[N/A]", e.g. utilisation under MIG, a
 * process's memory without the right to see it) reads as 0, except
 * utilisation and a process's memory, which read as unknown (-1). nvidia-smi keeps no per-process utilisation, so
 * its processes' sm_util are -1.
 *
 * Invariants:
 *   1. A query gives devices 0..n-1 in order, each with at most
 *      GPU_MAX_PROCS processes, or -1.
 *   2. A query blocks its caller at most the timeout it is given, however
 *      many programs it runs (the agent's lease and heartbeats wait on it).
 */
#include "agent.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QUERY "--query-gpu=index,uuid,name,memory.total,memory.used,utilization.gpu"
#define APPS "--query-compute-apps=gpu_uuid,pid,used_memory"
#define FORMAT "--format=csv,noheader,nounits"
#define SMI_OUT_MAX (256 * 1024)
#define SMI_MIN_MS 50            /* not worth starting nvidia-smi with less */

/* ---- nvidia-smi ---- */

/* Copies field i (0-based) of a comma-separated line, trimmed. */
static void field(const char *line, int i, char *out, size_t len)
{
    const char *p = line;
    size_t n;

    while (i-- > 0 && p)
        p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
    out[0] = 0;
    if (!p)
        return;
    while (*p == ' ')
        p++;
    n = strcspn(p, ",\n");
    while (n > 0 && p[n - 1] == ' ')
        n--;
    if (n >= len)
        n = len - 1;
    memcpy(out, p, n);
    out[n] = 0;
}

/* A non-negative number, or `otherwise` ("[N/A]", empty). */
static int64_t number(const char *s, int64_t otherwise)
{
    char *end;
    long long v = strtoll(s, &end, 10);

    return end == s || v < 0 ? otherwise : v;
}

static int parse_device(const char *line, struct gpu_info *g)
{
    char f[128];

    memset(g, 0, sizeof(*g));
    field(line, 0, f, sizeof(f));
    if (!f[0] || f[0] < '0' || f[0] > '9')
        return -1;
    g->index = (int)number(f, 0);
    field(line, 1, g->uuid, sizeof(g->uuid));
    field(line, 2, g->model, sizeof(g->model));
    field(line, 3, f, sizeof(f));
    g->mem_total_mib = number(f, 0);
    field(line, 4, f, sizeof(f));
    g->mem_used_mib = number(f, 0);
    field(line, 5, f, sizeof(f));
    g->utilization = (int)number(f, -1);
    if (g->utilization > 100)
        g->utilization = 100;
    return 0;
}

/* One compute-apps line onto the device with its UUID. */
static void parse_process(const char *line, struct gpu_info *g, int n)
{
    char uuid[96], f[64];
    struct gpu_proc *p;
    int i;

    field(line, 0, uuid, sizeof(uuid));
    field(line, 1, f, sizeof(f));
    for (i = 0; i < n && (!uuid[0] || strcmp(g[i].uuid, uuid) != 0); i++)
        ;
    if (i == n || number(f, 0) <= 0 || g[i].n_procs >= GPU_MAX_PROCS)
        return;
    p = &g[i].procs[g[i].n_procs++];
    p->pid = (pid_t)number(f, 0);
    field(line, 2, f, sizeof(f));
    p->mem_mib = number(f, -1);
    p->sm_util = -1;
}

/* Runs nvidia-smi with one query; its output, malloc'd, or NULL. */
static char *smi_run(const char *smi, const char *query, int timeout_ms)
{
    char *argv[] = {(char *)smi, (char *)query, FORMAT, NULL};
    char *text = NULL;

    if (proc_run(argv, timeout_ms, &text, SMI_OUT_MAX) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* Both queries together take at most timeout_ms: the processes get what
 * the devices left, and are skipped when too little is left. */
static int smi_query(const char *smi, int timeout_ms, struct gpu_info *out, int max,
                     int processes)
{
    int64_t deadline = agent_now_ms() + timeout_ms;
    char *text = smi_run(smi, QUERY, timeout_ms), *line, *save = NULL;
    int n = 0;

    if (!text)
        return -1;
    for (line = strtok_r(text, "\n", &save); line && n < max; line = strtok_r(NULL, "\n", &save))
        if (parse_device(line, &out[n]) == 0 && out[n].index == n)
            n++;
    free(text);
    if (!processes || deadline - agent_now_ms() < SMI_MIN_MS)
        return n;
    /* processes: a device list without them is still worth reporting */
    text = smi_run(smi, APPS, (int)(deadline - agent_now_ms()));
    save = NULL;
    for (line = text ? strtok_r(text, "\n", &save) : NULL; line;
         line = strtok_r(NULL, "\n", &save))
        parse_process(line, out, n);
    free(text);
    return n;
}

/* ---- the source ---- */

int gpu_open(struct gpu_src *s, const char *nvml, const char *smi, char *why, size_t len)
{
    memset(s, 0, sizeof(*s));
    snprintf(s->smi, sizeof(s->smi), "%s", smi);
    why[0] = 0;
    if (strcmp(nvml, "none") != 0)
        s->nvml = nvml_open(nvml, why, len);
    return s->nvml ? GPU_NVML : GPU_SMI;
}

int gpu_query(struct gpu_src *s, int timeout_ms, struct gpu_info *out, int max, int processes)
{
    if (s->nvml)
        return nvml_query(s->nvml, out, max, processes);
    return smi_query(s->smi, timeout_ms, out, max, processes);
}

void gpu_close(struct gpu_src *s)
{
    nvml_close(s->nvml);
    s->nvml = NULL;
}
