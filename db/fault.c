/*
 * fault.c: fault points for the crash tests. Not for production use.
 *
 * ALLOT_FAULT=POINT:N makes the process kill itself with SIGKILL (as
 * kill -9 would, with no clean-up and no flush of anything) the N-th time
 * it passes POINT, after writing one line to stderr that names it. The
 * points are fixed places in the storage code:
 *
 *   commit     a group commit has returned (its writes are on disk) and
 *              none of its callers has been told yet: a crash here must
 *              lose no write, and no client has an answer;
 *   cycle-pod  a scheduling cycle's transaction has written the pods of
 *              one more workload it placed, and has not committed: a
 *              crash here must leave none of the cycle's decisions.
 *
 * Without ALLOT_FAULT (or with an unknown point) nothing happens; the
 * cost of a pass is one load of a flag. The variable is read once, by the
 * first db_open().
 *
 * Invariant: the process dies at the N-th pass exactly, counted across
 * threads.
 */
#include "db_int.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const points[] = {"commit", "cycle-pod"};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char armed[16];           /* the point named by ALLOT_FAULT; "" none */
static long at_pass;             /* which pass kills */
static atomic_long passes;

static void arm(void)
{
    const char *v = getenv("ALLOT_FAULT");
    const char *colon = v ? strchr(v, ':') : NULL;
    size_t i, n;
    char *end;
    long k;

    if (!v || !*v)
        return;
    n = colon ? (size_t)(colon - v) : 0;
    k = colon ? strtol(colon + 1, &end, 10) : 0;
    for (i = 0; i < sizeof(points) / sizeof(points[0]); i++)
        if (n == strlen(points[i]) && strncmp(v, points[i], n) == 0 && k > 0 && !*end) {
            memcpy(armed, v, n);
            armed[n] = 0;
            at_pass = k;
            fprintf(stderr, "allotd: ALLOT_FAULT: the process kills itself at pass %ld of %s"
                    " (a test setting)\n", k, armed);
            return;
        }
    fprintf(stderr, "allotd: ALLOT_FAULT=%s names no fault point (commit:N, cycle-pod:N);"
            " ignored\n", v);
}

void db__fault_init(void)
{
    pthread_once(&once, arm);
}

void db__fault(const char *point)
{
    if (!armed[0] || strcmp(point, armed) != 0)
        return;
    if (atomic_fetch_add(&passes, 1) + 1 != at_pass)
        return;
    fprintf(stderr, "allotd: fault point %s reached (pass %ld): killing the process\n", point,
            at_pass);
    fflush(stderr);
    kill(getpid(), SIGKILL);
    pause();
}
