/*
 * arrays.c: freeing a table of owned arrays (arrays.h).
 */
#include "arrays.h"

#include <stdlib.h>

void free_all(void *const *ptrs, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        free(ptrs[i]);
}
