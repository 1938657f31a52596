/*
 * thread_role.h: what a long-lived thread of allotd is, told to the
 * system: its name, seen in top -H, ps -L and /proc/PID/task/TID/comm
 * (allot-writer, allot-sched, ...; civetweb names its own).
 */
#ifndef ALLOT_THREAD_ROLE_H
#define ALLOT_THREAD_ROLE_H

/* Names the calling thread (at most 15 characters are kept). */
void thread_role_name(const char *name);

#endif
