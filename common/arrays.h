/*
 * arrays.h: the arrays a structure owns side by side (the scheduler
 * thread's state, the simulated world, a replay's model and run), freed
 * as one table of their pointers instead of one call a field.
 */
#ifndef ALLOT_ARRAYS_H
#define ALLOT_ARRAYS_H

#include <stddef.h>

/* free() of each of the n pointers (NULL ones included, as free() takes). */
void free_all(void *const *ptrs, size_t n);
#define FREE_ALL(ptrs) free_all((ptrs), sizeof(ptrs) / sizeof((ptrs)[0]))

#endif
