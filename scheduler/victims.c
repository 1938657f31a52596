/*
 * victims.c: whom to evict so that a pending workload fits (reclaim
 * between queues, preempt inside a queue), and whom to move
 * (consolidation).
 *
 * Victims come in units: a whole workload (every placed pod; gangs go
 * whole), or one pod of an elastic workload above its minimum. Valid
 * units, per action:
 *   reclaim  - preemptible, of another queue, not protected by the pool's
 *              minimum guaranteed runtime, and, checked before each unit is
 *              taken (KAI's strategies, at the level where the two queues'
 *              branches meet, Av on the victim side, Ar on the reclaimer's):
 *              Av holds more than its allocatable share max(deserved, fair)
 *              (MaintainFairShare), or Ar + request stays within Ar's
 *              deserved while Av holds more than its deserved
 *              (GuaranteeDeservedQuota), in a resource the unit frees;
 *              and the whole set keeps KAI's saturation rule wherever
 *              the branches meet above the reclaimer's project (a set
 *              that breaks it is no candidate: a dearer valid one is).
 *   preempt  - preemptible, same queue, strictly lower priority, not
 *              protected by the minimum runtime.
 *   move     - preemptible whole workloads of any queue (consolidation).
 *
 * allot's victim choice (docs/scheduler.md, "Reclaim and preemption
 * rules"): for each pod still to place, on every node of the pool, the
 * cheapest valid set of units that makes the pod fit there: fewest GPUs
 * evicted (no GPU freed for nothing); among
 * equal costs the set whose units come first in preference order: the
 * victim queue furthest above its fair share, then the lowest priority,
 * then the newest. The cheapest set over all nodes wins (ties: node
 * name). Sets are searched depth-first in (cost, preference) order with
 * pruning on cost; a node with more candidate units than MAX_NODE_UNITS
 * considers only the cheapest ones. When j would take a queue on its path
 * over its limit, room under it is made first, from units inside that
 * queue in preference order (make_limit_room()); if the pods then cannot
 * all be placed (that room spent a victim queue's excess on units that
 * free nothing the pods can use, so the unit a node needed is no longer
 * valid), the attempt is made again with each node's set required to
 * make the room for its pod as well (struct search's limit_on_node).
 *
 * What a search costs, per attempt, is kept to what the attempt changes:
 *   1. a pool's candidate units are put in preference order once per state
 *      of that pool (ss->pool_version, which rollback restores): they read
 *      only its running workloads (placements, flags) and its queues'
 *      figures there, so a change in another pool keeps them; a change in
 *      the pool re-sorts the units it holds in key order by the queues'
 *      new ranks (a counting sort, none when no rank moved) instead of
 *      walking its running workloads again (Invariant 2);
 *   2. their grouping by node, and the nodes in order of their most
 *      preferred unit, are kept across the reclaim attempts made in one
 *      state with the same victim queues (most failed attempts roll the
 *      state back to where it was); a node's bound for a reclaimer's
 *      shape is kept while the node is unchanged (ss_node.serial),
 *      whatever the pool's state and the grouping, and the
 *      nodes of the grouping that can host the shape, with their bounds
 *      (order_nodes()), for the grouping, each for the last few shapes
 *      (struct node_bounds: reclaimers of several shapes take turns in one
 *      state); a shape that every node of the pool can host (struct
 *      host_floor) is not asked node by node;
 *   3. once a set is found, a node is searched only if both its device
 *      bound and its cheapest unit allow a set no dearer than the best;
 *   4. whether a queue holds more than the strategies let it keep, and
 *      whether any sibling of a queue does (the test every reclaim
 *      candidate of the job-order walk asks, any_victim_queue()), are kept
 *      per state of the pool: they read only the queues' figures there;
 *      so is the set of victim queues of a reclaim, for the last few
 *      reclaimer queues and guarantees (struct victim_queues);
 *   5. an attempt whose pods all fit somewhere as things are ends at
 *      once (placed, they would evict nothing, and an attempt that evicts
 *      nothing fails): most reclaim and preempt attempts are of this kind;
 *      for one pod, finding that a node fits stops at the first one; for a
 *      gang of whole-device or CPU-only pods, the pods each node can take
 *      are added up (sched__all_fit_as_is()) instead of placing them one by one
 *      and rolling them back; a GPU-memory pod fits only if its charge on
 *      the node it would take keeps its project's limit, as placement
 *      requires, and room under the limit is made for that charge when it
 *      is above the estimate (struct search's pod_gpu).
 * How an attempt failed is left in ss->attempt_trace (SS_TRACE_*): it
 * noted a hopeless shape, or the hopeless table ended it; actions.c keeps
 * the failures for the next cycle (struct ss_known) and, when it does not
 * make one again, notes what it noted (sched__note_known_failure()).
 *
 * Invariants:
 *   1. Outside the nodes of its pool's last grouping (the pool's by_first),
 *      a node has node_cnt 0 and node_mark -1 in the scratch: a grouping
 *      starts over from those nodes alone, never from the whole pool.
 *   2. A pool's units in key order (collect_keyed()), collected in state S,
 *      hold every unit a collection would find in any state reached from S
 *      by logged changes alone (the undo log's entries up to S the same
 *      ones, the same log base: keyed_holds()): from S a unit only dies.
 *      Runtime protection is fixed for the cycle; a running workload of
 *      the running list gains no pod but as the workload an attempt
 *      places (its own units are dead to it, and it ends flagged
 *      WL_TOUCHED or rolled back below S) or as a victim put back or moved
 *      (WL_EVICTED, then WL_TOUCHED). The units that died since S stay in
 *      the list, in their places: every reader passes over them
 *      (unit_dead()), so the live units, their order and every set found
 *      are those of a fresh collection. A change of the running list
 *      (sched__running_changed()) or of the session outside the log
 *      (ss->log_base) collects them again, but for units collected with
 *      an empty log: those hold across logs while ss->units_base stays
 *      (the session returns to that state whenever a log is undone, and a
 *      log emptied with its changes kept names another), so a kept
 *      session's next cycle, and the cycle after a trial that was undone,
 *      take the units the last one collected. Runtime protection reads
 *      the clock, which a kept session's next snapshot may move: units of
 *      a pool where it protects hold at the clock they were collected at.
 */
#include "sched_int.h"

#include <stdlib.h>
#include <string.h>

#define MAX_NODE_UNITS 20
#define MAX_DFS_STEPS 20000
#define LIMIT_ROOM_PASSES 8

enum { MODE_RECLAIM, MODE_PREEMPT, MODE_MOVE };

struct unit {
    int w;
    int pod;           /* -1: every placed pod */
    int64_t cost;      /* milli-GPU freed over every node */
    int64_t cost2;     /* millicores freed, second key */
    int rank;          /* preference: lower goes first */
    int k_queue;       /* the workload's queue: its rank orders the unit first */
};

/* What a unit frees on the node under examination. */
struct footprint {
    int32_t dev[SCHED_MAX_NODE_GPUS];
    uint64_t whole;
    int64_t cpu, mem;
};

struct search {
    struct sched_session *ss;
    int mode, j, pool, node;
    int what_if;               /* diagnosis: the minimum runtime protects nobody */
    int pods_left;             /* pods of j still to place, this one included */
    struct unit *units;        /* candidate units of the pool, in preference order */
    int n_units, cap_units;
    int *on_node;              /* indices into units, for the node under examination */
    struct footprint *fp;      /* [MAX_NODE_UNITS], parallel to on_node */
    int n_on_node;
    int by_whole;              /* the node's fit counts its devices whole (whole_fit()) */
    int chosen[MAX_NODE_UNITS], n_chosen;   /* positions in on_node */
    int best[MAX_NODE_UNITS], n_best;       /* indices into units */
    int64_t best_cost, best_cost2;
    int best_node;
    int steps;
    int n_flagged;             /* workloads flagged by this attempt (scratch.flagged) */
    int collected;             /* units collected for this attempt */
    int *elig;                 /* indices into units this attempt may look at, in rank order */
    int n_elig;
    int *node_order;           /* pool nodes by their most preferred unit */
    int64_t *order_lb;         /* their bounds: least GPU cost that could make room */
    int64_t pod_gpu;           /* a GPU-memory request: its charge per pod on the node it
                                * takes as things are, when above its estimate (0: none) */
    int first_decision;        /* ss->n_decisions when the attempt began: its evictions follow */
    int limit_on_node;         /* a node's set must also make room under the limits on j's
                                * path for the pod it takes (evict_attempt()'s second try) */
};

/* What an answer kept per pool was found for: the pool's state and a key. */
#define KEEP 8
struct kept {
    uint64_t version;          /* ss->pool_version; UINT64_MAX: unused */
    uint64_t used;             /* the pool's tick when last used */
    int64_t key[7];
};

/* One reclaimer shape's node bounds (node_lower_bound(); -1: the node
 * cannot host it), by the node's place in the pool (pool_pos), each known
 * while the node is in the state it was asked in (lb_at[pos] is the node's
 * serial then, plus one, written for this shape: lb_era[pos] == era, the
 * entry's number since it last took a shape; else never asked), whatever
 * the pool's state; and
 * search_pool()'s nodes for it in grouping `gen`: those of the grouping
 * that can host it, in search order, with their bounds and the least of
 * them. */
struct node_bounds {
    struct kept k;             /* the shape (host_shape()), for the session's log base */
    int64_t *lb;               /* [pool's nodes] */
    uint64_t *lb_at;           /* [pool's nodes] */
    uint32_t *lb_era;          /* [pool's nodes] */
    uint32_t era;
    uint64_t gen;              /* the pool's b_gen; UINT64_MAX: no order yet */
    int *order, n_order;       /* [pool's nodes] */
    int64_t *order_lb;         /* [pool's nodes]: the bound of order[i] */
    int64_t global;
};

/* The victim queues of a reclaim (eligible_queues()). */
struct victim_queues {
    struct kept k;             /* the reclaimer's queue, its side's guarantees, the collection */
    uint8_t *ok;               /* [n_queues]: scratch.q_ok */
    int n;                     /* queues set */
};

/* A pool's candidate units in preference order, as collected in state
 * `version` for moves or for evictions; reused while the state is the same. */
struct pool_units {
    struct unit *units;
    int n, cap;
    uint64_t version;
    uint64_t pool_version;     /* the pool's state (ss->pool_version) when collected */
    int kind;                  /* 0: evictions, 1: moves, 2: evictions with no runtime protection */
    /* the units in key order (collect_keyed()), of kind k_kind (-1: none),
     * collected in the state the undo log names (k_base, k_pos, k_serial:
     * keyed_holds()), k_qcnt of each queue; k_gen counts the collections,
     * ranked_gen names the one `units` was sorted from by last_rank */
    struct unit *keyed;
    int n_keyed, k_kind, k_pos;
    uint64_t k_base, k_serial, k_gen, ranked_gen;
    uint64_t k_units;          /* ss->units_base when collected with an empty log (k_pos 0) */
    int64_t k_clock;           /* runtime_clock() when collected */
    int *k_qcnt, *last_rank;   /* [n_queues] */
    int *q_off, *q_cnt;        /* [n_queues]: units of queue q are q_items[off..off+cnt) */
    int *q_items;              /* [cap], each queue's run in preference order */
    /* the reclaim's grouping of these units by node (bucket_by_node()) and
     * the pool's nodes by their most preferred unit, made in the pool's
     * state b_version (pool_version) for the victim queues b_queues; kept
     * while both are the same */
    uint64_t b_version;
    int b_kind;
    uint8_t *b_queues;         /* [n_queues]: the queues whose units were grouped */
    int *node_units;           /* [cap]: units of node n are node_units[off[n]..+cnt[n]) */
    int *by_first;             /* [pool's nodes]: nodes with a unit, most preferred unit first */
    int n_by_first;
    uint64_t b_gen;            /* counts the groupings */
    /* the nodes' bounds for the last KEEP shapes: a bound reads only the
     * node and the shape, not the pool's state or the grouping; with each, the nodes to search in the last
     * grouping it was asked in (struct node_bounds); and the last KEEP
     * answers of eligible_queues() for a reclaim */
    struct node_bounds lb[KEEP];
    struct victim_queues vq[KEEP];
    uint64_t tick;
    int *leaf_order;           /* [n_queues]: the leaves as rank_queues() last put them */
    uint64_t o_version;        /* the pool's state (pool_version) o_over, s_over were found in */
    uint8_t *o_over;           /* [n_queues]: queue_over_bits()'s answers */
    uint8_t *s_over;           /* [n_queues]: siblings_over()'s answers */
};

/* The shape of a workload for which no victim set was found in state `version`. */
struct hopeless {
    uint64_t version;
    struct ss_ask ask;
};

/* What every ready node of a pool has at least: a workload with no node
 * constraint that asks no more can be hosted by each of them. */
struct host_floor {
    int all_ready;
    int gpus;
    int64_t cpu, mem;
};

/* Buffers shared by every attempt of a cycle, grown on demand. */
/* One mover shape's best nodes in a consolidation search (move trials). */
#define MOVE_TOP 8
struct mover_best {
    int w, pool;               /* a workload of the shape, and the pool */
    int n, more;               /* nodes kept; more: other nodes fit too */
    struct ss_cand best[MOVE_TOP];
    int *away, n_away;         /* left out: the nodes the trial that found them touched */
};

struct scratch {
    int *on_node, *tmp, *elig;
    int cap;
    int *node_off, *node_cnt;  /* [n_nodes]: a node's units in its pool's node_units */
    int *node_mark;            /* [n_nodes]: last unit filed under the node, then its first;
                                  -1 (and node_cnt 0) where the pool's grouping has none */
    int *pair_node, *pair_unit; /* [2 * cap]: bucket_by_node()'s (node, unit) pairs */
    struct pool_units *pc;     /* [n_pools]: the last collection of each pool */
    struct host_floor *floor;  /* [n_pools] */
    struct hopeless *hopeless; /* [n_queues * n_pools * 2] */
    struct footprint *fp;
    int *flagged;
    int cap_flagged;
    struct sched_pod *before;  /* placements of the pods a move takes away */
    int cap_before;
    uint8_t *touched_at;       /* [n_nodes]: a move trial changed the node */
    int *touched, n_touched;   /* [n_nodes]: those nodes */
    struct mover_best *movers; /* the search's mover shapes */
    int n_movers, cap_movers;
    int *mover_of;             /* [cap_mover_of]: a workload's shape in movers, where */
    unsigned *mover_gen;       /* [cap_mover_of] is gen */
    int cap_mover_of;          /* the workloads when they were made (a session may grow) */
    unsigned gen;              /* the search's: movers[] hold for it */
    uint8_t *q_ok;             /* [n_queues]: the queue's units are eligible */
    int *q_rank, *q_order, *q_tmp;  /* [n_queues]: victim preference of leaves (rank_queues) */
    int even_paths;            /* every leaf's path has the same length (build_paths()) */
    int64_t *q_over;           /* [n_queues]: above its GPU fair share in the pool collected */
    int *q_path, *q_path_off;  /* each queue's path from the top: q_path[off[q]..off[q+1]) */
    int **by_keys;             /* [n_pools]: the pool's running workloads by victim keys */
    int *cap_by_keys;          /* [n_pools]: the room each of those has */
    int *rank_at;              /* [n_queues + 1]: counting sort of units by queue rank */
    int *dom_order;            /* [n_nodes]: a topology attempt's nodes (order_domain()) */
    int64_t *dom_lb;           /* [n_nodes]: their bounds */
};

static int build_paths(struct sched_session *ss, struct scratch *x);

static struct host_floor floor_of(const struct sched_session *ss, int p)
{
    struct host_floor f = {1, SCHED_MAX_NODE_GPUS, SS_INF, SS_INF};
    int i;

    for (i = 0; i < ss->pools[p].n_nodes; i++) {
        const struct ss_node *n = &ss->nodes[ss->pools[p].nodes[i]];
        f.all_ready &= n->ready != 0;
        f.gpus = n->n_gpus < f.gpus ? n->n_gpus : f.gpus;
        f.cpu = ss_min(f.cpu, n->cpu_total);
        f.mem = ss_min(f.mem, n->mem_total);
    }
    return f;
}

static struct host_floor *floors_of(struct sched_session *ss)
{
    struct host_floor *f = sched__calloc(ss->arena, (size_t)ss->n_pools + 1, sizeof(*f));
    int p;

    if (!f)
        return NULL;
    for (p = 0; p < ss->n_pools; p++)
        f[p] = floor_of(ss, p);
    return f;
}

void sched__victims_nodes_changed(struct sched_session *ss, int pool)
{
    struct scratch *x = ss->victim_scratch;

    if (x && x->floor)
        x->floor[pool] = floor_of(ss, pool);
}

static struct scratch *scratch_of(struct sched_session *ss)
{
    struct scratch *x = ss->victim_scratch;

