/*
 * clock.h: the two clocks allot's processes read: the wall clock in
 * milliseconds since the epoch (what is stored and shown) and a monotonic
 * one in microseconds (what durations are measured with).
 */
#ifndef ALLOT_CLOCK_H
#define ALLOT_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_REALTIME in ms since the epoch. */
int64_t clock_now_ms(void);
/* CLOCK_MONOTONIC in us. */
int64_t clock_mono_us(void);
/* *ts = clock `id` now plus ms (>= 0), normalized: the deadline of a
 * pthread_cond_timedwait() on a condition variable of that clock. */
void clock_deadline(struct timespec *ts, clockid_t id, int64_t ms);

#endif
