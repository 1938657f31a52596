/*
 * splitmix.h: splitmix64, the random stream of the benchmark's generator
 * (gen.c) and of the property test (tests/unit/test_property.c). One
 * 64-bit state; the same seed gives the same sequence on every machine.
 *
 * Header-only.
 */
#ifndef ALLOT_SPLITMIX_H
#define ALLOT_SPLITMIX_H

#include <stdint.h>

/* The next value of the stream whose state is *s. */
static inline uint64_t splitmix_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* 0..n-1 (0 when n <= 0). */
static inline int splitmix_below(uint64_t *s, int n)
{
    return n > 0 ? (int)(splitmix_next(s) % (uint64_t)n) : 0;
}

#endif /* ALLOT_SPLITMIX_H */
