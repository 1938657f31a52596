/*
 * thread_role.h: what a long-lived thread of allotd is, told to the
 * system: its name, seen in top -H, ps -L and /proc/PID/task/TID/comm
 * (allot-writer, allot-sched, ...; civetweb names its own); and how one
 * that waits on a condition variable is told to stop.
 */
#ifndef ALLOT_THREAD_ROLE_H
#define ALLOT_THREAD_ROLE_H

#include <pthread.h>

/* Names the calling thread (at most 15 characters are kept). */
void thread_role_name(const char *name);

/* Stops thread th, which waits on cv under mu and ends once *stop is
 * set: sets *stop under mu, signals cv, and joins th. */
void thread_role_stop(pthread_t th, pthread_mutex_t *mu, pthread_cond_t *cv, int *stop);

#endif
