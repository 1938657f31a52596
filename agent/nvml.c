/*
 * nvml.c: the node's GPUs through the NVIDIA Management Library,
 * libnvidia-ml.so.1, opened with dlopen() at run time: allot-agent has no
 * build-time dependency on NVIDIA's headers or libraries, and runs where
 * the library is missing (nvml_open() fails and gpu.c falls back to
 * nvidia-smi).
 *
 * The few types and functions used are declared here from NVML's
 * documented C ABI (nvml.h):
 *   nvmlReturn_t            an int; 0 is NVML_SUCCESS
 *   nvmlDevice_t            an opaque pointer
 *   nvmlMemory_t            {total, free, used} in bytes (unsigned long long)
 *   nvmlUtilization_t       {gpu, memory} in percent (unsigned int)
 *   nvmlProcessInfo_v1_t    {pid, usedGpuMemory}
 *   nvmlProcessInfo_t       {pid, usedGpuMemory, gpuInstanceId, computeInstanceId}
 *                           (what the _v2 and _v3 process calls fill)
 *   nvmlProcessUtilizationSample_t
 *                           {pid, timeStamp (µs), smUtil, memUtil, encUtil, decUtil}
 * usedGpuMemory is NVML_VALUE_NOT_AVAILABLE (all ones) where the driver
 * cannot say (e.g. without the right to see another user's process).
 *
 * One query, nvml_query(), per device index i (NVML numbers devices in
 * PCI bus order, the order CUDA uses with CUDA_DEVICE_ORDER=PCI_BUS_ID):
 *   Step 1: name, UUID, memory and utilisation; utilisation the device
 *           does not give (under MIG) is unknown, -1;
 *   Step 2: the compute processes with the memory each holds (the newest
 *           of the _v3, _v2 and unversioned calls the library has);
 *   Step 3: each process's SM utilisation since the previous query
 *           (nvmlDeviceGetProcessUtilization), averaged over its samples
 *           (none since then: 0); where the device does not keep them,
 *           the processes' sm_util stay -1 and util_per_process is 0.
 *
 * Invariant: every function pointer is checked before use; the required
 * ones (init, count, handle, name, memory) are resolved by nvml_open(),
 * the optional ones may be NULL.
 */
#include "agent.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- NVML's ABI, as documented ---- */
typedef int nvml_return_t;
typedef struct nvml_device_st *nvml_device_t;

#define NVML_SUCCESS 0
#define NVML_ERROR_NOT_FOUND 6
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_VALUE_NOT_AVAILABLE (~0ULL)
#define NVML_NAME_LEN 96   /* NVML_DEVICE_NAME_V2_BUFFER_SIZE */
#define NVML_UUID_LEN 96   /* NVML_DEVICE_UUID_V2_BUFFER_SIZE */

struct nvml_memory {
    unsigned long long total, free, used;
};

struct nvml_utilization {
    unsigned int gpu, memory;
};

struct nvml_process_v1 {
    unsigned int pid;
    unsigned long long used_gpu_memory;
};

struct nvml_process_v2 {
    unsigned int pid;
    unsigned long long used_gpu_memory;
    unsigned int gpu_instance_id, compute_instance_id;
};

struct nvml_process_sample {
    unsigned int pid;
    unsigned long long time_stamp;
    unsigned int sm_util, mem_util, enc_util, dec_util;
};

#define MAX_SAMPLES 512

struct nvml {
    void *lib;
    nvml_return_t (*init)(void);
    nvml_return_t (*shutdown)(void);
    const char *(*error_string)(nvml_return_t);
    nvml_return_t (*count)(unsigned int *);
    nvml_return_t (*handle)(unsigned int, nvml_device_t *);
    nvml_return_t (*name)(nvml_device_t, char *, unsigned int);
    nvml_return_t (*uuid)(nvml_device_t, char *, unsigned int);
    nvml_return_t (*memory)(nvml_device_t, struct nvml_memory *);
    nvml_return_t (*utilization)(nvml_device_t, struct nvml_utilization *);
    nvml_return_t (*procs_v2)(nvml_device_t, unsigned int *, struct nvml_process_v2 *);
    nvml_return_t (*procs_v1)(nvml_device_t, unsigned int *, struct nvml_process_v1 *);
    nvml_return_t (*proc_util)(nvml_device_t, struct nvml_process_sample *, unsigned int *,
                               unsigned long long);
    unsigned long long last_seen[AGENT_MAX_GPUS]; /* newest sample read, per device */
};