    if (!x) {
        x = sched__calloc(ss->arena, 1, sizeof(*x));
        if (!x)
            return NULL;
        x->pc = sched__calloc(ss->arena, (size_t)ss->n_pools, sizeof(struct pool_units));
        if (!x->pc)
            return NULL;
        for (int p = 0; p < ss->n_pools; p++) {
            x->pc[p].version = x->pc[p].b_version = x->pc[p].o_version =
                x->pc[p].pool_version = UINT64_MAX;
            x->pc[p].k_kind = -1;
            for (int e = 0; e < KEEP; e++)
                x->pc[p].lb[e].k.version = x->pc[p].vq[e].k.version = UINT64_MAX;
        }
        x->floor = floors_of(ss);
        x->hopeless = sched__calloc(ss->arena, (size_t)ss->n_queues * (size_t)ss->n_pools * 2 + 1,
                                    sizeof(struct hopeless));
        if (!x->hopeless || !x->floor)
            return NULL;
        for (size_t h = 0; h < (size_t)ss->n_queues * (size_t)ss->n_pools * 2; h++)
            x->hopeless[h].version = UINT64_MAX;
        x->fp = sched__calloc(ss->arena, MAX_NODE_UNITS, sizeof(struct footprint));
        x->q_ok = sched__calloc(ss->arena, (size_t)ss->n_queues + 1, 1);
        x->q_rank = sched__calloc(ss->arena, (size_t)ss->n_queues + 1, sizeof(int));
        x->q_order = sched__calloc(ss->arena, (size_t)ss->n_queues + 1, sizeof(int));
        x->q_tmp = sched__calloc(ss->arena, (size_t)ss->n_queues + 1, sizeof(int));
        x->node_off = sched__calloc(ss->arena, (size_t)ss->n_nodes + 2, sizeof(int));
        x->node_cnt = sched__calloc(ss->arena, (size_t)ss->n_nodes + 2, sizeof(int));
        x->node_mark = sched__array_raw(ss->arena, (size_t)ss->n_nodes + 2, sizeof(int));
        x->by_keys = sched__calloc(ss->arena, (size_t)ss->n_pools + 1, sizeof(int *));
        x->cap_by_keys = sched__calloc(ss->arena, (size_t)ss->n_pools + 1, sizeof(int));
        x->rank_at = sched__calloc(ss->arena, (size_t)ss->n_queues + 1, sizeof(int));
        x->touched_at = sched__calloc(ss->arena, (size_t)ss->n_nodes + 1, 1);
        x->touched = sched__calloc(ss->arena, (size_t)ss->n_nodes + 1, sizeof(int));
        x->dom_order = sched__calloc(ss->arena, (size_t)ss->n_nodes + 1, sizeof(int));
        x->dom_lb = sched__calloc(ss->arena, (size_t)ss->n_nodes + 1, sizeof(int64_t));
        if (!x->dom_order || !x->dom_lb || !x->fp || !x->q_ok || !x->q_rank || !x->q_order || !x->q_tmp || !x->node_off ||
            !x->node_cnt || !x->node_mark || !x->by_keys || !x->cap_by_keys || !x->rank_at ||
            !x->touched_at || !x->touched ||
            build_paths(ss, x) != SCHED_OK)
            return NULL;
        memset(x->node_mark, 0xff, sizeof(int) * ((size_t)ss->n_nodes + 2));  /* -1 each */
        ss->victim_scratch = x;
    }
    return x;
}

static int scratch_units(struct sched_session *ss, int cap)
{
    struct scratch *x = ss->victim_scratch;

    if (cap <= x->cap)
        return SCHED_OK;
    cap = cap < 2 * x->cap ? 2 * x->cap : cap;
    x->on_node = sched__calloc(ss->arena, (size_t)cap + 1, sizeof(int));
    x->tmp = sched__calloc(ss->arena, (size_t)cap + 1, sizeof(int));
    x->elig = sched__calloc(ss->arena, (size_t)cap + 1, sizeof(int));
    x->pair_node = sched__array_raw(ss->arena, 2 * (size_t)cap + 1, sizeof(int));
    x->pair_unit = sched__array_raw(ss->arena, 2 * (size_t)cap + 1, sizeof(int));
    if (!x->on_node || !x->tmp || !x->elig || !x->pair_node || !x->pair_unit)
        return SCHED_ENOMEM;
    x->cap = cap;
    return SCHED_OK;
}

/* ---- Static candidate filter and preference ---- */

static int protected_by_runtime(const struct sched_session *ss, int w)
{
    const struct sched_workload *wl = ss_w(ss, w);
    int64_t min = ss->in->pools[ss->wl[w].pool].min_guaranteed_runtime_ms;

    return min > 0 && wl->started_ms != SCHED_NO_TIME && ss->in->now_ms - wl->started_ms < min;
}

/* Running preemptible work of the pool: what any mode may take. */
static int victim_base_ok(const struct sched_session *ss, int pool, int w)
{
    const struct ss_wl *x = &ss->wl[w];

    return x->n_placed > 0 && x->pool == pool && ss_w(ss, w)->preemptible &&
           !(x->flags & (WL_EVICTED | WL_TOUCHED)) && (x->flags & WL_ACTIVE);
}

#define PATH_LEVELS 32   /* levels of a queue's path that order victims */

static void meeting_level(const struct sched_session *ss, int qa, int qb, int *a, int *b);

/* How far queue q is above its GPU fair share in the pool. */
static int64_t over_share(const struct sched_session *ss, int q, int pool)
{
    const struct ss_qp *a = &ss->qp[(size_t)q * (size_t)ss->n_pools + (size_t)pool];
    return a->alloc[SCHED_GPU] - a->fair[SCHED_GPU];
}

/* q's path from the top (its department first, q last); returns its length. */
static int path_of(const struct sched_session *ss, int q, int *path)
{
    int d = ss->queues[q].depth, n = d + 1 < PATH_LEVELS ? d + 1 : PATH_LEVELS;

    for (; q >= 0; q = ss->queues[q].parent, d--)
        if (d < PATH_LEVELS)
            path[d] = q;
    return n;
}

/* Victim preference between leaf queues: the one whose path is further
 * above its fair share (scratch.q_over), level by level from the top, the
 * first level where they differ decides: 1 when a goes first, -1 when b
 * does, 0 when neither. */
static int path_cmp(const struct search *s, int a, int b)
{
    const struct scratch *x = s->ss->victim_scratch;
    const int *pa = &x->q_path[x->q_path_off[a]], *pb = &x->q_path[x->q_path_off[b]];
    int na = x->q_path_off[a + 1] - x->q_path_off[a], nb = x->q_path_off[b + 1] - x->q_path_off[b];
    int i;

    for (i = 0; i < na && i < nb; i++)
        if (x->q_over[pa[i]] != x->q_over[pb[i]])
            return x->q_over[pa[i]] > x->q_over[pb[i]] ? 1 : -1;
    return 0;
}

static int path_before(const void *ctx, int a, int b)
{
    return path_cmp(ctx, a, b) > 0;
}

/* Every queue's path, once per cycle (the tree does not change). */
static int build_paths(struct sched_session *ss, struct scratch *x)
{
    int q, at = 0, leaf = -1;

    x->q_path_off = sched__calloc(ss->arena, (size_t)ss->n_queues + 2, sizeof(int));
    x->q_path = sched__calloc(ss->arena, (size_t)ss->n_queues * PATH_LEVELS + 1, sizeof(int));
    x->q_over = sched__calloc(ss->arena, (size_t)ss->n_queues + 1, sizeof(int64_t));
    if (!x->q_path_off || !x->q_path || !x->q_over)
        return SCHED_ENOMEM;
    x->even_paths = 1;
    for (q = 0; q < ss->n_queues; q++) {
        int n = path_of(ss, q, &x->q_path[at]);
        x->q_path_off[q] = at;
        at += n;
        if (ss->queues[q].is_leaf && leaf < 0)
            leaf = n;
        if (ss->queues[q].is_leaf && n != leaf)
            x->even_paths = 0;
    }
    x->q_path_off[ss->n_queues] = at;
    return SCHED_OK;
}

/* path_before(), then the lower index: a total order when every leaf's
 * path has the same length (equal paths are then equal level by level). */
static int path_then_index(const void *ctx, int a, int b)
{
    int c = path_cmp(ctx, a, b);

    return c > 0 || (c == 0 && a < b);
}

/* scratch.q_rank[leaf]: its place in victim preference (equal paths share
 * one). The stable sort of the leaves in index order puts them by
 * path_then_index() when every path has the same length, a total order:
 * then the pool's last order, where a change moved few queues, is sorted
 * again by insertion to the same result. */
static void rank_queues(struct search *s)
{
    struct sched_session *ss = s->ss;
    struct scratch *x = ss->victim_scratch;
    struct pool_units *pc = &x->pc[s->pool];
    int q, n = 0, rank = 0, i, kept = x->even_paths && pc->leaf_order;

    for (q = 0; q < ss->n_queues; q++) {
        x->q_over[q] = over_share(ss, q, s->pool);
        if (ss->queues[q].is_leaf) {
            x->q_order[n] = kept ? pc->leaf_order[n] : q;
            n++;
        }
    }
    if (!kept) {
        sched__sort_with(x->q_order, x->q_tmp, n, path_before, s);
    } else {
        for (i = 1; i < n; i++) {
            int v = x->q_order[i];
            for (q = i; q > 0 && path_then_index(s, v, x->q_order[q - 1]); q--)
                x->q_order[q] = x->q_order[q - 1];
            x->q_order[q] = v;
        }
    }
    if (x->even_paths && !pc->leaf_order)
        pc->leaf_order = sched__calloc(ss->arena, (size_t)ss->n_queues + 1, sizeof(int));
    if (x->even_paths && pc->leaf_order)
        memcpy(pc->leaf_order, x->q_order, sizeof(int) * (size_t)n);
    for (q = 0; q < n; q++) {
        if (q > 0 && path_before(s, x->q_order[q - 1], x->q_order[q]))
            rank++;
        x->q_rank[x->q_order[q]] = rank;
    }
}

/* Victim preference between units is the queue's rank (rank_queues()),
 * then the keys of the workload: the lower priority, then the newer (the
 * later submission, then the later entry of the snapshot), then, inside
 * one workload, the later pod, and its whole unit last. Everything after
 * the rank is fixed for the cycle, so a pool's running workloads are put
 * in that order once (workload_before()) and each collection only sorts
 * by rank, stably (collect_units()). */
static int workload_before(const void *ctx, int a, int b)
{
    const struct sched_session *ss = ctx;
    const struct sched_workload *va = ss_w(ss, a), *vb = ss_w(ss, b);

    if (va->priority != vb->priority)
        return va->priority < vb->priority;
    if (va->queued_seq != vb->queued_seq)
        return va->queued_seq > vb->queued_seq;
    return a > b;
}

/* The pool's running workloads in victim-key order, sorted once per
 * session (the running list is the one of the cycle's start; a kept
 * session's departures and rejoins move it: sched__running_changed()). */
static const int *running_by_keys(struct sched_session *ss, struct scratch *x, int pool)
{
    const struct ss_pool *p = &ss->pools[pool];
    int *order;

    if (x->by_keys[pool])
        return x->by_keys[pool];
    order = sched__calloc(ss->arena, (size_t)p->n_running + 1, sizeof(int));
    if (!order)
        return NULL;
    x->cap_by_keys[pool] = p->n_running + 1;
    if (p->n_running > 0)
        memcpy(order, p->running, sizeof(int) * (size_t)p->n_running);
    if (sched__sort(ss->arena, order, p->n_running, workload_before, ss) != SCHED_OK)
        return NULL;
    x->by_keys[pool] = order;
    return order;
}

/* Where w goes among order[0..n) (victim-key order): the first that w is before. */
static int by_keys_place(const struct sched_session *ss, const int *order, int n, int w)
{
    int lo = 0, hi = n;

    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (workload_before(ss, order[mid], w))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Pool's running list lost w (joined 0) or gained it (session.c, Steps 5
 * and 6): its workloads by victim keys follow, w taken out where it is or
 * put in at its place (the order reads the fixed keys alone, so it stays
 * what a sort of the new list gives). A workload that joins has units no
 * collection holds: they are collected again. One that left holds no pod,
 * so its units read as dead (unit_dead()), as those of a unit that died
 * within a log do (Invariant 2): the units collected stay. */
int sched__running_changed(struct sched_session *ss, int pool, int w, int joined)
{
    struct scratch *x = ss->victim_scratch;
    int *order, n, i;

    if (!x || !x->by_keys)
        return SCHED_OK;
    if (joined)
        x->pc[pool].k_kind = -1;
    if (!(order = x->by_keys[pool]))
        return SCHED_OK;
    n = ss->pools[pool].n_running + (joined ? -1 : 1);   /* before the change */
    if (!joined) {
        for (i = 0; i < n && order[i] != w; i++)
            ;
        if (i < n)
            memmove(&order[i], &order[i + 1], sizeof(int) * (size_t)(n - i - 1));
        else
            x->by_keys[pool] = NULL;   /* not there: sorted again when read */
        return SCHED_OK;
    }
    if (sched__ints_room(ss->arena, &x->by_keys[pool], &x->cap_by_keys[pool], n, n + 1, 16) !=
        SCHED_OK) {
        x->by_keys[pool] = NULL;
        return SCHED_ENOMEM;
    }
    order = x->by_keys[pool];
    i = by_keys_place(ss, order, n, w);
    memmove(&order[i + 1], &order[i], sizeof(int) * (size_t)(n - i));
    order[i] = w;
    return SCHED_OK;
}

static const char *keyed_differs(const struct sched_session *ss, int p);

/* Tests: each pool's running workloads by victim keys, where kept, are
 * its running list sorted by the keys, and its units in key order, where
 * they hold, a fresh collection's (keyed_differs()). */
const char *sched__victims_differ(const struct sched_session *ss)
{
    const struct scratch *x = ss->victim_scratch;
    const char *why;
    int p, i, j;

    for (p = 0; x && x->floor && p < ss->n_pools; p++) {
        struct host_floor f = floor_of(ss, p);
        if (memcmp(&f, &x->floor[p], sizeof(f)) != 0)
            return "what every ready node of a pool has at least";
    }
    for (p = 0; x && x->by_keys && p < ss->n_pools; p++) {
        const int *order = x->by_keys[p];
        const struct ss_pool *pool = &ss->pools[p];
        for (i = 0; order && i < pool->n_running; i++) {
            if (i > 0 && !workload_before(ss, order[i - 1], order[i]))
                return "a pool's running workloads by victim keys: out of order";
            for (j = 0; j < pool->n_running && pool->running[j] != order[i]; j++)
                ;
            if (j == pool->n_running)
                return "a pool's running workloads by victim keys: one not running there";
        }
        if (order && (why = keyed_differs(ss, p)) != NULL)
            return why;
    }
    return NULL;
}

/* What a unit's pods ask of resource r now (its cost: GPU, then CPU). */
static int64_t unit_cost(const struct sched_session *ss, const struct unit *u, int r)
{
    return ss->wl[u->w].req[r] * (u->pod >= 0 ? 1 : ss->wl[u->w].n_placed);
}

/* A collected unit's keys besides its workload and pod. */
static void price_unit(const struct sched_session *ss, struct unit *u)
{
    u->cost = unit_cost(ss, u, SCHED_GPU);
    u->cost2 = unit_cost(ss, u, SCHED_CPU);
    u->k_queue = ss_w(ss, u->w)->queue;
}

/* Whether this attempt may take the unit: the mode's rule (reclaim: another
 * queue; preempt: the same queue, lower priority), and not taken already. */
static inline int unit_dead(const struct search *s, const struct unit *u)
{
    const struct ss_wl *x = &s->ss->wl[u->w];
    const struct sched_workload *v = ss_w(s->ss, u->w), *jw = ss_w(s->ss, s->j);

    if (u->w == s->j || (x->flags & (WL_EVICTED | WL_TOUCHED)))
        return 1;
    if (s->mode == MODE_RECLAIM && v->queue == jw->queue)
        return 1;
    if (s->mode == MODE_PREEMPT && (v->queue != jw->queue || v->priority >= jw->priority))
        return 1;
    if (u->pod >= 0)
        return s->ss->pods[u->w][u->pod].node < 0;
    return x->n_placed == 0;
}

/* Groups the live units of s->elig by the nodes they have pods on,
 * keeping preference order; the pool's by_first lists the nodes holding
 * one in order of their most preferred unit, node_mark names that unit.
 * Only the nodes holding a unit are touched: those of the pool's last
 * grouping start over (Invariant 1: no other node of the pool holds a
 * count or a mark), each live unit's pods are walked once, filing a
 * (node, unit) pair per node it is on, and the pairs are then put in
 * place by a counting sort on the node. */
