/*
 * test_clock.h: the monotonic clock in milliseconds and a sleep, for the
 * tests that time a wait (a caller that must not block, or must block
 * for about so long). Header-only.
 */
#ifndef ALLOT_TEST_CLOCK_H
#define ALLOT_TEST_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t test_mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void test_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

#endif
