/*
 * quantity.c: the memory quantity grammar, and nothing else:
 *
 *   quantity := digits [ "." digits ] [ ("e" | "E") [ "+" ] digits ] [ suffix ]
 *   suffix   := "k" | "K" | "M" | "G" | "T" | "P" | "E"           (powers of 1000)
 *             | "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei"           (powers of 1024)
 *
 * An "e" or "E" starts an exponent only when a digit or "+" follows it;
 * otherwise "E" is the exa suffix ("1E", "1Ei").
 *
 * No sign, no spaces, no hexadecimal, no "inf" or "nan": strtod() accepts
 * all of those, and "nan" once reached the database as the smallest
 * int64 and let a workload past every memory quota.
 *
 * Invariant: a result is finite, in [0, QUANTITY_MAX_MIB], and the bytes
 * rounded up to whole MiB. At most 30 digits and an exponent of at most
 * 30 are read, so the double below stays finite before the range check.
 */
#include "quantity.h"

#include <math.h>
#include <string.h>

static const struct {
    const char *name;
    double bytes;
} suffixes[] = {
    {"", 1.0}, {"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15},
    {"E", 1e18}, {"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0},
    {"Ti", 1099511627776.0}, {"Pi", 1125899906842624.0}, {"Ei", 1152921504606846976.0},
};

/* Reads 1 to `max` decimal digits into *v; the number of digits, or -1. */
static int digits(const char **s, int max, double *v)
{
    int n = 0;

    for (*v = 0; **s >= '0' && **s <= '9'; (*s)++, n++) {
        if (n == max)
            return -1;
        *v = *v * 10 + (**s - '0');
    }
    return n > 0 ? n : -1;
}

static double suffix_bytes(const char *s)
{
    size_t i;

    for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
        if (strcmp(s, suffixes[i].name) == 0)
            return suffixes[i].bytes;
    return -1;
}

int quantity_mib(const char *s, int64_t *out)
{
    double whole, frac = 0, exp = 0, mul, mib;
    int n;

    if (digits(&s, 30, &whole) < 0)
        return -1;
    if (*s == '.') {
        s++;
        if ((n = digits(&s, 30, &frac)) < 0)
            return -1;
        frac /= pow(10, n);
    }
    /* "E" is also the exa suffix ("1E", "1Ei"): an exponent only when a
     * digit or "+" follows, as Kubernetes reads it */
    if ((*s == 'e' || *s == 'E') && (s[1] == '+' || (s[1] >= '0' && s[1] <= '9'))) {
        s++;
        if (*s == '+')
            s++;
        if (digits(&s, 2, &exp) < 0 || exp > 30)
            return -1;
    }
    mul = suffix_bytes(s);
    if (mul < 0)
        return -1;
    mib = ceil((whole + frac) * pow(10, exp) * mul / 1048576.0);
    if (!(mib >= 0 && mib <= (double)QUANTITY_MAX_MIB))
        return -1;
    *out = (int64_t)mib;
    return 0;
}
