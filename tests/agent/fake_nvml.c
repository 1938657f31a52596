/*
 * fake_nvml.c: a stand-in for NVIDIA's libnvidia-ml.so.1, built by the
 * test suite under that name, so that allot-agent's NVML path runs on
 * machines without a GPU (`allot-agent --nvml <build>/tests/agent/
 * libnvidia-ml.so.1`). It implements the calls agent/nvml.c resolves,
 * with NVML's documented ABI, and reads what it reports from the file
 * named by ALLOT_FAKE_NVML, again at every nvmlDeviceGetCount (the start
 * of each of the agent's queries), so a test changes the figures by
 * rewriting the file. One line per fact:
 *
 *   gpu INDEX UUID TOTAL_MIB USED_MIB UTIL MODEL WORDS...
 *   proc INDEX PID MEM_MIB|- SM_UTIL|-     a compute process on device INDEX
 *                                          ("-": NVML cannot say)
 *   noprocutil INDEX                       the device keeps no per-process
 *                                          samples (NOT_SUPPORTED)
 *   noutil INDEX                           the device gives no utilisation
 *                                          (NOT_SUPPORTED, as under MIG)
 *   fail init                              nvmlInit fails (DRIVER_NOT_LOADED)
 *
 * Devices must be listed in index order, 0 first. A missing file is a
 * machine with no GPUs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define MAX_DEVICES 16
#define MAX_PROCS 32

typedef int nvmlReturn_t;
struct fake_device;
typedef struct fake_device *nvmlDevice_t;

typedef struct {
    unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct {
    unsigned int gpu, memory;
} nvmlUtilization_t;

typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;

typedef struct {
    unsigned int pid;
    unsigned long long timeStamp;
    unsigned int smUtil, memUtil, encUtil, decUtil;
} nvmlProcessUtilizationSample_t;

enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
};

struct fake_proc {
    unsigned int pid;
    long long mem_mib;            /* -1: not available */
    int sm;                       /* -1: no sample */
};

struct fake_device {
    char uuid[96], model[96];
    unsigned long long total_mib, used_mib;
    unsigned int util;
    int no_util, no_proc_util;
    int n_procs;
    struct fake_proc procs[MAX_PROCS];
};

static struct fake_device devices[MAX_DEVICES];
static unsigned int n_devices;

/* NVML's exports (declared here for -Wmissing-prototypes). */
nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlShutdown(void);
const char *nvmlErrorString(nvmlReturn_t rc);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length);
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length);
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory);
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *u);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *count,
                                                     nvmlProcessInfo_t *infos);
nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
                                             nvmlProcessUtilizationSample_t *samples,
                                             unsigned int *count,
                                             unsigned long long last_seen);

static int parse_gpu(char *rest)
{
    struct fake_device *d;
    unsigned int index;
    int used = 0;

    if (n_devices >= MAX_DEVICES)
        return -1;
    d = &devices[n_devices];
    memset(d, 0, sizeof(*d));
    if (sscanf(rest, "%u %95s %llu %llu %u %n", &index, d->uuid, &d->total_mib, &d->used_mib,
               &d->util, &used) < 5 || index != n_devices)
        return -1;
    snprintf(d->model, sizeof(d->model), "%s", rest + used);
    d->model[strcspn(d->model, "\n")] = 0;
    n_devices++;
    return 0;
}

static int parse_proc(const char *rest)
{
    char mem[32], sm[32];
    unsigned int index, pid;
    struct fake_proc *p;

    if (sscanf(rest, "%u %u %31s %31s", &index, &pid, mem, sm) != 4 || index >= n_devices ||
        devices[index].n_procs >= MAX_PROCS)
        return -1;
    p = &devices[index].procs[devices[index].n_procs++];
    p->pid = pid;
    p->mem_mib = strcmp(mem, "-") == 0 ? -1 : atoll(mem);
    p->sm = strcmp(sm, "-") == 0 ? -1 : atoi(sm);
    return 0;
}

