/*
 * expect.h: checking an `expect` step against the world, and the list of
 * failures it produces (one line of text each, without the scenario and
 * step, e.g. "phases.a1: expected Pending, got Running").
 */
#ifndef ALLOT_EXPECT_H
#define ALLOT_EXPECT_H

#include "scenario.h"
#include "world.h"

struct failures {
    char **items;   /* owned */
    int n, cap;
};

void failures_init(struct failures *f);
void failures_clear(struct failures *f);   /* frees the items, keeps the list */
void failures_free(struct failures *f);

/* Runs every check of an expect step, adding one failure per check that
 * does not hold. Returns 0, or -1 when memory runs out. */
int expect_run(const struct world *w, const struct scn_step *st, struct failures *f);

/* milli-GPU as the user writes GPUs: "2", "1.5", "0.333". */
void expect_format_gpus(char *buf, size_t len, int64_t milli);

#endif
