/*
 * fuzz_quantity.c: the memory quantity parser (common/quantity.c) that
 * the API, the CLI and the config file share, against a second reading of
 * its grammar written here independently:
 *
 *   quantity := digits [ "." digits ] [ ("e" | "E") [ "+" ] digits ] [ suffix ]
 *   suffix   := "k" | "K" | "M" | "G" | "T" | "P" | "E" | "Ki" | ... | "Ei"
 *
 * An "e" or "E" followed by a digit or "+" starts an exponent; otherwise
 * "E" is the exa suffix (Kubernetes reads "1E" and "1Ei" so).
 *
 * Both read up to the first NUL. Checked: whatever the parser accepts the grammar accepts, with a value
 * in [0, QUANTITY_MAX_MIB] within 1 MiB of the reference's (the reference
 * computes in long double; both round up); whatever the grammar accepts
 * with a value clearly inside the range the parser accepts, and clearly
 * outside it refuses.
 */
#include "fuzz.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quantity.h"

static int run(const char **s, int max, long double *v)
{
    int n = 0;

    for (*v = 0; **s >= '0' && **s <= '9'; (*s)++, n++)
        *v = *v * 10 + (**s - '0');
    return n >= 1 && n <= max ? n : -1;
}

static long double suffix_bytes(const char *s)
{
    static const char *const dec = "kKMGTPE";
    static const char *const bin = "KMGTPE";
    const char *p;

    if (!*s)
        return 1;
    if (s[1] == 0 && (p = strchr(dec, *s)))
        return powl(1000, *s == 'k' ? 1 : (int)(p - dec));
    if (s[1] == 'i' && s[2] == 0 && *s && (p = strchr(bin, *s)))
        return powl(1024, (int)(p - bin) + 1);
    return -1;
}

/* The value in MiB (rounded up), or -1 if s is not in the grammar. */
static long double reference(const char *s)
{
    long double whole, frac = 0, exp = 0, mul;
    int n;

    if (run(&s, 30, &whole) < 0)
        return -1;
    if (*s == '.') {
        s++;
        if ((n = run(&s, 30, &frac)) < 0)
            return -1;
        frac /= powl(10, n);
    }
    if ((*s == 'e' || *s == 'E') && (s[1] == '+' || (s[1] >= '0' && s[1] <= '9'))) {
        s++;
        if (*s == '+')
            s++;
        if (run(&s, 2, &exp) < 0 || exp > 30)
            return -1;
    }
    mul = suffix_bytes(s);
    if (mul < 0)
        return -1;
    return ceill((whole + frac) * powl(10, exp) * mul / 1048576.0L);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_text(data, size);
    long double want = reference(s);
    int64_t got = -7;
    int rc = quantity_mib(s, &got);

    if (rc == 0) {
        FUZZ_ASSERT(got >= 0 && got <= QUANTITY_MAX_MIB);
        FUZZ_ASSERT(want >= 0);
        FUZZ_ASSERT(fabsl((long double)got - want) <= 1);
    } else {
        FUZZ_ASSERT(rc == -1);
        FUZZ_ASSERT(got == -7);
        FUZZ_ASSERT(want < 0 || want > (long double)QUANTITY_MAX_MIB - 1);
    }
    free(s);
    return 0;
}