static void bucket_by_node(struct search *s, struct scratch *x)
{
    const struct sched_session *ss = s->ss;
    struct pool_units *pc = &x->pc[s->pool];
    int *node_units = pc->node_units;
    int i, k, end, n_pairs = 0, start = 0;

    for (i = 0; i < pc->n_by_first; i++) {
        x->node_cnt[pc->by_first[i]] = 0;
        x->node_mark[pc->by_first[i]] = -1;
    }
    pc->n_by_first = 0;
    for (i = 0; i < s->n_elig; i++) {
        int e = s->elig[i];
        const struct unit *u = &s->units[e];
        if (unit_dead(s, u))
            continue;
        k = u->pod >= 0 ? u->pod : 0;
        end = u->pod >= 0 ? u->pod + 1 : ss_w(ss, u->w)->n_pods;
        for (; k < end; k++) {
            int node = ss->pods[u->w][k].node;
            if (node < 0 || x->node_mark[node] == e)
                continue;
            x->node_mark[node] = e;
            if (x->node_cnt[node]++ == 0)
                pc->by_first[pc->n_by_first++] = node;
            x->pair_node[n_pairs] = node;
            x->pair_unit[n_pairs++] = e;
        }
    }
    for (i = 0; i < pc->n_by_first; i++) {
        int n = pc->by_first[i];
        x->node_off[n] = start;
        start += x->node_cnt[n];
        x->node_cnt[n] = 0;
    }
    for (i = 0; i < n_pairs; i++) {
        int n = x->pair_node[i];
        node_units[x->node_off[n] + x->node_cnt[n]++] = x->pair_unit[i];
    }
    /* the first unit filed under a node is its most preferred */
    for (i = 0; i < pc->n_by_first; i++)
        x->node_mark[pc->by_first[i]] = node_units[x->node_off[pc->by_first[i]]];
}

/* GuaranteeDeservedQuota, reclaimer side: queue qr (j's queue, or its
 * ancestor where j's branch meets a victim's) stays within its deserved
 * quota with `pods` more pods of j. A non-preemptible j counts only
 * non-preemptible work (preemptible work beside it may still be taken
 * back); CPU and memory deserved 0 are not managed. */
static int reclaimer_within_deserved(const struct sched_session *ss, int j, const struct ss_qp *qr,
                                     int pods)
{
    int np = !ss_w(ss, j)->preemptible, r;

    for (r = 0; r < SCHED_NRES; r++) {
        int64_t want = ss->wl[j].req[r] * pods, bound = sched__np_bound(qr, r);
        if (want > 0 && bound != SS_INF && (np ? qr->alloc_np[r] : qr->alloc[r]) + want > bound)
            return 0;
    }
    return 1;
}

/* The victim side of the two strategies, for `held` of resource r by
 * queue qv (where the branches meet): more than its allocatable share
 * (MaintainFairShare), or more than its deserved quota while the
 * reclaimer side stays within its own (GuaranteeDeservedQuota). */
static int victim_side_over(const struct ss_qp *qv, int r, int64_t held, int guarantee)
{
    int64_t bound = sched__np_bound(qv, r);

    return held > sched__allocatable(qv, r) || (guarantee && bound != SS_INF && held > bound);
}

/* The pool's answers about its queues (queue_over_bits(), siblings_over()),
 * kept for the pool's state (pool_version) they were found in: they read
 * only the queues' figures there. NULL when out of memory. */
static struct pool_units *queue_answers(struct sched_session *ss, int pool)
{
    struct scratch *x = scratch_of(ss);
    struct pool_units *pc;

    if (!x)
        return NULL;
    pc = &x->pc[pool];
    if (!pc->o_over) {
        pc->o_over = sched__calloc(ss->arena, (size_t)ss->n_queues + 1, 1);
        pc->s_over = sched__calloc(ss->arena, (size_t)ss->n_queues + 1, 1);
        if (!pc->o_over || !pc->s_over)
            return NULL;
    }
    if (pc->o_version != ss->pool_version[pool]) {
        memset(pc->o_over, 0, (size_t)ss->n_queues);
        memset(pc->s_over, 0, (size_t)ss->n_queues);
        pc->o_version = ss->pool_version[pool];
    }
    return pc;
}

/* Whether queue av, where a victim's branch meets the reclaimer's, holds
 * more than the strategies let it keep: bit g set when it does with
 * guarantee g (the reclaimer's side within its deserved quota); bit 2:
 * known. */
static uint8_t queue_over_bits(const struct sched_session *ss, struct pool_units *pc, int pool,
                               int av)
{
    const struct ss_qp *qv = &ss->qp[(size_t)av * (size_t)ss->n_pools + (size_t)pool];
    int r, g;

    if (!pc->o_over[av]) {
        pc->o_over[av] = 4;
        for (g = 0; g < 2; g++)
            for (r = 0; r < SCHED_NRES; r++)
                if (qv->alloc[r] > 0 && victim_side_over(qv, r, qv->alloc[r], g)) {
                    pc->o_over[av] |= (uint8_t)(1 << g);
                    break;
                }
    }
    return pc->o_over[av];
}

static int victim_queue_over(const struct search *s, int av, int guarantee)
{
    struct pool_units *pc = queue_answers(s->ss, s->pool);

    if (!pc) {
        s->ss->oom = 1;
        return 0;
    }
    return queue_over_bits(s->ss, pc, s->pool, av) >> guarantee & 1;
}

/* The queues beside q (its siblings, or the other top queues): bit g set
 * when one of them is over with guarantee g (queue_over_bits()). */
static uint8_t siblings_over(const struct sched_session *ss, struct pool_units *pc, int pool, int q)
{
    int parent = ss->queues[q].parent, i;
    int n = parent >= 0 ? ss->queues[parent].n_children : ss->n_queues;

    if (!pc->s_over[q]) {
        pc->s_over[q] = 4;
        for (i = 0; i < n; i++) {
            int sib = parent >= 0 ? ss->queues[parent].children[i] : i;
            if (sib == q || (parent < 0 && ss->queues[sib].parent >= 0))
                continue;
            pc->s_over[q] |= queue_over_bits(ss, pc, pool, sib) & 3;
        }
    }
    return pc->s_over[q];
}

/* Could a unit of leaf queue v be a reclaim victim for s->j at all? The
 * queue-level half of reclaim_set_valid(), for a first victim. guarantee[d]
 * caches reclaimer_within_deserved() for j's ancestor at depth d (-1: not
 * asked yet), d < PATH_LEVELS. */
static int queue_may_lose(const struct search *s, int v, int *guarantee)
{
    const struct sched_session *ss = s->ss;
    int ar, av, d;

    meeting_level(ss, ss_w(ss, s->j)->queue, v, &ar, &av);
    d = ss->queues[ar].depth < PATH_LEVELS ? ss->queues[ar].depth : PATH_LEVELS;
    if (d == PATH_LEVELS || guarantee[d] < 0)
        guarantee[d] = reclaimer_within_deserved(
            ss, s->j, &ss->qp[(size_t)ar * (size_t)ss->n_pools + (size_t)s->pool], s->pods_left);
    return victim_queue_over(s, av, guarantee[d]);
}

/* The entry of entries[0..KEEP) (each `size` bytes, a struct kept first)
 * kept for key in the pool's state version (*hit = 1), or the least
 * recently used one, named so (*hit = 0: its answer is to be made). */
static int kept_slot(void *entries, size_t size, uint64_t version, const int64_t *key,
                     uint64_t *tick, int *hit)
{
    struct kept *least = entries;
    int e, at = 0;

    for (e = 0; e < KEEP; e++) {
        struct kept *c = (struct kept *)((char *)entries + (size_t)e * size);
        if (c->version == version && memcmp(c->key, key, sizeof(c->key)) == 0) {
            c->used = ++*tick;
            *hit = 1;
            return e;
        }
        if (c->used < least->used) {
            least = c;
            at = e;
        }
    }
    least->version = version;
    memcpy(least->key, key, sizeof(least->key));
    least->used = ++*tick;
    *hit = 0;
    return at;
}

/* scratch.q_ok: the queues whose units this attempt may look at: those
 * that may lose (reclaim), j's own queue (preempt); returns how many. A
 * reclaim's answer reads the pool's state, the collection (what_if), j's
 * queue and whether j's side stays within its deserved quota at each level
 * of its path (guarantee[]), so it is kept for those (struct
 * victim_queues). */
static int eligible_queues(struct search *s)
{
    const struct sched_session *ss = s->ss;
    struct scratch *x = ss->victim_scratch;
    struct pool_units *pc = &x->pc[s->pool];
    int jq = ss_w(ss, s->j)->queue, q, n_queues = 0, guarantee[PATH_LEVELS + 1], hit, a;
    struct victim_queues *vq = NULL;
    int64_t key[7] = {jq, s->what_if, 0, 0, 0, 0, 0};

    if (s->mode == MODE_PREEMPT) {   /* j's own queue, if it has units here */
        memset(x->q_ok, 0, (size_t)ss->n_queues);
        x->q_ok[jq] = pc->q_cnt[jq] > 0;
        return x->q_ok[jq];
    }
    for (q = 0; q <= PATH_LEVELS; q++)
        guarantee[q] = -1;
    if (s->mode == MODE_RECLAIM && ss->queues[jq].depth < PATH_LEVELS) {
        /* every level of j's path: bit d of key[2] */
        for (a = jq; a >= 0; a = ss->queues[a].parent) {
            int d = ss->queues[a].depth;
            guarantee[d] = reclaimer_within_deserved(
                ss, s->j, &ss->qp[(size_t)a * (size_t)ss->n_pools + (size_t)s->pool], s->pods_left);
            key[2] |= (int64_t)guarantee[d] << d;
        }
        vq = &pc->vq[kept_slot(pc->vq, sizeof(pc->vq[0]), ss->pool_version[s->pool], key, &pc->tick,
                               &hit)];
        if (!vq->ok && !(vq->ok = sched__calloc(ss->arena, (size_t)ss->n_queues + 1, 1))) {
            vq->k.version = UINT64_MAX;
            vq = NULL;
        } else if (hit) {
            memcpy(x->q_ok, vq->ok, (size_t)ss->n_queues);
            return vq->n;
        }
    }
    for (q = 0; q < ss->n_queues; q++) {
        x->q_ok[q] = 0;
        if (pc->q_cnt[q] == 0 || q == jq)
            continue;
        if (s->mode == MODE_RECLAIM && !queue_may_lose(s, q, guarantee))
            continue;
        x->q_ok[q] = 1;
        n_queues++;
    }
    if (vq) {
        memcpy(vq->ok, x->q_ok, (size_t)ss->n_queues);
        vq->n = n_queues;
    }
    return n_queues;
}

/* Whether queue q or an ancestor holds more than its limit in the pool
 * (a limit of 0, or one lowered below what it runs). Such a queue's work
 * is not moved: a move places its pods again, and no placement may take a
 * queue over its limit (KAI's consolidation re-allocates its victims
 * under the same capacity checks), so it can only be stopped. */
static int queue_over_limit(const struct sched_session *ss, int q, int pool)
{
    int r;

    for (; q >= 0; q = ss->queues[q].parent) {
        const struct ss_qp *a = &ss->qp[(size_t)q * (size_t)ss->n_pools + (size_t)pool];
        for (r = 0; r < SCHED_NRES; r++)
            if (a->limit[r] != SS_INF && a->alloc[r] > a->limit[r])
                return 1;
    }
    return 0;
}

/* The units this attempt may look at, in preference order: those of the
 * queues of scratch.q_ok (n_queues of them), everyone's for moves but
 * those of a queue above its limit (queue_over_limit()). */
static void list_eligible(struct search *s, int n_queues)
{
    const struct sched_session *ss = s->ss;
    struct scratch *x = ss->victim_scratch;
    const struct pool_units *pc = &x->pc[s->pool];
    int q, i, listed = 0;

    s->elig = x->elig;
    s->n_elig = 0;
    if (s->mode == MODE_MOVE) {
        for (i = 0; i < s->n_units; i++)
            if (!queue_over_limit(ss, s->units[i].k_queue, s->pool))
                s->elig[s->n_elig++] = i;
        return;
    }
    for (q = 0; q < ss->n_queues && listed < n_queues; q++) {
        if (!x->q_ok[q])
            continue;
        for (i = 0; i < pc->q_cnt[q]; i++)
            s->elig[s->n_elig++] = pc->q_items[pc->q_off[q] + i];
        listed++;
    }
    if (n_queues < 2)
        return;  /* one queue's run is in preference order already */
    if ((int64_t)s->n_elig * 16 < s->n_units) {
        sched__sort_with(s->elig, x->tmp, s->n_elig, sched__ascending, NULL);
        return;
    }
    /* most units qualify: one pass over them all keeps their order */
    s->n_elig = 0;
    for (i = 0; i < s->n_units; i++)
        if (x->q_ok[s->units[i].k_queue])
            s->elig[s->n_elig++] = i;
}

static void gather_eligible(struct search *s)
{
    list_eligible(s, s->mode == MODE_MOVE ? 0 : eligible_queues(s));
}

/* The clock that decides runtime protection in collections of kind in
 * pool p (protected_by_runtime()), or INT64_MIN where none protects. */
static int64_t runtime_clock(const struct sched_session *ss, int p, int kind)
{
    return kind == 0 && ss->in->pools[p].min_guaranteed_runtime_ms > 0 ? ss->in->now_ms
                                                                       : INT64_MIN;
}

/* Whether pool p's units in key order hold for kind in this state
 * (Invariant 2): collected for that kind, with the clock of this state
 * where runtime protects, and the state descends from the one they were
 * collected in by logged changes alone (the same log base, the log's
 * first k_pos entries the same ones; or, collected with an empty log,
 * the same units_base). */
static int keyed_holds(const struct sched_session *ss, int p, int kind)
{
    const struct pool_units *pc = &((const struct scratch *)ss->victim_scratch)->pc[p];

    if (pc->k_kind != kind || pc->k_clock != runtime_clock(ss, p, kind))
        return 0;
    if (pc->k_pos == 0 && pc->k_units == ss->units_base)
        return 1;   /* the state with an empty log, as every log since began or was undone */
    return pc->k_base == ss->log_base && ss->n_undo >= pc->k_pos &&
           (pc->k_pos == 0 || ss->undo[pc->k_pos - 1].serial == pc->k_serial);
}

/* The units a collection of kind in pool p finds of its running workload
 * w, in key order, into out[] (room for w's pods and one more), named by
 * workload and pod alone; how many. An elastic workload's pods above its
 * minimum (the last ones) come one at a time, unprotected by the runtime,
 * before the whole workload; moves (kind 1) take the whole workload only. */
static int workload_units(const struct sched_session *ss, int p, int w, int kind,
                          struct unit *out)
{
    const struct sched_workload *v = ss_w(ss, w);
    int k, n = 0, surplus;

    if (!victim_base_ok(ss, p, w) || (kind == 1 && sched__topo_pinned(ss, w, p)))
        return 0;   /* a required topology's pods do not move out of their domain */
    surplus = ss->wl[w].n_placed - v->min_pods;
    for (k = v->n_pods - 1; kind != 1 && k >= 0 && surplus > 0; k--)
        if (ss->pods[w][k].node >= 0) {
            out[n].w = w;
            out[n++].pod = k;
            surplus--;
        }
    if (kind != 0 || !protected_by_runtime(ss, w)) {
        out[n].w = w;
        out[n++].pod = -1;
    }
    return n;
}

/* Collects the pool's candidate units in key order (pc->keyed): workloads
 * in running_by_keys() order, each one's units (workload_units()); and
 * how many each queue has. */
static int collect_keyed(struct search *s, int kind)
{
    struct sched_session *ss = s->ss;
    const struct ss_pool *pool = &ss->pools[s->pool];
    struct scratch *x = ss->victim_scratch;
    struct pool_units *pc = &x->pc[s->pool];
    int i, k, n, cap = pool->running_pods + pool->n_running;
    const int *running;

    if (scratch_units(ss, cap) != SCHED_OK)
        return SCHED_ENOMEM;
    if (!pc->q_off) {
        pc->q_off = sched__calloc(ss->arena, (size_t)ss->n_queues + 1, sizeof(int));
        pc->q_cnt = sched__calloc(ss->arena, (size_t)ss->n_queues + 1, sizeof(int));
        pc->k_qcnt = sched__calloc(ss->arena, (size_t)ss->n_queues + 1, sizeof(int));
        pc->last_rank = sched__calloc(ss->arena, (size_t)ss->n_queues + 1, sizeof(int));
        pc->b_queues = sched__calloc(ss->arena, (size_t)ss->n_queues + 1, 1);
        if (!pc->q_off || !pc->q_cnt || !pc->k_qcnt || !pc->last_rank || !pc->b_queues)
            return SCHED_ENOMEM;
    }
    if (cap > pc->cap) {
        pc->keyed = sched__calloc(ss->arena, (size_t)cap + 1, sizeof(struct unit));
        pc->units = sched__calloc(ss->arena, (size_t)cap + 1, sizeof(struct unit));
        pc->q_items = sched__calloc(ss->arena, (size_t)cap + 1, sizeof(int));
        /* a unit is filed once per node it has pods on: a whole elastic
         * workload and its surplus pods both, hence twice the room */
        pc->node_units = sched__calloc(ss->arena, 2 * (size_t)cap + 1, sizeof(int));
        if (!pc->keyed || !pc->units || !pc->q_items || !pc->node_units)
            return SCHED_ENOMEM;
        pc->cap = cap;
    }
    running = running_by_keys(ss, x, s->pool);
    if (!running)
        return SCHED_ENOMEM;
    s->units = pc->keyed;
    s->n_units = 0;
    for (i = 0; i < pool->n_running; i++) {
        n = workload_units(ss, s->pool, running[i], kind, &s->units[s->n_units]);
        for (k = 0; k < n; k++)
            price_unit(ss, &s->units[s->n_units++]);
    }
    memset(pc->k_qcnt, 0, sizeof(int) * (size_t)ss->n_queues);
    for (i = 0; i < s->n_units; i++)
        pc->k_qcnt[pc->keyed[i].k_queue]++;
    pc->n_keyed = s->n_units;
    pc->k_kind = kind;
    pc->k_units = ss->units_base;
    pc->k_clock = runtime_clock(ss, s->pool, kind);
    pc->k_base = ss->log_base;
    pc->k_pos = ss->n_undo;
    pc->k_serial = ss->n_undo > 0 ? ss->undo[ss->n_undo - 1].serial : 0;
    pc->k_gen++;
    return SCHED_OK;
}

