/*
 * replay_run.c: one policy over the trace, on the trace's clock.
 *
 * The clock jumps from event to event:
 *   arrival      a task is submitted (Pending); tasks that fit no node of
 *                their pools even on an empty cluster are rejected instead
 *   completion   a running task ran its run time: it leaves, its GPUs free
 *   withdrawal   a task the trace never scheduled is still pending at the
 *                time its owner deleted it: it leaves
 * and a scheduling cycle runs at the first multiple of the period at or
 * after the first change since the last cycle (an arrival, or a
 * completion or withdrawal while something is pending); events at the
 * cycle's time come first. A cycle of the allot policies runs passes of
 * the core until one decides nothing or nothing is left pending (at most
 * RP_MAX_PASSES, as the server does); the FIFO cycle is replay_fifo.c.
 *
 * Task states: FUTURE -> PENDING (arrival) -> RUNNING (its workload turned
 * Running in a cycle) -> DONE (completion); RUNNING -> PENDING when an
 * eviction stops it (its run starts over: the time it ran is lost);
 * PENDING -> WITHDRAWN (withdrawal). A task's completion event carries a
 * generation, so the event of a run cut by an eviction is ignored. With
 * --racks every start of a gang counts, with whether its pods are inside
 * one rack and one block of the model's synthetic topology.
 *
 * Invariants (checked after every cycle with --check):
 *   1. the world's own (world.h);
 *   2. alloc is the milli-GPU held by placed pods (no partial gangs).
 */
#include "arrays.h"
#include "grow.h"
#include "replay_engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { T_FUTURE = 0, T_PENDING, T_RUNNING, T_DONE, T_WITHDRAWN };
enum { EV_COMPLETE = 0, EV_WITHDRAW };

struct rtask {
    int64_t first_start, start;
    int gen;
    unsigned char state;
};

struct event {
    int64_t t;
    int task, gen, kind;
};

struct run {
    struct replay_base b;
    struct rtask *tasks;
    struct event *ev;              /* binary min-heap */
    int n_ev, cap_ev;
    int next;                      /* the next arrival: a position in m->order */
    int dirty;
    int64_t dirty_since;
    int n_pending, n_pending_gpu;
    int n_finished;                /* finished workloads still in the world */
    int64_t alloc;
    int64_t *proj_alloc, *proj_demand, *proj_fair;   /* [n_projects] milli-GPU */
    int busy;
    int *touched;                  /* [n_tasks] world indices a cycle changed */
    unsigned *stamp;               /* [n_tasks] */
    unsigned cur_stamp;
    struct replay_stats st;
    struct world_err e;
};

/* ---- The event heap: by time, then kind, then task ---- */

static int ev_before(const struct event *a, const struct event *b)
{
    if (a->t != b->t)
        return a->t < b->t;
    if (a->kind != b->kind)
        return a->kind < b->kind;
    return a->task < b->task;
}

static int ev_push(struct run *r, const struct event *e)
{
    struct event tmp;
    int i, up;

    if (sim_grow(&r->ev, r->n_ev, &r->cap_ev, sizeof(*r->ev), 256) != 0)
        return -1;
    i = r->n_ev++;
    r->ev[i] = *e;
    for (; i > 0 && ev_before(&r->ev[i], &r->ev[up = (i - 1) / 2]); i = up) {
        tmp = r->ev[i];
        r->ev[i] = r->ev[up];
        r->ev[up] = tmp;
    }
    return 0;
}

static void ev_pop(struct run *r, struct event *out)
{
    struct event tmp;
    int i = 0, c;

    *out = r->ev[0];
    r->ev[0] = r->ev[--r->n_ev];
    for (;;) {
        c = 2 * i + 1;
        if (c >= r->n_ev)
            break;
        if (c + 1 < r->n_ev && ev_before(&r->ev[c + 1], &r->ev[c]))
            c++;
        if (!ev_before(&r->ev[c], &r->ev[i]))
            break;
        tmp = r->ev[i];
        r->ev[i] = r->ev[c];
        r->ev[c] = tmp;
        i = c;
    }
}

