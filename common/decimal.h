/*
 * decimal.h: integers written in decimal without vfprintf, for the hot
 * paths that write many of them (JSON numbers, a page's seqs).
 */
#ifndef ALLOT_DECIMAL_H
#define ALLOT_DECIMAL_H

#include <stddef.h>
#include <stdint.h>

/* v's decimal digits at out (at least 20 bytes, not terminated); their
 * count. */
size_t decimal_u64(char *out, uint64_t v);

/* "-" and the digits of v at out (at least 21 bytes, not terminated);
 * their count. */
size_t decimal_i64(char *out, int64_t v);

#endif
