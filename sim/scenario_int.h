/*
 * scenario_int.h: what the scenario reader's files share: the parser,
 * which carries the reader's path and error and the name indexes used to
 * resolve references, and the readers of each part of a file.
 *
 * Every scn__ reader reads the value at the reader's current path (the
 * caller has pushed the key or index) and returns 0 or -1 with the
 * error recorded in p->jr.
 */
#ifndef ALLOT_SCENARIO_INT_H
#define ALLOT_SCENARIO_INT_H

#include "jread.h"
#include "namemap.h"
#include "scenario.h"

/* Bounds on what a file may say, so that every conversion fits int64. */
#define SCN_MAX_AMOUNT 1e12        /* GPUs, cores, weights, seconds */
#define SCN_MAX_PODS 65536
#define SCN_MAX_RANK 1000000
#define SCN_MAX_CYCLES 100000

/* Values of p->workloads: a name submitted earlier in the file. */
enum { SCN_WL_DELETED = 0, SCN_WL_LIVE = 1 };

struct scn_parser {
    struct jr jr;
    struct scenario *s;
    struct namemap pools, nodes, queues;
    struct namemap workloads;   /* name -> SCN_WL_*, at the step being read */
};

int scn__parse_queues(struct scn_parser *p, const json_t *doc);
int scn__parse_steps(struct scn_parser *p, const json_t *steps);
int scn__parse_expect(struct scn_parser *p, const json_t *v, struct scn_step *st);
/* The gpu, cpu and memory members of v, each {deserved, limit,
 * overQuotaWeight}, into q[SCHED_NRES]; sets a bit of *given
 * (res * SCN_NFIELDS + field) for every value the file gives. */
int scn__parse_quota(struct scn_parser *p, const json_t *v, struct sched_quota *q,
                     unsigned *given);

/* References by name at the current path. */
int scn__pool_ref(struct scn_parser *p, const json_t *v, int *out);
int scn__node_ref(struct scn_parser *p, const json_t *v, int *out);
/* A list of distinct pool names, written to out (room for n_pools). */
int scn__pool_list(struct scn_parser *p, const json_t *v, int *out, int *n);
/* Seconds as a non-negative number, in ms. */
int scn__seconds(struct scn_parser *p, const json_t *v, int64_t *ms);

#endif