static int64_t next_event_time(const struct run *r)
{
    int64_t t = INT64_MAX;

    if (r->next < r->b.m->t->n_tasks)
        t = r->b.m->arrival_ms[r->b.m->order[r->next]];
    if (r->n_ev > 0 && r->ev[0].t < t)
        t = r->ev[0].t;
    return t;
}

static int oom(struct run *r)
{
    snprintf(r->e.msg, sizeof(r->e.msg), "out of memory");
    return -1;
}

/* ---- Samples ---- */

static int take_sample(struct run *r)
{
    struct rs_sample s;

    s.t = r->b.w->now_ms;
    s.alloc = r->alloc;
    s.busy = r->busy;
    if (r->busy)
        rs_fair_share(r->b.m, r->proj_demand, r->proj_fair);
    if (rs_sample(&r->st, &s, r->proj_alloc, r->busy ? r->proj_fair : r->proj_alloc) != 0)
        return oom(r);
    return 0;
}

static void mark_dirty(struct run *r)
{
    if (r->dirty)
        return;
    r->dirty = 1;
    r->dirty_since = r->b.w->now_ms;
}

/* ---- Task transitions ---- */

/* The task's GPUs start (sign 1) or stop (-1) counting as held. */
static void hold(struct run *r, int task, int sign)
{
    int64_t gpu = r->b.m->gpu[task];

    r->alloc += sign * gpu;
    r->proj_alloc[r->b.m->tmpl[task].queue - 1] += sign * gpu;
}

/* The task's GPUs start (1) or stop (-1) counting as its project's demand. */
static void demand(struct run *r, int task, int sign)
{
    r->proj_demand[r->b.m->tmpl[task].queue - 1] += sign * r->b.m->gpu[task];
}

/* The task starts (1) or stops (-1) counting as pending. */
static void pending(struct run *r, int task, int sign)
{
    r->n_pending += sign;
    r->n_pending_gpu += r->b.m->gpu[task] > 0 ? sign : 0;
}

static int start(struct run *r, int task, const struct sched_workload *wl)
{
    struct rtask *k = &r->tasks[task];
    struct event e;

    replay_count_gang(r->b.m, wl, &r->st.gangs);
    k->state = T_RUNNING;
    k->start = r->b.w->now_ms;
    if (k->first_start == SCHED_NO_TIME)
        k->first_start = k->start;
    hold(r, task, 1);
    pending(r, task, -1);
    e.t = k->start + r->b.m->runtime_ms[task];
    e.task = task;
    e.gen = k->gen;
    e.kind = EV_COMPLETE;
    return ev_push(r, &e) == 0 ? 0 : oom(r);
}

static void evicted(struct run *r, int task)
{
    struct rtask *k = &r->tasks[task];

    k->state = T_PENDING;
    k->gen++;
    hold(r, task, -1);
    pending(r, task, 1);
    r->st.preemptions++;
    r->st.lost += r->b.m->gpu[task] * (r->b.w->now_ms - k->start);
}

/* Compares world workload i with its task and records what changed. */
static int transition(struct run *r, int i)
{
    const struct sched_workload *wl = &r->b.w->wls[i];
    int task, running = wl->phase == SCHED_RUNNING;

    if (!namemap_get(&r->b.m->index, wl->name, &task))
        return 0;
    if (running && r->tasks[task].state == T_PENDING)
        return start(r, task, wl);
    if (!running && r->tasks[task].state == T_RUNNING)
        evicted(r, task);
    return 0;
}

static int arrive(struct run *r, int task)
{
    struct scn_submit sub;
    struct event e;

    r->st.arrived++;
    if (r->b.m->unplaceable[task]) {
        r->st.rejected++;
        return 0;
    }
    memset(&sub, 0, sizeof(sub));
    sub.w = r->b.m->tmpl[task];
    sub.runtime_ms = SCHED_NO_TIME;
    if (world_submit(r->b.w, &sub, &r->e) != 0)
        return -1;
    r->tasks[task].state = T_PENDING;
    pending(r, task, 1);
    demand(r, task, 1);
    mark_dirty(r);
    if (r->b.m->withdraw_ms[task] == SCHED_NO_TIME)
        return 0;
    e.t = r->b.m->withdraw_ms[task];
    e.task = task;
    e.gen = 0;
    e.kind = EV_WITHDRAW;
    return ev_push(r, &e) == 0 ? 0 : oom(r);
}

