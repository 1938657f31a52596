/*
 * gpu.c: the node's GPUs, from nvidia-smi's CSV output:
 *   nvidia-smi --query-gpu=index,uuid,name,memory.total,memory.used,
 *              utilization.gpu --format=csv,noheader,nounits
 * one line per device, "0, GPU-8f..., NVIDIA H100 80GB HBM3, 81559, 3, 0".
 * A field nvidia-smi cannot give ("[N/A]", e.g. utilisation under MIG)
 * reads as 0.
 */
#include "agent.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QUERY "--query-gpu=index,uuid,name,memory.total,memory.used,utilization.gpu"

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

static int64_t number(const char *s)
{
    char *end;
    long long v = strtoll(s, &end, 10);

    return end == s || v < 0 ? 0 : v;
}

static int parse_line(const char *line, struct gpu_info *g)
{
    char f[128];

    memset(g, 0, sizeof(*g));
    field(line, 0, f, sizeof(f));
    if (!f[0] || f[0] < '0' || f[0] > '9')
        return -1;
    g->index = (int)number(f);
    field(line, 1, g->uuid, sizeof(g->uuid));
    field(line, 2, g->model, sizeof(g->model));
    field(line, 3, f, sizeof(f));
    g->mem_total_mib = number(f);
    field(line, 4, f, sizeof(f));
    g->mem_used_mib = number(f);
    field(line, 5, f, sizeof(f));
    g->utilization = (int)number(f);
    if (g->utilization > 100)
        g->utilization = 100;
    return 0;
}

int gpu_query(const char *nvidia_smi, int timeout_ms, struct gpu_info *out, int max)
{
    char *argv[] = {(char *)nvidia_smi, QUERY, "--format=csv,noheader,nounits", NULL};
    char *text = NULL, *line, *save = NULL;
    int n = 0;

    if (proc_run(argv, timeout_ms, &text, 256 * 1024) != 0) {
        free(text);
        return -1;
    }
    for (line = strtok_r(text, "\n", &save); line && n < max; line = strtok_r(NULL, "\n", &save))
        if (parse_line(line, &out[n]) == 0 && out[n].index == n)
            n++;
    free(text);
    return n;
}