/* Whether a collection in pool p in this state would still find unit u:
 * its workload a candidate victim there, and its pod, if one, placed. */
static int unit_found(const struct sched_session *ss, int p, const struct unit *u)
{
    return victim_base_ok(ss, p, u->w) && (u->pod < 0 || ss->pods[u->w][u->pod].node >= 0);
}

/* Tests: pool p's units in key order, where they hold in this state
 * (keyed_holds()), are those a fresh collection finds, in its order, once
 * the units that died are passed over (Invariant 2). NULL: they are. */
static const char *keyed_differs(const struct sched_session *ss, int p)
{
    const struct scratch *x = ss->victim_scratch;
    const struct pool_units *pc = &x->pc[p];
    const struct ss_pool *pool = &ss->pools[p];
    const char *why = NULL;
    struct unit *fresh;
    int i, k, n, at = 0;

    if (pc->k_kind < 0 || !keyed_holds(ss, p, pc->k_kind))
        return NULL;
    fresh = malloc(sizeof(*fresh) * ((size_t)pool->running_pods + 1));
    if (!fresh)
        return "a pool's units in key order, kept: no memory to compare them";
    for (i = 0; i < pool->n_running && !why; i++) {
        n = workload_units(ss, p, x->by_keys[p][i], pc->k_kind, fresh);
        for (k = 0; k < n && !why; k++, at++) {
            while (at < pc->n_keyed && !unit_found(ss, p, &pc->keyed[at]))
                at++;
            if (at == pc->n_keyed || pc->keyed[at].w != fresh[k].w ||
                pc->keyed[at].pod != fresh[k].pod)
                why = "a pool's units in key order, kept: not those a collection finds";
        }
    }
    for (; !why && at < pc->n_keyed; at++)
        if (unit_found(ss, p, &pc->keyed[at]))
            why = "a pool's units in key order, kept: one a collection does not find";
    free(fresh);
    return why;
}

/* Puts the pool's units in preference order (pc->units), each one's rank
 * its place, and lists each queue's run of them (q_items): a stable
 * counting sort of the units in key order by their queue's rank
 * (scratch.q_rank) keeps key order within a rank. */
static void rank_units(struct sched_session *ss, struct scratch *x, struct pool_units *pc)
{
    int i, q, at = 0;

    memset(x->rank_at, 0, sizeof(int) * (size_t)(ss->n_queues + 1));
    for (i = 0; i < pc->n_keyed; i++)
        x->rank_at[x->q_rank[pc->keyed[i].k_queue] + 1]++;
    for (i = 1; i <= ss->n_queues; i++)
        x->rank_at[i] += x->rank_at[i - 1];
    for (q = 0; q < ss->n_queues; q++) {
        pc->q_off[q] = at;
        at += pc->k_qcnt[q];
        pc->q_cnt[q] = 0;
    }
    for (i = 0; i < pc->n_keyed; i++) {
        const struct unit *u = &pc->keyed[i];
        int to = x->rank_at[x->q_rank[u->k_queue]]++;
        pc->units[to] = *u;
        pc->units[to].rank = to;
        pc->q_items[pc->q_off[u->k_queue] + pc->q_cnt[u->k_queue]++] = to;
    }
    memcpy(pc->last_rank, x->q_rank, sizeof(int) * (size_t)ss->n_queues);
    pc->ranked_gen = pc->k_gen;
}

/* The candidate units of the pool, in preference order: the pool's last
 * collection when its state has not changed since; else its units in key
 * order (collected again only when they no longer hold, Invariant 2), put
 * in the order of the queues' ranks in this state (sorted again only when
 * a rank moved). */
static int collect_units(struct search *s)
{
    struct sched_session *ss = s->ss;
    struct scratch *x = ss->victim_scratch;
    struct pool_units *pc = &x->pc[s->pool];
    int kind = s->mode == MODE_MOVE ? 1 : s->what_if ? 2 : 0;

    s->collected = 1;
    s->on_node = x->on_node;
    if (pc->kind == kind &&
        (pc->version == ss->version || pc->pool_version == ss->pool_version[s->pool])) {
        pc->version = ss->version;   /* the same units in this state too */
        s->units = pc->units;
        s->n_units = pc->n;
        return SCHED_OK;
    }
    pc->b_version = UINT64_MAX;  /* the units change: so does their grouping */
    if (!keyed_holds(ss, s->pool, kind) && collect_keyed(s, kind) != SCHED_OK)
        return SCHED_ENOMEM;
    s->on_node = x->on_node;   /* grown by collect_keyed() */
    rank_queues(s);
    if (pc->ranked_gen != pc->k_gen ||
        memcmp(pc->last_rank, x->q_rank, sizeof(int) * (size_t)ss->n_queues) != 0)
        rank_units(ss, x, pc);
    s->units = pc->units;
    s->n_units = pc->n_keyed;
    pc->version = ss->version;
    pc->pool_version = ss->pool_version[s->pool];
    pc->kind = kind;
    pc->n = pc->n_keyed;
    return SCHED_OK;
}

/* ---- Reclaim validity, checked before each unit is taken ---- */

/* The ancestors of qa and qb (or themselves) that are siblings: children of
 * their lowest common ancestor, or top-level queues. */
static void meeting_level(const struct sched_session *ss, int qa, int qb, int *a, int *b)
{
    int da = ss->queues[qa].depth, db = ss->queues[qb].depth;

    while (da > db) { qa = ss->queues[qa].parent; da--; }
    while (db > da) { qb = ss->queues[qb].parent; db--; }
    while (ss->queues[qa].parent != ss->queues[qb].parent) {
        qa = ss->queues[qa].parent;
        qb = ss->queues[qb].parent;
    }
    *a = qa;
    *b = qb;
}

static int in_subtree(const struct sched_session *ss, int q, int root)
{
    for (; q >= 0; q = ss->queues[q].parent)
        if (q == root)
            return 1;
    return 0;
}

/* What taking unit u frees of resource r: a GPU-memory request frees the
 * charge of the devices its pods hold. */
static int64_t unit_frees(const struct search *s, const struct unit *u, int r)
{
    const struct sched_session *ss = s->ss;
    const struct sched_workload *v = ss_w(ss, u->w);
    int pods = u->pod >= 0 ? 1 : ss->wl[u->w].n_placed, k;
    int64_t sum = 0;

    if (r != SCHED_GPU || v->gpu_memory_mib == 0)
        return ss->wl[u->w].req[r] * pods;
    for (k = 0; k < v->n_pods; k++)
        if (ss->pods[u->w][k].node >= 0 && (u->pod < 0 || u->pod == k))
            sum += (int64_t)sched_shared_devices(v) *
                   sched__dev_charge(ss, u->w, ss->pods[u->w][k].node);
    return sum;
}

/* KAI's saturation rule for one resource where the reclaimer's branch
 * (holding ar_alloc of ar_fair) meets a victim's (av_alloc of av_fair)
 * above the reclaiming project: the reclaimer's side may end above its
 * fair share only while less saturated (allocated / fair share) than the
 * victim's (a victim side with no fair share does not hold it back). */
static int less_saturated(int64_t ar_alloc, int64_t ar_fair, int64_t av_alloc, int64_t av_fair)
{
    if (ar_alloc <= ar_fair || av_fair <= 0)
        return 1;
    if (ar_fair <= 0)
        return 0;
    return (__int128)ar_alloc * av_fair < (__int128)av_alloc * ar_fair;
}

/* What one more pod of j adds to resource r (a GPU-memory pod: its charge
 * on the node it would take, when above its estimate). */
static int64_t pod_ask(const struct search *s, int r)
{
    return r == SCHED_GPU && s->pod_gpu > 0 ? s->pod_gpu : s->ss->wl[s->j].req[r];
}

/* What the units set[0..n) free of resource r inside queue root's subtree. */
static int64_t set_frees_in(const struct search *s, const int *set, int n, int root, int r)
{
    int64_t sum = 0;
    int k;

    for (k = 0; k < n; k++)
        if (in_subtree(s->ss, s->units[set[k]].k_queue, root))
            sum += unit_frees(s, &s->units[set[k]], r);
    return sum;
}

/* The saturation rule for the set, as the attempt would end with it:
 * wherever j's branch meets a unit's above j's project, j's side with the
 * pods still to place, and without the set's units inside it (a victim of
 * a sibling project frees room on j's side too), stays less saturated than
 * the unit's side without the set's units in it, in every resource j
 * asks. */
static int set_keeps_saturation(const struct search *s, const int *set, int n)
{
    const struct sched_session *ss = s->ss;
    int jq = ss_w(ss, s->j)->queue, i, r, ar, av;

    for (i = 0; i < n; i++) {
        meeting_level(ss, jq, s->units[set[i]].k_queue, &ar, &av);
        if (ar == jq)
            continue;
        for (r = 0; r < SCHED_NRES; r++) {
            const struct ss_qp *a = &ss->qp[(size_t)ar * (size_t)ss->n_pools + (size_t)s->pool];
            const struct ss_qp *v = &ss->qp[(size_t)av * (size_t)ss->n_pools + (size_t)s->pool];
            if (ss->wl[s->j].req[r] > 0 &&
                !less_saturated(a->alloc[r] + pod_ask(s, r) * s->pods_left -
                                    set_frees_in(s, set, n, ar, r), a->fair[r],
                                v->alloc[r] - set_frees_in(s, set, n, av, r), v->fair[r]))
                return 0;
        }
    }
    return 1;
}

/* What victim side av holds of resource r when set[i] is taken, after
 * set[0..i). An elastic workload taken whole gives its pods above its
 * minimum first (those in set[0..i) among them), and its minimum only
 * then: its side is judged without its surplus, so that taking it whole
 * never takes a side that its surplus pods bring down to its share. */
static int64_t held_before(const struct search *s, const int *set, int i, int av, int r)
{
    const struct sched_session *ss = s->ss;
    const struct unit *u = &s->units[set[i]];
    const struct sched_workload *v = ss_w(ss, u->w);
    int64_t held = ss->qp[(size_t)av * (size_t)ss->n_pools + (size_t)s->pool].alloc[r];
    int k, surplus;

    if (u->pod >= 0 || v->min_pods >= v->n_pods)
        return held - set_frees_in(s, set, i, av, r);
    for (k = 0; k < i; k++)
        if (s->units[set[k]].w != u->w && in_subtree(ss, s->units[set[k]].k_queue, av))
            held -= unit_frees(s, &s->units[set[k]], r);
    surplus = ss->wl[u->w].n_placed - v->min_pods;
    for (k = v->n_pods - 1; k >= 0 && surplus > 0; k--)
        if (ss->pods[u->w][k].node >= 0) {
            struct unit pod = *u;
            pod.pod = k;
            held -= unit_frees(s, &pod, r);
            surplus--;
        }
    return held;
}

/* Is taking units set[0..n) (indices into units, in preference order) valid
 * for a reclaim? Each unit passes one of KAI's strategies before it is
 * taken (an elastic workload's whole unit after its surplus pods:
 * held_before()), and the set keeps the saturation rule: a set that
 * breaks it would fail the attempt (reclaim_holds()), so it is no
 * candidate, and a dearer valid set is searched for instead. */
static int reclaim_set_valid(const struct search *s, const int *set, int n)
{
    const struct sched_session *ss = s->ss;
    int jq = ss_w(ss, s->j)->queue, i, r;

    for (i = 0; i < n; i++) {
        const struct unit *u = &s->units[set[i]];
        int ar, av, ok = 0, guarantee;
        const struct ss_qp *qv;

        meeting_level(ss, jq, u->k_queue, &ar, &av);
        qv = &ss->qp[(size_t)av * (size_t)ss->n_pools + (size_t)s->pool];
        guarantee = reclaimer_within_deserved(
            ss, s->j, &ss->qp[(size_t)ar * (size_t)ss->n_pools + (size_t)s->pool], s->pods_left);
        for (r = 0; r < SCHED_NRES && !ok; r++)
            ok = unit_frees(s, u, r) > 0 &&
                 victim_side_over(qv, r, held_before(s, set, i, av, r), guarantee);
        if (!ok)
            return 0;
    }
    return set_keeps_saturation(s, set, n);
}

/* ---- Node-local fit of the pod once a set is gone ---- */

/* Whether the node's fit for j counts whole devices (fits_without()): j
 * asks whole devices and every device in use holds one whole-device pod
 * alone (the others are empty and the whole ones charged SCHED_MILLI
 * each), so a unit empties the devices of its whole-device pods, no
 * other. It reads only the node and j, which a node's search leaves as
 * they are: asked once per node searched. Counts bits: SS_POPCNT_CLONES. */
SS_POPCNT_CLONES static int whole_fit(const struct search *s)
{
    const struct ss_node *node = &s->ss->nodes[s->node];

    return sched__whole(ss_w(s->ss, s->j)) &&
           node->n_empty + __builtin_popcountll(node->dev_whole) == node->n_gpus &&
           node->gpu_free == (int64_t)SCHED_MILLI * node->n_empty;
}

/* What the unit frees on the node: its whole-device pods' devices, CPU and
 * memory, and, unless the node's fit counts whole devices (s->by_whole:
 * then no reader needs them), each device's charge. */
static void footprint_of(const struct search *s, const struct unit *u, struct footprint *f)
{
    const struct sched_session *ss = s->ss;
    const struct sched_workload *v = ss_w(ss, u->w);
    int32_t per_dev = s->by_whole ? 0 : sched__dev_charge(ss, u->w, s->node);
    int n_gpus = ss->nodes[s->node].n_gpus;
    uint64_t on_node = n_gpus < 64 ? (UINT64_C(1) << n_gpus) - 1 : UINT64_MAX, m;
    int k = u->pod >= 0 ? u->pod : 0, end = u->pod >= 0 ? u->pod + 1 : v->n_pods;

    /* only the node's devices are read (fits_without()) */
    if (!s->by_whole)
        memset(f->dev, 0, sizeof(f->dev[0]) * (size_t)n_gpus);
    f->whole = 0;
    f->cpu = 0;
    f->mem = 0;
    for (; k < end; k++) {
        const struct sched_pod *p = &ss->pods[u->w][k];
        if (p->node != s->node)
            continue;
        for (m = s->by_whole ? 0 : p->devices & on_node; m; m &= m - 1)
            f->dev[__builtin_ctzll(m)] += per_dev;
        if (sched__whole(v))
            f->whole |= p->devices;
        f->cpu += v->cpu_milli;
        f->mem += v->mem_mib;
    }
}

/* Counts bits in its fast path: SS_POPCNT_CLONES. */
SS_POPCNT_CLONES static int fits_without(const struct search *s)
{
    const struct sched_session *ss = s->ss;
    const struct sched_workload *jw = ss_w(ss, s->j);
    const struct ss_node *node = &ss->nodes[s->node];
    int64_t cpu = node->cpu_free, mem = node->mem_free;
    uint64_t whole = node->dev_whole;
    int32_t used[SCHED_MAX_NODE_GPUS];
    int i, d, fresh, empty = 0;

    if (s->by_whole) {
        /* a unit empties the devices of its whole-device pods, no other */
        uint64_t freed = 0;
        for (i = 0; i < s->n_chosen; i++) {
            const struct footprint *f = &s->fp[s->chosen[i]];
            freed |= f->whole;
            cpu += f->cpu;
            mem += f->mem;
        }
        return cpu >= jw->cpu_milli && mem >= jw->mem_mib &&
               node->n_empty + __builtin_popcountll(freed & node->dev_whole) >= jw->gpu_devices;
    }
    memcpy(used, node->dev_used, sizeof(int32_t) * (size_t)node->n_gpus);
    for (i = 0; i < s->n_chosen; i++) {
        const struct footprint *f = &s->fp[s->chosen[i]];
        for (d = 0; d < node->n_gpus; d++)
            used[d] -= f->dev[d];
        whole &= ~f->whole;
        cpu += f->cpu;
        mem += f->mem;
    }
    if (cpu < jw->cpu_milli || mem < jw->mem_mib)
        return 0;
    if (sched__whole(jw)) {
        /* sched__pick_devices() finds devices iff this many are empty */
        for (d = 0; d < node->n_gpus; d++)
            empty += used[d] == 0;
        return empty >= jw->gpu_devices;
    }
    if (jw->gpu_portion > 0 || jw->gpu_memory_mib > 0)
        return sched__pick_devices(ss, s->j, s->node, used, whole, &fresh) != 0;
    return 1;
}

