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
 *   submit     the same place, for the group commit that holds the N-th
 *              workload submission: that submission is on disk and its
 *              client has no 202;
 *   cycle-pod  a scheduling cycle's transaction has written the pods of
 *              one more workload it placed, and has not committed: a
 *              crash here must leave none of the cycle's decisions.
 *
 * Without ALLOT_FAULT (or with an unknown point) nothing happens; the
 * cost of a pass is one load of a flag. The variable is read once, by the
 * first db_open().
 *
 * Invariant: the process dies at the N-th pass exactly, counted across
 * threads; a point noted inside a write (submit) fires at the commit that
 * holds it, which the writer thread alone reaches.
 */
#include "db_int.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const points[] = {"commit", "submit", "cycle-pod"};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char armed[16];           /* the point named by ALLOT_FAULT; "" none */
static long at_pass;             /* which pass kills */
static atomic_long passes;
static int due;                  /* the writer passed a noted point: kill at its commit */

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
    fprintf(stderr, "allotd: ALLOT_FAULT=%s names no fault point (commit:N, submit:N,"
            " cycle-pod:N); ignored\n", v);
}

void db__fault_init(void)
{
    pthread_once(&once, arm);
}

static void die(const char *point)
{
    fprintf(stderr, "allotd: fault point %s reached (pass %ld): killing the process\n", point,
            at_pass);
    fflush(stderr);
    kill(getpid(), SIGKILL);
    pause();
}

/* Counts a pass of point; 1 at the armed pass. */
static int passed(const char *point)
{
    return armed[0] && strcmp(point, armed) == 0 && atomic_fetch_add(&passes, 1) + 1 == at_pass;
}

void db__fault(const char *point)
{
    if (passed(point))
        die(point);
}

void db__fault_note(const char *point)
{
    if (passed(point))
        due = 1;
}

void db__fault_commit(void)
{
    if (due)
        die(armed);
    db__fault("commit");
}