/* Reads the file; 1 if it asks init to fail. */
static int load(void)
{
    const char *path = getenv("ALLOT_FAKE_NVML");
    char line[512];
    unsigned int index;
    int fail = 0;
    FILE *f;

    n_devices = 0;
    f = path ? fopen(path, "r") : NULL;
    while (f && fgets(line, sizeof(line), f)) {
        if (strncmp(line, "gpu ", 4) == 0)
            parse_gpu(line + 4);
        else if (strncmp(line, "proc ", 5) == 0)
            parse_proc(line + 5);
        else if (sscanf(line, "noprocutil %u", &index) == 1 && index < n_devices)
            devices[index].no_proc_util = 1;
        else if (sscanf(line, "noutil %u", &index) == 1 && index < n_devices)
            devices[index].no_util = 1;
        else if (strncmp(line, "fail init", 9) == 0)
            fail = 1;
    }
    if (f)
        fclose(f);
    return fail;
}

nvmlReturn_t nvmlInit_v2(void)
{
    return load() ? NVML_ERROR_DRIVER_NOT_LOADED : NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void)
{
    return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t rc)
{
    return rc == NVML_ERROR_DRIVER_NOT_LOADED ? "Driver Not Loaded" : "Fake NVML error";
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
    load();
    *count = n_devices;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    if (index >= n_devices)
        return NVML_ERROR_INVALID_ARGUMENT;
    *device = &devices[index];
    return NVML_SUCCESS;
}

static nvmlReturn_t copy_text(const char *s, char *out, unsigned int length)
{
    if (strlen(s) >= length)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(out, s, strlen(s) + 1);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    return copy_text(device->model, name, length);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    return copy_text(device->uuid, uuid, length);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
    memory->total = device->total_mib << 20;
    memory->used = device->used_mib << 20;
    memory->free = memory->total - memory->used;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *u)
{
    if (device->no_util)
        return NVML_ERROR_NOT_SUPPORTED;
    u->gpu = device->util;
    u->memory = 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *count,
                                                     nvmlProcessInfo_t *infos)
{
    int i;

    if (*count < (unsigned int)device->n_procs) {
        *count = (unsigned int)device->n_procs;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (i = 0; i < device->n_procs; i++) {
        memset(&infos[i], 0, sizeof(infos[i]));
        infos[i].pid = device->procs[i].pid;
        infos[i].usedGpuMemory = device->procs[i].mem_mib < 0
                                     ? ~0ULL
                                     : (unsigned long long)device->procs[i].mem_mib << 20;
    }
    *count = (unsigned int)device->n_procs;
    return NVML_SUCCESS;
}

/* One sample per process with a known SM figure, stamped now. */
nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
                                             nvmlProcessUtilizationSample_t *samples,
                                             unsigned int *count, unsigned long long last_seen)
{
    struct timeval tv;
    unsigned long long now;
    unsigned int n = 0;
    int i;

    if (device->no_proc_util)
        return NVML_ERROR_NOT_SUPPORTED;
    gettimeofday(&tv, NULL);
    now = (unsigned long long)tv.tv_sec * 1000000ULL + (unsigned long long)tv.tv_usec;
    for (i = 0; i < device->n_procs; i++)
        n += device->procs[i].sm >= 0;
    if (n == 0 || now <= last_seen)
        return NVML_ERROR_NOT_FOUND;
    if (!samples || *count < n) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    n = 0;
    for (i = 0; i < device->n_procs; i++) {
        if (device->procs[i].sm < 0)
            continue;
        memset(&samples[n], 0, sizeof(samples[n]));
        samples[n].pid = device->procs[i].pid;
        samples[n].timeStamp = now;
        samples[n].smUtil = (unsigned int)device->procs[i].sm;
        n++;
    }
    *count = n;
    return NVML_SUCCESS;
}