/* ---- The search ---- */

static void sort_ints(int *a, int n)
{
    int i, j, t;

    for (i = 1; i < n; i++)
        for (j = i; j > 0 && a[j] < a[j - 1]; j--) {
            t = a[j];
            a[j] = a[j - 1];
            a[j - 1] = t;
        }
}

/* Units of the chosen set (indices into units, hence preference order), sorted. */
static int chosen_units(const struct search *s, int *out)
{
    int i;

    for (i = 0; i < s->n_chosen; i++)
        out[i] = s->on_node[s->chosen[i]];
    sort_ints(out, s->n_chosen);
    return s->n_chosen;
}

/* Lexicographic on sorted ranks: the set holding the most preferred victims first. */
static int ranks_before(const int *a, int na, const int *b, int nb)
{
    int i;

    for (i = 0; i < na && i < nb; i++)
        if (a[i] != b[i])
            return a[i] < b[i];
    return na < nb;
}

static int move_set_valid(struct search *s, const int *set, int n);
static int still_over(const struct search *s, const int *set, int n, int pods, int u);

/* s->limit_on_node: would a queue on j's path stay over its limit with
 * the pod on this node once the chosen units are gone? */
static int chosen_over(const struct search *s)
{
    int set[MAX_NODE_UNITS], n = chosen_units(s, set);

    return still_over(s, set, n, 1, -1);
}

static void consider(struct search *s, int64_t cost, int64_t cost2)
{
    int set[MAX_NODE_UNITS], n = chosen_units(s, set), better;

    if (s->best_node < 0 || cost != s->best_cost)
        better = s->best_node < 0 || cost < s->best_cost;
    else if (cost2 != s->best_cost2)
        better = cost2 < s->best_cost2;
    else if (n != s->n_best || memcmp(set, s->best, sizeof(int) * (size_t)n) != 0)
        better = ranks_before(set, n, s->best, s->n_best);
    else  /* the same units on another node: the node name decides */
        better = s->ss->nodes[s->node].name_rank < s->ss->nodes[s->best_node].name_rank;
    if (!better)
        return;
    if (s->mode == MODE_RECLAIM && !reclaim_set_valid(s, set, n))
        return;
    if (s->mode == MODE_MOVE && !move_set_valid(s, set, n))
        return;
    memcpy(s->best, set, sizeof(int) * (size_t)n);
    s->n_best = n;
    s->best_cost = cost;
    s->best_cost2 = cost2;
    s->best_node = s->node;
}

/* A whole-gang unit and a single-pod unit of the same workload overlap. */
static int overlaps_chosen(const struct search *s, int i)
{
    const struct unit *u = &s->units[s->on_node[i]];
    int k;

    for (k = 0; k < s->n_chosen; k++) {
        const struct unit *c = &s->units[s->on_node[s->chosen[k]]];
        if (c->w == u->w && (c->pod < 0 || u->pod < 0))
            return 1;
    }
    return 0;
}

static void dfs(struct search *s, int i, int64_t cost, int64_t cost2)
{
    if (++s->steps > MAX_DFS_STEPS)
        return;
    if (s->best_node >= 0 && cost > s->best_cost)
        return;
    if (s->n_chosen > 0 && fits_without(s)) {
        if (!s->limit_on_node || !chosen_over(s)) {
            consider(s, cost, cost2);
            return;  /* a superset only costs more */
        }
        /* the pod fits, but a limit on j's path is still over: a superset may make room */
    }
    if (i >= s->n_on_node || s->n_chosen >= MAX_NODE_UNITS)
        return;
    if (overlaps_chosen(s, i)) {
        dfs(s, i + 1, cost, cost2);
        return;
    }
    s->chosen[s->n_chosen++] = i;
    dfs(s, i + 1, cost + s->units[s->on_node[i]].cost, cost2 + s->units[s->on_node[i]].cost2);
    s->n_chosen--;
    dfs(s, i + 1, cost, cost2);
}

/* Orders a node's units by (cost, preference) so the search meets cheap sets first. */
static void sort_on_node(struct search *s)
{
    int i, j;

    for (i = 1; i < s->n_on_node; i++) {
        int x = s->on_node[i];
        for (j = i; j > 0; j--) {
            const struct unit *a = &s->units[x], *b = &s->units[s->on_node[j - 1]];
            if (a->cost > b->cost || (a->cost == b->cost && a->rank > b->rank))
                break;
            s->on_node[j] = s->on_node[j - 1];
        }
        s->on_node[j] = x;
    }
}

static int node_can_host(const struct search *s, int node)
{
    return sched__node_can_host(s->ss, s->j, node);
}

/* s->pod_gpu from a GPU-memory pod's charge: kept when above its estimate. */
static void keep_pod_charge(struct search *s, int64_t charge)
{
    s->pod_gpu = charge > s->ss->wl[s->j].req[SCHED_GPU] ? charge : 0;
}

/* s->limit_on_node: a GPU-memory pod is charged by the devices of the
 * node it takes (s->pod_gpu, as things are: the node sched__best_node()
 * names). */
static void charge_on_node(struct search *s, int node)
{
    if (s->limit_on_node && ss_w(s->ss, s->j)->gpu_memory_mib > 0)
        keep_pod_charge(s, sched__pod_charge_on(s->ss, s->j, node));
}

/* Searches one node, one that can host j; s->best* keep the best set over
 * the nodes searched. */
static void search_node(struct search *s, int node)
{
    const struct scratch *x = s->ss->victim_scratch;
    const int *node_units = x->pc[s->pool].node_units;
    int i;

    s->node = node;
    charge_on_node(s, node);
    s->n_on_node = 0;
    for (i = x->node_off[node]; i < x->node_off[node] + x->node_cnt[node]; i++)
        s->on_node[s->n_on_node++] = node_units[i];
    if (s->n_on_node == 0)
        return;
    for (i = 0; i < s->n_on_node; i++) {
        struct unit *u = &s->units[s->on_node[i]];
        u->cost = unit_cost(s->ss, u, SCHED_GPU);
        u->cost2 = unit_cost(s->ss, u, SCHED_CPU);
    }
    sort_on_node(s);
    if (s->n_on_node > MAX_NODE_UNITS)
        s->n_on_node = MAX_NODE_UNITS;
    s->by_whole = whole_fit(s);
    for (i = 0; i < s->n_on_node; i++)
        footprint_of(s, &s->units[s->on_node[i]], &s->fp[i]);
    /* if taking every candidate does not make room (on the node, and
     * under the limits when the set must make that too), no subset does
     * (a workload's pods counted once: its whole unit covers its pod
     * units) */
    s->n_chosen = 0;
    for (i = 0; i < s->n_on_node; i++)
        if (s->units[s->on_node[i]].pod < 0)
            s->chosen[s->n_chosen++] = i;
    for (i = 0; i < s->n_on_node; i++)
        if (s->units[s->on_node[i]].pod >= 0 && !overlaps_chosen(s, i))
            s->chosen[s->n_chosen++] = i;
    if (!fits_without(s) || (s->limit_on_node && chosen_over(s)))
        return;
    s->steps = 0;
    s->n_chosen = 0;
    dfs(s, 0, 0, 0);
}

/* The node's non-zero device usages in ascending order, as prefix sums
 * (node->used_prefix), sorted again only after the node changed. */
static const int64_t *used_prefix(struct ss_node *n)
{
    int32_t used[SCHED_MAX_NODE_GPUS];
    int i, j, m = 0;

    if (n->used_prefix_ok)
        return n->used_prefix;
    for (i = 0; i < n->n_gpus; i++)
        if (n->dev_used[i] > 0)
            used[m++] = n->dev_used[i];
    for (i = 1; i < m; i++)
        for (j = i; j > 0 && used[j] < used[j - 1]; j--) {
            int32_t t = used[j]; used[j] = used[j - 1]; used[j - 1] = t;
        }
    n->used_prefix[0] = 0;
    for (i = 0; i < m; i++)
        n->used_prefix[i + 1] = n->used_prefix[i] + used[i];
    n->n_used = m;
    n->used_prefix_ok = 1;
    return n->used_prefix;
}

/* Least milli-GPU that evictions on the node must free before a pod of j
 * fits: the smallest device usages to empty (whole requests), or the
 * overflow of the best device (portions). A lower bound: CPU and memory
 * are not counted. */
static int64_t node_lower_bound(const struct search *s, int node)
{
    const struct sched_workload *jw = ss_w(s->ss, s->j);
    struct ss_node *n = &s->ss->nodes[node];
    int32_t used[SCHED_MAX_NODE_GPUS];
    int i, j, need = jw->gpu_devices - n->n_empty;
    int64_t lb = 0;

    if (sched__whole(jw)) {
        const int64_t *prefix;
        if (need <= 0)
            return 0;  /* enough empty devices already */
        prefix = used_prefix(n);
        return prefix[need < n->n_used ? need : n->n_used];
    }
    if (jw->gpu_portion > 0 || jw->gpu_memory_mib > 0) {
        /* each of the devices it shares must make room for its charge */
        int32_t charge = sched__dev_charge(s->ss, s->j, node);
        for (i = 0; i < n->n_gpus; i++) {
            int64_t over = (n->dev_whole >> i & 1) ? SCHED_MILLI
                                                    : n->dev_used[i] + charge - SCHED_MILLI;
            used[i] = (int32_t)ss_min(ss_max(over, 0), SCHED_MILLI);
        }
        for (i = 1; i < n->n_gpus; i++)
            for (j = i; j > 0 && used[j] < used[j - 1]; j--) {
                int32_t t = used[j]; used[j] = used[j - 1]; used[j - 1] = t;
            }
        for (i = 0; i < sched_shared_devices(jw) && i < n->n_gpus; i++)
            lb += used[i];
    }
    return lb;
}

/* The least GPU cost of a unit on the node: every set the node's search
 * can consider costs at least that much (computed as search_node() does). */
static int64_t cheapest_unit(const struct search *s, int node)
{
    const struct scratch *x = s->ss->victim_scratch;
    const int *node_units = x->pc[s->pool].node_units;
    int64_t least = SS_INF;
    int i;

    for (i = x->node_off[node]; i < x->node_off[node] + x->node_cnt[node]; i++)
        least = ss_min(least, unit_cost(s->ss, &s->units[node_units[i]], SCHED_GPU));
    return least;
}

/* The units of the queues of scratch.q_ok grouped by node (node_off,
 * node_cnt, the pool's node_units), and the nodes holding one in order of
 * their most preferred unit (the pool's by_first; node_mark: that unit).
 * A reclaim's grouping depends only on the state and on which queues'
 * units are live (j's own queue never is), so it is kept for the next
 * reclaim attempt in the same state with the same victim queues. */
static int group_units(struct search *s, int n_queues)
{
    struct scratch *x = s->ss->victim_scratch;
    struct pool_units *pc = &x->pc[s->pool];
    const struct ss_pool *pool = &s->ss->pools[s->pool];
    int jq = ss_w(s->ss, s->j)->queue, kind = s->what_if ? 2 : 0, keep = 0;

    if (s->mode == MODE_RECLAIM) {
        x->q_ok[jq] = 0;  /* its units are dead to j (unit_dead()) */
        keep = pc->b_version == s->ss->pool_version[s->pool] && pc->b_kind == kind &&
               memcmp(pc->b_queues, x->q_ok, (size_t)s->ss->n_queues) == 0;
    }
    if (keep)
        return SCHED_OK;
    if (!pc->by_first) {
        pc->by_first = sched__calloc(s->ss->arena, (size_t)pool->n_nodes + 1, sizeof(int));
        if (!pc->by_first)
            return SCHED_ENOMEM;
    }
    pc->b_gen++;
    list_eligible(s, n_queues);
    bucket_by_node(s, x);
    pc->b_version = UINT64_MAX;
    if (s->mode == MODE_RECLAIM) {
        memcpy(pc->b_queues, x->q_ok, (size_t)s->ss->n_queues);
        pc->b_version = s->ss->pool_version[s->pool];
        pc->b_kind = kind;
    }
    return SCHED_OK;
}

/* What search_pool()'s node bounds read of j: the node class and requests. */
static void host_shape(const struct search *s, int64_t *shape)
{
    const struct sched_workload *jw = ss_w(s->ss, s->j);

    shape[0] = s->ss->wl[s->j].cls;
    shape[1] = jw->gpu_devices;
    shape[2] = jw->gpu_portion;
    shape[3] = jw->gpu_memory_mib;
    shape[4] = jw->cpu_milli;
    shape[5] = jw->mem_mib;
    shape[6] = s->what_if;
}

/* Can every node of the pool host j (sched__node_can_host())? */
static int every_node_hosts(const struct search *s)
{
    const struct host_floor *f = &((const struct scratch *)s->ss->victim_scratch)->floor[s->pool];
    const struct sched_workload *jw = ss_w(s->ss, s->j);

    return s->ss->wl[s->j].cls == 0 && jw->gpu_portion == 0 && jw->gpu_memory_mib == 0 &&
           f->all_ready && f->gpus >= jw->gpu_devices && f->cpu >= jw->cpu_milli &&
           f->mem >= jw->mem_mib;
}

/* The bounds of the pool's nodes for j's shape in the pool's state: the
 * entry kept for them, or the least recently used one, emptied. NULL when
 * out of memory. */
static struct node_bounds *bounds_for(struct search *s, const int64_t *shape)
{
    struct pool_units *pc = &((struct scratch *)s->ss->victim_scratch)->pc[s->pool];
    const struct ss_pool *pool = &s->ss->pools[s->pool];
    struct node_bounds *b;
    int hit;

    b = &pc->lb[kept_slot(pc->lb, sizeof(pc->lb[0]), s->ss->log_base, shape, &pc->tick, &hit)];
    if (hit)
        return b;
    if (!b->lb) {
        b->lb = sched__array_raw(s->ss->arena, (size_t)pool->n_nodes + 1, sizeof(int64_t));
        b->lb_at = sched__array_raw(s->ss->arena, (size_t)pool->n_nodes + 1, sizeof(uint64_t));
        b->lb_era = sched__calloc(s->ss->arena, (size_t)pool->n_nodes + 1, sizeof(uint32_t));
        b->order = sched__calloc(s->ss->arena, (size_t)pool->n_nodes + 1, sizeof(int));
        b->order_lb = sched__calloc(s->ss->arena, (size_t)pool->n_nodes + 1, sizeof(int64_t));
        if (!b->lb || !b->lb_at || !b->lb_era || !b->order || !b->order_lb) {
            b->k.version = UINT64_MAX;
            b->lb = NULL;
            return NULL;
        }
    }
    if (++b->era == 0) {   /* a new shape: no bound of the last one holds */
        memset(b->lb_era, 0, sizeof(uint32_t) * (size_t)pool->n_nodes);
        b->era = 1;
    }
    b->gen = UINT64_MAX;
    return b;
}

/* The bound of one node for the shape of b (-1: it cannot host j), asked
 * again only after the node changed. */
static inline int64_t node_bound(const struct search *s, struct node_bounds *b, int node,
                                  int all)
{
    int pos = s->ss->nodes[node].pool_pos;

    if (b->lb_era[pos] != b->era || b->lb_at[pos] != s->ss->nodes[node].serial + 1) {
        b->lb[pos] = !all && !node_can_host(s, node) ? -1 : node_lower_bound(s, node);
        b->lb_at[pos] = s->ss->nodes[node].serial + 1;
        b->lb_era[pos] = b->era;
    }
    return b->lb[pos];
}

/* Appends node to (order, lb) when it can host j; the least bound in *global_lb. */
static inline void order_add(const struct search *s, struct node_bounds *b, int node, int all,
                             int *order, int64_t *order_lb, int *n, int64_t *global_lb)
{
    int64_t lb = node_bound(s, b, node, all);

    if (lb < 0)
        return;
    *global_lb = ss_min(*global_lb, lb);
    order_lb[*n] = lb;
    order[(*n)++] = node;
}

/* A topology attempt's nodes (topology.c: j may use only the domain
 * tried): the domain's nodes that hold units and can host j, in the
 * grouping's order (by_first's, along which node_off ascends). Inside
 * the domain a node hosts j as it does outside an attempt, so the shape's
 * bounds serve every domain; the order is the attempt's alone (scratch).
 * A domain of k nodes is put in order by an insertion sort when k * k is
 * less than the grouping's nodes, else by_first is filtered by the mask. */
