/*
 * sched_int.h: what the core's files share and nobody else sees.
 */
#ifndef ALLOT_SCHED_INT_H
#define ALLOT_SCHED_INT_H

#include "sched.h"

void *sched__alloc(struct sched_arena *arena, size_t n);
void *sched__calloc(struct sched_arena *arena, size_t count, size_t size);

#endif
