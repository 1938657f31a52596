/*
 * arrays.c: freeing a table of owned arrays, and a growing text (arrays.h).
 */
#include "arrays.h"

#include <stdlib.h>
#include <string.h>

void free_all(void *const *ptrs, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        free(ptrs[i]);
}

int text_append(char **buf, size_t *len, size_t *cap, size_t first_cap, const char *p,
                size_t k)
{
    if (*len + k + 1 > *cap) {
        size_t n = *cap ? *cap : first_cap;
        char *nb;

        while (n < *len + k + 1)
            n *= 2;
        nb = realloc(*buf, n);
        if (!nb)
            return -1;
        *buf = nb;
        *cap = n;
    }
    memcpy(*buf + *len, p, k);
    *len += k;
    (*buf)[*len] = 0;
    return 0;
}