static int order_domain(struct search *s, struct node_bounds *b, int64_t *global_lb)
{
    struct sched_session *ss = s->ss;
    struct scratch *x = ss->victim_scratch;
    const struct pool_units *pc = &x->pc[s->pool];
    int i, k, n = 0, all = every_node_hosts(s);

    s->node_order = x->dom_order;
    s->order_lb = x->dom_lb;
    *global_lb = SS_INF;
    if ((int64_t)ss->topo_n * ss->topo_n >= pc->n_by_first) {
        for (i = 0; i < pc->n_by_first; i++)
            if (ss->topo_mask[pc->by_first[i]])
                order_add(s, b, pc->by_first[i], all, x->dom_order, x->dom_lb, &n, global_lb);
        return n;
    }
    for (i = 0; i < ss->topo_n; i++) {
        int node = ss->topo_nodes[i], had = n;
        int64_t lb;
        if (x->node_cnt[node] == 0 || ss->nodes[node].pool != s->pool)
            continue;
        order_add(s, b, node, all, x->dom_order, x->dom_lb, &n, global_lb);
        if (n == had)
            continue;
        lb = x->dom_lb[had];
        for (k = had; k > 0 && x->node_off[x->dom_order[k - 1]] > x->node_off[node]; k--) {
            x->dom_order[k] = x->dom_order[k - 1];
            x->dom_lb[k] = x->dom_lb[k - 1];
        }
        x->dom_order[k] = node;
        x->dom_lb[k] = lb;
    }
    return n;
}

/* The pool's nodes that hold units and can host j, in order of their most
 * preferred unit (s->node_order), with their bounds (s->order_lb) and the
 * least of them; kept with the shape's bounds for the next search of that
 * shape in the same state and grouping (the failed reclaim attempts of the
 * walk, reclaimers of several shapes taking turns). A node's bound is
 * asked once per state of the node and shape (bounds_for()), whatever the
 * pool's state and the grouping. A topology attempt's: order_domain(). */
static int order_nodes(struct search *s, int64_t *global_lb)
{
    struct pool_units *pc = &((struct scratch *)s->ss->victim_scratch)->pc[s->pool];
    struct node_bounds *b;
    int64_t shape[7];
    int i, all = every_node_hosts(s);

    host_shape(s, shape);
    b = bounds_for(s, shape);
    if (!b)
        return SCHED_ENOMEM;
    if (s->j == s->ss->topo_w)
        return order_domain(s, b, global_lb);
    s->node_order = b->order;
    s->order_lb = b->order_lb;
    if (b->gen == pc->b_gen) {
        *global_lb = b->global;
        return b->n_order;
    }
    *global_lb = SS_INF;
    /* by_first names each node holding a unit once, most preferred unit first */
    b->n_order = 0;
    for (i = 0; i < pc->n_by_first; i++)
        order_add(s, b, pc->by_first[i], all, b->order, b->order_lb, &b->n_order, global_lb);
    b->gen = pc->b_gen;
    b->global = *global_lb;
    return b->n_order;
}

/* Searches the pool's nodes, those holding the most preferred units first;
 * stops when no later node can beat the best set: its cost is the least
 * any node allows and the next node's best unit is less preferred than
 * the best set's first. Whether a node can host j is asked once per node
 * and shape (order_nodes() leaves out those that cannot). */
static int search_pool(struct search *s)
{
    struct scratch *x = s->ss->victim_scratch;
    int i, n_order;
    int64_t global_lb;

    if (group_units(s, s->mode == MODE_MOVE ? 0 : eligible_queues(s)) != SCHED_OK)
        return SCHED_ENOMEM;
    n_order = order_nodes(s, &global_lb);
    if (n_order < 0)
        return SCHED_ENOMEM;
    s->best_node = -1;
    s->n_best = 0;
    x->n_movers = 0;   /* the state the move trials start from is this one */
    x->gen++;
    for (i = 0; i < n_order; i++) {
        int node = s->node_order[i];
        if (s->best_node >= 0) {
            if (s->best_cost == global_lb && x->node_mark[node] > s->best[0])
                break;
            if (s->order_lb[i] > s->best_cost || cheapest_unit(s, node) > s->best_cost)
                continue;
        }
        search_node(s, node);
    }
    return SCHED_OK;
}

static int remember_flag(struct search *s, int w, int flag)
{
    struct sched_session *ss = s->ss;
    struct scratch *x = ss->victim_scratch;

    if (sched__ints_room(ss->arena, &x->flagged, &x->cap_flagged, s->n_flagged,
                         s->n_flagged + 1, 64) != SCHED_OK)
        return SCHED_ENOMEM;
    if (ss->wl[w].flags & flag)
        return SCHED_OK;  /* set before this attempt: a rollback keeps it */
    x->flagged[s->n_flagged++] = w << 5 | flag;
    ss->wl[w].flags |= flag;
    return SCHED_OK;
}

/* Takes the best set's units away for good, in preference order. */
static int evict_best(struct search *s, int action)
{
    struct sched_session *ss = s->ss;
    int i, k;

    for (i = 0; i < s->n_best; i++) {
        const struct unit *u = &s->units[s->best[i]];
        const struct sched_workload *v = ss_w(ss, u->w);
        for (k = 0; k < v->n_pods; k++)
            if (ss->pods[u->w][k].node >= 0 && (u->pod < 0 || u->pod == k) &&
                sched__unplace(ss, u->w, k) != SCHED_OK)
                return SCHED_ENOMEM;
        if (remember_flag(s, u->w, u->pod >= 0 ? WL_SHRUNK : WL_EVICTED) != SCHED_OK ||
            sched__decide(ss, SCHED_EVICT, action, u->w, u->pod, -1, 0, s->j) != SCHED_OK)
            return SCHED_ENOMEM;
    }
    return SCHED_OK;
}

/* Places the next unplaced pod of j on node; a BIND decided by `action`
 * (none when action < 0: a trial). */
static int place_one(struct sched_session *ss, int j, int node, int action)
{
    int k;

    for (k = 0; k < ss_w(ss, j)->n_pods; k++) {
        uint64_t dev;
        if (ss->pods[j][k].node >= 0)
            continue;
        dev = sched__choose_devices(ss, j, node);
        if (sched__place(ss, j, k, node, dev) != SCHED_OK ||
            (action >= 0 &&
             sched__decide(ss, SCHED_BIND, action, j, k, node, dev, -1) != SCHED_OK))
            return SCHED_ENOMEM;
        return SCHED_OK;
    }
    return SCHED_EINVAL;
}

/* Places one more pod of s->j, evicting the cheapest valid set if needed
 * (s->limit_on_node: also if the pod would take a queue on its path over
 * its limit where it fits as things are). */
static int place_with_eviction(struct search *s, int action)
{
    struct sched_session *ss = s->ss;
    int node = sched__best_node(ss, s->j, s->pool, -1), none[1] = {0};

    if (node >= 0 && s->limit_on_node) {
        charge_on_node(s, node);
        if (still_over(s, none, 0, 1, -1))
            node = -1;
    }
    if (node >= 0)
        return place_one(ss, s->j, node, action) == SCHED_OK;
    if ((!s->collected && collect_units(s) != SCHED_OK) || s->n_units == 0)
        return 0;
    if (search_pool(s) != SCHED_OK || s->best_node < 0)
        return 0;
    node = s->best_node;
    if (evict_best(s, action) != SCHED_OK || !sched__pod_fits_node(ss, s->j, node))
        return 0;
    return place_one(ss, s->j, node, action) == SCHED_OK;
}

/* A reclaim, once done: the reclaiming project within its fair share, and
 * the saturation rule wherever its branch met the branch of a workload
 * this attempt evicted (its EVICT decisions: a victim shrunk earlier in
 * the cycle counts too) higher up. */
static int reclaim_holds(const struct search *s)
{
    struct sched_session *ss = s->ss;
    int jq = ss_w(ss, s->j)->queue, i, r, ar, av;
    const struct ss_qp *a = ss_qp(ss, jq, s->pool);

    for (r = 0; r < SCHED_NRES; r++)
        if (ss->wl[s->j].req[r] > 0 && a->alloc[r] > a->fair[r])
            return 0;
    for (i = s->first_decision; i < ss->n_decisions; i++) {
        const struct sched_decision *d = &ss->decisions[i];
        if (d->kind != SCHED_EVICT)
            continue;
        meeting_level(ss, jq, ss_w(ss, d->workload)->queue, &ar, &av);
        for (r = 0; ar != jq && r < SCHED_NRES; r++) {
            const struct ss_qp *qa = ss_qp(ss, ar, s->pool), *qv = ss_qp(ss, av, s->pool);
            if (ss->wl[s->j].req[r] > 0 &&
                !less_saturated(qa->alloc[r], qa->fair[r], qv->alloc[r], qv->fair[r]))
                return 0;
        }
    }
    return 1;
}

/* After the attempt: within limit and non-preemptible deserved at every
 * level, and the reclaim rules. */
static int attempt_holds(const struct search *s)
{
    struct sched_session *ss = s->ss;
    const struct sched_workload *jw = ss_w(ss, s->j);
    int q, r;

    for (q = jw->queue; q >= 0; q = ss->queues[q].parent) {
        const struct ss_qp *a = ss_qp(ss, q, s->pool);
        for (r = 0; r < SCHED_NRES; r++) {
            if (a->limit[r] != SS_INF && a->alloc[r] > a->limit[r])
                return 0;
            if (!jw->preemptible && sched__np_bound(a, r) != SS_INF &&
                a->alloc_np[r] > sched__np_bound(a, r))
                return 0;
        }
    }
    return s->mode != MODE_RECLAIM || reclaim_holds(s);
}

static int search_init(struct search *s, struct sched_session *ss, int j, int pool, int mode)
{
    memset(s, 0, sizeof(*s));
    s->ss = ss;
    s->j = j;
    s->pool = pool;
    s->mode = mode;
    if (!scratch_of(ss))
        return SCHED_ENOMEM;
    s->fp = ((struct scratch *)ss->victim_scratch)->fp;
    return SCHED_OK;
}

/* Clears the flags this attempt set (each record is workload << 5 | flag). */
static void undo_flags(struct search *s)
{
    const int *rec = ((struct scratch *)s->ss->victim_scratch)->flagged;
    int i;

    for (i = 0; i < s->n_flagged; i++)
        s->ss->wl[rec[i] >> 5].flags &= ~(rec[i] & 31);
    s->n_flagged = 0;
}

/* A queue whose attempt found no set at all for its first pod, in an
 * unchanged state, finds none for a workload of the same queue that asks
 * at least as much per pod and at least as many pods (and, for preempt,
 * has no higher priority): fitting and the rules only get stricter.
 * Remembered per queue, pool and mode; workloads with a node type are
 * never compared. */
static struct hopeless *hopeless_at(const struct sched_session *ss, int q, int pool, int mode)
{
    struct scratch *x = ss->victim_scratch;

    return &x->hopeless[((size_t)q * (size_t)ss->n_pools + (size_t)pool) * 2 +
                        (mode == MODE_PREEMPT)];
}

/* Shapes compare by their totals only for requests of whole devices or of
 * one portion, on any node. */
static int ask_plain(const struct sched_session *ss, int w)
{
    const struct sched_workload *wl = ss_w(ss, w);

    return ss->wl[w].cls == 0 && wl->gpu_memory_mib == 0 && sched_shared_devices(wl) <= 1;
}

/* a asks at least what b asks */
static int shape_covers(const struct ss_ask *a, const struct ss_ask *b)
{
    return a->gpu >= b->gpu && a->cpu >= b->cpu && a->mem >= b->mem && a->pods >= b->pods &&
           a->priority <= b->priority;
}

/* Whether a plain shape's ask in queue q is known hopeless in pool for
 * mode in this state: the table's shape asks no more. */
static int ask_hopeless(const struct sched_session *ss, int q, int pool, int mode,
                        const struct ss_ask *mine)
{
    const struct hopeless *h = hopeless_at(ss, q, pool, mode);
    struct ss_ask a = *mine;

    if (h->version != ss->version)
        return 0;
    if (mode != MODE_PREEMPT)
        a.priority = h->ask.priority;
    return shape_covers(&a, &h->ask);
}

static int known_hopeless(const struct search *s, int pods)
{
    struct ss_ask mine;

    if (s->what_if || !sched__ask_of(s->ss, s->j, pods, &mine))
        return 0;
    return ask_hopeless(s->ss, ss_w(s->ss, s->j)->queue, s->pool, s->mode, &mine);
}

static void note_hopeless(const struct search *s, int pods)
{
    struct hopeless *h = hopeless_at(s->ss, ss_w(s->ss, s->j)->queue, s->pool, s->mode);
    struct ss_ask mine;

    if (s->what_if || !sched__ask_of(s->ss, s->j, pods, &mine))
        return;
    if (s->mode != MODE_PREEMPT)
        mine.priority = 0;
    if (h->version != s->ss->version || shape_covers(&h->ask, &mine)) {
        h->version = s->ss->version;
        h->ask = mine;
    }
}

int sched__ask_of(const struct sched_session *ss, int w, int pods, struct ss_ask *a)
{
    const struct sched_workload *wl = ss_w(ss, w);

    a->gpu = ss->wl[w].req[SCHED_GPU];
    a->cpu = wl->cpu_milli;
    a->mem = wl->mem_mib;
    a->pods = pods;
    a->priority = wl->priority;
    return ask_plain(ss, w);
}

int sched__may_preempt(const struct sched_session *ss, int queue, int pool,
                       const struct ss_ask *ask)
{
    return !ss->victim_scratch || !ask || !ask_hopeless(ss, queue, pool, MODE_PREEMPT, ask);
}

/* Necessary for any reclaim: some queue beside j's path (a sibling of j's
 * queue or of one of its ancestors) holds more than its allocatable share,
 * or more than its deserved while j's side stays within its own deserved.
 * O(levels of the path): the siblings' answers are kept per pool state. */
static int any_victim_queue(struct sched_session *ss, int j, int pool, int pods)
{
    struct pool_units *pc = queue_answers(ss, pool);
    int q;

    if (!pc) {
        ss->oom = 1;
        return 0;
    }
    for (q = ss_w(ss, j)->queue; q >= 0; q = ss->queues[q].parent) {
        const struct ss_qp *me = &ss->qp[(size_t)q * (size_t)ss->n_pools + (size_t)pool];
        if (siblings_over(ss, pc, pool, q) >> reclaimer_within_deserved(ss, j, me, pods) & 1)
            return 1;
    }
    return 0;
}

int sched__may_evict_for(struct sched_session *ss, int j, int pool, int action)
{
    struct search s;
    int pods = sched__pods_to_place(ss, j);

    if (action == SCHED_ACT_RECLAIM && !any_victim_queue(ss, j, pool, pods))
        return 0;
    if (!ss->victim_scratch)
        return 1;
    memset(&s, 0, sizeof(s));
    s.ss = ss;
    s.j = j;
    s.pool = pool;
    s.mode = action == SCHED_ACT_PREEMPT ? MODE_PREEMPT : MODE_RECLAIM;
    return !known_hopeless(&s, pods);
}

void sched__note_known_failure(struct sched_session *ss, int j, int pool, int action)
{
    struct search s;
    int pods = sched__pods_to_place(ss, j);

    if (search_init(&s, ss, j, pool, action == SCHED_ACT_PREEMPT ? MODE_PREEMPT : MODE_RECLAIM) ==
            SCHED_OK &&
        !known_hopeless(&s, pods))
        note_hopeless(&s, pods);
}

/* ---- Room under a limit ----
 * When j's queue or an ancestor would go over its limit with j, victims
 * inside that queue's subtree free room under it: the project's own
 * lower-priority work (preempt), or a sibling project's above its share
 * (reclaim, one level up). They are taken in preference order, each one
 * that frees a resource still over, while the set stays valid; then the
 * ones the others make unnecessary are given back (last first). Taken
 * greedily, a small preferred unit can use up a victim queue's excess so
 * that the unit which alone would make room is no longer valid after it:
 * when a pass ends still over, it runs again without the first unit the
 * failed pass took, at most LIMIT_ROOM_PASSES times. The set is chosen
 * without regard to the nodes: when the pods cannot be placed after it,
 * evict_attempt() tries again with the room made by each pod's node
 * search (limit_on_node). */

/* What a queue on j's path would hold above its limit with `pods` more
 * pods of j, less what the units set[0..n) free inside its subtree; 1 if
 * something is still over (and, with u >= 0, unit u would free part of it). */
static int still_over(const struct search *s, const int *set, int n, int pods, int u)
{
    const struct sched_session *ss = s->ss;
    int q, r, any = 0;

    for (q = ss_w(ss, s->j)->queue; q >= 0; q = ss->queues[q].parent) {
        const struct ss_qp *a = &ss->qp[(size_t)q * (size_t)ss->n_pools + (size_t)s->pool];
        for (r = 0; r < SCHED_NRES; r++) {
            int64_t over = a->alloc[r] + pod_ask(s, r) * pods - a->limit[r];
            if (a->limit[r] == SS_INF || over <= 0)
                continue;
            over -= set_frees_in(s, set, n, q, r);
            if (over > 0 && (u < 0 || (in_subtree(ss, s->units[u].k_queue, q) &&
                                       unit_frees(s, &s->units[u], r) > 0)))
                any = 1;
        }
    }
    return any;
}

