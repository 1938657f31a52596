/* cycle.c: placeholder; decides nothing yet. */
#include "sched_int.h"

void sched_config_default(struct sched_config *cfg)
{
    cfg->stale_grace_ms = 60000;
    cfg->max_consolidation_moves = 16;
}

int sched_cycle(const struct sched_state *in, const struct sched_config *cfg,
                struct sched_arena *arena, struct sched_result *out)
{
    (void)cfg;
    out->decisions = NULL;
    out->n_decisions = 0;
    out->pending = NULL;
    out->n_pending = 0;
    out->n_queues = in->n_queues;
    out->n_pools = in->n_pools;
    out->shares = sched__calloc(arena, (size_t)in->n_queues * (size_t)in->n_pools + 1,
                                sizeof(struct sched_share));
    out->stale_since_ms = sched__calloc(arena, (size_t)in->n_workloads + 1, sizeof(int64_t));
    return out->shares && out->stale_since_ms ? SCHED_OK : SCHED_ENOMEM;
}

const struct sched_share *sched_result_share(const struct sched_result *r, int q, int p)
{
    if (q < 0 || p < 0 || q >= r->n_queues || p >= r->n_pools)
        return NULL;
    return &r->shares[(size_t)q * (size_t)r->n_pools + (size_t)p];
}