/* The task's workload leaves the world (it is swept later). */
static int leave(struct run *r, int task)
{
    int i = world_find(r->b.w, r->b.m->tmpl[task].name);

    if (i < 0) {
        snprintf(r->e.msg, sizeof(r->e.msg), "task %s has no workload", r->b.m->tmpl[task].name);
        return -1;
    }
    world_finish(r->b.w, i, SCHED_COMPLETED);
    r->n_finished++;
    if (r->n_pending > 0)
        mark_dirty(r);
    return 0;
}

static int complete(struct run *r, int task)
{
    struct rtask *k = &r->tasks[task];
    int64_t arrival = r->b.m->arrival_ms[task];

    hold(r, task, -1);
    demand(r, task, -1);
    k->state = T_DONE;
    if (leave(r, task) != 0)
        return -1;
    return rs_done(&r->st, k->first_start - arrival, r->b.w->now_ms - arrival) == 0 ? 0 : oom(r);
}

static int withdraw(struct run *r, int task)
{
    r->tasks[task].state = T_WITHDRAWN;
    pending(r, task, -1);
    demand(r, task, -1);
    r->st.withdrawn++;
    return leave(r, task);
}

/* Every event at time t, then a sample. */
static int events_at(struct run *r, int64_t t)
{
    struct event e;
    int task;

    while (r->next < r->b.m->t->n_tasks && r->b.m->arrival_ms[task = r->b.m->order[r->next]] == t) {
        r->next++;
        if (arrive(r, task) != 0)
            return -1;
    }
    while (r->n_ev > 0 && r->ev[0].t == t) {
        ev_pop(r, &e);
        if (e.kind == EV_COMPLETE && r->tasks[e.task].state == T_RUNNING &&
            r->tasks[e.task].gen == e.gen && complete(r, e.task) != 0)
            return -1;
        if (e.kind == EV_WITHDRAW && r->tasks[e.task].state == T_PENDING &&
            withdraw(r, e.task) != 0)
            return -1;
    }
    if (r->n_finished > 64 && 2 * r->n_finished > r->b.w->n_wls) {
        world_sweep(r->b.w);
        r->n_finished = 0;
    }
    return take_sample(r);
}

/* ---- Cycles ---- */

/* Transitions of every workload a pass's decisions name. */
static int account(struct run *r, const struct sched_result *res)
{
    const struct sched_decision *d;
    int k, n = 0, task;

    r->cur_stamp++;
    for (k = 0; k < res->n_decisions; k++) {
        d = &res->decisions[k];
        r->st.moves += d->kind == SCHED_MOVE;
        if (!namemap_get(&r->b.m->index, r->b.w->wls[d->workload].name, &task) ||
            r->stamp[task] == r->cur_stamp)
            continue;
        r->stamp[task] = r->cur_stamp;
        r->touched[n++] = d->workload;
    }
    for (k = 0; k < n; k++)
        if (transition(r, r->touched[k]) != 0)
            return -1;
    return 0;
}

static int check(struct run *r)
{
    int64_t held;

    if (!r->b.m->opts->check)
        return 0;
    if (world_check(r->b.w, &r->e) != 0)
        return -1;
    held = world_allocated_gpu(r->b.w, 0, -1);
    if (held == r->alloc)
        return 0;
    snprintf(r->e.msg, sizeof(r->e.msg), "placed pods hold %lld milli-GPU, running tasks %lld",
             (long long)held, (long long)r->alloc);
    return -1;
}

static int allot_cycle(struct run *r)
{
    struct sched_result res;
    int pass;

    for (pass = 0; pass < RP_MAX_PASSES; pass++) {
        if (world_pass(r->b.w, &r->b.cfg, &res, &r->e) != 0)
            return -1;
        r->st.core_calls++;
        if (account(r, &res) != 0 || check(r) != 0)
            return -1;
        if (res.n_decisions == 0 || res.n_pending == 0)
            break;
    }
    return 0;
}