static int set_has_workload(const struct search *s, const int *set, int n, int w)
{
    int k;

    for (k = 0; k < n; k++)
        if (s->units[set[k]].w == w)
            return 1;
    return 0;
}

/* set[0..n) without the units of workload w, into out; the new size. */
static int without_workload(const struct search *s, const int *set, int n, int w, int *out)
{
    int k, m = 0;

    for (k = 0; k < n; k++)
        if (s->units[set[k]].w != w)
            out[m++] = set[k];
    return m;
}

/* One greedy pass: units in preference order but the `n_skip` in skip[],
 * each taken while it frees a resource still over and the set stays
 * valid, until nothing is over; the set's size (set[0] is the first unit
 * taken). An elastic workload's whole unit, met after some of its pods
 * were taken, takes their place (it frees them too): the lowest-priority
 * victims that free enough are taken, the rest of an elastic workload
 * before a workload of higher priority. */
static int limit_room_pass(struct search *s, int pods, const int *skip, int n_skip, int *set)
{
    int n = 0, e, k, trial[MAX_NODE_UNITS];

    for (e = 0; e < s->n_elig && n < MAX_NODE_UNITS; e++) {
        int u = s->elig[e], skipped = 0, m = n;
        for (k = 0; k < n_skip; k++)
            skipped |= skip[k] == u;
        if (skipped || unit_dead(s, &s->units[u]) || !still_over(s, set, n, pods, u))
            continue;
        if (set_has_workload(s, set, n, s->units[u].w)) {
            if (s->units[u].pod >= 0)
                continue;
            m = without_workload(s, set, n, s->units[u].w, trial);
        } else {
            memcpy(trial, set, sizeof(int) * (size_t)n);
        }
        trial[m++] = u;
        if (s->mode == MODE_RECLAIM && !reclaim_set_valid(s, trial, m))
            continue;
        memcpy(set, trial, sizeof(int) * (size_t)m);
        n = m;
        if (!still_over(s, set, n, pods, -1))
            break;
    }
    return n;
}

/* Gives back the units of set[0..*n) that the others make unnecessary, last first. */
static void give_back_unneeded(const struct search *s, int *set, int *n, int pods)
{
    int k, i;

    for (k = *n - 1; k >= 0; k--) {
        int drop = set[k];
        for (i = k; i < *n - 1; i++)
            set[i] = set[i + 1];
        if (!still_over(s, set, *n - 1, pods, -1) &&
            (s->mode != MODE_RECLAIM || reclaim_set_valid(s, set, *n - 1))) {
            (*n)--;
            continue;
        }
        for (i = *n - 1; i > k; i--)
            set[i] = set[i - 1];
        set[k] = drop;
    }
}

/* Evicts what makes room under the limits on j's path for `pods` pods;
 * 0 when no valid set of victims does, -1 when no valid unit frees any
 * of what is over. */
static int make_limit_room(struct search *s, int pods, int action)
{
    int set[MAX_NODE_UNITS] = {0}, skip[LIMIT_ROOM_PASSES], n = 0, passes;

    if (!still_over(s, set, 0, pods, -1))
        return 1;
    s->pods_left = pods;
    gather_eligible(s);
    for (passes = 0; passes < LIMIT_ROOM_PASSES; passes++) {
        n = limit_room_pass(s, pods, skip, passes, set);
        if (n == 0)
            return passes == 0 ? -1 : 0;   /* skipping more does not help */
        if (!still_over(s, set, n, pods, -1))
            break;
        skip[passes] = set[0];
    }
    if (passes == LIMIT_ROOM_PASSES)
        return 0;
    give_back_unneeded(s, set, &n, pods);
    memcpy(s->best, set, sizeof(int) * (size_t)n);
    s->n_best = n;
    return evict_best(s, action) == SCHED_OK;
}

/* ---- Consolidating reclaim ----
 * Once an attempt holds, every victim whose taken pods all find a place
 * again in the pool (j placed) is moved instead of stopped (KAI's
 * consolidating reclaim): its EVICT becomes MOVEs of the pods that land
 * elsewhere. Putting a victim back only adds to its own side, so the
 * reclaim rules still hold; the limits on j's path are checked again (a
 * victim inside them stays stopped). */

/* Where pod k of w was when the attempt began (its first logged placement). */
static const struct ss_undo *placed_before(const struct sched_session *ss, struct ss_mark att,
                                           int w, int k)
{
    int i;

    for (i = att.n_undo; i < ss->n_undo; i++)
        if (ss->undo[i].workload == w && ss->undo[i].pod == k)
            return ss->undo[i].node >= 0 ? &ss->undo[i] : NULL;
    return NULL;
}

/* Places the pods EVICT d took back in the pool; 1 if all found a place. */
static int put_back(struct search *s, struct ss_mark att, const struct sched_decision *d)
{
    struct sched_session *ss = s->ss;
    int w = d->workload, k;

    for (k = 0; k < ss_w(ss, w)->n_pods; k++) {
        const struct ss_undo *was = placed_before(ss, att, w, k);
        int node;
        if ((d->pod >= 0 && d->pod != k) || !was || ss->pods[w][k].node >= 0)
            continue;
        node = sched__best_node(ss, w, s->pool, -1);
        if (node < 0 || sched__dev_charge(ss, w, node) > sched__dev_charge(ss, w, was->node) ||
            sched__place(ss, w, k, node, sched__choose_devices(ss, w, node)) != SCHED_OK)
            return 0;
    }
    return attempt_holds(s);
}

/* The attempt's decisions again, each moved victim's EVICT replaced by
 * MOVEs of its pods that land elsewhere; `moved` flags those EVICTs. */
static int rewrite_decisions(struct search *s, struct ss_mark att, const uint8_t *moved,
                             int action)
{
    struct sched_session *ss = s->ss;
    int n = ss->n_decisions - att.n_decisions, i, k;
    struct sched_decision *seg = sched__calloc(ss->arena, (size_t)n + 1, sizeof(*seg));

    if (!seg)
        return SCHED_ENOMEM;
    memcpy(seg, &ss->decisions[att.n_decisions], sizeof(*seg) * (size_t)n);
    ss->n_decisions = att.n_decisions;
    for (i = 0; i < n; i++) {
        const struct sched_decision *d = &seg[i];
        if (!moved[i]) {
            if (sched__decide(ss, d->kind, d->action, d->workload, d->pod, d->node, d->devices,
                              d->by_workload) != SCHED_OK)
                return SCHED_ENOMEM;
            continue;
        }
        for (k = 0; k < ss_w(ss, d->workload)->n_pods; k++) {
            const struct ss_undo *was = placed_before(ss, att, d->workload, k);
            const struct sched_pod *now = &ss->pods[d->workload][k];
            if ((d->pod >= 0 && d->pod != k) || !was ||
                (now->node == was->node && now->devices == was->devices))
                continue;
            if (sched__decide(ss, SCHED_MOVE, action, d->workload, k, now->node, now->devices,
                              s->j) != SCHED_OK)
                return SCHED_ENOMEM;
        }
    }
    return SCHED_OK;
}

/* Moves every victim of the attempt begun at `att` that can stay. */
static int keep_movable(struct search *s, struct ss_mark att, int action)
{
    struct sched_session *ss = s->ss;
    int n = ss->n_decisions - att.n_decisions, i, any = 0;
    uint8_t *moved = sched__calloc(ss->arena, (size_t)n + 1, 1);
    const int *rec = ((const struct scratch *)ss->victim_scratch)->flagged;

    if (!moved)
        return SCHED_ENOMEM;
    for (i = 0; i < n; i++) {
        const struct sched_decision *d = &ss->decisions[att.n_decisions + i];
        struct ss_mark m = sched__mark(ss);
        int k, again = 0;
        /* a victim taken twice (an elastic pod, then the rest) stays stopped */
        for (k = 0; k < n; k++)
            again |= k != i && ss->decisions[att.n_decisions + k].kind == SCHED_EVICT &&
                     ss->decisions[att.n_decisions + k].workload == d->workload;
        /* a required topology's pods stay in their domain: not moved */
        if (d->kind != SCHED_EVICT || again || sched__topo_pinned(ss, d->workload, s->pool))
            continue;
        /* placed again, it must keep its queue's limits as any placement */
        if (!put_back(s, att, d) ||
            queue_over_limit(ss, ss_w(ss, d->workload)->queue, s->pool)) {
            sched__rollback(ss, m);
            continue;
        }
        moved[i] = 1;
        any = 1;
    }
    if (!any)
        return SCHED_OK;
    for (i = 0; i < s->n_flagged; i++) {  /* a moved victim is no longer evicted */
        int w = rec[i] >> 5, k;
        for (k = 0; k < n; k++)
            if (moved[k] && ss->decisions[att.n_decisions + k].workload == w &&
                (rec[i] & (WL_EVICTED | WL_SHRUNK)))
                ss->wl[w].flags = (ss->wl[w].flags & ~(rec[i] & 31)) | WL_TOUCHED;
    }
    return rewrite_decisions(s, att, moved, action);
}

/* Places j's pods from the i-th on, one at a time, each evicting what it
 * needs; how many of the `pods` are then placed (i > pods: left as is). */
static int place_pods(struct search *s, int i, int pods, int action)
{
    for (; i < pods; i++) {
        s->pods_left = pods - i;
        if (!place_with_eviction(s, action))
            break;
    }
    return i;
}

/* One attempt to place j's missing pods in the pool by evicting; 1 when it
 * holds (its changes stay, flags recorded in s), else everything undone.
 * Room under a limit on j's path is made first (make_limit_room()); when
 * the pods then cannot all be placed, the attempt is made again with that
 * room left to each pod's node search (s->limit_on_node). */
static int evict_attempt(struct search *s, struct ss_mark mark, int action)
{
    struct sched_session *ss = s->ss;
    int j = s->j, pods = sched__pods_to_place(ss, j), none[1] = {0}, i, room, over, hopeless;
    int64_t as_is;

    ss->attempt_trace = SS_TRACE_QUIET;
    s->first_decision = mark.n_decisions;
    if (s->mode == MODE_RECLAIM && !any_victim_queue(ss, j, s->pool, pods))
        return 0;
    if (collect_units(s) != SCHED_OK || known_hopeless(s, pods)) {
        ss->attempt_trace = SS_TRACE_UNKNOWN;   /* the table's history decided */
        return 0;
    }
    if (ss_w(ss, j)->gpu_memory_mib > 0) {
        /* placed as things are, it is charged by that node's devices */
        int node;
        keep_pod_charge(s, sched__charge_as_is(ss, j, s->pool, &node));
    }
    as_is = s->pod_gpu;
    over = still_over(s, none, 0, pods, -1);
    room = make_limit_room(s, pods, action);
    i = room > 0 ? 0 : pods + 1;
    /* pods that all fit as things are would be placed evicting nothing,
     * which fails the attempt: told without placing them (only when no
     * room was made under a limit: its victims may have been flagged
     * before, by an earlier attempt, and still have to be given back) */
    if (i == 0 && ss->n_decisions == mark.n_decisions &&
        sched__all_fit_as_is(ss, j, s->pool, pods) == 1)
        return 0;
    i = place_pods(s, i, pods, action);
    hopeless = (i == 0 || i > pods) && s->n_flagged == 0;
    if (i == pods && s->n_flagged > 0 && attempt_holds(s))
        return 1;
    if (over && (room >= 0 || ss_w(ss, j)->gpu_memory_mib > 0)) {
        /* the room made first was of no use to the pods (or none was
         * found in preference order): each pod's node search makes it.
         * Not when no valid unit freed any of what was over: a node's set
         * that makes room holds one that frees some, valid alone (the
         * set's validity is only stricter), unless a GPU-memory pod is
         * charged more on that node than as things are. */
        sched__rollback(ss, mark);
        undo_flags(s);
        s->limit_on_node = 1;
        i = place_pods(s, 0, pods, action);
        s->limit_on_node = 0;
        s->pod_gpu = as_is;
        hopeless = hopeless && i == 0 && s->n_flagged == 0;
        if (i == pods && s->n_flagged > 0 && attempt_holds(s))
            return 1;
    }
    if (hopeless) {
        note_hopeless(s, pods);
        ss->attempt_trace = SS_TRACE_NOTED;
    }
    sched__rollback(ss, mark);
    undo_flags(s);
    return 0;
}

int sched__evict_for(struct sched_session *ss, int j, int pool, int action)
{
    struct search s;
    struct ss_mark mark = sched__mark(ss);

    if (search_init(&s, ss, j, pool, action == SCHED_ACT_PREEMPT ? MODE_PREEMPT : MODE_RECLAIM) !=
            SCHED_OK ||
        !evict_attempt(&s, mark, action))
        return 0;
    if (keep_movable(&s, mark, action) != SCHED_OK)
        ss->oom = 1;
    ss->wl[j].flags |= WL_TOUCHED;
    return 1;
}

int sched__freeable_gpu(struct sched_session *ss, int j, int pool, int action, int64_t *freeable)
{
    struct search s;
    int i, k;

    if (search_init(&s, ss, j, pool, action == SCHED_ACT_PREEMPT ? MODE_PREEMPT : MODE_RECLAIM) !=
            SCHED_OK ||
        collect_units(&s) != SCHED_OK)
        return SCHED_ENOMEM;
    s.pods_left = sched__pods_to_place(ss, j);
    gather_eligible(&s);
    for (i = 0; i < s.n_elig; i++) {
        const struct unit *u = &s.units[s.elig[i]];
        if (unit_dead(&s, u) ||
            (u->pod >= 0 && i + 1 < s.n_elig && s.units[s.elig[i + 1]].w == u->w))
            continue;   /* a workload's pods once: its whole unit follows its pod units */
        for (k = 0; k < ss_w(ss, u->w)->n_pods; k++)
            if (ss->pods[u->w][k].node >= 0 && (u->pod < 0 || u->pod == k))
                freeable[ss->pods[u->w][k].node] += ss->wl[u->w].req[SCHED_GPU];
    }
    return SCHED_OK;
}

/* Time until pool's minimum runtime stops protecting workload w (<= 0: it does not). */
static int64_t protected_for(const struct sched_session *ss, int w, int pool)
{
    const struct sched_workload *wl = ss_w(ss, w);

    if (wl->started_ms == SCHED_NO_TIME)
        return 0;
    return wl->started_ms + ss->in->pools[pool].min_guaranteed_runtime_ms - ss->in->now_ms;
}

int sched__protected_victims(struct sched_session *ss, int j, int pool, int *queue,
                             int64_t *wait_ms)
{
    static const int actions[] = {SCHED_ACT_RECLAIM, SCHED_ACT_PREEMPT};
    struct ss_verdict v;
    int a, k, found = 0, pods = sched__pods_to_place(ss, j);

    if (ss->in->pools[pool].min_guaranteed_runtime_ms <= 0 || ss->wl[j].n_placed > 0)
        return 0;
    for (a = 0; a < 2 && !found; a++) {
        struct search s;
        struct ss_mark mark = sched__mark(ss);
        if ((actions[a] == SCHED_ACT_RECLAIM &&
             !sched__reclaimer_within_share(ss, j, pool, pods, &v)) ||
            search_init(&s, ss, j, pool,
                        actions[a] == SCHED_ACT_PREEMPT ? MODE_PREEMPT : MODE_RECLAIM) != SCHED_OK)
            continue;
        s.what_if = 1;
        if (!evict_attempt(&s, mark, actions[a]))
            continue;
        /* the victims it needed: those the runtime protects say how long */
        for (k = mark.n_decisions; k < ss->n_decisions; k++) {
            const struct sched_decision *d = &ss->decisions[k];
            int64_t left = d->kind == SCHED_EVICT && d->pod < 0 ? protected_for(ss, d->workload, pool)
                                                                : 0;
            if (left <= 0)
                continue;
            if (!found)
                *queue = ss_w(ss, d->workload)->queue;
            *wait_ms = found ? ss_max(*wait_ms, left) : left;
            found = 1;
        }
        sched__rollback(ss, mark);
        undo_flags(&s);
    }
    return found;
}

int sched__reclaimer_within_share(struct sched_session *ss, int w, int pool, int pods,
                                  struct ss_verdict *v)
{
    const struct sched_workload *wl = ss_w(ss, w);
    const struct ss_qp *a = ss_qp(ss, wl->queue, pool);
    int r;

    for (r = 0; r < SCHED_NRES; r++) {
        int64_t want = ss->wl[w].req[r] * pods;
        if (want > 0 && a->alloc[r] + want > a->fair[r]) {
            v->reason = SCHED_R_QUEUE_FAIR_SHARE_REACHED;
            v->queue = wl->queue;
            v->res = r;
            v->would_use = a->alloc[r] + want;
            v->bound = a->fair[r];
            return 0;
        }
    }
    return 1;
}

