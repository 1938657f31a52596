/*
 * polcache.c: the policy chains that submissions read, cached: for a
 * workload type, a department and a project, the policies over them
 * (db_policy_chain's rows: tenant, department, project), so a submission
 * reads no policy row while no policy and no part of the organization
 * changed. On PostgreSQL that read was a read transaction of its own
 * (BEGIN, the query, COMMIT) for every submission.
 *
 * Invariants:
 *   1. An entry is used only while its stamp equals the current one: the
 *      cache's own generation, which api_polcache_invalidate() advances
 *      once a policy this replica wrote has committed, and the
 *      scheduler's organization generation (ctl_sched_org_generation()),
 *      which every change to the organization advances, and every
 *      organization change another replica notes in the change log
 *      (policy writes are noted as such: db/policies.c). Both are read
 *      before the database, so an entry loaded during a change is stale
 *      when stored.
 *   2. A hit hands out a copy (bodies duplicated): entries are never lent.
 *   3. Memory is bounded: a fixed table; a new entry replaces its slot.
 */
#include "api.h"
#include "db_policies.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PL_SLOTS 256
#define PL_ROWS 3 /* a chain has a policy per level at most */

struct pl_entry {
    int used;
    uint64_t generation, org_generation;
    char type[16], dept[DB_ID_LEN], project[DB_ID_LEN];
    struct db_policy rows[PL_ROWS]; /* bodies owned by the entry */
    int n;
};

struct api_polcache {
    pthread_mutex_t mu;
    atomic_ullong generation;
    struct pl_entry slots[PL_SLOTS];
};

struct api_polcache *api_polcache_new(void)
{
    struct api_polcache *pc = calloc(1, sizeof(*pc));

    if (pc)
        pthread_mutex_init(&pc->mu, NULL);
    return pc;
}

static void entry_clear(struct pl_entry *e)
{
    int i;

    for (i = 0; i < e->n; i++)
        db_policy_clear(&e->rows[i]);
    e->n = 0;
    e->used = 0;
}

void api_polcache_free(struct api_polcache *pc)
{
    int i;

    if (!pc)
        return;
    for (i = 0; i < PL_SLOTS; i++)
        entry_clear(&pc->slots[i]);
    pthread_mutex_destroy(&pc->mu);
    free(pc);
}

void api_polcache_invalidate(struct api_polcache *pc)
{
    if (pc)
        atomic_fetch_add(&pc->generation, 1);
}

static unsigned slot_of(const char *type, const char *dept, const char *project)
{
    const char *parts[3] = {type, dept, project};
    unsigned h = 2166136261u;
    const char *s;
    int i;

    for (i = 0; i < 3; i++)
        for (s = parts[i]; ; s++) { /* the NUL too: "a","bc" differs from "ab","c" */
            h = (h ^ (unsigned char)*s) * 16777619u;
            if (!*s)
                break;
        }
    return h % PL_SLOTS;
}

/* Copies of n rows (bodies duplicated) into a new array; NULL if out of
 * memory (nothing left allocated). */
static struct db_policy *rows_copy(const struct db_policy *rows, int n)
{
    struct db_policy *out = malloc(sizeof(*out) * (size_t)(n > 0 ? n : 1));
    int i, done = 0;

    for (; out && done < n; done++) {
        out[done] = rows[done];
        out[done].body = rows[done].body ? strdup(rows[done].body) : NULL;
        if (rows[done].body && !out[done].body)
            break;
    }
    if (out && done < n) { /* out of memory at row `done`: the bodies before it go */
        for (i = 0; i < done; i++)
            free(out[i].body);
        free(out);
        out = NULL;
    }
    return out;
}

static int entry_is(const struct pl_entry *e, const char *type, const char *dept,
                    const char *project)
{
    return e->used && strcmp(e->type, type) == 0 && strcmp(e->dept, dept) == 0 &&
           strcmp(e->project, project) == 0;
}

/* 1 and a copy in *out, *n if the chain is cached under the stamp. */
static int lookup(struct api_polcache *pc, struct pl_entry *e, const char *type, const char *dept,
                  const char *project, uint64_t gen, uint64_t org, struct db_policy **out,
                  int *n)
{
    int hit;

    pthread_mutex_lock(&pc->mu);
    hit = entry_is(e, type, dept, project) && e->generation == gen && e->org_generation == org;
    if (hit && (*out = rows_copy(e->rows, e->n)) != NULL)
        *n = e->n;
    pthread_mutex_unlock(&pc->mu);
    return hit && *out;
}

/* Keeps a copy of the chain read under the stamp (if it fits an entry). */
static void store(struct api_polcache *pc, struct pl_entry *e, const char *type, const char *dept,
                  const char *project, uint64_t gen, uint64_t org, const struct db_policy *rows,
                  int n)
{
    struct db_policy *copy;

    if (n > PL_ROWS || strlen(type) >= sizeof(e->type) || strlen(dept) >= sizeof(e->dept) ||
        strlen(project) >= sizeof(e->project) || !(copy = rows_copy(rows, n)))
        return;
    pthread_mutex_lock(&pc->mu);
    entry_clear(e);
    memcpy(e->rows, copy, sizeof(*copy) * (size_t)n);
    e->n = n;
    snprintf(e->type, sizeof(e->type), "%s", type);
    snprintf(e->dept, sizeof(e->dept), "%s", dept);
    snprintf(e->project, sizeof(e->project), "%s", project);
    e->generation = gen;
    e->org_generation = org;
    e->used = 1;
    pthread_mutex_unlock(&pc->mu);
    free(copy); /* the bodies moved into the entry */
}

int api_policy_chain(struct api_app *app, const char *type, const char *dept,
                     const char *project, struct db_policy **out, int *n)
{
    struct api_polcache *pc = app->polc;
    uint64_t gen, org;
    struct pl_entry *e;
    int rc;

    if (!pc)
        return db_policy_chain(app->db, type, dept, project, out, n);
    gen = atomic_load(&pc->generation); /* both before the database (invariant 1) */
    org = ctl_sched_org_generation(app->sched);
    e = &pc->slots[slot_of(type, dept, project)];
    if (lookup(pc, e, type, dept, project, gen, org, out, n))
        return DB_OK;
    rc = db_policy_chain(app->db, type, dept, project, out, n);
    if (rc == DB_OK)
        store(pc, e, type, dept, project, gen, org, *out, *n);
    return rc;
}
