/*
 * grow.h: the growing arrays of allot_sim (the trace's tables, the
 * replay's event heap and statistics, the world's workloads, samples and
 * delta, a scenario's failures, a CSV row's fields): one way to make room
 * for one more element, doubling.
 */
#ifndef ALLOT_SIM_GROW_H
#define ALLOT_SIM_GROW_H

#include <stddef.h>

/* Reallocates the malloc'd array at arrp (a T **) to cap elements of
 * elem bytes: 0, or -1 out of memory (the array as it was). */
int sim_resize(void *arrp, int cap, size_t elem);
/* Makes room for element n of the array at arrp of capacity *cap: none
 * needed while n < *cap; else the capacity doubles (to `first` from 0).
 * 0, or -1 out of memory (the array and *cap as they were). */
int sim_grow(void *arrp, int n, int *cap, size_t elem, int first);

#endif