/* ---- Consolidation: move, never stop ---- */

/* The placements of the units set[0..n) before a move, pod by pod, in
 * scratch.before (unit i from off[i]); NULL when out of memory. */
static struct sched_pod *remember_placement(struct search *s, const int *set, int n, int *off)
{
    struct sched_session *ss = s->ss;
    struct scratch *x = ss->victim_scratch;
    int i, total = 0;

    for (i = 0; i < n; i++) {
        off[i] = total;
        total += ss_w(ss, s->units[set[i]].w)->n_pods;
    }
    if (total > x->cap_before) {
        x->before = sched__calloc(ss->arena, (size_t)total * 2, sizeof(struct sched_pod));
        if (!x->before)
            return NULL;
        x->cap_before = total * 2;
    }
    for (i = 0; i < n; i++)
        memcpy(&x->before[off[i]], ss->pods[s->units[set[i]].w],
               sizeof(struct sched_pod) * (size_t)ss_w(ss, s->units[set[i]].w)->n_pods);
    return x->before;
}

/* ---- Move trials: each mover shape's best nodes, kept for the search ----
 *
 * A trial (move_set_valid()) changes only the nodes it touches: those the
 * moved units held, the one j takes, and those the moved pods land on;
 * every other node is as the search found it, and sched__best_node()'s
 * order compares two nodes by their own state alone. So the search keeps,
 * per mover shape (sched__same_placement()), the best MOVE_TOP nodes it
 * had not touched when the shape first came (found once: one pass over
 * the pool), and a trial's best node for a moved pod is the better of the
 * first kept node it has not touched and the nodes it touched or the
 * keeping left out: sched__best_node()'s answer, for one pass over the
 * pool per shape and search instead of per moved pod and trial. When
 * every kept node was touched and others fit, it asks sched__best_node(). */

static void touch(struct scratch *x, int node)
{
    if (node >= 0 && !x->touched_at[node]) {
        x->touched_at[node] = 1;
        x->touched[x->n_touched++] = node;
    }
}

static void untouch_all(struct scratch *x)
{
    while (x->n_touched > 0)
        x->touched_at[x->touched[--x->n_touched]] = 0;
}

/* The kept nodes of w's shape in pool, found now if it is new; NULL when
 * out of memory. */
static struct mover_best *mover_best_of(struct search *s, int w, int pool)
{
    struct sched_session *ss = s->ss;
    struct scratch *x = ss->victim_scratch;
    struct mover_best *m;
    int i;

    if (x->cap_mover_of < ss->n_workloads) {   /* first use, or the session grew */
        x->mover_of = sched__calloc(ss->arena, (size_t)ss->n_workloads + 1, sizeof(int));
        x->mover_gen = sched__calloc(ss->arena, (size_t)ss->n_workloads + 1, sizeof(unsigned));
        if (!x->mover_of || !x->mover_gen) {
            x->cap_mover_of = 0;
            return NULL;
        }
        x->cap_mover_of = ss->n_workloads;
    }
    if (x->mover_gen[w] == x->gen && x->movers[x->mover_of[w]].pool == pool)
        return &x->movers[x->mover_of[w]];
    for (i = 0; i < x->n_movers; i++)
        if (x->movers[i].pool == pool && sched__same_placement(ss, w, x->movers[i].w)) {
            x->mover_gen[w] = x->gen;
            x->mover_of[w] = i;
            return &x->movers[i];
        }
    if (x->n_movers == x->cap_movers) {
        int cap = x->cap_movers ? 2 * x->cap_movers : 16;
        struct mover_best *grown = sched__calloc(ss->arena, (size_t)cap, sizeof(*grown));
        if (!grown)
            return NULL;
        if (x->n_movers)
            memcpy(grown, x->movers, (size_t)x->n_movers * sizeof(*grown));
        x->movers = grown;
        x->cap_movers = cap;
    }
    m = &x->movers[x->n_movers];
    m->w = w;
    m->pool = pool;
    m->n_away = x->n_touched;
    m->away = sched__calloc(ss->arena, (size_t)x->n_touched + 1, sizeof(int));
    if (!m->away)
        return NULL;
    memcpy(m->away, x->touched, (size_t)x->n_touched * sizeof(int));
    m->n = sched__best_nodes(ss, w, pool, x->touched_at, m->best, MOVE_TOP, &m->more);
    x->mover_gen[w] = x->gen;
    x->mover_of[w] = x->n_movers++;
    return m;
}

/* *best becomes node's candidate if it is in pool, fits and is better. */
static void trial_consider(const struct sched_session *ss, int w, int pool, int node,
                           struct ss_cand *best)
{
    struct ss_cand c;

    if (ss->nodes[node].pool == pool && sched__candidate(ss, w, node, &c) &&
        (best->node < 0 || sched__candidate_better(ss, w, &c, best)))
        *best = c;
}

/* sched__best_node(ss, w, pool, -1) inside a move trial. */
static int trial_best_node(struct search *s, int w, int pool)
{
    struct sched_session *ss = s->ss;
    struct scratch *x = ss->victim_scratch;
    struct mover_best *m = mover_best_of(s, w, pool);
    struct ss_cand best = {-1, 0, 0, 0};
    int i;

    if (!m)
        return sched__best_node(ss, w, pool, -1);
    for (i = 0; i < m->n && x->touched_at[m->best[i].node]; i++)
        ;
    if (i < m->n)
        best = m->best[i];
    else if (m->more)
        return sched__best_node(ss, w, pool, -1);
    for (i = 0; i < x->n_touched; i++)
        trial_consider(ss, w, pool, x->touched[i], &best);
    for (i = 0; i < m->n_away; i++)
        trial_consider(ss, w, pool, m->away[i], &best);
    return best.node;
}

/* Places every unplaced pod of moved workload w again in the pool,
 * recording MOVEs (when `decide`) against its placement before (before[]). */
static int replace_moved(struct search *s, int w, const struct sched_pod *before, int decide)
{
    struct sched_session *ss = s->ss;
    const struct sched_workload *v = ss_w(ss, w);
    int k;

    for (k = 0; k < v->n_pods; k++) {
        int node, pool;
        uint64_t dev;
        if (before[k].node < 0 || ss->pods[w][k].node >= 0)
            continue;
        pool = ss->nodes[before[k].node].pool;
        node = decide ? sched__best_node(ss, w, pool, -1) : trial_best_node(s, w, pool);
        if (node < 0)
            return 0;
        /* a GPU-memory request moved to smaller devices would hold more */
        if (sched__dev_charge(ss, w, node) > sched__dev_charge(ss, w, before[k].node))
            return 0;
        dev = sched__choose_devices(ss, w, node);
        if (sched__place(ss, w, k, node, dev) != SCHED_OK)
            return 0;
        if (!decide)
            touch(ss->victim_scratch, node);
        if (decide && (node != before[k].node || dev != before[k].devices) &&
            sched__decide(ss, SCHED_MOVE, SCHED_ACT_CONSOLIDATE, w, k, node, dev, s->j) != SCHED_OK)
            return 0;
    }
    return !decide || remember_flag(s, w, WL_TOUCHED) == SCHED_OK;
}

/* Takes the units set[0..n) off their nodes, places one pod of j on
 * `node`, and places every moved pod again in the pool; 1 if all found a
 * place. With `decide` the decisions are recorded; without, the caller
 * rolls the trial back. */
static int move_units(struct search *s, const int *set, int n, int node, int decide)
{
    struct sched_session *ss = s->ss;
    int off[MAX_NODE_UNITS], i, k;
    struct sched_pod *before = remember_placement(s, set, n, off);

    if (!before)
        return 0;
    for (i = 0; !decide && i < n; i++)
        for (k = 0; k < ss_w(ss, s->units[set[i]].w)->n_pods; k++)
            touch(ss->victim_scratch, before[off[i] + k].node);
    if (!decide)
        touch(ss->victim_scratch, node);
    for (i = 0; i < n; i++) {
        int w = s->units[set[i]].w;
        for (k = 0; k < ss_w(ss, w)->n_pods; k++)
            if (ss->pods[w][k].node >= 0 && sched__unplace(ss, w, k) != SCHED_OK)
                return 0;
    }
    if (!sched__pod_fits_node(ss, s->j, node))
        return 0;
    if (place_one(ss, s->j, node, decide ? SCHED_ACT_CONSOLIDATE : -1) != SCHED_OK)
        return 0;
    for (i = 0; i < n; i++)
        if (!replace_moved(s, s->units[set[i]].w, &before[off[i]], decide))
            return 0;
    return 1;
}

/* ---- Do the stuck pods fit s->node's devices? ----
 * A pod here asks `devices` distinct devices with `charge` milli-GPU of
 * room each (a whole-device pod: SCHED_MILLI, an empty device). Whether
 * j's pod and the stuck ones pack into the devices' room is searched
 * depth first, the largest charges first; a device's room among equal
 * rooms is tried once. PACK_STEPS bounds the search: past it, the pods
 * may fit (the test only says no when no packing exists). */
#define PACK_STEPS 4096
#define PACK_PODS MAX_NODE_UNITS

struct pack_pod {
    int devices;
    int32_t charge;
};

struct pack {
    int32_t room[SCHED_MAX_NODE_GPUS];
    int n_gpus, n, steps;
    struct pack_pod pod[PACK_PODS + 1];
};

/* Places device slot `left` of pod i (devices from `from` on), then the
 * rest: 1 if everything packs, or the search ran out of steps. */
static int pack_from(struct pack *p, int i, int left, int from)
{
    int d, e, ok = 0;
    int32_t c;

    if (left == 0) {
        if (++i == p->n)
            return 1;
        left = p->pod[i].devices;
        from = 0;
    }
    if (++p->steps > PACK_STEPS)
        return 1;
    c = p->pod[i].charge;
    for (d = from; d < p->n_gpus && !ok; d++) {
        if (p->room[d] < c)
            continue;
        for (e = from; e < d && p->room[e] != p->room[d]; e++)
            ;
        if (e < d)
            continue;   /* a device with the same room was tried */
        p->room[d] -= c;
        ok = pack_from(p, i, left - 1, d + 1);
        p->room[d] += c;
    }
    return ok;
}

/* Adds a pod of w to the packing (charge as on s->node); 0 when full. */
static int pack_add(struct pack *p, const struct sched_session *ss, int w, int node)
{
    const struct sched_workload *v = ss_w(ss, w);
    struct pack_pod x;
    int i;

    x.devices = sched__whole(v) ? v->gpu_devices : sched_shared_devices(v);
    x.charge = sched__dev_charge(ss, w, node);
    if (x.devices == 0 || x.charge == 0)
        return 1;   /* asks no device */
    if (p->n == PACK_PODS)
        return 0;
    for (i = p->n; i > 0 && p->pod[i - 1].charge < x.charge; i--)
        p->pod[i] = p->pod[i - 1];
    p->pod[i] = x;
    p->n++;
    return 1;
}

/* Can a trial of the units set[0..n) succeed, as far as a quick look
 * tells? When every pod of the set is on s->node, a moved pod whose shape
 * fits no other node now can land only there: a trial takes room from
 * the other nodes and gives none, and fitting only gets harder with less
 * room. Such pods together must fit in what s->node keeps once the set
 * is off it and j's pod on it (CPU, memory, milli-GPU, empty devices for
 * whole-device pods, and the devices' room pod by pod: struct pack): 0
 * when they do not, and the trial would fail. */
static int move_may_fit(struct search *s, const int *set, int n)
{
    struct sched_session *ss = s->ss;
    const struct ss_node *x = &ss->nodes[s->node];
    const struct sched_node *xn = &ss->in->nodes[s->node];
    const struct sched_workload *jw = ss_w(ss, s->j);
    int32_t used[SCHED_MAX_NODE_GPUS];
    int64_t cpu = x->cpu_free, mem = x->mem_free, gpu = x->gpu_free;
    int64_t need_cpu = 0, need_mem = 0, need_gpu = 0;
    int need_empty = 0, empty = 0, stuck = 0, packs = 1, i, k, d;
    struct pack pk;

    pk.n = 0;
    memcpy(used, x->dev_used, sizeof(used[0]) * (size_t)x->n_gpus);
    for (i = 0; i < n; i++) {
        int w = s->units[set[i]].w;
        const struct sched_workload *v = ss_w(ss, w);
        int32_t per_dev = sched__dev_charge(ss, w, s->node);
        for (k = 0; k < v->n_pods; k++) {
            const struct sched_pod *p = &ss->pods[w][k];
            const struct mover_best *m;
            if (p->node < 0)
                continue;
            if (p->node != s->node || !(m = mover_best_of(s, w, x->pool)))
                return 1;
            for (d = 0; d < x->n_gpus; d++)
                if (p->devices >> d & 1) {
                    used[d] -= per_dev;
                    gpu += per_dev;
                }
            cpu += v->cpu_milli;
            mem += v->mem_mib;
            if (m->more || m->n_away > 0 || m->n > 1 || (m->n == 1 && m->best[0].node != s->node))
                continue;   /* it may go elsewhere */
            stuck = 1;
            packs = packs && pack_add(&pk, ss, w, s->node);
            need_cpu += v->cpu_milli;
            need_mem += v->mem_mib;
            need_gpu += sched_pod_gpu(v, xn);
            need_empty += sched__whole(v) ? v->gpu_devices : 0;
        }
    }
    if (!stuck)
        return 1;
    for (d = 0; d < x->n_gpus; d++)
        empty += used[d] == 0;
    empty -= sched__whole(jw) ? jw->gpu_devices : 0;
    if (!(need_cpu <= cpu - jw->cpu_milli && need_mem <= mem - jw->mem_mib &&
          need_gpu <= gpu - sched_pod_gpu(jw, xn) && need_empty <= empty))
        return 0;
    if (!packs || !pack_add(&pk, ss, s->j, s->node))
        return 1;   /* too many pods to pack: they may fit */
    for (d = 0; d < x->n_gpus; d++)
        pk.room[d] = SCHED_MILLI - used[d];
    pk.n_gpus = x->n_gpus;
    pk.steps = 0;
    return pk.n == 0 || pack_from(&pk, 0, pk.pod[0].devices, 0);
}

/* Would moving the units set[0..n) let one pod of j onto s->node, every
 * moved pod finding a new place? A trial, rolled back. */
static int move_set_valid(struct search *s, const int *set, int n)
{
    struct ss_mark mark;
    int ok;

    if (!move_may_fit(s, set, n))
        return 0;
    mark = sched__mark(s->ss);
    ok = move_units(s, set, n, s->node, 0);

    sched__rollback(s->ss, mark);
    untouch_all(s->ss->victim_scratch);
    return ok;
}

/* One pod of j by moving the best set on the best node; 1 on success. */
static int consolidate_one(struct search *s, int *moves)
{
    struct sched_session *ss = s->ss;
    int node = sched__best_node(ss, s->j, s->pool, -1);

    if (node >= 0)
        return place_one(ss, s->j, node, SCHED_ACT_CONSOLIDATE) == SCHED_OK;
    if ((!s->collected && collect_units(s) != SCHED_OK) || s->n_units == 0)
        return 0;
    if (search_pool(s) != SCHED_OK || s->best_node < 0 ||
        *moves + s->n_best > ss->cfg->max_consolidation_moves)
        return 0;
    if (!move_units(s, s->best, s->n_best, s->best_node, 1))
        return 0;
    *moves += s->n_best;
    return 1;
}

int sched__consolidate_ready(struct sched_session *ss, int j, int pool)
{
    const struct sched_pool *cfg = &ss->in->pools[pool];
    struct ss_verdict v;
    int pods = sched__pods_to_place(ss, j);

    /* the pool packs what j asks: GPUs (whatever it does with CPU-only pods), or CPU */
    if (ss->cfg->max_consolidation_moves <= 0 ||
        (ss->wl[j].req[SCHED_GPU] > 0 ? cfg->gpu_placement : cfg->cpu_placement) == SCHED_SPREAD)
        return 0;
    return ss->pools[pool].gpu_free >= ss->wl[j].req[SCHED_GPU] * pods &&
           sched__capacity_check(ss, j, pool, pods, &v);
}

int sched__try_consolidate(struct sched_session *ss, int j, int pool)
{
    struct search s;
    struct ss_mark mark;
    int pods = sched__pods_to_place(ss, j), i, moves = 0;

    if (search_init(&s, ss, j, pool, MODE_MOVE) != SCHED_OK)
        return 0;
    mark = sched__mark(ss);
    for (i = 0; i < pods; i++)
        if (!consolidate_one(&s, &moves))
            break;
    if (i < pods || !sched__charge_within_caps(ss, j, pool)) {
        sched__rollback(ss, mark);
        undo_flags(&s);
        return 0;
    }
    ss->wl[j].flags |= WL_TOUCHED;
    return 1;
}