static int fifo_cycle(struct run *r)
{
    int n, k;

    n = replay_fifo_cycle(r->b.m, r->b.w, r->touched, &r->e);
    if (n < 0)
        return -1;
    for (k = 0; k < n; k++)
        if (transition(r, r->touched[k]) != 0)
            return -1;
    return check(r);
}

static int cycle(struct run *r)
{
    int rc;

    r->st.cycles++;
    r->dirty = 0;
    rc = r->b.policy == RP_FIFO ? fifo_cycle(r) : allot_cycle(r);
    if (rc != 0)
        return -1;
    r->busy = r->n_pending_gpu > 0;
    return take_sample(r);
}

/* ---- The run ---- */

static int64_t tick_after(const struct run *r)
{
    int64_t p = r->b.m->opts->period_ms;

    return p > 0 ? (r->dirty_since + p - 1) / p * p : r->dirty_since;
}

static int loop(struct run *r)
{
    int64_t t_ev, t_tick;

    for (;;) {
        t_ev = next_event_time(r);
        if (r->dirty && (t_tick = tick_after(r)) < t_ev) {
            r->b.w->now_ms = t_tick;
            if (cycle(r) != 0)
                return -1;
            continue;
        }
        if (t_ev == INT64_MAX)
            return 0;
        r->b.w->now_ms = t_ev;
        if (events_at(r, t_ev) != 0)
            return -1;
    }
}

/* The window the rates cover: first to last arrival, or to the end of the
 * run when every task arrives at once. */
static void set_window(struct run *r)
{
    const struct replay_model *m = r->b.m;

    r->st.w0 = m->arrival_ms[m->order[0]];
    r->st.w1 = m->arrival_ms[m->order[m->t->n_tasks - 1]];
    if (r->st.w1 <= r->st.w0 && r->st.n > 0)
        r->st.w1 = r->st.s[r->st.n - 1].t;
}

static int run_new(struct run *r, const struct replay_model *m, int policy)
{
    size_t n = (size_t)m->t->n_tasks, np = (size_t)m->n_projects;
    int i;

    memset(r, 0, sizeof(*r));
    r->b.m = m;
    r->b.policy = policy;
    sched_config_default(&r->b.cfg);
    r->tasks = calloc(n, sizeof(*r->tasks));
    r->touched = calloc(n, sizeof(*r->touched));
    r->stamp = calloc(n, sizeof(*r->stamp));
    r->proj_alloc = calloc(np, sizeof(*r->proj_alloc));
    r->proj_demand = calloc(np, sizeof(*r->proj_demand));
    r->proj_fair = calloc(np, sizeof(*r->proj_fair));
    if (!r->tasks || !r->touched || !r->stamp || !r->proj_alloc || !r->proj_demand ||
        !r->proj_fair ||
        rs_init(&r->st, m->n_projects, m->total_gpu_milli) != 0 ||
        replay_layout(m, replay_policy_placement(policy), &r->b.layout,
                      &r->b.pools) != 0 ||
        world_new(&r->b.layout, &r->b.w) != 0)
        return -1;
    for (i = 0; i < m->t->n_tasks; i++)
        r->tasks[i].first_start = SCHED_NO_TIME;
    return 0;
}

static void run_free(struct run *r)
{
    void *const owned[] = {r->b.pools,  r->proj_fair, r->proj_demand, r->proj_alloc,
                           r->stamp,  r->touched,   r->tasks,       r->ev};

    world_free(r->b.w);
    rs_free(&r->st);
    FREE_ALL(owned);
}

int replay_run(const struct replay_model *m, int policy, struct replay_summary *out,
               char *err, size_t len)
{
    struct run r;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    out->policy = policy;
    if (run_new(&r, m, policy) != 0) {
        snprintf(err, len, "out of memory");
        goto out_free;
    }
    if (loop(&r) != 0) {
        snprintf(err, len, "%s: policy %s at %.3f s of the trace: %s", m->opts->pods_file,
                 replay_policy_name(policy), (double)r.b.w->now_ms / 1000.0, r.e.msg);
        goto out_free;
    }
    r.st.left_pending = r.n_pending;
    set_window(&r);
    if (rs_summarize(&r.st, out) != 0) {
        snprintf(err, len, "out of memory");
        goto out_free;
    }
    rc = 0;
out_free:
    run_free(&r);
    return rc;
}
