/*
 * cli.c: the helpers every client command uses: usage errors and help in
 * one shape, failure messages, and number and string parsing.
 */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int cli_usage_error(const struct cli_cmd *c, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "%s: ", c->name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nusage: %s %s\n", c->name, c->usage);
    return CLI_USAGE;
}

int cli_help(const struct cli_cmd *c)
{
    printf("usage: %s %s\n", c->name, c->usage);
    if (c->help && c->help[0])
        printf("\n%s", c->help);
    return CLI_OK;
}

int cli_fail(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "allot: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return CLI_FAIL;
}

char *cli_vstrf(const char *fmt, va_list ap)
{
    va_list again;
    char *s;
    int n;

    va_copy(again, ap);
    n = vsnprintf(NULL, 0, fmt, ap);
    s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s)
        vsnprintf(s, (size_t)n + 1, fmt, again);
    va_end(again);
    return s;
}

char *cli_strf(const char *fmt, ...)
{
    va_list ap;
    char *s;

    va_start(ap, fmt);
    s = cli_vstrf(fmt, ap);
    va_end(ap);
    return s;
}

int cli_eq_nocase(const char *a, const char *b)
{
    while (*a && *b && tolower((unsigned char)*a) == tolower((unsigned char)*b)) {
        a++;
        b++;
    }
    return *a == 0 && *b == 0;
}

int cli_parse_int(const char *s, long min, long max, long *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int cli_parse_real(const char *s, double min, double max, double *out)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v) || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

/* Edits between a and b (optimal string alignment: insert, delete,
 * replace, swap neighbours), for names of at most 63 characters. */
static int edits(const char *a, const char *b)
{
    int d[64][64], i, j, la = (int)strlen(a), lb = (int)strlen(b);

    if (la > 63 || lb > 63)
        return 64;
    for (i = 0; i <= la; i++)
        d[i][0] = i;
    for (j = 0; j <= lb; j++)
        d[0][j] = j;
    for (i = 1; i <= la; i++)
        for (j = 1; j <= lb; j++) {
            int cost = a[i - 1] != b[j - 1], best = d[i - 1][j - 1] + cost;
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

const char *cli_nearest(const char *word, const void *rows, size_t stride, int n, int *dist)
{
    const char *best = NULL, *name;
    int i, d, best_d = 3, len = (int)strlen(word);

    for (i = 0; n < 0 || i < n; i++) {
        name = *(const char *const *)(const void *)((const char *)rows + (size_t)i * stride);
        if (!name)
            break;
        d = edits(word, name);
        if (d < best_d && d < len) {
            best = name;
            best_d = d;
        }
    }
    if (dist)
        *dist = best ? best_d : 64;
    return best;
}
