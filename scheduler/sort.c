/*
 * sort.c: a stable merge sort of int indices with a caller's "before"
 * relation. The core never uses qsort: qsort is not stable, and stability
 * plus an explicit final tie-break is what makes results byte-identical.
 */
#include "sched_int.h"

#include <string.h>

static void merge_sort(int *a, int *tmp, int n, sched__before_fn before, const void *ctx)
{
    int mid = n / 2, i = 0, j, k = 0;

    if (n < 2)
        return;
    merge_sort(a, tmp, mid, before, ctx);
    merge_sort(a + mid, tmp, n - mid, before, ctx);
    j = mid;
    while (i < mid && j < n)
        tmp[k++] = before(ctx, a[j], a[i]) ? a[j++] : a[i++];
    while (i < mid)
        tmp[k++] = a[i++];
    while (j < n)
        tmp[k++] = a[j++];
    memcpy(a, tmp, (size_t)n * sizeof(int));
}

void sched__sort_with(int *idx, int *tmp, int n, sched__before_fn before, const void *ctx)
{
    merge_sort(idx, tmp, n, before, ctx);
}

int sched__sort(struct sched_arena *arena, int *idx, int n, sched__before_fn before,
                const void *ctx)
{
    int *tmp;

    if (n < 2)
        return SCHED_OK;
    tmp = sched__array_raw(arena, (size_t)n, sizeof(int)); /* merge_sort() writes before it reads */
    if (!tmp)
        return SCHED_ENOMEM;
    merge_sort(idx, tmp, n, before, ctx);
    return SCHED_OK;
}

int sched__ascending(const void *ctx, int a, int b)
{
    (void)ctx;
    return a < b;
}
