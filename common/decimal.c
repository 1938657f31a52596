/*
 * decimal.c: integers written in decimal without vfprintf (decimal.h).
 */
#include "decimal.h"

size_t decimal_u64(char *out, uint64_t v)
{
    char tmp[20];
    size_t n = 0, i;

    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    return n;
}

size_t decimal_i64(char *out, int64_t v)
{
    if (v >= 0)
        return decimal_u64(out, (uint64_t)v);
    out[0] = '-';
    return 1 + decimal_u64(out + 1, (uint64_t)0 - (uint64_t)v);
}
