/*
 * leader.c: whether this replica leads: a thread that holds the leader
 * lease (db_ha.h) or waits to take it, and tells the scheduler thread
 * when that changes.
 *
 * The thread, every turn:
 *   Step 1: asks the database to hold the lease (db_lease_hold): extend
 *           it when this replica has it, take it when it expired (on a
 *           database only this process can reach, SQLite's, at once and
 *           for good: below);
 *   Step 2: records the outcome: leading at epoch E until the turn's start
 *           plus nine tenths of the lease (the database's expiry is at least
 *           that far, whatever the clocks say, as long as they tick at the
 *           same rate give or take a tenth); not leading (another holds
 *           it); or, when the database does not answer, as before until
 *           that local deadline passes;
 *   Step 3: on a change, says so on stdout and calls the scheduler's hook;
 *   Step 4: sleeps the renewal period (--leader-renew-ms, default 1 s)
 *           when leading, the ask period (--leader-ask-ms, default 0.5 s)
 *           otherwise; the lease is --leader-lease-ms (default 3 s), and
 *           config.c refuses a renewal period not shorter than nine tenths
 *           of it.
 * ctl_leader_epoch() is what the scheduler thread asks before every turn:
 * the epoch while this replica leads and its local deadline has not
 * passed, else 0. A write refused by the fence (ctl_leader_lost) ends the
 * leadership at once, without waiting for the thread.
 *
 * On a database only this process can open (db_exclusive(): SQLite's,
 * under its file's lock) no other replica can ever take the lease, so a
 * lapse could only cost: a process stalled past the lease (a loaded
 * machine, a paused VM) would step down, drop its model and load it all
 * again at a new epoch. There the lease is taken for EXCLUSIVE_TTL_MS, has
 * no local deadline, and is not renewed: the thread asks again only while
 * it does not lead (the database did not answer) or after a fenced write.
 *
 * Invariants:
 *   1. ctl_leader_epoch() never says "leading" past the local deadline,
 *      which is never later than the database's expiry (on an exclusive
 *      database, EXCLUSIVE_TTL_MS after the take: the process ends first).
 *   2. Even so, leadership is only advisory here: what makes a decision
 *      safe is the fence checked in its own transaction (db__fence).
 *   3. Stopping gives the lease back, so another replica (or this one
 *      restarted) takes it without waiting for it to expire.
 */
#include "control.h"
#include "clock.h"
#include "thread_role.h"
#include "db_ha.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The lease on an exclusive database: about a century. */
#define EXCLUSIVE_TTL_MS (100LL * 365 * 86400 * 1000)

struct ctl_leader {
    struct db *db;
    char holder[DB_HOLDER_LEN];
    int64_t ttl_ms, renew_ms, ask_ms;
    int force;              /* an exclusive database: taken at once, for good */
    void (*hook)(void *);
    void *hook_arg;
    pthread_t th;
    int started;
    pthread_mutex_t mu;     /* everything below */
    pthread_cond_t cv;
    int stop, ask_now;
    int64_t epoch;          /* held; 0: not leading */
    int64_t announced;      /* the leadership last said (stdout, hook); 0: none */
    int64_t until_us;       /* monotonic: leading until then */
    int db_ok;              /* the last ask was answered */
    struct db_lease seen;   /* the row as last read */
    int64_t gained;         /* leaderships taken since start */
};

/* Under l->mu. */
static int64_t valid_epoch(const struct ctl_leader *l)
{
    return l->epoch > 0 && (l->force || clock_mono_us() < l->until_us) ? l->epoch : 0;
}

/* Says a change of leadership and calls the hook; under l->mu (once
 * ctl_leader_hook() replaced the hook, the old one is never called). */
static void announce(struct ctl_leader *l, int64_t now)
{
    int64_t was = l->announced;

    if (now == was)
        return;
    l->announced = now;
    if (now > 0)
        printf("allotd: leader: this replica (%s) leads at epoch %lld\n", l->holder,
               (long long)now);
    else if (was > 0)
        printf("allotd: leader: this replica no longer leads (epoch %lld ended; %s holds"
               " the lease)\n", (long long)was, l->seen.holder[0] ? l->seen.holder : "nobody");
    fflush(stdout);
    if (l->hook)
        l->hook(l->hook_arg);
}

/* Steps 1 to 3 of one turn. */
static void ask(struct ctl_leader *l)
{
    struct db_lease row;
    int64_t t0 = clock_mono_us(), was, mine;
    int rc;

    pthread_mutex_lock(&l->mu);
    mine = valid_epoch(l);
    pthread_mutex_unlock(&l->mu);
    /* Step 1 */
    rc = db_lease_hold(l->db, l->holder, &mine, l->force ? EXCLUSIVE_TTL_MS : l->ttl_ms,
                       l->force, &row);
    /* Step 2 */
    pthread_mutex_lock(&l->mu);
    was = valid_epoch(l);
    l->db_ok = rc == DB_OK || rc == DB_ECONFLICT;
    if (l->db_ok)
        l->seen = row;
    if (rc == DB_OK) {
        l->epoch = mine;
        l->until_us = t0 + CTL_LEADER_LOCAL(l->ttl_ms) * 1000;
        l->gained += mine != was;
    } else if (rc == DB_ECONFLICT) {
        l->epoch = 0;
    }
    /* Step 3: also a leadership whose local deadline passed unseen (the
     * process was paused) */
    announce(l, valid_epoch(l));
    pthread_mutex_unlock(&l->mu);
}

