/*
 * burn.cu: the GPU workload of tests/gpu/run.sh. It allocates MIB MiB on
 * the first device CUDA gives it (the first of CUDA_VISIBLE_DEVICES) and
 *   busy SECONDS MIB   keeps that device busy for SECONDS with a kernel
 *                      that spins over part of the memory, back to back;
 *   hold SECONDS MIB   only holds the memory for SECONDS, with no kernel.
 * It prints what it allocated; on SIGTERM it prints "term", frees the
 * memory and exits 0; at the end it prints "done" and exits 0. Any CUDA
 * error: a message and exit 2.
 *
 *   nvcc -O2 -o burn burn.cu
 */
#include <cuda_runtime.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SPIN_FLOATS (16L * 1024 * 1024) /* the part of the memory each kernel spins over */
#define SPIN_ITERS 2000

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

__global__ void spin(float *p, long n, int iters)
{
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    float x;
    int k;

    if (i >= n)
        return;
    x = p[i];
    for (k = 0; k < iters; k++)
        x = x * 1.000001f + 0.5f;
    p[i] = x;
}

static int check(cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return 0;
    fprintf(stderr, "burn: %s: %s\n", what, cudaGetErrorString(e));
    return -1;
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    float *p = NULL;
    long mib, n;
    double seconds, start;
    int busy, device = -1;

    if (argc != 4 || (strcmp(argv[1], "busy") != 0 && strcmp(argv[1], "hold") != 0)) {
        fprintf(stderr, "usage: burn busy|hold SECONDS MIB\n");
        return 2;
    }
    busy = strcmp(argv[1], "busy") == 0;
    seconds = atof(argv[2]);
    mib = atol(argv[3]);
    signal(SIGTERM, on_term);
    if (check(cudaMalloc((void **)&p, (size_t)mib << 20), "cudaMalloc") ||
        check(cudaMemset(p, 0, (size_t)mib << 20), "cudaMemset") ||
        check(cudaGetDevice(&device), "cudaGetDevice"))
        return 2;
    printf("allocated %ld MiB on CUDA device %d (CUDA_VISIBLE_DEVICES=%s), %s for %.0f s\n", mib,
           device, visible ? visible : "", busy ? "busy" : "holding it", seconds);
    fflush(stdout);
    n = ((long)mib << 20) / (long)sizeof(float);
    if (n > SPIN_FLOATS)
        n = SPIN_FLOATS;
    start = now_s();
    while (!stop && now_s() - start < seconds) {
        if (busy) {
            spin<<<(unsigned)((n + 255) / 256), 256>>>(p, n, SPIN_ITERS);
            if (check(cudaDeviceSynchronize(), "kernel"))
                return 2;
        } else {
            usleep(100000);
        }
    }
    printf("%s\n", stop ? "term" : "done");
    fflush(stdout);
    cudaFree(p);
    return 0;
}
