/*
 * grow.c: the doubling of allot_sim's growing arrays (grow.h).
 */
#include "grow.h"

#include <stdlib.h>

int sim_resize(void *arrp, int cap, size_t elem)
{
    void **arr = arrp;
    void *p = realloc(*arr, (size_t)cap * elem);

    if (!p)
        return -1;
    *arr = p;
    return 0;
}

int sim_grow(void *arrp, int n, int *cap, size_t elem, int first)
{
    int ncap;

    if (n < *cap)
        return 0;
    ncap = *cap ? *cap * 2 : first;
    if (sim_resize(arrp, ncap, elem) != 0)
        return -1;
    *cap = ncap;
    return 0;
}