static void *leader_main(void *arg)
{
    struct ctl_leader *l = arg;
    struct timespec until;
    int64_t ms;

    thread_role_name("allot-leader");
    for (;;) {
        ask(l);
        pthread_mutex_lock(&l->mu);
        /* Step 4 (an exclusive database's lease is not renewed) */
        ms = valid_epoch(l) ? l->renew_ms : l->ask_ms;
        clock_deadline(&until, CLOCK_REALTIME, ms);
        while (!l->stop && !l->ask_now)
            if (l->force && valid_epoch(l))
                pthread_cond_wait(&l->cv, &l->mu);
            else if (pthread_cond_timedwait(&l->cv, &l->mu, &until) != 0)
                break;
        l->ask_now = 0;
        if (l->stop) {
            pthread_mutex_unlock(&l->mu);
            break;
        }
        pthread_mutex_unlock(&l->mu);
    }
    return NULL;
}

int ctl_leader_start(struct db *db, const struct ctl_leader_opts *o, struct ctl_leader **out)
{
    struct ctl_leader *l = calloc(1, sizeof(*l));
    char host[64] = "";

    *out = NULL;
    if (!l)
        return -1;
    l->db = db;
    l->ttl_ms = o->ttl_ms > 0 ? o->ttl_ms : CTL_LEADER_TTL_MS;
    l->renew_ms = o->renew_ms > 0 ? o->renew_ms : CTL_LEADER_RENEW_MS;
    l->ask_ms = o->ask_ms > 0 ? o->ask_ms : CTL_LEADER_ASK_MS;
    if (l->renew_ms >= CTL_LEADER_LOCAL(l->ttl_ms)) {
        free(l);
        return -1;
    }
    l->force = db_exclusive(db);
    gethostname(host, sizeof(host) - 1);
    if (o->holder && o->holder[0])
        snprintf(l->holder, sizeof(l->holder), "%s", o->holder);
    else
        snprintf(l->holder, sizeof(l->holder), "%s:%ld:%08lx", host[0] ? host : "allotd",
                 (long)getpid(), (unsigned long)((uint64_t)clock_mono_us() & 0xffffffffu));
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->cv, NULL);
    ask(l); /* leading from the start when it can: the first cycle need not wait */
    if (pthread_create(&l->th, NULL, leader_main, l) != 0) {
        ctl_leader_stop(l);
        return -1;
    }
    l->started = 1;
    *out = l;
    return 0;
}

void ctl_leader_stop(struct ctl_leader *l)
{
    int64_t epoch;

    if (!l)
        return;
    if (l->started)
        thread_role_stop(l->th, &l->mu, &l->cv, &l->stop);
    epoch = valid_epoch(l);
    if (epoch > 0)
        db_lease_release(l->db, l->holder, epoch);
    pthread_cond_destroy(&l->cv);
    pthread_mutex_destroy(&l->mu);
    free(l);
}

void ctl_leader_hook(struct ctl_leader *l, void (*hook)(void *), void *arg)
{
    if (!l)
        return;
    pthread_mutex_lock(&l->mu);
    l->hook = hook;
    l->hook_arg = arg;
    pthread_mutex_unlock(&l->mu);
}

int64_t ctl_leader_epoch(struct ctl_leader *l)
{
    int64_t e;

    if (!l)
        return 0;
    pthread_mutex_lock(&l->mu);
    e = valid_epoch(l);
    pthread_mutex_unlock(&l->mu);
    return e;
}

void ctl_leader_lost(struct ctl_leader *l, int64_t epoch)
{
    if (!l)
        return;
    pthread_mutex_lock(&l->mu);
    if (l->epoch == epoch)
        l->epoch = 0;
    announce(l, valid_epoch(l));
    l->ask_now = 1;
    pthread_cond_signal(&l->cv);
    pthread_mutex_unlock(&l->mu);
}

void ctl_leader_get(struct ctl_leader *l, struct ctl_leader_info *out)
{
    memset(out, 0, sizeof(*out));
    if (!l)
        return;
    pthread_mutex_lock(&l->mu);
    out->epoch = valid_epoch(l);
    out->leading = out->epoch > 0;
    out->db_ok = l->db_ok;
    out->gained = l->gained;
    snprintf(out->holder, sizeof(out->holder), "%s", l->holder);
    snprintf(out->leader, sizeof(out->leader), "%s", l->seen.holder);
    out->leader_epoch = l->seen.epoch;
    out->ttl_ms = l->ttl_ms;
    pthread_mutex_unlock(&l->mu);
}
