/*
 * assign_watch.c: which agents' nodes were given or lost pods, for the
 * heartbeats that wait for that (api/h_agent.c). The scheduler thread
 * marks the nodes its committed decisions bound pods to or took pods
 * from, and those where a workload it is told of (deleted, suspended,
 * ended: ctl_sched_touch() after the commit that freed its pods) held
 * pods; a heartbeat that asks to wait sleeps until its node is marked or
 * its wait ends, so a pod bound to an agent's node reaches the agent in
 * milliseconds, not at its next heartbeat.
 *
 * A waiter's turn:
 *   Step 1: ctl_watch_now() before the heartbeat reads the node's pods:
 *           every mark up to that value was made after its decisions
 *           committed, so the read sees them (Invariant 1); the answer
 *           carries the value as its generation;
 *   Step 2: the agent's next heartbeat names that generation;
 *           ctl_watch_wait() returns at once when the node was marked
 *           after it (the pods read in Step 1 of this heartbeat may be
 *           the new ones, or the agent comes back at once for them), else
 *           sleeps until such a mark or the end of the wait.
 *
 * Invariants:
 *   1. Marks follow commits: the scheduler thread marks a node only once
 *      the decisions naming it are in the database, or once it has read
 *      again a touched workload that held pods there (touched after its
 *      change committed).
 *   2. Nodes share WATCH_SLOTS slots by a hash of their seq: a slot holds
 *      the last mark of any node hashed there. Two nodes that share one
 *      wake each other's waiters (a heartbeat answered early), never miss
 *      a mark.
 *   3. At most max_waiting heartbeats wait at once (each holds an HTTP
 *      worker); one more is answered at once, as a heartbeat that does not
 *      wait. After ctl_watch_close() (allotd stopping) nothing waits.
 *   4. The counter starts at the clock's microseconds (below 2^53, what a
 *      heartbeat may name), above every value an allotd started earlier
 *      gave: a generation from before a restart waits as one with nothing
 *      new since. One above the counter (another replica's) was never
 *      given here: it is answered at once, and the agent takes this
 *      watch's generation from the answer.
 */
#include "clock.h"
#include "control.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#define WATCH_SLOTS 4096

struct ctl_watch {
    pthread_mutex_t mu;
    pthread_cond_t cv;          /* broadcast on every batch of marks and on close */
    int64_t counter;            /* the last mark (Invariant 4) */
    int64_t slot[WATCH_SLOTS];  /* the last mark of the nodes hashed there */
    int waiting, max_waiting, closed;
};

static size_t slot_of(int64_t node_seq)
{
    return (size_t)(((uint64_t)node_seq * UINT64_C(0x9e3779b97f4a7c15)) >> 52); /* 12 bits */
}

struct ctl_watch *ctl_watch_new(int max_waiting)
{
    struct ctl_watch *w = calloc(1, sizeof(*w));
    pthread_condattr_t attr;
    struct timespec start;

    if (!w)
        return NULL;
    /* Invariant 4: from the clock, in microseconds */
    clock_gettime(CLOCK_REALTIME, &start);
    w->counter = (int64_t)start.tv_sec * 1000000 + start.tv_nsec / 1000;
    w->max_waiting = max_waiting;
    pthread_mutex_init(&w->mu, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&w->cv, &attr);
    pthread_condattr_destroy(&attr);
    return w;
}

void ctl_watch_free(struct ctl_watch *w)
{
    if (!w)
        return;
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
}

int64_t ctl_watch_now(struct ctl_watch *w)
{
    int64_t now;

    if (!w)
        return 0;
    pthread_mutex_lock(&w->mu);
    now = w->counter;
    pthread_mutex_unlock(&w->mu);
    return now;
}

void ctl_watch_mark(struct ctl_watch *w, const int64_t *node_seqs, int n)
{
    int i;

    if (!w || n <= 0)
        return;
    pthread_mutex_lock(&w->mu);
    w->counter++;
    for (i = 0; i < n; i++)
        w->slot[slot_of(node_seqs[i])] = w->counter;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

int ctl_watch_wait(struct ctl_watch *w, int64_t node_seq, int64_t after, int wait_ms)
{
    struct timespec until;
    int64_t *mark;
    int rc = 0;

    if (!w)
        return -1;
    clock_deadline(&until, CLOCK_MONOTONIC, wait_ms);
    pthread_mutex_lock(&w->mu);
    mark = &w->slot[slot_of(node_seq)];
    if (*mark > after || after > w->counter) {   /* Invariant 4 */
        rc = 1;
    } else if (w->closed || w->waiting >= w->max_waiting) {
        rc = -1;   /* Invariant 3 */
    } else {
        w->waiting++;
        while (*mark <= after && !w->closed &&
               pthread_cond_timedwait(&w->cv, &w->mu, &until) == 0)
            ;
        rc = *mark > after;
        w->waiting--;
    }
    pthread_mutex_unlock(&w->mu);
    return rc;
}

void ctl_watch_close(struct ctl_watch *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->closed = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}