/* dlsym's void * to a function pointer, the way POSIX allows. */
static void resolve(void *lib, const char *name, void *fn_ptr)
{
    void *sym = dlsym(lib, name);

    memcpy(fn_ptr, &sym, sizeof(sym));
}

/* The newest of several versions of one call. */
static void resolve_first(void *lib, const char *const *names, void *fn_ptr)
{
    for (; *names; names++) {
        resolve(lib, *names, fn_ptr);
        if (*(void **)fn_ptr)
            return;
    }
}

static void resolve_all(struct nvml *n)
{
    static const char *const init[] = {"nvmlInit_v2", "nvmlInit", NULL};
    static const char *const count[] = {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount", NULL};
    static const char *const handle[] = {"nvmlDeviceGetHandleByIndex_v2",
                                         "nvmlDeviceGetHandleByIndex", NULL};
    static const char *const procs[] = {"nvmlDeviceGetComputeRunningProcesses_v3",
                                        "nvmlDeviceGetComputeRunningProcesses_v2", NULL};

    resolve_first(n->lib, init, &n->init);
    resolve_first(n->lib, count, &n->count);
    resolve_first(n->lib, handle, &n->handle);
    resolve_first(n->lib, procs, &n->procs_v2);
    resolve(n->lib, "nvmlShutdown", &n->shutdown);
    resolve(n->lib, "nvmlErrorString", &n->error_string);
    resolve(n->lib, "nvmlDeviceGetName", &n->name);
    resolve(n->lib, "nvmlDeviceGetUUID", &n->uuid);
    resolve(n->lib, "nvmlDeviceGetMemoryInfo", &n->memory);
    resolve(n->lib, "nvmlDeviceGetUtilizationRates", &n->utilization);
    resolve(n->lib, "nvmlDeviceGetComputeRunningProcesses", &n->procs_v1);
    resolve(n->lib, "nvmlDeviceGetProcessUtilization", &n->proc_util);
}

struct nvml *nvml_open(const char *path, char *why, size_t len)
{
    struct nvml *n = calloc(1, sizeof(*n));
    nvml_return_t rc;

    if (!n) {
        snprintf(why, len, "out of memory");
        return NULL;
    }
    n->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!n->lib) {
        snprintf(why, len, "%s", dlerror());
        free(n);
        return NULL;
    }
    resolve_all(n);
    if (!n->init || !n->count || !n->handle || !n->name || !n->memory) {
        snprintf(why, len, "%s lacks NVML's device calls", path);
        goto fail;
    }
    rc = n->init();
    if (rc != NVML_SUCCESS) {
        snprintf(why, len, "nvmlInit failed: %s (%d)",
                 n->error_string ? n->error_string(rc) : "error", rc);
        goto fail;
    }
    return n;
fail:
    dlclose(n->lib);
    free(n);
    return NULL;
}

void nvml_close(struct nvml *n)
{
    if (!n)
        return;
    if (n->shutdown)
        n->shutdown();
    dlclose(n->lib);
    free(n);
}

/* ---- one query ---- */

static int64_t mib(unsigned long long bytes)
{
    return (int64_t)(bytes / (1024ULL * 1024ULL));
}

/* Step 1 */
static int device_facts(struct nvml *n, nvml_device_t d, struct gpu_info *g)
{
    char text[NVML_NAME_LEN > NVML_UUID_LEN ? NVML_NAME_LEN : NVML_UUID_LEN];
    struct nvml_memory m;
    struct nvml_utilization u;

    if (n->name(d, text, sizeof(text)) != NVML_SUCCESS)
        snprintf(text, sizeof(text), "NVIDIA GPU");
    snprintf(g->model, sizeof(g->model), "%.63s", text);
    if (n->uuid && n->uuid(d, text, sizeof(text)) == NVML_SUCCESS)
        snprintf(g->uuid, sizeof(g->uuid), "%.63s", text);
    if (n->memory(d, &m) != NVML_SUCCESS)
        return -1;
    g->mem_total_mib = mib(m.total);
    g->mem_used_mib = mib(m.used);
    g->utilization = -1;
    if (n->utilization && n->utilization(d, &u) == NVML_SUCCESS)
        g->utilization = u.gpu > 100 ? 100 : (int)u.gpu;
    return 0;
}

