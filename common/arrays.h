/*
 * arrays.h: the arrays a structure owns side by side (the scheduler
 * thread's state, the simulated world, a replay's model and run), freed
 * as one table of their pointers instead of one call a field; and a
 * growing NUL-terminated text (the agent's replies, db/checks.c's report).
 */
#ifndef ALLOT_ARRAYS_H
#define ALLOT_ARRAYS_H

#include <stddef.h>

/* free() of each of the n pointers (NULL ones included, as free() takes). */
void free_all(void *const *ptrs, size_t n);
#define FREE_ALL(ptrs) free_all((ptrs), sizeof(ptrs) / sizeof((ptrs)[0]))

/* Appends the k bytes at p to the text *buf (*len bytes, NUL after them,
 * *cap allocated: first_cap at first, doubled as needed): 0, or -1 out of
 * memory with the text as it was. */
int text_append(char **buf, size_t *len, size_t *cap, size_t first_cap, const char *p,
                size_t k);

#endif
