/*
 * clock.h: the two clocks allot's processes read: the wall clock in
 * milliseconds since the epoch (what is stored and shown) and a monotonic
 * one in microseconds (what durations are measured with).
 */
#ifndef ALLOT_CLOCK_H
#define ALLOT_CLOCK_H

#include <stdint.h>

/* CLOCK_REALTIME in ms since the epoch. */
int64_t clock_now_ms(void);
/* CLOCK_MONOTONIC in us. */
int64_t clock_mono_us(void);

#endif
