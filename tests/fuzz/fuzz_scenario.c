/*
 * fuzz_scenario.c: a scenario file, as `allot simulate FILE` reads and
 * runs it: the loader (sim/scenario*.c), the simulated world, the
 * scheduling core's cycles with the world's invariant check after each,
 * and the expect steps.
 *
 * Input: the file's bytes. The target writes them to one temporary file
 * and calls simulate_main() on it, its output sent to /dev/null.
 * Checked: no crash, no sanitizer report, and an exit status of 0, 1 or
 * 2 (passed, an expect failed, a bad file or a step the world cannot
 * carry out). An error "after scheduling pass N" says the core's own
 * decisions broke the world's invariants (a node over capacity, a gang
 * partly placed): a core bug, so the target aborts on it.
 */
#include "fuzz.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "simulate.h"

static char path[64];
static char errpath[80];
static int devnull = -1, saved_out = -1, saved_err = -1;

static void cleanup(void)
{
    unlink(path);
    unlink(errpath);
}

static void setup(void)
{
    snprintf(path, sizeof(path), "/tmp/allot-fuzz-scenario-%ld.json", (long)getpid());
    snprintf(errpath, sizeof(errpath), "%s.err", path);
    devnull = open("/dev/null", O_WRONLY);
    saved_out = dup(1);
    saved_err = dup(2);
    FUZZ_ASSERT(devnull >= 0 && saved_out >= 0 && saved_err >= 0);
    atexit(cleanup);
}

/* Is err simulate's line "FILE: $.steps[N]: after scheduling pass P: ..."?
 * (Read from its start: the file's own text may quote those words.) */
static int core_broke_world(const char *err)
{
    size_t n = strlen(path);
    int step, pass;

    return strncmp(err, path, n) == 0 &&
           sscanf(err + n, ": $.steps[%d]: after scheduling pass %d:", &step, &pass) == 2;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *argv[] = {"simulate", path, NULL};
    char err[4096];
    FILE *fp;
    int rc;
    ssize_t n;
    int efd;

    if (devnull < 0)
        setup();
    fp = fopen(path, "wb");
    FUZZ_ASSERT(fp != NULL);
    FUZZ_ASSERT(fwrite(data, 1, size, fp) == size);
    fclose(fp);
    efd = open(errpath, O_RDWR | O_CREAT | O_TRUNC, 0600);
    FUZZ_ASSERT(efd >= 0);
    fflush(stdout);
    fflush(stderr);
    dup2(devnull, 1);
    dup2(efd, 2);
    rc = simulate_main(2, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    n = pread(efd, err, sizeof(err) - 1, 0);
    close(efd);
    err[n > 0 ? n : 0] = 0;
    FUZZ_ASSERT(rc == 0 || rc == 1 || rc == 2);
    if (core_broke_world(err))
        fprintf(stderr, "%s", err);
    FUZZ_ASSERT(!core_broke_world(err));
    return 0;
}