static void add_process(struct gpu_info *g, unsigned int pid, unsigned long long bytes)
{
    struct gpu_proc *p;

    if (g->n_procs >= GPU_MAX_PROCS)
        return;
    p = &g->procs[g->n_procs++];
    p->pid = (pid_t)pid;
    p->mem_mib = bytes == NVML_VALUE_NOT_AVAILABLE ? -1 : mib(bytes);
    p->sm_util = -1;
}

/* Step 2 */
static void device_processes(struct nvml *n, nvml_device_t d, struct gpu_info *g)
{
    unsigned int count = GPU_MAX_PROCS, i;

    if (n->procs_v2) {
        struct nvml_process_v2 v[GPU_MAX_PROCS];
        if (n->procs_v2(d, &count, v) == NVML_SUCCESS)
            for (i = 0; i < count && i < GPU_MAX_PROCS; i++)
                add_process(g, v[i].pid, v[i].used_gpu_memory);
    } else if (n->procs_v1) {
        struct nvml_process_v1 v[GPU_MAX_PROCS];
        if (n->procs_v1(d, &count, v) == NVML_SUCCESS)
            for (i = 0; i < count && i < GPU_MAX_PROCS; i++)
                add_process(g, v[i].pid, v[i].used_gpu_memory);
    }
}

/* Step 3: the samples newer than the last ones read, averaged per pid. */
static void process_utilization(struct nvml *n, nvml_device_t d, int index, struct gpu_info *g)
{
    struct nvml_process_sample *s;
    unsigned int count = 0, i;
    unsigned long long newest;
    nvml_return_t rc;
    int k;

    if (!n->proc_util)
        return;
    rc = n->proc_util(d, NULL, &count, n->last_seen[index]);
    if (rc == NVML_ERROR_NOT_FOUND || (rc == NVML_SUCCESS && count == 0)) {
        /* no sample since the last query: no process ran a kernel */
        g->util_per_process = 1;
        for (k = 0; k < g->n_procs; k++)
            g->procs[k].sm_util = 0;
        return;
    }
    if (rc != NVML_SUCCESS && rc != NVML_ERROR_INSUFFICIENT_SIZE)
        return; /* not supported here: sm_util stays -1 */
    if (count > MAX_SAMPLES)
        count = MAX_SAMPLES;
    s = calloc(count, sizeof(*s));
    if (!s || n->proc_util(d, s, &count, n->last_seen[index]) != NVML_SUCCESS) {
        free(s);
        return;
    }
    newest = n->last_seen[index];
    for (k = 0; k < g->n_procs; k++) {
        unsigned int sum = 0, seen = 0;
        for (i = 0; i < count; i++)
            if (s[i].pid == (unsigned int)g->procs[k].pid) {
                sum += s[i].sm_util > 100 ? 100 : s[i].sm_util;
                seen++;
            }
        g->procs[k].sm_util = seen ? (int)(sum / seen) : 0;
    }
    for (i = 0; i < count; i++)
        if (s[i].time_stamp > newest)
            newest = s[i].time_stamp;
    n->last_seen[index] = newest;
    g->util_per_process = 1;
    free(s);
}

int nvml_query(struct nvml *n, struct gpu_info *out, int max, int processes)
{
    unsigned int count = 0, i;
    nvml_device_t d;

    if (n->count(&count) != NVML_SUCCESS)
        return -1;
    for (i = 0; i < count && (int)i < max && i < AGENT_MAX_GPUS; i++) {
        struct gpu_info *g = &out[i];
        memset(g, 0, sizeof(*g));
        g->index = (int)i;
        if (n->handle(i, &d) != NVML_SUCCESS || device_facts(n, d, g) != 0)
            return -1;
        if (!processes)
            continue;
        device_processes(n, d, g);
        process_utilization(n, d, (int)i, g);
    }
    return (int)i;
}
